"""Vowpal Wabbit text format parser and feature hasher over raw bytes (numba).

``vw_parse`` parses complete lines of a byte buffer into CSR rows whose columns are hashed buckets
(``index & mask``), with labels, importance weights and tag offsets. Interactions (``-q``/``--cubic``) are
generated per row from the row's namespaces. The Python layer (``streamlearn.datasets._vw``) reads the
file in blocks, carries the partial last line over, grows the arrays and turns error codes into messages.

Line grammar (as VW reads it)::

    line     := [label_section] ('|' namespace)*
    label_section: the text before the first '|'; if it holds a tab, only what follows the first tab.
                   Split on spaces; the last word is the tag if it starts with "'" (quote dropped) or
                   ends right at the '|'. The other words: label [importance [initial]].
    namespace := (name [':' float] | <nothing: the default namespace ' '>) (whitespace feature)*
    feature   := name                  value 1
               | name ':' float        value float (times the namespace weight)
               | name ':' string       "chained" feature: hash(string, hash(name, ns)), value 1
               | ':' float             anonymous feature: index ns_hash + k (k-th anonymous in its namespace)
    A value VW's float parser reads as a number though it is no valid one is an error: one starting with
    inf or nan (``x:info`` is infinity to VW), or one with no digit before a space, tab or line end
    (``x:-``, ``x:e5``: 0 to VW, which drops the feature).

A namespace is identified by its first byte (``|user`` and ``|u`` are the same namespace for
interactions, ``--ignore`` and ``--keep``); its name seeds the hash of its features. Zero-valued
features are dropped. Blank lines are skipped. A UTF-8 byte order mark at a line start is skipped.
"""

import numpy as np

from ._numba import njit_inline, njit_kernel
from .hashing import CONSTANT_HASH, cross_namespaces, hash_string
from .svmlight import _NUM_BAD, _NUM_HARD, _NUM_NONFINITE, _parse_float

ST_NEED_INPUT = 0
ST_DONE = 1
ST_ROWS_FULL = 2
ST_NEED_SPACE = 3  # output arrays full (current line rolled back)
ST_NEED_SCRATCH = 4  # row scratch too small: state[S_AUX] is the size needed
ST_ERROR = 5

E_LABEL = 1  # label not a number / not allowed by the label convention
E_IMPORTANCE = 2  # importance weight not a finite number >= 0
E_TOO_MANY = 3  # more than label, importance, initial and a tag before the first '|'
E_NOVALUE = 4  # ':' with no value
E_VALUE = 5  # value starts like a number but is not one
E_NONFINITE = 6  # nan / inf value
E_NS_WEIGHT = 7  # bad namespace weight
E_NS_NAME = 8  # '|' followed by ':' (no namespace name)
E_NO_LABEL = 9  # a label is required but the line has none
E_INITIAL = 10  # initial prediction is not a number
E_DIGITLESS = 11  # a value VW reads as the number 0 though it has no digit ('-', '.', 'e5')

S_POS = 0
S_LINE = 1
S_ROWS = 2
S_NNZ = 3
S_ERR_CODE = 4
S_ERR_POS = 5
S_ERR_END = 6
S_ERR_LINE = 7
S_AUX = 8
STATE_LEN = 9

LABEL_REGRESSION = 0
LABEL_PM1 = 1
LABEL_01 = 2
LABEL_MULTICLASS = 3

CONSTANT_NAMESPACE = 128
WILDCARD = -1


@njit_inline
def _is_delim(c):
    # end of a name: space, tab, '|', '\r', ':'
    return c == 32 or c == 9 or c == 124 or c == 13 or c == 58


@njit_inline
def _is_feat_end(c):
    return c == 32 or c == 9 or c == 124 or c == 13


@njit_kernel
def _number(buf, p, end):
    """(value, next position, status) with a slow exact-enough fallback for > 19 significant digits."""
    v, q, st = _parse_float(buf, p, end)
    if st == _NUM_HARD:
        # rare: more than 19 significant digits, ties, subnormals; accumulate in float (VW uses float32)
        neg = False
        r = p
        if buf[r] == 45 or buf[r] == 43:
            neg = buf[r] == 45
            r += 1
        m = 0.0
        e10 = 0
        seen_dot = False
        while r < q:
            c = buf[r]
            if 48 <= c <= 57:
                m = m * 10.0 + (c - 48)
                if seen_dot:
                    e10 -= 1
            elif c == 46:
                seen_dot = True
            else:
                r += 1
                eneg = False
                if buf[r] == 45 or buf[r] == 43:
                    eneg = buf[r] == 45
                    r += 1
                ee = 0
                while r < q:
                    ee = min(ee * 10 + (buf[r] - 48), 100000)
                    r += 1
                e10 += -ee if eneg else ee
                break
            r += 1
        v = m * 10.0**e10
        if neg:
            v = -v
        st = 0 if np.isfinite(v) else _NUM_NONFINITE
    return v, q, st


