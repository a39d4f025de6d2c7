"""First-order linear learners: OGD, Perceptron and Passive-Aggressive, one pass over a CSR chunk.

One kernel serves all of them because they differ only in the step size of the update
``w <- w + step * x`` (Algorithms §2.1-2.3):

* ``RULE_GRADIENT``: step = -eta_t * l'(z) * s with eta_t = eta0 (constant schedule, the Perceptron with
  the perceptron loss) or eta0 / sqrt(t) (OGD).
* ``RULE_PA`` / ``RULE_PA1`` / ``RULE_PA2``: step = tau * direction * s, with l the loss (hinge for
  classification, epsilon-insensitive for regression), direction = -sgn(l'(z)) and
  tau = l / ||x||^2, min(C, l / ||x||^2) or l / (||x||^2 + 1 / (2 C)).

``s`` is the sample weight. The intercept is the weight of a constant feature of value ``c``
(``intercept_sq = c**2``): the kernel stores the intercept ``b = c * w_c`` itself, so ``b += step * c**2``
and ``||x||^2`` includes ``c**2``. c = 1 gives the usual intercept; the Perceptron with bias in Novikoff's
augmented-feature form (b += eta y R^2) is c = R.

Several outputs (one-vs-rest) share one pass: ``coef`` is (K, d) and ``targets`` (n, K), each column
a binary problem in {-1, +1} (or the real target, K = 1, for regression).

Every example's score *before* its update is written to ``out_scores`` (n, K): progressive validation
at no extra cost. Examples with sample weight 0 are scored but neither update nor advance ``t``.
Cost: O(K nnz(x)) per example: one sweep for the score (``||x||^2`` rides along for the PA rules) and one
for the update; the next example's weights are prefetched when the model outgrows the cache.

``csr_check`` is the boundary check these kernels rely on (indices in range, ``indptr`` non-decreasing,
values finite), one vectorised sweep called by ``streamlearn._validation``.
"""

import math

import numpy as np


from ._intrinsics import prefetch
from ._numba import njit_inline, njit_kernel
from .losses import loss_dloss, loss_value

#: Prefetch the next example's weights only when the model is larger than this many weights (8 bytes each):
#: a model that stays in the core's cache gains nothing and the extra sweep over the next row's indices
#: costs time per non-zero; a model out of the L2 cache (2^20 weights, 8 MB) gains from it, one of 2^19 weights
#: does not (measurements: the first-order benchmark page); the threshold (6 MB) sits between the two.
PREFETCH_MIN_WEIGHTS = 3 << 18

RULE_GRADIENT = 0
RULE_PA = 1
RULE_PA1 = 2
RULE_PA2 = 3

SCHEDULE_CONSTANT = 0
SCHEDULE_INVSQRT = 1


# Row positions are walked as unsigned integers too (0 <= indptr[i] is part of the same boundary check):
# with signed positions numba adds a negative-index fix-up to every data[p] / indices[p] access, a large
# share of the dot product and of the update. Unsigned and signed integers must not meet in one expression (numba would go through float64),
# hence the typed constants.
_U1 = np.uintp(1)
_U2 = np.uintp(2)
_U3 = np.uintp(3)
_U4 = np.uintp(4)


