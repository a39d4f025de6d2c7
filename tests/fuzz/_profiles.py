"""Hypothesis profiles and outcome counters shared by the fuzz tests and ``benchmarks/fuzz.py``.

``fuzz-small`` (the test suite, deterministic, a few seconds per target) and ``fuzz-large`` (the
benchmark, >= 10,000 cases in all). Each fuzz test records the outcome of every generated case in
``OUTCOMES[target]`` (e.g. ``"identical"``, ``"clean error"``, ``"wrong"``, ``"traceback"``) before
asserting on it, so the benchmark reports what was generated, not just pass / fail.
"""

import collections

from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    "database": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
}
settings.register_profile("fuzz-small", max_examples=60, derandomize=True, **_COMMON)
settings.register_profile("fuzz-large", max_examples=1200, derandomize=False, **_COMMON)

#: target -> Counter of outcomes of the generated cases run so far in this process
OUTCOMES = collections.defaultdict(collections.Counter)

#: the outcomes that are failures
BAD = ("wrong", "traceback")


def record(target, outcome):
    """Count one generated case of ``target`` (see ``OUTCOMES``)."""
    OUTCOMES[target][outcome] += 1


def scaled(n):
    """``n`` examples in the small profile, scaled in proportion in the current one."""
    return max(1, round(n * settings().max_examples / 60))
