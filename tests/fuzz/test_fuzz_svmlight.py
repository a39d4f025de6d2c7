"""Fuzzing the LIBSVM / svmlight reader against scikit-learn's ``load_svmlight_file``.

Random valid files (labels and values in many spellings: integers, decimals, exponents, 16-25 digit
mantissas, subnormals; spaces, tabs, ``\\r``, ``\\v``, ``\\f``; comments, blank lines, ``qid:``) and the same
files with one line mutated (characters inserted, deleted or replaced, two features swapped, a feature
duplicated). For every file and every ``zero_based`` / ``n_features`` setting, ``load_svmlight`` and the
chunks of ``iter_svmlight`` (small blocks, so lines straddle block boundaries) either

* equal scikit-learn's result bit for bit (``data``, ``indices``, ``indptr``, ``y``, shape), or
* raise :class:`SvmlightFormatError` (a ``ValueError``) naming the file and the mutated line.

Where the two readers differ by design (``load_svmlight``'s docstring), the test asserts our documented
behaviour instead of scikit-learn's:

* NaN / infinity (literal, or a value that overflows), ``1_000``-style digit separators and files without
  any data line are errors here; scikit-learn accepts them.
* An index written with a minus sign (``-0:1``) is an error here; scikit-learn reads ``-0`` as index 0.
* A first feature that starts with ``qid`` but is not ``qid:<int>`` (``qid0:1``, ``qidx:5``) is an error
  here; scikit-learn skips any first token that starts with ``qid``.
* Indices above 2**31 - 1 are read here (up to 2**62); scikit-learn refuses them.
"""

import io
import re

import numpy as np
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

from streamlearn.datasets import SvmlightFormatError, iter_svmlight, load_svmlight

from ._profiles import record, scaled

TARGET = "LIBSVM reader"
NAME = "fuzz.svm"

# ---------------------------------------------------------------------------------------------------
# generated files

_digits = st.text("0123456789", min_size=1, max_size=4)
_long = st.text("0123456789", min_size=16, max_size=25)
_number = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: f"{v:.17g}"),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6).map(lambda v: f"{v:e}"),
    st.tuples(
        st.sampled_from(["", "+", "-"]),
        _digits,
        st.sampled_from([".", ""]),
        _digits,
        st.sampled_from(["", "e", "E", "e-", "e+", "E-"]),
        st.integers(0, 300),
    ).map(lambda t: f"{t[0]}{t[1]}{t[2]}{t[3]}" + (f"{t[4]}{t[5]}" if t[4] else "")),
    st.tuples(st.sampled_from(["", "-"]), _long, st.integers(0, 20)).map(
        lambda t: f"{t[0]}{t[1][: t[2]]}.{t[1][t[2] :]}"
    ),
    st.sampled_from(
        [
            ".5",
            "5.",
            "-.5",
            "+.5",
            "1.e5",
            "0",
            "-0",
            "-0.0",
            "4.9e-324",
            "2.2250738585072011e-308",
            "1.7976931348623157e308",
            "1e-400",
            "9007199254740993",
            "0.1000000000000000055511151231257827",
        ]
    ),
)
_space = st.text(" \t", min_size=1, max_size=3)
_end_space = st.sampled_from(["", "", " ", "\t", "\r", " \x0b", "\x0c"])


@st.composite
def _line(draw, zero_based):
    kind = draw(st.sampled_from(["data"] * 6 + ["blank", "comment"]))
    if kind == "blank":
        return draw(st.sampled_from(["", " ", "\t", "\r"]))
    if kind == "comment":
        return "#" + draw(st.text("abc 1:2#\t", max_size=8))
    parts = [draw(_number)]
    if draw(st.integers(0, 9)) == 0:
        parts.append(f"qid:{draw(st.integers(-5, 99))}")
    low = 0 if zero_based else 1
    indices = sorted(draw(st.sets(st.integers(low, low + 40), max_size=7)))
    parts += [f"{('+' if draw(st.integers(0, 19)) == 0 else '')}{i}:{draw(_number)}" for i in indices]
    text = parts[0]
    for p in parts[1:]:
        text += draw(_space) + p
    if draw(st.integers(0, 4)) == 0:
        text += draw(_space) + "#" + draw(st.text("ab 1:2", max_size=6))
    return draw(st.sampled_from(["", " ", "\t"])) + text + draw(_end_space)


@st.composite
def valid_files(draw):
    """(bytes of a valid file, its lines, zero_based it was written for)."""
    zero_based = draw(st.booleans())
    lines = draw(st.lists(_line(zero_based), min_size=1, max_size=8))
    if not any(_is_data(s) for s in lines):
        lines.append("1")
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    text = newline.join(lines) + draw(st.sampled_from([newline, ""]))
    return text.encode(), lines, zero_based


def _is_data(line):
    return bool(line.split("#", 1)[0].split())