_POW10 = np.array([10.0**k for k in range(23)])


@njit_inline
def _num_token(buf, s, e):
    """``_number`` over the whole token ``buf[s:e]``, with an inline fast path for plain decimals of at most
    15 digits (exact: both operands of the single division are exact doubles, as in Clinger's method)."""
    p = s
    neg = False
    if p < e and (buf[p] == 45 or buf[p] == 43):
        neg = buf[p] == 45
        p += 1
    man = 0
    nd = 0
    frac = 0
    dot = False
    simple = p < e
    while p < e:
        c = buf[p]
        if 48 <= c <= 57:
            man = man * 10 + (c - 48)
            nd += 1
            if dot:
                frac += 1
        elif c == 46 and not dot:
            dot = True
        else:
            simple = False
            break
        p += 1
    if simple and 0 < nd <= 15:
        v = float(man)
        if frac > 0:
            v = v / _POW10[frac]
        return (-v if neg else v), e, 0
    return _number(buf, s, e)


@njit_inline
def _starts_number(buf, p, end):
    c = buf[p]
    if 48 <= c <= 57:
        return True
    if c == 43 or c == 45:
        p += 1
        if p >= end:
            return False
        c = buf[p]
        if 48 <= c <= 57:
            return True
    return c == 46 and p + 1 < end and 48 <= buf[p + 1] <= 57


@njit_inline
def _inf_nan_prefix(buf, r, e):
    """``buf[r:e]`` starts, after an optional sign, with ``inf`` or ``nan`` (any case): VW's strtof reads that
    much as a number whatever follows (``x:info`` is infinity to VW, the rest of its line dropped)."""
    if r < e and (buf[r] == 43 or buf[r] == 45):
        r += 1
    if r + 3 > e:
        return False
    a = buf[r] | 32
    b = buf[r + 1] | 32
    c = buf[r + 2] | 32
    return (a == 105 and b == 110 and c == 102) or (a == 110 and b == 97 and c == 110)


@njit_inline
def _digitless_number(buf, r, e, le):
    """``buf[r:e]``, up to a space, a tab or the line end, is ``-?\\.?([eE]-?[0-9]*)?``: the shape VW's float
    parser takes for a number with no digit before the exponent, read as 0 (the feature is dropped)."""
    if e < le and buf[e] != 32 and buf[e] != 9:
        return False
    q = r
    if q < e and buf[q] == 45:
        q += 1
    if q < e and buf[q] == 46:
        q += 1
    if q < e and (buf[q] | 32) == 101:
        q += 1
        if q < e and buf[q] == 45:
            q += 1
        while q < e and 48 <= buf[q] <= 57:
            q += 1
    return q == e


@njit_kernel
def canonical_terms(terms, lens):
    """VW's interaction set: a term with a repeated namespace is sorted; terms are sorted by (length,
    namespaces) and a term whose multiset of namespaces was already seen is dropped."""
    n = terms.shape[0]
    t = terms.copy()
    for r in range(n):
        k = lens[r]
        rep = False
        for a in range(k):
            for b in range(a + 1, k):
                if t[r, a] == t[r, b]:
                    rep = True
        if rep:
            for a in range(k):
                for b in range(k - 1 - a):
                    if t[r, b] > t[r, b + 1]:
                        x = t[r, b]
                        t[r, b] = t[r, b + 1]
                        t[r, b + 1] = x
    key = np.empty(n, np.int64)
    for r in range(n):
        key[r] = lens[r] * (1 << 30) + t[r, 0] * 65536 + t[r, 1] * 256 + (t[r, 2] if lens[r] == 3 else 0)
    order = np.argsort(key, kind="mergesort")
    out = np.empty((n, 3), np.int64)
    out_len = np.empty(n, np.int64)
    ms = np.empty(n, np.int64)
    m = 0
    for oi in range(n):
        r = order[oi]
        k = lens[r]
        s0 = t[r, 0]
        s1 = t[r, 1]
        s2 = t[r, 2] if k == 3 else -1
        # sorted multiset key
        if s0 > s1:
            s0, s1 = s1, s0
        if k == 3:
            if s1 > s2:
                s1, s2 = s2, s1
            if s0 > s1:
                s0, s1 = s1, s0
        mk = k * (1 << 30) + s0 * 65536 + s1 * 256 + (s2 if k == 3 else 0)
        dup = False
        for q in range(m):
            if ms[q] == mk:
                dup = True
                break
        if dup:
            continue
        ms[m] = mk
        out[m, 0] = t[r, 0]
        out[m, 1] = t[r, 1]
        out[m, 2] = t[r, 2]
        out_len[m] = k
        m += 1
    return out[:m], out_len[:m]


