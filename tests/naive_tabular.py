"""Plain-Python twin of streamlearn._kernels.tabular: hashed table rows, one Python dict per row."""

import math

import numpy as np
import scipy.sparse as sp

from tests.naive_hashing import hash_string


def naive_row(row, bits, namespaces=None, categorical=()):
    """``{bucket: value}`` of one row ``{column: value}`` (None / NaN / 0 skipped): a number is the feature
    ``column`` with its value, anything else the indicator ``column=text`` (booleans as true/false), hashed in
    the column's namespace (or its group's) as VW hashes names."""
    ns_of = {c: ns for ns, cols in (namespaces or {}).items() for c in cols}
    mask = (1 << bits) - 1
    out = {}
    for col, v in row.items():
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        seed = hash_string(ns_of.get(col, col).encode(), 0)
        if isinstance(v, bool):
            name, value = f"{col}={'true' if v else 'false'}", 1.0
        elif isinstance(v, (int, float)) and col not in categorical:
            if v == 0:
                continue
            name, value = col, float(v)
        else:
            name, value = f"{col}={v}", 1.0
        j = hash_string(name.encode(), seed) & mask
        out[j] = out.get(j, 0.0) + value
    return out


def naive_matrix(rows, bits, **kw):
    """CSR matrix of ``naive_row`` over ``rows`` (indices sorted)."""
    indptr, indices, data = [0], [], []
    for row in rows:
        feats = naive_row(row, bits, **kw)
        for j in sorted(feats):
            indices.append(j)
            data.append(feats[j])
        indptr.append(len(indices))
    return sp.csr_matrix(
        (np.array(data, dtype=np.float64), np.array(indices, dtype=np.int64), np.array(indptr)),
        shape=(len(rows), 1 << bits),
    )


def naive_inside_quotes(text, delimiter=","):
    """For each byte of ``text`` (bytes), whether it is inside a quoted CSV value, read as pyarrow and Python's
    ``csv`` module read quotes: a quote opens a value only at the start of a field (after the delimiter or a line
    end, or at the start after a UTF-8 byte order mark); inside, ``""`` is a quote and a single quote closes the
    value. Also returns whether the text ends inside a quoted value."""
    bom = b"\xef\xbb\xbf"
    skip = 0
    while skip < 3 and skip < len(text) and text[skip] == bom[skip]:
        skip += 1
    out = [False] * skip
    quoted, start, i = False, True, skip
    while i < len(text):
        c = text[i : i + 1]
        if quoted:
            out.append(True)
            if c == b'"':
                if text[i + 1 : i + 2] == b'"':  # an escaped quote: both bytes inside
                    out.append(True)
                    i += 2
                    continue
                quoted, start = False, False
                if i + 1 == len(text):
                    return out, False
            i += 1
            continue
        if c == b'"' and start:
            quoted, start = True, False
            out.append(True)
        else:
            start = c in (delimiter.encode(), b"\n", b"\r")
            out.append(False)
        i += 1
    return out, quoted