_ALPHABET = list(b"0123456789:.-+eE #\t\r\x0b\x0c,qidnaNfI_x\x00\xff")


@st.composite
def mutated_files(draw):
    """(bytes, 1-based number of the mutated line, bytes before the mutation) of a valid file with one data
    line mutated."""
    _, lines, _ = draw(valid_files())
    data_rows = [i for i, s in enumerate(lines) if _is_data(s)]
    k = draw(st.sampled_from(data_rows))
    b = bytearray(lines[k].encode())
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "swap", "duplicate"]))
        toks = bytes(b).split()
        if op == "insert" or not b:
            b.insert(draw(st.integers(0, len(b))), draw(st.sampled_from(_ALPHABET)))
        elif op == "delete":
            del b[draw(st.integers(0, len(b) - 1))]
        elif op == "replace":
            b[draw(st.integers(0, len(b) - 1))] = draw(st.sampled_from(_ALPHABET))
        elif len(toks) >= 3:
            i = draw(st.integers(1, len(toks) - 1))
            j = draw(st.integers(1, len(toks) - 1))
            if op == "swap":
                toks[i], toks[j] = toks[j], toks[i]
            else:
                toks.insert(i, toks[j])
            b = bytearray(b" ".join(toks))
    lines = [s.encode() for s in lines]
    original = b"\n".join(lines) + b"\n"
    lines[k] = bytes(b)
    return b"\n".join(lines) + b"\n", k + 1, original


_settings = st.tuples(st.sampled_from([True, False, "auto"]), st.sampled_from([None, 0, 5]), st.integers(16, 64))

# ---------------------------------------------------------------------------------------------------
# the oracle


class _Named(io.BytesIO):
    """An in-memory file with a name, so that error messages carry it."""

    name = NAME


def _sklearn(data, zero_based, n_features):
    try:
        return load_svmlight_file(_Named(data), zero_based=zero_based, n_features=n_features), None
    except (ValueError, OverflowError) as exc:  # OverflowError: an index above 2**63 - 1
        return None, exc


def _ours(data, zero_based, n_features, block_size):
    """Our result by both entry points (they must agree), or the SvmlightFormatError raised."""
    try:
        X, y = load_svmlight(_Named(data), zero_based=zero_based, n_features=n_features, block_size=block_size)
    except SvmlightFormatError as exc:
        try:
            list(
                iter_svmlight(
                    _Named(data), chunk_size=2, zero_based=zero_based, n_features=n_features, block_size=block_size
                )
            )
        except SvmlightFormatError as exc2:
            assert str(exc2) == str(exc), (str(exc2), str(exc))
            return None, exc
        raise AssertionError(f"load_svmlight raised ({exc}) but iter_svmlight did not") from None
    chunks = list(
        iter_svmlight(_Named(data), chunk_size=2, zero_based=zero_based, n_features=n_features, block_size=block_size)
    )
    Xi = sp.vstack([c for c, _ in chunks], format="csr")
    yi = np.concatenate([c for _, c in chunks])
    assert _same((Xi, yi), (X, y)), "iter_svmlight chunks differ from load_svmlight"
    return (X, y), None


def _same(got, ref):
    (X, y), (Xr, yr) = got, ref
    return (
        X.shape == Xr.shape
        and np.array_equal(X.indptr, Xr.indptr)
        and np.array_equal(X.indices, Xr.indices)
        and X.data.dtype == Xr.data.dtype
        and np.array_equal(X.data.view(np.uint64), Xr.data.view(np.uint64))
        and np.array_equal(np.asarray(y).view(np.uint64), np.asarray(yr).view(np.uint64))
    )


def _readable(data, zero_based, n_features):
    try:
        load_svmlight(_Named(data), zero_based=zero_based, n_features=n_features)
    except SvmlightFormatError:
        return False
    return True


_NEG_INDEX = re.compile(rb"(^|[ \t\r\x0b\x0c])-\d+:")
# a first feature starting with 'qid' that is not 'qid:<int>' (scikit-learn skips it whatever follows)
_BAD_QID = re.compile(rb"^[ \t\r\x0b\x0c]*\S+[ \t\r\x0b\x0c]+qid(?![:][+-]?\d+(\s|$))")


def _documented_stricter(data, ref):
    """Why our error is by design although scikit-learn read the file (None: not documented)."""
    if ref is not None:
        X, y = ref
        if not (np.isfinite(X.data).all() and np.isfinite(y).all()):
            return "non-finite value"
        if X.shape[0] == 0:
            return "no data lines"
    body = b"\n".join(line.split(b"#", 1)[0] for line in data.split(b"\n"))
    if b"_" in body:
        return "digit separator"
    if any(_NEG_INDEX.search(s) for s in body.split(b"\n")):
        return "minus-signed index"
    if any(_BAD_QID.match(s) for s in body.split(b"\n")):
        return "malformed qid"
    return None


