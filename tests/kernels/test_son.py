"""Second-order kernels (streamlearn/_kernels/son.py) against their dense NumPy twins (tests/naive_son.py)."""

import numpy as np
import pytest

from streamlearn._kernels.son import _all_finite
from streamlearn.second_order import AdaGrad, OnlineNewtonStep, SketchedOnlineNewton
from tests.naive_son import naive_adagrad, naive_full_on, naive_son

TOL = 1e-8


def _data(n=50, d=8, scale=0.7, seed=0, rank=None):
    rng = np.random.default_rng(seed)
    if rank is None:
        X = rng.standard_normal((n, d)) * scale
        X[rng.random((n, d)) < 0.3] = 0.0
    else:  # near rank-`rank` rows: x mostly in the row space of the sketch, with a small rest
        X = scale * (
            rng.standard_normal((n, rank)) @ rng.standard_normal((rank, d)) + 0.3 * rng.standard_normal((n, d))
        )
    y = np.where(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    return X, y


def _run(sketch, ell, alpha0, loss, X, y):
    est = SketchedOnlineNewton(sketch=sketch, ell=ell, alpha0=alpha0, loss=loss, random_state=0)
    # a zero-weight first call allocates the state (Oja's initial V) without learning
    est.partial_fit(X[:1], y[:1], classes=[-1, 1], sample_weight=[0.0])
    V0 = est._state_buf[0, : est._state_n_rows[0]].copy() if sketch == "oja" else None
    est.t_ = 0
    scores = est.partial_fit_scores(X, y)
    ref = naive_son(
        X,
        y,
        sketch=sketch,
        ell=ell,
        alpha0=alpha0,
        mu=1 / 8,
        eta=1.0,
        C=1.0,
        loss=loss,
        seed=int(est._state_seed[0]),
        V0=V0,
    )
    return est, scores, ref


@pytest.mark.parametrize(
    "sketch,alpha0", [("fd", 0.5), ("pfd", 0.5), ("rfd", 1.0), ("rfd", 0.0), ("rp", 0.5), ("oja", 0.5)]
)
@pytest.mark.parametrize("loss", ["squared", "logistic", "hinge"])
def test_son_kernel_matches_dense_twin(sketch, alpha0, loss):
    X, y = _data()
    est, scores, (ns, nw, nal) = _run(sketch, 3, alpha0, loss, X, y)
    np.testing.assert_allclose(scores, ns, rtol=0, atol=TOL)
    np.testing.assert_allclose(est.coef_[0], nw, rtol=0, atol=TOL)
    assert est.alpha_[0] == pytest.approx(nal, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("d,ell", [(12, 6), (3, 5)])
def test_rfd0_pseudo_inverse_phase_matches_twin(d, ell):
    # large features: projections start at once, while alpha is still 0. (12, 6): x has a component
    # outside the row space of B (candidate w2*); (3, 5): B spans R^3 early (candidate w1).
    X, y = _data(n=40, d=d, scale=3.0, seed=1, rank=2)
    est = SketchedOnlineNewton(sketch="rfd", ell=ell, alpha0=0.0, random_state=0)
    seen_zero = []
    for i in range(X.shape[0]):
        if est._is_started() and est.alpha_[0] == 0.0:
            seen_zero.append(i)
        est.partial_fit(X[i : i + 1], y[i : i + 1], classes=[-1, 1])
    assert len(seen_zero) >= 3  # the alpha = 0 phase really ran with projections in it
    ns, nw, nal = naive_son(X, y, sketch="rfd", ell=ell, alpha0=0.0, mu=1 / 8, eta=1.0, C=1.0, loss="squared")
    est2 = SketchedOnlineNewton(sketch="rfd", ell=ell, alpha0=0.0, random_state=0)
    scores = est2.partial_fit_scores(X, y, classes=[-1, 1])
    assert np.sum(np.abs(ns[seen_zero]) == 1.0) >= 1  # a projection happened during the alpha = 0 phase
    np.testing.assert_allclose(scores, ns, rtol=0, atol=TOL)
    np.testing.assert_allclose(est2.coef_[0], nw, rtol=0, atol=TOL)
    np.testing.assert_allclose(est.coef_[0], nw, rtol=0, atol=TOL)  # chunking does not matter


@pytest.mark.parametrize("slab", ["next", "current"])
@pytest.mark.parametrize("loss", ["squared", "hinge"])
def test_adagrad_and_full_on_match_twins(loss, slab):
    X, y = _data()
    est = AdaGrad(alpha0=0.5, loss=loss, slab=slab)
    s = est.partial_fit_scores(X, y, classes=[-1, 1])
    ns, nw = naive_adagrad(X, y, alpha0=0.5, eta=1.0, C=1.0, loss=loss, slab=slab)
    np.testing.assert_allclose(s, ns, atol=TOL, rtol=0)
    np.testing.assert_allclose(est.coef_[0], nw, atol=TOL, rtol=0)
    est = OnlineNewtonStep(alpha0=0.5, loss=loss, slab=slab)
    s = est.partial_fit_scores(X, y, classes=[-1, 1])
    ns, nw = naive_full_on(X, y, alpha0=0.5, mu=1 / 8, eta=1.0, C=1.0, loss=loss, slab=slab)
    np.testing.assert_allclose(s, ns, atol=TOL, rtol=0)
    np.testing.assert_allclose(est.coef_[0], nw, atol=TOL, rtol=0)
    if slab == "current":
        assert np.any(np.abs(ns) > 1.0)  # scores are unclipped: the projection comes after the update


@pytest.mark.parametrize(
    "values, finite",
    [
        ([], True),
        ([0.0, -0.0, 1.7e308, -1.7e308, 5e-324], True),
        ([1.0] * 40 + [np.inf], False),
        ([-np.inf, 1.0], False),
        ([np.nan] * 300, False),
    ],
)
def test_all_finite(values, finite):
    assert bool(_all_finite(np.array(values, dtype=np.float64))) is finite
