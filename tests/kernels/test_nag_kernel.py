"""streamlearn._kernels.nag against its NumPy twin (tests/naive_nag.py) on adversarial inputs."""

import itertools
import math
import zlib
from fractions import Fraction

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels import nag as k
from streamlearn._kernels.losses import loss_dloss as kernel_dloss
from streamlearn.losses import loss_code, loss_dloss
from tests.kernel_inputs import adversarial, csr_args
from tests.naive_nag import _logistic_margin_gain, naive_invariant_step, naive_nag_epoch


def _matrix(kind, rng, n=50, d=12):
    if kind == "mixed_scales":  # columns from 1e-3 to 1e3, growing maxima (rescaling exercised)
        X = rng.normal(size=(n, d)) * np.logspace(-3, 3, d) * np.linspace(0.1, 3, n)[:, None]
        X[rng.random(X.shape) < 0.4] = 0.0
        return X
    return adversarial(kind, rng, n, d)


def _run_kernel(X, targets, sw, state, loss, eta0, schedule, adaptive, invariant, fit_intercept, dense=False):
    coef, intercept, scale, accum, accum_b, norm_state, t = (
        np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in state
    )
    out = np.empty((X.shape[0], coef.shape[0]))
    feat = np.ascontiguousarray(np.column_stack([scale, accum.T])) if adaptive else scale.reshape(-1, 1).copy()
    sched = k.SCHEDULE_INVSQRT if schedule == "invsqrt" else k.SCHEDULE_CONSTANT
    args = {
        "targets": targets,
        "sample_weight": sw,
        "coef": coef,
        "intercept": intercept,
        "fit_intercept": fit_intercept,
        "feat": feat,
        "accum_b": accum_b,
        "norm_state": norm_state,
        "loss": loss_code(loss),
        "loss_param": 0.0,
        "eta0": eta0,
        "schedule": sched,
        "adaptive": adaptive,
        "invariant": invariant,
        "t": t,
        "out_scores": out,
    }
    if dense:
        n, d = X.shape  # the dense layout: every row is all d columns, read with row_local
        t, bad = k.nag_epoch(
            indptr=np.arange(n + 1) * d,
            indices=np.arange(d),
            data=np.ascontiguousarray(X).ravel(),
            row_local=True,
            **args,
        )
    else:
        # stored zeros too (a fifth of the zeros): the kernel must skip them as the dense rows' zeros
        keep = (X != 0) | (np.random.default_rng(X.shape[0]).random(X.shape) < 0.2)
        rows, cols = np.nonzero(keep)
        Xc = sp.csr_matrix((X[rows, cols], (rows, cols)), shape=X.shape)
        assert Xc.nnz > np.count_nonzero(X) or keep.all()
        t, bad = k.nag_epoch(**csr_args(Xc), **args)
    assert bad == -1
    scale = feat[:, 0].copy()
    if adaptive:
        accum = feat[:, 1:].T.copy()
    return coef, intercept, scale, accum, accum_b, norm_state, t, out


