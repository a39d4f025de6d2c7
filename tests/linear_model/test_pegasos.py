"""Pegasos: the paper's properties (projection ball, mini-batch rule, first-round wipe, objective decrease)."""

import re

import numpy as np
import pytest

from streamlearn.linear_model import DualCoordinateDescentSVC, PegasosClassifier


def _norm(clf):
    return np.sqrt((clf.coef_**2).sum() + (clf.intercept_**2).sum())


@pytest.mark.parametrize("batch_size", [1, 4])
def test_iterates_stay_in_the_ball(a9a, batch_size):
    """||w_t|| <= 1/sqrt(lambda) after every round (Algorithms §2.7; radius 1/sqrt(lambda), not the misprinted
    min(1, sqrt(1/lambda)))."""
    n = 600
    X, y = a9a[0][:n], a9a[1][:n]
    alpha = 0.05
    radius = 1 / np.sqrt(alpha)
    clf = PegasosClassifier(alpha=alpha, batch_size=batch_size)
    norms = []
    for start in range(0, n, batch_size):
        clf.partial_fit(X[start : start + batch_size], y[start : start + batch_size], classes=[-1, 1])
        norms.append(_norm(clf))
    assert max(norms) <= radius * (1 + 1e-12)
    assert max(norms) > 0.99 * radius  # the projection was active: the check is not vacuous
    free = PegasosClassifier(alpha=alpha, batch_size=batch_size, projection=False).partial_fit(X, y, classes=[-1, 1])
    assert free.n_rounds_ == clf.n_rounds_ == n // batch_size


def test_without_projection_the_first_rounds_leave_the_ball():
    """With eta_1 = 1/lambda the first step has norm ||x|| / lambda: far outside 1/sqrt(lambda) for small lambda,
    which the projection repairs."""
    X = np.array([[3.0, 4.0]])
    free = PegasosClassifier(alpha=0.01, projection=False, fit_intercept=False).partial_fit(X, [1], classes=[0, 1])
    np.testing.assert_allclose(_norm(free), 5.0 / 0.01)
    proj = PegasosClassifier(alpha=0.01, fit_intercept=False).partial_fit(X, [1], classes=[0, 1])
    np.testing.assert_allclose(_norm(proj), 10.0)
    np.testing.assert_allclose(proj.coef_ / _norm(proj), free.coef_ / _norm(free))


def test_mini_batch_divides_by_k_and_waits_for_the_round():
    """w_2 = (eta_1 / k) sum_{A+} y x: the sum is divided by k (not |A+|), and a round is applied only when its
    k-th example arrives."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]])
    clf = PegasosClassifier(alpha=1.0, batch_size=3, projection=False, fit_intercept=False)
    clf.partial_fit(X[:2], [1, 0], classes=[0, 1])
    assert clf.n_rounds_ == 0 and not clf.coef_.any()  # round pending
    clf.partial_fit(X[2:], [1])
    np.testing.assert_allclose(clf.coef_, [[(1.0 + 2.0) / 3, -1.0 / 3]])  # eta_1 = 1


def test_objective_decreases_over_passes(a9a):
    X, y = a9a[0], a9a[1]
    alpha = 1e-3

    def objective(clf):
        z = clf.decision_function(X)
        return alpha / 2 * _norm(clf) ** 2 + np.maximum(0, 1 - y * z).mean()

    one = PegasosClassifier(alpha=alpha, batch_size=8, max_iter=1, random_state=0).fit(X, y)
    five = PegasosClassifier(alpha=alpha, batch_size=8, max_iter=5, random_state=0).fit(X, y)
    # the same objective is lambda times the SVM primal with C = 1/(lambda n) (bias regularised in both)
    optimum = alpha * DualCoordinateDescentSVC(C=1 / (alpha * len(y)), random_state=0).fit(X, y).objective_[0]
    assert optimum < objective(five) < objective(one)
    assert objective(five) < 1.02 * optimum, (objective(five), optimum)


@pytest.mark.parametrize(
    "params,message",
    [
        (
            {"batch_size": 0},
            "The 'batch_size' parameter of PegasosClassifier must be an int in the range [1, inf). Got 0 instead",
        ),
        ({"alpha": 0.0}, "'alpha' parameter of PegasosClassifier must be a float in the range (0.0, inf)"),
        (  # beyond what the kernel counts in (it was a numba TypingError traceback)
            {"batch_size": 10**30},
            "'batch_size' parameter of PegasosClassifier must be an int in the range [1, inf) (an integer of at most "
            "63 bits)",
        ),
    ],
)
def test_bad_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        PegasosClassifier(**params).partial_fit([[1.0]], [1], classes=[0, 1])


def test_a_round_that_overflows_is_a_divergence_error_not_a_traceback():
    """Weights and values near 2**500 overflow the squared norm of a round's update: the projection then set the
    scale to 0 and the next round stopped on a ZeroDivisionError traceback."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    y = np.where(X[:, 0] > 0, 1, -1)
    model = PegasosClassifier(alpha=0.01).partial_fit(X, y, classes=[-1, 1])
    with pytest.raises(FloatingPointError, match="PegasosClassifier diverged"):
        model.partial_fit(X[:10], y[:10], sample_weight=np.full(10, 2.0**499))


def test_a_divergence_from_a_tiny_alpha_advises_raising_alpha():
    """The step is 1 / (alpha t): alpha = 1e-300 overflows it at the first example, and the message said "Lower
    alpha", the wrong way."""
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(FloatingPointError) as err:
        PegasosClassifier(alpha=1e-300).partial_fit(X, np.array([1, -1]), classes=[-1, 1])
    assert str(err.value).endswith("Lower 1/alpha (raise alpha) or scale the features.")
