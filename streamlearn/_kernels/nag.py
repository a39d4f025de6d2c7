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

from ._intrinsics import prefetch
from ._numba import njit_inline, njit_kernel
from .linear import PREFETCH_MIN_WEIGHTS, csr_row_dot
from .losses import LOSS_HINGE, LOSS_LOGISTIC, LOSS_SQUARED, loss_dloss

SCHEDULE_CONSTANT = 0
SCHEDULE_INVSQRT = 1


@njit_inline
def logistic_flow(m0, ph):
    """Margin increase ``d > 0`` of the logistic gradient flow run for a time ``ph`` from margin ``m0``:
    ``dm/dtau = sigmoid(-m)``, i.e. the root of ``d + exp(m0) expm1(d) = ph`` (``m + e^m`` grows by ``ph``).

    Newton from the right of the root: the first-order step ``ph sigmoid(-m0)`` is there (the flow slows
    down as the margin grows), and so is ``log1p(ph exp(-m0))``, the smaller of the two for large steps. The
    function is convex and increasing, so the iterates fall monotonically onto the root, and the error after
    a step is at most half the square of that step: a step below 1e-8 of ``d`` leaves ~1e-16. The equation
    is divided by ``exp(m0)`` when ``m0 >= 0`` so nothing overflows.
    """
    if ph <= 0.0:
        return 0.0
    if m0 >= 0.0:
        a = math.exp(-m0)  # solve a d + expm1(d) = a ph
        d = ph * a / (1.0 + a)
        if d > 1.0:
            d = min(d, math.log1p(a * ph))
        for _ in range(60):
            e = math.expm1(d)
            step = (a * d + e - a * ph) / (a + e + 1.0)
            d -= step
            if step <= 1e-8 * d:
                break
    else:
        b = math.exp(m0)  # solve d + b expm1(d) = ph
        d = ph / (1.0 + b)
        if d > 1.0:  # log1p(ph / b), in log form when ph / b overflows
            d = min(d, math.log1p(ph / b) if b > 1e-290 else math.log(b + ph) - m0)
        for _ in range(60):
            be = b * math.expm1(d) if d < 1.0 else math.exp(m0 + d) - b  # b expm1(d), never overflowing
            step = (d + be - ph) / (1.0 + b + be)
            d -= step
            if step <= 1e-8 * d:
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
def _nag_row(
    cols,
    data,
    start,
    end,
    offset,
    targets_i,
    h,
    coef,
    intercept,
    fit_intercept,
    scale,
    accum,
    accum_b,
    norm_state,
    loss,
    loss_param,
    eta,
    adaptive,
    invariant,
    buf,
    scores_i,
):
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


@njit_inline
def _nag_row_single(
    indices,
    data,
    start,
    end,
    y,
    h,
    coef,
    intercept,
    fit_intercept,
    scale,
    accum,
    accum_b,
    norm_state,
    loss,
    loss_param,
    eta,
    adaptive,
    invariant,
    buf,
):
    """Score and learn one CSR row for a single output, fused: the score sweep also tracks the scales and
    the normalised norm; the rates (times x) are computed in one sweep and applied in the next, or in the
    same sweep when the step does not depend on them. Returns the pre-update score. The arithmetic of
    ``_nag_row`` but for the order of the score's sum."""
    z = 0.0
    nrm = 1.0 if fit_intercept else 0.0
    for p in range(np.uintp(start), np.uintp(end)):
        x = data[p]
        j = np.uintp(indices[p])
        w = coef[0, j]
        z += w * x
        if h != 0.0 and x != 0.0:  # (an example of weight 0 is only scored)
            ax = abs(x)
            s = scale[j]
            if ax >= s:  # |x_j / s_j| = 1 (binary and one-hot features: no division)
                if ax > s:  # a new scale: the weight was learnt at the old one
                    if s > 0.0:
                        r = s / ax
                        coef[0, j] = w * (r if adaptive else r * r)
                    scale[j] = ax
                nrm += 1.0
            else:
                q = x / s
                nrm += q * q
    z += intercept[0]
    if not math.isfinite(z) or h == 0.0:
        return z
    norm_state[0] += h
    if nrm <= 0.0:
        return z
    norm_state[1] += h * nrm
    ratio = norm_state[0] / norm_state[1]
    mult = math.sqrt(ratio) if adaptive else ratio
    dz = loss_dloss(loss, y, z, loss_param)
    if dz == 0.0:
        return z
    gg = h * dz * dz
    if not adaptive:
        step = -eta * h * dz * mult
        for p in range(np.uintp(start), np.uintp(end)):
            x = data[p]
            if x != 0.0:
                j = np.uintp(indices[p])
                s = scale[j]
                coef[0, j] += step * x / (s * s)
        if fit_intercept:
            intercept[0] += step
        return z
    rb = 0.0
    if fit_intercept:
        gb = accum_b[0] + gg
        accum_b[0] = gb
        if gb > 0.0:
            rb = 1.0 / math.sqrt(gb)
    if not invariant:
        step = -eta * h * dz * mult
        for p in range(np.uintp(start), np.uintp(end)):
            x = data[p]
            if x != 0.0:
                j = np.uintp(indices[p])
                g2 = accum[0, j] + gg * x * x
                accum[0, j] = g2
                if g2 > 0.0:
                    coef[0, j] += step * x / (scale[j] * math.sqrt(g2))
        intercept[0] += step * rb
        return z
    pp = rb
    q = 0
    for p in range(np.uintp(start), np.uintp(end)):
        x = data[p]
        rx = 0.0
        if x != 0.0:
            j = np.uintp(indices[p])
            g2 = accum[0, j] + gg * x * x
            accum[0, j] = g2
            if g2 > 0.0:
                rx = x / (scale[j] * math.sqrt(g2))
        buf[q] = rx
        pp += rx * x
        q += 1
    pp *= mult
    step = -invariant_step(loss, y, z, dz, eta * h, pp) * mult
    if step != 0.0:
        q = 0
        for p in range(np.uintp(start), np.uintp(end)):
            coef[0, np.uintp(indices[p])] += step * buf[q]
            q += 1
        intercept[0] += step * rb
    return z


