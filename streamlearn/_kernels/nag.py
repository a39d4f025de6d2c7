"""Normalized (adaptive) online gradient descent, one pass over a CSR chunk or over dense rows.

The update of Ross, Mineiro & Langford, "Normalized Online Learning" (UAI 2013), in the variant Vowpal
Wabbit runs by default. Per feature ``j`` the kernel keeps

* ``feat[j, 0]`` = ``s_j``, the largest ``|x_j|`` seen so far (shared by every output);
* ``feat[j, 1 + k]`` = ``G_kj``, the importance-weighted sum of squared gradients ``h (l'(z_k) x_j)^2``
  (adaptive mode only: ``feat`` has ``1 + K`` columns for ``K`` outputs, else one);

side by side in one row per feature, so that a non-zero reads one cache line of state besides its weight
(on a stream over 2^20 features, where the state does not stay in cache, that takes an eighth off a pass
against separate arrays of scales and accumulators);

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
   ``m r x`` for a time ``eta h``, in closed form (squared, hinge, modified Huber) or, for the logistic loss,
   by one series step from a series start (ordinary step sizes) or a safeguarded Halley solve (see
   ``_logistic_flow``), so that a large ``h`` never overshoots the label.

Scaling a column by ``c`` scales ``s_j`` by ``c``, ``G_kj`` by ``c^2`` and the weight by ``1 / c``: scores,
``N`` and every other feature's state are unchanged (up to rounding). Examples with weight 0 are scored
and change nothing. Explicit zeros are skipped. Cost: O(K nnz(x)) per example (see ``nag_epoch``).
"""

import math

import numpy as np

from ._intrinsics import prefetch
from ._numba import njit_inline, njit_kernel_vector
from .linear import _U1, _U2, _U3, _U4, PREFETCH_MIN_WEIGHTS, _all_finite
from .losses import LOSS_HINGE, LOSS_LOGISTIC, LOSS_MODIFIED_HUBER, LOSS_SQUARED, loss_dloss

SCHEDULE_CONSTANT = 0
SCHEDULE_INVSQRT = 1


@njit_inline
def _expm1_small(x):
    """``expm1(x)`` for ``|x| <= 2^-10`` by its Taylor series to ``x^6`` (the rest is below ``x^7 / 5040``,
    under 1e-24 of ``|x|``: exact to rounding)."""
    return x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x * (1.0 / 720.0))))))


@njit_inline
def _expm1_tail(x, x2, x4):
    """``P(x)`` with ``expm1(x) = x + x^2 P(x)`` for ``|x| <= 0.15``, ``x2 = x^2``, ``x4 = x^4``: the Taylor
    series of ``expm1`` to ``x^11`` (the rest is below ``x^12 / 12!``, under 2e-18 of ``|x|``) in Estrin's
    scheme (a few products deep instead of nine: the solve below waits for it)."""
    p01 = 0.5 + x * (1.0 / 6.0)
    p23 = 1.0 / 24.0 + x * (1.0 / 120.0)
    p45 = 1.0 / 720.0 + x * (1.0 / 5040.0)
    p67 = 1.0 / 40320.0 + x * (1.0 / 362880.0)
    p89 = 1.0 / 3628800.0 + x * (1.0 / 39916800.0)
    return (p01 + x2 * p23) + x4 * ((p45 + x2 * p67) + x4 * p89)


@njit_inline
def logistic_flow(m0, ph):
    """Margin increase ``d > 0`` of the logistic gradient flow run for a time ``ph`` from margin ``m0``:
    ``dm/dtau = sigmoid(-m)``, i.e. the root of ``d + exp(m0) expm1(d) = ph`` (``m + e^m`` grows by ``ph``).
    See ``_logistic_flow``."""
    return _logistic_flow(m0, ph, math.exp(-abs(m0)))


