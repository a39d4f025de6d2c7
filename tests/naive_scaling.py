"""NumPy twins of streamlearn._kernels.scaling: row i is scaled with statistics recomputed from rows 0..i-1."""

import numpy as np

__all__ = ["naive_maxabs_stream", "naive_standard_stream"]


def naive_maxabs_stream(X):
    X = np.asarray(X, dtype=float)
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        m = np.abs(X[:i]).max(axis=0) if i else np.zeros(X.shape[1])
        out[i] = X[i] / np.where(m > 0, m, 1.0)
    return out


def naive_standard_stream(X, center=True, with_std=True):
    """``center``: subtract the running mean (dense input); zeros count as values either way."""
    X = np.asarray(X, dtype=float)
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        if i == 0:
            out[i] = X[i]
            continue
        mean, var = X[:i].mean(axis=0), X[:i].var(axis=0)
        scale = np.where(var > 0, np.sqrt(np.maximum(var, 0)), 1.0) if with_std else 1.0
        out[i] = ((X[i] - mean) if center else X[i]) / scale
    return out
