"""Streaming data: LIBSVM/svmlight, VW text, CSV and Parquet readers, the bundled demo data (a9a), the
data-set zoo and the shared-data locator.

Every name is imported on first access: reading a VW file imports neither the LIBSVM reader nor the
synthetic generators (nor scikit-learn).
"""

from .._lazy import lazy_attributes

__getattr__, __dir__ = lazy_attributes(
    __name__,
    globals(),
    {
        "bundled_path": "._bundled",
        "load_a9a": "._bundled",
        "load_farm_ads": "._bundled",
        "shared_data_path": "._bundled",
        "SvmlightFormatError": "._svmlight",
        "iter_svmlight": "._svmlight",
        "load_svmlight": "._svmlight",
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