def check(data, zero_based, n_features, block_size, mutated_line=None, original=None):
    """Compare our reader with scikit-learn's on ``data``; record and assert the outcome.

    With ``mutated_line`` (and the ``original`` file, readable under these settings), an error must name
    that line (or be one of the whole-file errors: beyond n_features found by the zero-based rule, no data).
    """
    n_features = n_features or None
    if n_features is not None:  # a width that fits the valid lines (5 may be too small: a clean error)
        n_features = n_features if n_features == 5 else 60
    ref, ref_exc = _sklearn(data, zero_based, n_features)
    try:
        got, exc = _ours(data, zero_based, n_features, block_size)
    except AssertionError:
        record(TARGET, "wrong")
        raise
    except Exception as e:
        record(TARGET, "traceback")
        raise AssertionError(f"the reader raised {type(e).__name__}: {e}") from e
    if got is not None:
        if ref is not None:
            if not _same(got, ref):
                record(TARGET, "wrong")
                raise AssertionError("read differently from scikit-learn")
            record(TARGET, "equal to scikit-learn")
            return "equal"
        big = got[0].indices.max(initial=0) + 1 > np.iinfo(np.int32).max
        if big:  # documented: indices above 2**31 - 1 are read here
            record(TARGET, "documented difference")
            return "documented"
        record(TARGET, "wrong")
        raise AssertionError(f"read a file scikit-learn refuses ({ref_exc})")
    # our error: one line naming the file and a line of it
    msg = str(exc)
    n_lines = data.count(b"\n") + 1
    if "\n" in msg or not msg.startswith(f"{NAME}, line ") or not 0 <= exc.line <= n_lines:
        record(TARGET, "wrong")
        raise AssertionError(f"error message does not name the file and line: {msg!r}")
    edge = "is beyond n_features" in msg or "no data lines" in msg
    if mutated_line is not None and original is not None and _readable(original, zero_based, n_features):
        pass
    else:
        mutated_line = None  # the other lines were not valid under these settings either
    if mutated_line is not None and exc.line != mutated_line and not edge:
        record(TARGET, "wrong")
        raise AssertionError(f"the error names line {exc.line}, the mutated line is {mutated_line}: {msg}")
    if ref is None:
        record(TARGET, "both refuse")
        return "both refuse"
    why = _documented_stricter(data, ref)
    if why is None:
        record(TARGET, "wrong")
        raise AssertionError(f"refused a file scikit-learn reads, for no documented reason: {msg}")
    record(TARGET, "documented difference")
    return "documented"


@settings(max_examples=scaled(200))
@given(valid_files(), _settings)
@example((b"1 1:0.5 3:2\n-1 2:1.5\n", [], False), (True, None, 16))
@example((b"1 0:1e-400\n", [], True), ("auto", None, 16))
def test_valid_files_read_as_sklearn_reads_them(file, opts):
    data, _, _ = file
    zb, n_features, block_size = opts
    assert check(data, zb, n_features, block_size) in ("equal", "documented", "both refuse")


@settings(max_examples=scaled(300))
# line 1 is not one-based: the error names it, not the mutated line
@example((b"0 qid:0 +0:0 #\n00 #\n", 2, b"0 qid:0 +0:0 #\n0 #\n"), (False, None, 16))
@given(mutated_files(), _settings)
@example((b"1 -0:1\n", 1, b"1 1:1\n"), (True, None, 16))  # scikit-learn: index 0; here: an error (documented)
@example((b"1 1:1_0\n", 1, b"1 1:1\n"), (True, None, 16))  # scikit-learn: 10.0; here: an error (documented)
@example((b"nan 1:1\n", 1, b"1 1:1\n"), (True, None, 16))
@example((b"1 1:1e999\n", 1, b"1 1:1\n"), (True, None, 16))
# above 2**31 - 1: read here, refused by scikit-learn
@example((b"1 3000000000:1\n", 1, b"1 1:1\n"), (True, None, 16))
@example((b"1 qid:1_0 1:1\n", 1, b"1 1:1\n"), (True, None, 16))
@example((b"0 qid:0 #\n0.0e0 qid0:0 #\n", 2, b"0 qid:0 #\n0.0e0 qid:0 #\n"), (True, None, 16))  # sklearn skips it
@example((b"1 2:1 1:1\n", 1, b"1 1:1\n"), (True, None, 16))
@example((b"1,2 1:1\n", 1, b"1 1:1\n"), (True, None, 16))
# index 0: the file is zero-based after all, and 6 is beyond n_features=5
@example((b"1 1:1\n1 0:1 6:1\n", 2, b"1 1:1\n1 2:1 5:1\n"), ("auto", 5, 16))
def test_mutated_files_equal_sklearn_or_name_the_line(file, opts):
    data, line, original = file
    zb, n_features, block_size = opts
    check(data, zb, n_features, block_size, mutated_line=line, original=original)
