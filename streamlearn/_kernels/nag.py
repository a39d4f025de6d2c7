"""Normalized (adaptive) online gradient descent, one pass over a CSR chunk or over dense rows.

The update of Ross, Mineiro & Langford, "Normalized Online Learning" (UAI 2013), in the variant Vowpal
Wabbit runs by default. Per feature ``j`` the kernel keeps

* ``scale[j]`` = ``s_j``, the largest ``|x_j|`` seen so far (shared by every output);
* ``accum[k, j]`` = ``G_kj``, the importance-weighted sum of squared gradients ``h (l'(z_k) x_j)^2``
  (adaptive mode only);

and, globally, ``norm_state = [T, N]``: the total importance weight and the weighted sum of squared
normalised norms ``h sum_j (x_j / s_j)^2``. The intercept is the weight of a constant feature 1 (its scale
is 1; its accumulator is ``accum_b[k]``).

For each example (weight ``h > 0``), after its score ``z_k = w_k . x + b_k`` is written:

1. every ``j`` with ``|x_j| > s_j`` rescales ``w_kj`` by ``s_j / |x_j|`` (adaptive) or ``(s_j / |x_j|)^2``
   (plain), then ``s_j = |x_j|``; ``T += h``, ``N += h sum_j (x_j / s_j)^2``;
2. per-feature rates ``r_j = 1 / (s_j sqrt(G_kj))`` after ``G_kj += h (l' x_j)^2`` (adaptive) or
   ``r_j = 1 / s_j^2`` (plain), times the global ``m = sqrt(T / N)`` (adaptive) or ``T / N`` (plain);
3. ``w_kj -= u m r_j x_j`` with ``u = eta h l'(z_k)`` (plain gradient step; ``eta = eta0`` or
   ``eta0 / sqrt(t)``), or, with ``invariant``, the importance-invariant ``u`` of Karampatziakis & Langford
   ("Online Importance Weight Aware Updates", UAI 2011): the step that integrates the gradient flow along
   ``m r x`` for a time ``eta h``, in closed form (squared, hinge) or by a safeguarded Newton solve
   (logistic), so that a large ``h`` never overshoots the label.

Scaling a column by ``c`` scales ``s_j`` by ``c``, ``G_kj`` by ``c^2`` and the weight by ``1 / c``: scores,
``N`` and every other feature's state are unchanged (up to rounding). Examples with weight 0 are scored
and change nothing. Explicit zeros are skipped. Cost: O(K nnz(x)) per example (four sweeps of the row in
adaptive mode with ``invariant``, three without; the per-feature rates of step 2 are kept in ``buf``).
"""

import math

import numpy as np

from ._numba import njit_inline, njit_kernel
from .linear import csr_row_dot
from .losses import LOSS_HINGE, LOSS_LOGISTIC, LOSS_SQUARED, loss_dloss

SCHEDULE_CONSTANT = 0
SCHEDULE_INVSQRT = 1


@njit_inline
def logistic_flow(m0, ph):
    """Margin increase ``d > 0`` of the logistic gradient flow run for a time ``ph`` from margin ``m0``:
    ``dm/dtau = sigmoid(-m)``, i.e. the root of ``d + exp(m0) expm1(d) = ph`` (``m + e^m`` grows by ``ph``).

    Newton from the right of the root (the function is convex and increasing, so the iterates fall
    monotonically onto it); the equation is divided by ``exp(m0)`` when ``m0 >= 0`` so nothing overflows.
    """
    if ph <= 0.0:
        return 0.0
    if m0 >= 0.0:
        a = math.exp(-m0)  # solve a d + expm1(d) = a ph
        d = math.log1p(a * ph)
        d = min(d, ph)
        for _ in range(60):
            e = math.expm1(d)
            f = a * d + e - a * ph
            step = f / (a + e + 1.0)
            d -= step
            if step <= 1e-15 * d:
                break
    else:
        b = math.exp(m0)  # solve d + b expm1(d) = ph
        # start at min(ph, log1p(ph / b)), both right of the root; the second in log form when ph / b overflows
        c = math.log1p(ph / b) if b > 1e-290 else math.log(b + ph) - m0
        d = min(c, ph)
        for _ in range(60):
            be = b * math.expm1(d) if d < 1.0 else math.exp(m0 + d) - b  # b expm1(d), never overflowing
            f = d + be - ph
            step = f / (1.0 + b + be)
            d -= step
            if step <= 1e-15 * d:
                break
    return max(0.0, d)


@njit_inline
def invariant_step(loss, y, z, dz, H, P):
    """``u`` of the importance-invariant update ``w -= u r x`` (``P = sum_j r_j x_j^2``, ``H = eta h``):
    the total gradient accumulated by the flow ``du/dtau = l'(z - u P)`` over ``[0, H]``. ``dz = l'(z)``."""
    if P <= 0.0:
        return H * dz
    if loss == LOSS_SQUARED:  # z - y decays like exp(-2 P tau)
        return (z - y) * -math.expm1(-2.0 * P * H) / P
    if loss == LOSS_HINGE:  # constant slope until the margin reaches 1
        m = y * z
        if m >= 1.0:
            return 0.0
        cap = (1.0 - m) / P
        return -y * min(cap, H)
    if loss == LOSS_LOGISTIC:
        return -y * logistic_flow(y * z, P * H) / P
    return H * dz


