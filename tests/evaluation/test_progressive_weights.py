"""Importance weights in progressive validation: VW's weighted averages."""

import numpy as np
import pytest

from streamlearn.datasets import load_a9a
from streamlearn.evaluation import progressive_validation
from streamlearn.linear_model import FTRLProximalClassifier


@pytest.fixture(scope="module")
def a9a():
    X, y, _, _ = load_a9a()
    return X[:3000], y[:3000]


def _chunks(X, y, w=None, size=500):
    for s in range(0, X.shape[0], size):
        yield (X[s : s + size], y[s : s + size]) if w is None else (X[s : s + size], y[s : s + size], w[s : s + size])


def test_unit_weights_change_nothing(a9a):
    X, y = a9a
    plain = progressive_validation(FTRLProximalClassifier(), _chunks(X, y), classes=[-1, 1])
    ones = progressive_validation(FTRLProximalClassifier(), _chunks(X, y, np.ones(len(y))), classes=[-1, 1])
    assert ones.average_loss == plain.average_loss and ones.online_error_rate == plain.online_error_rate
    assert isinstance(ones.n_mistakes, int) and ones.n_mistakes == plain.n_mistakes


def test_weighted_averages_divide_by_the_sum_of_weights(a9a):
    X, y = a9a
    w = np.random.default_rng(0).choice([0.0, 0.5, 3.0], size=len(y))
    res = progressive_validation(FTRLProximalClassifier(), _chunks(X, y, w), classes=[-1, 1])
    # the same learner, predicting each example before learning it, per chunk, by hand
    clf = FTRLProximalClassifier()
    loss = err = 0.0
    for Xc, yc, wc in _chunks(X, y, w):
        z = clf.partial_fit_scores(Xc, yc, classes=[-1, 1], sample_weight=wc)
        loss += float(wc @ np.logaddexp(0.0, -yc * z))
        err += float(wc @ (clf.scores_to_labels(z) != yc))
    assert res.sum_weights == pytest.approx(w.sum())
    assert res.average_loss == pytest.approx(loss / w.sum(), rel=1e-12)
    assert res.online_error_rate == pytest.approx(err / w.sum(), rel=1e-12)
    assert res.checkpoints[-1]["average_loss"] == pytest.approx(res.average_loss, rel=1e-12)
