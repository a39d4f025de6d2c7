"""Behaviour of the sparse (L1) online learners: equal to the eager twins through the estimator API, the
limiting cases of Langford, Li, Zhang (JMLR 2009), exact zeros, the lazy coef_, parameter errors and the CLI's nnz_weights."""

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_regressor

from streamlearn.cli.main import main
from streamlearn.datasets import bundled_path, load_a9a
from streamlearn.linear_model import (
    FOBOSClassifier,
    FOBOSRegressor,
    FTRLProximalClassifier,
    FTRLProximalRegressor,
    RDAClassifier,
    RDARegressor,
    SimpleTruncationClassifier,
    SimpleTruncationRegressor,
    TruncatedGradientClassifier,
    TruncatedGradientRegressor,
)
from tests.naive import (
    naive_fobos,
    naive_ftrl,
    naive_l1_subgradient,
    naive_rda,
    naive_simple_truncation,
    naive_truncated_gradient,
)


def _stream(n=300, d=40, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.2)
    W = rng.normal(size=(d, classes)) * (rng.random((d, classes)) < 0.3)
    if classes == 2:
        y = np.where(X @ W[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    else:
        y = np.argmax(X @ W + 0.3 * rng.normal(size=(n, classes)), axis=1)
    return sp.csr_matrix(X), y, X @ W[:, 0] + 0.1 * rng.normal(size=n)


def _targets(y, classes):
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0).reshape(-1, 1)
    return np.where(y[:, None] == np.asarray(classes)[None, :], 1.0, -1.0)


# (estimator, twin, twin keyword arguments)
_CLF = [
    (SimpleTruncationClassifier(theta=0.05, k=3, eta0=0.3), naive_simple_truncation, dict(theta=0.05, k=3, eta0=0.3)),
    (
        TruncatedGradientClassifier(gravity=0.05, theta=0.2, k=2, eta0=0.3, learning_rate="constant"),
        naive_truncated_gradient,
        dict(gravity=0.05, theta=0.2, k=2, eta0=0.3, schedule="constant"),
    ),
    (FOBOSClassifier(l1=0.02, eta0=0.3), naive_fobos, dict(l1=0.02, eta0=0.3)),
    (RDAClassifier(l1=0.05, gamma=2.0), naive_rda, dict(l1=0.05, gamma=2.0)),
    (FTRLProximalClassifier(alpha=0.3, l1=0.5, l2=0.1), naive_ftrl, dict(alpha=0.3, beta=1.0, l1=0.5, l2=0.1)),
]


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("case", range(len(_CLF)), ids=[type(c[0]).__name__ for c in _CLF])
def test_classifier_equals_eager_twin(case, n_classes, loss):
    est, twin, kw = _CLF[case]
    X, y, _ = _stream(classes=n_classes, seed=case)
    classes = list(range(n_classes)) if n_classes > 2 else [-1, 1]
    est = clone(est).set_params(loss=loss)
    scores = est.partial_fit_scores(X[:150], y[:150], classes=classes)
    scores = np.vstack([scores.reshape(150, -1), est.partial_fit_scores(X[150:], y[150:]).reshape(150, -1)])
    W, b, twin_scores = twin(X, _targets(y, classes), np.ones(X.shape[0]), loss=loss, **kw)
    np.testing.assert_allclose(scores, twin_scores, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(est.coef_, W, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(est.coef_ == 0, W == 0)
    assert est.nnz_weights == np.count_nonzero(W) + np.count_nonzero(b)


@pytest.mark.parametrize(
    "est,twin,kw",
    [
        (
            SimpleTruncationRegressor(theta=0.02, k=2, eta0=0.05),
            naive_simple_truncation,
            dict(theta=0.02, k=2, eta0=0.05),
        ),
        (
            TruncatedGradientRegressor(gravity=0.1, theta=0.3, k=3, eta0=0.05),
            naive_truncated_gradient,
            dict(gravity=0.1, theta=0.3, k=3, eta0=0.05),
        ),
        (FOBOSRegressor(l1=0.05, eta0=0.05), naive_fobos, dict(l1=0.05, eta0=0.05)),
        (RDARegressor(l1=0.05, gamma=5.0), naive_rda, dict(l1=0.05, gamma=5.0)),
        (FTRLProximalRegressor(alpha=0.2, l1=2.0, l2=0.5), naive_ftrl, dict(alpha=0.2, beta=1.0, l1=2.0, l2=0.5)),
    ],
    ids=lambda v: type(v).__name__ if hasattr(v, "fit") else "",
)
def test_regressor_equals_eager_twin(est, twin, kw):
    est = clone(est)
    X, _, target = _stream(seed=7)
    sw = np.random.default_rng(1).choice([0.0, 1.0, 2.5], size=X.shape[0])
    est.partial_fit(X, target, sample_weight=sw)
    W, b, _ = twin(X, target.reshape(-1, 1), sw, loss="squared", **kw)
    np.testing.assert_allclose(est.coef_, W[0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(est.intercept_, b, rtol=1e-10, atol=1e-10)
    assert 0 < np.count_nonzero(est.coef_) < X.shape[1], "the case should produce some exact zeros"


def test_ftrl_l1_gives_exact_zeros_on_a9a():
    """McMahan et al.: with l1 > 0 FTRL-Proximal sets w_i exactly to 0 while |z_i| <= l1; the more l1, the fewer
    weights. l1 = 0 keeps every feature seen."""
    X, y, X_test, y_test = load_a9a()
    nnz = []
    for l1 in (0.0, 1.0, 10.0):
        clf = FTRLProximalClassifier(l1=l1).partial_fit(X, y, classes=[-1, 1])
        w = clf.coef_
        seen = np.asarray((X != 0).sum(axis=0)).ravel() > 0
        if l1 == 0.0:
            assert np.count_nonzero(w[0, seen]) == seen.sum()
        nnz.append(np.count_nonzero(w))
        assert clf.score(X_test, y_test) > 0.82
    assert nnz[0] > nnz[1] > nnz[2] > 0, nnz
    # the zeros are exact: the materialised weight is 0.0 (not -0.0, not a tiny number)
    assert not np.any(np.signbit(clf.coef_[clf.coef_ == 0]))
    z = clf._state[:-1, 0, 0]  # z of every feature (state rows: features; last row: intercept)
    np.testing.assert_array_equal(clf.coef_[0] == 0.0, np.abs(z) <= 10.0)


def test_tg_reduces_to_simple_truncation_when_gravity_reaches_theta():
    """Langford, Li, Zhang (JMLR 2009): when the per-round gravity k eta_t g is >= theta, T1 zeroes all of [-theta, theta]: simple
    truncation."""
    X, y, _ = _stream(n=400, seed=3)
    theta, k, eta0 = 0.05, 4, 0.3
    tr = SimpleTruncationClassifier(theta=theta, k=k, eta0=eta0).partial_fit(X, y, classes=[-1, 1])
    gravity = theta * np.sqrt(X.shape[0]) / (k * eta0)  # k eta_t g >= theta for every t <= n
    tg = TruncatedGradientClassifier(gravity=gravity, theta=theta, k=k, eta0=eta0).partial_fit(X, y, classes=[-1, 1])
    np.testing.assert_allclose(tg.coef_, tr.coef_, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(tg.coef_ == 0, tr.coef_ == 0)
    assert 0 < np.count_nonzero(tr.coef_) < X.shape[1]
    # and a smaller gravity is not simple truncation
    weak = TruncatedGradientClassifier(gravity=gravity / 100, theta=theta, k=k, eta0=eta0)
    assert not np.allclose(weak.partial_fit(X, y, classes=[-1, 1]).coef_, tr.coef_)


def test_tg_reduces_to_the_l1_subgradient_method_and_to_fobos():
    """Langford, Li, Zhang (JMLR 2009): theta = inf and k = 1 make TG the L1 (sub)gradient step w - eta g - eta g_l1 sgn, clipped at 0
    (the clipped form, Algorithms §4.2), which is L1-FOBOS with eta_{t+1/2} = eta_t."""
    X, y, _ = _stream(n=400, seed=4)
    tg = TruncatedGradientClassifier(gravity=0.02, theta=np.inf, k=1, eta0=0.3).partial_fit(X, y, classes=[-1, 1])
    W, b, _ = naive_l1_subgradient(X, _targets(y, [-1, 1]), np.ones(X.shape[0]), loss="logistic", l1=0.02, eta0=0.3)
    np.testing.assert_allclose(tg.coef_, W, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(tg.coef_ == 0, W == 0)
    fobos = FOBOSClassifier(l1=0.02, eta0=0.3).partial_fit(X, y, classes=[-1, 1])
    np.testing.assert_array_equal(tg.coef_, fobos.coef_)
    assert 0 < np.count_nonzero(W) < X.shape[1]


@pytest.mark.parametrize(
    "est",
    [
        SimpleTruncationClassifier(theta=0.05),
        FOBOSClassifier(l1=0.05),
        RDAClassifier(l1=0.05),
        FTRLProximalClassifier(l1=2.0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_coef_is_materialised_on_read_without_changing_the_model(est):
    est = clone(est)
    X, y, _ = _stream(seed=5)
    est.partial_fit(X, y, classes=[-1, 1])
    state = {k: v.copy() for k, v in vars(est).items() if isinstance(v, np.ndarray)}
    a = est.coef_
    a[:] = 123.0  # a fresh array: writing to it does not touch the model
    b = est.coef_
    assert not np.any(b == 123.0)
    for key, arr in state.items():
        np.testing.assert_array_equal(getattr(est, key), arr, err_msg=f"reading coef_ changed {key}")
    # O(nnz) scores agree with the materialised weights
    np.testing.assert_allclose(est.decision_function(X), X @ b[0] + est.intercept_[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "est",
    [
        SimpleTruncationClassifier(theta=0.05, k=3),
        TruncatedGradientClassifier(gravity=0.02),
        FOBOSRegressor(l1=0.05, eta0=0.05),
    ],
    ids=lambda e: type(e).__name__,
)
def test_save_keeps_pending_truncations_and_resumes_bit_for_bit(est, tmp_path):
    from streamlearn.persist import load

    X, y, target = _stream(seed=6)
    regressor = is_regressor(est)
    y = target if regressor else y
    kw = {} if regressor else {"classes": [-1, 1]}
    a, b = clone(est).partial_fit(X[:200], y[:200], **kw), clone(est).partial_fit(X[:200], y[:200], **kw)
    assert np.any(a._state[:-1, -1] != a._state_penalty), "the case should have pending truncations"
    a.save(tmp_path / "m.slm")
    np.testing.assert_array_equal(a._state, b._state)  # saving does not change the model
    back = load(tmp_path / "m.slm")
    np.testing.assert_array_equal(back._state, a._state)  # marks included
    for m in (back, b):
        m.partial_fit(X[200:], y[200:])
    np.testing.assert_array_equal(back._state, b._state)  # resumed bit for bit
    np.testing.assert_array_equal(back.coef_, b.coef_)


def test_load_rebuilds_marks_of_flushed_files(tmp_path):
    """Files whose pending truncations were applied before writing (weights only) still load."""
    from streamlearn.persist import load

    X, y, _ = _stream(seed=6)
    a = TruncatedGradientClassifier(gravity=0.02).partial_fit(X[:200], y[:200], classes=[-1, 1])
    rule, theta, _, _ = a._truncation()
    from streamlearn._kernels import sparse_l1 as k

    k.truncated_flush(a._state, a._state_penalty, theta, rule)
    full = a._state
    a._state, a._state_marks = np.ascontiguousarray(full[:, :-1]), "flushed"
    a.save(tmp_path / "m.slm")
    back = load(tmp_path / "m.slm")
    np.testing.assert_array_equal(back._state[:-1], full[:-1])
    assert not hasattr(back, "_state_marks")


def test_no_coef_before_fit():
    est = FTRLProximalClassifier()
    assert not hasattr(est, "coef_")
    with pytest.raises(AttributeError, match="before fit"):
        est.intercept_


@pytest.mark.parametrize(
    "est,param,value,expected",
    [
        (FTRLProximalClassifier, "alpha", 0.0, "a float in the range (0.0, inf)"),
        (FTRLProximalClassifier, "alpha", -1.0, "a float in the range (0.0, inf)"),
        (FTRLProximalClassifier, "l1", -0.1, "a float in the range [0.0, inf)"),
        (FTRLProximalRegressor, "l2", -1, "a float in the range [0.0, inf)"),
        (FTRLProximalClassifier, "beta", -1.0, "a float in the range [0.0, inf)"),
        (RDAClassifier, "l1", -1e-3, "a float in the range [0.0, inf)"),
        (RDARegressor, "gamma", 0.0, "a float in the range (0.0, inf)"),
        (FOBOSClassifier, "l1", -1.0, "a float in the range [0.0, inf)"),
        (TruncatedGradientClassifier, "gravity", -1.0, "a float in the range [0.0, inf)"),
        (TruncatedGradientClassifier, "theta", -0.5, "a float in the range [0.0, inf]"),
        (TruncatedGradientRegressor, "k", 0, "an int in the range [1, inf)"),
        (SimpleTruncationClassifier, "k", 0, "an int in the range [1, inf)"),
        (SimpleTruncationRegressor, "k", 2.5, "an int in the range [1, inf)"),
        (SimpleTruncationClassifier, "eta0", 0.0, "a float in the range (0.0, inf)"),
        (FOBOSRegressor, "learning_rate", "optimal", "one of {'invsqrt', 'constant'}"),
        (FTRLProximalClassifier, "loss", "log", "one of {'logistic', 'hinge', 'squared'}"),
        (RDARegressor, "loss", "logistic", "one of {'squared'}"),
        (TruncatedGradientRegressor, "loss", "hinge", "one of {'squared'}"),
    ],
)
def test_bad_parameters_raise_clear_errors(est, param, value, expected):
    X, y, _ = _stream(n=20)
    msg = f"The '{param}' parameter of {est.__name__} must be {expected}. Got {value!r} instead."
    with pytest.raises(
        ValueError,
        match=msg.replace("(", r"\(")
        .replace(")", r"\)")
        .replace("[", r"\[")
        .replace("{", r"\{")
        .replace("}", r"\}")
        .replace(".", r"\."),
    ):
        if est.__name__.endswith("Regressor"):
            est(**{param: value}).fit(X, y.astype(float))
        else:
            est(**{param: value}).partial_fit(X, y, classes=[-1, 1])


@pytest.mark.parametrize(
    "clf,reg,defaults",
    [
        (SimpleTruncationClassifier, SimpleTruncationRegressor, {"eta0": 0.01}),
        (TruncatedGradientClassifier, TruncatedGradientRegressor, {"eta0": 0.01}),
        (FOBOSClassifier, FOBOSRegressor, {"eta0": 0.01}),
        (RDAClassifier, RDARegressor, {"gamma": 10.0}),
        (FTRLProximalClassifier, FTRLProximalRegressor, {}),
    ],
)
def test_regressor_takes_the_classifier_parameters_with_its_own_defaults(clf, reg, defaults):
    assert reg().get_params() == {**clf().get_params(), "loss": "squared", **defaults}
    est = reg(l1=0.5) if "l1" in clf().get_params() else reg(theta=0.5)
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(TypeError, match="unexpected keyword argument 'lr'"):
        reg(lr=0.1)
    with pytest.raises(TypeError, match="positional"):
        clf(0.1)


def test_cli_train_json_reports_nnz_weights(capsys):
    a9a = str(bundled_path("a9a.xz"))
    assert (
        main(
            ["train", a9a, "--learner", "ftrl", "-p", "l1=5", "--n-features", "123", "--zero-based", "false", "--json"]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    X, y, _, _ = load_a9a()
    clf = FTRLProximalClassifier(l1=5.0).partial_fit(X, y, classes=[-1, 1])
    assert out["nnz_weights"] == clf.nnz_weights < 124


@pytest.mark.parametrize("name", ["truncation-regressor", "tg-regressor", "fobos-regressor"])
@pytest.mark.parametrize("bad", [3, 5])
def test_a_step_that_could_overflow_stops_the_pass_before_its_example(name, bad):
    """A step beyond the safe size (the largest weight taken, 2**499, on values of 2**499) made the weights
    infinite: silently on the chunk's last example, else with the divergence error on a model of infinities. The
    pass now stops before that example: the model is the one that learnt the examples before it."""
    from streamlearn.learners import make_learner

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 4))
    y = X @ [1.0, -2.0, 0.5, 1.0]
    Xb, yb, sw = X[:6].copy(), y[:6].copy(), np.ones(6)
    Xb[bad] *= 2.0**499
    sw[bad] = 2.0**499
    model = make_learner(name).partial_fit(X, y)
    with pytest.raises(FloatingPointError, match=f"diverged: the score of example {bad} of this batch, or its update"):
        model.partial_fit(Xb, yb, sample_weight=sw)
    expected = make_learner(name).partial_fit(X, y).partial_fit(Xb[:bad], yb[:bad])
    assert model.t_ == expected.t_
    np.testing.assert_array_equal(model.coef_, expected.coef_)
    np.testing.assert_array_equal(model.intercept_, expected.intercept_)
    assert np.isfinite(model._state).all()


@pytest.mark.parametrize(
    ("name", "n_classes"),
    [("ftrl", 2), ("ftrl", 3), ("rda", 2), ("rda", 3), ("ftrl-regressor", 0), ("rda-regressor", 0)],
)
@pytest.mark.parametrize(("bad", "rowwise"), [(3, False), (5, False), (3, True)])
def test_an_ftrl_or_rda_update_that_could_overflow_stops_before_its_example(name, n_classes, bad, rowwise):
    """A gradient times a value near 1e150 overflowed FTRL's n (then z was NaN) and RDA's gradient sums: silently on
    the chunk's last example or row by row, else with the divergence error on a state of infinities. The pass now
    stops before that example, names it, and keeps the model that learnt the examples before it bit for bit."""
    from streamlearn.learners import make_learner

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 4))
    y = X @ [1.0, -2.0, 0.5, 1.0]
    if n_classes:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1])) * 2 - 1
    kw = {"classes": np.unique(y)} if n_classes else {}
    Xb, yb, sw = X[:6].copy(), y[:6].copy(), np.ones(6)
    expected = make_learner(name).partial_fit(X, y, **kw).partial_fit(Xb[:bad], yb[:bad])
    Xb[bad] = 1e150 * np.sign(Xb[bad])
    sw[bad] = 1e150
    if n_classes:  # a label its model scores lowest: a gradient of the loss near its largest
        scores = expected.decision_function(Xb[bad : bad + 1])
        yb[bad] = -np.sign(scores[0]) if n_classes == 2 else expected.classes_[np.argmin(scores[0])]
    model = make_learner(name).partial_fit(X, y, **kw)
    if rowwise:
        for r in range(bad):
            model.partial_fit(Xb[r : r + 1], yb[r : r + 1], sample_weight=sw[r : r + 1])
        Xb, yb, sw, bad = Xb[bad:], yb[bad:], sw[bad:], 0
    with pytest.raises(FloatingPointError, match=f"diverged: the score of example {bad} of this batch, or its update"):
        model.partial_fit(Xb, yb, sample_weight=sw)
    assert np.isfinite(model._state).all()
    assert model.t_ == expected.t_
    np.testing.assert_array_equal(model.coef_, expected.coef_)
    np.testing.assert_array_equal(model.intercept_, expected.intercept_)


def test_a_multiclass_ftrl_example_refused_by_a_later_class_changes_no_class():
    """One-vs-rest FTRL scored, checked and updated each class's output in turn: an example whose gradient for the
    first class was within the overflow bound and beyond it for a later class was refused after the first class
    had learnt it. Every class is now checked first: the refused example changes no class."""
    from streamlearn.linear_model._sparse import FTRLProximalClassifier

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 4))
    y = np.digitize(X @ [1.0, -2.0, 0.5, 1.0], [-1.0, 1.0])
    xb = 10.0 * X[:1]  # large scores: the classes' gradients differ widely
    model = FTRLProximalClassifier().partial_fit(X, y, classes=[0, 1, 2])
    z = model.decision_function(xb)[0]
    # the label whose first class's gradient is the smallest against the largest of the others: the logistic
    # gradient of class c is sw * sigmoid(-y_c z_c), y_c = +1 for the label's class and -1 for the others
    best = None
    for label in range(3):
        yc = np.where(np.arange(3) == label, 1.0, -1.0)
        a = 1.0 / (1.0 + np.exp(yc * z))
        if a[0] > 0 and (best is None or a[0] / a[1:].max() < best[1][0] / best[1][1:].max()):
            best = (label, a)
    label, a = best
    assert a[0] < a[1:].max() / 4
    xmax = max(1.0, np.abs(xb).max())
    sw = 2.0**480 / (xmax * np.sqrt(a[0] * a[1:].max()))  # the first class within the bound, a later one beyond
    assert sw * xmax * a[0] < 2.0**480 < sw * xmax * a[1:].max()
    expected = FTRLProximalClassifier().partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(FloatingPointError, match="diverged: the score of example 0 of this batch, or its update"):
        model.partial_fit(xb, [label], sample_weight=[sw])
    assert model.t_ == expected.t_
    np.testing.assert_array_equal(model._state, expected._state)
    np.testing.assert_array_equal(model.coef_, expected.coef_)
    np.testing.assert_array_equal(model.intercept_, expected.intercept_)
