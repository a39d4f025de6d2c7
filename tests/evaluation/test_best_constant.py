"""The best constant of a progressive pass (Vowpal Wabbit's "best constant"): the most frequent label or the mean,
in hindsight, with its error rate or RMSE over the same weighted examples."""

import numpy as np
import pytest

from streamlearn.evaluation import progressive_validation
from streamlearn.linear_model import OGDRegressor, PassiveAggressiveClassifier


def _chunks(X, y, w, size):
    for s in range(0, X.shape[0], size):
        yield X[s : s + size], y[s : s + size], w[s : s + size]


@pytest.mark.parametrize("size", [1, 7, 100, 1000])
def test_classification_most_frequent_label_by_weight(size):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = rng.choice(np.array(["a", "b", "c"]), size=600, p=[0.5, 0.3, 0.2])
    w = rng.choice([0.0, 1.0, 4.0], size=600)
    w[y == "c"] *= 6.0  # by weight, "c" is the most frequent label although it is the rarest row
    res = progressive_validation(PassiveAggressiveClassifier(), _chunks(X, y, w, size), classes=["a", "b", "c"])
    totals = {c: w[y == c].sum() for c in "abc"}
    best = max(totals, key=totals.get)
    assert best == "c" and res.best_constant == best
    assert res.best_constant_error_rate == pytest.approx(1.0 - totals[best] / w.sum(), rel=1e-12)
    assert res.best_constant_rmse is None
    assert res.to_dict()["best_constant"] == "c"


@pytest.mark.parametrize("size", [1, 13, 1000])
def test_regression_weighted_mean_and_rmse_for_any_chunking(size):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 2))
    y = 1e6 + rng.normal(size=500)  # a large offset: the pairwise update keeps the deviations exact
    w = rng.uniform(0.0, 2.0, size=500)
    res = progressive_validation(OGDRegressor(eta0=0.01), _chunks(X, y, w, size))
    mean = np.average(y, weights=w)
    assert res.best_constant == pytest.approx(mean, rel=1e-14)
    assert res.best_constant_rmse == pytest.approx(np.sqrt(np.average((y - mean) ** 2, weights=w)), rel=1e-9)
    assert res.best_constant_error_rate is None


def test_summary_line():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 2))
    y = np.where(rng.random(200) < 0.8, 1, -1)
    res = progressive_validation(PassiveAggressiveClassifier(), (X, y), classes=[-1, 1])
    rate = np.mean(y != 1)
    assert f"best constant = 1 (error rate {rate:.6f})" in res.format_table().splitlines()


@pytest.mark.parametrize(("minority", "n"), [(11, 400), (1, 10), (3, 7), (29, 1000)])
def test_error_rate_of_counts_is_the_ratio_of_the_counts(minority, n):
    """``minority / n`` to the last bit, as the online error rate of as many mistakes is: computed as
    ``1 - 389 / 400`` it was 0.02749999999999997, below a learner's 0.0275 of the same 11 mistakes, and the
    command line warned that the learner did worse than the constant."""
    X = np.ones((n, 1))
    y = np.where(np.arange(n) < minority, -1, 1)
    res = progressive_validation(PassiveAggressiveClassifier(), (X, y), classes=[-1, 1])
    assert res.best_constant == 1
    assert res.best_constant_error_rate == minority / n