@njit_inline
def csr_row_dot_sq(w, k, indices, data, start, end):
    """``(w[k] . x, ||x||^2)`` for the CSR row data[start:end] in one sweep (index contract: ``csr_row_dot``).
    Four partial sums break the serial dependency of the gathers (the sum differs from a left-to-right one by
    rounding only); the squared norm the PA step needs rides along with the gathers for free. ``w`` None: the
    squared norm alone, without the gathers (the branch is compiled away), and a score of 0."""
    z0 = 0.0
    z1 = 0.0
    z2 = 0.0
    z3 = 0.0
    q0 = 0.0
    q1 = 0.0
    q2 = 0.0
    q3 = 0.0
    p = np.uintp(start)
    e = np.uintp(end)
    while p + _U3 < e:
        if w is not None:
            z0 += w[k, np.uintp(indices[p])] * data[p]
            z1 += w[k, np.uintp(indices[p + _U1])] * data[p + _U1]
            z2 += w[k, np.uintp(indices[p + _U2])] * data[p + _U2]
            z3 += w[k, np.uintp(indices[p + _U3])] * data[p + _U3]
        q0 += data[p] * data[p]
        q1 += data[p + _U1] * data[p + _U1]
        q2 += data[p + _U2] * data[p + _U2]
        q3 += data[p + _U3] * data[p + _U3]
        p += _U4
    while p < e:
        if w is not None:
            z0 += w[k, np.uintp(indices[p])] * data[p]
        q0 += data[p] * data[p]
        p += _U1
    return (z0 + z1) + (z2 + z3), (q0 + q1) + (q2 + q3)


@njit_inline
def csr_row_dot(w, k, indices, data, start, end):
    """w[k] . x for the CSR row data[start:end]: the score of :func:`csr_row_dot_sq` (the same four partial
    sums; the squared norm is never used, and LLVM drops it). Indices are read as unsigned: callers guarantee
    0 <= index < w.shape[1] (checked once at the boundary, ``_validation.as_csr_float``), which spares numba's
    negative-index test on every access."""
    return csr_row_dot_sq(w, k, indices, data, start, end)[0]


@njit_inline
def csr_row_sqnorm(data, start, end):
    """||x||^2 for the CSR row data[start:end]: the four partial sums of :func:`csr_row_dot_sq` without its
    gathers (bound by the add latency)."""
    return csr_row_dot_sq(None, 0, None, data, start, end)[1]


@njit_inline
def csr_row_axpy(a, w, k, indices, data, start, end):
    """w[k] += a * x for the CSR row data[start:end] (same index contract as ``csr_row_dot``)."""
    for p in range(np.uintp(start), np.uintp(end)):
        w[k, np.uintp(indices[p])] += a * data[p]


@njit_inline
def sparse_row_dot(M, a, indices, data, start, end):
    """``M[a] . x`` for the CSR row data[start:end], summed left to right (:func:`csr_row_dot` sums in four
    parts: another rounding)."""
    acc = 0.0
    for p in range(start, end):
        acc += M[a, indices[p]] * data[p]
    return acc


@njit_inline
def weighted_row(indptr, sample_weight, i, t):
    """``(start, end, s, t)`` of example ``i``: its CSR bounds, its weight and the example counter ``t``, which
    counts the examples of non-zero weight."""
    s = sample_weight[i]
    return indptr[i], indptr[i + 1], s, t + 1 if s != 0.0 else t


@njit_inline
def record_score(out_scores, i, k, z):
    """``out_scores[i, k] = z``; False when the score is not finite (the pass stops at that example)."""
    out_scores[i, k] = z
    return math.isfinite(z)


@njit_inline
def averaging(avg_sum, avg_sum_intercept):
    """Whether the averaging sums are given (optional arguments; arrays with no rows: no averaging)."""
    if avg_sum is not None and avg_sum_intercept is not None:
        return avg_sum.shape[0] > 0
    return False


@njit_inline
def averaged_score(z, avg_sum, avg_sum_intercept, k, row, n_before):
    """Score of the averaged weights ``coef - avg_sum / n_before`` for the CSR row ``row = (indices, data, start,
    end)`` from ``z``, the running weights' score of the same row; ``n_before`` examples of non-zero weight before
    this one (0: the averaged model starts at zero). One more O(nnz) dot product."""
    if avg_sum is None or avg_sum_intercept is None:
        return 0.0
    indices, data, start, end = row
    # the dot product before the test, not under it: compiled under the branch, the loop makes the averaged pass twice
    # as slow
    dot = avg_sum_intercept[k] + csr_row_dot(avg_sum, k, indices, data, start, end)
    return z - dot / n_before if n_before > 0 else 0.0


