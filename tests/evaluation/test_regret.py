"""regret(): the batch solvers against brute force on tiny problems, optimality against other predictors,
zero regret for a learner that plays the comparator, and agreement with progressive validation."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize, minimize_scalar
from sklearn.base import clone

import streamlearn.evaluation._regret as regret_module
from streamlearn.datasets import load_a9a
from streamlearn.evaluation import progressive_validation, regret
from streamlearn.linear_model import (
    OGDClassifier,
    OGDRegressor,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    Perceptron,
)
from streamlearn.losses import loss_value


@pytest.fixture(scope="module")
def a9a_small():
    X, y, _, _ = load_a9a()
    return X[:1500], y[:1500]


def _total(name, X, t, w, b, eps=0.0):
    return float(np.sum(loss_value(name, t, X @ np.asarray(w) + b, eps)))


def _tiny(n, seed, *, task="clf", noise=0.8):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    if task == "clf":
        y = np.where(1.5 * x - 0.3 + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    else:
        y = 2.0 * x + 0.5 + rng.standard_t(3, size=n)
    return x.reshape(-1, 1), y


def _vertex_enumeration(name, rows, rhs, f):
    """Exact minimum of a convex piecewise-linear f over R^2: f is linear between the kink lines
    rows[i] . theta = rhs[i], so its minimum is attained at an intersection of two of them."""
    best = np.inf
    for i, j in itertools.combinations(range(len(rhs)), 2):
        M = np.array([rows[i], rows[j]])
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        best = min(best, f(np.linalg.solve(M, [rhs[i], rhs[j]])))
    return best


# --------------------------------------------------------------------------------------------------------
# brute force on tiny problems
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hinge_lp_equals_vertex_enumeration(seed):
    X, t = _tiny(9, seed)
    res = regret(np.zeros(9), X, t, loss="hinge", classes=[-1, 1])
    # kinks: t_i (w x_i + b) = 1  <=>  x_i w + b = t_i
    brute = _vertex_enumeration(
        "hinge", [(x, 1.0) for x in X[:, 0]], list(t), lambda th: _total("hinge", X, t, th[:1], th[1])
    )
    assert res.best_fixed_loss == pytest.approx(brute, rel=1e-8, abs=1e-9)
    assert res.solver == "linear program (HiGHS, dual)"  # (w, b) recovered from the dual, no fallback
    assert res.regret == pytest.approx(9.0 - brute)  # the all-zero scores pay hinge 1 per example
    # without intercept: kinks x_i w = t_i in one dimension (the minimum sits on one of them or at 0)
    res0 = regret(np.zeros(9), X, t, loss="hinge", classes=[-1, 1], fit_intercept=False)
    brute0 = min(_total("hinge", X, t, [w], 0.0) for w in [0.0, *(t / X[:, 0])])
    assert res0.best_fixed_loss == pytest.approx(brute0, rel=1e-8, abs=1e-9) and res0.comparator[1] == 0.0


@pytest.mark.parametrize("seed", [0, 3])
def test_epsilon_insensitive_lp_equals_vertex_enumeration(seed):
    X, y = _tiny(8, seed, task="reg")
    eps = 0.4
    res = regret(np.zeros(8), X, y, loss="epsilon_insensitive", epsilon=eps)
    rows = [(x, 1.0) for x in X[:, 0]] * 2
    rhs = list(y + eps) + list(y - eps)
    brute = _vertex_enumeration("eps", rows, rhs, lambda th: _total("epsilon_insensitive", X, y, th[:1], th[1], eps))
    assert res.best_fixed_loss == pytest.approx(brute, rel=1e-8, abs=1e-9)
    # the primal LP (the fallback of the dual) agrees
    A = sp.csr_matrix(np.column_stack([X, np.ones(8)]))
    w, b, _ = regret_module._lp_primal(A, y, "epsilon_insensitive", eps, 1, True)
    assert _total("epsilon_insensitive", X, y, w, b, eps) == pytest.approx(brute, rel=1e-8, abs=1e-9)


def test_squared_equals_closed_form_and_grid():
    X, y = _tiny(30, 5, task="reg")
    res = regret(np.zeros(30), X, y, loss="squared")
    slope, intercept = np.polyfit(X[:, 0], y, 1)
    assert res.best_fixed_loss == pytest.approx(_total("squared", X, y, [slope], intercept), rel=1e-12)
    np.testing.assert_allclose([res.comparator[0][0], res.comparator[1]], [slope, intercept], rtol=1e-9)
    W, B = np.meshgrid(np.linspace(-1, 5, 301), np.linspace(-3, 4, 301))
    grid = ((W.ravel()[:, None] * X[:, 0] + B.ravel()[:, None] - y) ** 2).sum(axis=1)
    assert res.best_fixed_loss <= grid.min()


@pytest.mark.parametrize("name", ["logistic", "modified_huber"])
@pytest.mark.parametrize("seed", [0, 1])
def test_smooth_loss_lbfgs_equals_grid_then_polish(seed, name):
    X, t = _tiny(14, seed, noise=1.5)
    res = regret(np.zeros(14), X, t, loss=name)
    W, B = np.meshgrid(np.linspace(-6, 6, 241), np.linspace(-6, 6, 241))
    grid = loss_value(name, t, W.ravel()[:, None] * X[:, 0] + B.ravel()[:, None]).sum(axis=1)
    start = [W.ravel()[grid.argmin()], B.ravel()[grid.argmin()]]
    polished = minimize(
        lambda th: _total(name, X, t, th[:1], th[1]),
        start,
        method="Nelder-Mead",
        options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 10000},
    ).fun
    assert res.best_fixed_loss <= grid.min() + 1e-12
    assert res.best_fixed_loss == pytest.approx(polished, rel=1e-9)
    assert res.converged and res.note == ""


@pytest.mark.parametrize("name", ["squared", "logistic", "modified_huber"])
def test_radius_equals_brute_force_on_the_circle(name):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(25, 2))
    t = np.where(X @ [2.0, -1.0] + 0.5 * rng.normal(size=25) > 0, 1.0, -1.0)
    free = regret(np.zeros(25), X, t, loss=name, classes=[-1, 1], fit_intercept=False)
    radius = 0.4 * np.linalg.norm(free.comparator[0])
    res = regret(np.zeros(25), X, t, loss=name, classes=[-1, 1], fit_intercept=False, radius=radius)
    w = res.comparator[0]
    assert np.linalg.norm(w) <= radius * (1 + 1e-12) and "bisection" in res.solver

    def on_circle(a):
        return _total(name, X, t, radius * np.array([np.cos(a), np.sin(a)]), 0.0)

    angles = np.linspace(-np.pi, np.pi, 20001)
    a0 = angles[np.argmin([on_circle(a) for a in angles])]
    brute = minimize_scalar(on_circle, bounds=(a0 - 1e-3, a0 + 1e-3), method="bounded", options={"xatol": 1e-12}).fun
    # the convex minimum over the disc lies on its boundary since the free minimum is outside; check a polar
    # grid of the interior too
    R, A = np.meshgrid(np.linspace(0, radius, 60), np.linspace(-np.pi, np.pi, 181))
    inner = [_total(name, X, t, [r * np.cos(a), r * np.sin(a)], 0.0) for r, a in zip(R.ravel(), A.ravel())]
    assert res.best_fixed_loss <= min(inner) + 1e-12
    # the modified Huber loss has a kink in its second derivative: L-BFGS and the bisection stop a little earlier
    assert res.best_fixed_loss == pytest.approx(brute, rel=1e-7 if name == "modified_huber" else 1e-8)
    assert free.best_fixed_loss < res.best_fixed_loss


def test_radius_with_intercept_squared_is_a_clipped_slope():
    X, y = _tiny(40, 6, task="reg")
    slope = np.polyfit(X[:, 0], y, 1)[0]
    res = regret(np.zeros(40), X, y, loss="squared", radius=0.5 * abs(slope))
    # profiling out b leaves a convex quadratic in w: the constrained optimum is the clipped free slope
    w = 0.5 * slope
    b = np.mean(y - X[:, 0] * w)
    assert res.best_fixed_loss == pytest.approx(_total("squared", X, y, [w], b), rel=1e-9)
    assert abs(res.comparator[1] - b) < 1e-6


def test_radius_not_supported_for_lp_losses():
    X, t = _tiny(10, 0)
    with pytest.raises(NotImplementedError, match="radius is not supported for the 'hinge' loss"):
        regret(np.zeros(10), X, t, loss="hinge", radius=1.0)


# --------------------------------------------------------------------------------------------------------
# optimality: the comparator beats every other fixed predictor
CASES = [
    (OGDClassifier(loss="logistic"), "clf"),
    (PassiveAggressiveClassifier(C=0.1), "clf"),
    (OGDClassifier(loss="squared", eta0=0.01), "clf"),
    (Perceptron(), "clf"),
    (OGDRegressor(eta0=0.01), "reg"),
    (PassiveAggressiveRegressor(epsilon=0.2), "reg"),
]


def _data(task, a9a_small):
    X, y = a9a_small
    if task == "reg":  # a real target on the a9a features
        rng = np.random.default_rng(0)
        y = X @ rng.normal(size=X.shape[1]) * 0.3 + rng.normal(size=X.shape[0])
    return X, y


@pytest.mark.parametrize("learner, task", CASES, ids=lambda v: type(v).__name__ if hasattr(v, "fit") else "")
def test_comparator_beats_other_fixed_predictors(learner, task, a9a_small):
    X, y = _data(task, a9a_small)
    fitted = clone(learner)
    res = regret(fitted, X, y)
    name = learner._progressive_loss
    eps = getattr(learner, "epsilon", 0.0) if name == "epsilon_insensitive" else 0.0
    t = y if task == "reg" else np.where(y == 1, 1.0, -1.0)
    w, b = res.comparator
    assert res.best_fixed_loss == pytest.approx(_total(name, X, t, w, b, eps), rel=1e-12)
    rng = np.random.default_rng(1)
    others = [(np.zeros(X.shape[1]), 0.0), (fitted.coef_.ravel(), float(fitted.intercept_[0]))]
    others += [(rng.normal(scale=s, size=X.shape[1]), rng.normal()) for s in (0.01, 0.1, 1.0) for _ in range(5)]
    others += [(w + rng.normal(scale=1e-3, size=w.shape), b + rng.normal(scale=1e-3)) for _ in range(10)]
    tol = 1e-9 * max(1.0, res.best_fixed_loss)
    for u, c in others:
        other = _total(name, X, t, u, c, eps)
        # regret against the best fixed predictor >= regret against any other fixed predictor
        assert res.online_loss - res.best_fixed_loss >= res.online_loss - other - tol
    assert res.regret == res.online_loss - res.best_fixed_loss and res.converged
    assert res.regret_per_example == pytest.approx(res.regret / X.shape[0])


@pytest.mark.parametrize("learner, task", CASES, ids=lambda v: type(v).__name__ if hasattr(v, "fit") else "")
def test_learner_playing_the_comparator_has_zero_regret(learner, task, a9a_small):
    X, y = _data(task, a9a_small)
    res = regret(clone(learner), X, y)
    w, b = res.comparator
    eps = getattr(learner, "epsilon", None)
    perfect = regret(X @ w + b, X, y, loss=res.loss, epsilon=eps, classes=[-1, 1] if task == "clf" else None)
    assert perfect.online_loss == pytest.approx(res.best_fixed_loss, rel=1e-12)
    assert abs(perfect.regret) <= 1e-7 * max(1.0, res.best_fixed_loss)
    if res.loss == "perceptron":  # w = 0 is optimal: the regret is the whole online loss
        assert res.best_fixed_loss == 0.0 and res.regret == res.online_loss > 0


def test_online_loss_is_the_progressive_cumulative_loss(a9a_small):
    X, y = a9a_small
    res = regret(PassiveAggressiveClassifier(C=0.1), X, y)
    pv = progressive_validation(PassiveAggressiveClassifier(C=0.1), (X, y), classes=[-1, 1], chunk_size=100)
    assert res.online_loss == pytest.approx(pv.cumulative_loss, rel=1e-12)
    scores = PassiveAggressiveClassifier(C=0.1).partial_fit_scores(X, y, classes=[-1, 1])
    assert regret(scores, X, y, loss="hinge").regret == pytest.approx(res.regret, rel=1e-12)


def test_multiclass_is_the_mean_of_one_vs_rest_problems():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    y = np.argmax(X @ rng.normal(size=(3, 3)) + rng.normal(size=(200, 3)), axis=1)
    res = regret(OGDClassifier(loss="hinge"), X, y)
    assert res.comparator[0].shape == (3, 3) and res.comparator[1].shape == (3,)
    per_class = [
        regret(np.zeros(200), X, np.where(y == k, 1, -1), loss="hinge", classes=[-1, 1]).best_fixed_loss
        for k in range(3)
    ]
    assert res.best_fixed_loss == pytest.approx(np.mean(per_class), rel=1e-9)


def test_least_squares_paths_agree(monkeypatch, a9a_small):
    X, _ = a9a_small
    X = X[:600]
    y = X @ np.linspace(-1, 1, X.shape[1]) + np.random.default_rng(3).normal(size=600)
    values = []
    for dense, normal in [(10**7, 2000), (0, 2000), (0, 0)]:
        monkeypatch.setattr(regret_module, "_DENSE_LIMIT", dense)
        monkeypatch.setattr(regret_module, "_NORMAL_EQ_LIMIT", normal)
        free = regret(np.zeros(600), X, y, loss="squared")
        ball = regret(np.zeros(600), X, y, loss="squared", radius=1.0)
        values.append((free.best_fixed_loss, ball.best_fixed_loss, free.solver))
    assert [v[2] for v in values] == [
        "least squares (dense SVD)",
        "least squares (normal equations)",
        "least squares (scipy.sparse.linalg.lsqr)",
    ]
    for v in values[1:]:
        assert v[0] == pytest.approx(values[0][0], rel=1e-7) and v[1] == pytest.approx(values[0][1], rel=1e-7)


def test_separable_logistic_is_flagged():
    X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    res = regret(np.zeros(4), X, np.array([-1, -1, 1, 1]), loss="logistic")
    assert "not attained" in res.note and res.best_fixed_loss < 1e-3 and np.all(np.isfinite(res.comparator[0]))


def test_errors():
    X, t = _tiny(10, 0)
    with pytest.raises(ValueError, match="loss must be given"):
        regret(np.zeros(10), X, t)
    with pytest.raises(ValueError, match=r"scores must have shape \(10,\)"):
        regret(np.zeros(9), X, t, loss="hinge")
    with pytest.raises(ValueError, match="NaN or infinity"):
        regret(np.full(10, np.nan), X, t, loss="hinge")
    with pytest.raises(ValueError, match="does not apply to classification"):
        regret(np.zeros(10), X, t, loss="epsilon_insensitive", epsilon=0.1, classes=[-1, 1])
    with pytest.raises(ValueError, match="needs its parameter 'epsilon'"):
        regret(np.zeros(10), X, t, loss="epsilon_insensitive")
    with pytest.raises(ValueError, match="radius must be a float"):
        regret(np.zeros(10), X, t, loss="logistic", radius=0)
    with pytest.raises(ValueError, match="y has 3 entries but X has 10 rows"):
        regret(np.zeros(10), X, t[:3], loss="logistic")
    with pytest.raises(ValueError, match="Unknown loss 'huber'"):
        regret(np.zeros(10), X, t, loss="huber")


@pytest.mark.parametrize("loss", ["squared", "epsilon_insensitive"])
def test_a_regression_target_that_is_not_finite_is_refused(loss):
    """A NaN target gave RegretResult(online_loss=nan, best_fixed_loss=nan, regret=nan, ...) without a word."""
    X, t = _tiny(10, 0)
    y = t.astype(float)
    y[4] = np.nan
    with pytest.raises(ValueError) as err:
        regret(np.zeros(10), X, y, loss=loss, epsilon=0.1 if loss == "epsilon_insensitive" else None)
    assert str(err.value) == "y[4] is nan; expected finite class labels or regression targets."
    with pytest.raises(ValueError) as err:  # text is not a regression target (was numpy's 'could not convert')
        regret(np.zeros(10), X, np.array(["a"] * 10), loss=loss, epsilon=0.1 if loss == "epsilon_insensitive" else None)
    assert str(err.value) == "y must hold real numbers (regression targets); got dtype <U1."


def test_a_nan_label_is_refused():
    """Was taken as a third class: 'scores must have shape (10, 3) (one pre-update score per example and class)'."""
    X, t = _tiny(10, 0)
    y = t.astype(float)
    y[7] = np.nan
    with pytest.raises(ValueError) as err:
        regret(np.zeros(10), X, y, loss="hinge")
    assert str(err.value) == "y[7] is nan; expected finite class labels or regression targets."
