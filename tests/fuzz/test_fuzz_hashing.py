"""Fuzzing dict rows through :class:`~streamlearn.preprocessing.DictHasher` against the plain-Python twin.

Random chunks of dict rows over a few column names (so that later rows take the short path of a column already
seen) with values of every kind a user's dict may hold: Python floats (NaN, infinities, subnormals, the
largest), ints (beyond 64 bits and beyond the float range), booleans, NumPy scalars of every width, strings
(empty, unicode), bytes, None, ``Decimal`` and ``Fraction``, complex numbers and containers; hashed into 1 to
20 bits (few bits: many collisions, summed; a sum of 0 is no feature), some columns categorical, some ignored. Each chunk, hashed at
once, row by row (``transform_one``) by the same hasher, and by a hasher that has seen it before, either

* equals the twin (``tests/naive_tabular.naive_matrix``: a number is the feature ``column`` with its value, any
  other value the indicator ``column=text``; NaN, None and 0 are no feature) bit for bit, or
* raises a one-line ``ValueError`` or ``TypeError`` naming the row and the column (a value that is not finite
  as a float, or not a feature value) or the key (not a string);

and never warns.
"""

import math
import numbers
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamlearn.preprocessing import DictHasher
from tests.naive_tabular import naive_matrix

from ._profiles import record

TARGET = "dict rows"
KEYS = ["a", "b", "c", "zip", "é"]

_numpy = st.one_of(
    st.floats(width=64).map(np.float64),
    st.floats(width=32).map(np.float32),
    st.floats(width=16).map(np.float16),
    st.integers(-(2**63), 2**63 - 1).map(np.int64),
    st.integers(-(2**31), 2**31 - 1).map(np.int32),
    st.integers(-128, 127).map(np.int8),
    st.integers(0, 2**64 - 1).map(np.uint64),
    st.booleans().map(np.bool_),
)
_value = st.one_of(
    st.floats(),
    st.sampled_from([0.0, -0.0, 5e-324, 1.7976931348623157e308, math.inf, -math.inf, math.nan]),
    st.integers(-1000, 1000),
    st.integers(),
    st.sampled_from([2**64, -(2**70), 10**308, 10**400, -(10**400)]),
    st.booleans(),
    _numpy,
    st.text(max_size=4),
    st.binary(max_size=3).filter(lambda b: _utf8(b)),
    st.none(),
    st.decimals(allow_nan=True, allow_infinity=True, places=3),
    st.fractions(max_denominator=7),
    st.sampled_from([1 + 2j, [1.0], {"x": 1}, object()]),
)
_rows = st.lists(
    st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=3)), _value, max_size=6), min_size=1, max_size=5
)


def _utf8(b):
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _twin_value(key, v, r):
    """The value as the twin reads it (a Python number, text or None), or the error the hasher must raise."""
    if isinstance(v, np.generic):
        v = v.item()  # NumPy scalars are the numbers (or booleans) they hold
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
        return TypeError(f"row {r}, key {key!r}: complex values are not features.")
    if isinstance(v, numbers.Number):  # (Decimal is a Number, not a Real)
        try:
            f = float(v)
        except OverflowError:
            return ValueError(f"row {r}, key {key!r}: value is an int of about")
        except ValueError:  # Decimal('sNaN')
            return ValueError(f"row {r}, key {key!r}: value {v!r} is not a float")
        if math.isinf(f):
            return ValueError(f"row {r}, key {key!r}: value {f} is not finite.")
        return v if isinstance(v, int) else f  # (an int's text as a category keeps its digits)
    return TypeError(f"row {r}, key {key!r}: a feature value must be a number, a string, a boolean or None")


def _category(v):
    """The text of a number in a categorical column, as the readers write it: integers without a decimal point."""
    if isinstance(v, int):
        return str(v)
    return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)


def _expected(rows, ignore, categorical):
    """The twin's input (rows of Python values, ignored columns dropped, numbers of categorical columns as their
    text), or the first error in row order."""
    out = []
    for r, row in enumerate(rows):
        clean = {}
        for key, v in row.items():
            if key in ignore:
                continue
            v = _twin_value(key, v, r)
            if isinstance(v, Exception):
                return v
            if key in categorical and isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v):
                v = _category(v)
            clean[key] = v
        out.append(clean)
    return out


def _same(X, Y):
    assert X.shape == Y.shape
    np.testing.assert_array_equal(X.indptr, Y.indptr)
    np.testing.assert_array_equal(X.indices, Y.indices)
    np.testing.assert_array_equal(X.data, Y.data)


def _hashed(make, rows):
    """The chunk hashed at once, row by row, and again by the hasher that hashed it (its columns known)."""
    import scipy.sparse as sp

    hasher = make()
    once = hasher.transform(rows)
    one_by_one = sp.vstack([make().transform_one(r) for r in rows], format="csr")
    again = hasher.transform(rows)
    return once, one_by_one, again


@given(
    rows=_rows,
    bits=st.integers(1, 20),
    categorical=st.sets(st.sampled_from(KEYS)),
    ignore=st.sets(st.sampled_from(KEYS), max_size=2),
)
def test_dict_rows_hash_as_the_twin_or_name_the_row_and_key(rows, bits, categorical, ignore):
    expected = _expected(rows, ignore, categorical)

    def make():
        return DictHasher(bits=bits, categorical=sorted(categorical), ignore=sorted(ignore))

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning on some value (an overflow in a cast) is a failure too
            got = _hashed(make, rows)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        if isinstance(expected, Exception) and type(exc) is type(expected) and msg.startswith(str(expected)):
            record(TARGET, "clean error")
            return
        record(TARGET, "wrong" if "\n" not in msg else "traceback")
        raise
    except Exception:
        record(TARGET, "traceback")
        raise
    if isinstance(expected, Exception):
        record(TARGET, "wrong")
        pytest.fail(f"hashed without the error {expected!r}")
    try:
        want = naive_matrix(expected, bits, categorical=categorical)
        want.eliminate_zeros()  # values that collide and sum to 0 are no feature (no explicit zero)
        for X in got:
            _same(X, want)
    except AssertionError:
        record(TARGET, "wrong")
        raise
    record(TARGET, "identical")
