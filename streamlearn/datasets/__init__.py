"""Streaming data: LIBSVM/svmlight readers, the bundled demo data (a9a) and the shared-data locator.

The synthetic generators and the MovieLens loader are imported on first access (reading a LIBSVM file does
not import scikit-learn).
"""

from .._lazy import lazy_attributes
from ._bundled import bundled_path, load_a9a, load_farm_ads, shared_data_path
from ._svmlight import SvmlightFormatError, iter_svmlight, load_svmlight

__getattr__, __dir__ = lazy_attributes(
    __name__,
    globals(),
    {
        "make_sparse_classification": "._synthetic",
        "write_svmlight_stream": "._synthetic",
        "load_movielens": "._movielens",
        "make_click_log": "._clicklog",
        "write_click_log": "._clicklog",
        "iter_click_log": "._clicklog",
        "iter_vw": "._vw",
        "load_vw": "._vw",
        "VwFormatError": "._vw",
        "open_stream": "._readers",
        "InputSpec": "._spec",
        "ZooUnavailable": "._zoo",
        "load_zoo": "._zoo",
        "zoo_info": "._zoo",
        "zoo_names": "._zoo",
        "iter_csv": "._tabular",
        "iter_parquet": "._tabular",
        "TabularFormatError": "._tabular",
    },
)

__all__ = [
    "SvmlightFormatError",
    "bundled_path",
    "iter_svmlight",
    "load_a9a",
    "load_farm_ads",
    "load_svmlight",
    "shared_data_path",
]
__all__ += ["make_sparse_classification", "write_svmlight_stream"]
__all__ += ["load_movielens"]
__all__ += ["iter_click_log", "make_click_log", "write_click_log"]
__all__ += ["InputSpec", "VwFormatError", "iter_vw", "load_vw", "open_stream"]
__all__ += ["ZooUnavailable", "load_zoo", "zoo_info", "zoo_names"]
__all__ += ["TabularFormatError", "iter_csv", "iter_parquet"]