@pytest.mark.parametrize(
    "loss, n_out",
    [
        ("logistic", 1),
        ("logistic", 3),
        ("hinge", 1),
        ("hinge", 3),
        ("squared", 1),
        ("modified_huber", 1),
        ("modified_huber", 3),
    ],
)
@pytest.mark.parametrize("kind", ["dense", "mixed_scales", "empty_rows", "single_nonzero"])
@pytest.mark.parametrize("dense", [False, True], ids=["csr", "dense"])
def test_kernel_matches_naive_twin(loss, n_out, kind, dense):
    """Both entry points (CSR rows with stored zeros, dense rows), one output and several, every mode."""
    rng = np.random.default_rng(zlib.crc32(f"{loss}-{kind}".encode()))
    X = _matrix(kind, rng)
    if loss == "squared":
        targets = (X @ rng.normal(size=X.shape[1]) / 100 + rng.normal(size=X.shape[0])).reshape(-1, 1)
    else:
        targets = np.where(rng.random((X.shape[0], n_out)) < 0.5, -1.0, 1.0)
    sw = rng.choice([0.0, 0.5, 1.0, 3.0, 50.0], size=X.shape[0])
    d = X.shape[1]
    rtol = 1e-7 if loss == "modified_huber" else 1e-9  # its twin's invariant step is an ODE solver's
    for adaptive, invariant, fit_intercept, schedule in itertools.product(
        [True, False], [True, False], [True, False], ["constant", "invsqrt"]
    ):
        # a warm state: from the first half, then the second half on top of it
        state = (
            np.zeros((n_out, d)),
            np.zeros(n_out),
            np.zeros(d),
            np.zeros((n_out, d)),
            np.zeros(n_out),
            np.zeros(2),
            0,
        )
        half = X.shape[0] // 2
        setting = dict(
            loss=loss, eta0=0.7, schedule=schedule, adaptive=adaptive, invariant=invariant, fit_intercept=fit_intercept
        )
        for lo, hi in ((0, half), (half, X.shape[0])):
            rows = (X[lo:hi], targets[lo:hi], sw[lo:hi])
            got = _run_kernel(*rows, state, dense=dense, **setting)
            coef, icpt, scale, accum, accum_b, norm_state, t = state
            want = naive_nag_epoch(
                *rows, coef, icpt, scale=scale, accum=accum, accum_b=accum_b, norm_state=norm_state, t=t, **setting
            )
            what = f"adaptive={adaptive} invariant={invariant} intercept={fit_intercept} {schedule} rows {lo}:{hi}"
            names = ["coef", "intercept", "scale", "accum", "accum_b", "norm_state", "t", "scores"]
            for name, g, w in zip(names, got, want):
                np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12, err_msg=f"{name} differs ({what})")
            state = got[:7]


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared", "modified_huber"])
def test_invariant_step_matches_twin_and_never_overshoots(loss):
    rng = np.random.default_rng(3)
    # the modified Huber twin integrates an ODE numerically: fewer cases, and its tolerance
    rtol = 1e-7 if loss == "modified_huber" else 1e-9
    for _ in range(100 if loss == "modified_huber" else 400):
        y = 1.0 if loss == "squared" else rng.choice([-1.0, 1.0])
        z = rng.normal() * 10 ** rng.uniform(-2, 2.8)
        H = 10 ** rng.uniform(-6, 4)
        P = 10 ** rng.uniform(-4, 3)
        dz = float(loss_dloss(loss, y, z))
        u = k.invariant_step(loss_code(loss), y, z, dz, H, P)
        np.testing.assert_allclose(u, naive_invariant_step(loss, y, z, H, P), rtol=rtol, atol=1e-300)
        z_after = z - u * P
        if loss == "squared":
            assert abs(z_after - y) <= abs(z - y) * (1 + 1e-12)
            assert (z_after - y) * (z - y) >= -1e-12 * (z - y) ** 2  # never past the label (up to rounding)
        elif loss in ("hinge", "modified_huber"):
            assert y * z_after <= max(1.0, y * z) + 1e-9
        assert math.isfinite(u)


def test_modified_huber_gain_per_p_is_the_flow_over_p():
    """The one-output kernel's modified Huber step (a series, no division, where ``2 P H <= 0.15``) is
    ``_modified_huber_flow(m0, P H) / P`` to rounding, on both sides of 0.15 and of the kink at -1."""
    rng = np.random.default_rng(7)
    series = 0
    for _ in range(4000):
        m0 = rng.uniform(-3.0, 0.999)
        P = 10.0 ** rng.uniform(-4, 2)
        H = 10.0 ** rng.uniform(-4, 1)
        got = k._modified_huber_gain_per_p(m0, P, H)
        want = k._modified_huber_flow(m0, P * H) / P
        series += m0 >= -1.0 and 2 * P * H <= 0.15
        np.testing.assert_allclose(got, want, rtol=4e-15, err_msg=f"m0={m0} P={P} H={H}")
    assert 500 < series < 3500  # both branches taken