@njit_kernel
def _expand_wildcards(terms, lens, present, n_present):
    """Concrete terms of a row: every ':' replaced by each namespace present in the row whose byte is printable
    ASCII (' ' to '~'), as VW expands it: a namespace named by another byte (a UTF-8 lead byte such as the
    first of ``|été``, a control byte) is left out."""
    printable = np.empty(n_present, np.int64)
    n = 0
    for i in range(n_present):
        if 32 <= present[i] <= 126:
            printable[n] = present[i]
            n += 1
    present = printable
    n_present = n
    total = 0
    for r in range(terms.shape[0]):
        c = 1
        for a in range(lens[r]):
            if terms[r, a] == WILDCARD:
                c *= n_present
        total += c
    out = np.zeros((total, 3), np.int64)
    out_len = np.empty(total, np.int64)
    m = 0
    for r in range(terms.shape[0]):
        k = lens[r]
        n0 = n_present if terms[r, 0] == WILDCARD else 1
        n1 = n_present if terms[r, 1] == WILDCARD else 1
        n2 = (n_present if terms[r, 2] == WILDCARD else 1) if k == 3 else 1
        for i0 in range(n0):
            for i1 in range(n1):
                for i2 in range(n2):
                    out[m, 0] = present[i0] if terms[r, 0] == WILDCARD else terms[r, 0]
                    out[m, 1] = present[i1] if terms[r, 1] == WILDCARD else terms[r, 1]
                    if k == 3:
                        out[m, 2] = present[i2] if terms[r, 2] == WILDCARD else terms[r, 2]
                    out_len[m] = k
                    m += 1
    return canonical_terms(out[:m], out_len[:m])


_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)


@njit_inline
def _insertion_sort(a, n):
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@njit_inline
def _namespace_starts(ns, n_ns, counts, starts):
    """Lays out the groups of a row's features by namespace: sorts the namespaces ``ns[:n_ns]`` (byte order)
    and sets ``starts[c]`` to where namespace ``c``'s ``counts[c]`` features begin, one group after the other,
    and ``counts[c]`` to the same position (the cursor that grouping the features moves to the group's end)."""
    _insertion_sort(ns, n_ns)
    acc = 0
    for q in range(n_ns):
        c = ns[q]
        starts[c] = acc
        acc += counts[c]
        counts[c] = starts[c]


@njit_inline
def _rank_sort(keys, out, n):
    """``keys[:n]`` (distinct) sorted into ``out[:n]``, which is returned: each key goes to its rank, the
    number of smaller keys. O(n**2) comparisons but no data-dependent branch (vectorised), faster than an
    insertion sort for the few dozen entries of a row."""
    for i in range(n):
        k = keys[i]
        r = 0
        for j in range(n):
            r += keys[j] < k
        out[r] = k
    return out[:n]


