"""LIBSVM / svmlight text parser over raw bytes (numba).

``svmlight_parse`` parses complete lines of a byte buffer into CSR pieces (data, indices, indptr, y).
The Python layer (``streamlearn.datasets._svmlight``) reads the file in blocks, carries the partial last
line over, grows the output arrays and turns the error codes below into messages.

Grammar, matching scikit-learn's ``load_svmlight_file`` on every file both accept::

    line    := [label (feature)*] ['#' comment] '\\n'   (blank / comment-only lines are skipped)
    label   := float                                    (single label; '1,2' is a multilabel error)
    feature := ['qid:' int]  (first token only; skipped)  |  index ':' float
    index   := ['+'] digits                             (strictly increasing within a line)
    float   := ['+'|'-'] (digits ['.' digits*] | '.' digits) [('e'|'E') ['+'|'-'] digits]

Whitespace is any of `` \\t\\r\\v\\f`` (what ``bytes.split()`` splits on). Decimal to double conversion is
correctly rounded (so results are bit-identical to Python's ``float()``): Clinger's exact fast path, then
the Eisel-Lemire algorithm (as in Go's ``strconv`` and fast_float); the rare inputs neither can decide
(more than 19 significant digits, exact half-way ties, subnormals, overflow) are reported back as
"hard" tokens and converted by the caller with Python's ``float()``.
"""

import math

import numpy as np

from ._numba import njit_kernel

# --- kernel return status ------------------------------------------------------------------------
ST_NEED_INPUT = 0  # every complete line consumed; state[S_POS] is the start of the incomplete last line
ST_DONE = 1  # final=True and the whole buffer is consumed
ST_ROWS_FULL = 2  # max_rows rows produced
ST_NEED_SPACE = 3  # data/indices arrays full: grow them and call again (the current line was rolled back)
ST_HARD_FULL = 4  # the hard-token table is full: resolve it and call again
ST_NEED_INT64 = 5  # an index does not fit the index array's dtype (int32): switch to int64, call again
ST_ERROR = 6  # bad input: state[S_ERR_*] says what and where

# --- error codes (state[S_ERR_CODE]) -------------------------------------------------------------
E_LABEL = 1  # label is not a number
E_MULTILABEL = 2  # label is a comma separated list
E_FEATURE = 3  # token is not index:value
E_VALUE = 4  # value after ':' is not a number
E_NONFINITE = 5  # nan / inf (literal, or a value that overflows to inf)
E_INDEX_NEG = 6  # negative index
E_INDEX_ZERO = 7  # index 0 in a one-based file
E_ORDER = 8  # index not larger than the previous one (state[S_ERR_AUX] = previous index)
E_BEYOND = 9  # index beyond n_features (state[S_ERR_AUX] = the index as written)
E_INDEX_BIG = 10  # index > 2**62
E_QID = 11  # 'qid:' not followed by an integer

# --- layout of the int64 state array (in/out) -----------------------------------------------------
S_POS = 0  # byte position of the next line to parse
S_LINE = 1  # 1-based line number of that line
S_ROWS = 2  # rows written so far into the output arrays
S_NNZ = 3  # non-zeros written so far
S_HARD = 4  # hard tokens recorded in this call
S_MIN_IDX = 5  # smallest index as written in the file (committed lines), -1 if none yet
S_MAX_IDX = 6  # largest index as written, -1 if none yet
S_EDGE_LINE = 7  # first line with an index == edge_index (see svmlight_parse), 0 if none
S_EDGE_POS = 8  # byte position of that token (valid only within the call that set it)
S_ERR_CODE = 9
S_ERR_POS = 10  # byte position of the offending token
S_ERR_LINE = 11
S_ERR_AUX = 12
STATE_LEN = 13

# hard-token table columns: kind (0 label, 1 value), output slot (row or nnz), start, end, line
HARD_COLS = 5

# Number parser status
_NUM_OK = 0
_NUM_BAD = 1
_NUM_HARD = 2
_NUM_NONFINITE = 3

_INDEX_LIMIT = 1 << 62  # largest feature index accepted (as written)
_INDEX_GROW = _INDEX_LIMIT // 10  # a prefix above this means an index above the limit (and no overflow)


