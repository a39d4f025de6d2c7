"""evaluate(): test metrics of a frozen learner agree with scikit-learn's and the learner's own loss."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.metrics import log_loss, mean_absolute_error, mean_squared_error

from streamlearn.evaluation import evaluate
from streamlearn.evaluation.train_test import score_stream
from streamlearn.linear_model import (
    OGDClassifier,
    OGDRegressor,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
)
from streamlearn.losses import loss_value


def test_classification_metrics_on_a9a(a9a):
    X, y, X_test, y_test = a9a
    clf = OGDClassifier().partial_fit(X, y, classes=[-1, 1])
    coef = clf.coef_.copy()
    m = evaluate(clf, X_test, y_test)
    np.testing.assert_array_equal(clf.coef_, coef)  # evaluation does not learn
    assert m["n_examples"] == 16281
    assert m["accuracy"] == clf.score(X_test, y_test) and m["error_rate"] == 1.0 - m["accuracy"]
    assert m["log_loss"] == pytest.approx(log_loss(y_test, clf.predict_proba(X_test)), rel=1e-12)
    z = clf.decision_function(X_test)
    assert m["average_loss"] == pytest.approx(np.mean(np.logaddexp(0.0, -y_test * z)), rel=1e-12)
    # a learner without predict_proba gets no log_loss, and its own (hinge) loss
    pa = PassiveAggressiveClassifier(C=0.01).partial_fit(X, y, classes=[-1, 1])
    m = evaluate(pa, X_test, y_test)
    assert "log_loss" not in m
    assert m["average_loss"] == pytest.approx(np.mean(np.maximum(0, 1 - y_test * pa.decision_function(X_test))))


def test_multiclass_average_loss_is_mean_of_one_vs_rest_losses():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.array(["x", "y", "z"])[np.argmax(X, axis=1)]
    clf = OGDClassifier(loss="hinge").partial_fit(X, y, classes=["x", "y", "z"])
    m = evaluate(clf, X, y)
    T = np.where(y[:, None] == clf.classes_[None, :], 1.0, -1.0)
    assert m["average_loss"] == pytest.approx(loss_value("hinge", T, clf.decision_function(X)).mean(), rel=1e-12)
    assert m["accuracy"] == pytest.approx(np.mean(clf.predict(X) == y))


@pytest.mark.parametrize("reg", [OGDRegressor(eta0=0.05), PassiveAggressiveRegressor(epsilon=0.3)])
def test_regression_metrics(reg):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    y = X @ [1.0, 2.0, -1.0] + rng.normal(size=400)
    reg.partial_fit(X[:300], y[:300])
    m = evaluate(reg, X[300:], y[300:])
    pred = reg.predict(X[300:])
    assert m["rmse"] == pytest.approx(np.sqrt(mean_squared_error(y[300:], pred)), rel=1e-12)
    assert m["mae"] == pytest.approx(mean_absolute_error(y[300:], pred), rel=1e-12)
    eps = getattr(reg, "epsilon", 0.0) if reg._progressive_loss == "epsilon_insensitive" else 0.0
    assert m["average_loss"] == pytest.approx(np.mean(loss_value(reg._progressive_loss, y[300:], pred, eps)))
    assert set(m) == {"n_examples", "rmse", "mae", "average_loss"}


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.nan, "y[2] is nan; expected finite regression targets."),
        (-np.inf, "y[2] is -inf; expected finite regression targets."),
        ("a", "y must hold real numbers (regression targets); got dtype <U32."),
        (1j, "y must hold real numbers (regression targets); got dtype complex128."),
    ],
)
def test_regression_targets_that_are_not_finite_numbers_are_refused(bad, message):
    """A NaN target made every metric NaN, without a word; a text target raised numpy's 'could not convert'."""
    X = np.arange(8.0).reshape(4, 2)
    reg = OGDRegressor().partial_fit(X, [1.0, 2.0, 3.0, 4.0])
    y = np.array([1.0, 2.0, bad, 4.0])
    with pytest.raises(ValueError) as err:
        evaluate(reg, X, y)
    assert str(err.value) == message
    assert evaluate(reg, X, [1, 2, 3, 4])["n_examples"] == 4  # integer targets are numbers


