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

from ._numba import njit_inline, njit_kernel
from .hashing import cross_namespaces, hash_string
from .vw_text import _expand_wildcards, _namespace_starts

__all__ = ["csv_quote_scan", "hash_text_column", "hashed_features_to_csr", "hashed_rows_to_csr", "new_quote_state"]

#: ``csv_quote_scan``'s state: inside a quoted value; at the start of a field; a quote just read inside a quoted
#: value (it closes the value unless the next byte is a quote too); bytes of a leading UTF-8 byte order mark
#: matched (3 once any other byte is read); the delimiter
Q_QUOTED, Q_FIELD_START, Q_PENDING, Q_BOM, Q_DELIMITER = range(5)
_BOM = (0xEF, 0xBB, 0xBF)


def new_quote_state(delimiter):
    """The state of ``csv_quote_scan`` at the start of a CSV text whose fields are separated by ``delimiter``."""
    state = np.zeros(5, dtype=np.int64)
    state[Q_FIELD_START] = 1
    state[Q_DELIMITER] = ord(delimiter)
    return state


@njit_kernel
def csv_quote_scan(raw, state, inside):
    """Mark the bytes of ``raw`` (uint8, the next bytes of a CSV text) that are inside a quoted value
    (``inside[i] = 1``), carrying ``state`` (``new_quote_state``) from one block to the next, as pyarrow and
    Python's ``csv`` module read quotes: a quote opens a quoted value only at the start of a field (after the
    delimiter or a line end, or at the start of the text after its byte order mark); inside one, ``""`` is a
    quote and a single quote closes it; a quote anywhere else is a character of the value (``12" pizza``). A
    line feed that is not inside a quoted value ends a record. Returns whether the text read so far ends inside
    a quoted value (a quote just read closes it)."""
    q = state[Q_QUOTED]
    start = state[Q_FIELD_START]
    pending = state[Q_PENDING]
    bom = state[Q_BOM]
    delim = state[Q_DELIMITER]
    for i in range(raw.shape[0]):
        c = raw[i]
        if bom < 3:
            if c == _BOM[bom]:
                bom += 1
                inside[i] = 0
                continue
            bom = 3
        if q:
            if pending:
                pending = 0
                if c == 34:  # '""': a quote in the value
                    inside[i] = 1
                    continue
                q = 0  # the quote before closed the value: this byte is outside
                start = 0
            elif c == 34:
                pending = 1
                inside[i] = 1
                continue
            else:
                inside[i] = 1
                continue
        if c == 34 and start:
            q = 1
            start = 0
            inside[i] = 1
        else:
            start = 1 if (c == delim or c == 10 or c == 13) else 0
            inside[i] = 0
    state[Q_QUOTED] = q
    state[Q_FIELD_START] = start
    state[Q_PENDING] = pending
    state[Q_BOM] = bom
    return q == 1 and pending == 0


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
        longest = max(longest, ln)
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


@njit_inline
def _expand_row(
    f_idx, f_val, f_ns, nf, terms, term_lens, has_wildcard, umask, g_idx, g_val, counts, starts, present, o_idx, o_val
):
    """One row's output features, unsorted, into ``o_idx`` / ``o_val``: its ``nf`` features (hash, value,
    namespace byte) masked, then its interactions, combined and ordered exactly as the VW text parser
    (``streamlearn._kernels.vw_text.vw_parse``) combines a line's features: features grouped by namespace
    byte, in their order inside a namespace. Returns the number written, or ``-needed`` when ``o_idx`` is
    too short (nothing usable written)."""
    if terms.shape[0] == 0:  # no interactions: the features as they are
        if nf > o_idx.shape[0]:
            return -nf
        for f in range(nf):
            o_idx[f] = f_idx[f] & umask
            o_val[f] = f_val[f]
        return nf
    # counts / starts are all 0 on entry and are left so: only the row's namespaces are touched
    n_present = 0
    for f in range(nf):
        c = f_ns[f]
        if counts[c] == 0:
            present[n_present] = c
            n_present += 1
        counts[c] += 1
    _namespace_starts(present, n_present, counts, starts)
    for f in range(nf):  # stable grouping by namespace
        c = f_ns[f]
        g_idx[counts[c]] = f_idx[f]
        g_val[counts[c]] = f_val[f]
        counts[c] += 1
    n_out = _row_interactions(
        f_idx=f_idx,
        f_val=f_val,
        g_idx=g_idx,
        g_val=g_val,
        nf=np.int64(nf),
        terms=terms,
        term_lens=term_lens,
        has_wildcard=has_wildcard,
        umask=umask,
        counts=counts,
        starts=starts,
        present=present,
        n_present=np.int64(n_present),
        o_idx=o_idx,
        o_val=o_val,
    )
    for q in range(n_present):
        counts[present[q]] = 0
        starts[present[q]] = 0
    return n_out


