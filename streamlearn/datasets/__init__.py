"""Streaming data: LIBSVM/svmlight readers and the bundled demo data (a9a)."""

from ._bundled import load_a9a

__all__ = ["load_a9a"]