@njit_inline
def _logistic_flow(m0, ph, e):
    """``logistic_flow(m0, ph)`` given ``e = exp(-|m0|)`` (the loss derivative has computed it).

    Written ``F(d) = al d + be expm1(d) - c`` with ``(al, be, c) = (exp(-m0), 1, exp(-m0) ph)`` when
    ``m0 >= 0`` (so nothing overflows) and ``(1, exp(m0), ph)`` otherwise: ``F`` is convex and increasing
    with ``F(0) < 0``. With ``t = c / (al + be)`` the first-order step:

    * ``t <= 1/32`` (``SERIES_T``, the common case): the inverse series of ``F`` to ``t^10``, whose coefficients
      are polynomials in ``w = be / (al + be)`` (``_flow_series``): exact to rounding, no division, a few
      products deep once the margin is known;
    * ``t <= 1/8``: start at the inverse series of ``F`` to ``t^4`` (Lagrange; error of
      order ``t^5``, under ``7e-6``), evaluate ``f = F(d)``, ``f1 = F'(d)``, ``f2 = F''(d) = be e^d`` once
      (``expm1`` by its series) and take one step of the inverse series of ``F`` around ``d`` to the third
      order in ``s = f / f1``: the error left is of order ``s^4`` (below ``1e-20``), i.e. rounding;
    * otherwise: start at the root of ``d + w d^2 / 2 = t`` (``w = be / (al + be)``) when ``t <= 1``, else
      at ``t`` or ``log1p(c / be)``, the smaller (all at the right of the root). Then Halley's iteration
      (cubic convergence; a Newton step whenever Halley's is not between 1/2 and 2 times Newton's) until a
      step ``s`` has ``|s|^3 <= 2e-17 d``: the error left is under ``0.42 |s|^3``, i.e. rounding.
      ``Q = be expm1(d)`` is evaluated once by the library (as ``exp(m0 + d) - be`` for ``d >= 1``, never
      overflowing; it is ``c`` itself at ``log1p(c / be)``, to the rounding of ``d``) and then carried along
      the steps: ``Q(d - s) = Q(d) + (be + Q(d)) expm1(-s)``, with ``expm1`` by its series for steps up to
      1/8 and by the library for longer ones.

    Split in two for the kernel: ``_flow_setup`` (what does not depend on ``ph``, known as soon as the
    margin is) and ``_flow_solve``.
    """
    al, be, isl = _flow_setup(m0, e)
    return _flow_solve(m0=m0, ph=ph, al=al, be=be, isl=isl)


#: Below this first-order step ``t`` the logistic flow is the inverse series of its equation (``_flow_series``).
SERIES_T = 1.0 / 32.0


@njit_inline  # (one call site: _flow_solve_ct)
def _series_root(t, w):
    """The root ``d`` of ``t = d + w (e^d - 1 - d)`` for ``t <= SERIES_T``: ``d = t + c_2 t^2 + ... + c_10 t^10``
    (``_flow_series``'s coefficients), in Estrin's scheme in ``t`` and ``w``: a few products deep, no division
    (the kernel waits for it)."""
    c2, c3, c4, c5, c6, c7, c8, c9, c10 = _flow_series(w)
    t2 = t * t
    t4 = t2 * t2
    lo = (c2 + c3 * t) + t2 * (c4 + c5 * t)
    hi = (c6 + c7 * t) + t2 * (c8 + c9 * t)
    return t + t2 * ((lo + t4 * hi) + (t4 * t4) * c10)


@njit_inline
def _flow_series(w):
    """``(c_2, ..., c_10)``, polynomials in ``w = be / (al + be)`` in [0, 1]: the inverse series
    ``d = t + c_2 t^2 + ... + c_10 t^10`` of ``t = F(d) / (al + be) = d + w (e^d - 1 - d)`` (by iterated
    substitution, exact rational coefficients). Every ``|c_k| <= 1 / k`` (reached at ``w = 1``, where ``d`` is
    ``log1p(t)``), so for ``t <= SERIES_T = 1/32`` the terms left out sum to less than ``t^11 / 10``: under
    ``1e-16`` of ``d``, i.e. rounding."""
    c2 = -0.5 * w
    w2 = w * w  # (each polynomial in Estrin's scheme too: a few products deep)
    w4 = w2 * w2
    w8 = w4 * w4
    c3 = w * (-0.16666666666666666 + w * 0.5)
    c4 = w * ((-0.041666666666666664 + w * 0.4166666666666667) + w2 * -0.625)
    c5 = w * ((-0.008333333333333333 + w * 0.20833333333333334) + w2 * (-0.875 + w * 0.875))
    c6 = w * (
        ((-0.001388888888888889 + w * 0.07777777777777778) + w2 * (-0.6805555555555556 + w * 1.75)) + w4 * -1.3125
    )
    c7 = w * (
        ((-0.0001984126984126984 + w * 0.02361111111111111) + w2 * (-0.38055555555555554 + w * 1.875))
        + w4 * (-3.4375 + w * 2.0625)
    )
    c8 = w * (
        ((-2.48015873015873e-05 + w * 0.006101190476190476) + w2 * (-0.16927083333333334 + w * 1.4131944444444444))
        + w4 * ((-4.7265625 + w * 6.703125) + w2 * -3.3515625)
    )
    c9 = w * (
        ((-2.7557319223985893e-06 + w * 0.0013806216931216931) + w2 * (-0.06320271164021164 + w * 0.8349729938271605))
        + w4 * ((-4.510127314814815 + w * 11.296006944444445) + w2 * (-13.033854166666666 + w * 5.5859375))
    )
    c10 = w * (
        (
            (
                (-2.755731922398589e-07 + w * 0.0002788800705467372)
                + w2 * (-0.020479497354497354 + w * 0.4098324514991182)
            )
            + w4 * ((-3.340528549382716 + w * 13.091782407407408) + w2 * (-26.067708333333332 + w * 25.322916666666668))
        )
        + w8 * -9.49609375
    )
    return c2, c3, c4, c5, c6, c7, c8, c9, c10


