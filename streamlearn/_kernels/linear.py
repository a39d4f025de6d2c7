"""First-order linear learners: OGD, Perceptron and Passive-Aggressive, one pass over a CSR chunk.

One kernel serves all of them because they differ only in the step size of the update
``w <- w + step * x`` (ALGORITHMS.md sections 2.1-2.3):

* ``RULE_GRADIENT``: step = -eta_t * l'(z) * s with eta_t = eta0 (constant schedule, the Perceptron with
  the perceptron loss) or eta0 / sqrt(t) (OGD).
* ``RULE_PA`` / ``RULE_PA1`` / ``RULE_PA2``: step = tau * direction * s, with l the loss (hinge for
  classification, epsilon-insensitive for regression), direction = -sgn(l'(z)) and
  tau = l / ||x||^2, min(C, l / ||x||^2) or l / (||x||^2 + 1 / (2 C)).

``s`` is the sample weight. The intercept is the weight of a constant feature of value ``c``
(``intercept_sq = c**2``): the kernel stores the intercept ``b = c * w_c`` itself, so ``b += step * c**2``
and ``||x||^2`` includes ``c**2``. c = 1 gives the usual intercept; the Perceptron with bias of the lecture
notes (b += eta y R^2) is c = R.

Several outputs (one-vs-rest) share one pass: ``coef`` is (K, d) and ``targets`` (n, K), each column
a binary problem in {-1, +1} (or the real target, K = 1, for regression).

Every example's score *before* its update is written to ``out_scores`` (n, K): progressive validation
at no extra cost. Examples with sample weight 0 are scored but neither update nor advance ``t``.
Cost: O(K nnz(x)) per example.
"""

import math

import numpy as np


from ._intrinsics import prefetch
from ._numba import njit_inline, njit_kernel
from .losses import loss_dloss, loss_value

RULE_GRADIENT = 0
RULE_PA = 1
RULE_PA1 = 2
RULE_PA2 = 3

SCHEDULE_CONSTANT = 0
SCHEDULE_INVSQRT = 1


@njit_inline
def csr_row_dot(w, k, indices, data, start, end):
    """w[k] . x for the CSR row data[start:end]. Four partial sums break the serial dependency of the
    gathers (the sum differs from a left-to-right one by rounding only). Indices are read as unsigned:
    callers guarantee 0 <= index < w.shape[1] (checked once at the boundary, ``_validation.as_csr_float``),
    which spares numba's negative-index test on every access."""
    z0 = 0.0
    z1 = 0.0
    z2 = 0.0
    z3 = 0.0
    p = start
    while p + 3 < end:
        z0 += w[k, np.uintp(indices[p])] * data[p]
        z1 += w[k, np.uintp(indices[p + 1])] * data[p + 1]
        z2 += w[k, np.uintp(indices[p + 2])] * data[p + 2]
        z3 += w[k, np.uintp(indices[p + 3])] * data[p + 3]
        p += 4
    while p < end:
        z0 += w[k, np.uintp(indices[p])] * data[p]
        p += 1
    return (z0 + z1) + (z2 + z3)


@njit_inline
def csr_row_axpy(a, w, k, indices, data, start, end):
    """w[k] += a * x for the CSR row data[start:end] (same index contract as ``csr_row_dot``)."""
    for p in range(start, end):
        w[k, np.uintp(indices[p])] += a * data[p]


@njit_kernel
def linear_epoch(indptr, indices, data, targets, sample_weight, coef, intercept, intercept_sq,
                 rule, loss, loss_param, schedule, eta0, C, t, out_scores):
    """Run one pass over the rows of a CSR matrix in storage order.

    Returns ``(t, bad_row)``: the updated example counter and -1, or the index of the first example whose
    score was not finite (the pass stops there; earlier updates are kept).
    """
    n_rows = indptr.shape[0] - 1
    n_out = coef.shape[0]
    need_sq = rule != RULE_GRADIENT
    for i in range(n_rows):
        start = indptr[i]
        end = indptr[i + 1]
        if i + 1 < n_rows:  # ask for the next example's weights while this one is worked on
            for k in range(n_out):
                for p in range(end, indptr[i + 2]):
                    prefetch(coef, k, indices[p])
        s = sample_weight[i]
        sq = intercept_sq
        if need_sq:
            for p in range(start, end):
                sq += data[p] * data[p]
        if s != 0.0:
            t += 1
        for k in range(n_out):
            z = intercept[k] + csr_row_dot(coef, k, indices, data, start, end)
            out_scores[i, k] = z
            if not math.isfinite(z):
                return t, i
            if s == 0.0:
                continue
            y = targets[i, k]
            if rule == RULE_GRADIENT:
                g = loss_dloss(loss, y, z, loss_param)
                if g == 0.0:
                    continue
                if schedule == SCHEDULE_INVSQRT:
                    eta = eta0 / math.sqrt(t)
                else:
                    eta = eta0
                step = -eta * g * s
            else:
                lt = loss_value(loss, y, z, loss_param)
                if lt <= 0.0 or sq <= 0.0:
                    continue  # passive, or x = 0: nothing can be learnt from this example
                if rule == RULE_PA:
                    tau = lt / sq
                elif rule == RULE_PA1:
                    tau = min(C, lt / sq)
                else:
                    tau = lt / (sq + 0.5 / C)
                g = loss_dloss(loss, y, z, loss_param)
                direction = -1.0 if g > 0.0 else 1.0
                step = tau * direction * s
            csr_row_axpy(step, coef, k, indices, data, start, end)
            intercept[k] += step * intercept_sq
    return t, -1


@njit_kernel
def linear_scores(indptr, indices, data, coef, intercept, out):
    """out[i, k] = coef[k] . x_i + intercept[k] for a CSR matrix; O(K nnz)."""
    n_rows = indptr.shape[0] - 1
    n_out = coef.shape[0]
    for i in range(n_rows):
        for k in range(n_out):
            out[i, k] = intercept[k] + csr_row_dot(coef, k, indices, data, indptr[i], indptr[i + 1])
    return out




@njit_kernel
def csr_max_row_sqnorm(indptr, data):
    """max_i ||x_i||^2 over the rows of a CSR matrix (0.0 for no rows); O(nnz)."""
    best = 0.0
    for i in range(indptr.shape[0] - 1):
        sq = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            sq += data[p] * data[p]
        if sq > best:
            best = sq
    return best
