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