#: Steps (times ``max(1, intercept_sq)``, and times ``t - 1`` for the averaging sums) up to this size cannot make a
#: finite weight overflow: every row value is below 2**500 in size (about 3.3e150, refused beyond at the boundary,
#: ``_validation.MAX_FEATURE_VALUE``), so each ``|step x_j|`` stays below 3.3e300. Larger steps (and NaN) stop the pass
#: (:func:`linear_epoch`), which then learns that example alone with ``checked``, checking the weights one by one first
SAFE_STEP = 1e150


@njit_inline
def _step(rule_params, y, z, sq, s, t):
    """``(moves, step)`` of the update ``w += step x`` of an example of weight ``s``, label ``y``, score ``z`` and
    ``||x||^2 = sq`` (see the module docstring), ``rule_params = (rule, loss, loss_param, schedule, eta0, C)``;
    ``moves`` is False when the example changes nothing (a weight of 0, a zero gradient, a passive PA step)."""
    rule, loss, loss_param, schedule, eta0, C = rule_params
    if s == 0.0:
        return False, 0.0
    if rule == RULE_GRADIENT:
        g = loss_dloss(loss, y, z, loss_param)
        if g == 0.0:
            return False, 0.0
        if schedule == SCHEDULE_INVSQRT:
            eta = eta0 / math.sqrt(t)
        else:
            eta = eta0
        return True, -eta * g * s
    lt = loss_value(loss, y, z, loss_param)
    if lt <= 0.0 or sq <= 0.0:
        return False, 0.0  # passive, or x = 0: nothing can be learnt from this example
    if rule == RULE_PA:
        tau = lt / sq
    elif rule == RULE_PA1:
        tau = min(C, lt / sq)
    else:
        tau = lt / (sq + 0.5 / C)
    g = loss_dloss(loss, y, z, loss_param)
    direction = -1.0 if g > 0.0 else 1.0
    return True, tau * direction * s


@njit_kernel
def update_overflows(a, w, b, k, row, intercept_sq):
    """Whether ``w[k] += a * x`` for the CSR row ``row = (indices, data, start, end)``, with
    ``b[k] += a * intercept_sq``, would make a value NaN or infinite; nothing is written."""
    indices, data, start, end = row
    overflow = not math.isfinite(b[k] + a * intercept_sq)
    for p in range(np.uintp(start), np.uintp(end)):
        overflow |= not math.isfinite(w[k, np.uintp(indices[p])] + a * data[p])
    return overflow


