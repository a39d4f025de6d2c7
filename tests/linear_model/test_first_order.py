"""Behaviour of the first-order learners: the papers' properties and the online contract."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris

from streamlearn.datasets import load_a9a
from streamlearn.learners import make_learner
from streamlearn.linear_model import (
    OGDClassifier,
    OGDRegressor,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    Perceptron,
)

# The online contract (chunking invariance, partial_fit == fit, pre-update scores, ...) is checked for every
# learner by tests/test_common.py through streamlearn.checks; this file holds the papers' properties.


def _clone(est):
    return type(est)(**est.get_params())


def test_a9a_one_pass_accuracy_targets(a9a):
    """Target: a9a -> a9a.t, one pass: PA-I >= 0.84, OGD-logistic >= 0.845 (CLI defaults)."""
    X, y, Xt, yt = a9a
    pa1 = make_learner("pa1").partial_fit(X, y, classes=[-1, 1])
    ogd = make_learner("ogd").partial_fit(X, y, classes=[-1, 1])
    assert pa1.score(Xt, yt) >= 0.84, pa1.score(Xt, yt)
    assert ogd.score(Xt, yt) >= 0.845, ogd.score(Xt, yt)


def test_coef_not_reallocated_and_feature_count_fixed(a9a):
    X, y = a9a[0][:100], a9a[1][:100]
    clf = PassiveAggressiveClassifier().partial_fit(X, y, classes=[-1, 1])
    buf = clf.coef_
    clf.partial_fit(X, y)
    assert clf.coef_ is buf
    with pytest.raises(ValueError, match="X has 122 features, but PassiveAggressiveClassifier is expecting 123"):
        clf.partial_fit(X[:, :122], y)


def test_classes_contract():
    X = np.eye(3)
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        Perceptron().partial_fit(X, [0, 1, 0])
    clf = Perceptron().partial_fit(X, [0, 1, 0], classes=[0, 1])
    with pytest.raises(ValueError, match=re.escape("y contains labels [2]")):
        clf.partial_fit(X, [0, 1, 2])
    with pytest.raises(ValueError, match="not the same as on the first call"):
        clf.partial_fit(X, [0, 1, 0], classes=[0, 1, 2])
    with pytest.raises(ValueError, match="at least 2 classes"):
        Perceptron().partial_fit(X, [1, 1, 1], classes=[1])


def test_classes_as_any_collection_of_labels():
    # a set (e.g. set(all_labels)) or dict keys hold every label: they were one object label, "needs at least 2
    # classes; got 1 class: array([{0, 1}], dtype=object)"; a bare string or number is one error naming classes
    X = np.eye(3)
    for classes in ({1, 0}, frozenset([0, 1]), {0: "no", 1: "yes"}.keys()):
        clf = Perceptron().partial_fit(X, [0, 1, 0], classes=classes)
        assert clf.classes_.tolist() == [0, 1]
        clf.partial_fit(X, [1, 1, 0], classes=classes)
    for classes, got in (("01", "the string '01'"), (1, "1")):
        with pytest.raises(
            ValueError, match=re.escape(f"classes must hold every label (e.g. classes=[-1, 1]); got {got}.")
        ):
            Perceptron().partial_fit(X, [0, 1, 0], classes=classes)
        with pytest.raises(
            ValueError, match=re.escape(f"classes must hold every label (e.g. classes=[-1, 1]); got {got}.")
        ):
            Perceptron().partial_fit(X, [0, 1, 0], classes=[0, 1]).partial_fit(X, [0, 1, 0], classes=classes)


def test_labels_mapped_once_to_minus_plus_one():
    X = np.array([[1.0, 0.0], [0.0, 1.0]] * 20)
    y = np.array(["spam", "ham"] * 20)
    clf = PassiveAggressiveClassifier(max_iter=3).fit(X, y)
    assert list(clf.classes_) == ["ham", "spam"]
    # classes_[1] = "spam" is +1: the weight of feature 0 (spam rows) is positive
    assert clf.coef_[0, 0] > 0 > clf.coef_[0, 1]
    assert list(clf.predict(X[:2])) == ["spam", "ham"]


@pytest.mark.parametrize(
    "est", [PassiveAggressiveClassifier(variant=v) for v in ("pa", "pa1", "pa2")] + [Perceptron()], ids=repr
)
def test_all_zero_row_is_a_no_op_for_margin_learners(est):
    X = np.array([[1.0, 2.0], [0.0, 0.0]])
    model = _clone(est).set_params(fit_intercept=False).partial_fit(X[:1], [1], classes=[-1, 1])
    before = model.coef_.copy()
    model.partial_fit(X[1:], [-1])
    np.testing.assert_array_equal(model.coef_, before)


def test_pa1_step_is_capped_by_C_and_pa_reaches_margin():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5)) * 0.3  # small ||x||: l / ||x||^2 is far above C, so the cap binds
    y = np.where(rng.random(200) < 0.5, -1, 1)
    C = 0.05
    clf = PassiveAggressiveClassifier(C=C, fit_intercept=False)
    taus = []
    for i in range(200):
        before = clf.coef_.copy() if i else np.zeros((1, 5))
        clf.partial_fit(X[i : i + 1], y[i : i + 1], classes=[-1, 1])
        taus.append(np.linalg.norm(clf.coef_ - before) / np.linalg.norm(X[i]))
    assert max(taus) <= C + 1e-12
    assert sum(abs(t - C) < 1e-12 for t in taus) > 20  # the cap was reached, so the check means something
    pa = PassiveAggressiveClassifier(variant="pa", fit_intercept=False)
    for i in range(50):
        pa.partial_fit(X[i : i + 1], y[i : i + 1], classes=[-1, 1])
        # plain PA solves the constraint exactly: margin 1 on the example just seen
        assert (
            y[i] * pa.decision_function(X[i : i + 1])[0] == pytest.approx(1.0)
            or y[i] * pa.decision_function(X[i : i + 1])[0] > 1.0
        )


def test_perceptron_bias_update_and_novikoff_bound():
    # first example is a mistake (score 0): w = y x, b = y R^2 with R = max row norm of the batch
    X = np.array([[3.0, 4.0], [1.0, 0.0]])
    p = Perceptron().partial_fit(X[:1], [-1], classes=[-1, 1])
    assert p.radius_ == 5.0
    np.testing.assert_array_equal(p.coef_, [[-3.0, -4.0]])
    assert p.intercept_[0] == -25.0
    # separable data with margin gamma (||u|| = 1, |b_opt| <= R): mistakes <= (2R/gamma)^2 (Novikoff 1962)
    rng = np.random.default_rng(3)
    u = rng.normal(size=10)
    u /= np.linalg.norm(u)
    X = rng.normal(size=(5000, 10))
    m = X @ u + 0.3
    keep = np.abs(m) > 0.5
    X, y = X[keep], np.where(m[keep] > 0, 1, -1)
    R = np.linalg.norm(X, axis=1).max()
    gamma = np.abs(X @ u + 0.3).min()
    clf = Perceptron()
    scores = np.concatenate([clf.partial_fit_scores(X, y, classes=[-1, 1]) for _ in range(3)])
    yy = np.tile(y, 3)
    mistakes = int(np.sum(np.where(scores >= 0, 1, -1) * yy <= 0) + np.sum(scores == 0))
    assert mistakes <= (2 * R / gamma) ** 2
    assert clf.score(X, y) == 1.0


def test_pa_regressor_is_passive_inside_epsilon():
    reg = PassiveAggressiveRegressor(epsilon=0.5, fit_intercept=False)
    reg.partial_fit([[1.0, 0.0]], [0.4])
    np.testing.assert_array_equal(reg.coef_, [0.0, 0.0])
    reg.partial_fit([[1.0, 0.0]], [2.0])  # loss 1.5 -> PA-I tau = min(C=1, 1.5/1) = 1
    np.testing.assert_allclose(reg.coef_, [1.0, 0.0])


def test_multiclass_one_vs_rest():
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    for est in (PassiveAggressiveClassifier(random_state=0), OGDClassifier(random_state=0)):
        model = _clone(est).fit(X, y)
        assert model.coef_.shape == (3, 4)
        assert model.score(X, y) > 0.8
    proba = OGDClassifier(random_state=0).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_predict_proba_only_for_logistic():
    assert hasattr(OGDClassifier(loss="logistic"), "predict_proba")
    assert not hasattr(OGDClassifier(loss="hinge"), "predict_proba")
    assert not hasattr(PassiveAggressiveClassifier(), "predict_proba")
    assert not hasattr(Perceptron(), "predict_proba")


def test_divergence_is_a_clear_error_not_nan():
    X = np.array([[1e3, 1e3]] * 50)
    y = np.arange(50.0) * 1e3
    with pytest.raises(FloatingPointError, match="OGDRegressor diverged.*example .*Lower eta0"):
        OGDRegressor(eta0=10.0).partial_fit(X, y)


@pytest.mark.parametrize(
    "est,param,value,message",
    [
        (
            PassiveAggressiveClassifier(),
            "C",
            -1,
            "The 'C' parameter of PassiveAggressiveClassifier must be a float in the range (0.0, inf). Got -1 instead.",
        ),
        (
            OGDClassifier(),
            "loss",
            "log",
            "The 'loss' parameter of OGDClassifier must be one of {'logistic', 'hinge', 'squared'}. Got 'log' instead.",
        ),
        (
            Perceptron(),
            "max_iter",
            0,
            "The 'max_iter' parameter of Perceptron must be an int in the range [1, inf). Got 0 instead.",
        ),
        (
            PassiveAggressiveRegressor(),
            "epsilon",
            float("nan"),
            "The 'epsilon' parameter of PassiveAggressiveRegressor must be a float in the range [0.0, inf). Got nan instead.",
        ),
    ],
)
def test_parameter_messages(est, param, value, message):
    est = _clone(est).set_params(**{param: value})
    with pytest.raises(ValueError, match=re.escape(message)):
        est.partial_fit(np.eye(2), [0, 1], **({} if "Regressor" in type(est).__name__ else {"classes": [0, 1]}))


def test_nan_input_is_rejected_before_any_update():
    clf = PassiveAggressiveClassifier().partial_fit(np.eye(2), [0, 1], classes=[0, 1])
    before = clf.coef_.copy()
    X = sp.csr_matrix(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(X, [1])
    np.testing.assert_array_equal(clf.coef_, before)


@pytest.mark.parametrize(
    "indices,indptr,message",
    [
        ([0, 7], [0, 1, 2], "column index 7 is outside"),
        ([0, -1], [0, 1, 2], "column index -1 is outside"),
        ([0, 1], [0, 2, 1], "malformed CSR matrix: indptr"),
    ],
)
def test_malformed_csr_is_refused_not_a_segfault(indices, indptr, message):
    X = sp.csr_matrix((2, 3))  # built by hand, as a careless caller might: scipy does not check the arrays
    X.data, X.indices, X.indptr = np.ones(2), np.array(indices, dtype=np.int32), np.array(indptr, dtype=np.int32)
    with pytest.raises(ValueError, match=message):
        PassiveAggressiveClassifier().partial_fit(X, [0, 1], classes=[0, 1])


# -- the boundary check the kernels rely on (one fused sweep) and the CSR fast path of check_X_y ------------
def _csr(rng, n=40, d=30, index_dtype=np.int32):
    X = sp.random(n, d, density=0.2, format="csr", random_state=np.random.RandomState(int(rng.integers(1 << 30))))
    X = sp.csr_matrix(sp.diags((np.arange(n) % 7 != 0).astype(float)) @ X)  # every 7th row empty
    X.eliminate_zeros()
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    return X


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("fault", ["none", "nan", "inf", "-inf", "index_high", "index_negative", "indptr", "huge"])
@pytest.mark.parametrize("limit", [np.inf, 2.0**500])
def test_csr_check_matches_naive_twin(fault, index_dtype, limit):
    from streamlearn._kernels.linear import EXPONENT_MASK, csr_check
    from tests.naive import naive_csr_check

    rng = np.random.default_rng(7)
    for _ in range(5):
        X = _csr(rng, index_dtype=index_dtype)
        indptr, indices, data = X.indptr.copy(), X.indices.copy(), X.data.copy()
        p = int(rng.integers(indices.shape[0]))
        if fault in ("nan", "inf", "-inf"):
            data[p] = float(fault)
        elif fault == "huge":
            data[p] = -(2.0**500)
        elif fault == "index_high":
            indices[p] = X.shape[1]
        elif fault == "index_negative":
            indices[p] = -1
        elif fault == "indptr":
            i = int(rng.integers(1, X.shape[0]))
            indptr[i] = indptr[i + 1] + 1
        limit_bits = np.float64(limit).view(np.uint64) & EXPONENT_MASK
        got = csr_check(indptr, indices, data.view(np.uint64), X.shape[1], limit_bits)
        assert got == naive_csr_check(indptr, indices, data, X.shape[1], limit)
        assert sum(got) == (fault != "none" and (fault != "huge" or limit < np.inf))


@pytest.mark.parametrize("value,what", [(np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")])
def test_non_finite_sparse_input_is_named(value, what):
    X = sp.csr_matrix(np.eye(4))
    X.data[2] = value
    with pytest.raises(ValueError, match=rf"Input X contains {what} \(row 2, column 2\)"):
        PassiveAggressiveClassifier().partial_fit(X, np.array([0, 1, 0, 1]), classes=[0, 1])
    clf = OGDClassifier().partial_fit(sp.csr_matrix(np.eye(4)), np.array([0, 1, 0, 1]), classes=[0, 1])
    with pytest.raises(ValueError, match=f"Input X contains {what}"):
        clf.predict(X)
    y = np.array([0.0, 1.0, value, 1.0])
    with pytest.raises(ValueError, match=f"Input y contains {what}"):
        OGDRegressor().partial_fit(sp.csr_matrix(np.eye(4)), y)


def test_csr_fast_path_matches_full_validation():
    """A float64 CSR matrix skips scikit-learn's check_array; the outcome must be the one the full path gives."""
    X, y = load_a9a()[:2]
    X, y = X[:500], y[:500]
    fast = PassiveAggressiveClassifier().partial_fit(X, y, classes=[-1, 1])
    full = PassiveAggressiveClassifier().partial_fit(X.astype(np.float32).tocoo(), y, classes=[-1, 1])
    np.testing.assert_array_equal(fast.coef_, full.coef_)
    assert fast.n_features_in_ == 123
    with pytest.raises(ValueError, match="Unknown label type"):  # continuous labels, as scikit-learn says
        PassiveAggressiveClassifier().partial_fit(X, y + 0.5, classes=[-0.5, 1.5])
    ok = PassiveAggressiveClassifier().partial_fit(X, y.astype(np.int8), classes=[-1, 1])  # integer labels
    np.testing.assert_array_equal(ok.coef_, fast.coef_)
    with pytest.raises(ValueError, match="X has 122 features, but PassiveAggressiveClassifier is expecting 123"):
        fast.predict(X[:, :122])
    unsorted = X[:3].copy()
    unsorted.indices[[0, 1]] = unsorted.indices[[1, 0]]
    unsorted.data[[0, 1]] = unsorted.data[[1, 0]]
    unsorted.has_sorted_indices = False
    np.testing.assert_array_equal(fast.decision_function(unsorted), fast.decision_function(X[:3]))


