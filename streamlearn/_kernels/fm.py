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
from .linear import _all_finite, record_score, weighted_row
from .losses import loss_dloss

OPT_SGD = 0
OPT_ADAGRAD = 1

#: SGD: an example whose gradient steps are bounded by this size, before and after the factor ``eta_t`` (with
#: ``l2`` and ``eta_t l2`` at most 1), cannot make a parameter below 2**1022 overflow and is learnt as it is; a
#: larger bound (huge values, weights or scores, never on sane data) has its new parameters checked before any
#: is written.
SGD_SAFE_STEP = 2.0**1000

SCHEDULE_CONSTANT = 0
SCHEDULE_INVSQRT = 1


@njit_inline
def _fm_row_score(w0, w, V, k, indices, data, start, end, s, sq):
    """Score of output k on the CSR row data[start:end] and the row's largest value in size (1 at least); leaves
    s_f in ``s`` and sum_i (V[i, f] x_i)^2 in ``sq`` (length n_factors)."""
    nf = V.shape[2]
    for f in range(nf):
        s[f] = 0.0
        sq[f] = 0.0
    z = w0[k]
    xmax = 1.0
    for p in range(start, end):
        j = np.uintp(indices[p])
        x = data[p]
        xmax = max(xmax, abs(x))
        z += w[k, j] * x
        for f in range(nf):
            v = V[k, j, f] * x
            s[f] += v
            sq[f] += v * v
    quad = 0.0
    for f in range(nf):
        quad += s[f] * s[f] - sq[f]
    return z + 0.5 * quad, xmax


@njit_inline
def _w_grad(g, x, wj, l2):
    """The gradient of a linear weight ``w_j`` for the loss derivative ``g`` (weighted) and the value ``x``."""
    return g * x + l2 * wj


