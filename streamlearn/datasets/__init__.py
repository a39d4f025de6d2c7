"""Streaming data: LIBSVM/svmlight readers and the bundled demo data (a9a)."""

from ._bundled import load_a9a
from ._synthetic import make_sparse_classification, write_svmlight_stream

__all__ = ["load_a9a"]
__all__ += ["make_sparse_classification", "write_svmlight_stream"]