@njit_kernel
def nag_epoch(
    indptr,
    indices,
    data,
    targets,
    sample_weight,
    coef,
    intercept,
    fit_intercept,
    scale,
    accum,
    accum_b,
    norm_state,
    loss,
    loss_param,
    eta0,
    schedule,
    adaptive,
    invariant,
    t,
    buf,
    out_scores,
):
    """One pass over the rows of a CSR matrix in storage order (see the module docstring).

    ``buf`` is scratch space of at least the largest row's nnz. ``t`` counts the examples with weight > 0
    (``eta = eta0 / sqrt(t)`` with ``SCHEDULE_INVSQRT``). Returns ``(t, bad_row)``: -1, or the first row whose
    score is not finite (the pass stops there; earlier updates are kept).
    """
    n_rows = indptr.shape[0] - 1
    n_out = coef.shape[0]
    if n_out == 1:
        use_prefetch = coef.shape[1] >= PREFETCH_MIN_WEIGHTS
        scale2 = scale.reshape((1, scale.shape[0]))
        for i in range(n_rows):
            start = indptr[i]
            end = indptr[i + 1]
            if use_prefetch and i + 1 < n_rows:  # the next example's weights, scales and accumulators
                for p in range(np.uintp(end), np.uintp(indptr[i + 2])):
                    j = np.uintp(indices[p])
                    prefetch(coef, 0, j)
                    prefetch(scale2, 0, j)
                    if adaptive:
                        prefetch(accum, 0, j)
            h = sample_weight[i]
            eta = eta0
            if h != 0.0:
                t += 1
                if schedule == SCHEDULE_INVSQRT:
                    eta = eta0 / math.sqrt(t)
            z = _nag_row_single(
                indices,
                data,
                start,
                end,
                targets[i, 0],
                h,
                coef,
                intercept,
                fit_intercept,
                scale,
                accum,
                accum_b,
                norm_state,
                loss,
                loss_param,
                eta,
                adaptive,
                invariant,
                buf,
            )
            out_scores[i, 0] = z
            if not math.isfinite(z):
                return t, i
        return t, -1
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
        _nag_row(
            indices,
            data,
            start,
            end,
            0,
            targets[i],
            h,
            coef,
            intercept,
            fit_intercept,
            scale,
            accum,
            accum_b,
            norm_state,
            loss,
            loss_param,
            eta,
            adaptive,
            invariant,
            buf,
            out_scores[i],
        )
    return t, -1


@njit_kernel
def nag_epoch_dense(
    X,
    targets,
    sample_weight,
    coef,
    intercept,
    fit_intercept,
    scale,
    accum,
    accum_b,
    norm_state,
    loss,
    loss_param,
    eta0,
    schedule,
    adaptive,
    invariant,
    t,
    buf,
    out_scores,
):
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
        _nag_row(
            no_cols,
            data,
            start,
            start + d,
            start,
            targets[i],
            h,
            coef,
            intercept,
            fit_intercept,
            scale,
            accum,
            accum_b,
            norm_state,
            loss,
            loss_param,
            eta,
            adaptive,
            invariant,
            buf,
            out_scores[i],
        )
    return t, -1
