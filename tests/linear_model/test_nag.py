"""NAG (normalized adaptive gradient) and normalized OGD: scale invariance, importance invariance, accuracy.

The online contract is checked for every registered learner by tests/test_common.py; the kernel against its
NumPy twin by tests/kernels/test_nag_kernel.py."""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn.datasets import load_a9a
from streamlearn.linear_model import (
    NAGClassifier,
    NAGRegressor,
    OGDClassifier,
    OGDRegressor,
)


def _raw_data(seed, n=600, d=8, classification=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=n)[:, None]  # row scales vary: scales keep growing
    X[rng.random(X.shape) < 0.3] = 0.0
    w = rng.normal(size=d)
    z = X @ w + 0.3 * rng.normal(size=n)
    return X, (np.where(z > 0, 1, -1) if classification else z + 2.0)


INVARIANT_CASES = [
    (NAGClassifier, {"loss": "logistic"}),
    (NAGClassifier, {"loss": "hinge"}),
    (NAGClassifier, {"loss": "squared"}),
    (NAGClassifier, {"invariant": False}),
    (NAGRegressor, {}),
    (OGDClassifier, {"normalized": True}),
    (OGDRegressor, {"normalized": True, "eta0": 0.1}),
]


@pytest.mark.parametrize("cls,params", INVARIANT_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("sparse", [False, True])
def test_column_scaling_leaves_one_pass_predictions_unchanged(cls, params, sparse):
    """Each column times a factor in 1e-3..1e3 (intercept on): same online scores, same test predictions,
    weights divided by the factors."""
    classification = cls in (NAGClassifier, OGDClassifier)
    X, y = _raw_data(1, classification=classification)
    rng = np.random.default_rng(2)
    for draw in range(3):
        factors = 10.0 ** rng.uniform(-3, 3, size=X.shape[1])
        Xa, Xb = X, X * factors
        if sparse:
            Xa, Xb = sp.csr_matrix(Xa), sp.csr_matrix(Xb)
        kw = {"classes": [-1, 1]} if classification else {}
        a, b = cls(**params), cls(**params)
        sa = a.partial_fit_scores(Xa[:400], y[:400], **kw)
        sb = b.partial_fit_scores(Xb[:400], y[:400], **kw)
        np.testing.assert_allclose(sb, sa, rtol=1e-9, atol=1e-9, err_msg=f"online scores differ (draw {draw})")
        np.testing.assert_allclose(
            b._decision_function(Xb[400:]),
            a._decision_function(Xa[400:]),
            rtol=1e-9,
            atol=1e-9,
            err_msg=f"test scores differ (draw {draw})",
        )
        np.testing.assert_allclose(np.asarray(b.coef_) * factors, a.coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(b.scale_, a.scale_ * factors, rtol=1e-12)


def test_plain_ogd_is_not_scale_invariant():
    """The property above is NAG's, not every learner's: unnormalized OGD changes (the test can fail)."""
    X, y = _raw_data(1)
    factors = 10.0 ** np.random.default_rng(2).uniform(-3, 3, size=X.shape[1])
    a = OGDClassifier().partial_fit(X[:400], y[:400], classes=[-1, 1])
    b = OGDClassifier().partial_fit(X[:400] * factors, y[:400], classes=[-1, 1])
    assert not np.allclose(b.decision_function(X[400:] * factors), a.decision_function(X[400:]), rtol=1e-3)


def test_scale_growth_rescales_weights_and_tracks_max():
    X = np.array([[1.0, 2.0], [3.0, -1.0], [-5.0, 0.5]])
    clf = NAGClassifier().partial_fit(X, [1, -1, 1], classes=[-1, 1])
    np.testing.assert_array_equal(clf.scale_, [5.0, 2.0])
    assert clf.normalizer_ > 0


@pytest.mark.parametrize("weight", [1.0, 1e3, 1e7])
def test_importance_weight_never_overshoots_the_target(weight):
    """Invariant update: one example of any weight moves the prediction towards its target, never past it."""
    X, y = _raw_data(3, classification=False)
    reg = NAGRegressor().partial_fit(X[:200], y[:200])
    x, target = X[200:201], y[200]
    before = reg.predict(x)[0]
    reg.partial_fit(x, [target], sample_weight=[weight])
    after = reg.predict(x)[0]
    assert abs(after - target) < abs(before - target)
    assert (after - target) * (before - target) >= 0
    if weight >= 1e3:
        assert abs(after - target) < 1e-3 * abs(before - target)
    # plain gradient steps overshoot with large weights
    plain = NAGRegressor(invariant=False).partial_fit(X[:200], y[:200])
    plain.partial_fit(x, [target], sample_weight=[weight])
    if weight >= 1e3:
        assert abs(plain.predict(x)[0] - target) > abs(before - target)


def test_a9a_one_pass_accuracy():
    X, y, Xt, yt = load_a9a()
    clf = NAGClassifier().partial_fit(X, y, classes=[-1, 1])
    assert clf.score(Xt, yt) >= 0.845, clf.score(Xt, yt)


def test_multiclass_and_proba():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 4)) * [1.0, 100.0, 0.01, 1.0]
    y = np.argmax(X / [1.0, 100.0, 0.01, 1.0] @ rng.normal(size=(4, 3)), axis=1)
    clf = NAGClassifier().fit(X, y)
    assert clf.score(X, y) > 0.85
    p = clf.predict_proba(X[:5])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert not hasattr(NAGClassifier(loss="hinge"), "predict_proba")


