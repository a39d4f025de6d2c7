"""Vanilla FM: kernel == NumPy twin, gradients == finite differences, parameter errors."""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels import fm as k
from streamlearn.facto import FMClassifier, FMRegressor
from streamlearn.losses import loss_code
from tests.kernel_inputs import chunk_args, csr
from tests.naive import naive_fm_epoch, naive_fm_score

OPT = {"sgd": k.OPT_SGD, "adagrad": k.OPT_ADAGRAD}
SCHED = {"constant": k.SCHEDULE_CONSTANT, "invsqrt": k.SCHEDULE_INVSQRT}
#: fm_epoch's state arrays, in the order the tests keep them
_STATE = ("w0", "w", "V", "G_w0", "G_w", "G_V")


def _data(rng, n=40, d=8, n_out=1, regression=True):
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)
    X[4] = 0.0  # empty row
    X[9] = 0.0
    X[9, 3] = 7.0  # a single large non-zero
    if regression:
        targets = (X @ rng.normal(size=d) + X[:, 0] * X[:, 1]).reshape(-1, 1)
    else:
        targets = np.where(rng.random((n, n_out)) < 0.5, -1.0, 1.0)
    sw = rng.choice([0.0, 0.5, 1.0, 2.0], size=n)
    return X, targets, sw


@pytest.mark.parametrize(
    "opt,schedule,loss,n_out,index_dtype",
    [
        ("sgd", "constant", "squared", 1, np.int32),
        ("sgd", "invsqrt", "logistic", 3, np.int64),
        ("adagrad", "constant", "squared", 1, np.int64),
        ("adagrad", "constant", "hinge", 3, np.int32),
    ],
)
def test_fm_kernel_matches_naive_twin(opt, schedule, loss, n_out, index_dtype):
    rng = np.random.default_rng(len(opt) * 7 + n_out)
    X, targets, sw = _data(rng, n_out=n_out, regression=loss == "squared")
    Xc = csr(X, index_dtype)
    d, nf = X.shape[1], 3
    w0 = rng.normal(size=n_out) * 0.1
    w = rng.normal(size=(n_out, d)) * 0.1
    V = rng.normal(size=(n_out, d, nf)) * 0.3
    G = [np.full(n_out, 0.5), np.full((n_out, d), 0.5), np.full((n_out, d, nf), 0.5)]
    state = [w0.copy(), w.copy(), V.copy()] + [g.copy() for g in G]
    out = np.empty((X.shape[0], n_out))
    t, bad = k.fm_epoch(
        **chunk_args(Xc, targets, sw),
        **dict(zip(_STATE, state)),
        fit_intercept=True,
        loss=loss_code(loss),
        opt=OPT[opt],
        schedule=SCHED[schedule],
        eta0=0.03,
        l2_weight=0.01,
        l2_latent=0.02,
        t=5,
        out_scores=out,
    )
    settings = dict(fit_intercept=True, loss=loss, opt=opt, schedule=schedule, eta0=0.03, l2=(0.01, 0.02), t0=5)
    ref = naive_fm_epoch(X, targets, sw, (w0, w, V), G, **settings)
    assert bad == -1
    assert t == ref[6] == 5 + np.count_nonzero(sw)
    np.testing.assert_allclose(out, ref[7], rtol=1e-10, atol=1e-12)
    for got, want in zip(state, ref[:6]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_fm_gradients_match_finite_differences():
    # one SGD step with l2 = 0 moves every parameter p by -eta l'(yhat) dyhat/dp: recover dyhat/dp from the
    # kernel's step and compare with central differences of the explicit pair-sum score of the twin
    rng = np.random.default_rng(3)
    d, nf = 6, 4
    x = np.zeros(d)
    x[[0, 2, 3, 5]] = rng.normal(size=4)
    Xc = sp.csr_matrix(x.reshape(1, -1))
    w0, w, V = np.array([0.3]), rng.normal(size=(1, d)), rng.normal(size=(1, d, nf))
    eta, y = 1e-3, np.array([[2.0]])
    state = [w0.copy(), w.copy(), V.copy(), np.zeros(1), np.zeros((1, d)), np.zeros((1, d, nf))]
    out = np.empty((1, 1))
    k.fm_epoch(
        **chunk_args(Xc, y, np.ones(1)),
        **dict(zip(_STATE, state)),
        fit_intercept=True,
        loss=loss_code("squared"),
        opt=k.OPT_SGD,
        schedule=k.SCHEDULE_CONSTANT,
        eta0=eta,
        l2_weight=0.0,
        l2_latent=0.0,
        t=0,
        out_scores=out,
    )
    g = 2.0 * (out[0, 0] - y[0, 0])
    grads = [(s - p) / (-eta * g) for s, p in zip(state[:3], (w0, w, V))]
    h = 1e-6

    def fd(arr, idx):
        a, b = arr.copy(), arr.copy()
        a[idx] += h
        b[idx] -= h
        args_a = [a if arr is p else p for p in (w0, w, V)]
        args_b = [b if arr is p else p for p in (w0, w, V)]
        return (
            naive_fm_score(x, args_a[0][0], args_a[1][0], args_a[2][0])
            - naive_fm_score(x, args_b[0][0], args_b[1][0], args_b[2][0])
        ) / (2 * h)

    assert abs(grads[0][0] - fd(w0, (0,))) < 1e-6
    for j in range(d):
        assert abs(grads[1][0, j] - fd(w, (0, j))) < 1e-6, j
        for f in range(nf):
            assert abs(grads[2][0, j, f] - fd(V, (0, j, f))) < 1e-6, (j, f)
    assert np.all(grads[2][0, [1, 4]] == 0.0)  # absent features do not move


def test_fm_regressor_learns_a_pairwise_interaction_linear_model_cannot():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 5))
    y = X[:, 0] * X[:, 1] - X[:, 2] * X[:, 3]
    fm = FMRegressor(n_factors=4).fit(X, y)
    rmse = np.sqrt(np.mean((fm.predict(X) - y) ** 2))
    assert rmse < 0.2 * np.std(y), rmse