@njit_inline
def _flow_setup(m0, e):
    """``(al, be, 1 / (al + be))`` of ``_logistic_flow``: ``F``'s coefficients."""
    if m0 >= 0.0:
        al = e
        be = 1.0
    else:
        al = 1.0
        be = e
    return al, be, 1.0 / (al + be)


@njit_inline
def _flow_solve(m0, ph, al, be, isl):
    """The root of ``_logistic_flow`` given ``_flow_setup``'s numbers."""
    c = al * ph
    return _flow_solve_ct(m0=m0, ph=ph, c=c, d=c * isl, al=al, be=be, isl=isl)


def _flow_solve_ct_py(m0, ph, c, d, al, be, isl):
    """``_flow_solve`` given ``c = al ph`` and ``d = c / (al + be)`` too (the kernel computes the three from
    the last sum in parallel). Compiled twice below: as a call, and inlined into ``nag_epoch``'s one-output
    loop."""
    if ph <= 0.0:
        return 0.0
    if d <= SERIES_T:
        return _series_root(d, be * isl)
    if d <= 0.125:  # the series start to t^4 and one third-order correction
        a2 = 0.5 * be * isl
        a3 = a2 / 3.0
        a4 = a2 / 12.0
        b3 = 2.0 * a2 * a2 - a3
        b4 = 5.0 * a2 * (a2 * a2 - a3) + a4
        t2 = d * d
        d -= t2 * ((a2 - d * b3) + t2 * b4)
        x2 = d * d
        bq = (be * x2) * _expm1_tail(d, x2, x2 * x2)  # be expm1(d) = be d + bq
        f = ((al * d - c) + be * d) + bq
        f2 = be + (be * d + bq)
        i1 = 1.0 / (al + f2)
        s = f * i1  # the Newton step; F(d - x) = 0 for x + (r / 2) (-x^2 + x^3 / 3 - ...) = s, r = f2 / f1
        r = f2 * i1
        d = (d - s) - (s * s) * (0.5 * r + s * (r * (0.5 * r - 1.0 / 6.0)))
        return max(0.0, d)
    lbe = 0.0 if m0 >= 0.0 else m0  # log(be)
    d = c / (al + be)
    q = -1.0
    if d > 1.0 and be > 1e-290:  # log1p(c / be), where be expm1(d) = c (to an ulp of d: d's own rounding)
        d1 = math.log1p(c / be)
        if d1 < d:
            d = d1
            q = c
    elif d > 1.0:  # in log form when c / be overflows
        d = min(d, math.log(be + c) - lbe)
    else:  # the root of d + w d^2 / 2 = t (w = be / (al + be)), at the right of F's: e^d - 1 - d >= d^2 / 2
        d = 2.0 * d / (1.0 + math.sqrt(1.0 + 2.0 * (be * isl) * d))
    if q < 0.0:
        q = be * math.expm1(d) if d < 1.0 else math.exp(lbe + d) - be
    for _ in range(60):
        f = al * d + q - c
        f2 = be + q  # F'' = be e^d
        f1 = al + f2
        ff = f * f2
        g = f1 * f1
        step = 2.0 * f * f1 / (2.0 * g - ff) if -2.0 * g < ff < g else f / f1
        d -= step
        a = abs(step)
        if a * a * a <= 2e-17 * d:
            break
        if a <= 0.125:  # Q(d - s) = Q(d) + (be + Q(d)) expm1(-s), expm1 by its series
            x2 = step * step
            q += f2 * (x2 * _expm1_tail(-step, x2, x2 * x2) - step)
        elif d < 1.0:
            q = be * math.expm1(d)
        else:
            q = math.exp(lbe + d) - be
    return max(0.0, d)