def _powers_of_ten_128():
    """128-bit mantissas of 10**e, e in [-348, 347], truncated (Eisel-Lemire table), as (lo, hi) uint64."""
    out = np.empty((696, 2), dtype=np.uint64)
    mask = (1 << 64) - 1
    for i, e in enumerate(range(-348, 348)):
        if e >= 0:
            v = 10**e
            n = v.bit_length()
            v = v << (128 - n) if n <= 128 else v >> (n - 128)
        else:
            d = 10 ** (-e)
            v = (1 << (128 + d.bit_length())) // d
            n = v.bit_length()
            if n > 128:
                v >>= n - 128
        out[i, 0] = v & mask
        out[i, 1] = v >> 64
    return out


_POW10_128 = _powers_of_ten_128()
_POW10_EXACT = np.array([10.0**k for k in range(23)])  # exactly representable powers of ten

_U32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


@njit_kernel
def _record_hard(hard, nh, kind, slot, start, end, line):
    """Append a hard token (see HARD_COLS) at row ``nh`` of ``hard``; returns ``nh + 1``."""
    hard[nh, 0] = kind
    hard[nh, 1] = slot
    hard[nh, 2] = start
    hard[nh, 3] = end
    hard[nh, 4] = line
    return nh + 1


@njit_kernel
def _mul64(a, b):
    """Full 64x64 -> 128-bit product of two uint64 as (hi, lo)."""
    a0 = a & _U32
    a1 = a >> _S32
    b0 = b & _U32
    b1 = b >> _S32
    w0 = a0 * b0
    t = a1 * b0 + (w0 >> _S32)
    w1 = (t & _U32) + a0 * b1
    hi = a1 * b1 + (t >> _S32) + (w1 >> _S32)
    lo = a * b
    return hi, lo


@njit_kernel
def _clz64(x):
    """Leading zero bits of a non-zero uint64, by halving: shifts of 32, 16, 8, 4, 2 and 1."""
    n = 0
    s = 32
    while s > 0:
        if x >> np.uint64(64 - s) == np.uint64(0):
            n += s
            x = x << np.uint64(s)
        s >>= 1
    return n


@njit_kernel
def _eisel_lemire(man, exp10, neg):
    """man * 10**exp10 correctly rounded, man > 0 (uint64). Returns (value, ok)."""
    if exp10 < -348 or exp10 > 347:
        return 0.0, False
    clz = _clz64(man)
    man = man << np.uint64(clz)
    ret_exp2 = np.uint64(((217706 * exp10) >> 16) + 64 + 1023 - clz)
    row = exp10 + 348
    x_hi, x_lo = _mul64(man, _POW10_128[row, 1])
    if (x_hi & np.uint64(0x1FF)) == np.uint64(0x1FF) and x_lo + man < man:
        y_hi, y_lo = _mul64(man, _POW10_128[row, 0])
        m_hi = x_hi
        m_lo = x_lo + y_hi
        if m_lo < x_lo:
            m_hi += np.uint64(1)
        if (m_hi & np.uint64(0x1FF)) == np.uint64(0x1FF) and m_lo + np.uint64(1) == np.uint64(0) and y_lo + man < man:
            return 0.0, False
        x_hi = m_hi
        x_lo = m_lo
    msb = x_hi >> np.uint64(63)
    mant = x_hi >> (msb + np.uint64(9))
    ret_exp2 -= np.uint64(1) ^ msb
    if x_lo == np.uint64(0) and (x_hi & np.uint64(0x1FF)) == np.uint64(0) and (mant & np.uint64(3)) == np.uint64(1):
        return 0.0, False
    mant += mant & np.uint64(1)
    mant = mant >> np.uint64(1)
    if (mant >> np.uint64(53)) > np.uint64(0):
        mant = mant >> np.uint64(1)
        ret_exp2 += np.uint64(1)
    if ret_exp2 - np.uint64(1) >= np.uint64(0x7FE):  # subnormal or overflow: let the caller decide
        return 0.0, False
    # mant is the 53-bit significand with its hidden bit, so this is exact (a normal double)
    v = math.ldexp(float(mant), int(np.int64(ret_exp2)) - 1075)
    return -v if neg else v, True


@njit_kernel
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit_kernel
def _lower(c):
    return c | 32