@njit_kernel
def linear_epoch(
    indptr,
    indices,
    data,
    targets,
    sample_weight,
    coef,
    intercept,
    intercept_sq,
    rule,
    loss,
    loss_param,
    schedule,
    eta0,
    C,
    t,
    out_scores,
    avg_sum=None,
    avg_sum_intercept=None,
    k_from=0,
    checked=False,
):
    """Run one pass over the rows of a CSR matrix in storage order.

    Returns ``(t, stop)``: the updated example counter and -1 when every example was learnt. Otherwise the pass
    stopped before an example's update, with ``t`` not counting it: ``stop = i`` when the score of example
    ``i`` is not finite, ``stop = -2 - (i K + k)`` when its step for output ``k`` (of K) is beyond
    :data:`SAFE_STEP` (never on sane data; nothing of it applied). Row values are below 2**500 in size (the
    boundary check, ``_validation.MAX_FEATURE_VALUE``), so that steps up to the safe size keep every weight
    finite. With K > 1 outputs, the outputs before the one that stopped the pass have taken the example's update.

    The first row is learnt from output ``k_from`` on. With ``checked``, each update is checked weight by weight
    (and averaging sum by sum) before it is written, whatever the size of its step: one that would make a value
    NaN or infinite stops the pass as a score that is not finite does (``stop = i``, nothing of that output
    written). That is how the example a large step stopped the pass at is learnt (a chunk of that one row, from
    output ``k``); the pass may then resume after it. O(K nnz) more per example: never used on sane data.

    Averaging (``avg_sum`` (K, d) and ``avg_sum_intercept`` (K,) given): every update ``w += step x`` of
    example ``t`` also adds ``(t - 1) step x`` to ``avg_sum`` (O(nnz), Daume's trick), so that the average of
    the weights after each of the ``t`` examples seen is ``coef - avg_sum / t`` (likewise the intercept).
    The updates follow the running weights ``coef``; ``out_scores`` are the averaged weights' scores (the
    model that predicts), see :func:`averaged_score`. Arrays with no rows mean no averaging: callers pass arrays
    either way, so that one compiled specialisation serves both.
    """
    n_rows = indptr.shape[0] - 1
    n_out = coef.shape[0]
    averaged = averaging(avg_sum, avg_sum_intercept)
    need_sq = rule != RULE_GRADIENT
    use_prefetch = coef.shape[0] * coef.shape[1] >= PREFETCH_MIN_WEIGHTS
    safe_step = SAFE_STEP / max(1.0, intercept_sq)  # the intercept moves by step * intercept_sq
    rule_params = (rule, loss, loss_param, schedule, eta0, C)
    k_first = k_from
    for i in range(n_rows):
        t_before = t
        start, end, s, t = weighted_row(indptr, sample_weight, i, t)
        if use_prefetch and i + 1 < n_rows:  # ask for the next example's weights while this one is worked on
            for k in range(n_out):
                for p in range(np.uintp(end), np.uintp(indptr[i + 2])):
                    prefetch(coef, k, np.uintp(indices[p]))
        sq = intercept_sq
        for k in range(k_first, n_out):
            if need_sq and k == k_first:  # ||x||^2 computed with the first output's dot product
                dot, xx = csr_row_dot_sq(coef, k, indices, data, start, end)
                sq += xx
            else:
                dot = csr_row_dot(coef, k, indices, data, start, end)
            z = intercept[k] + dot
            if not record_score(out_scores, i, k, z):
                return t_before, i
            if averaged:
                out_scores[i, k] = averaged_score(
                    z, avg_sum, avg_sum_intercept, k, (indices, data, start, end), t_before
                )
            moves, step = _step(rule_params, targets[i, k], z, sq, s, t)
            if not moves:
                continue
            late = (t - 1) * step  # the averaging sums' step
            if checked:
                x_row = (indices, data, start, end)
                if update_overflows(step, coef, intercept, k, x_row, intercept_sq) or (
                    averaged
                    and avg_sum is not None
                    and avg_sum_intercept is not None
                    and update_overflows(late, avg_sum, avg_sum_intercept, k, x_row, intercept_sq)
                ):
                    return t_before, i
            # (a step is finite or infinite here, never NaN: the score is finite, the sample weight > 0)
            elif abs(step) > safe_step or (averaged and abs(late) > safe_step):
                return t_before, -2 - (i * n_out + k)
            csr_row_axpy(a=step, w=coef, k=k, indices=indices, data=data, start=start, end=end)
            intercept[k] += step * intercept_sq
            if averaged and avg_sum is not None and avg_sum_intercept is not None:
                csr_row_axpy(a=late, w=avg_sum, k=k, indices=indices, data=data, start=start, end=end)
                avg_sum_intercept[k] += late * intercept_sq
        k_first = 0
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
        sq = csr_row_sqnorm(data, indptr[i], indptr[i + 1])
        if sq > best:
            best = sq
    return best


#: the exponent bits of a float64: all set for NaN and infinity
EXPONENT_MASK = np.uint64(0x7FF0000000000000)


