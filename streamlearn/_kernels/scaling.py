"""Streaming feature (and regression target) scaling: each row is transformed with the statistics of the rows
before it, then added.

So a row never sees itself or any later row (progressive validation stays honest) and the result does not
depend on how the stream is cut into chunks. Rows are CSR rows (``cols`` = column indices) or dense rows
(``cols`` empty: the row's entries are columns ``0 .. d-1``, zeros included, so they count as observed).

* Max-abs: ``x_j / m_j`` with ``m_j`` the largest ``|x_j|`` of the earlier rows.
* Standard: ``(x_j - mean_j) / std_j`` (centring only when ``center``; population std).

A feature whose scale is still 0 (no earlier non-zero value, or no spread yet) gives 0: it enters the
learner once the rows before it say how large it is, never at its raw size.
  Per column: ``shift[j]`` = the first non-zero value seen (0 until then), ``count[j]`` = non-zero entries
  seen, ``s1[j]`` = sum of ``x - shift``, ``s2[j]`` = sum of ``(x - shift)^2`` over them. Zeros (missing
  CSR entries, explicit or dense zeros alike) are accounted for lazily from ``n - count[j]``: O(nnz) per row,
  and the same state for dense and CSR input. The shift keeps
  the sums small when a column's values sit far from 0 (no cancellation in ``var = E[d^2] - E[d]^2``).

``out`` (same length as ``data``) receives the transformed values when ``write`` is true. ``learn`` (one
weight per row, or empty: every row) leaves the rows of weight 0 out of the statistics: they are transformed
and change nothing.
"""

import math

import numpy as np

from ._numba import njit_kernel


@njit_kernel
def maxabs_transform_update(indptr, cols, data, n_cols, max_abs, write, out, learn):
    """Max-abs scaling, row by row (see the module docstring); updates ``max_abs`` in place and returns the
    number of rows added to it."""
    dense = cols.shape[0] == 0
    n_rows = indptr.shape[0] - 1
    every = learn.shape[0] == 0
    added = 0
    for i in range(n_rows):
        start = indptr[i]
        add = every or learn[i] != 0.0
        added += 1 if add else 0
        for p in range(start, indptr[i + 1]):
            j = np.uintp(p - start) if dense else np.uintp(cols[p])  # unsigned: no negative-index test
            x = data[p]
            m = max_abs[j]
            if write:
                out[p] = x / m if m > 0.0 else 0.0
            if add:  # stored unconditionally: a branch on |x| > m costs more than the store
                ax = abs(x)
                max_abs[j] = ax if ax > m else m
    return added


@njit_kernel
def standard_transform_update(
    indptr, cols, data, n_cols, shift, count, s1, s2, n_seen, center, with_std, write, out, learn
):
    """Standard scaling, row by row (see the module docstring); updates the column sums in place and returns
    the number of rows seen afterwards (``n_seen`` before)."""
    dense = cols.shape[0] == 0
    n_rows = indptr.shape[0] - 1
    every = learn.shape[0] == 0
    n = n_seen
    for i in range(n_rows):
        start = indptr[i]
        add = every or learn[i] != 0.0
        for p in range(start, indptr[i + 1]):
            j = p - start if dense else np.intp(cols[p])
            x = data[p]
            if write:
                v = x if not with_std else 0.0  # no statistics yet
                if n > 0:
                    missing = n - count[j]  # zeros of earlier rows
                    k = shift[j]
                    a = (s1[j] - missing * k) / n  # mean of (x - shift)
                    c = (x - (k + a)) if center else x
                    if with_std:
                        var = (s2[j] + missing * k * k) / n - a * a
                        v = c / math.sqrt(var) if var > 0.0 else 0.0
                    else:
                        v = c
                out[p] = v
            if x == 0.0 or not add:  # zeros are counted lazily (n - count), as CSR's missing entries are
                continue
            if count[j] == 0:
                shift[j] = x
            dx = x - shift[j]
            s1[j] += dx
            s2[j] += dx * dx
            count[j] += 1
        if add:
            n += 1
    return n


@njit_kernel
def standard_moments(shift, count, s1, s2, n, mean, var):
    """Column means and (population) variances from the sums of ``standard_transform_update``; O(d)."""
    for j in range(shift.shape[0]):
        if n == 0:
            mean[j] = 0.0
            var[j] = 0.0
            continue
        missing = n - count[j]
        k = shift[j]
        a = (s1[j] - missing * k) / n
        mean[j] = k + a
        v = (s2[j] + missing * k * k) / n - a * a
        var[j] = max(0.0, v)


@njit_kernel
def standardize_targets(y, sample_weight, state, t, shift, scale):
    """Running standardisation of regression targets, example by example (no look-ahead).

    ``state = [W, mean, M2]``: the total weight, weighted mean and weighted sum of squared deviations of the
    targets seen (West's weighted form of Welford's update, which never subtracts large sums). Example ``i``
    gets the statistics of the examples before it: ``shift[i]`` = their mean, ``scale[i]`` = their standard
    deviation (0 while fewer than two distinct values are seen) and ``t[i] = (y[i] - shift[i]) / scale[i]``
    (0 when ``scale[i]`` is 0); then it is added with its weight (weight 0 adds nothing). Returns ``(std,
    bad)``: the standard deviation the next example would get (that of all the targets seen) and -1, or the
    first example whose standardised value or statistics overflow (a target or weight too large: its squared
    deviation is beyond the largest float); ``state`` is then left as it was before the call.
    """
    W = state[0]
    mean = state[1]
    m2 = state[2]
    for i in range(y.shape[0]):
        std = _target_std(W, mean, m2)
        shift[i] = mean
        scale[i] = std
        t[i] = (y[i] - mean) / std if std > 0.0 else 0.0
        h = sample_weight[i]
        if h > 0.0:
            W += h
            d = y[i] - mean
            mean += (h / W) * d
            m2 += h * d * (y[i] - mean)
        if not (math.isfinite(t[i]) and math.isfinite(m2) and math.isfinite(W)):
            return 0.0, i
    state[0] = W
    state[1] = mean
    state[2] = m2
    return _target_std(W, mean, m2), -1


@njit_kernel
def _target_std(W, mean, m2):
    """The weighted standard deviation of the statistics ``(W, mean, M2)``; 0 without spread (or with only
    rounding noise against the mean)."""
    std = math.sqrt(max(m2, 0.0) / W) if W > 0.0 else 0.0
    return std if std > 1e-12 * max(1.0, abs(mean)) else 0.0