def test_normalized_ogd_rejects_a_switch_after_fitting():
    X, y = _raw_data(4)
    clf = OGDClassifier().partial_fit(X, y, classes=[-1, 1])
    clf.set_params(normalized=True)
    with pytest.raises(ValueError, match="normalized"):
        clf.partial_fit(X, y)


@pytest.mark.parametrize(
    "cls,params",
    [(NAGClassifier, {}), (NAGClassifier, {"loss": "hinge"}), (OGDClassifier, {"normalized": True})],
    ids=["nag", "nag-hinge", "ogd-normalized"],
)
def test_files_with_scales_and_accumulators_apart_load_and_resume_bit_for_bit(cls, params, tmp_path):
    """Model files hold ``scale_`` and ``_state_accum`` as arrays of their own when written before the two
    shared one array per feature: such a file loads into the joint layout and goes on learning exactly as
    the model that wrote it."""
    X, y = _raw_data(5)
    X = X * np.logspace(-2, 2, X.shape[1])
    ref = cls(**params).partial_fit(X[:300], y[:300], classes=[-1, 1])
    old = cls(**params).partial_fit(X[:300], y[:300], classes=[-1, 1])
    feat = old.__dict__.pop("_state_feat")  # the layout of those files, written by the same save()
    old.__dict__["scale_"] = feat[:, 0].copy()
    old.__dict__["_state_accum"] = feat[:, 1:].T.copy() if feat.shape[1] > 1 else np.zeros((0, 0))
    path = tmp_path / "old.slm"
    old.save(path)
    loaded = cls.load(path)
    assert "scale_" not in vars(loaded) and "_state_accum" not in vars(loaded)
    np.testing.assert_array_equal(loaded.scale_, ref.scale_)
    ref.partial_fit(X[300:], y[300:])
    loaded.partial_fit(X[300:], y[300:])
    np.testing.assert_array_equal(loaded.coef_, ref.coef_)
    np.testing.assert_array_equal(loaded.scale_, ref.scale_)
    np.testing.assert_array_equal(loaded.decision_function(X), ref.decision_function(X))


@pytest.mark.parametrize("invariant", [True, False])
def test_an_accumulator_that_would_overflow_stops_the_pass_before_its_row(invariant):
    """A squared gradient beyond the largest float (a target of -1e150 against a feature of 1e150) would make an
    accumulator infinite and freeze its rate at 0 without a word: the pass stops before that row instead, and the
    model is the one that learnt the rows before it, bit for bit."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = X @ [1.0, 2.0, 3.0]
    Xb, yb = X[:5].copy(), y[:5].copy()
    Xb[2, 1], yb[2] = 1e150, -1e150
    model = NAGRegressor(invariant=invariant).partial_fit(X, y)
    with pytest.raises(FloatingPointError, match="NAGRegressor diverged: the score of example 2 of this batch, or its"):
        model.partial_fit(Xb, yb)
    expected = NAGRegressor(invariant=invariant).partial_fit(X, y).partial_fit(Xb[:2], yb[:2])
    assert model.t_ == expected.t_
    for name, value in vars(expected).items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(getattr(model, name), value, err_msg=name)
            assert np.isfinite(value).all()