@njit_kernel
def csr_check(indptr, indices, data_bits, n_cols, limit_bits):
    """One branch-free sweep over a CSR matrix's arrays for the boundary check the kernels rely on.

    ``data_bits`` is ``data.view(np.uint64)`` (a float64 is NaN or infinite iff all its exponent bits are set).
    Returns ``(indptr_decreases, index_out_of_range, value_out_of_range)`` as 0/1 flags, the last for a value
    whose exponent bits are ``limit_bits`` or more: NaN and infinity for ``EXPONENT_MASK``, also finite values of
    ``2**e`` and beyond for the exponent bits of ``2.0**e``. O(nnz), vectorised (integer OR
    reductions). The caller has checked ``indptr``'s length, first and last entries.
    """
    n_rows = indptr.shape[0] - 1
    bad_ptr = 0
    for i in range(n_rows):
        bad_ptr |= indptr[i + 1] < indptr[i]
    nnz = indptr[n_rows]
    n = np.uint64(n_cols)
    bad_idx = np.uint64(0)
    bad_val = np.uint64(0)
    for p in range(nnz):
        bad_idx |= np.uint64(np.uint64(np.int64(indices[p])) >= n)  # a negative index wraps to a huge one
        bad_val |= np.uint64((data_bits[p] & EXPONENT_MASK) >= limit_bits)
    return int(bad_ptr), int(bad_idx), int(bad_val)


@njit_kernel
def dense_row_counts(A, indptr):
    """``indptr`` of the CSR matrix of the non-zeros of the 2-D array ``A`` (NaN is one, ``-0.0`` is not): row i's
    count added to ``indptr[i]``, ``indptr[0] = 0``; returns their total. One pass over ``A``, in its own order of
    rows."""
    n, d = A.shape
    indptr[0] = 0
    for i in range(n):
        c = 0
        for j in range(d):
            c += A[i, j] != 0.0
        indptr[i + 1] = indptr[i] + c
    return indptr[n]


@njit_inline
def _row_nonzeros(A, i, indices, data, p, limit):
    """The columns and values of the non-zeros of row ``i`` of ``A`` (NaN is one, ``-0.0`` is not), in column
    order, written from position ``p``; returns the position after them, or -1 at the first value that is not
    under ``limit`` in size (NaN included; ``limit`` infinite: none)."""
    for j in range(A.shape[1]):
        x = A[i, j]
        if not abs(x) < limit and limit < np.inf:
            return -1
        if x != 0.0:
            indices[p] = j
            data[p] = x
            p += 1
    return p


@njit_kernel
def dense_fill_csr(A, indptr, indices, data):
    """The columns and values of the non-zeros of ``A``, row by row in column order, at the positions
    ``indptr`` (from :func:`dense_row_counts`) gives."""
    for i in range(A.shape[0]):
        _row_nonzeros(A, i, indices, data, indptr[i], np.inf)


@njit_kernel
def dense_linear_scores(A, coef, intercept, out, limit):
    """``out[i, k] = coef[k] . a_i + intercept[k]`` for the rows of the 2-D float64 array ``A``, each row's
    non-zeros gathered in column order and summed as :func:`linear_scores` sums the CSR matrix of ``A``'s
    non-zeros (the same four partial sums, so the same scores bit for bit), without building that matrix.
    Returns False, leaving ``out`` unfinished, at the first value that is NaN, infinite or of size ``limit`` or
    more: the caller then takes the CSR path, whose check words the error. O(K nnz + n d)."""
    indices = np.empty(A.shape[1], dtype=np.intp)
    data = np.empty(A.shape[1])
    for i in range(A.shape[0]):
        m = _row_nonzeros(A, i, indices, data, 0, limit)
        if m < 0:
            return False
        for k in range(coef.shape[0]):
            out[i, k] = intercept[k] + csr_row_dot(coef, k, indices, data, 0, m)
    return True


@njit_inline
def _all_finite(a):
    """Whether every value of the float64 array ``a`` is finite, by an integer minimum over the exponent bits (a
    floating-point reduction would not vectorise): ``(bits & EXP) ^ EXP`` is 0 exactly for inf and NaN."""
    bits = a.view(np.uint64)
    exp = np.uint64(0x7FF0000000000000)
    low = exp
    for j in range(bits.shape[0]):
        low = min(low, (bits[j] & exp) ^ exp)
    return low != np.uint64(0)
