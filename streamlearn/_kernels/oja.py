"""Oja's sketch (Algorithms §5.8): a streaming estimate of the top-ell eigenpairs of A^T A.

State: ``V`` (ell, d) with orthonormal rows, ``lam`` (ell,) and the row counter ``t``. Per row a:
``t += 1``, ``gamma = min(c / t, 1)``, ``p = V a``, ``lam <- (1 - gamma) lam + gamma p^2``,
``V' = V + gamma p a^T``, then the rows of V' are orthonormalised. The sketch is
``S = diag(sqrt(t lam)) V``.

Cost: QR of V' would take O(ell^2 d) per row. Because ``V V^T = I`` and ``V a = p``,
``V' V'^T = I + c p p^T`` with ``c = 2 gamma + gamma^2 |a|^2``, whose LDL^T factorisation has the closed
form of Gill, Golub, Murray and Saunders (1974, method C1): unit lower ``L_ij = p_i beta_j`` (i > j). So
``V <- D^{-1/2} L^{-1} V'`` (exactly the Gram-Schmidt / QR result, with positive R diagonal) costs
O(ell * d) per row with a running sum. Every ``REORTH_EVERY`` rows (counted over the whole stream) the
rows are re-orthonormalised from scratch (Cholesky of ``V V^T``, the same Gram-Schmidt order) to remove
rounding drift.
"""

import math

import numpy as np

from ._numba import njit_kernel
from .linear import sparse_row_dot

REORTH_EVERY = 512


@njit_kernel
def oja_reorthonormalise(v):
    """Gram-Schmidt of the rows of V in order: ``V <- L^{-1} V`` with ``V V^T = L L^T``, O(ell^2 d)."""
    m = v.shape[0]
    d = v.shape[1]
    low = np.linalg.cholesky(np.dot(v, v.T))
    for i in range(m):  # forward substitution, row by row
        for j in range(i):
            lij = low[i, j]
            for k in range(d):
                v[i, k] -= lij * v[j, k]
        inv = 1.0 / low[i, i]
        for k in range(d):
            v[i, k] *= inv


@njit_kernel
def _oja_gamma(lam, t, c, p):
    """Step size of row t, ``min(c / t, 1)``; also updates ``lam <- (1 - gamma) lam + gamma p^2``."""
    gamma = c / t
    if gamma > 1.0:
        gamma = 1.0
    for i in range(lam.shape[0]):
        lam[i] = (1.0 - gamma) * lam[i] + gamma * p[i] * p[i]
    return gamma


#: The empty row of ``_oja_orthonormalise``'s call of ``_oja_rank_one`` (a constant of the compiled code).
_NO_INDICES = np.zeros(0, dtype=np.int64)
_NO_DATA = np.zeros(0)


@njit_kernel
def _oja_orthonormalise(v, p, cc, run):
    """Gram-Schmidt of the rows of ``V'`` given ``V' V'^T = I + cc p p^T``, in O(ell d): ``_oja_rank_one``
    with no rank-one term (``g = 0``, an empty row), for callers that have formed ``V'`` themselves.

    LDL^T of ``I + cc p p^T``: ``dbar_i = 1 + a_i p_i^2``, ``beta_i = p_i a_i / dbar_i``,
    ``a_{i+1} = a_i / dbar_i`` (``a_1 = cc``), ``L_ij = p_i beta_j``. Then ``Y = L^{-1} V'`` row by row with
    the running sum ``run = sum_{j<i} beta_j Y_j``, and ``V = D^{-1/2} Y``.
    """
    _oja_rank_one(v=v, p=p, g=np.float64(0.0), cc=cc, run=run, indices=_NO_INDICES, data=_NO_DATA)


@njit_kernel
def _oja_rank_one(v, p, g, cc, run, indices, data):
    """``V <- D^{-1/2} L^{-1} (V + g p a^T)`` (the Gram-Schmidt of ``_oja_orthonormalise``) without forming
    ``V + g p a^T``, for the row ``a`` held in ``data`` at columns ``indices`` (a sparse row), or, when
    ``indices`` is empty, in the whole of ``data`` (a dense row of ``d`` values, added in the same sweep; no
    row at all when ``data`` is empty too).

    ``L^{-1} V'`` is ``Z + g u a^T`` with ``Z = L^{-1} V`` (the same running sum, over the rows of V) and
    ``u = L^{-1} p``, whose entries have the closed form ``u_i = p_i a_i / cc`` (``1 - sum_{j<i} beta_j u_j``
    telescopes to ``a_i / cc``). Adding ``g p a^T`` to V first, as ``_oja_orthonormalise`` expects, loses V in
    the rounding of the far larger ``g p a^T`` once ``g |a|^2`` is large (raw features in the thousands and
    up) and then cancels those large terms against each other: the rows came out far from orthonormal.
    """
    m = v.shape[0]
    d = v.shape[1]
    dense = indices.shape[0] == 0 and data.shape[0] == d
    for k in range(d):
        run[k] = 0.0
    a = cc
    for i in range(m):
        pi = p[i]
        if pi == 0.0:  # dbar = 1, beta = 0, u_i = 0: the row is unchanged
            continue
        dbar = 1.0 + a * pi * pi
        beta = pi * a / dbar
        f = g * pi * a / cc if g != 0.0 else 0.0  # g u_i
        a = a / dbar
        scale = 1.0 / math.sqrt(dbar)
        fs = f * scale
        if dense:
            for k in range(d):
                z = v[i, k] - pi * run[k]
                run[k] += beta * z
                v[i, k] = z * scale + fs * data[k]
        else:
            for k in range(d):
                z = v[i, k] - pi * run[k]
                run[k] += beta * z
                v[i, k] = z * scale
            for q in range(indices.shape[0]):
                v[i, indices[q]] += fs * data[q]


@njit_kernel
def oja_fit_csr(indptr, indices, data, v, lam, t, c):
    """Stream a CSR chunk through the sketch; returns the new row counter ``t``. Cost O(ell * d) per row."""
    m = v.shape[0]
    p = np.empty(m)
    run = np.empty(v.shape[1])
    n = indptr.shape[0] - 1
    for row in range(n):
        start = indptr[row]
        end = indptr[row + 1]
        t += 1
        a2 = 0.0
        for q in range(start, end):
            a2 += data[q] * data[q]
        for i in range(m):
            p[i] = sparse_row_dot(v, i, indices, data, start, end)
        g = _oja_gamma(lam, t, c, p)
        if a2 > 0.0:
            cc = 2.0 * g + g * g * a2
            _oja_rank_one(v=v, p=p, g=g, cc=cc, run=run, indices=indices[start:end], data=data[start:end])
        if t % REORTH_EVERY == 0:
            oja_reorthonormalise(v)
    return t


@njit_kernel
def oja_fit_dense(X, v, lam, t, c):
    """Stream a dense chunk through the sketch; returns the new row counter ``t``."""
    m = v.shape[0]
    d = v.shape[1]
    p = np.empty(m)
    run = np.empty(d)
    for row in range(X.shape[0]):
        t += 1
        a2 = 0.0
        for j in range(d):
            a2 += X[row, j] * X[row, j]
        for i in range(m):
            acc = 0.0
            for j in range(d):
                acc += v[i, j] * X[row, j]
            p[i] = acc
        g = _oja_gamma(lam, t, c, p)
        if a2 > 0.0:
            cc = 2.0 * g + g * g * a2
            _oja_rank_one(v=v, p=p, g=g, cc=cc, run=run, indices=_NO_INDICES, data=X[row])
        if t % REORTH_EVERY == 0:
            oja_reorthonormalise(v)
    return t
