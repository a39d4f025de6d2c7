"""Parameter ranges (streamlearn._validation.Interval): an open end refuses infinity, NaN is in no range; the
boundary normalisation of the inputs (streamlearn._validation)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._validation import Interval
from streamlearn.linear_model import OGDClassifier

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize(
    "interval,value,expected",
    [
        (Interval(float, 0, None, closed="left"), INF, False),  # [0.0, inf): open at infinity
        (Interval(float, 0, None, closed="both"), INF, False),  # a None end is open whatever 'closed' says
        (Interval(float, 0, None, closed="neither"), 1e308, True),
        (Interval(float, None, 0, closed="right"), -INF, False),
        (Interval(float, None, None, closed="both"), INF, False),
        (Interval(float, None, None, closed="both"), -INF, False),
        (Interval(float, None, None, closed="both"), 0.0, True),
        (Interval(float, 0, math.inf, closed="both"), INF, True),  # [0.0, inf] names infinity as a bound
        (Interval(float, 0, math.inf, closed="left"), INF, False),
        (Interval(float, 0, math.inf, closed="both"), NAN, False),
        (Interval(float, None, None, closed="neither"), NAN, False),
        (Interval(float, 0, 1, closed="both"), NAN, False),
        (Interval(int, 1, None, closed="left"), 2**63 - 1, True),
        (Interval(int, 1, None, closed="left"), 2**63, False),  # the kernels count in int64
        (Interval(int, 1, None, closed="left"), 10**400, False),
    ],
)
def test_interval_ends(interval, value, expected):
    assert interval.is_satisfied_by(value) is expected


@pytest.mark.parametrize(
    "interval,text",
    [
        (Interval(float, 0, None, closed="left"), "a float in the range [0.0, inf)"),
        (Interval(float, 0, math.inf, closed="both"), "a float in the range [0.0, inf]"),
        (Interval(float, None, 1, closed="both"), "a float in the range (-inf, 1.0]"),
    ],
)
def test_interval_message_matches_what_it_takes(interval, text):
    assert str(interval) == text


@pytest.mark.parametrize("make", ["FMClassifier", "OjaSketch", "RandomProjectionSketch", "check_rng"])
def test_a_negative_random_state_is_refused_naming_the_parameter(make):
    """numpy takes non-negative seeds only; -1 got through the checks and failed inside numpy with its bare
    'expected non-negative integer' (streamlearn train -l fm -p random_state=-1)."""
    import numpy as np

    from streamlearn._validation import check_rng
    from streamlearn.facto import FMClassifier
    from streamlearn.sketch import OjaSketch, RandomProjectionSketch

    X, y = np.eye(6), np.array([0, 1] * 3)
    if make == "check_rng":
        with pytest.raises(ValueError, match=r"random_state must be a non-negative int.*got -1"):
            check_rng(-1)
        return
    cls = {"FMClassifier": FMClassifier, "OjaSketch": OjaSketch, "RandomProjectionSketch": RandomProjectionSketch}[make]
    est = cls(random_state=-1) if make == "FMClassifier" else cls(ell=2, random_state=-1)
    with pytest.raises(ValueError, match=rf"The 'random_state' parameter of {make} must be a non-negative int"):
        est.fit(X, y) if make == "FMClassifier" else est.partial_fit(X)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("dtype", [">i4", ">i8", "<u8", "<u4", "<i2"])
def test_index_arrays_of_any_integer_dtype_are_learnt_as_int32_ones(fmt, dtype):
    # index arrays assigned by hand (big-endian, unsigned, narrow): the same model as scipy's own int32 arrays,
    # never a numba typing error or scipy's "unsupported data types in input"
    rng = np.random.default_rng(0)
    X = sp.random(30, 6, density=0.5, format=fmt, random_state=0)
    y = rng.integers(0, 2, 30)
    odd = X.copy()
    odd.indices, odd.indptr = X.indices.astype(dtype), X.indptr.astype(dtype)
    ref = OGDClassifier(shuffle=False).fit(X, y)
    clf = OGDClassifier(shuffle=False).fit(odd, y)
    np.testing.assert_array_equal(clf.coef_, ref.coef_)
    np.testing.assert_array_equal(clf.decision_function(odd), ref.decision_function(X))


@pytest.mark.parametrize("which", ["indices", "indptr"])
def test_index_arrays_that_are_not_integers_are_refused_in_one_line(which):
    X = sp.random(10, 4, density=0.5, format="csr", random_state=0)
    setattr(X, which, getattr(X, which).astype(np.float64))
    with pytest.raises(
        ValueError, match=rf"^X is a malformed CSR matrix: its {which} must be integers; got dtype float64\.$"
    ):
        OGDClassifier().fit(X, np.arange(10) % 2)
