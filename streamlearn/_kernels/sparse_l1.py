"""Sparse (L1) online learners, lazily in O(nnz(x)) per example: simple truncation, truncated gradient
(TG), L1-FOBOS, L1-RDA and FTRL-Proximal (Algorithms §4.1-4.6).

Conventions shared by every kernel: K outputs (one-vs-rest for K > 2 classes), d features. The state is
*feature-major*: row ``j`` holds everything about feature j for all outputs, so one example touches one
cache line per feature (the state of 2^22 features does not fit in cache, so interleaving z and n
saves a cache miss per feature). Row ``d`` is the
intercept, the weight of a constant feature 1 used only when ``fit_intercept`` is true and never
penalised (no truncation, no L1, no L2). ``targets`` is (n, K) in {-1, +1} (classification) or the real
target (K = 1). Every example's score *before* its update is written to ``out_scores`` (n, K). Examples
with sample weight 0 are scored but neither update nor count as a round; a weight s multiplies the loss
gradient. Each ``*_epoch`` returns the new counters and -1, or the index of the first example whose score
was not finite or whose update could overflow (the pass stops there). ``*_materialize`` writes the weights
as (K, d + 1) (last column: intercepts) without changing the state; ``*_scores`` computes scores of the
current model in O(K nnz).

Truncation family (``truncated_epoch``): state ``wm`` (d + 1, K + 1): ``wm[j, c]`` the weight of feature j
for output c, ``wm[j, K]`` its mark (below); scalar ``penalty``. With ``v = w - eta_t g_t`` and rounds
t = 1, 2, ... (eta_t = eta0 or eta0 / sqrt(t)):

* ``RULE_HARD`` (simple truncation, 4.1): on rounds with t mod k == 0, ``w_i = 0 if |v_i| <= theta``.
  ``penalty`` counts the truncation rounds so far.
* ``RULE_SOFT`` (TG, 4.2): on rounds with t mod k == 0, ``w_i = T1(v_i, a_t, theta)`` with
  ``a_t = k eta_t lam`` (lam: the gravity); ``penalty`` is the running sum of the ``a_t``. L1-FOBOS
  (4.3, with eta_{t+1/2} = eta_t) is exactly ``RULE_SOFT`` with ``theta = inf`` and ``k = 1``.

Laziness (4.6): the mark of feature i is the value of ``penalty`` up to which its weights are current. A
coordinate absent from an example only sees the truncations, and those compose: soft thresholds add up
(``T1(T1(w, a), b) = T1(w, a + b)`` for |w| <= theta, and |w| > theta is never moved), a hard threshold
of a constant weight is one test. So before a coordinate is read, it is caught up by
``penalty - mark`` in O(1).

L1-RDA (``rda_epoch``, 4.4): state ``G`` (d + 1, K), the sum of the gradients, and ``t`` the rounds;
``w_i = 0 if |G_i| / t <= lam else -(sqrt(t) / gamma) (G_i / t - lam sgn(G_i))`` computed on demand.

FTRL-Proximal (``ftrl_epoch``, 4.5): state ``zn`` (d + 1, K, 2), ``zn[j, c, 0] = z`` and
``zn[j, c, 1] = sqrt(n)`` (the root of the sum of squared gradients is kept rather than the sum: one square
root per update instead of three); ``w_i = 0 if |z_i| <= l1 else -(z_i - sgn(z_i) l1) / ((beta +
sqrt(n_i)) / alpha + l2)``, then for the features of the example ``sigma = (sqrt(n_i + g_i^2) -
sqrt(n_i)) / alpha``, ``z_i += g_i - sigma w_i``, ``n_i += g_i^2``.
"""

import math

import numpy as np

from ._intrinsics import prefetch
from ._numba import njit_inline, njit_kernel
from .linear import SAFE_STEP, record_score
from .losses import loss_dloss, weighted_dloss

RULE_HARD = 0
RULE_SOFT = 1

SCHEDULE_CONSTANT = 0
SCHEDULE_INVSQRT = 1

# The largest gradient times value (in size, the intercept's value being 1) that an example may bring to L1-RDA
# and FTRL-Proximal; an example beyond it is treated as diverging and its pass stops before its update. RDA adds
# these products to the gradient sums, FTRL adds their squares to n: with at most 2**63 rounds (the round
# counter is an int64), 2**63 * 2**960 and 2**63 * (2**480)**2 stay below 2**1024, so no sum, and no sqrt(n) or
# its square, overflows. FTRL's z stays finite too: with u = z / (beta + sqrt(n)), an update adds at most
# |g_i| / (beta + sqrt(n_i + g_i^2)) <= 1 to |u|, so |z| <= 2**63 (beta + sqrt(n)). Ordinary data is far below
# both bounds (they matter for values near the 2**500 the input check allows, or huge targets).
RDA_SAFE_GRADIENT = 2.0**960
FTRL_SAFE_GRADIENT = 2.0**480


