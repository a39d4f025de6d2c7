"""Second-order margin learners: Confidence-Weighted (CW), AROW and SCW-I/II, one pass over a CSR chunk.

The weight vector is a Gaussian ``N(mu, Sigma)``; ``mu`` is stored as ``coef`` (K, d) and the intercept as
``intercept`` (K,). The intercept is the mean weight of a constant feature of value ``bias_value`` (1, or
0 for no intercept), with its own variance entry. Every rule (Algorithms §2.4-2.6) has the same shape::

    m = y (mu . x + b)      v = x^T Sigma x  (including the bias feature)
    (alpha, c) = step(rule, m, v)           # 0, 0 when passive
    mu <- mu + alpha y Sigma x
    Sigma^{-1} <- Sigma^{-1} + c x x^T

and the covariance update is applied either exactly (full matrix: by Sherman-Morrison,
``Sigma <- Sigma - beta (Sigma x)(Sigma x)^T`` with ``beta = c / (1 + c v)``) or to the diagonal only
(``Sigma_jj <- 1 / (1 / Sigma_jj + c x_j^2)``, the "project" form). Rules and their (alpha, c):

* ``RULE_CW`` (exact / stdev CW, Crammer, Dredze, Pereira NIPS 2008): with ``psi = 1 + phi^2 / 2``,
  ``zeta = 1 + phi^2``, update iff ``phi sqrt(v) > m``;
  ``alpha = max(0, (-m psi + sqrt(m^2 phi^4 / 4 + v phi^2 zeta)) / (v zeta))``,
  ``u = (-alpha v phi + sqrt(alpha^2 v^2 phi^2 + 4 v))^2 / 4``, ``c = alpha phi / sqrt(u)`` (``sqrt(u)``
  evaluated in a cancellation-free form).
* ``RULE_CW_VARIANCE`` (Dredze, Crammer, Pereira ICML 2008): update iff ``m <= phi v``;
  ``alpha = max(0, (-(1 + 2 phi m) + sqrt((1 + 2 phi m)^2 - 8 phi (m - phi v))) / (4 phi v))``,
  ``c = 2 alpha phi``.
* ``RULE_AROW`` (Crammer, Kulesza, Dredze NIPS 2009): ``l = max(0, 1 - m)``; if ``l > 0``:
  ``alpha = l / (v + r)``, ``c = 1 / r``.
* ``RULE_SCW1`` / ``RULE_SCW2`` (Wang, Zhao, Hoi ICML 2012): update iff ``phi sqrt(v) > m``; SCW-I clips the
  CW alpha at ``C``; SCW-II uses ``n = v + 1 / (2C)``,
  ``gamma = phi sqrt(phi^2 m^2 v^2 + 4 n v (n + v phi^2))`` (not LIBOL's ``v*2``/``phi*2`` typo),
  ``alpha = max(0, (-(2 m n + phi^2 m v) + gamma) / (2 (n^2 + n v phi^2)))``; then ``u`` and ``c`` as CW.

``phi = Phi^{-1}(eta)`` (the normal quantile) is computed by the caller. A sample weight ``s`` multiplies
both ``alpha`` and ``c`` (weight 0: the example is scored and skipped). Examples with ``v <= 1e-12`` are
skipped (nothing to learn from x = 0). Pre-update scores go to ``out_scores`` (n, K).
Cost per example and output: diagonal O(nnz(x)); full O(d nnz(x) + d^2).
"""

import math

import numpy as np

from ._numba import njit_inline, njit_kernel
from .linear import averaged_score, averaging, csr_row_dot, record_score, weighted_row

RULE_CW = 0
RULE_CW_VARIANCE = 1
RULE_AROW = 2
RULE_SCW1 = 3
RULE_SCW2 = 4

#: rounds with ``x^T Sigma x`` at or below this are skipped
V_MIN = 1e-12


@njit_inline
def _cw_sqrt_u(alpha, v, phi):
    """``sqrt(u)`` for ``u = (-a + sqrt(a^2 + 4 v))^2 / 4``, ``a = alpha v phi``, written without the
    cancellation of ``sqrt(a^2 + 4v) - a`` (which rounds to 0 when ``a^2 >> v``):
    ``sqrt(u) = 2 v / (sqrt(a^2 + 4 v) + a)``."""
    a = alpha * v * phi
    return 2.0 * v / (math.sqrt(a * a + 4.0 * v) + a)


@njit_inline
def cw_step(rule, m, v, phi, C, r):
    """``(alpha, c)`` of one update for margin ``m = y score`` and confidence ``v = x^T Sigma x > 0``."""
    if rule == RULE_AROW:
        loss = 1.0 - m
        if loss <= 0.0:
            return 0.0, 0.0
        return loss / (v + r), 1.0 / r
    if rule == RULE_CW_VARIANCE:
        if m > phi * v:
            return 0.0, 0.0
        b = 1.0 + 2.0 * phi * m
        disc = b * b - 8.0 * phi * (m - phi * v)
        alpha = max(0.0, (-b + math.sqrt(max(disc, 0.0))) / (4.0 * phi * v))
        return alpha, 2.0 * alpha * phi
    # CW (exact), SCW-I, SCW-II: hinge on the confidence constraint
    if phi * math.sqrt(v) - m <= 0.0:
        return 0.0, 0.0
    phi2 = phi * phi
    if rule == RULE_SCW2:
        n = v + 0.5 / C
        gamma = phi * math.sqrt(phi2 * m * m * v * v + 4.0 * n * v * (n + v * phi2))
        alpha = max(0.0, (-(2.0 * m * n + phi2 * m * v) + gamma) / (2.0 * (n * n + n * v * phi2)))
    else:
        psi = 1.0 + 0.5 * phi2
        zeta = 1.0 + phi2
        alpha = max(0.0, (-m * psi + math.sqrt(m * m * phi2 * phi2 * 0.25 + v * phi2 * zeta)) / (v * zeta))
        if rule == RULE_SCW1:
            alpha = min(C, alpha)
    if alpha == 0.0:
        return 0.0, 0.0
    su = _cw_sqrt_u(alpha, v, phi)
    if not su > 0.0:  # alpha v overflowed (inputs near the learners' bound): a step beyond any float
        return math.inf, math.inf
    return alpha, alpha * phi / su


