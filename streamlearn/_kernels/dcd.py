"""Dual coordinate descent for the L1- and L2-loss linear SVM (Hsieh et al. ICML 2008; Algorithms §3.1).

Primal ``min_w 1/2 ||w||^2 + C sum_i s_i xi_i`` (``xi`` the hinge, or squared hinge for the L2 loss; ``s``
the sample weights), dual ``min_alpha 1/2 alpha^T (Q + D) alpha - e^T alpha`` with ``0 <= alpha_i <= U_i``:
L1 loss ``U_i = C s_i``, ``D_ii = 0``; L2 loss ``U_i = inf``, ``D_ii = 1 / (2 C s_i)``. Examples of weight 0
never enter. ``w = sum_i y_i alpha_i x_i`` is maintained; the bias is the weight ``wb`` of a constant feature
of value ``bias_value`` (0 for none), regularised like the others, as in LIBLINEAR.

Each outer iteration visits the active examples in a fresh random order (Fisher-Yates with a splitmix64
generator seeded by the caller, so a solve is deterministic given its seed) and updates
``alpha_i <- min(max(alpha_i - G / Qbar_ii, 0), U_i)`` where ``G = y_i w . x_i - 1 + D_ii alpha_i``.
It stops when the projected gradient's range over a pass is ``<= tol``. With ``shrinking``, LIBLINEAR's
shrinking heuristic (solve_l2r_l1l2_svc) removes bounded variables from the active set, and the solver
re-checks the full set before stopping.

The same kernel is the inner solver of block minimization (Yu et al. KDD 2010): called on one block with
that block's slice of ``alpha`` and the shared ``w``.
"""

import math

import numpy as np

from ._numba import njit_inline, njit_kernel


@njit_inline
def _splitmix64(state):
    """Advance a splitmix64 state; returns ``(new_state, output)`` (uint64 arithmetic wraps)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return state, z


@njit_kernel
def dcd_solve(
    indptr,
    indices,
    data,
    targets,
    sample_weight,
    alpha,
    coef,
    wb,
    bias_value,
    C,
    l2_loss,
    tol,
    max_iter,
    shrinking,
    seed,
    out_info,
):
    """Solve the K one-vs-rest dual problems of the rows of a CSR matrix, warm-started from ``alpha``.

    ``targets`` (n, K) in {-1, +1}; ``alpha`` (n, K) and ``coef`` (K, d), ``wb`` (K,) consistent with it
    (``w_k = sum_i targets[i, k] alpha[i, k] x_i``), all updated in place. ``seed`` is a uint64.
    ``out_info`` (K, 4) receives per output: passes made, max and min projected gradient of the first
    pass (over every example: nothing is shrunk in the first pass), and the PG range of the last pass.
    Returns the final generator state.
    """
    n = indptr.shape[0] - 1
    n_out = coef.shape[0]
    state = np.uint64(seed)
    index = np.empty(n, dtype=np.int64)
    # per-example scalars packed in one row each (y, U_i, D_ii, Qbar_ii) plus alpha in its own contiguous
    # array: the visiting order is random, so each array touched per example costs a cache miss
    ex = np.empty((n, 4), dtype=np.float64)
    a_k = np.empty(n, dtype=np.float64)
    b2 = bias_value * bias_value
    for i in range(n):
        sq = b2
        for p in range(indptr[i], indptr[i + 1]):
            sq += data[p] * data[p]
        si = sample_weight[i]
        if si > 0.0:
            if l2_loss:
                ex[i, 1] = math.inf
                ex[i, 2] = 0.5 / (C * si)
            else:
                ex[i, 1] = C * si
                ex[i, 2] = 0.0
        else:
            ex[i, 1] = 0.0
            ex[i, 2] = 0.0
        ex[i, 3] = sq + ex[i, 2]
    for k in range(n_out):
        w = coef[k]
        for i in range(n):
            ex[i, 0] = targets[i, k]
            a_k[i] = alpha[i, k]
        # active set: examples of non-zero weight
        n_active = 0
        for i in range(n):
            if sample_weight[i] > 0.0:
                index[n_active] = i
                n_active += 1
        n_all = n_active
        pg_max_old = math.inf
        pg_min_old = -math.inf
        it = 0
        first_max = -math.inf
        first_min = math.inf
        last_gap = math.inf
        bk = wb[k]
        while it < max_iter:
            pg_max_new = -math.inf
            pg_min_new = math.inf
            for a in range(n_active):
                state, r = _splitmix64(state)
                # Lemire's multiply-shift: a uniform draw in [0, n_active - a) without a division
                b = a + np.int64(((r >> np.uint64(32)) * np.uint64(n_active - a)) >> np.uint64(32))
                tmp = index[a]
                index[a] = index[b]
                index[b] = tmp
            pos = 0
            while pos < n_active:
                i = index[pos]
                start = indptr[i]
                end = indptr[i + 1]
                yi = ex[i, 0]
                upper = ex[i, 1]
                dii = ex[i, 2]
                q = ex[i, 3]
                ai = a_k[i]
                g = bk * bias_value
                for p in range(start, end):
                    g += w[np.uint64(indices[p])] * data[p]  # unsigned: no negative-index wraparound
                g = yi * g - 1.0 + dii * ai
                pg = 0.0
                if ai == 0.0:
                    if shrinking and g > pg_max_old:
                        n_active -= 1
                        index[pos] = index[n_active]
                        index[n_active] = i
                        continue
                    elif g < 0.0:
                        pg = g
                elif ai == upper:
                    if shrinking and g < pg_min_old:
                        n_active -= 1
                        index[pos] = index[n_active]
                        index[n_active] = i
                        continue
                    elif g > 0.0:
                        pg = g
                else:
                    pg = g
                if pg > pg_max_new:
                    pg_max_new = pg
                if pg < pg_min_new:
                    pg_min_new = pg
                if abs(pg) > 1e-12:
                    if q > 0.0:
                        new = min(max(ai - g / q, 0.0), upper)
                    else:  # x_i = 0 and no bias (L1 loss): the dual is linear in alpha_i, descending
                        new = upper
                    a_k[i] = new
                    delta = (new - ai) * yi
                    if delta != 0.0:
                        for p in range(start, end):
                            w[np.uint64(indices[p])] += delta * data[p]
                        bk += delta * bias_value
                pos += 1
            it += 1
            if it == 1:
                first_max = pg_max_new
                first_min = pg_min_new
            last_gap = pg_max_new - pg_min_new
            if last_gap <= tol:
                if n_active == n_all:
                    break
                n_active = n_all
                pg_max_old = math.inf
                pg_min_old = -math.inf
                continue
            pg_max_old = pg_max_new
            pg_min_old = pg_min_new
            if pg_max_old <= 0.0:
                pg_max_old = math.inf
            if pg_min_old >= 0.0:
                pg_min_old = -math.inf
        wb[k] = bk
        for i in range(n):
            alpha[i, k] = a_k[i]
        out_info[k, 0] = it
        out_info[k, 1] = first_max
        out_info[k, 2] = first_min
        out_info[k, 3] = last_gap
    return state
