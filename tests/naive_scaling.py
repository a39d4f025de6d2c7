"""NumPy twins of streamlearn._kernels.scaling: row i is scaled with statistics recomputed from rows 0..i-1."""

import numpy as np

__all__ = ["naive_maxabs_stream", "naive_standard_stream", "naive_target_stream"]


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


def naive_target_stream(y, sample_weight=None):
    """``(t, shift, scale)``: target i standardised by the weighted mean and standard deviation recomputed from
    targets 0..i-1 (``np.average``), 0 where that deviation is 0 (or rounding noise against the mean)."""
    y = np.asarray(y, dtype=float)
    w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    t, shift, scale = np.zeros_like(y), np.zeros_like(y), np.zeros_like(y)
    for i in range(y.shape[0]):
        if w[:i].sum() > 0:
            shift[i] = np.average(y[:i], weights=w[:i])
            std = np.sqrt(np.average((y[:i] - shift[i]) ** 2, weights=w[:i]))
            scale[i] = std if std > 1e-12 * max(1.0, abs(shift[i])) else 0.0
        t[i] = (y[i] - shift[i]) / scale[i] if scale[i] > 0 else 0.0
    return t, shift, scale