def test_prefetch_only_hints():
    """Above PREFETCH_MIN_WEIGHTS the kernel prefetches: the model must be the same one as with the columns
    compacted into a small model (no prefetch), bit for bit."""
    from streamlearn._kernels import linear as k

    rng = np.random.default_rng(1)
    n, d = 300, k.PREFETCH_MIN_WEIGHTS
    cols = np.sort(rng.choice(d, 50, replace=False))
    small = _csr(rng, n=n, d=50)
    big = sp.csr_matrix((small.data, cols[small.indices], small.indptr), shape=(n, d))
    y = np.where(rng.random(n) < 0.5, -1, 1)
    for est in (PassiveAggressiveClassifier(), OGDClassifier(), Perceptron(radius=2.0)):
        a = _clone(est).partial_fit(small, y, classes=[-1, 1])
        b = _clone(est).partial_fit(big, y, classes=[-1, 1])
        np.testing.assert_array_equal(a.coef_[0], b.coef_[0, cols])
        np.testing.assert_array_equal(a.intercept_, b.intercept_)


def test_perceptron_radius_one_is_sklearns_dense_perceptron(a9a):
    """The docstring's claim: with radius=1 the bias rule is scikit-learn's (b += eta y) on dense input."""
    import warnings

    from sklearn.linear_model import Perceptron as SkPerceptron

    X, y = a9a[0][:2000].toarray(), a9a[1][:2000]
    ours = Perceptron(radius=1.0).partial_fit(X, y, classes=[-1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = SkPerceptron(shuffle=False).partial_fit(X, y, classes=[-1, 1])
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-12)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-12)
    assert not np.allclose(Perceptron().partial_fit(X, y, classes=[-1, 1]).coef_, theirs.coef_)  # R^2 rule differs


