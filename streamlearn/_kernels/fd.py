"""Frequent-directions family: append rows to a (cap, d) buffer and shrink it through its Gram matrix.

State shared by FD, fast FD, PFD, CFD and RFD (Algorithms §5.1-5.6), all plain arrays:

* ``buf`` (cap, d) float64: rows ``[0, n_rows)`` are the current buffer B-hat (cap = ell for the exact
  Alg. 1, 2 * ell for the doubling-space Alg. 4 / 5);
* ``gram`` (cap, cap) float64: ``gram[:n_rows, :n_rows] == B-hat B-hat^T`` (kept up to date row by row,
  or block-wise by the dense chunk kernel);
* ``n_rows``: the number of rows in use.

A shrink keeps ``keep`` rows and subtracts ``delta = s_{keep+1}^2`` (the largest squared singular value
that is discarded, Algorithms §5.3) from the squared singular values of the last ``n_shrink`` kept rows
(all of them for FD; fewer for PFD). It never takes a d-wide SVD: with ``G = B-hat B-hat^T = U L U^T``
(an eigendecomposition of a cap x cap matrix), the new rows are ``W B-hat`` with
``W = diag(sqrt((l_i - delta_i) / l_i)) U_keep^T``, whose Gram matrix is ``W G W^T``; ``W B-hat`` costs
one (keep x n_rows) by (n_rows x d) product (BLAS for dense rows, O(keep * nnz) for sparse rows).
Every shrink returns ``delta``: RFD adds ``delta / 2`` to its alpha, CFD sums the deltas.

Sparse rows stay sparse until the buffer is reduced: ``fd_fit_csr`` keeps the rows that arrived since
the last shrink as references into the input CSR chunk, borders the Gram matrix with sparse dot
products (O(n_rows * nnz) per row) and densifies only the rows still pending when the chunk ends.

The per-row functions (``fd_append_dense_row``, ``fd_append_csr_row``, ``fd_shrink``,
``fd_woodbury_solve``) are plain jitted functions on the same arrays, callable per example from other
kernels (the sketched online Newton step).
"""

import math

import numpy as np

from ._numba import njit_kernel
from .linear import sparse_row_dot

#: Relative size below which an eigenvalue of the buffer's Gram matrix counts as zero (its row is dropped).
RANK_TOL = 4.0e-16


@njit_kernel
def fd_n_shrink(beta, keep):
    """How many of ``keep`` retained values a PFD-``beta`` shrink touches (``keep`` for ``beta = 1``).

    floor(beta * m) values are affected per shrink with m = keep + 1 (the m-th, the discarded one, is
    always among them), so ``floor(beta * (keep + 1)) - 1`` kept values are shrunk.
    """
    n = int(math.floor(beta * (keep + 1) + 1e-9)) - 1
    if n < 0:
        n = 0
    if n > keep:
        n = keep
    return n


@njit_kernel
def block_copy(a, rows, cols, transpose):
    """A C-contiguous copy of ``a[:rows, :cols]``, or with ``transpose`` of its transpose ((cols, rows)): the one
    form in which the sketch kernels hand blocks to ``np.dot`` (one compiled product for every caller)."""
    if transpose:
        out = np.empty((cols, rows))
        for i in range(rows):
            for j in range(cols):
                out[j, i] = a[i, j]
    else:
        out = np.empty((rows, cols))
        for i in range(rows):
            for j in range(cols):
                out[i, j] = a[i, j]
    return out


@njit_kernel
def fd_rotation(gram, n_rows, keep, n_shrink):
    """The shrink of ``gram[:n_rows, :n_rows]``: returns ``(rot, k, delta, new_gram)``.

    ``rot`` (k, n_rows) maps the buffer rows to the ``k = min(keep, n_rows)`` new rows, ``new_gram`` is
    their Gram matrix and ``delta`` the squared singular value subtracted (0 when ``n_rows <= keep``).
    """
    g = np.empty((n_rows, n_rows))
    for i in range(n_rows):
        for j in range(n_rows):
            g[i, j] = 0.5 * (gram[i, j] + gram[j, i])
    lam, u = np.linalg.eigh(g)  # ascending
    top = lam[n_rows - 1]
    if top < 0.0:
        top = 0.0
    delta = 0.0
    if n_rows > keep:
        delta = lam[n_rows - 1 - keep]
        if delta < 0.0:
            delta = 0.0
    k = min(keep, n_rows)
    tiny = top * n_rows * RANK_TOL
    first_shrunk = keep - n_shrink
    rot = np.zeros((k, n_rows))
    for i in range(k):
        li = lam[n_rows - 1 - i]
        c = 0.0
        if li > tiny:
            target = li - delta if i >= first_shrunk else li
            if target > 0.0:
                c = math.sqrt(target / li)
        if c != 0.0:
            # sign convention: the largest entry of the eigenvector is positive (LAPACK's sign can flip under
            # rounding-level changes of gram; this keeps the new rows reproducible, e.g. across chunkings)
            col = n_rows - 1 - i
            big = 0
            for j in range(1, n_rows):
                if abs(u[j, col]) > abs(u[big, col]):
                    big = j
            if u[big, col] < 0.0:
                c = -c
            for j in range(n_rows):
                rot[i, j] = c * u[j, col]
    new_gram = np.dot(np.dot(rot, g), block_copy(rot, k, n_rows, np.bool_(True)))
    for i in range(k):
        for j in range(i):
            s = 0.5 * (new_gram[i, j] + new_gram[j, i])
            new_gram[i, j] = s
            new_gram[j, i] = s
    return rot, k, delta, new_gram