def test_fm_parameter_errors_and_fixed_n_factors():
    X = np.eye(4)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="The 'n_factors' parameter of FMClassifier must be an int in the range"):
        FMClassifier(n_factors=0).fit(X, y)
    with pytest.raises(ValueError, match="'optimizer' parameter of FMRegressor must be one of"):
        FMRegressor(optimizer="adam").fit(X, y)
    clf = FMClassifier(n_factors=2).fit(X, y)
    clf.set_params(n_factors=3)
    with pytest.raises(ValueError, match="n_factors=3 but FMClassifier was fitted with 2 factors"):
        clf.partial_fit(X, y)


def test_fm_raises_on_divergence_with_sgd():
    X = np.full((50, 3), 1e3)
    y = np.arange(50.0)
    with pytest.raises(FloatingPointError, match="FMRegressor diverged.*Lower eta0 or init_stdev or scale"):
        FMRegressor(optimizer="sgd", eta0=1.0).partial_fit(X, y)


def test_adagrad_accumulator_overflow_is_a_divergence():
    """Values just under the learners' bound (1e100) square past the largest float in AdaGrad's accumulators:
    an infinite accumulator turns every later step of its parameter into 0, so the model would stop learning
    there without a word. The pass stops at that example with the divergence error instead."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 5))
    X[rng.random(X.shape) < 0.3] *= 1e100
    y = np.where(rng.random(60) > 0.5, 1, -1)
    with pytest.raises(FloatingPointError, match=r"^FMClassifier diverged: the score of example \d+"):
        FMClassifier(random_state=0).partial_fit(X, y, classes=[-1, 1])


@pytest.mark.parametrize("optimizer", ["adagrad", "sgd"])
@pytest.mark.parametrize("cls", [FMClassifier, FMRegressor])
def test_refused_example_leaves_the_model_of_the_examples_before_it(cls, optimizer):
    """The example whose update would leave a parameter (or, AdaGrad, an accumulator) not finite is named by the
    error and changes nothing: the model is the one the examples before it made, finite and usable. SGD wrote
    infinite or NaN weights, silently on the batch's last example."""
    rng = np.random.default_rng(0)
    e = rng.uniform(-300, 150, size=(60, 5))
    X = np.sign(rng.standard_normal((60, 5))) * 10.0**e
    y = np.where(rng.random(60) < 0.5, 1, -1)
    kw = {"classes": [-1, 1]} if cls is FMClassifier else {}
    est = cls(random_state=0, optimizer=optimizer)
    with pytest.raises(FloatingPointError, match=r"^\w+ diverged: the score of example \d+ of this batch") as info:
        est.partial_fit(X, y, **kw)
    row = info.value.row
    assert row > 0
    ref = cls(random_state=0, optimizer=optimizer).partial_fit(X[:row], y[:row], **kw)
    assert est.t_ == ref.t_ == row
    for name in ("intercept_", "coef_", "latent_", "_state_G0", "_state_Gw", "_state_GV"):
        assert np.all(np.isfinite(getattr(est, name))), name
        np.testing.assert_array_equal(getattr(est, name), getattr(ref, name), err_msg=name)
    np.testing.assert_array_equal(est.predict(X[:row]), ref.predict(X[:row]))


