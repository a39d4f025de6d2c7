"""Fuzzing the CSV reader (``iter_csv``) with generated tables and damaged ones.

Tables of 1 to 5 columns (names with spaces, quotes, commas, non-ASCII letters) and a label column, cells of
every kind (numbers in many spellings, empty, NaN and NA, text with quotes, commas and line breaks, true/false,
values beyond the float range), written with ``\\n`` or ``\\r\\n`` line ends, then damaged (bytes inserted,
deleted or replaced by separators, quotes, line ends, NUL, bytes that are not UTF-8, a byte order mark; the
file cut short), read from a file (plain or gzip) or from a stream that cannot seek (a pipe), with small
chunks. Every case either

* reads: each chunk is a CSR matrix of finite values, ``2 ** bits`` columns and as many rows as labels, or
* raises a one-line ``ValueError`` (``TabularFormatError`` for the file's contents) that names the file;

never another exception, a message of several lines, or a warning.
"""

import csv
import gzip
import io
import os
import tempfile
import warnings

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from streamlearn.datasets import TabularFormatError, iter_csv
from tests.conftest import NonSeekable

from ._profiles import record

TARGET = "CSV reader"
BITS = 10
_ROOT = tempfile.TemporaryDirectory(prefix="streamlearn-fuzz-csv-")

_name = st.sampled_from(["a", "b", "price", "x y", 'q"uote', "c,omma", "é", "n1", ""])
_cell = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["", "nan", "NA", "inf", "-inf", "1e400", "-0", "0x10", "1_000", " 3 ", "true", "False", "TRUE"]),
    st.text(max_size=6),
    st.sampled_from(['he said "hi"', "a,b", "line\nbreak", "cr\rhere", "tab\there"]),
)
_label = st.one_of(st.sampled_from(["1", "-1", "0", "", "yes", "no"]), _cell)
_damage = st.sampled_from([b",", b'"', b"\n", b"\r", b"\r\n", b"\x00", b"\xff", b"\xef\xbb\xbf", b";", b" ", b"\t"])


@st.composite
def tables(draw):
    names = draw(st.lists(_name, min_size=1, max_size=5, unique=True))
    rows = draw(st.lists(st.tuples(_label, st.lists(_cell, min_size=len(names), max_size=len(names))), max_size=12))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    writer.writerow(["y", *names])
    for label, cells in rows:
        writer.writerow([label, *cells])
    raw = out.getvalue().encode("utf-8")
    for _ in range(draw(st.integers(0, 3))):  # damage
        at = draw(st.integers(0, len(raw)))
        kind = draw(st.sampled_from(["insert", "delete", "replace", "cut"]))
        if kind == "insert":
            raw = raw[:at] + draw(_damage) + raw[at:]
        elif kind == "delete":
            raw = raw[:at] + raw[at + 1 :]
        elif kind == "replace":
            raw = raw[:at] + draw(_damage) + raw[at + 1 :]
        else:
            raw = raw[:at]
    return raw


@given(raw=tables(), source=st.sampled_from(["file", "gzip", "pipe"]), chunk_size=st.sampled_from([1, 3, 1000]))
def test_csv_files_read_or_raise_one_line_naming_the_file(raw, source, chunk_size):
    name = os.path.join(tempfile.mkdtemp(dir=_ROOT.name), "t.csv.gz" if source == "gzip" else "t.csv")
    if source == "pipe":
        path = NonSeekable(raw, name=name)
    else:
        with open(name, "wb") as f:
            f.write(gzip.compress(raw) if source == "gzip" else raw)
        path = name
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            chunks = list(iter_csv(path, label="y", bits=BITS, chunk_size=chunk_size))
    except ValueError as exc:  # (TabularFormatError is one)
        msg = str(exc)
        if "\n" in msg or name not in msg and isinstance(exc, TabularFormatError):
            record(TARGET, "wrong")
            raise AssertionError(f"not one line naming the file: {msg!r}") from exc
        record(TARGET, "clean error")
        return
    except Exception:
        record(TARGET, "traceback")
        raise
    for X, y in chunks:
        if not (X.shape == (len(y), 1 << BITS) and np.all(np.isfinite(X.data)) and X.has_canonical_format):
            record(TARGET, "wrong")
            raise AssertionError(f"a chunk of shape {X.shape} for {len(y)} labels, or values not finite")
    record(TARGET, "read")
