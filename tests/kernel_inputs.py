"""Inputs of the kernel tests: adversarial matrices, CSR copies with either index width, a chunk's arguments."""

import numpy as np
import scipy.sparse as sp

from streamlearn._validation import chunk_args, csr_args  # the arguments as the estimators build them

__all__ = ["KINDS", "adversarial", "csr", "csr_args", "chunk_args"]

#: The kinds ``adversarial`` makes.
KINDS = ("dense", "sparse", "empty_rows", "single_nonzero", "huge")


def adversarial(kind, rng, n, d):
    """An ``n x d`` dense matrix of one kind: ``dense`` (Gaussian), ``sparse`` (15 % non-zeros, half of them
    tripled with the sign flipped), ``empty_rows`` (as sparse, every third row all zero), ``single_nonzero`` (one
    entry a row, of scale 10), ``huge`` (30 % non-zeros of scale 1e3)."""
    if kind == "dense":
        return rng.normal(size=(n, d))
    if kind == "sparse":
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.15)
        X[rng.random(X.shape) < 0.5] *= -3.0
        return X
    if kind == "empty_rows":
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.15)
        X[::3] = 0.0
        return X
    if kind == "single_nonzero":
        X = np.zeros((n, d))
        X[np.arange(n), rng.integers(0, d, n)] = rng.normal(size=n) * 10
        return X
    if kind == "huge":
        return rng.normal(size=(n, d)) * 1e3 * (rng.random((n, d)) < 0.3)
    raise AssertionError(kind)


def csr(X, index_dtype):
    """``X`` as CSR with ``indices`` and ``indptr`` of ``index_dtype`` (the kernels compile for int32 and int64)."""
    Xc = sp.csr_matrix(X)
    Xc.indices, Xc.indptr = Xc.indices.astype(index_dtype), Xc.indptr.astype(index_dtype)
    return Xc
