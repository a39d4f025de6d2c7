"""``average=True`` (Perceptron, Passive-Aggressive, CW): ``coef_``/``intercept_`` are the mean of the weights
after each example, checked against the plain learner run one row at a time (the definition, no trick)."""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn.linear_model import ConfidenceWeightedClassifier, PassiveAggressiveClassifier, Perceptron

CASES = [
    (Perceptron, {"radius": 1.0}),
    (Perceptron, {"fit_intercept": False}),
    (PassiveAggressiveClassifier, {"variant": "pa"}),
    (PassiveAggressiveClassifier, {"variant": "pa2", "C": 0.1}),
    (ConfidenceWeightedClassifier, {"covariance": "full", "update": "variance", "a": 0.1}),
    (ConfidenceWeightedClassifier, {"covariance": "diagonal", "update": "stdev"}),
]


def _data(n_classes, rng, n=80, d=7):
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    y = rng.integers(0, n_classes, n)
    return sp.csr_matrix(X), y


def _mean_of_iterates(cls, params, X, y, classes, sw):
    plain = cls(**params)
    total_w = total_b = None
    seen = 0
    for i in range(X.shape[0]):
        plain.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes, sample_weight=sw[i : i + 1])
        if sw[i] == 0:
            continue  # a zero-weight example is no step
        seen += 1
        total_w = plain.coef_.copy() if total_w is None else total_w + plain.coef_
        total_b = plain.intercept_.copy() if total_b is None else total_b + plain.intercept_
    return plain, total_w / seen, total_b / seen


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("cls,params", CASES)
def test_average_is_the_mean_of_the_weights_after_each_example(cls, params, n_classes):
    rng = np.random.default_rng(n_classes)
    X, y = _data(n_classes, rng)
    classes = np.arange(n_classes)
    sw = rng.choice([0.0, 1.0, 2.0], size=X.shape[0], p=[0.1, 0.7, 0.2])
    plain, mean_w, mean_b = _mean_of_iterates(cls, params, X, y, classes, sw)
    avg = cls(average=True, **params)
    for part in (slice(0, 30), slice(30, None)):  # two chunks: the sums carry over
        avg.partial_fit(X[part], y[part], classes=classes, sample_weight=sw[part])
    np.testing.assert_allclose(avg.running_coef_, plain.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(avg.running_intercept_, plain.intercept_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(avg.coef_, mean_w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(avg.intercept_, mean_b, rtol=1e-9, atol=1e-12)
    assert not np.allclose(avg.coef_, plain.coef_)  # the average is not the last weights


def test_averaged_model_saves_loads_and_continues(tmp_path):
    rng = np.random.default_rng(0)
    X, y = _data(2, rng, n=120)
    a = Perceptron(average=True).partial_fit(X[:60], y[:60], classes=[0, 1])
    a.save(tmp_path / "p.slm")
    b = Perceptron.load(tmp_path / "p.slm")
    a.partial_fit(X[60:], y[60:])
    b.partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_average_cannot_be_switched_on_a_trained_model():
    rng = np.random.default_rng(1)
    X, y = _data(2, rng)
    clf = PassiveAggressiveClassifier().partial_fit(X, y, classes=[0, 1])
    clf.set_params(average=True)
    with pytest.raises(ValueError, match="average=True differs"):
        clf.partial_fit(X, y)


def test_parameter_mixing_keeps_the_average_consistent():
    rng = np.random.default_rng(2)
    X, y = _data(2, rng, n=100)
    models = [
        PassiveAggressiveClassifier(average=True).partial_fit(X[p], y[p], classes=[0, 1])
        for p in (slice(0, 50), slice(50, None))
    ]
    mixed = PassiveAggressiveClassifier.mix(None, models, np.array([0.5, 0.5]))
    np.testing.assert_allclose(mixed.coef_, (models[0].coef_ + models[1].coef_) / 2)
    np.testing.assert_allclose(mixed.running_coef_ - mixed.average_sum_ / mixed.t_, mixed.coef_)
    mixed.partial_fit(X[:10], y[:10])  # continues from the mixed state
    assert np.all(np.isfinite(mixed.coef_))


@pytest.mark.parametrize("cls,params", CASES)
def test_progressive_scores_are_the_averaged_models(cls, params):
    from streamlearn.checks import check_scores_are_pre_update

    check_scores_are_pre_update(cls(average=True, **params))
