"""Feature hashing of table columns (numba): Arrow string buffers in, per-row hashed features out.

The Python layer (``streamlearn.datasets._tabular``) hands each column of a record batch over as plain
arrays: a text column as its Arrow ``offsets`` and ``data`` buffers plus a validity mask, a numeric column as
float64 values. ``hash_text_column`` hashes every present cell as the feature ``column=value`` (the
column's name and ``=`` are the ``prefix``), with the namespace's hash as seed, exactly as Vowpal Wabbit
hashes the feature ``column=value`` written in that namespace. ``hashed_rows_to_csr`` turns the
``(n_columns, n_rows)`` tables of hashes and values into CSR rows: absent cells (value 0 or NaN) are
skipped, interactions (``-q``/``--cubic``) are generated per row as the VW text parser generates them,
indices are masked to ``bits`` bits and sorted, and colliding features are summed.
"""

import numpy as np

from ._numba import njit_kernel
from .hashing import combine2, combine3, hash_string
from .vw_text import _expand_wildcards, _sort_row

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
def hashed_rows_to_csr(hashes, values, col_ns, terms, term_lens, has_wildcard, mask, indptr, indices, data):
    """CSR rows from ``(n_columns, n_rows)`` tables of hashes (uint64) and values, with interactions.

    Row ``i`` holds, for every column ``c`` whose value is neither 0 nor NaN, the feature ``hashes[c, i]``
    with value ``values[c, i]`` in the namespace whose first byte is ``col_ns[c]``, in column order; then,
    for every interaction term (``terms``/``term_lens`` as ``canonical_terms`` gives them, ``WILDCARD`` for
    ':'), the crossed features of those namespaces, combined and ordered exactly as the VW text parser
    (``streamlearn._kernels.vw_text.vw_parse``) combines a line's features. Indices are masked, sorted and
    duplicates summed (a sum of 0 is dropped). ``indptr`` has ``n_rows + 1`` entries; ``indices`` / ``data``
    need room for every generated feature. Returns the number of non-zeros written.
    """
    n_cols, n_rows = values.shape
    umask = np.uint64(mask)
    # columns grouped by namespace byte (stable: column order inside a namespace)
    order = np.argsort(col_ns, kind="mergesort")
    counts = np.zeros(257, np.int64)
    starts = np.zeros(257, np.int64)
    present = np.zeros(256, np.int64)
    s_idx = np.empty(n_cols, np.uint64)
    s_val = np.empty(n_cols, np.float64)
    cap = indices.shape[0]
    o_idx = np.empty(max(n_cols, 1), np.uint64)
    o_val = np.empty(max(n_cols, 1), np.float64)
    nnz = 0
    indptr[0] = 0
    for i in range(n_rows):
        for c in range(257):
            counts[c] = 0
        nf = 0
        for q in range(n_cols):
            c = order[q]
            v = values[c, i]
            if v == 0.0 or v != v:
                continue
            s_idx[nf] = hashes[c, i]
            s_val[nf] = v
            counts[col_ns[c]] += 1
            nf += 1
        acc = 0
        n_present = 0
        for c in range(256):
            starts[c] = acc
            acc += counts[c]
            if counts[c] > 0:
                present[n_present] = c
                n_present += 1
        for c in range(256):
            counts[c] = starts[c] + counts[c]  # end of namespace c's features in s_idx
        # the row's features, then its interactions, into o_idx / o_val
        n_out = nf
        if terms.shape[0] > 0 and nf > 0:
            if has_wildcard:
                rterms, rlens = _expand_wildcards(terms, term_lens, present, n_present)
            else:
                rterms, rlens = terms, term_lens
            for t in range(rterms.shape[0]):
                a = rterms[t, 0]
                b = rterms[t, 1]
                na = counts[a] - starts[a]
                nb = counts[b] - starts[b]
                if rlens[t] == 2:
                    n_out += na * nb
                else:
                    n_out += na * nb * (counts[rterms[t, 2]] - starts[rterms[t, 2]])
        else:
            rterms, rlens = terms, term_lens
        if n_out > o_idx.shape[0]:
            o_idx = np.empty(2 * n_out, np.uint64)
            o_val = np.empty(2 * n_out, np.float64)
        for f in range(nf):
            o_idx[f] = s_idx[f] & umask
            o_val[f] = s_val[f]
        n_out = nf
        if terms.shape[0] > 0 and nf > 0:
            for t in range(rterms.shape[0]):
                a = rterms[t, 0]
                b = rterms[t, 1]
                a0 = starts[a]
                a1 = counts[a]
                b0 = starts[b]
                b1 = counts[b]
                if a1 == a0 or b1 == b0:
                    continue
                if rlens[t] == 2:
                    for p in range(a0, a1):
                        jst = b0 + (p - a0) if a == b else b0
                        for r in range(jst, b1):
                            o_idx[n_out] = combine2(s_idx[p], s_idx[r]) & umask
                            o_val[n_out] = s_val[p] * s_val[r]
                            n_out += 1
                else:
                    cc = rterms[t, 2]
                    c0 = starts[cc]
                    c1 = counts[cc]
                    if c1 == c0:
                        continue
                    for p in range(a0, a1):
                        jst = b0 + (p - a0) if a == b else b0
                        for r in range(jst, b1):
                            kst = c0 + (r - b0) if b == cc else c0
                            for k in range(kst, c1):
                                o_idx[n_out] = combine3(s_idx[p], s_idx[r], s_idx[k]) & umask
                                o_val[n_out] = s_val[p] * s_val[r] * s_val[k]
                                n_out += 1
        _sort_row(o_idx, o_val, n_out)
        if nnz + n_out > cap:
            return -1 - i  # not enough room: the caller grows the arrays and calls again
        f = 0
        while f < n_out:
            cur = o_idx[f]
            sv = 0.0
            while f < n_out and o_idx[f] == cur:
                sv += o_val[f]
                f += 1
            if sv != 0.0:
                indices[nnz] = cur
                data[nnz] = sv
                nnz += 1
        indptr[i + 1] = nnz
    return nnz


