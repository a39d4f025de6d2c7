"""Streaming data: LIBSVM/svmlight readers, the bundled demo data (a9a) and the shared-data locator."""

from ._bundled import bundled_path, load_a9a, load_farm_ads, shared_data_path
from ._movielens import load_movielens
from ._svmlight import SvmlightFormatError, iter_svmlight, load_svmlight
from ._synthetic import make_sparse_classification, write_svmlight_stream

__all__ = ["SvmlightFormatError", "bundled_path", "iter_svmlight", "load_a9a", "load_farm_ads",
           "load_svmlight", "shared_data_path"]
__all__ += ["make_sparse_classification", "write_svmlight_stream"]
__all__ += ["load_movielens"]