@njit_inline
def cw_weighted_step(rule, y, z, v, s, phi, C, r):
    """``(update, alpha s y, c s)``: the step of :func:`cw_step` for an example of label ``y``, score ``z``, confidence
    ``v`` and sample weight ``s``; ``update`` is False when there is none (``v <= V_MIN``, or ``cw_step`` gives
    ``(0, 0)``)."""
    if v <= V_MIN:
        return False, 0.0, 0.0
    alpha, c = cw_step(rule, y * z, v, phi, C, r)
    if alpha == 0.0 and c == 0.0:
        return False, 0.0, 0.0
    return True, alpha * s * y, c * s


@njit_kernel
def cw_epoch(
    indptr,
    indices,
    data,
    targets,
    sample_weight,
    coef,
    intercept,
    sigma,
    bias_value,
    rule,
    phi,
    C,
    r,
    t,
    out_scores,
    avg_sum=None,
    avg_sum_intercept=None,
    sigma_b=None,
):
    """One pass with a full covariance ``sigma`` (K, d + 1, d + 1) or a diagonal one, ``sigma`` (K, d) and
    ``sigma_b`` (K,) for the bias feature.

    A full ``sigma`` must be symmetric (``Sigma x`` is read from its rows); its index d is the bias feature. Each
    form compiles its own code (numba drops the branches of the other: ``sigma.ndim`` is a constant of the
    compiled specialisation). Returns ``(t, bad_row)`` as :func:`streamlearn._kernels.linear.linear_epoch`;
    ``avg_sum`` and ``avg_sum_intercept`` (optional) collect ``(t - 1)`` times each move of the mean, as there
    (averaging: the scores are then the averaged means'; arrays with no rows: no averaging).
    """
    n_rows = indptr.shape[0] - 1
    n_out = coef.shape[0]
    averaged = averaging(avg_sum, avg_sum_intercept)
    d = coef.shape[1]
    c2 = bias_value * bias_value
    if sigma.ndim == 3:
        g = np.empty(d + 1, dtype=np.float64)  # Sigma x (dense) of a full covariance
    for i in range(n_rows):
        start, end, s, t = weighted_row(indptr, sample_weight, i, t)
        for k in range(n_out):
            z = intercept[k] + csr_row_dot(coef, k, indices, data, start, end)
            if not record_score(out_scores, i, k, z):
                return t, i
            if averaged:
                out_scores[i, k] = averaged_score(
                    z, avg_sum, avg_sum_intercept, k, (indices, data, start, end), t - 1 if s != 0.0 else t
                )
            if s == 0.0:
                continue
            y = targets[i, k]
            if sigma.ndim == 2:
                v = c2 * sigma_b[k]
                for p in range(start, end):
                    v += sigma[k, indices[p]] * data[p] * data[p]
            else:
                # g = Sigma x (dense), v = x . g
                for a in range(d + 1):
                    g[a] = sigma[k, d, a] * bias_value
                for p in range(start, end):
                    row = indices[p]
                    x = data[p]
                    for a in range(d + 1):
                        g[a] += sigma[k, row, a] * x
                v = g[d] * bias_value
                for p in range(start, end):
                    v += g[indices[p]] * data[p]
            update, ay, c = cw_weighted_step(rule=rule, y=y, z=z, v=v, s=s, phi=phi, C=C, r=r)
            if not update:
                continue
            if not (abs(ay) < math.inf and c < math.inf):  # stop before a step no float holds
                return t, i
            if sigma.ndim == 2:
                if averaged and avg_sum is not None:  # two loops: no test per non-zero
                    late = (t - 1) * ay
                    for p in range(start, end):
                        j = indices[p]
                        x = data[p]
                        sj = sigma[k, j]
                        coef[k, j] += ay * sj * x
                        avg_sum[k, j] += late * sj * x
                        sigma[k, j] = sj / (1.0 + c * sj * x * x)
                else:
                    for p in range(start, end):
                        j = indices[p]
                        x = data[p]
                        sj = sigma[k, j]
                        coef[k, j] += ay * sj * x
                        sigma[k, j] = sj / (1.0 + c * sj * x * x)
                sb = sigma_b[k]
                intercept[k] += ay * sb * c2
                if averaged and avg_sum_intercept is not None:
                    avg_sum_intercept[k] += (t - 1) * ay * sb * c2
                sigma_b[k] = sb / (1.0 + c * sb * c2)
            else:
                for a in range(d):
                    coef[k, a] += ay * g[a]
                intercept[k] += ay * g[d] * bias_value
                if averaged and avg_sum is not None and avg_sum_intercept is not None:
                    late = (t - 1) * ay
                    for a in range(d):
                        avg_sum[k, a] += late * g[a]
                    avg_sum_intercept[k] += late * g[d] * bias_value
                beta = c / (1.0 + c * v)
                for a in range(d + 1):
                    bg = beta * g[a]
                    if bg != 0.0:
                        for b in range(d + 1):
                            sigma[k, a, b] -= bg * g[b]
    return t, -1