def test_errors(a9a):
    X, y, X_test, y_test = a9a
    with pytest.raises(NotFittedError):
        evaluate(OGDClassifier(), X_test, y_test)
    clf = OGDClassifier().partial_fit(X[:100], y[:100], classes=[-1, 1])
    with pytest.raises(ValueError, match=r"labels \[3\] that are not among the learner's classes"):
        evaluate(clf, X_test[:2], np.array([1, 3]))
    with pytest.raises(ValueError, match="y has 5 entries but X has 2 rows"):
        evaluate(clf, X_test[:2], y_test[:5])
    with pytest.raises(ValueError, match="0 rows"):
        evaluate(clf, X_test[:0], y_test[:0])
    with pytest.raises(TypeError, match="online-learner contract"):
        evaluate(object(), X_test, y_test)


def test_a_fitted_batch_learner_is_evaluated_too(a9a):
    # evaluate reads decision_function / scores_to_labels (or predict) and the loss: it learns nothing, so the
    # batch SVMs of the learner registry, which have no partial_fit_scores, are evaluated as any learner
    from streamlearn.linear_model import DualCoordinateDescentSVC

    X, y, X_test, y_test = a9a
    svm = DualCoordinateDescentSVC(tol=0.1).fit(X[:2000], y[:2000])
    metrics = evaluate(svm, X_test, y_test)
    assert metrics["accuracy"] == pytest.approx(svm.score(X_test, y_test), rel=1e-12)
    scores = svm.decision_function(X_test)
    want = np.mean(loss_value(svm._progressive_loss, np.where(y_test == svm.classes_[1], 1.0, -1.0), scores))
    assert metrics["average_loss"] == pytest.approx(want, rel=1e-12)
    with pytest.raises(
        TypeError, match=r"it needs predict\(\) and _progressive_loss; object lacks predict, _progressive"
    ):
        evaluate(object(), X_test, y_test)


@pytest.mark.parametrize(("wrong", "n"), [(8, 100), (11, 400), (3, 7)])
def test_error_rate_of_a_scored_stream_is_the_ratio_of_the_counts(wrong, n):
    """``train --test``'s test_error_rate is ``wrong / n`` to the last bit (it was ``1 - correct / n``:
    0.07999999999999996 for 8 mistakes in 100)."""
    X = np.ones((n, 1))
    y = np.where(np.arange(n) < n - wrong, 1, -1)
    clf = PassiveAggressiveClassifier().fit(np.array([[1.0], [-1.0]]), np.array([1, -1]))
    assert (clf.predict(X) == 1).all()
    res = score_stream(clf, iter([(X, y)]))
    assert res["error_rate"] == wrong / n and res["accuracy"] == (n - wrong) / n


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (-np.ones(20), "Negative values in data passed to sample_weight"),
        (np.r_[np.ones(19), -19.5], "Negative values in data passed to sample_weight"),
        (np.full(20, np.nan), "sample_weight contains NaN or infinity"),
        (np.ones(3), r"sample_weight.shape == \(3,\), expected \(20,\)"),
        (np.ones(20, dtype=complex), "sample_weight has complex values"),
        (np.full(20, 1e308), r"sample_weight\[0\] = 1e\+308; expected weights below 2\*\*500"),
    ],
)
def test_test_weights_are_checked_as_the_learners_check_them(weights, message):
    """Before: negative and NaN weights were 'all 20 test examples have sample weight 0', a wrong length numpy's
    matmul error, complex weights their real parts (a ComplexWarning) and weights of 1e308 NaN metrics."""
    X = np.random.default_rng(0).normal(size=(20, 4))
    y = (X[:, 0] > 0).astype(int)
    clf = OGDClassifier(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=message):
        score_stream(clf, iter([(X, y, weights)]))
