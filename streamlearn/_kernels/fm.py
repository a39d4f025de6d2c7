"""Vanilla factorization machine (Rendle, ICDM 2010) trained online, one pass over a CSR chunk.

Model (Algorithms §7.1), one per output ``k`` (K > 1 outputs = one-vs-rest)::

    yhat = w0 + w . x + 1/2 sum_f (s_f^2 - sum_i V[i, f]^2 x_i^2),   s_f = sum_i V[i, f] x_i

Gradients of ``yhat``: d/dw0 = 1, d/dw_i = x_i, d/dV[i, f] = x_i s_f - V[i, f] x_i^2. With ``g = l'(yhat, y)``
times the sample weight, the step on parameter ``p`` of the example's active features is
``grad_p = g dyhat/dp + l2_p p`` (L2 only on the parameters the example touches, the usual lazy form of
libFM's SGD), then

* ``OPT_SGD``: ``p -= eta_t grad_p`` with ``eta_t = eta0`` (constant) or ``eta0 / sqrt(t)``;
* ``OPT_ADAGRAD``: ``G_p += grad_p^2; p -= eta0 grad_p / sqrt(G_p)`` (per parameter; skipped while G_p = 0,
  which happens when grad_p^2 underflows).

Cost: O(K k nnz(x)) per example for the score and the update. Every example's score before its update is
written to ``out_scores`` (n, K). Examples with sample weight 0 are scored but neither update nor advance t.
"""

import math

import numpy as np

from ._numba import njit_inline, njit_kernel
from .linear import record_score, weighted_row
from .losses import loss_dloss

OPT_SGD = 0
OPT_ADAGRAD = 1

SCHEDULE_CONSTANT = 0
SCHEDULE_INVSQRT = 1


@njit_inline
def _fm_row_score(w0, w, V, k, indices, data, start, end, s, sq):
    """Score of output k on the CSR row data[start:end]; leaves s_f in ``s`` (length n_factors)."""
    nf = V.shape[2]
    for f in range(nf):
        s[f] = 0.0
        sq[f] = 0.0
    z = w0[k]
    for p in range(start, end):
        j = np.uintp(indices[p])
        x = data[p]
        z += w[k, j] * x
        for f in range(nf):
            v = V[k, j, f] * x
            s[f] += v
            sq[f] += v * v
    quad = 0.0
    for f in range(nf):
        quad += s[f] * s[f] - sq[f]
    return z + 0.5 * quad


@njit_kernel
def fm_epoch(
    indptr,
    indices,
    data,
    targets,
    sample_weight,
    w0,
    w,
    V,
    G_w0,
    G_w,
    G_V,
    fit_intercept,
    loss,
    opt,
    schedule,
    eta0,
    l2_weight,
    l2_latent,
    t,
    out_scores,
):
    """One pass over the rows of a CSR matrix in storage order.

    ``w0`` (K,), ``w`` (K, d), ``V`` (K, d, k) are updated in place; ``G_*`` (same shapes) are the AdaGrad
    accumulators (unused by SGD). Returns ``(t, bad_row)`` (-1, or the first example whose score was not
    finite, or whose update made an accumulator infinite: the pass stops there, earlier updates are kept).
    """
    n_rows = indptr.shape[0] - 1
    n_out = w.shape[0]
    nf = V.shape[2]
    s = np.zeros(nf)
    sq = np.zeros(nf)
    for i in range(n_rows):
        start, end, sw, t = weighted_row(indptr, sample_weight, i, t)
        for k in range(n_out):
            z = _fm_row_score(w0=w0, w=w, V=V, k=k, indices=indices, data=data, start=start, end=end, s=s, sq=sq)
            if not record_score(out_scores, i, k, z):
                return t, i
            if sw == 0.0:
                continue
            g = loss_dloss(loss, targets[i, k], z, 0.0) * sw
            if opt == OPT_SGD:
                eta = eta0 / math.sqrt(t) if schedule == SCHEDULE_INVSQRT else eta0
                if fit_intercept:
                    w0[k] -= eta * g
                for p in range(start, end):
                    j = np.uintp(indices[p])
                    x = data[p]
                    w[k, j] -= eta * (g * x + l2_weight * w[k, j])
                    for f in range(nf):
                        vjf = V[k, j, f]
                        V[k, j, f] = vjf - eta * (g * (x * s[f] - vjf * x * x) + l2_latent * vjf)
            else:
                # (G > 0 tests, not g != 0: g * g underflows to 0 for |g| < 1e-162)
                top = 0.0  # the largest accumulator this example leaves: infinite once a gradient overflows
                if fit_intercept and g != 0.0:
                    G_w0[k] += g * g
                    if G_w0[k] > 0.0:
                        w0[k] -= eta0 * g / math.sqrt(G_w0[k])
                        top = G_w0[k]
                for p in range(start, end):
                    j = np.uintp(indices[p])
                    x = data[p]
                    gr = g * x + l2_weight * w[k, j]
                    if gr != 0.0:
                        G_w[k, j] += gr * gr
                        if G_w[k, j] > 0.0:
                            w[k, j] -= eta0 * gr / math.sqrt(G_w[k, j])
                            top = max(top, G_w[k, j])
                    for f in range(nf):
                        vjf = V[k, j, f]
                        gr = g * (x * s[f] - vjf * x * x) + l2_latent * vjf
                        if gr != 0.0:
                            G_V[k, j, f] += gr * gr
                            if G_V[k, j, f] > 0.0:
                                V[k, j, f] = vjf - eta0 * gr / math.sqrt(G_V[k, j, f])
                                top = max(top, G_V[k, j, f])
                if not top < math.inf:  # a step of 0 from then on: learning would stop there unseen
                    return t, i
    return t, -1


@njit_kernel
def fm_scores(indptr, indices, data, w0, w, V, out):
    """out[i, k] = FM score of output k on row i; O(K k nnz)."""
    nf = V.shape[2]
    s = np.zeros(nf)
    sq = np.zeros(nf)
    for i in range(indptr.shape[0] - 1):
        for k in range(w.shape[0]):
            out[i, k] = _fm_row_score(
                w0=w0, w=w, V=V, k=k, indices=indices, data=data, start=indptr[i], end=indptr[i + 1], s=s, sq=sq
            )
    return out