#: A call, not inlined, for the general paths: its body would be typed again at every call site.
_flow_solve_ct = njit_kernel_vector(_flow_solve_ct_py)
#: Inlined where the time of an example is the chain from its score to its step (short rows): a call there
#: spills every live register around it (a9a: 2 to 4 % of a pass).
_flow_solve_ct_inline = njit_inline(_flow_solve_ct_py)


@njit_inline
def invariant_step(loss, y, z, dz, H, P):
    """``u`` of the importance-invariant update ``w -= u r x`` (``P = sum_j r_j x_j^2``, ``H = eta h``):
    the total gradient accumulated by the flow ``du/dtau = l'(z - u P)`` over ``[0, H]``. ``dz = l'(z)``."""
    e = math.exp(-abs(y * z)) if loss == LOSS_LOGISTIC else 0.0
    return _invariant_step(loss=loss, y=y, z=z, dz=dz, H=H, P=P, e=e)


@njit_inline
def _dloss(loss, y, z, loss_param):
    """``(l'(z), e)``: the loss derivative, and for the logistic loss ``e = exp(-|y z|)``, the exponential
    that both its derivative and its invariant step need (the derivative is ``loss_dloss``'s, bit for bit)."""
    if loss == LOSS_LOGISTIC:
        m = y * z
        e = math.exp(-abs(m))
        return -y * (e / (1.0 + e) if m > 0.0 else 1.0 / (1.0 + e)), e
    return loss_dloss(loss, y, z, loss_param), 0.0


@njit_kernel_vector  # a call, not inlined by numba: its body would be typed again at every call site
def _invariant_step(loss, y, z, dz, H, P, e):
    """``invariant_step`` given ``e = exp(-|y z|)`` for the logistic loss (see ``_dloss``)."""
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
        return -y * _logistic_flow(y * z, P * H, e) * (1.0 / P)
    if loss == LOSS_MODIFIED_HUBER:
        return -y * _modified_huber_flow(y * z, P * H) / P
    return H * dz


@njit_inline
def _modified_huber_flow(m0, ph):
    """Margin increase of the modified Huber gradient flow run for a time ``ph`` from margin ``m0``:
    ``dm/dtau = 4`` below -1 (the linear part), then ``1 - m`` decays like ``exp(-2 tau)`` (the squared part),
    never passing 1."""
    if m0 >= 1.0:
        return 0.0
    if m0 < -1.0:
        linear = -1.0 - m0  # the margin gained at slope 4 before the squared part starts
        if 4.0 * ph <= linear:
            return 4.0 * ph
        return linear + 2.0 * -math.expm1(-2.0 * (ph - 0.25 * linear))
    return (1.0 - m0) * -math.expm1(-2.0 * ph)


@njit_inline
def _modified_huber_gain_per_p(m0, P, H):
    """``_modified_huber_flow(m0, P H) / P`` for ``P > 0``: the one-output kernel's invariant step of the modified
    Huber loss. In the squared part (``m0 >= -1``) with ``x = 2 P H <= 0.15``, where nearly every step is, it is
    ``(1 - m0) 2 H D(x)`` with ``D(x) = -expm1(-x) / x = 1 - x P(-x)`` (``P`` of ``_expm1_tail``, exact to
    rounding): no library call and no division between the score and the step."""
    x = 2.0 * (P * H)
    if m0 >= -1.0 and x <= 0.15:
        x2 = x * x
        return (1.0 - m0) * (2.0 * H) * (1.0 - x * _expm1_tail(-x, x2, x2 * x2))
    return _modified_huber_flow(m0, P * H) / P


@njit_inline
def _rate_dot(rate, data, start, m):
    """``sum_q rate[q] data[start + q]`` over ``q < m`` in four partial sums (as ``csr_row_dot``: a chain of
    additions a quarter as long)."""
    p0 = 0.0
    p1 = 0.0
    p2 = 0.0
    p3 = 0.0
    q = np.uintp(0)
    while q + _U3 < m:
        p0 += rate[q] * data[start + q]
        p1 += rate[q + _U1] * data[start + q + _U1]
        p2 += rate[q + _U2] * data[start + q + _U2]
        p3 += rate[q + _U3] * data[start + q + _U3]
        q += _U4
    while q < m:
        p0 += rate[q] * data[start + q]
        q += _U1
    return (p0 + p1) + (p2 + p3)


