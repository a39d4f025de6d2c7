"""Parameter ranges (streamlearn._validation.Interval): an open end refuses infinity, NaN is in no range."""

import math

import pytest

from streamlearn._validation import Interval

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
