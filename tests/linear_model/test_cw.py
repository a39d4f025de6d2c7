"""Confidence-weighted learners (CW, AROW, SCW): the papers' properties.

The online contract (chunking invariance, partial_fit == fit, pre-update scores, save/load, ...) is checked for
every registered learner by tests/test_common.py; the kernels are compared with their twins in
tests/kernels/test_cw_kernel.py.
"""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import ndtri
from sklearn.datasets import load_iris

from streamlearn.learners import make_learner
from streamlearn.linear_model import (
    MAX_FULL_FEATURES,
    AROWClassifier,
    ConfidenceWeightedClassifier,
    SoftConfidenceWeightedClassifier,
)


def _stream(n=300, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    y = np.where(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _sigma_full(clf):
    return clf._state_sigma[0]


@pytest.mark.parametrize("eta", [0.6, 0.8, 0.95])
def test_cw_constraint_holds_after_each_update(eta):
    """Exact CW with a full covariance: after the update on (x, y), the example is classified correctly with
    probability >= eta under N(mu', Sigma'), i.e. y mu'.x >= phi sqrt(x^T Sigma' x) (with equality when the
    round updated: Crammer et al. NIPS 2008)."""
    X, y = _stream()
    phi = ndtri(eta)
    clf = ConfidenceWeightedClassifier(eta=eta, covariance="full")
    n_active = 0
    for i in range(X.shape[0]):
        before = clf._state_sigma.copy() if i else None
        clf.partial_fit(X[i : i + 1], y[i : i + 1], classes=[-1, 1])
        xa = np.append(X[i], 1.0)
        m = (1 if y[i] == 1 else -1) * (clf.coef_[0] @ X[i] + clf.intercept_[0])
        v = xa @ _sigma_full(clf) @ xa
        if v <= 1e-12:
            continue
        assert m >= phi * np.sqrt(v) * (1 - 1e-9) - 1e-12, (i, m, phi * np.sqrt(v))
        if before is not None and not np.array_equal(before, clf._state_sigma):
            n_active += 1
            np.testing.assert_allclose(m, phi * np.sqrt(v), rtol=1e-7)
    assert n_active > 20


def test_cw_variance_version_meets_its_linearised_constraint():
    """Dredze et al. ICML 2008: after an update, y mu'.x >= phi x^T Sigma' x (equality when active)."""
    X, y = _stream(seed=1)
    phi = ndtri(0.8)
    clf = ConfidenceWeightedClassifier(eta=0.8, update="variance")
    for i in range(X.shape[0]):
        clf.partial_fit(X[i : i + 1], y[i : i + 1], classes=[-1, 1])
        xa = np.append(X[i], 1.0)
        m = (1 if y[i] == 1 else -1) * (clf.coef_[0] @ X[i] + clf.intercept_[0])
        assert m >= phi * (xa @ _sigma_full(clf) @ xa) * (1 - 1e-9) - 1e-12


def test_diagonal_cw_variance_dominates_the_full_one():
    """The diagonal approximation leaves x^T Sigma x at least as large as the exact (full) update does, so
    its constraint can only be missed, never over-satisfied: documented in the class docstring."""
    X, y = _stream(seed=2)
    full = ConfidenceWeightedClassifier(covariance="full", fit_intercept=False)
    diag = ConfidenceWeightedClassifier(covariance="diagonal", fit_intercept=False)
    x, t = X[:1], y[:1]
    full.partial_fit(x, t, classes=[-1, 1])
    diag.partial_fit(x, t, classes=[-1, 1])
    v_full = np.append(x[0], 0) @ _sigma_full(full) @ np.append(x[0], 0)
    v_diag = (diag._state_sigma[0] * x[0] ** 2).sum()
    np.testing.assert_allclose(full.coef_, diag.coef_)  # same mean step from the same prior
    assert v_diag > v_full * (1 + 1e-6)


def test_full_covariance_refuses_too_many_features():
    X = sp.random(5, MAX_FULL_FEATURES + 1, density=0.01, format="csr", random_state=0)
    for est in (ConfidenceWeightedClassifier(), AROWClassifier(), SoftConfidenceWeightedClassifier()):
        with pytest.raises(ValueError, match=r"supports at most 4096 features; X has 4097.*covariance='diagonal'"):
            est.partial_fit(X, [0, 1, 0, 1, 0], classes=[0, 1])
        assert not hasattr(est, "t_") and not hasattr(est, "coef_")  # nothing half-built
        est.set_params(covariance="diagonal").partial_fit(X, [0, 1, 0, 1, 0], classes=[0, 1])


@pytest.mark.parametrize("cls", [ConfidenceWeightedClassifier, AROWClassifier, SoftConfidenceWeightedClassifier])
@pytest.mark.parametrize("width", [MAX_FULL_FEATURES, MAX_FULL_FEATURES + 1])
def test_auto_covariance_is_full_up_to_the_limit_and_diagonal_above(cls, width, tmp_path):
    from streamlearn.persist import load, save

    X = sp.random(30, width, density=0.002, format="csr", random_state=1)
    y = np.arange(30) % 2
    want = "full" if width <= MAX_FULL_FEATURES else "diagonal"
    auto = cls(covariance="auto", shuffle=False).partial_fit(X, y, classes=[0, 1])
    fixed = cls(covariance=want, shuffle=False).partial_fit(X, y, classes=[0, 1])
    assert auto.covariance_ == fixed.covariance_ == want
    np.testing.assert_array_equal(auto.coef_, fixed.coef_)
    np.testing.assert_array_equal(auto.variance_, fixed.variance_)
    save(auto, tmp_path / "m.slm")
    back = load(tmp_path / "m.slm").partial_fit(X, y)
    np.testing.assert_array_equal(back.coef_, fixed.partial_fit(X, y).coef_)  # the choice survives a reload
    assert back.covariance_ == want


def test_arow_update_is_passive_beyond_margin_and_shrinks_variance():
    clf = AROWClassifier(r=2.0, fit_intercept=False).partial_fit([[1.0, 0.0]], [1], classes=[0, 1])
    # first update from mu = 0, Sigma = I: l = 1, beta = 1/(1 + r), mu = l beta Sigma x
    np.testing.assert_allclose(clf.coef_, [[1 / 3, 0.0]])
    np.testing.assert_allclose(clf.variance_, [[1 - 1 / 3, 1.0]])
    before = clf.coef_.copy(), clf.variance_.copy()
    clf.partial_fit([[6.0, 0.0]], [1])  # margin 2 >= 1: passive, nothing changes
    np.testing.assert_array_equal(clf.coef_, before[0])
    np.testing.assert_array_equal(clf.variance_, before[1])
    clf.partial_fit([[0.0, 1.0]], [0])  # margin 0 < 1: active on the second weight only
    np.testing.assert_allclose(clf.coef_, [[1 / 3, -1 / 3]])


def test_scw1_step_is_capped_by_C():
    x = np.array([[3.0, -1.0]])
    for C in (1e-3, 1e-2):
        clf = SoftConfidenceWeightedClassifier(C=C, variant="scw1", fit_intercept=False)
        clf.partial_fit(x, [1], classes=[0, 1])
        # mu = alpha y Sigma x with Sigma = I at the first step: alpha = C when the uncapped step is larger
        np.testing.assert_allclose(clf.coef_[0], C * x[0])


def test_multiclass_one_vs_rest():
    X, y = load_iris(return_X_y=True)
    for clf in (
        AROWClassifier(random_state=0),
        SoftConfidenceWeightedClassifier(covariance="diagonal", random_state=0),
        ConfidenceWeightedClassifier(covariance="diagonal", update="variance", random_state=0),
    ):
        clf.fit(X, y)
        assert clf.coef_.shape == (3, 4) and clf.variance_.shape == (3, 4)
        assert clf.score(X, y) > 0.8, type(clf).__name__


def test_a9a_one_pass_arow_not_below_pa1(a9a):
    """Target: a9a -> a9a.t one pass, AROW >= PA-I (CLI defaults)."""
    X, y, Xt, yt = a9a
    arow = make_learner("arow").partial_fit(X, y, classes=[-1, 1]).score(Xt, yt)
    pa1 = make_learner("pa1").partial_fit(X, y, classes=[-1, 1]).score(Xt, yt)
    assert arow >= pa1, (arow, pa1)
    assert make_learner("scw1").partial_fit(X, y, classes=[-1, 1]).score(Xt, yt) > 0.84


@pytest.mark.parametrize(
    "est,message",
    [
        (
            ConfidenceWeightedClassifier(eta=0.5),
            "The 'eta' parameter of ConfidenceWeightedClassifier must be a float in the range (0.5, 1.0). Got 0.5 instead",
        ),
        (AROWClassifier(covariance="dense"), "'covariance' parameter of AROWClassifier"),
    ],
)
def test_bad_parameters_are_named(est, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        est.partial_fit([[1.0]], [1], classes=[0, 1])


@pytest.mark.parametrize(
    "name, trained, new", [("arow", "full", "diagonal"), ("arow", "diagonal", "full"), ("cw", "full", "diagonal")]
)
def test_covariance_changed_after_training_is_refused(name, trained, new):
    """``set_params(covariance=...)`` naming another covariance than the one trained: partial_fit refuses (it
    went on with the trained one while get_params named the other); ``"auto"`` accepts the one it chose."""
    X, y = load_iris(return_X_y=True)
    clf = (
        make_learner(name).set_params(covariance=trained)
        if name == "cw"
        else make_learner(name, {"covariance": trained})
    )
    clf.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    assert clf.covariance_ == trained
    clf.set_params(covariance=new)
    with pytest.raises(ValueError, match=f"covariance='{new}' differs from the setting"):
        clf.partial_fit(X[100:], y[100:])
    clf.set_params(covariance="auto")
    clf.partial_fit(X[100:], y[100:])


@pytest.mark.parametrize(
    ("make", "magnitude"),
    [
        (lambda: SoftConfidenceWeightedClassifier(variant="scw2"), 1e75),
        (lambda: SoftConfidenceWeightedClassifier(variant="scw2", covariance="diagonal"), 1e75),
        (lambda: ConfidenceWeightedClassifier(update="variance", a=0.1, average=True), 3e149),
    ],
    ids=["scw2-full", "scw2-diagonal", "cw-averaged"],
)
def test_step_beyond_any_float_stops_the_pass_before_it(make, magnitude):
    """Values just under the learners' bound (their confidence v near 1e150 or more, alpha v overflows) made
    SCW-II's step divide by a square root that rounded to 0 (numba raised ZeroDivisionError from the kernel) and
    CW's means infinite (numpy warned while the averaging was undone). The pass now stops before that example
    with the divergence error, the model finite and as it was before the example, and no warning."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 5))
    X[rng.random(X.shape) < 0.3] *= magnitude
    y = np.where(rng.random(60) > 0.5, 1, -1)
    clf = make()
    with pytest.raises(FloatingPointError, match=r"diverged: the score of example \d+ of this batch") as info:
        clf.partial_fit(X, y, classes=[-1, 1])
    row = info.value.row
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.intercept_))
    if row:
        before = make().partial_fit(X[:row], y[:row], classes=[-1, 1])
        weights = "running_coef_" if hasattr(before, "running_coef_") else "coef_"  # the weights before averaging
        np.testing.assert_array_equal(getattr(clf, weights), getattr(before, weights))
        np.testing.assert_array_equal(clf._state_sigma, before._state_sigma)