@njit_inline
def _gather(coef, feat, scratch, q, j, x):
    """Non-zero ``q`` (column ``j``, value ``x``) of ``nag_epoch``'s one-output sweep: ``s_j`` into
    ``scratch[0, q]`` and the last column of ``feat`` (``G_j``; ``s_j`` again in plain mode, unused there, so that
    the sweep has no branch) into ``scratch[1, q]``, the new scale ``max(s_j, |x|)`` into ``feat``
    (unconditionally: a branch on new features, unpredictable on sparse streams, costs more than the store);
    returns ``w_j x``."""
    wx = coef[0, j] * x
    s0 = feat[j, 0]
    scratch[0, q] = s0
    a = abs(x)
    feat[j, 0] = a if a > s0 else s0
    scratch[1, q] = feat[j, np.uintp(feat.shape[1] - 1)]
    return wx


@njit_inline
def _normaliser(norm_state, h, nrm, adaptive):
    """``T += h``, ``N += h nrm`` (an example's weight and normalised norm) and the global factor of its step:
    ``sqrt(T / N)`` (adaptive) or ``T / N``; 1 for an empty row (``nrm <= 0``: nothing to learn, N unchanged)."""
    norm_state[0] += h
    if nrm <= 0.0:
        return 1.0
    norm_state[1] += h * nrm
    ratio = norm_state[0] / norm_state[1]
    return math.sqrt(ratio) if adaptive else ratio


_MAX_FLOAT = np.finfo(np.float64).max


