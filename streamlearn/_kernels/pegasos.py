"""Pegasos with mini-batches of k examples and the projection onto the ball of radius 1/sqrt(lambda).

Algorithms §2.7 with the scaled-vector trick of 2.8. Per output (one-vs-rest column), the weight vector
is ``w = scale * v`` over ``d + 1`` coordinates (the last one is a constant feature of value
``bias_value``, 1 or 0, so the bias is regularised like the other weights), with ``sqnorm = ||v||^2``.

A round takes the next ``k`` examples of non-zero weight in stream order (a mini-batch may span several
calls: the pending sum is part of the state). Every example is scored with ``w_t``, the model of its round
(``out_scores``). Examples with ``y w_t . x < 1`` add ``s y x`` (``s`` = sample weight) to a pending sum
``acc``; when the k-th example arrives, with ``t`` the round number and ``eta = 1 / (lambda t)``::

    w <- (1 - eta lambda) w + (eta / k) acc          # 1 - eta lambda = 1 - 1/t: O(1) on `scale`
    w <- min(1, radius / ||w||) w                    # O(1) on `scale`, when `project`

The additive part touches only the coordinates of ``acc`` that are non-zero (tracked in ``touched``), so a
round costs O(k nnz(x)). At t = 1 the shrink factor is 0: ``v`` is reset to 0 (O(d), once). When
``|scale|`` falls below 1e-9, ``scale`` is folded into ``v`` (O(d), rare); ``sqnorm`` is recomputed
exactly every ``REFRESH_ROUNDS`` rounds against floating-point drift.
"""

import math

from ._numba import njit_kernel
from .linear import record_score

#: rounds between exact recomputations of ||v||^2
REFRESH_ROUNDS = 65536
#: |scale| below this is folded into v
SCALE_MIN = 1e-9


@njit_kernel
def pegasos_epoch(
    indptr,
    indices,
    data,
    targets,
    sample_weight,
    v,
    scale,
    sqnorm,
    acc,
    marked,
    touched,
    n_touched,
    bias_value,
    lam,
    batch_size,
    radius,
    project,
    t,
    n_pending,
    out_scores,
):
    """One pass over the rows of a CSR matrix in storage order.

    Arrays (K = number of outputs, D = d + 1): ``v``, ``acc`` (K, D) float64; ``marked`` (K, D) uint8;
    ``touched`` (K, D) int64; ``scale``, ``sqnorm`` (K,) float64; ``n_touched`` (K,) int64, all updated
    in place. ``t`` rounds completed, ``n_pending`` examples in the current round.

    Returns ``(t, n_pending, bad_row)`` with ``bad_row = -1`` or the first example whose score was not
    finite, or that ended a round whose update overflowed the weights (the pass stops there; that round's update
    is kept: the model is then not finite and cannot predict).
    """
    n_rows = indptr.shape[0] - 1
    n_out = v.shape[0]
    d = v.shape[1] - 1
    for i in range(n_rows):
        start = indptr[i]
        end = indptr[i + 1]
        s = sample_weight[i]
        for k in range(n_out):
            z = v[k, d] * bias_value
            for p in range(start, end):
                z += v[k, indices[p]] * data[p]
            z *= scale[k]
            if not record_score(out_scores, i, k, z):
                return t, n_pending, i
            if s == 0.0:
                continue
            y = targets[i, k]
            if y * z < 1.0:
                sy = s * y
                for p in range(start, end):
                    j = indices[p]
                    if marked[k, j] == 0:
                        marked[k, j] = 1
                        touched[k, n_touched[k]] = j
                        n_touched[k] += 1
                    acc[k, j] += sy * data[p]
                if bias_value != 0.0:
                    if marked[k, d] == 0:
                        marked[k, d] = 1
                        touched[k, n_touched[k]] = d
                        n_touched[k] += 1
                    acc[k, d] += sy * bias_value
        if s == 0.0:
            continue
        n_pending += 1
        if n_pending < batch_size:
            continue
        # end of the round: apply it
        n_pending = 0
        t += 1
        eta = 1.0 / (lam * t)
        shrink = 1.0 - 1.0 / t
        for k in range(n_out):
            if shrink == 0.0:
                for j in range(d + 1):
                    v[k, j] = 0.0
                scale[k] = 1.0
                sqnorm[k] = 0.0
            else:
                scale[k] *= shrink
            step = eta / batch_size / scale[k]
            q = sqnorm[k]
            for m in range(n_touched[k]):
                j = touched[k, m]
                old = v[k, j]
                new = old + step * acc[k, j]
                q += new * new - old * old
                v[k, j] = new
                acc[k, j] = 0.0
                marked[k, j] = 0
            n_touched[k] = 0
            if not math.isfinite(q):  # the round overflowed the weights (weights and values near 2**500)
                return t, n_pending, i
            if q < 0.0:
                q = 0.0
            if abs(scale[k]) < SCALE_MIN or t % REFRESH_ROUNDS == 0:
                q = 0.0
                sc = scale[k]
                for j in range(d + 1):
                    v[k, j] *= sc
                    q += v[k, j] * v[k, j]
                scale[k] = 1.0
            sqnorm[k] = q
            if project:
                norm = abs(scale[k]) * math.sqrt(q)
                if norm > radius:
                    scale[k] *= radius / norm
    return t, n_pending, -1