@njit_inline
def _nag_row(cols, data, start, end, offset, targets_i, h, coef, intercept, fit_intercept, scale, accum,
             accum_b, norm_state, loss, loss_param, eta, adaptive, invariant, buf, scores_i):
    """Learn from one scored example (``scores_i`` holds its pre-update scores). The row's feature ``p``
    (``start <= p < end``) has value ``data[p]`` and column ``cols[p]`` (CSR), or ``p - offset`` when
    ``cols`` is empty (dense rows)."""
    n_out = coef.shape[0]
    dense = cols.shape[0] == 0
    # 1. scales, weight rescaling, normalised norm
    nrm = 1.0 if fit_intercept else 0.0
    for p in range(start, end):
        x = data[p]
        if x == 0.0:
            continue
        j = p - offset if dense else np.intp(cols[p])
        ax = abs(x)
        s = scale[j]
        if ax > s:
            if s > 0.0:
                r = s / ax
                if not adaptive:
                    r = r * r
                for k in range(n_out):
                    coef[k, j] *= r
            scale[j] = ax
            s = ax
        q = x / s
        nrm += q * q
    norm_state[0] += h
    if nrm <= 0.0:  # an empty row and no intercept: nothing to learn
        return
    norm_state[1] += h * nrm
    ratio = norm_state[0] / norm_state[1]
    mult = math.sqrt(ratio) if adaptive else ratio
    for k in range(n_out):
        y = targets_i[k]
        z = scores_i[k]
        dz = loss_dloss(loss, y, z, loss_param)
        if dz == 0.0:
            continue
        gg = h * dz * dz
        # 2. per-feature rates (kept in buf) and P = sum_j r_j x_j^2
        if adaptive:
            pp = 0.0
            for p in range(start, end):
                x = data[p]
                if x == 0.0:
                    buf[p - start] = 0.0
                    continue
                j = p - offset if dense else np.intp(cols[p])
                g2 = accum[k, j] + gg * x * x
                accum[k, j] = g2
                r = 0.0
                if g2 > 0.0:
                    r = 1.0 / (scale[j] * math.sqrt(g2))
                buf[p - start] = r
                pp += r * x * x
            rb = 0.0
            if fit_intercept:
                gb = accum_b[k] + gg
                accum_b[k] = gb
                if gb > 0.0:
                    rb = 1.0 / math.sqrt(gb)
                pp += rb
        else:
            pp = nrm  # r_j = 1 / s_j^2: P is the normalised norm itself
            rb = 1.0 if fit_intercept else 0.0
        pp *= mult
        if invariant:
            u = invariant_step(loss, y, z, dz, eta * h, pp)
        else:
            u = eta * h * dz
        step = -u * mult
        if step == 0.0:
            continue
        # 3. the update
        if adaptive:
            for p in range(start, end):
                x = data[p]
                if x == 0.0:
                    continue
                j = p - offset if dense else np.intp(cols[p])
                coef[k, j] += step * buf[p - start] * x
        else:
            for p in range(start, end):
                x = data[p]
                if x == 0.0:
                    continue
                j = p - offset if dense else np.intp(cols[p])
                s = scale[j]
                coef[k, j] += step * x / (s * s)
        intercept[k] += step * rb


@njit_kernel
def nag_epoch(indptr, indices, data, targets, sample_weight, coef, intercept, fit_intercept, scale, accum,
              accum_b, norm_state, loss, loss_param, eta0, schedule, adaptive, invariant, t, buf, out_scores):
    """One pass over the rows of a CSR matrix in storage order (see the module docstring).

    ``buf`` is scratch space of at least the largest row's nnz. ``t`` counts the examples with weight > 0
    (``eta = eta0 / sqrt(t)`` with ``SCHEDULE_INVSQRT``). Returns ``(t, bad_row)``: -1, or the first row whose
    score is not finite (the pass stops there; earlier updates are kept).
    """
    n_rows = indptr.shape[0] - 1
    n_out = coef.shape[0]
    for i in range(n_rows):
        start = indptr[i]
        end = indptr[i + 1]
        for k in range(n_out):
            z = intercept[k] + csr_row_dot(coef, k, indices, data, start, end)
            out_scores[i, k] = z
            if not math.isfinite(z):
                return t, i
        h = sample_weight[i]
        if h == 0.0:
            continue
        t += 1
        eta = eta0 / math.sqrt(t) if schedule == SCHEDULE_INVSQRT else eta0
        _nag_row(indices, data, start, end, 0, targets[i], h, coef, intercept, fit_intercept, scale, accum,
                 accum_b, norm_state, loss, loss_param, eta, adaptive, invariant, buf, out_scores[i])
    return t, -1


@njit_kernel
def nag_epoch_dense(X, targets, sample_weight, coef, intercept, fit_intercept, scale, accum, accum_b,
                    norm_state, loss, loss_param, eta0, schedule, adaptive, invariant, t, buf, out_scores):
    """``nag_epoch`` over the rows of a C-contiguous dense matrix ``X`` (zeros are skipped; O(d) per row)."""
    n_rows, d = X.shape
    n_out = coef.shape[0]
    data = X.reshape(n_rows * d)
    no_cols = np.empty(0, dtype=np.intp)
    for i in range(n_rows):
        start = i * d
        for k in range(n_out):
            z = intercept[k]
            for j in range(d):
                z += coef[k, j] * data[start + j]
            out_scores[i, k] = z
            if not math.isfinite(z):
                return t, i
        h = sample_weight[i]
        if h == 0.0:
            continue
        t += 1
        eta = eta0 / math.sqrt(t) if schedule == SCHEDULE_INVSQRT else eta0
        _nag_row(no_cols, data, start, start + d, start, targets[i], h, coef, intercept, fit_intercept, scale,
                 accum, accum_b, norm_state, loss, loss_param, eta, adaptive, invariant, buf, out_scores[i])
    return t, -1