@njit_inline
def _v_grad(g, x, sf, vjf, l2):
    """The gradient of a factor ``V[j, f]``: ``g x (s_f - V[j, f] x)`` plus its L2 term (``sf``: ``s_f``)."""
    return g * (x * sf - vjf * x * x) + l2 * vjf


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
    accumulators (unused by SGD). Returns ``(t, bad_row)``: -1, or the first example whose score was not finite,
    or whose update would make a parameter (or, AdaGrad, an accumulator) not finite. The pass stops there with that
    example's update not applied to any output (every output is scored before the first is updated, and an
    update that is not finite undoes those of the outputs before it) and ``t`` not counting it; the updates before
    it are kept.
    """
    n_rows = indptr.shape[0] - 1
    n_out = w.shape[0]
    nf = V.shape[2]
    # every output is scored before any is updated (each output's score reads its own parameters only): s_f and
    # sum_i (V[i, f] x_i)^2 of each output, kept for its update, and its weighted loss derivative
    s = np.zeros((n_out, nf))
    sq = np.zeros((n_out, nf))
    gk = np.empty(n_out)
    width = 0
    for i in range(n_rows):
        width = max(width, indptr[i + 1] - indptr[i])
    # AdaGrad: the values an example's update overwrites (per output: w then V of each active feature, and their
    # accumulators; the intercept and its accumulator), written back to every output updated so far when an
    # update turns out not finite; SGD: the new values of an output beyond SGD_SAFE_STEP (and its intercept),
    # written once those of every output are checked
    size = width * (nf + 1)
    old = np.empty((n_out, size) if opt == OPT_ADAGRAD else (0, 0))
    old_G = np.empty((n_out, size) if opt == OPT_ADAGRAD else (0, 0))
    old_0 = np.empty((n_out, 2))
    new = np.empty((n_out, size) if opt == OPT_SGD else (0, 0))
    new_0 = np.empty(n_out)
    checked = np.zeros(n_out, np.bool_)  # SGD: the output's new values are in ``new``
    l2_max = max(l2_weight, l2_latent)
    for i in range(n_rows):
        t_before = t
        start, end, sw, t = weighted_row(indptr, sample_weight, i, t)
        xmax = 1.0
        for k in range(n_out):
            z, xmax = _fm_row_score(
                w0=w0, w=w, V=V, k=k, indices=indices, data=data, start=start, end=end, s=s[k], sq=sq[k]
            )
            if not record_score(out_scores, i, k, z):
                return t_before, i
            gk[k] = loss_dloss(loss, targets[i, k], z, 0.0) * sw
        if sw == 0.0:
            continue
        if opt == OPT_SGD:
            eta = eta0 / math.sqrt(t) if schedule == SCHEDULE_INVSQRT else eta0
            big = max(1.0, eta)
            # first every output beyond the bound has its new parameters computed and checked, then all are written
            for k in range(n_out):
                g = gk[k]
                sk = s[k]
                # a bound on the size of the gradient parts of the steps, before and after the factor eta:
                # |g x_j| (w, and the intercept's 1) and |g x_j (s_f - V[j, f] x_j)| <= |g| max|x| (max|s| + sqrt(max sq))
                # (V, each product on the way as well)
                smax = 0.0
                sqmax = 0.0
                for f in range(nf):
                    smax = max(smax, abs(sk[f]))
                    sqmax = max(sqmax, sq[k, f])
                reach = abs(g) * (xmax * (1.0 + smax + math.sqrt(sqmax))) * big
                checked[k] = not (reach <= SGD_SAFE_STEP and l2_max * big <= 1.0)  # (True for NaN)
                if not checked[k]:  # no parameter can overflow: written directly below
                    continue
                # (rare: huge values or weights) the new parameters (w then V of each active feature) go to
                # ``new`` and are written only when all are finite
                b = w0[k] - eta * g if fit_intercept else w0[k]
                new_0[k] = b
                q = 0
                for p in range(start, end):
                    j = np.uintp(indices[p])
                    x = data[p]
                    wj = w[k, j]
                    new[k, q] = wj - eta * _w_grad(g, x, wj, l2_weight)
                    q += 1
                    for f in range(nf):
                        vjf = V[k, j, f]
                        new[k, q] = vjf - eta * _v_grad(g, x, sk[f], vjf, l2_latent)
                        q += 1
                if not (math.isfinite(b) and _all_finite(new[k, :q])):
                    return t_before, i
            for k in range(n_out):
                g = gk[k]
                sk = s[k]
                if not checked[k]:
                    w0[k] = w0[k] - eta * g if fit_intercept else w0[k]
                    for p in range(start, end):
                        j = np.uintp(indices[p])
                        x = data[p]
                        w[k, j] -= eta * _w_grad(g, x, w[k, j], l2_weight)
                        for f in range(nf):
                            vjf = V[k, j, f]
                            V[k, j, f] = vjf - eta * _v_grad(g, x, sk[f], vjf, l2_latent)
                    continue
                w0[k] = new_0[k]
                q = 0
                for p in range(start, end):
                    j = np.uintp(indices[p])
                    w[k, j] = new[k, q]
                    q += 1
                    for f in range(nf):
                        V[k, j, f] = new[k, q]
                        q += 1
            continue
        for k in range(n_out):
            g = gk[k]
            sk = s[k]
            # (G > 0 tests, not g != 0: g * g underflows to 0 for |g| < 1e-162)
            old_0[k, 0], old_0[k, 1] = w0[k], G_w0[k]
            # G - G over the new accumulators: 0 while they are finite, NaN once one is not (a finite G >= gr^2
            # bounds the parameter's step by eta0, so the parameters stay finite too)
            nan = 0.0
            q = 0
            if fit_intercept and g != 0.0:
                G_w0[k] += g * g
                if G_w0[k] > 0.0:
                    w0[k] -= eta0 * g / math.sqrt(G_w0[k])
                nan += G_w0[k] - G_w0[k]
            for p in range(start, end):
                j = np.uintp(indices[p])
                x = data[p]
                wj, Gj = w[k, j], G_w[k, j]
                old[k, q], old_G[k, q] = wj, Gj
                q += 1
                gr = _w_grad(g, x, wj, l2_weight)
                if gr != 0.0:
                    Gj += gr * gr
                    G_w[k, j] = Gj
                    if Gj > 0.0:
                        wj -= eta0 * gr / math.sqrt(Gj)
                        w[k, j] = wj
                    nan += Gj - Gj
                for f in range(nf):
                    vjf, Gjf = V[k, j, f], G_V[k, j, f]
                    old[k, q], old_G[k, q] = vjf, Gjf
                    q += 1
                    gr = _v_grad(g, x, sk[f], vjf, l2_latent)
                    if gr != 0.0:
                        Gjf += gr * gr
                        G_V[k, j, f] = Gjf
                        if Gjf > 0.0:
                            vjf = vjf - eta0 * gr / math.sqrt(Gjf)
                            V[k, j, f] = vjf
                        nan += Gjf - Gjf
            if nan != 0.0:  # NaN: a value of this update is not finite; none of it is kept, by any output
                for c in range(k + 1):
                    w0[c], G_w0[c] = old_0[c, 0], old_0[c, 1]
                    q = 0
                    for p in range(start, end):
                        j = np.uintp(indices[p])
                        w[c, j] = old[c, q]
                        G_w[c, j] = old_G[c, q]
                        q += 1
                        for f in range(nf):
                            V[c, j, f] = old[c, q]
                            G_V[c, j, f] = old_G[c, q]
                            q += 1
                return t_before, i
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
            )[0]
    return out
