"""NumPy twins of streamlearn._kernels.scaling: row i is scaled with statistics recomputed from rows 0..i-1."""

import numpy as np

__all__ = ["naive_maxabs_stream", "naive_standard_stream"]


def naive_maxabs_stream(X):
    X = np.asarray(X, dtype=float)
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        m = np.abs(X[:i]).max(axis=0) if i else np.zeros(X.shape[1])
        out[i] = np.where(m > 0, X[i] / np.where(m > 0, m, 1.0), 0.0)
    return out


def naive_standard_stream(X, center=True, with_std=True):
    """``center``: subtract the running mean (dense input); zeros count as values either way."""
    X = np.asarray(X, dtype=float)
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        if i == 0:
            out[i] = 0.0 if with_std else X[i]
            continue
        mean, var = X[:i].mean(axis=0), X[:i].var(axis=0)
        c = (X[i] - mean) if center else X[i]
        if with_std:  # a feature without spread yet gives 0
            out[i] = np.where(var > 0, c / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)
        else:
            out[i] = c
    return out
