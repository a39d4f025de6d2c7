"""Naive twin of _kernels/scale.py: running max-abs scaling, one dense row at a time."""

import numpy as np


def naive_running_maxabs(X, scale):
    """Dense rows of X divided by the running column max-abs (this row included); returns (Xs, scale)."""
    X = np.asarray(X, dtype=np.float64)
    scale = np.array(scale, dtype=np.float64)
    out = np.zeros_like(X)
    for i, row in enumerate(X):
        scale = np.maximum(scale, np.abs(row))
        nz = row != 0
        out[i, nz] = row[nz] / scale[nz]
    return out, scale