@njit_inline
def _row_scratch(width):
    """The buffers of :func:`_append_row` for rows of up to ``width`` features: ``(counts, starts, present,
    g_idx, g_val, o_idx, o_val)`` (the output pair grows when a row's crosses need more)."""
    counts = np.zeros(257, np.int64)
    starts = np.zeros(257, np.int64)
    present = np.zeros(256, np.int64)
    g_idx = np.empty(width, np.uint64)
    g_val = np.empty(width, np.float64)
    o_idx = np.empty(width, np.uint64)
    o_val = np.empty(width, np.float64)
    return counts, starts, present, g_idx, g_val, o_idx, o_val


@njit_inline
def _append_row(f_idx, f_val, f_ns, nf, plan, scratch, out, nnz):
    """One row: :func:`_expand_row` with the interactions and mask ``plan = (terms, term_lens, has_wildcard,
    umask)`` into the buffers of ``scratch`` (the output pair replaced by twice the needed size when it is too
    short), then :func:`_emit_row` into ``out = (indices, data)`` at ``nnz``. Returns ``(nnz, scratch)``: the
    new ``nnz``, or -1 if the row does not fit in ``out``."""
    terms, term_lens, has_wildcard, umask = plan
    indices, data = out
    counts, starts, present, g_idx, g_val, o_idx, o_val = scratch
    for _ in range(2):  # the second call has room: the first said how much it needs
        n_out = _expand_row(
            f_idx=f_idx,
            f_val=f_val,
            f_ns=f_ns,
            nf=nf,
            terms=terms,
            term_lens=term_lens,
            has_wildcard=has_wildcard,
            umask=umask,
            g_idx=g_idx,
            g_val=g_val,
            counts=counts,
            starts=starts,
            present=present,
            o_idx=o_idx,
            o_val=o_val,
        )
        if n_out >= 0:
            break
        o_idx = np.empty(-2 * n_out, np.uint64)
        o_val = np.empty(-2 * n_out, np.float64)
    scratch = (counts, starts, present, g_idx, g_val, o_idx, o_val)
    if nnz + n_out > indices.shape[0]:
        return -1, scratch
    return _emit_row(o_idx, o_val, n_out, indices, data, nnz), scratch


@njit_kernel
def _row_interactions(
    f_idx,
    f_val,
    g_idx,
    g_val,
    nf,
    terms,
    term_lens,
    has_wildcard,
    umask,
    counts,
    starts,
    present,
    n_present,
    o_idx,
    o_val,
):
    """The body of :func:`_expand_row` once the row's features are also grouped by namespace (``g_*``):
    the features in row order (as the VW parser lists them, so that colliding values are summed in the
    same order), then the crosses."""
    if has_wildcard:
        rterms, rlens = _expand_wildcards(terms, term_lens, present, np.int64(n_present))
    else:
        rterms, rlens = terms, term_lens
    need = nf
    if nf > 0:
        for t in range(rterms.shape[0]):
            k = counts[rterms[t, 0]] - starts[rterms[t, 0]]
            k *= counts[rterms[t, 1]] - starts[rterms[t, 1]]
            if rlens[t] == 3:
                k *= counts[rterms[t, 2]] - starts[rterms[t, 2]]
            need += k
    if need > o_idx.shape[0]:
        return -need
    for f in range(nf):
        o_idx[f] = f_idx[f] & umask
        o_val[f] = f_val[f]
    n_out = nf
    if nf == 0:
        return 0
    return cross_namespaces(
        terms=rterms,
        term_lens=rlens,
        starts=starts,
        ends=counts,
        g_idx=g_idx,
        g_val=g_val,
        umask=umask,
        o_idx=o_idx,
        o_val=o_val,
        n_out=n_out,
        cap=o_idx.shape[0],
    )