@njit_kernel
def vw_parse(
    buf,
    end,
    final,
    max_rows,
    mask,
    label_mode,
    n_classes,
    require_label,
    keep_ns,
    constant,
    terms,
    term_lens,
    has_wildcard,
    data,
    indices,
    indptr,
    y,
    w,
    row_line,
    tag_s,
    tag_e,
    s_idx,
    s_val,
    s_ns,
    s_idx2,
    s_val2,
    o_idx,
    o_val,
    state,
):
    """Parse complete lines of ``buf[:end]`` from ``state[S_POS]``; see the module docstring.

    ``mask``: ``2**bits - 1``; ``keep_ns[c]``: keep namespace with first byte ``c``; ``constant``: add VW's
    constant feature; ``terms``/``term_lens``: interactions (``WILDCARD`` for ':'), already canonical when
    ``has_wildcard`` is false. ``row_line[r]``: the 1-based line of row ``r``. ``s_*``/``o_*`` are per-row
    scratch arrays. Returns a status code.
    """
    pos = state[S_POS]
    line = state[S_LINE]
    rows = state[S_ROWS]
    nnz = state[S_NNZ]
    umask = np.uint64(mask)
    cap_s = s_idx.shape[0]
    cap_o = o_idx.shape[0]
    cap_nnz = indices.shape[0]
    counts = np.zeros(257, np.int64)
    starts = np.zeros(257, np.int64)
    present = np.empty(256, np.int64)
    ns_list = np.empty(257, np.int64)
    mark = np.zeros(257, np.int64)  # mark[c] == stamp: namespace c occurs in the current row
    stamp = 0
    word_s = np.empty(5, np.int64)
    word_e = np.empty(5, np.int64)
    status = ST_NEED_INPUT
    while True:
        if rows >= max_rows:
            status = ST_ROWS_FULL
            break
        if pos >= end:
            status = ST_DONE if final else ST_NEED_INPUT
            break
        le = pos
        while le < end and buf[le] != 10:
            le += 1
        if le >= end and not final:
            status = ST_NEED_INPUT
            break
        nxt = le + 1
        line += 1
        ls = pos
        if le > ls and buf[le - 1] == 13:
            le -= 1
        if le - ls >= 3 and buf[ls] == 0xEF and buf[ls + 1] == 0xBB and buf[ls + 2] == 0xBF:
            ls += 3
        blank = True
        for p in range(ls, le):
            if buf[p] > 32:
                blank = False
                break
        if blank:
            pos = nxt
            continue
        # ---- label section
        bar = ls
        while bar < le and buf[bar] != 124:
            bar += 1
        lab_s = ls
        for p in range(ls, bar):
            if buf[p] == 9:
                lab_s = p + 1
                break
        nw = 0
        p = lab_s
        err = 0
        ts = -1
        te = -1
        label = np.nan
        weight = 1.0
        while p < bar:
            while p < bar and buf[p] == 32:
                p += 1
            if p >= bar:
                break
            q = p
            while q < bar and buf[q] != 32:
                q += 1
            if nw == 5:
                err = E_TOO_MANY
                state[S_ERR_POS] = p
                state[S_ERR_END] = bar
                break
            word_s[nw] = p
            word_e[nw] = q
            nw += 1
            p = q
        if err == 0:
            if nw > 0 and (word_e[nw - 1] == bar or buf[word_s[nw - 1]] == 39):
                ts = word_s[nw - 1]
                te = word_e[nw - 1]
                if buf[ts] == 39:
                    ts += 1
                nw -= 1
            most = 2 if label_mode == LABEL_MULTICLASS else 3  # VW's multiclass label has no initial prediction
            if nw > most:
                err = E_TOO_MANY
                state[S_ERR_POS] = word_s[most]
                state[S_ERR_END] = word_e[nw - 1]
            elif nw == 0:
                if require_label:
                    err = E_NO_LABEL
                    state[S_ERR_POS] = ls
                    state[S_ERR_END] = bar
            else:
                v, q, st = _num_token(buf, word_s[0], word_e[0])
                ok = st == 0 and q == word_e[0]
                if ok:
                    if label_mode == LABEL_PM1:
                        ok = v == 1.0 or v == -1.0
                    elif label_mode == LABEL_01:
                        ok = v == 0.0 or v == 1.0
                    elif label_mode == LABEL_MULTICLASS:
                        ok = v == np.floor(v) and v >= 1.0 and (n_classes <= 0 or v <= n_classes)
                        # written as an integer, as VW requires of a class ('2.0' and '2e0' are errors there)
                        for c in range(word_s[0] + (buf[word_s[0]] == 43), word_e[0]):
                            if not 48 <= buf[c] <= 57:
                                ok = False
                if not ok:
                    err = E_LABEL
                    state[S_ERR_POS] = word_s[0]
                    state[S_ERR_END] = word_e[0]
                label = v
                if err == 0 and nw >= 2:
                    v, q, st = _num_token(buf, word_s[1], word_e[1])
                    if not (st == 0 and q == word_e[1] and v >= 0.0):
                        err = E_IMPORTANCE
                        state[S_ERR_POS] = word_s[1]
                        state[S_ERR_END] = word_e[1]
                    weight = v
                if err == 0 and nw == 3:
                    v, q, st = _num_token(buf, word_s[2], word_e[2])
                    if not (st == 0 and q == word_e[2]):
                        err = E_INITIAL
                        state[S_ERR_POS] = word_s[2]
                        state[S_ERR_END] = word_e[2]
        # ---- features
        nf = 0
        p = bar
        need = 0
        while err == 0 and p < le and buf[p] == 124:
            p += 1
            nsw = 1.0
            anon = np.uint64(0)
            if p >= le or _is_feat_end(buf[p]):
                nsc = 32
                ch = np.uint64(0)
            elif buf[p] == 58:
                err = E_NS_NAME
                state[S_ERR_POS] = p - 1
                state[S_ERR_END] = min(p + 1, le)
                break
            else:
                q = p
                while q < le and not _is_delim(buf[q]):
                    q += 1
                nsc = buf[p]
                ch = hash_string(buf, p, q, 0)
                if q < le and buf[q] == 58:
                    r = q + 1
                    e = r
                    while e < le and not _is_feat_end(buf[e]):
                        e += 1
                    ok = e > r
                    if ok:
                        v, r2, st = _num_token(buf, r, e)
                        ok = st == 0 and r2 == e
                        nsw = v
                    if not ok:
                        err = E_NS_WEIGHT
                        state[S_ERR_POS] = p
                        state[S_ERR_END] = e
                        break
                    q = e
                p = q
            keep = keep_ns[nsc] != 0
            while p < le and (buf[p] == 32 or buf[p] == 9 or buf[p] == 13):
                p += 1
                if p >= le or _is_feat_end(buf[p]):
                    continue
                q = p
                while q < le and not _is_delim(buf[q]):
                    q += 1
                ne = q
                fval = 1.0
                chained = False
                cs = 0
                ce = 0
                if q < le and buf[q] == 58:
                    r = q + 1
                    if r >= le or _is_feat_end(buf[r]):
                        err = E_NOVALUE
                        state[S_ERR_POS] = p
                        state[S_ERR_END] = r
                        break
                    e = r
                    while e < le and not _is_feat_end(buf[e]):
                        e += 1
                    # a letter after an optional sign may start inf / nan: parsed, so that '-inf' is an error
                    # as 'inf' is, not a categorical value
                    c0 = buf[r + 1] if (buf[r] == 43 or buf[r] == 45) and r + 1 < e else buf[r]
                    if _inf_nan_prefix(buf, r, e) or _digitless_number(buf, r, e, le):
                        err = E_NONFINITE if _inf_nan_prefix(buf, r, e) else E_DIGITLESS
                        state[S_ERR_POS] = p
                        state[S_ERR_END] = e
                        break
                    if _starts_number(buf, r, e) or (c0 | 32) == 105 or (c0 | 32) == 110:
                        v, r2, st = _num_token(buf, r, e)
                        if st == _NUM_NONFINITE and r2 == e:
                            err = E_NONFINITE
                        elif st != 0 or r2 != e:
                            if st == _NUM_BAD and not _starts_number(buf, r, e):
                                chained = True
                            else:
                                err = E_VALUE
                        if err != 0:
                            state[S_ERR_POS] = p
                            state[S_ERR_END] = e
                            break
                        fval = v
                        if chained:
                            fval = 1.0
                    else:
                        chained = True
                    if chained:
                        # VW: the string value runs to the next whitespace
                        ce = r
                        while ce < le and buf[ce] != 32 and buf[ce] != 9 and buf[ce] != 13:
                            ce += 1
                        cs = r
                        e = ce
                    q = e
                if chained:
                    idx = hash_string(buf, cs, ce, hash_string(buf, p, ne, ch))
                    val = 1.0
                elif ne == p:  # anonymous ':value'
                    idx = ch + anon
                    anon += np.uint64(1)
                    val = nsw * fval
                else:
                    idx = hash_string(buf, p, ne, ch)
                    val = nsw * fval
                p = q
                if val == 0.0 or not keep:
                    continue
                if nf >= cap_s:
                    need = max(need, 2 * cap_s)
                    nf += 1
                    continue
                s_idx[nf] = idx
                s_val[nf] = val
                s_ns[nf] = nsc
                nf += 1
        if err != 0:
            state[S_ERR_CODE] = err
            state[S_ERR_LINE] = line
            status = ST_ERROR
            break
        if constant:
            if nf >= cap_s:
                need = max(need, 2 * cap_s)
            else:
                s_idx[nf] = np.uint64(CONSTANT_HASH)
                s_val[nf] = 1.0
                s_ns[nf] = CONSTANT_NAMESPACE
            nf += 1
        if need > 0 or nf > cap_s:
            state[S_AUX] = max(need, nf + 16)
            status = ST_NEED_SCRATCH
            line -= 1
            break
        # ---- linear part
        n_out = 0
        for i in range(nf):
            if n_out < cap_o:
                o_idx[n_out] = s_idx[i] & umask
                o_val[n_out] = s_val[i]
            n_out += 1
        # ---- interactions
        if terms.shape[0] > 0 and nf > 0:
            # group the row's features by namespace (stable), touching only the namespaces it has
            stamp += 1
            n_ns = 0
            for i in range(nf):
                c = s_ns[i]
                if mark[c] != stamp:
                    mark[c] = stamp
                    counts[c] = 0
                    ns_list[n_ns] = c
                    n_ns += 1
                counts[c] += 1
            _namespace_starts(ns_list, n_ns, counts, starts)
            n_present = 0
            for t in range(n_ns):
                if ns_list[t] != CONSTANT_NAMESPACE:
                    present[n_present] = ns_list[t]
                    n_present += 1
            for i in range(nf):
                c = s_ns[i]
                s_idx2[counts[c]] = s_idx[i]
                s_val2[counts[c]] = s_val[i]
                counts[c] += 1
            if has_wildcard:
                rterms, rlens = _expand_wildcards(terms, term_lens, present, np.int64(n_present))
            else:
                rterms, rlens = terms, term_lens
            n_out = cross_namespaces(
                terms=rterms,
                term_lens=rlens,
                starts=starts,
                ends=counts,
                g_idx=s_idx2,
                g_val=s_val2,
                umask=umask,
                o_idx=o_idx,
                o_val=o_val,
                n_out=n_out,
                cap=cap_o,
            )
            # leave every namespace empty (start == end) for the next row
            for t in range(n_ns):
                counts[ns_list[t]] = starts[ns_list[t]]
        if n_out > cap_o:
            state[S_AUX] = n_out
            status = ST_NEED_SCRATCH
            line -= 1
            break
        if nnz + n_out > cap_nnz:
            status = ST_NEED_SPACE
            line -= 1
            state[S_AUX] = n_out
            break
        # sort by bucket: one uint64 key per entry (bucket << 32 | position), then merge duplicates (sum)
        # and drop zeros, written straight into the output
        for i in range(n_out):
            s_idx2[i] = (o_idx[i] << _S32) | np.uint64(i)
        if n_out <= 64:
            keys = _rank_sort(s_idx2, o_idx, n_out)
        else:
            keys = s_idx2[:n_out]
            keys.sort()
        m = 0
        i = 0
        while i < n_out:
            cur = keys[i] >> _S32
            sv = 0.0
            while i < n_out and (keys[i] >> _S32) == cur:
                sv += o_val[keys[i] & _LOW32]
                i += 1
            if sv != 0.0:
                indices[nnz + m] = cur
                data[nnz + m] = sv
                m += 1
        nnz += m
        y[rows] = label
        w[rows] = weight
        row_line[rows] = line
        tag_s[rows] = ts
        tag_e[rows] = te
        rows += 1
        indptr[rows] = nnz
        pos = nxt
    state[S_POS] = pos
    state[S_LINE] = line
    state[S_ROWS] = rows
    state[S_NNZ] = nnz
    return status


@njit_kernel
def line_end(buf, start, end, n):
    """Position just after the ``n``-th newline of ``buf[start:end]`` (``n >= 1``), or ``-1 - found`` when
    it holds only ``found < n`` newlines: where a reader cuts a piece of ``n`` lines without parsing it.
    Newlines are counted 64 bytes at a time (a loop that vectorises) up to the block holding the n-th."""
    found = 0
    p = start
    while p + 64 <= end:
        c = 0
        for q in range(p, p + 64):
            c += buf[q] == 10
        if found + c >= n:
            break
        found += c
        p += 64
    while p < end:
        if buf[p] == 10:
            found += 1
            if found == n:
                return p + 1
        p += 1
    return -1 - found
