"""Whole-file facts of a LIBSVM file (width and index base) from one validating pass."""

from ._svmlight import _DEFAULT_BLOCK, _first_pass, _Source

__all__ = ["svmlight_info"]


def svmlight_info(source, zero_based="auto", n_features=None):
    """Read ``source`` once, validating every line, and return ``{"n_features": int, "zero_based": bool}``.

    This is the first pass :func:`iter_svmlight` makes when it is not told ``n_features`` and
    ``zero_based``: call it yourself to fix one width for several files (training and test) and then
    stream each of them in a single pass.

    >>> from streamlearn.datasets import bundled_path
    >>> svmlight_info(bundled_path("a9a.t.xz"))
    {'n_features': 122, 'zero_based': False}
    """
    shift, width = _first_pass(_Source(source), zero_based, n_features, _DEFAULT_BLOCK)
    return {"n_features": int(width), "zero_based": shift == 0}