@njit_kernel
def _parse_float(buf, p, end):
    """Parse a float starting at buf[p], stopping at the first byte that cannot continue it.

    Returns (value, position after the number, status). Does not check what follows the number.
    """
    neg = False
    if p < end and (buf[p] == 43 or buf[p] == 45):
        neg = buf[p] == 45
        p += 1
    if p < end and (_lower(buf[p]) == 105 or _lower(buf[p]) == 110):  # 'i' or 'n': inf / infinity / nan
        q = p
        while q < end and (97 <= _lower(buf[q]) <= 122):
            q += 1
        n = q - p
        if n == 3 and _lower(buf[p]) == 110 and _lower(buf[p + 1]) == 97 and _lower(buf[p + 2]) == 110:
            return np.nan, q, _NUM_NONFINITE
        if (n == 3 or n == 8) and _lower(buf[p]) == 105 and _lower(buf[p + 1]) == 110 and _lower(buf[p + 2]) == 102:
            if n == 3 or (
                _lower(buf[p + 3]) == 105
                and _lower(buf[p + 4]) == 110
                and _lower(buf[p + 5]) == 105
                and _lower(buf[p + 6]) == 116
                and _lower(buf[p + 7]) == 121
            ):
                return np.inf, q, _NUM_NONFINITE
        return 0.0, q, _NUM_BAD
    # digits, with at most one '.': the number is man * 10**exp10, every significant digit after the 19th
    # (not kept in man) multiplies it by 10 and every digit after the '.' divides it by 10
    man = np.uint64(0)
    ndig = 0  # significant digits (after the first non-zero one)
    exp10 = 0
    any_digit = False
    frac = False
    while p < end:
        c = buf[p]
        if 48 <= c <= 57:
            d = np.int64(c) - 48
            any_digit = True
            if ndig > 0 or d != 0:
                if ndig < 19:
                    man = man * np.uint64(10) + np.uint64(d)
                else:
                    exp10 += 1
                ndig += 1
            if frac:
                exp10 -= 1
        elif c == 46 and not frac:  # '.'
            frac = True
        else:
            break
        p += 1
    if not any_digit:
        return 0.0, p, _NUM_BAD
    if p < end and _lower(buf[p]) == 101:  # 'e'
        p += 1
        eneg = False
        if p < end and (buf[p] == 43 or buf[p] == 45):
            eneg = buf[p] == 45
            p += 1
        if not (p < end and 48 <= buf[p] <= 57):
            return 0.0, p, _NUM_BAD
        e = 0
        while p < end and 48 <= buf[p] <= 57:
            if e < 100000:
                e = e * 10 + (np.int64(buf[p]) - 48)
            p += 1
        exp10 += -e if eneg else e
    if ndig > 19:
        return 0.0, p, _NUM_HARD
    if man == np.uint64(0):
        return -0.0 if neg else 0.0, p, _NUM_OK
    if man <= np.uint64(9007199254740992) and -22 <= exp10 <= 22:  # Clinger: both operands exact
        v = float(man)
        if exp10 >= 0:
            v = v * _POW10_EXACT[exp10]
        else:
            v = v / _POW10_EXACT[-exp10]
        return -v if neg else v, p, _NUM_OK
    if exp10 < -348:  # < 1e19 * 1e-349: rounds to zero
        return -0.0 if neg else 0.0, p, _NUM_OK
    if exp10 > 347:  # >= 1e348
        return -np.inf if neg else np.inf, p, _NUM_NONFINITE
    v, ok = _eisel_lemire(man, exp10, neg)
    if ok:
        return v, p, _NUM_OK
    return 0.0, p, _NUM_HARD


