"""No NaN or inf from the second-order learners on hard inputs."""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn.learners import make_learner
from streamlearn.second_order import SketchedOnlineNewton

NAMES = ["adagrad", "full-on", "fd-son", "pfd-son", "rp-son", "oja-son", "rfd-son", "rfd0-son"]


def _base(n=150, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) > 0, 1, -1)
    return X, y


def _ill_conditioned():
    X, y = _base()
    u, _, vt = np.linalg.svd(X, full_matrices=False)
    s = np.logspace(0, -6, X.shape[1])  # condition number 1e6
    return u @ np.diag(s) @ vt * np.sqrt(X.shape[0]), y


def _scaled(f):
    def make():
        X, y = _base()
        return X * f, y

    return make


def _duplicated():
    X, y = _base(n=30)
    return np.repeat(X, 5, axis=0), np.repeat(y, 5)


def _zero_rows():
    X, y = _base()
    X[::3] = 0.0
    X[:5] = 0.0
    return X, y


CASES = {
    "cond1e6": _ill_conditioned,
    "scale1e-6": _scaled(1e-6),
    "scale1e6": _scaled(1e6),
    "duplicated": _duplicated,
    "zero_rows": _zero_rows,
}


@pytest.mark.parametrize("safeguard", ["maxabs", "paper"])
@pytest.mark.parametrize("slab", ["next", "current"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", NAMES)
def test_finite_on_hard_inputs(name, case, slab, safeguard):
    X, y = CASES[case]()
    params = {"ell": "3", "slab": slab} if name.endswith("-son") else {"slab": slab}
    if safeguard == "paper":  # the published algorithms with the class defaults (alpha0 = 1, eta = 1)
        params.update({"alpha0": "1"} if name in ("fd-son", "pfd-son", "rp-son", "oja-son") else {})
        params.update({"eta": "1"} if name == "adagrad" else {})
    est = make_learner(name, {**params, "safeguard": safeguard})
    scores = est.partial_fit_scores(X, y, classes=[-1, 1])
    assert np.all(np.isfinite(scores)), f"{name} on {case}: non-finite pre-update score"
    assert np.all(np.isfinite(est.coef_)), f"{name} on {case}: non-finite weights"
    bound = est.C * (1 + 1e-9) + 1e-9
    if slab == "next":  # each prediction comes from a point of that example's slab
        assert np.all(np.abs(scores) <= bound)
    else:  # the point after the pass lies in the slab of the last example it learned (to rounding: RP-SON
        # with alpha0 = 1 and unclipped scores grows huge weights on zero_rows, still finite)
        last = X[np.flatnonzero(np.any(X != 0, axis=1))[-1]]
        if safeguard == "maxabs":  # the row as the learner saw it: scaled by its running max-abs, then a 1
            last = est._augment(sp.csr_matrix(last[None]), update=False).toarray()[0]
        w = est.coef_[0]
        assert abs(w @ last) <= bound + 1e-8 * np.linalg.norm(w) * np.linalg.norm(last)
    assert np.all(np.isfinite(est.decision_function(X)))


@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("sketch", ["fd", "oja", "rp"])
def test_overflowing_features_raise_a_clear_error(sketch, lazy):
    # features near 1e200 would overflow the sketch's Gram matrix (LAPACK's "infs or NaNs" inside the kernel):
    # refused as input, their squares overflow
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.standard_normal((40, 6)) * 1e200)
    y = np.where(rng.random(40) > 0.5, 1, -1)
    est = SketchedOnlineNewton(sketch=sketch, ell=3, alpha0=1e-3)
    est._lazy_kernel = lazy
    with pytest.raises(ValueError, match=r"Input X has the value .*e\+199 \(row 0, column 0\); expected values below"):
        est.partial_fit(X, y, classes=[-1, 1])
    # below that bound Oja's sketch still diverges on them: reported as the estimator's divergence, with the
    # parameter to change
    if sketch == "oja":
        with pytest.raises(FloatingPointError, match="SketchedOnlineNewton diverged.*Raise alpha0"):
            est.partial_fit(X / 1e50, y, classes=[-1, 1])


def test_a_slab_bound_beyond_1e154_is_a_regularisation_of_zero():
    """``C`` whose square is beyond the float range (a valid setting): ``mu`` defaults to 1 / (8 C^2), which is 0;
    it raised OverflowError (a traceback in ``streamlearn train -p C=1e200``)."""
    X, y = _base()
    est = SketchedOnlineNewton(C=1e200).partial_fit(X, y, classes=[-1, 1])
    assert est._mu() == 0.0 and np.all(np.isfinite(est.decision_function(X)))


@pytest.mark.parametrize("name", ["full-on"])
def test_refused_example_leaves_the_model_of_the_examples_before_it(name):
    """Weights near the input bound (1e140) make an update overflow: the error names that example, whose update
    changes nothing, so the model is the one the examples before it made, finite and usable."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5))
    y = np.where(rng.random(200) < 0.5, 1, -1)
    sw = np.full(200, 1e140)
    est = make_learner(name)
    with pytest.raises(FloatingPointError, match=r"^\w+ diverged: the score of example \d+ of this batch") as info:
        est.partial_fit(X, y, sample_weight=sw, classes=[-1, 1])
    row = info.value.row
    assert row > 0
    ref = make_learner(name).partial_fit(X[:row], y[:row], sample_weight=sw[:row], classes=[-1, 1])
    assert est.t_ == ref.t_ == row
    for attr in ("coef_", "_state_P", "_state_buf"):
        if hasattr(ref, attr):
            assert np.all(np.isfinite(getattr(est, attr))), attr
            np.testing.assert_array_equal(getattr(est, attr), getattr(ref, attr), err_msg=attr)
    np.testing.assert_array_equal(est.decision_function(X[:row]), ref.decision_function(X[:row]))


def _extreme(seed, n=30, d=4):
    """Values from 1e-300 to 1e150 in one example, a third of them 0, and (odd seeds) weights up to 1e140."""
    rng = np.random.default_rng(seed)
    X = np.sign(rng.standard_normal((n, d))) * 10.0 ** rng.uniform(-300, 150, (n, d))
    X[rng.random((n, d)) < 0.3] = 0
    y = np.where(rng.random(n) < 0.5, 1, -1)
    sw = 10.0 ** rng.uniform(0, 140, n) if seed % 2 else np.ones(n)
    return X, y, sw


@pytest.mark.parametrize(
    ("seed", "slab"),
    [
        (34, "next"),  # the projection before predicting made w infinite
        (43, "next"),  # the projection moved w, then the update was refused: the refused example had changed w
        (101, "next"),  # rounding left P short of positive semi-definite: an update made it infinite
        (85, "current"),  # the same with the projection after the update
    ],
)
def test_full_on_extreme_values_leave_the_model_of_the_examples_before_the_refused_one(seed, slab):
    """On values of wildly different sizes the full-on learner's slab projection, and a Newton update on a P that
    rounding had left indefinite, made w or P infinite, or the refused example had already moved w. The example is
    now refused as a whole: the error names it and the model is the one the examples before it made, finite."""
    X, y, sw = _extreme(seed)
    est = make_learner("full-on", {"slab": slab, "safeguard": "paper"})
    with pytest.raises(FloatingPointError, match=r"^\w+ diverged: the score of example \d+ of this batch") as info:
        est.partial_fit(X, y, sample_weight=sw, classes=[-1, 1])
    row = info.value.row
    assert np.isfinite(est.coef_).all() and np.isfinite(est._state_P).all()
    ref = make_learner("full-on", {"slab": slab, "safeguard": "paper"})
    if row > 0:
        ref.partial_fit(X[:row], y[:row], sample_weight=sw[:row], classes=[-1, 1])
        assert est.t_ == ref.t_ == row
        np.testing.assert_array_equal(est.coef_, ref.coef_)
        np.testing.assert_array_equal(est._state_P, ref._state_P)


@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("safeguard", ["maxabs", "paper"])
@pytest.mark.parametrize("bad", [49, 20])
def test_oja_son_refuses_an_update_that_would_overflow_its_sketch(lazy, safeguard, bad):
    """A sample weight of 1e140 made Oja's orthonormalisation overflow (1 + cc p_i^2 with cc and p_i^2 near 1e280):
    the sketch and coef_ became NaN, silently on the batch's last example. The example is now refused as
    diverging: the error names it and the model, its projection before predicting included, is the one the
    examples before it made."""
    X, y = _base(n=50, d=5)
    sw = np.ones(50)
    sw[bad] = 1e140

    def make():  # (a small slab: the refused example is projected onto it first)
        est = make_learner("oja-son", {"safeguard": safeguard, "C": 0.05})
        est._lazy_kernel = lazy
        return est

    est = make()
    with pytest.raises(FloatingPointError, match=f"diverged: the score of example {bad} of this batch, or its update"):
        est.partial_fit(X, y, sample_weight=sw, classes=[-1, 1])
    ref = make().partial_fit(X[:bad], y[:bad], classes=[-1, 1])
    assert est.t_ == ref.t_ == bad
    for attr in ("coef_", "_state_buf", "_state_sc", "_state_aux", "_state_gram", "_state_alpha"):
        assert np.all(np.isfinite(getattr(est, attr))), attr
        np.testing.assert_allclose(getattr(est, attr), getattr(ref, attr), rtol=1e-12, atol=1e-14, err_msg=attr)
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("name", "seed", "slab"), [("full-on", 52, "next"), ("full-on", 30, "current")])
def test_a_multiclass_example_refused_by_a_later_class_changes_no_class(name, seed, slab):
    """One-vs-rest: each class's output was projected and updated in turn, so an example refused by a later
    class's output had already moved the earlier ones. Every output is now checked before any is written: the
    model after the refusal is the one the examples before it made, for every class."""
    X, _, sw = _extreme(seed)
    y = np.random.default_rng(seed).integers(0, 3, X.shape[0])
    params = {"slab": slab, "safeguard": "paper"}
    est = make_learner(name, params)
    with pytest.raises(FloatingPointError, match=r"^\w+ diverged: the score of example \d+ of this batch") as info:
        est.partial_fit(X, y, sample_weight=sw, classes=[0, 1, 2])
    row = info.value.row
    assert row > 0
    ref = make_learner(name, params).partial_fit(X[:row], y[:row], sample_weight=sw[:row], classes=[0, 1, 2])
    assert est.t_ == ref.t_ == row
    for attr in ("coef_", "intercept_", "_state_P", "_state_buf"):
        if hasattr(ref, attr):
            np.testing.assert_array_equal(getattr(est, attr), getattr(ref, attr), err_msg=attr)


def test_a_multiclass_oja_son_example_refused_by_a_later_class_changes_no_class():
    """Dense Oja-SON, one-vs-rest: each class's output was projected and updated in turn, so an example whose
    sketch update was within the bound for class 0 and beyond it for class 2 had already been learnt by class 0.
    Every class's update is now checked before any output is projected or updated: the model after the refusal is
    the one the examples before it made, for every class."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 5))
    y = np.digitize(X @ rng.standard_normal(5), [-0.5, 0.5])
    sw = np.ones(50)
    sw[49] = 10.0**67.115  # (the squared loss's derivatives differ by a few percent: a narrow window of weights)

    def make():  # (a small slab: the refused example is projected onto it first)
        est = make_learner("oja-son", {"C": 0.05})
        est._lazy_kernel = False
        return est

    est = make()
    with pytest.raises(FloatingPointError, match="diverged: the score of example 49 of this batch, or its update"):
        est.partial_fit(X, y, sample_weight=sw, classes=[0, 1, 2])
    ref = make().partial_fit(X[:49], y[:49], classes=[0, 1, 2])
    assert est.t_ == ref.t_ == 49
    for attr in ("coef_", "_state_buf", "_state_sc", "_state_aux", "_state_gram", "_state_alpha"):
        np.testing.assert_array_equal(getattr(est, attr), getattr(ref, attr), err_msg=attr)


@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_the_scaled_rows_with_their_constant_are_scipys_matrix(index):
    """The safeguard's rows ``[x / s, 1]`` (built over the kernel's arrays without scipy's constructor): the
    values, and int32 index arrays as scipy's constructor makes them when they fit."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((7, 5)) * (rng.random((7, 5)) < 0.5)
    X = sp.csr_matrix(A)
    X.indices, X.indptr = X.indices.astype(index), X.indptr.astype(index)
    est = make_learner("rfd0-son", {"safeguard": "maxabs"}).partial_fit(
        X, np.where(A[:, 0] > 0, 1, -1), classes=[-1, 1]
    )
    got = est._augment(X, update=False)
    scale = np.maximum(est.scale_, np.abs(A))  # (prediction: the row's own values count, scale_ unchanged)
    want = np.hstack([np.divide(A, scale, out=np.zeros_like(A), where=scale > 0), np.ones((7, 1))])
    assert got.shape == (7, 6) and got.indices.dtype == got.indptr.dtype == np.int32
    np.testing.assert_array_equal(got.toarray(), want)