@njit_kernel
def _shrink_mixed(buf, gram, n_rows, n_dense, indptr, indices, data, first_pending, keep, n_shrink, work):
    """Shrink a buffer whose rows ``[n_dense, n_rows)`` are CSR rows ``first_pending, ...`` of a chunk."""
    rot, k, delta, new_gram = fd_rotation(gram, n_rows, keep, n_shrink)
    d = buf.shape[1]
    if n_dense > 0:
        rot_dense = np.ascontiguousarray(rot[:, :n_dense])
        np.dot(rot_dense, buf[:n_dense], work[:k])
    else:
        for i in range(k):
            for j in range(d):
                work[i, j] = 0.0
    for jj in range(n_rows - n_dense):
        row = first_pending + jj
        col = n_dense + jj
        for p in range(indptr[row], indptr[row + 1]):
            c = indices[p]
            v = data[p]
            for i in range(k):
                work[i, c] += rot[i, col] * v
    for i in range(k):
        for j in range(d):
            buf[i, j] = work[i, j]
        for j in range(k):
            gram[i, j] = new_gram[i, j]
    return k, delta


@njit_kernel
def fd_shrink(buf, gram, n_rows, keep, n_shrink, work):
    """Shrink the dense buffer ``buf[:n_rows]`` to ``min(keep, n_rows)`` rows; returns ``(k, delta)``.

    ``work`` is a (>= keep, d) scratch array. ``gram`` must hold the buffer's Gram matrix.
    """
    empty_i = np.zeros(1, dtype=np.int64)
    empty_f = np.zeros(0, dtype=np.float64)
    return _shrink_mixed(
        buf=buf,
        gram=gram,
        n_rows=n_rows,
        n_dense=n_rows,
        indptr=empty_i,
        indices=empty_i,
        data=empty_f,
        first_pending=np.int64(0),
        keep=keep,
        n_shrink=n_shrink,
        work=work,
    )


@njit_kernel
def fd_append_dense_row(buf, gram, n_rows, x):
    """Append the dense row ``x`` as row ``n_rows`` and border the Gram matrix; returns ``n_rows + 1``.

    The caller shrinks (``fd_shrink``) when the buffer is full. Cost O(n_rows * d).
    """
    d = buf.shape[1]
    for j in range(d):
        buf[n_rows, j] = x[j]
    for i in range(n_rows):
        acc = 0.0
        for j in range(d):
            acc += buf[i, j] * x[j]
        gram[i, n_rows] = acc
        gram[n_rows, i] = acc
    acc = 0.0
    for j in range(d):
        acc += x[j] * x[j]
    gram[n_rows, n_rows] = acc
    return n_rows + 1


@njit_kernel
def fd_append_csr_row(buf, gram, n_rows, indices, data):
    """Append one sparse row (its column ``indices`` and ``data``) as row ``n_rows``; returns ``n_rows + 1``.

    Cost O(d) to clear the row plus O(n_rows * nnz) for the Gram border.
    """
    d = buf.shape[1]
    for j in range(d):
        buf[n_rows, j] = 0.0
    sq = 0.0
    for p in range(indices.shape[0]):
        buf[n_rows, indices[p]] += data[p]
        sq += data[p] * data[p]
    for i in range(n_rows):
        acc = sparse_row_dot(buf, i, indices, data, 0, indices.shape[0])
        gram[i, n_rows] = acc
        gram[n_rows, i] = acc
    gram[n_rows, n_rows] = sq
    return n_rows + 1