@njit_inline
def _prefetch_row(indptr, indices, row, state):
    """Prefetch the state rows ``state[j]`` of the features j of example ``row`` (2-D feature-major state)."""
    if row + 1 >= indptr.shape[0]:
        return
    for p in range(indptr[row], indptr[row + 1]):
        prefetch(state, indices[p], 0)


# ---------------------------------------------------------------------------------------------------
# truncation family: simple truncation, truncated gradient, L1-FOBOS
@njit_inline
def _truncate(v, a, theta, rule):
    """One truncation of value ``v``: T0(v, theta) (hard) or T1(v, a, theta) (soft)."""
    m = abs(v)
    if m > theta:
        return v
    if rule == RULE_HARD:
        return 0.0
    # branch-free soft threshold (the sign of v is unpredictable: a branch on it costs a misprediction)
    return math.copysign(max(m - a, 0.0), v)


@njit_kernel
def truncated_epoch(
    indptr,
    indices,
    data,
    targets,
    sample_weight,
    wm,
    fit_intercept,
    rule,
    loss,
    theta,
    k,
    lam,
    eta0,
    schedule,
    t,
    penalty,
    out_scores,
):
    """One pass of simple truncation / truncated gradient / L1-FOBOS over a CSR chunk.

    Returns ``(t, penalty, bad_row)``: ``bad_row`` is -1, or the first example whose score is not finite or whose
    step is beyond ``linear.SAFE_STEP`` in size (the steps of the examples' values, below 2**500, that keep every
    weight finite; never on sane data). The pass stops there, before that example's update (its coordinates are
    caught up with the pending truncations, which changes no weight's value), and ``t`` does not count it. With
    several outputs, the outputs before the one that stopped it have taken the example's update.
    """
    n_rows = indptr.shape[0] - 1
    n_out = wm.shape[1] - 1
    d = wm.shape[0] - 1
    for i in range(n_rows):
        start = indptr[i]
        end = indptr[i + 1]
        _prefetch_row(indptr, indices, i + 1, wm)
        for c in range(n_out):
            z = wm[d, c] if fit_intercept else 0.0
            for p in range(start, end):
                j = indices[p]
                if c == 0:
                    # catch the coordinate up to the truncations of rounds 1 .. t, all outputs (lazy, 4.6)
                    delta = penalty - wm[j, n_out]
                    if delta > 0.0:
                        for cc in range(n_out):
                            wm[j, cc] = _truncate(wm[j, cc], delta, theta, rule)
                        wm[j, n_out] = penalty
                z += wm[j, c] * data[p]
            if not record_score(out_scores, i, c, z):
                return t, penalty, i
        s = sample_weight[i]
        if s == 0.0:
            continue
        t += 1
        eta = eta0 / math.sqrt(t) if schedule == SCHEDULE_INVSQRT else eta0
        truncating = t % k == 0
        a = (1.0 if rule == RULE_HARD else k * eta * lam) if truncating else 0.0
        for c in range(n_out):
            step = eta * loss_dloss(loss, targets[i, c], out_scores[i, c], 0.0) * s
            if abs(step) > SAFE_STEP:  # (never NaN: the score is finite, s > 0) the weights could overflow
                return t - 1, penalty, i
            if fit_intercept:
                wm[d, c] -= step
            if truncating:  # gradient step, then this round's truncation
                for p in range(start, end):
                    j = indices[p]
                    wm[j, c] = _truncate(wm[j, c] - step * data[p], a, theta, rule)
            elif step != 0.0:
                for p in range(start, end):
                    wm[indices[p], c] -= step * data[p]
        if truncating:
            for p in range(start, end):
                wm[indices[p], n_out] = penalty + a
            penalty += a
    return t, penalty, -1


@njit_inline
def _caught_up(wm, j, c, penalty, theta, rule):
    delta = penalty - wm[j, wm.shape[1] - 1]
    return _truncate(wm[j, c], delta, theta, rule) if delta > 0.0 else wm[j, c]


@njit_kernel
def truncated_materialize(wm, penalty, theta, rule, out):
    """out (K, d + 1) = the weights with every pending truncation applied (``wm`` is not modified)."""
    n_out = wm.shape[1] - 1
    d = wm.shape[0] - 1
    for j in range(d):
        for c in range(n_out):
            out[c, j] = _caught_up(wm, j, c, penalty, theta, rule)
    for c in range(n_out):
        out[c, d] = wm[d, c]
    return out


