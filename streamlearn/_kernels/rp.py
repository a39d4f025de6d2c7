"""Random projection sketch (RP; Algorithms §5.7): ``S <- S + r_t a_t^T`` with ``E[S^T S] = A^T A``.

``r_t`` (ell entries of variance 1/ell) is a pure function of ``(seed, t, i)`` (t = the row's position in
the whole stream, i = the entry), computed by a SplitMix64 hash: the sketch is deterministic given the
seed and identical however the stream is cut into chunks, and no random state but one integer is kept.

* ``DIST_GAUSSIAN``: ``r_ti ~ N(0, 1/ell)`` (Box-Muller on two hashed uniforms);
* ``DIST_SPARSE_SIGN``: ``+-sqrt(3/ell)`` with probability 1/6 each, 0 with probability 2/3 (the
  distribution of the authors' vowpal_wabbit code).

Cost O(ell * nnz(a)) per row.
"""

import math

import numpy as np

from ._numba import njit_inline, njit_kernel

DIST_GAUSSIAN = 0
DIST_SPARSE_SIGN = 1

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_ROW = np.uint64(0xD1B54A32D192ED03)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)


@njit_inline
def _mix64(z):
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit_inline
def hashed_uniform(seed, t, i):
    """A uniform number in [0, 1) determined by ``(seed, t, i)`` (seed: uint64, t and i: ints >= 0)."""
    z = _mix64(seed ^ (np.uint64(t) * _ROW))
    z = _mix64(z + np.uint64(i) * _GOLDEN + _GOLDEN)
    return float(z >> _S11) * (1.0 / 9007199254740992.0)


@njit_kernel
def rp_row_vector(seed, t, dist, out):
    """Fill ``out`` (ell,) with ``r_t``."""
    m = out.shape[0]
    if dist == DIST_GAUSSIAN:
        scale = 1.0 / math.sqrt(m)
        for i in range(m):
            u1 = 1.0 - hashed_uniform(seed, t, 2 * i)  # (0, 1]
            u2 = hashed_uniform(seed, t, 2 * i + 1)
            out[i] = scale * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
    else:
        v = math.sqrt(3.0 / m)
        for i in range(m):
            u = hashed_uniform(seed, t, i)
            if u < 1.0 / 6.0:
                out[i] = v
            elif u < 1.0 / 3.0:
                out[i] = -v
            else:
                out[i] = 0.0


@njit_kernel
def rp_fit_csr(indptr, indices, data, sketch, seed, t0, dist):
    """Add ``r_t a_t^T`` for every row of a CSR chunk; the chunk's rows are stream rows ``t0, t0+1, ...``."""
    m = sketch.shape[0]
    r = np.empty(m)
    n = indptr.shape[0] - 1
    for t in range(n):
        start = indptr[t]
        end = indptr[t + 1]
        if end == start:
            continue
        rp_row_vector(seed, t0 + t, dist, r)
        for i in range(m):
            ri = r[i]
            if ri == 0.0:
                continue
            for p in range(start, end):
                sketch[i, indices[p]] += ri * data[p]


@njit_kernel
def rp_fit_dense(X, sketch, seed, t0, dist):
    """Dense chunk: ``sketch += R^T X`` with the rows ``r_t`` stacked in R (one BLAS product)."""
    m = sketch.shape[0]
    n = X.shape[0]
    rt = np.empty((m, n))
    r = np.empty(m)
    for t in range(n):
        rp_row_vector(seed, t0 + t, dist, r)
        for i in range(m):
            rt[i, t] = r[i]
    sketch += np.dot(rt, X)