@njit_kernel
def hashed_features_to_csr(rows, hashes, values, n_rows, mask, indptr, indices, data):
    """CSR rows from features listed in any order: feature ``f`` is ``hashes[f] & mask`` with value
    ``values[f]`` in row ``rows[f]``; each row sorted by index, collisions summed (a sum of 0 is dropped, as
    in ``hashed_rows_to_csr``). Returns the number of non-zeros written (``indices`` / ``data`` need room for
    ``len(rows)`` entries)."""
    umask = np.uint64(mask)
    counts = np.zeros(n_rows + 1, dtype=np.int64)
    for f in range(rows.shape[0]):
        counts[rows[f] + 1] += 1
    longest = 0
    for i in range(n_rows):
        longest = max(longest, counts[i + 1])
        counts[i + 1] += counts[i]
    order = np.empty(rows.shape[0], dtype=np.int64)
    fill = counts[:n_rows].copy()
    for f in range(rows.shape[0]):
        order[fill[rows[f]]] = f
        fill[rows[f]] += 1
    o_idx = np.empty(max(longest, 1), np.uint64)
    o_val = np.empty(max(longest, 1), np.float64)
    nnz = 0
    indptr[0] = 0
    for i in range(n_rows):
        n = 0
        for q in range(counts[i], counts[i + 1]):
            f = order[q]
            o_idx[n] = hashes[f] & umask
            o_val[n] = values[f]
            n += 1
        _sort_row(o_idx, o_val, n)
        f = 0
        while f < n:
            cur = o_idx[f]
            sv = 0.0
            while f < n and o_idx[f] == cur:
                sv += o_val[f]
                f += 1
            if sv != 0.0:
                indices[nnz] = cur
                data[nnz] = sv
                nnz += 1
        indptr[i + 1] = nnz
    return nnz