def test_logistic_flow_extremes():
    """Huge importance and huge margins: finite, monotone in the time, and the first-order limit."""
    for m0 in (-800.0, -40.0, -1.0, 0.0, 2.0, 40.0, 800.0):
        prev = 0.0
        for ph in (1e-12, 1e-3, 1.0, 1e3, 1e8):
            d = k.logistic_flow(m0, ph)
            assert math.isfinite(d) and d >= prev, (m0, ph, d)
            prev = d
        if m0 <= 40:
            np.testing.assert_allclose(k.logistic_flow(m0, 1e-12), 1e-12 / (1.0 + math.exp(m0)), rtol=1e-6)
    # m0 = -800 for a time 1e8: the margin ends where m + e^m = 1e8 - 800, i.e. near log(1e8)
    np.testing.assert_allclose(k.logistic_flow(-800.0, 1e8) - 800.0, 18.42, atol=0.01)


def _inverse_series(n_terms):
    """Coefficients ``c_1 .. c_n`` (polynomials in ``w``: {power: Fraction}) of the inverse series of
    ``t = d + w (e^d - 1 - d)``, by iterated substitution ``d <- t - w (e^d - 1 - d)`` in exact rationals."""

    def mul(a, b):  # two series in t (lists of polynomials in w), truncated
        out = [{} for _ in range(n_terms + 1)]
        for i, pa in enumerate(a):
            for j in range(n_terms + 1 - i):
                for (u, x), (v, y) in itertools.product(pa.items(), b[j].items()):
                    out[i + j][u + v] = out[i + j].get(u + v, 0) + x * y
        return out

    d = [{} for _ in range(n_terms + 1)]
    d[1] = {0: Fraction(1)}
    for _ in range(n_terms):
        new = [{} for _ in range(n_terms + 1)]
        new[1] = {0: Fraction(1)}
        power = d
        for n in range(2, n_terms + 1):
            power = mul(power, d)
            for kk, poly in enumerate(power):
                for u, x in poly.items():
                    new[kk][u + 1] = new[kk].get(u + 1, 0) - x / math.factorial(n)
        d = new
    return d[1:]


def test_logistic_flow_series_coefficients_and_accuracy():
    """``_flow_series`` against the inverse series recomputed here in exact rationals; then the flow for
    first-order steps up to 1/8 (the series, then the series start with one correction) against the twin's
    root to within a few units in the last place."""
    want = _inverse_series(10)
    for w in (0.0, 0.05, 1.0 / 3.0, 0.5, 0.77, 1.0):
        got = k._flow_series(w)
        for kk, (g, poly) in enumerate(zip(got, want[1:]), start=2):
            c = float(sum(x * Fraction(w) ** u for u, x in poly.items()))
            assert abs(g - c) <= 5e-14, (w, kk, g, c)  # (Horner in w: large coefficients of both signs)
    for m0 in (-30.0, -3.0, -0.4, 0.0, 0.9, 6.0, 30.0):
        e = math.exp(-abs(m0))
        al, be = (e, 1.0) if m0 >= 0 else (1.0, e)
        for t in np.concatenate([np.geomspace(1e-9, 0.125, 40), [k.SERIES_T * (1 - 1e-12), k.SERIES_T * (1 + 1e-12)]]):
            ph = t * (al + be) / al  # the first-order step c / (al + be) is t
            np.testing.assert_allclose(k.logistic_flow(m0, ph), _logistic_margin_gain(m0, ph), rtol=3e-15)


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared", "modified_huber"])
def test_fused_derivative_is_the_loss_derivative_bit_for_bit(loss):
    """The kernel's ``_dloss`` (derivative plus the logistic exponential for the invariant step) against the
    kernels' ``loss_dloss``."""
    rng = np.random.default_rng(11)
    for z in np.concatenate([rng.normal(size=200) * 10.0 ** rng.uniform(-3, 3, 200), [0.0, -0.0, 800.0, -800.0]]):
        for y in (-1.0, 1.0):
            dz, e = k._dloss(loss_code(loss), y, z, 0.0)
            assert dz == kernel_dloss(loss_code(loss), y, z, 0.0)
            if loss == "logistic":
                assert e == exp_jit(-abs(y * z))