def test_regressor_constructor_is_the_classifiers_with_other_defaults():
    from streamlearn._params import with_defaults

    reg = FMRegressor(n_factors=3, random_state=1)
    assert reg.get_params() == {
        **FMClassifier().get_params(),
        "loss": "squared",
        "eta0": 0.05,
        "n_factors": 3,
        "random_state": 1,
    }
    assert FMClassifier().eta0 == 0.1  # the classifier's own defaults are untouched
    with pytest.raises(TypeError, match="no keyword-only parameter eta"):
        with_defaults(FMClassifier.__init__, eta=0.1)


@pytest.mark.parametrize("cls", [FMClassifier, FMRegressor])
def test_sgd_last_example_whose_update_overflows_is_refused(cls):
    """A value and a weight near the input bound (1e140) made the SGD step infinite: on the batch's last example
    the model was left infinite without an error. That example is now refused and changes nothing."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    y = np.where(rng.random(20) < 0.5, 1, -1)
    kw = {"classes": [-1, 1]} if cls is FMClassifier else {}
    ref = cls(optimizer="sgd", random_state=0).partial_fit(X[:-1], y[:-1], **kw)
    X[-1] = [1e140, 1e140, 1.0]  # (two large values: the step of V on one is g x_i times the other's v x)
    if cls is FMClassifier:  # the label the model scores least likely: a loss derivative near its largest
        y[-1] = -np.sign(ref.decision_function(X[-1:])[0])
    sw = np.ones(20)
    sw[-1] = 1e140
    est = cls(optimizer="sgd", random_state=0)
    with pytest.raises(FloatingPointError, match="diverged: the score of example 19 of this batch, or its update"):
        est.partial_fit(X, y, sample_weight=sw, **kw)
    assert est.t_ == ref.t_ == 19
    for name in ("intercept_", "coef_", "latent_"):
        np.testing.assert_array_equal(getattr(est, name), getattr(ref, name), err_msg=name)


def _refused_by_a_later_class(optimizer):
    """A batch of 3 classes whose last example is refused by a class after the first, the first class's update
    of it being finite: (X, y, sample weights, settings)."""
    rng = np.random.default_rng(16 if optimizer == "sgd" else 0)
    if optimizer == "sgd":  # values from 1e-300 to 1e150: example 2 is the first refused
        e = rng.uniform(-300, 150, size=(60, 5))
        X = np.sign(rng.standard_normal((60, 5))) * 10.0**e
        y = rng.integers(0, 3, 60)
        return X[:3], y[:3], np.ones(3), {}
    # AdaGrad: a large value with a large weight, scored confidently right by class 0 (a loss derivative about
    # 1e-24: its steps stay finite, the L2 term moves its weight) and wrongly by class 1, whose squared step is
    # beyond the float range
    X = rng.normal(size=(40, 4))
    y = np.digitize(X @ [1.0, -2.0, 0.5, 1.0], [-1.0, 1.0])
    X = np.vstack([X, [1e10, 0.0, 0.0, 0.0]])
    y = np.append(y, 1)
    return X, y, np.append(np.ones(40), 1e145), {"l2_weight": 0.01}


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_a_multiclass_example_refused_by_a_later_class_changes_no_class(optimizer):
    """One-vs-rest: each class's output was scored and updated in turn, so an example refused by a later class
    had already been learnt by the earlier ones. Every class is now scored (SGD: and checked) before any is
    updated, and AdaGrad undoes the earlier classes' updates: the model after the refusal is the one the examples
    before it made, for every class."""
    X, y, sw, params = _refused_by_a_later_class(optimizer)
    row = X.shape[0] - 1
    est = FMClassifier(optimizer=optimizer, **params).partial_fit(X[:row], y[:row], classes=[0, 1, 2])
    ref = FMClassifier(optimizer=optimizer, **params).partial_fit(X[:row], y[:row], classes=[0, 1, 2])
    with pytest.raises(FloatingPointError, match="diverged: the score of example 0 of this batch, or its update"):
        est.partial_fit(X[row:], y[row:], sample_weight=sw[row:])
    assert est.t_ == ref.t_ == row
    for name in ("intercept_", "coef_", "latent_", "_state_G0", "_state_Gw", "_state_GV"):
        np.testing.assert_array_equal(getattr(est, name), getattr(ref, name), err_msg=name)