@njit_kernel
def truncated_flush(wm, penalty, theta, rule):
    """Apply every pending truncation in place (all marks become ``penalty``): the model is unchanged, as
    catching up later would give the same weights (Algorithms §4.6: flush before export). O(K d)."""
    n_out = wm.shape[1] - 1
    d = wm.shape[0] - 1
    for j in range(d):
        delta = penalty - wm[j, n_out]
        if delta > 0.0:
            for c in range(n_out):
                wm[j, c] = _truncate(wm[j, c], delta, theta, rule)
            wm[j, n_out] = penalty
    return wm


@njit_kernel
def truncated_scores(indptr, indices, data, wm, penalty, theta, rule, fit_intercept, out):
    """out[i, c] = scores of the caught-up model, O(K nnz) without materialising it."""
    n_rows = indptr.shape[0] - 1
    n_out = wm.shape[1] - 1
    d = wm.shape[0] - 1
    for i in range(n_rows):
        for c in range(n_out):
            z = wm[d, c] if fit_intercept else 0.0
            for p in range(indptr[i], indptr[i + 1]):
                z += _caught_up(wm, indices[p], c, penalty, theta, rule) * data[p]
            out[i, c] = z
    return out


# ---------------------------------------------------------------------------------------------------
# L1-RDA
@njit_inline
def _rda_weight(G, t, lam, gamma):
    if t == 0:
        return 0.0
    gbar = G / t
    # branch-free: 0 when |gbar| <= lam, else -(sqrt(t) / gamma) (gbar - lam sgn(gbar))
    return -(math.sqrt(t) / gamma) * math.copysign(max(abs(gbar) - lam, 0.0), gbar)


@njit_kernel
def rda_epoch(indptr, indices, data, targets, sample_weight, G, fit_intercept, loss, lam, gamma, t, out_scores):
    """One pass of L1-RDA over a CSR chunk. ``t`` counts the rounds so far. Returns ``(t, bad_row)``: -1, or the
    first example whose score is not finite or whose gradient times one of its values (or the intercept's 1)
    exceeds :data:`RDA_SAFE_GRADIENT` in size. The pass stops there, before any output's update of that example,
    and ``t`` does not count it; the examples before it keep their updates."""
    n_rows = indptr.shape[0] - 1
    n_out = G.shape[1]
    d = G.shape[0] - 1
    gbuf = np.empty(n_out)  # the example's gradient for each output, all checked before any update
    for i in range(n_rows):
        start = indptr[i]
        end = indptr[i + 1]
        _prefetch_row(indptr, indices, i + 1, G)
        s = sample_weight[i]
        xmax = 1.0 if fit_intercept else 0.0  # the example's largest value in size
        gmax = 0.0
        for c in range(n_out):
            z = _rda_weight(G[d, c], t, 0.0, gamma) if fit_intercept else 0.0
            for p in range(start, end):
                x = data[p]
                xmax = max(xmax, abs(x))
                z += _rda_weight(G[indices[p], c], t, lam, gamma) * x
            if not record_score(out_scores, i, c, z):
                return t, i
            g = weighted_dloss(loss, targets[i, c], z, s)
            gbuf[c] = g
            gmax = max(gmax, abs(g))
        if s == 0.0:
            continue
        if gmax * xmax > RDA_SAFE_GRADIENT:  # (never NaN: the scores are finite) a gradient sum could overflow
            return t, i
        t += 1
        for c in range(n_out):
            g = gbuf[c]
            if g == 0.0:
                continue
            for p in range(start, end):
                G[indices[p], c] += g * data[p]
            if fit_intercept:
                G[d, c] += g
    return t, -1


@njit_kernel
def rda_materialize(G, t, lam, gamma, out):
    n_out = G.shape[1]
    d = G.shape[0] - 1
    for j in range(d):
        for c in range(n_out):
            out[c, j] = _rda_weight(G[j, c], t, lam, gamma)
    for c in range(n_out):
        out[c, d] = _rda_weight(G[d, c], t, 0.0, gamma)
    return out


@njit_kernel
def rda_scores(indptr, indices, data, G, t, lam, gamma, fit_intercept, out):
    n_rows = indptr.shape[0] - 1
    n_out = G.shape[1]
    d = G.shape[0] - 1
    for i in range(n_rows):
        for c in range(n_out):
            z = _rda_weight(G[d, c], t, 0.0, gamma) if fit_intercept else 0.0
            for p in range(indptr[i], indptr[i + 1]):
                z += _rda_weight(G[indices[p], c], t, lam, gamma) * data[p]
            out[i, c] = z
    return out


# ---------------------------------------------------------------------------------------------------
# FTRL-Proximal
@njit_inline
def _ftrl_weight(z, sqrt_n, inv_alpha, beta, l1, l2):
    # branch-free: 0 when |z| <= l1, else -(z - l1 sgn(z)) / ((beta + sqrt(n)) / alpha + l2)
    return -math.copysign(max(abs(z) - l1, 0.0), z) / ((beta + sqrt_n) * inv_alpha + l2)


