"""Naive twin of _kernels/scale.py: running max-abs scaling, one dense row at a time."""

import numpy as np


def naive_running_maxabs(X, scale, sw=None):
    """Dense rows of X divided by the running column max-abs (this row included); returns (Xs, scale). A row of
    weight ``sw[i] == 0`` is divided by ``max(scale, |x|)`` and leaves the running maximum as it is."""
    X = np.asarray(X, dtype=np.float64)
    scale = np.array(scale, dtype=np.float64)
    out = np.zeros_like(X)
    for i, row in enumerate(X):
        s = np.maximum(scale, np.abs(row))
        if sw is None or sw[i] != 0:
            scale = s
        nz = row != 0
        out[i, nz] = row[nz] / s[nz]
    return out, scale
