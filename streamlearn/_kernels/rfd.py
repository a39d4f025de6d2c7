"""Robust frequent directions (RFD, Alg. 2 / fast Alg. 5): FD plus one scalar, ``alpha += delta / 2``.

The chunk kernels are the FD ones (``fd_fit_csr`` / ``fd_fit_dense`` return the sum of the deltas, and
RFD's ``alpha = alpha0 + sum(delta) / 2``, Algorithms §5.6). The functions here are the per-example
steps for callers that need alpha after every row (the sketched online Newton step, Alg. 6): append one
row and, when the buffer is full, shrink it and update alpha. Each returns ``(n_rows, alpha, delta)``.
"""

from ._numba import njit_kernel
from .fd import fd_append_csr_row, fd_append_dense_row, fd_shrink


@njit_kernel
def rfd_update_csr_row(buf, gram, n_rows, alpha, indices, data, keep, n_shrink, work):
    """Append a sparse row; shrink to ``keep`` rows if the buffer (``buf.shape[0]`` rows) is then full."""
    n_rows = fd_append_csr_row(buf, gram, n_rows, indices, data)
    delta = 0.0
    if n_rows == buf.shape[0]:
        n_rows, delta = fd_shrink(buf, gram, n_rows, keep, n_shrink, work)
        alpha += 0.5 * delta
    return n_rows, alpha, delta


@njit_kernel
def rfd_update_dense_row(buf, gram, n_rows, alpha, x, keep, n_shrink, work):
    """Append a dense row; shrink to ``keep`` rows if the buffer is then full."""
    n_rows = fd_append_dense_row(buf, gram, n_rows, x)
    delta = 0.0
    if n_rows == buf.shape[0]:
        n_rows, delta = fd_shrink(buf, gram, n_rows, keep, n_shrink, work)
        alpha += 0.5 * delta
    return n_rows, alpha, delta
