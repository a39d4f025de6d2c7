"""The adversarial inputs on which the kernel tests compare a kernel with its NumPy twin."""

import numpy as np
import scipy.sparse as sp


def matrix(kind, rng, n, d):
    """An ``n`` x ``d`` dense matrix of one ``kind``: "dense" (standard normal), "sparse" (15% non-zeros, half of
    them times -3), "empty_rows" (10% non-zeros and every third row empty), "single_nonzero" (one entry of
    scale 10 per row), "duplicated_rows" (20% non-zeros, each odd row a copy of an even one) or "huge" (30%
    non-zeros of scale 1e3)."""
    if kind == "dense":
        return rng.normal(size=(n, d))
    if kind == "sparse":
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.15)
        X[rng.random(X.shape) < 0.5] *= -3.0
        return X
    if kind == "empty_rows":
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.1)
        X[::3] = 0.0
        return X
    if kind == "single_nonzero":
        X = np.zeros((n, d))
        X[np.arange(n), rng.integers(0, d, n)] = rng.normal(size=n) * 10
        return X
    if kind == "duplicated_rows":
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.2)
        X[1::2] = X[::2][: n // 2]
        return X
    if kind == "huge":
        return rng.normal(size=(n, d)) * 1e3 * (rng.random((n, d)) < 0.3)
    raise AssertionError(kind)


def csr(X, index_dtype):
    """``X`` as a CSR matrix whose ``indices`` and ``indptr`` are of ``index_dtype`` (the kernels take int32
    and int64)."""
    Xc = sp.csr_matrix(X)
    Xc.indices, Xc.indptr = Xc.indices.astype(index_dtype), Xc.indptr.astype(index_dtype)
    return Xc


def signs_and_weights(rng, n, K):
    """Labels in {-1, +1} of shape (n, K) and sample weights in {0, 0.5, 1, 2} (zeros skip an example)."""
    return np.where(rng.random((n, K)) < 0.5, -1.0, 1.0), rng.choice([0.0, 0.5, 1.0, 2.0], size=n)


def csr_arrays(Xc):
    """The arrays of the CSR matrix ``Xc`` as the kernels take them."""
    return {"indptr": Xc.indptr, "indices": Xc.indices, "data": Xc.data}


def stream(Xc, targets, sample_weight):
    """The arguments of a chunk of rows that every epoch kernel takes: the CSR arrays of ``Xc``, the targets
    and the sample weights."""
    return {**csr_arrays(Xc), "targets": targets, "sample_weight": sample_weight}