#: every registry learner on the first-order kernel (streamlearn._kernels.linear.linear_epoch)
_FIRST_ORDER = [
    "perceptron",
    "perceptron-nobias",
    "pa",
    "pa1",
    "pa2",
    "ogd",
    "ogd-hinge",
    "ogd-regressor",
    "pa-regressor",
]


def _state(model):
    return {k: v.copy() for k, v in vars(model).items() if isinstance(v, np.ndarray)} | {"t_": model.t_}


@pytest.mark.parametrize("name", _FIRST_ORDER)
@pytest.mark.parametrize("where", ["weight", "last", "target"])
def test_an_update_that_would_overflow_stops_the_pass_before_its_example(name, where):
    """An example whose update would make a weight infinite (the largest sample weight taken, 2**499, on values of
    1e150 with a step size of 1e10; a target of 1e300 on values of 1e10) stops the pass before its update: the
    model is the one that learnt the examples before it, bit for bit, every weight finite. It became inf, silently
    when it was the chunk's last example (or no later example read that weight), else with the divergence error
    and a model of infinities."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 4))
    regression = name.endswith("regressor")
    if where == "target" and not regression:
        pytest.skip("a classifier's targets are labels")
    params = {"C": 1e10} if name.startswith("pa") else {"eta0": 1e10}
    y = X @ [1.0, -2.0, 0.5, 1.0] if regression else np.where(X[:, 0] > 0, 1, -1)
    kw = {} if regression else {"classes": [-1, 1]}
    Xb, yb, sw = X[:6].copy(), y[:6].copy(), np.ones(6)
    bad = 5 if where == "last" else 3
    if regression:  # row 3, or the chunk's last row
        Xb[bad] *= 1e10
        yb[bad] = 1e300
    else:
        Xb[bad] *= 1e150
        yb[bad] = -np.sign(Xb[bad, 0]) or 1  # a mistake of the model that learnt sign(x_0)
        sw[bad] = 2.0**499

    def learner():
        return make_learner(name, {} if regression else params)

    model = make_learner(name).partial_fit(X, y, **kw)
    expected = _state(
        make_learner(name).partial_fit(X, y, **kw).partial_fit(Xb[:bad], yb[:bad], sample_weight=sw[:bad])
    )
    try:
        model.partial_fit(Xb, yb, sample_weight=sw)
    except FloatingPointError as exc:
        assert re.search(rf"diverged: the score of example {bad} of this batch, or its update, is not finite", str(exc))
        got = _state(model)
        assert got.keys() == expected.keys()
        for key, value in expected.items():
            np.testing.assert_array_equal(got[key], value, err_msg=key)
    # learnt or refused, the model is finite, and its scores are finite or an error
    for key, value in _state(model).items():
        assert np.all(np.isfinite(value)), key
    try:
        assert np.all(np.isfinite(model.predict(X) if regression else model.decision_function(X)))
    except ValueError as exc:
        assert "cannot score example" in str(exc)


def test_a_step_beyond_the_safe_size_that_does_not_overflow_is_learnt_as_the_twin():
    """A step beyond the kernel's safe size (a target of 1e160) on a tiny value (1e-100) makes finite weights: the
    example is learnt, every weight checked first, and the pass goes on as the NumPy twin's."""
    from streamlearn._kernels import linear as k
    from tests.naive import naive_linear_epoch

    X = np.array([[1.0, 0.5], [0.5, 1.0], [1e-100, 0.0], [1.0, 1.0], [0.0, 1.0]])
    y = np.array([1.0, 2.0, 1e160, 1.0, 3.0])
    model = OGDRegressor(eta0=1.0).partial_fit(X, y)
    assert np.abs(-1.0 * 2 * (0 - 1e160) / np.sqrt(3)) > k.SAFE_STEP  # the example takes the checked path
    W, b, t, scores = naive_linear_epoch(
        X,
        y.reshape(-1, 1),
        np.ones(5),
        np.zeros((1, 2)),
        np.zeros(1),
        1.0,
        "gradient",
        "squared",
        0.0,
        "invsqrt",
        1.0,
        1.0,
        0,
    )
    assert model.t_ == t == 5
    np.testing.assert_allclose(model.coef_, W[0], rtol=1e-12)
    np.testing.assert_allclose(model.intercept_, b, rtol=1e-12)