@njit_kernel
def ftrl_epoch(
    indptr, indices, data, targets, sample_weight, zn, fit_intercept, loss, alpha, beta, l1, l2, t, out_scores
):
    """One pass of per-coordinate FTRL-Proximal over a CSR chunk. Returns ``(t, bad_row)``: -1, or the first
    example whose score is not finite or whose gradient times one of its values (or the intercept's 1) exceeds
    :data:`FTRL_SAFE_GRADIENT` in size. The pass stops there, before any output's update of that example (every
    output is scored and checked before the first is updated), and ``t`` does not count the example; the
    examples before it keep their updates."""
    n_rows = indptr.shape[0] - 1
    n_out = zn.shape[1]
    d = zn.shape[0] - 1
    inv_alpha = 1.0 / alpha
    flat = zn.reshape(d + 1, 2 * n_out)  # 2-D view for the prefetch
    max_nnz = 0
    for i in range(n_rows):
        max_nnz = max(max_nnz, indptr[i + 1] - indptr[i])
    # the example's weights for each output (computed once for the score and the update) and its gradients, all
    # checked before any output is updated
    wbuf = np.empty((n_out, max_nnz + 1))
    gbuf = np.empty(n_out)
    for i in range(n_rows):
        start = indptr[i]
        end = indptr[i + 1]
        s = sample_weight[i]
        _prefetch_row(indptr, indices, i + 1, flat)
        xmax = 1.0 if fit_intercept else 0.0  # the example's largest value in size
        gmax = 0.0
        for c in range(n_out):
            acc = 0.0
            wb = 0.0
            if fit_intercept:
                wb = _ftrl_weight(zn[d, c, 0], zn[d, c, 1], inv_alpha, beta, 0.0, 0.0)
                acc = wb
            for p in range(start, end):
                j = indices[p]
                x = data[p]
                xmax = max(xmax, abs(x))  # (taken with each output's sum: a loop of its own costs more)
                wj = _ftrl_weight(zn[j, c, 0], zn[j, c, 1], inv_alpha, beta, l1, l2)
                wbuf[c, p - start] = wj
                acc += wj * x
            wbuf[c, max_nnz] = wb
            if not record_score(out_scores, i, c, acc):
                return t, i
            g = weighted_dloss(loss, targets[i, c], acc, s)
            gbuf[c] = g
            gmax = max(gmax, abs(g))
        if gmax * xmax > FTRL_SAFE_GRADIENT:  # (never NaN: the scores are finite) n could overflow
            return t, i
        for c in range(n_out):
            g = gbuf[c]
            if g == 0.0:
                continue
            for p in range(start, end):
                j = indices[p]
                gj = g * data[p]
                sq = zn[j, c, 1]
                sq_new = math.sqrt(sq * sq + gj * gj)
                zn[j, c, 0] += gj - (sq_new - sq) * inv_alpha * wbuf[c, p - start]
                zn[j, c, 1] = sq_new
            if fit_intercept:
                sq = zn[d, c, 1]
                sq_new = math.sqrt(sq * sq + g * g)
                zn[d, c, 0] += g - (sq_new - sq) * inv_alpha * wbuf[c, max_nnz]
                zn[d, c, 1] = sq_new
        if s != 0.0:
            t += 1
    return t, -1


@njit_kernel
def ftrl_materialize(zn, alpha, beta, l1, l2, out):
    n_out = zn.shape[1]
    d = zn.shape[0] - 1
    inv_alpha = 1.0 / alpha
    for j in range(d):
        for c in range(n_out):
            out[c, j] = _ftrl_weight(zn[j, c, 0], zn[j, c, 1], inv_alpha, beta, l1, l2)
    for c in range(n_out):
        out[c, d] = _ftrl_weight(zn[d, c, 0], zn[d, c, 1], inv_alpha, beta, 0.0, 0.0)
    return out


@njit_kernel
def ftrl_scores(indptr, indices, data, zn, alpha, beta, l1, l2, fit_intercept, out):
    n_rows = indptr.shape[0] - 1
    n_out = zn.shape[1]
    d = zn.shape[0] - 1
    inv_alpha = 1.0 / alpha
    for i in range(n_rows):
        for c in range(n_out):
            acc = _ftrl_weight(zn[d, c, 0], zn[d, c, 1], inv_alpha, beta, 0.0, 0.0) if fit_intercept else 0.0
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                acc += _ftrl_weight(zn[j, c, 0], zn[j, c, 1], inv_alpha, beta, l1, l2) * data[p]
            out[i, c] = acc
    return out