@njit_kernel_vector
def nag_epoch(
    indptr,
    indices,
    data,
    targets,
    sample_weight,
    coef,
    intercept,
    fit_intercept,
    feat,
    accum_b,
    norm_state,
    loss,
    loss_param,
    eta0,
    schedule,
    adaptive,
    invariant,
    t,
    out_scores,
    row_local=False,
):
    """One pass over the rows of a CSR matrix in storage order (see the module docstring).

    ``t`` counts the examples with weight > 0 (``eta = eta0 / sqrt(t)`` with ``SCHEDULE_INVSQRT``). Returns
    ``(t, bad_row)``: -1, or the first row whose score is not finite, or (one output) whose squared gradients
    overflow an accumulator, or (plain rates) whose rate ``x_j / s_j^2`` overflows (a scale ``s_j`` under
    5.6e-309, where the scale-free weight ``~ 1 / s_j`` is beyond the float range); the pass stops there, before
    that row's update, and earlier updates are kept.
    Scratch space (three arrays of the longest row's length) is allocated once per call.

    Row ``i`` holds ``data[p]`` for ``indptr[i] <= p < indptr[i + 1]``, in column ``indices[p]``, or
    ``indices[p - indptr[i]]`` with ``row_local``: a C-contiguous dense matrix ``X`` (n, d) is passed as
    ``indptr = arange(n + 1) * d``, ``indices = arange(d)``, ``data = X.ravel()`` (zeros are skipped).

    How it is fast: the example is written out in this one loop (numba adds an atomic reference count
    increment and decrement for the arrays handed to a row helper, once per example, and on short rows those
    cost more than the arithmetic); sums over a row use four partial sums (as ``csr_row_dot``). With one
    output (and weight > 0) the scattered state is swept twice: the score's sweep also gathers ``s_j`` and
    ``G_j`` into contiguous scratch arrays and stores the new scales (unconditionally: a branch on new
    features, unpredictable on sparse streams, costs more than the store), and the step's sweep adds to the
    weights and writes ``G_j`` back. Between them one loop over the scratch arrays, which LLVM vectorises,
    makes the rates ``x_j / (s_j sqrt(G_j))`` (the square roots and divisions) and counts the features at,
    above and below their scale (only counts them when the loss derivative is 0: no step, so no rates; with
    the modified Huber loss that is 40 % of a9a's examples); rescaling weights and the norm of the features below their scale take a
    sweep of their own only in the rows that need them (none once a binary feature has been seen). On short
    rows the time is the chain of dependent operations from the score to the next example's score (the loss
    derivative, the rates, the invariant solve): what does not depend on it is computed beside it
    (``_flow_setup``, ``y / pp``). Several outputs take the general loop (score, scales, rates, step).
    """
    n_rows = indptr.shape[0] - 1
    n_out = coef.shape[0]
    # the threshold counts every per-feature number read (weights, scales, accumulators): 2^18 features
    # make 6 MB of state in adaptive mode, and prefetching them takes a third off the time of a pass (one
    # line of feat per feature: its row holds the scale and the accumulators)
    per_feature = n_out * (2 if adaptive else 1) + 1
    use_prefetch = not row_local and per_feature * coef.shape[1] >= PREFETCH_MIN_WEIGHTS
    longest = 0
    for i in range(n_rows):
        longest = max(longest, indptr[i + 1] - indptr[i])
    rate = np.empty(longest)  # per non-zero of the row: r_j x_j,
    scratch = np.empty((2, longest))
    dzs = np.empty(n_out)  # several outputs: each one's loss derivative and (logistic) exp(-|y z|)
    es = np.empty(n_out)
    sca = scratch[0]  # s_j (after this example's rescaling)
    gsq = scratch[1]  # and G_j (after this example's update)
    c0 = 1.0 if fit_intercept else 0.0
    for i in range(n_rows):
        start = np.uintp(indptr[i])
        end = np.uintp(indptr[i + 1])
        m = end - start
        base = start if row_local else np.uintp(0)
        if use_prefetch and i + 1 < n_rows and n_out == 1:  # the next example's weights, scales, accumulators
            for p in range(end, np.uintp(indptr[i + 2])):
                j = np.uintp(indices[p])
                prefetch(feat, j, 0)
                prefetch(coef, 0, j)
        elif use_prefetch and i + 1 < n_rows:
            for p in range(end, np.uintp(indptr[i + 2])):
                j = np.uintp(indices[p])
                prefetch(feat, j, 0)
                for k in range(n_out):
                    prefetch(coef, k, j)
        h = sample_weight[i]
        if n_out == 1 and h != 0.0:  # (an example of weight 0 is only scored, below)
            # one output: the score's sweep also gathers s_j and G_j into the scratch arrays and stores the
            # new scales; one vectorised sweep over the scratch arrays makes the rates; the step's sweep
            # writes G_j back
            z0 = 0.0
            z1 = 0.0
            z2 = 0.0
            z3 = 0.0
            p = start
            q = np.uintp(0)
            while p + _U3 < end:
                z0 += _gather(coef, feat, scratch, q, np.uintp(indices[p - base]), data[p])
                z1 += _gather(coef, feat, scratch, q + _U1, np.uintp(indices[p + _U1 - base]), data[p + _U1])
                z2 += _gather(coef, feat, scratch, q + _U2, np.uintp(indices[p + _U2 - base]), data[p + _U2])
                z3 += _gather(coef, feat, scratch, q + _U3, np.uintp(indices[p + _U3 - base]), data[p + _U3])
                p += _U4
                q += _U4
            while p < end:
                z0 += _gather(coef, feat, scratch, q, np.uintp(indices[p - base]), data[p])
                p += _U1
                q += _U1
            z = intercept[0] + ((z0 + z1) + (z2 + z3))
            out_scores[i, 0] = z
            if not math.isfinite(z):  # the row is not learnt: its scales are put back
                for q in range(m):
                    feat[np.uintp(indices[start + q - base]), 0] = sca[q]
                return t, i
            t += 1
            eta = eta0 / math.sqrt(t) if schedule == SCHEDULE_INVSQRT else eta0
            y = targets[i, 0]
            dz, e = _dloss(loss, y, z, loss_param)
            gg = h * dz * dz
            al = be = isl = 0.0
            if invariant and loss == LOSS_LOGISTIC:  # the solve's coefficients, off its critical path
                al, be, isl = _flow_setup(y * z, e)
            # 2. (vectorised) with the new scales s_j = max(s_j, |x_j|): how many weights must be rescaled,
            # how many features are at their scale (|x_j / s_j| = 1: no division for the norm) or below it,
            # and the rates r_j x_j after G_j += h (l' x_j)^2: x_j / (s_j sqrt(G_j)) (adaptive; G_j > 0
            # implies s_j > 0) or x_j / s_j^2
            resc = 0
            n_unit = 0
            below = 0
            n_over = 0  # accumulators that would overflow: their rates would freeze at 0
            if dz == 0.0:
                for q in range(m):
                    ax = abs(data[start + q])
                    s0 = sca[q]
                    resc += (ax > s0) & (s0 > 0.0)
                    n_unit += (ax >= s0) & (ax > 0.0)
                    below += (ax < s0) & (ax > 0.0)
            else:
                for q in range(m):
                    x = data[start + q]
                    ax = abs(x)
                    s0 = sca[q]
                    s = ax if ax > s0 else s0
                    resc += (ax > s0) & (s0 > 0.0)
                    # at the new scale: order tests on s0 (not == s) let LLVM vectorise the tail of short rows
                    n_unit += (ax >= s0) & (ax > 0.0)
                    below += (ax < s0) & (ax > 0.0)
                    if adaptive:
                        g2 = gsq[q] + gg * x * x
                        gsq[q] = g2
                        n_over += g2 > _MAX_FLOAT
                        rate[q] = x / (s * math.sqrt(g2)) if g2 > 0.0 else 0.0
                    else:  # x_j / s_j / s_j: s_j^2 underflows for s_j under 1.5e-154 (x_j / 0, an infinite weight)
                        rate[q] = x / s / s if s > 0.0 else 0.0
            if not adaptive and dz != 0.0 and not _all_finite(rate[:m]):
                n_over = 1  # x_j / s_j^2 overflows for a scale s_j under 5.6e-309
            if n_over > 0 or not math.isfinite(
                gg
            ):  # the row is not learnt: its scales are put back, nothing else was written
                for q in range(m):
                    feat[np.uintp(indices[start + q - base]), 0] = sca[q]
                return t - 1, i
            if resc > 0:  # scales that grew: the weights were learnt at the old ones
                for q in range(m):
                    ax = abs(data[start + q])
                    s0 = sca[q]
                    if ax > s0 and s0 > 0.0:
                        r = s0 / ax
                        coef[0, np.uintp(indices[start + q - base])] *= r if adaptive else r * r
            rest = 0.0
            if below > 0:  # the normalised norm of the features below their scale, in row order
                for q in range(m):
                    x = data[start + q]
                    if x != 0.0 and abs(x) < sca[q]:
                        xs = x / sca[q]
                        rest += xs * xs
            nrm = (c0 + n_unit) + rest
            mult = _normaliser(norm_state, h, nrm, adaptive)
            if nrm <= 0.0:  # an empty row and no intercept: nothing to learn
                continue
            if dz == 0.0:
                continue
            if adaptive:
                rb = 0.0
                if fit_intercept:
                    gb = accum_b[0] + gg
                    accum_b[0] = gb
                    if gb > 0.0:
                        rb = 1.0 / math.sqrt(gb)
            else:
                rb = c0
            # 3. the step: plain, or importance-invariant along m r x (P = m sum_j r_j x_j^2)
            if invariant:
                if adaptive:
                    pp = rb + _rate_dot(rate, data, start, m)
                else:
                    pp = nrm
                P = pp * mult
                if loss == LOSS_LOGISTIC and P > 0.0:
                    # as _invariant_step, the solve's inputs each one product away from P's sum, and the step
                    # -u m = y d m / P = y d / pp with y / pp taken while the solve runs
                    k = mult * (eta * h)
                    ka = k * al
                    ypp = y / pp
                    if k <= 1e300:
                        d = _flow_solve_ct_inline(
                            m0=y * z,
                            ph=pp * k,
                            c=pp * ka,
                            d=pp * (ka * isl),
                            al=al,
                            be=be,
                            isl=isl,
                        )
                    else:  # (huge steps: P first, as in _invariant_step, so that no product overflows early)
                        d = _flow_solve(m0=y * z, ph=P * (eta * h), al=al, be=be, isl=isl)
                    step = ypp * d
                elif loss == LOSS_MODIFIED_HUBER and P > 0.0:  # (as _invariant_step, without the call)
                    step = y * _modified_huber_gain_per_p(y * z, P, eta * h) * mult
                else:
                    step = -_invariant_step(loss=loss, y=y, z=z, dz=dz, H=eta * h, P=P, e=e) * mult
            else:
                step = -(eta * h * dz) * mult
            if step != 0.0:
                if adaptive:
                    for q in range(m):
                        j = np.uintp(indices[start + q - base])
                        coef[0, j] += step * rate[q]
                        feat[j, 1] = gsq[q]
                else:
                    for q in range(m):
                        coef[0, np.uintp(indices[start + q - base])] += step * rate[q]
                intercept[0] += step * rb
            elif adaptive:
                for q in range(m):
                    feat[np.uintp(indices[start + q - base]), 1] = gsq[q]
            continue
        # 1. scores, with the weights before any rescaling
        for k in range(n_out):
            z0 = 0.0
            z1 = 0.0
            z2 = 0.0
            z3 = 0.0
            p = start
            while p + _U3 < end:
                z0 += coef[k, np.uintp(indices[p - base])] * data[p]
                z1 += coef[k, np.uintp(indices[p + _U1 - base])] * data[p + _U1]
                z2 += coef[k, np.uintp(indices[p + _U2 - base])] * data[p + _U2]
                z3 += coef[k, np.uintp(indices[p + _U3 - base])] * data[p + _U3]
                p += _U4
            while p < end:
                z0 += coef[k, np.uintp(indices[p - base])] * data[p]
                p += _U1
            z = intercept[k] + ((z0 + z1) + (z2 + z3))
            out_scores[i, k] = z
            if not math.isfinite(z):
                return t, i
        if h == 0.0:  # an example of weight 0 is only scored
            continue
        t += 1
        if not adaptive:
            # a plain rate x_j / s_j^2 (below) overflows for a new scale s_j under 5.6e-309: the example is
            # refused before its scales are written
            n_over = 0
            for q in range(m):
                x = data[start + q]
                ax = abs(x)
                s = max(feat[np.uintp(indices[start + q - base]), 0], ax)
                n_over += (s > 0.0) & (ax / s / s > _MAX_FLOAT)
            if n_over > 0:
                return t - 1, i
        for k in range(n_out):  # a squared loss derivative beyond the float range: refused, as with one output
            dz, e = _dloss(loss, targets[i, k], out_scores[i, k], loss_param)
            if not math.isfinite(h * dz * dz):
                return t - 1, i
            dzs[k] = dz
            es[k] = e
        eta = eta0 / math.sqrt(t) if schedule == SCHEDULE_INVSQRT else eta0
        # 2. scales (rescaling the weights of the features that exceed theirs), the normalised norm, and
        # with one output the gather of s_j and of G_j += h (l' x_j)^2 for the rates (x = 0 changes nothing)
        fused = adaptive and n_out == 1
        gg0 = h * dzs[0] * dzs[0]
        n_unit = 0  # features at their scale, |x_j / s_j| = 1 (binary and one-hot ones: no division)
        rest = 0.0
        for q in range(m):
            x = data[start + q]
            j = np.uintp(indices[start + q - base])
            s = feat[j, 0]
            if x != 0.0:
                ax = abs(x)
                if ax >= s:
                    if ax > s:  # a new scale: the weights were learnt at the old one
                        if s > 0.0:
                            r = s / ax
                            if not adaptive:
                                r = r * r
                            for k in range(n_out):
                                coef[k, j] *= r
                        feat[j, 0] = ax
                        s = ax
                    n_unit += 1
                else:
                    xs = x / s
                    rest += xs * xs
            sca[q] = s
            if fused:
                g2 = feat[j, 1] + gg0 * x * x
                feat[j, 1] = g2
                gsq[q] = g2
        nrm = (c0 + n_unit) + rest
        mult = _normaliser(norm_state, h, nrm, adaptive)
        if nrm <= 0.0:  # an empty row and no intercept: nothing to learn
            continue
        for k in range(n_out):
            y = targets[i, k]
            z = out_scores[i, k]
            dz = dzs[k]
            e = es[k]
            if dz == 0.0:
                continue
            # 3. rates r_j x_j: x_j / s_j^2 (plain), x_j / (s_j sqrt(G_j)) after G_j += h (l' x_j)^2 (adaptive)
            if adaptive:
                gg = h * dz * dz
                rb = 0.0
                if fit_intercept:
                    gb = accum_b[k] + gg
                    accum_b[k] = gb
                    if gb > 0.0:
                        rb = 1.0 / math.sqrt(gb)
                if not fused:
                    for q in range(m):
                        x = data[start + q]
                        j = np.uintp(indices[start + q - base])
                        g2 = feat[j, 1 + k] + gg * x * x
                        feat[j, 1 + k] = g2
                        gsq[q] = g2
                for q in range(m):  # vectorised; G_j > 0 implies s_j > 0
                    g2 = gsq[q]
                    rate[q] = data[start + q] / (sca[q] * math.sqrt(g2)) if g2 > 0.0 else 0.0
            else:
                rb = c0
                for q in range(m):  # vectorised; s_j = 0 only where x_j = 0
                    s = sca[q]
                    rate[q] = data[start + q] / s / s if s > 0.0 else 0.0  # (s_j^2 may underflow)
            # 4. the step: plain, or importance-invariant along m r x (P = m sum_j r_j x_j^2)
            if invariant:
                if adaptive:
                    pp = rb + _rate_dot(rate, data, start, m)
                else:
                    pp = nrm  # r_j = 1 / s_j^2: P is the normalised norm itself
                u = _invariant_step(loss=loss, y=y, z=z, dz=dz, H=eta * h, P=pp * mult, e=e)
            else:
                u = eta * h * dz
            step = -u * mult
            if step != 0.0:
                for q in range(m):
                    coef[k, np.uintp(indices[start + q - base])] += step * rate[q]
                intercept[k] += step * rb
    return t, -1