@njit_kernel
def _sort_pairs(idx, val, n):
    """Sort ``idx[:n]`` ascending, carrying ``val``; stable (equal indices keep their order, so colliding
    values are summed in the order the VW parser sums them)."""
    if n <= 64:
        for i in range(1, n):
            a = idx[i]
            b = val[i]
            j = i - 1
            while j >= 0 and idx[j] > a:
                idx[j + 1] = idx[j]
                val[j + 1] = val[j]
                j -= 1
            idx[j + 1] = a
            val[j + 1] = b
    else:
        order = np.argsort(idx[:n], kind="mergesort")
        ti = idx[:n][order]
        tv = val[:n][order]
        idx[:n] = ti
        val[:n] = tv


@njit_inline
def _emit_row(o_idx, o_val, n_out, indices, data, nnz):
    """Sort a row's features, sum duplicates, drop zero sums, append at ``nnz``; returns the new ``nnz``."""
    _sort_pairs(o_idx, o_val, n_out)
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
    return nnz


@njit_kernel
def hashed_rows_to_csr(hashes, values, col_ns, terms, term_lens, has_wildcard, mask, indptr, indices, data):
    """CSR rows from ``(n_columns, n_rows)`` tables of hashes (uint64) and values, with interactions.

    Row ``i`` holds, for every column ``c`` whose value is neither 0 nor NaN, the feature ``hashes[c, i]``
    with value ``values[c, i]`` in the namespace whose first byte is ``col_ns[c]``, in column order; then,
    for every interaction term (``terms``/``term_lens`` as ``canonical_terms`` gives them, ``WILDCARD`` for
    ':'), the crossed features of those namespaces, as :func:`_expand_row` generates them. Indices are
    masked, sorted and duplicates summed (a sum of 0 is dropped). ``indptr`` has ``n_rows + 1`` entries;
    ``indices`` / ``data`` need room for every generated feature. Returns the number of non-zeros written,
    or ``-1 - i`` if row ``i`` did not fit.
    """
    n_cols, n_rows = values.shape
    plan = (terms, term_lens, has_wildcard, np.uint64(mask))
    out = (indices, data)
    f_idx = np.empty(max(n_cols, 1), np.uint64)
    f_val = np.empty(max(n_cols, 1), np.float64)
    f_ns = np.empty(max(n_cols, 1), np.int64)
    scratch = _row_scratch(max(n_cols, 1))
    nnz = 0
    indptr[0] = 0
    for i in range(n_rows):
        nf = 0
        for c in range(n_cols):
            v = values[c, i]
            if v == 0.0 or v != v:
                continue
            f_idx[nf] = hashes[c, i]
            f_val[nf] = v
            f_ns[nf] = col_ns[c]
            nf += 1
        nnz, scratch = _append_row(
            f_idx=f_idx, f_val=f_val, f_ns=f_ns, nf=nf, plan=plan, scratch=scratch, out=out, nnz=nnz
        )
        if nnz < 0:
            return -1 - i
        indptr[i + 1] = nnz
    return nnz


@njit_kernel
def hashed_features_to_csr(
    rows, hashes, values, ns, n_rows, terms, term_lens, has_wildcard, mask, indptr, indices, data
):
    """CSR rows from features listed row after row (``rows`` non-decreasing): feature ``f`` has hash
    ``hashes[f]``, value ``values[f]`` and namespace byte ``ns[f]``; interactions, masking, sorting and
    summing as in :func:`hashed_rows_to_csr`. Returns the number of non-zeros written, or ``-1 - i`` if
    row ``i`` did not fit in ``indices`` / ``data``."""
    plan = (terms, term_lens, has_wildcard, np.uint64(mask))
    out = (indices, data)
    n = rows.shape[0]
    longest = 1
    f = 0
    while f < n:
        g = f
        while g < n and rows[g] == rows[f]:
            g += 1
        longest = max(longest, g - f)
        f = g
    scratch = _row_scratch(longest)
    nnz = 0
    f = 0
    indptr[0] = 0
    for i in range(n_rows):
        g = f
        while g < n and rows[g] == i:
            g += 1
        nnz, scratch = _append_row(
            f_idx=hashes[f:g], f_val=values[f:g], f_ns=ns[f:g], nf=g - f, plan=plan, scratch=scratch, out=out, nnz=nnz
        )
        if nnz < 0:
            return -1 - i
        indptr[i + 1] = nnz
        f = g
    return nnz