@njit_kernel
def svmlight_parse(
    buf,
    end,
    final,
    max_rows,
    shift,
    max_index,
    edge_index,
    index_cap,
    store,
    data,
    indices,
    indptr,
    y,
    row_line,
    hard,
    state,
):
    """Parse complete lines of ``buf[state[S_POS]:end]`` into CSR pieces; return a status ``ST_*``.

    buf : uint8 array; end : bytes of ``buf`` that are valid.
    final : the stream has ended, so a last line without ``'\\n'`` is complete.
    max_rows : stop (``ST_ROWS_FULL``) after producing this many rows in this call.
    shift : 1 for one-based files (index 0 is an error, indices are stored minus 1), 0 otherwise.
    max_index : largest index allowed *as written in the file* (``E_BEYOND`` above it).
    edge_index : record in ``state[S_EDGE_LINE]`` the first line holding this index (as written);
        used by zero_based="auto" with a given n_features, where ``n_features`` is valid only if the
        file turns out to be one-based.
    index_cap : largest value the ``indices`` array can hold (``ST_NEED_INT64`` above it).
    store : write data/indices/indptr/y (False: validate and count only; arrays are not touched).
    data, indices : output non-zeros, written from ``state[S_NNZ]``; capacity ``len(data)``.
    indptr, y : output rows; ``indptr[r + 1]`` and ``y[r]`` for rows ``r`` from ``state[S_ROWS]``
        (the caller guarantees room for ``max_rows`` more rows).
    row_line : int64 output, ``row_line[r]`` = the 1-based line of row ``r`` (same room as ``y``).
    hard : int64 (n, HARD_COLS) table of tokens to convert with Python's ``float()``.
    state : int64 (STATE_LEN,) in/out counters, see ``S_*``.

    A line is written all or nothing: when a line cannot be finished (no room, hard table full, index
    too large for int32), the counters are rolled back to the start of that line.
    """
    pos = state[S_POS]
    line = state[S_LINE]
    row = state[S_ROWS]
    nnz = state[S_NNZ]
    nh = state[S_HARD]
    gmin = state[S_MIN_IDX]
    gmax = state[S_MAX_IDX]
    cap = data.shape[0]
    hcap = hard.shape[0]
    made = 0
    status = ST_NEED_INPUT
    err = 0
    err_pos = 0
    err_aux = 0
    while True:
        if made >= max_rows:
            status = ST_ROWS_FULL
            break
        # find the end of the line and the start of a comment
        q = pos
        hash_at = -1
        while q < end:
            c = buf[q]
            if c == 10:
                break
            if c == 35 and hash_at < 0:
                hash_at = q
            q += 1
        if q == end and not final:
            status = ST_NEED_INPUT
            break
        if pos >= end:
            status = ST_DONE
            break
        eol = hash_at if hash_at >= 0 else q
        next_pos = q + 1 if q < end else end
        p = pos
        while p < eol and _is_space(buf[p]):
            p += 1
        if p == eol:  # blank or comment-only line
            pos = next_pos
            line += 1
            continue
        nnz0 = nnz
        nh0 = nh
        # ---- label
        tok = p
        v, p2, st = _parse_float(buf, p, eol)
        if st == _NUM_BAD or (p2 < eol and not _is_space(buf[p2])):
            err = E_LABEL
            q2 = p
            while q2 < eol and not _is_space(buf[q2]):
                if buf[q2] == 44:  # ','
                    err = E_MULTILABEL
                q2 += 1
            err_pos = tok
            status = ST_ERROR
            break
        if st == _NUM_NONFINITE:
            err = E_NONFINITE
            err_pos = tok
            status = ST_ERROR
            break
        if st == _NUM_HARD:
            if nh >= hcap:
                status = ST_HARD_FULL
                break
            nh = _record_hard(hard=hard, nh=nh, kind=np.int64(0), slot=row, start=tok, end=p2, line=line)
        if store:
            y[row] = v
        p = p2
        # ---- features
        prev = -1
        lmin = -1
        lmax = -1
        edge_pos = -1
        first = True
        stop = False
        while True:
            while p < eol and _is_space(buf[p]):
                p += 1
            if p >= eol:
                break
            tok = p
            if (
                first
                and eol - p >= 4
                and buf[p] == 113
                and buf[p + 1] == 105
                and buf[p + 2] == 100
                and buf[p + 3] == 58
            ):
                first = False
                p += 4
                if p < eol and (buf[p] == 43 or buf[p] == 45):
                    p += 1
                nd = 0
                while p < eol and 48 <= buf[p] <= 57:
                    p += 1
                    nd += 1
                if nd == 0 or (p < eol and not _is_space(buf[p])):
                    err = E_QID
                    err_pos = tok
                    stop = True
                    break
                continue
            first = False
            if buf[p] == 45 and p + 1 < eol and 48 <= buf[p + 1] <= 57:
                err = E_INDEX_NEG
                err_pos = tok
                stop = True
                break
            if buf[p] == 43:
                p += 1
            idx = 0
            nd = 0
            big = False
            while p < eol and 48 <= buf[p] <= 57:
                if idx > _INDEX_GROW:
                    big = True
                else:
                    idx = idx * 10 + (np.int64(buf[p]) - 48)
                p += 1
                nd += 1
            if nd == 0 or p >= eol or buf[p] != 58:
                err = E_FEATURE
                err_pos = tok
                stop = True
                break
            if big or idx > _INDEX_LIMIT:
                err = E_INDEX_BIG
                err_pos = tok
                stop = True
                break
            p += 1
            vtok = p
            # fast path for the common '[-]digits[.digits]' with <= 15 digits: float(m) / 10**k is exact
            # (both operands exact, one rounding: Clinger), so the result equals _parse_float's
            q = p
            fneg = False
            if q < eol and buf[q] == 45:
                fneg = True
                q += 1
            m = 0
            nd = 0
            dot = -1
            while q < eol:
                c = buf[q]
                if 48 <= c <= 57:
                    if nd < 16:
                        m = m * 10 + (np.int64(c) - 48)
                    nd += 1
                elif c == 46 and dot < 0:
                    dot = nd
                else:
                    break
                q += 1
            if 0 < nd <= 15 and (q == eol or _is_space(buf[q])):
                v = float(m) / _POW10_EXACT[nd - dot if dot >= 0 else 0]
                if fneg:
                    v = -v
                p2 = q
                st = _NUM_OK
            else:
                v, p2, st = _parse_float(buf, p, eol)
            if st == _NUM_BAD or p2 == vtok or (p2 < eol and not _is_space(buf[p2])):
                err = E_VALUE
                err_pos = tok
                stop = True
                break
            if st == _NUM_NONFINITE:
                err = E_NONFINITE
                err_pos = tok
                stop = True
                break
            if shift == 1 and idx == 0:
                err = E_INDEX_ZERO
                err_pos = tok
                stop = True
                break
            if idx <= prev:
                err = E_ORDER
                err_pos = tok
                err_aux = prev
                stop = True
                break
            if idx > max_index:
                err = E_BEYOND
                err_pos = tok
                err_aux = idx
                stop = True
                break
            if idx == edge_index and edge_pos < 0:
                edge_pos = tok
            out = idx - shift
            if out > index_cap:
                status = ST_NEED_INT64
                stop = True
                break
            if st == _NUM_HARD:
                if nh >= hcap:
                    status = ST_HARD_FULL
                    stop = True
                    break
                nh = _record_hard(hard=hard, nh=nh, kind=np.int64(1), slot=nnz, start=vtok, end=p2, line=line)
            if store:
                if nnz >= cap:
                    status = ST_NEED_SPACE
                    stop = True
                    break
                data[nnz] = v
                indices[nnz] = out
            nnz += 1
            if lmin < 0:
                lmin = idx
            lmax = idx
            prev = idx
            p = p2
        if stop:
            if err != 0:
                status = ST_ERROR
            else:  # roll back the unfinished line
                nnz = nnz0
                nh = nh0
            break
        # ---- commit the line
        if store:
            indptr[row + 1] = nnz
            row_line[row] = line
        row += 1
        made += 1
        if lmin >= 0:
            if gmin < 0 or lmin < gmin:
                gmin = lmin
            if lmax > gmax:
                gmax = lmax
        if edge_pos >= 0 and state[S_EDGE_LINE] == 0:
            state[S_EDGE_LINE] = line
            state[S_EDGE_POS] = edge_pos
        pos = next_pos
        line += 1
    state[S_POS] = pos
    state[S_LINE] = line
    state[S_ROWS] = row
    state[S_NNZ] = nnz
    state[S_HARD] = nh
    state[S_MIN_IDX] = gmin
    state[S_MAX_IDX] = gmax
    if status == ST_ERROR:
        state[S_ERR_CODE] = err
        state[S_ERR_POS] = err_pos
        state[S_ERR_LINE] = line
        state[S_ERR_AUX] = err_aux
    return status