@numba.njit
def exp_jit(a):
    return math.exp(a)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_plain_rates_of_tiny_scales_are_finite_and_scale_invariant(n_classes):
    """Plain (non-adaptive) normalized OGD on a column of size 1e-200: its rate ``x / s^2`` was ``x / 0`` (``s * s``
    underflows), an infinite weight after the first example, silently. The model learns it as it learns the same
    column times 1e200 (the rule is scale-free), every weight finite."""
    from streamlearn.linear_model import OGDClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.argmax(X @ rng.normal(size=(3, n_classes)), axis=1)
    tiny = X * [1e-200, 1.0, 1.0]
    a = OGDClassifier(loss="squared", normalized=True, eta0=0.05).partial_fit(tiny, y, classes=np.arange(n_classes))
    b = OGDClassifier(loss="squared", normalized=True, eta0=0.05).partial_fit(X, y, classes=np.arange(n_classes))
    assert np.isfinite(a.coef_).all() and np.isfinite(a.intercept_).all()
    np.testing.assert_allclose(a.coef_ * [1e-200, 1.0, 1.0], b.coef_, rtol=1e-9)
    np.testing.assert_allclose(a.decision_function(tiny), b.decision_function(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_classes", [0, 2, 3])
@pytest.mark.parametrize("bad", [0, 5, 9])
def test_a_plain_rate_beyond_the_float_range_refuses_its_example(n_classes, bad):
    """Plain normalized OGD's weight of a feature first seen at a subnormal value (1e-310) is about ``1 / s_j``,
    beyond the float range: its rate ``x_j / s_j^2`` was infinite and so was the weight, silently on the last
    example. The example is now refused as diverging before any write, the model is the one the examples before
    it made, and a tiny value in a column of ordinary scale is learnt as usual."""
    from streamlearn.linear_model import OGDClassifier, OGDRegressor

    rng = np.random.default_rng(1)
    X = rng.normal(size=(10, 3))
    X[:, 0] = 0.0
    if n_classes:
        y = np.argmax(X @ rng.normal(size=(3, n_classes)), axis=1)
        kw = {"classes": np.arange(n_classes)}
    else:
        y, kw = X @ [1.0, 2.0, -1.0], {}

    def make():
        cls = OGDClassifier if n_classes else OGDRegressor
        return cls(loss="squared", normalized=True, eta0=0.05)

    X[bad, 0] = 1e-310
    est = make()
    with pytest.raises(FloatingPointError, match=f"diverged: the score of example {bad} of this batch, or its update"):
        est.partial_fit(X, y, **kw)
    assert np.isfinite(est.coef_).all() and np.isfinite(est._state_feat).all()
    if bad:
        ref = make().partial_fit(X[:bad], y[:bad], **kw)
        assert est.t_ == ref.t_ == bad
        np.testing.assert_array_equal(est.coef_, ref.coef_)
        np.testing.assert_array_equal(est.intercept_, ref.intercept_)
        np.testing.assert_array_equal(est._state_feat, ref._state_feat)
    X[:, 0] = 1.0  # once the column's scale is 1, 1e-310 is a value like any other, far below it
    X[max(bad, 1), 0] = 1e-310
    est = make().partial_fit(X, y, **kw)
    assert est.t_ == 10 and np.isfinite(est.coef_).all()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_tiny_first_scale_then_an_ordinary_value_is_refused_for_any_number_of_classes(n_classes):
    """Plain normalized OGD scores an example before it rescales the weights of the features that exceed their
    scale (as Vowpal Wabbit does): a column first seen at 1e-300 has a weight near 1e300, and its next ordinary
    value scores near 1e300, whose squared loss derivative is beyond the float range. With one output that example
    was refused, with several outputs it was learnt into weights near 1e294, silently. Both refuse it now, the
    model the one the examples before it made."""
    from streamlearn.linear_model import OGDClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X[0, 0] = 1e-300
    y = np.digitize(X[:, 1], [-0.5, 0.5]) % n_classes

    def make():
        return OGDClassifier(loss="squared", normalized=True)

    est = make()
    with pytest.raises(FloatingPointError, match="diverged: the score of example 1 of this batch, or its update"):
        est.partial_fit(X, y, classes=np.arange(n_classes))
    ref = make().partial_fit(X[:1], y[:1], classes=np.arange(n_classes))
    assert est.t_ == ref.t_ == 1
    for attr in ("coef_", "intercept_", "_state_feat"):
        np.testing.assert_array_equal(getattr(est, attr), getattr(ref, attr), err_msg=attr)