@njit_kernel
def fd_fit_csr(indptr, indices, data, buf, gram, n_rows, keep, n_shrink, work, scratch):
    """Stream the rows of a CSR chunk through the buffer (cap = ``buf.shape[0]`` rows).

    Shrinks to ``keep`` rows whenever the buffer is full. ``scratch`` is a zeroed (d,) array (left zeroed).
    Returns ``(n_rows, delta_sum, n_shrinks)``: the rows in use afterwards, the sum of the deltas
    subtracted and the number of shrinks.
    """
    cap = buf.shape[0]
    d = buf.shape[1]
    n = indptr.shape[0] - 1
    n_dense = n_rows
    first_pending = np.int64(0)  # (a literal 0 would compile _shrink_mixed a second time, for Literal[int](0))
    delta_sum = 0.0
    n_shrinks = 0
    for t in range(n):
        start = indptr[t]
        end = indptr[t + 1]
        for i in range(n_dense):
            acc = sparse_row_dot(buf, i, indices, data, start, end)
            gram[i, n_rows] = acc
            gram[n_rows, i] = acc
        sq = 0.0
        for p in range(start, end):
            scratch[indices[p]] = data[p]
            sq += data[p] * data[p]
        for jj in range(t - first_pending):
            row = first_pending + jj
            acc = 0.0
            for p in range(indptr[row], indptr[row + 1]):
                acc += scratch[indices[p]] * data[p]
            gram[n_dense + jj, n_rows] = acc
            gram[n_rows, n_dense + jj] = acc
        for p in range(start, end):
            scratch[indices[p]] = 0.0
        gram[n_rows, n_rows] = sq
        n_rows += 1
        if n_rows == cap:
            k, delta = _shrink_mixed(
                buf=buf,
                gram=gram,
                n_rows=n_rows,
                n_dense=n_dense,
                indptr=indptr,
                indices=indices,
                data=data,
                first_pending=first_pending,
                keep=keep,
                n_shrink=n_shrink,
                work=work,
            )
            delta_sum += delta
            n_shrinks += 1
            n_rows = k
            n_dense = k
            first_pending = t + 1
    # densify the rows still pending
    for jj in range(n - first_pending):
        row = first_pending + jj
        r = n_dense + jj
        for j in range(d):
            buf[r, j] = 0.0
        for p in range(indptr[row], indptr[row + 1]):
            buf[r, indices[p]] = data[p]
    return n_rows, delta_sum, n_shrinks


@njit_kernel
def _gram_block(buf, gram, r0, r1):
    """Fill the Gram rows/columns of buffer rows ``[r0, r1)`` (one BLAS product)."""
    if r1 <= r0:
        return
    block = np.dot(buf[r0:r1], buf[:r1].T)
    for i in range(r1 - r0):
        for j in range(r1):
            gram[r0 + i, j] = block[i, j]
            gram[j, r0 + i] = block[i, j]


@njit_kernel
def fd_fit_dense(X, buf, gram, n_rows, keep, n_shrink, work):
    """Stream the rows of a dense C-contiguous chunk ``X`` through the buffer (as ``fd_fit_csr``).

    Rows are copied into the buffer; the Gram matrix of the new rows is computed block-wise (BLAS) when
    the buffer is full and at the end of the chunk. Returns ``(n_rows, delta_sum, n_shrinks)``.
    """
    cap = buf.shape[0]
    d = buf.shape[1]
    n = X.shape[0]
    r_gram = n_rows
    delta_sum = 0.0
    n_shrinks = 0
    for t in range(n):
        for j in range(d):
            buf[n_rows, j] = X[t, j]
        n_rows += 1
        if n_rows == cap:
            _gram_block(buf, gram, r_gram, n_rows)
            k, delta = fd_shrink(buf, gram, n_rows, keep, n_shrink, work)
            delta_sum += delta
            n_shrinks += 1
            n_rows = k
            r_gram = k
    _gram_block(buf, gram, r_gram, n_rows)
    return n_rows, delta_sum, n_shrinks


@njit_kernel
def block_matvec(M, r, q, v, out):
    """``out[:r] = M[:r, :q] v[:q]`` (plain loops, summed left to right: no BLAS call for small blocks)."""
    for a in range(r):
        acc = 0.0
        for b in range(q):
            acc += M[a, b] * v[b]
        out[a] = acc


@njit_kernel
def fd_woodbury_solve(buf, gram, n_rows, alpha, v, out):
    """``out = (B^T B + alpha I)^{-1} v`` with ``B = buf[:n_rows]``, by Woodbury in O(n_rows * d + n_rows^3).

    ``(alpha I + B^T B)^{-1} = (I - B^T (alpha I + B B^T)^{-1} B) / alpha``; needs ``alpha > 0``.
    """
    d = buf.shape[1]
    r = n_rows
    m = np.empty((r, r))
    for i in range(r):
        for j in range(r):
            m[i, j] = 0.5 * (gram[i, j] + gram[j, i])
        m[i, i] += alpha
    bv = np.zeros(r)
    block_matvec(buf, r, d, v, bv)
    z = np.linalg.solve(m, bv) if r > 0 else bv
    for j in range(d):
        out[j] = v[j]
    for i in range(r):
        zi = z[i]
        for j in range(d):
            out[j] -= buf[i, j] * zi
    for j in range(d):
        out[j] /= alpha
