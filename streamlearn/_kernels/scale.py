"""Running per-column max-abs scaling of a CSR stream (the second-order learners' scale safeguard).

Row t is divided, column by column, by ``s_j = max_{r <= t} |x_rj|`` (the maximum over the rows seen so far,
this row included): a function of the features seen so far only, and invariant to multiplying any column by
a positive constant (both the value and its running maximum scale by it). O(nnz).
"""

import numpy as np

from ._numba import njit_kernel


@njit_kernel
def maxabs_augment(indptr, indices, data, scale, update, sw):
    """CSR arrays of the rows ``[x / s, 1]`` (the constant at column ``scale.shape[0]``).

    ``update=True``: ``s`` is the running maximum of the module docstring (``scale`` updated in place) over the
    rows of weight ``sw[i] != 0``; ``update=False`` (prediction), and rows of weight 0 (scored, never learned
    from): ``s = max(scale, |x|)`` entry by entry, ``scale`` left as it is, so a row is scaled the same way
    whether it is predicted or learned next. ``sw`` is read only when ``update``.
    """
    n = indptr.shape[0] - 1
    d = scale.shape[0]
    new_indptr = np.empty(n + 1, dtype=np.int64)
    new_indices = np.empty(indptr[n] - indptr[0] + n, dtype=indices.dtype)
    new_data = np.empty(indptr[n] - indptr[0] + n, dtype=np.float64)
    q = 0
    new_indptr[0] = 0
    for i in range(n):
        learn = update and sw[i] != 0.0
        if learn:
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                scale[j] = max(scale[j], abs(data[p]))
        for p in range(indptr[i], indptr[i + 1]):
            s = scale[indices[p]]
            if not learn:
                s = max(s, abs(data[p]))
            new_indices[q] = indices[p]
            new_data[q] = data[p] / s if s > 0.0 else 0.0
            q += 1
        new_indices[q] = d
        new_data[q] = 1.0
        q += 1
        new_indptr[i + 1] = q
    return new_indptr, new_indices, new_data
