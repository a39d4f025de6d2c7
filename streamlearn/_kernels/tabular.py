"""Feature hashing of table columns (numba): Arrow string buffers in, per-row hashed features out.

The Python layer (``streamlearn.datasets._tabular``) hands each column of a record batch over as plain
arrays: a text column as its Arrow ``offsets`` and ``data`` buffers plus a validity mask, a numeric column as
float64 values. ``hash_text_column`` hashes every present cell as the feature ``column=value`` (the
column's name and ``=`` are the ``prefix``), with the namespace's hash as seed, exactly as Vowpal Wabbit
hashes the feature ``column=value`` written in that namespace. ``hashed_rows_to_csr`` turns the
``(n_columns, n_rows)`` tables of hashes and values into CSR rows: absent cells (value 0 or NaN) are
skipped, indices are the hashes masked to ``bits`` bits, sorted, and colliding features are summed.
"""

import numpy as np

from ._numba import njit_kernel
from .hashing import hash_string

__all__ = ["hash_text_column", "hashed_rows_to_csr", "hashed_features_to_csr"]


@njit_kernel
def hash_text_column(offsets, data, valid, prefix, seed, out_hash, out_value):
    """For every row ``i`` with ``valid[i]``: ``out_hash[i] = hash_string(prefix + data[offsets[i]:offsets[i +
    1]], seed)`` (VW's hash of that name; uint64) and ``out_value[i] = 1``; ``out_value[i] = 0`` (absent) for
    the other rows.

    ``offsets`` are the ``n + 1`` Arrow offsets (int32 or int64) of the column's slice, ``data`` its uint8
    data buffer, ``prefix`` the uint8 bytes of ``column=``. O(total bytes).
    """
    n = offsets.shape[0] - 1
    p = prefix.shape[0]
    longest = 0
    for i in range(n):
        ln = offsets[i + 1] - offsets[i]
        if ln > longest:
            longest = ln
    buf = np.empty(p + longest, dtype=np.uint8)
    for k in range(p):
        buf[k] = prefix[k]
    for i in range(n):
        if not valid[i]:
            out_value[i] = 0.0
            continue
        start = offsets[i]
        ln = offsets[i + 1] - start
        for k in range(ln):
            buf[p + k] = data[start + k]
        out_hash[i] = hash_string(buf, 0, p + ln, seed)
        out_value[i] = 1.0


@njit_kernel
def hashed_rows_to_csr(hashes, values, mask, indptr, indices, data):
    """CSR rows from ``(n_columns, n_rows)`` tables: row ``i`` holds ``hashes[c, i] & mask`` with value
    ``values[c, i]`` for every column ``c`` whose value is neither 0 nor NaN, sorted by index, colliding
    features summed (a sum that cancels to 0 is kept as an explicit 0).

    ``indptr`` has ``n_rows + 1`` entries; ``indices`` / ``data`` at least ``n_columns * n_rows``. Returns the
    number of non-zeros written.
    """
    n_cols, n_rows = values.shape
    nnz = 0
    indptr[0] = 0
    for i in range(n_rows):
        start = nnz
        for c in range(n_cols):
            v = values[c, i]
            if v == 0.0 or v != v:
                continue
            j = np.int64(hashes[c, i] & mask)
            # insertion into the sorted row; a collision adds to the existing entry
            pos = nnz
            while pos > start and indices[pos - 1] > j:
                pos -= 1
            if pos > start and indices[pos - 1] == j:
                data[pos - 1] += v
                continue
            for q in range(nnz, pos, -1):
                indices[q] = indices[q - 1]
                data[q] = data[q - 1]
            indices[pos] = j
            data[pos] = v
            nnz += 1
        indptr[i + 1] = nnz
    return nnz


@njit_kernel
def hashed_features_to_csr(rows, hashes, values, n_rows, mask, indptr, indices, data):
    """CSR rows from features listed in any order: feature ``f`` is ``hashes[f] & mask`` with value
    ``values[f]`` in row ``rows[f]``; each row sorted by index, collisions summed. Returns the number of
    non-zeros written (``indices`` / ``data`` need room for ``len(rows)`` entries)."""
    counts = np.zeros(n_rows + 1, dtype=np.int64)
    for f in range(rows.shape[0]):
        counts[rows[f] + 1] += 1
    for i in range(n_rows):
        counts[i + 1] += counts[i]
    order = np.empty(rows.shape[0], dtype=np.int64)
    fill = counts[:n_rows].copy()
    for f in range(rows.shape[0]):
        order[fill[rows[f]]] = f
        fill[rows[f]] += 1
    nnz = 0
    indptr[0] = 0
    for i in range(n_rows):
        start = nnz
        for q in range(counts[i], counts[i + 1]):
            f = order[q]
            v = values[f]
            j = np.int64(hashes[f] & mask)
            pos = nnz
            while pos > start and indices[pos - 1] > j:
                pos -= 1
            if pos > start and indices[pos - 1] == j:
                data[pos - 1] += v
                continue
            for r in range(nnz, pos, -1):
                indices[r] = indices[r - 1]
                data[r] = data[r - 1]
            indices[pos] = j
            data[pos] = v
            nnz += 1
        indptr[i + 1] = nnz
    return nnz
