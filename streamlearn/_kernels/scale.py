"""Running per-column max-abs scaling of a CSR stream (the second-order learners' scale safeguard).

Row t is divided, column by column, by ``s_j = max_{r <= t} |x_rj|`` (the maximum over the rows seen so far,
this row included): a function of the features seen so far only, and invariant to multiplying any column by
a positive constant (both the value and its running maximum scale by it). O(nnz).
"""

import numpy as np

from ._numba import njit_kernel


@njit_kernel
def running_maxabs_scale(indptr, indices, data, scale):
    """Return the scaled copy of ``data``; ``scale`` (d,) holds the running maxima and is updated in place."""
    out = np.empty_like(data)
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i], indptr[i + 1]):
            a = abs(data[p])
            j = indices[p]
            if a > scale[j]:
                scale[j] = a
        for p in range(indptr[i], indptr[i + 1]):
            s = scale[indices[p]]
            out[p] = data[p] / s if s > 0.0 else 0.0
    return out
