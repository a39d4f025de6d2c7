"""CCFM by projected OGD and OCCFM (exact and scalable): the paper's invariants, kernels == NumPy twins.

Invariants (Lin et al., WWW 2018): every iterate lies in the trace-norm ball and is symmetric; the linear step equals
the one from a dense eigendecomposition; the newest gradient enters only the next round's objective;
scalable mode equals exact mode while the rank budgets are not exceeded.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels import ccfm as k
from streamlearn.facto import CCFMOnlineGradientClassifier, CCFMOnlineGradientRegressor, OCCFMClassifier, OCCFMRegressor
from streamlearn.losses import loss_code
from tests.kernel_inputs import chunk_args
from tests.naive import naive_ccfm_ogd_epoch, naive_lmo, naive_occfm_epoch, naive_occfm_lowrank_epoch, xhat


def _stream(seed, n=60, d=7, regression=True, n_out=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    X[3] = 0.0
    if regression:
        y = 2.0 + X[:, 0] * X[:, 1] + X[:, 2] + 0.1 * rng.normal(size=n)
        targets = y.reshape(-1, 1)
    else:
        targets = np.where(rng.random((n, n_out)) < 0.5, -1.0, 1.0)
    sw = np.ones(n)
    sw[[5, 11]] = 0.0
    sw[7] = 2.0
    return X, targets, sw


#: the eigen-solver of the kernel tests: Lanczos to near machine precision
_LMO = {"lmo": k.LMO_LANCZOS, "lmo_tol": 1e-12, "lmo_max_iter": 500}


def _labels(est, targets):
    """``(y, partial_fit keywords)`` for ``est``: the targets of a regressor, their sign around 2 for a classifier."""
    if "Regressor" in type(est).__name__:
        return targets[:, 0], {}
    return np.where(targets[:, 0] > 2.0, 1, -1), {"classes": [-1, 1]}


def _trace_norm(C):
    return np.abs(np.linalg.eigvalsh(C)).sum()


# ------------------------------------------------------------------------------------------------------------
# the linear step
def _lmo_kernel(H, method=k.LMO_LANCZOS, v0=None, tol=1e-10):
    n = H.shape[0]
    Vw, w, q, _ = k._lmo_solver(n, method, tol, 2000)[4]
    v0 = np.zeros(n) if v0 is None else v0
    lam, nmv, ok = k.top_abs_eigenpair(
        P1=H,
        a1=1.0,
        P2=np.zeros_like(H),
        a2=0.0,
        n=n,
        v0=v0,
        method=method,
        tol=tol,
        max_iter=2000,
        Vw=Vw,
        w=w,
        out_q=q,
    )
    return lam, q[:n].copy(), ok


@pytest.mark.parametrize("n", [1, 2, 5, 40, 90])
def test_linear_step_equals_dense_eigh(n):
    rng = np.random.default_rng(n)
    delta = 3.0
    for trial in range(6):
        A = rng.normal(size=(n, n))
        H = A + A.T
        if trial % 2:  # make the largest |eigenvalue| negative: which='LA' would pick the wrong one
            lam, Q = np.linalg.eigh(H)
            lam[0] = -2.0 * np.abs(lam).max()
            H = (Q * lam) @ Q.T
        if trial == 4:  # a low-rank H (most eigenvalues 0), as OCCFM meets at the start
            u = rng.normal(size=(n, 2))
            H = u @ np.diag([1.0, -3.0]) @ u.T
        v0 = rng.normal(size=n) if trial >= 3 else None  # warm and cold starts
        lam, q, ok = _lmo_kernel(H, v0=v0)
        lam_ref, q_ref = naive_lmo(H)
        assert ok
        assert abs(lam - lam_ref) <= 1e-8 * abs(lam_ref)
        step = delta * np.sign(lam) * np.outer(q, q)
        ref = delta * np.sign(lam_ref) * np.outer(q_ref, q_ref)
        np.testing.assert_allclose(step, ref, atol=1e-6)


def test_power_iteration_linear_step_on_a_gapped_matrix():
    rng = np.random.default_rng(1)
    Q = np.linalg.qr(rng.normal(size=(30, 30)))[0]
    lam = np.linspace(-1.0, 1.0, 30)
    lam[7] = -4.0  # largest magnitude, negative, well separated
    H = (Q * lam) @ Q.T
    got, q, ok = _lmo_kernel(H, method=k.LMO_POWER, v0=rng.normal(size=30))
    assert ok and abs(got + 4.0) < 1e-8
    np.testing.assert_allclose(np.outer(q, q), np.outer(Q[:, 7], Q[:, 7]), atol=1e-6)


def test_tridiagonal_extreme_eigenpair_matches_eigh():
    rng = np.random.default_rng(2)
    for trial in range(300):
        m = int(rng.integers(1, 33))
        a = rng.normal(size=m) * 10 ** rng.uniform(-3, 3)
        b = rng.normal(size=m) * 10 ** rng.uniform(-3, 3)
        if trial % 3 == 0:
            b[rng.random(m) < 0.3] *= 1e-13  # nearly split
        if trial % 5 == 0:
            a[:] = a[0]  # repeated diagonal
        T = np.diag(a) + np.diag(b[: m - 1], 1) + np.diag(b[: m - 1], -1)
        lam = np.linalg.eigvalsh(T)
        s = np.zeros(m)
        theta = k.tridiag_top_abs(a, b, m, s, np.zeros((5, m)))
        scale = np.abs(lam).max()
        assert abs(abs(theta) - scale) <= 1e-12 * scale
        assert np.linalg.norm(T @ s - theta * s) <= 1e-9 * scale


# ------------------------------------------------------------------------------------------------------------
# projected OGD
def test_ogd_kernel_matches_twin_that_projects_every_step():
    X, targets, sw = _stream(0)
    n = X.shape[1] + 1
    C = np.zeros((1, n, n))
    tn, stats, out = np.zeros(1), np.zeros((1, k.N_STATS)), np.empty((X.shape[0], 1))
    t, bad = k.ccfm_ogd_epoch(
        **chunk_args(sp.csr_matrix(X), targets, sw),
        C=C,
        tn_bound=tn,
        loss=loss_code("squared"),
        delta=3.0,
        eta0=0.5,
        t=0,
        stats=stats,
        out_scores=out,
    )
    C_ref, t_ref, scores = naive_ccfm_ogd_epoch(X, targets, sw, np.zeros((1, n, n)), "squared", 3.0, 0.5, 0)
    assert bad == -1 and t == t_ref
    assert stats[0, k.STAT_PROJECTIONS] > 10  # the ball constraint was active
    assert stats[0, k.STAT_EIGH] < np.count_nonzero(sw)  # and some eigendecompositions were provably skipped
    np.testing.assert_allclose(out, scores, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(C, C_ref, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize(
    "make",
    [
        lambda: CCFMOnlineGradientRegressor(delta=2.0, eta0=0.5),
        lambda: OCCFMRegressor(delta=2.0, eta=0.5, mode="exact"),
        lambda: OCCFMRegressor(delta=2.0, eta=0.5, mode="scalable", rank=2, ell=2),
        lambda: OCCFMClassifier(delta=2.0, eta=0.5, mode="scalable", rank=2, ell=1),
    ],
)
def test_every_iterate_is_symmetric_and_in_the_trace_norm_ball(make):
    X, targets, _ = _stream(1, n=50, d=12, regression=True)
    est = make()
    y, kw = _labels(est, targets)
    norms = []
    for i in range(X.shape[0]):
        est.partial_fit(X[i : i + 1], y[i : i + 1], **kw)
        C = est.augmented_matrix()
        assert np.array_equal(C, C.T), f"C_{i + 2} is not symmetric"
        norms.append(_trace_norm(C))
        assert est.diagnostics()["trace_norm"] == pytest.approx(norms[-1], rel=1e-9, abs=1e-12)
    assert max(norms) <= 2.0 * (1 + 1e-9), max(norms)
    assert max(norms) > 1.0  # the constraint matters in this stream
    if est.__class__.__name__.startswith("OCCFM") and est.mode_ == "scalable":
        A = est._state_A[0]
        assert np.array_equal(A, A.T)
        assert est.diagnostics()["compressions"] > 0


# ------------------------------------------------------------------------------------------------------------
# OCCFM, exact state
def _run_occfm(epoch, X, targets, sw, loss, state, steps=(1.0, 0.5)):
    """One pass of the OCCFM ``epoch`` kernel from t = 0 with ``state`` (its arrays, updated in place), delta = 4
    and eta = 0.3; returns ``(t, bad, stats, scores)``."""
    n_out = targets.shape[1]
    stats, out = np.zeros((n_out, k.N_STATS)), np.empty((X.shape[0], n_out))
    t, bad = epoch(
        **chunk_args(sp.csr_matrix(X), targets, sw),
        **state,
        loss=loss,
        delta=4.0,
        eta=0.3,
        gamma_c=steps[0],
        gamma_p=steps[1],
        **_LMO,
        t=0,
        stats=stats,
        out_scores=out,
    )
    return t, bad, stats, out


@pytest.mark.parametrize(
    "regression,n_out,steps", [(True, 1, (1.0, 0.5)), (False, 3, (1.0, 0.5)), (True, 1, (2.0, 1.0))]
)
def test_occfm_dense_kernel_matches_eigh_twin(regression, n_out, steps):
    X, targets, sw = _stream(2, regression=regression, n_out=n_out)
    n = X.shape[1] + 1
    loss = loss_code("squared" if regression else "logistic")
    M, scale, S = np.zeros((n_out, n, n)), np.ones(n_out), np.zeros((n_out, n, n))
    t, bad, stats, out = _run_occfm(
        k.occfm_dense_epoch, X, targets, sw, loss, dict(M=M, scale=scale, S=S, q_prev=np.zeros((n_out, n))), steps
    )
    C_ref, S_ref, t_ref, scores, lams = naive_occfm_epoch(
        X,
        targets,
        sw,
        np.zeros((n_out, n, n)),
        np.zeros((n_out, n, n)),
        "squared" if regression else "logistic",
        4.0,
        0.3,
        0,
        *steps,
    )
    assert bad == -1 and t == t_ref and stats[:, k.STAT_UNCONVERGED].sum() == 0
    np.testing.assert_allclose(out, scores, atol=1e-7)
    np.testing.assert_allclose(M * scale[:, None, None], C_ref, atol=1e-7)
    np.testing.assert_allclose(S, S_ref, atol=1e-10)


def test_newest_gradient_enters_only_the_next_round():
    # C_{t+1} depends on S_{t-1}, not on (x_t, y_t): two streams differing only in the last label give the
    # same model after that example; the gradient sums differ.
    X, targets, _ = _stream(3, n=20)
    y1 = targets[:, 0].copy()
    y2 = y1.copy()
    y2[-1] += 10.0
    a = OCCFMRegressor(delta=3.0, eta=0.5, mode="exact").partial_fit(X, y1)
    b = OCCFMRegressor(delta=3.0, eta=0.5, mode="exact").partial_fit(X, y2)
    np.testing.assert_array_equal(a.augmented_matrix(), b.augmented_matrix())
    assert not np.allclose(a.dense_gradient_sum(), b.dense_gradient_sum())


def test_bias_sits_as_twice_w0_in_the_corner():
    # yhat = 1/2 xhat^T C xhat: for x = 0 the score is C[d, d] / 2
    X, targets, _ = _stream(4, n=30)
    est = OCCFMRegressor(delta=5.0, eta=0.5, mode="exact").partial_fit(X, targets[:, 0])
    C = est.augmented_matrix()
    assert est.predict(np.zeros((1, X.shape[1])))[0] == pytest.approx(0.5 * C[-1, -1], rel=1e-12)
    x = X[0]
    assert est.predict(x.reshape(1, -1))[0] == pytest.approx(0.5 * xhat(x) @ C @ xhat(x), rel=1e-10)


# ------------------------------------------------------------------------------------------------------------
# OCCFM, scalable state
def test_occfm_lowrank_kernel_matches_twin_with_compressions():
    X, targets, sw = _stream(5, n=50, d=9)
    n, kmax = X.shape[1] + 1, 6
    W, A, B = np.zeros((1, n, kmax)), np.zeros((1, kmax, kmax)), np.zeros((1, kmax, kmax))
    kd = np.zeros(1, np.int64)
    state = dict(W=W, A=A, B=B, kdim=kd, u_prev=np.zeros((1, kmax)), rank=2, ell=1)
    t, bad, stats, out = _run_occfm(k.occfm_lowrank_epoch, X, targets, sw, loss_code("squared"), state)
    Wr, Ar, Br, kdr, tr, scores, shrink = naive_occfm_lowrank_epoch(
        X,
        targets,
        sw,
        np.zeros((1, n, kmax)),
        np.zeros((1, kmax, kmax)),
        np.zeros((1, kmax, kmax)),
        np.zeros(1, int),
        "squared",
        4.0,
        0.3,
        2,
        1,
        0,
    )
    assert bad == -1 and t == tr and kd[0] == kdr[0]
    assert stats[0, k.STAT_EIGH] > 5 and stats[0, k.STAT_SKETCH_SHRINK] > 0  # budgets exceeded, compressed
    np.testing.assert_allclose(stats[0, k.STAT_SKETCH_SHRINK], shrink[0], rtol=1e-6)
    np.testing.assert_allclose(out, scores, atol=1e-7)
    np.testing.assert_allclose(W[0] @ A[0] @ W[0].T, Wr[0] @ Ar[0] @ Wr[0].T, atol=1e-7)
    np.testing.assert_allclose(W[0] @ B[0] @ W[0].T, Wr[0] @ Br[0] @ Wr[0].T, atol=1e-6)
    np.testing.assert_allclose(W[0, :, : kd[0]].T @ W[0, :, : kd[0]], np.eye(kd[0]), atol=1e-12)


@pytest.mark.parametrize("active", [None, 5])
def test_scalable_equals_exact_when_the_budget_is_not_exceeded(active):
    # active=None: d + 1 = 8 <= kmax, the basis never fills; active=5: d = 30 > kmax = 12 but the examples
    # span only 6 directions (5 features + the bias)
    d = 7 if active is None else 30
    X, targets, _ = _stream(6, n=60, d=d)
    if active is not None:
        X[:, active:] = 0.0
    rank = 4 if active is None else 3
    exact = OCCFMRegressor(delta=3.0, eta=0.3, mode="exact", lmo_tol=1e-12)
    scal = OCCFMRegressor(delta=3.0, eta=0.3, mode="scalable", rank=rank, ell=rank, lmo_tol=1e-12)
    s1 = exact.partial_fit_scores(X, targets[:, 0])
    s2 = scal.partial_fit_scores(X, targets[:, 0])
    assert scal.diagnostics()["compressions"] == 0
    np.testing.assert_allclose(s2, s1, atol=1e-7)
    np.testing.assert_allclose(scal.augmented_matrix(), exact.augmented_matrix(), atol=1e-7)
    np.testing.assert_allclose(scal.dense_gradient_sum(), exact.dense_gradient_sum(), atol=1e-9)
    np.testing.assert_allclose(scal.predict(X), exact.predict(X), atol=1e-7)


def test_sketch_error_bound_holds():
    # ||S - W B W^T||_2 <= sum of the FD shrinks (reported as sketch_error_bound)
    X, targets, _ = _stream(7, n=80, d=12)
    exact = OCCFMRegressor(delta=3.0, eta=0.3, mode="exact").partial_fit(X, targets[:, 0])
    scal = OCCFMRegressor(delta=3.0, eta=0.3, mode="scalable", rank=2, ell=2).partial_fit(X, targets[:, 0])
    err = np.linalg.norm(exact.dense_gradient_sum() - scal.dense_gradient_sum(), 2)
    bound = scal.diagnostics()["sketch_error_bound"]
    assert 0 < err <= bound * (1 + 1e-9), (err, bound)


# ------------------------------------------------------------------------------------------------------------
# errors
def test_errors_name_the_problem():
    X, targets, _ = _stream(8, n=20)
    est = OCCFMRegressor(mode="exact").partial_fit(X, targets[:, 0])
    est.set_params(mode="scalable")
    with pytest.raises(ValueError, match="mode='scalable' but OCCFMRegressor was started in mode 'exact'"):
        est.partial_fit(X, targets[:, 0])
    with pytest.raises(ValueError, match="The 'delta' parameter of OCCFMClassifier must be a float in the range"):
        OCCFMClassifier(delta=0.0).fit(X, targets[:, 0] > 2)
    big = sp.csr_matrix((2, 60_000))
    with pytest.raises(ValueError, match=r"CCFMOnlineGradientClassifier keeps 1 dense .* GiB .* mode='scalable'"):
        CCFMOnlineGradientClassifier().partial_fit(big, [0, 1], classes=[0, 1])
    with pytest.raises(ValueError, match=r"OCCFMRegressor keeps 2 dense .* Use mode='scalable'"):
        OCCFMRegressor(mode="exact").partial_fit(big, [0.0, 1.0])
    scal = OCCFMRegressor(mode="scalable", rank=2, ell=2).partial_fit(sp.csr_matrix((2, 100)), [0.0, 1.0])
    scal.set_params(rank=10)
    with pytest.raises(ValueError, match="rank \\+ ell = 12 but the basis of OCCFMRegressor holds 8 vectors"):
        scal.partial_fit(sp.csr_matrix((2, 100)), [0.0, 1.0])


# ------------------------------------------------------------------------------------------------------------
# the online contract (streamlearn.checks) for the scalable state too (the registry's occfm entries run in exact
# mode on the checks' small data, through tests/test_common.py)
@pytest.mark.parametrize(
    "est",
    [
        OCCFMRegressor(mode="scalable", rank=2, ell=2, delta=3.0, eta=0.3),
        OCCFMClassifier(mode="scalable", rank=2, ell=1, delta=3.0, eta=0.3),
    ],
    ids=["regressor", "classifier"],
)
def test_scalable_mode_meets_the_online_contract(est):
    from streamlearn.checks import yield_checks

    for check in yield_checks(est):
        check(est)
    X, targets, _ = _stream(9, n=60, d=12)
    y, kw = _labels(est, targets)
    assert type(est)(**est.get_params()).partial_fit(X, y, **kw).diagnostics()["compressions"] > 0


def test_ogd_step_that_would_overflow_stops_the_pass_before_its_example():
    """A rank-one step beyond the largest float (a weight of 1e150 on values of 1e150) made C infinite, and the
    next eigendecomposition failed with LAPACK's 'Array must not contain infs or NaNs': the pass stops before that
    example with the divergence error, the model as it was after the examples before it, bit for bit."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    y = np.where(X[:, 0] > 0, 1, -1)
    Xb, sw = X[:10].copy(), np.ones(10)
    Xb[3] *= 1e150
    sw[3] = 1e150
    model = CCFMOnlineGradientClassifier().partial_fit(X, y, classes=[-1, 1])
    with pytest.raises(FloatingPointError, match="diverged: the score of example 3 of this batch, or its update"):
        model.partial_fit(Xb, y[:10], sample_weight=sw)
    expected = CCFMOnlineGradientClassifier().partial_fit(X, y, classes=[-1, 1]).partial_fit(Xb[:3], y[:3])
    assert model.t_ == expected.t_
    for name, value in vars(expected).items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(getattr(model, name), value, err_msg=name)


@pytest.mark.parametrize("mode", ["exact", "scalable"])
@pytest.mark.parametrize("cls", [OCCFMClassifier, OCCFMRegressor])
def test_occfm_overflowing_step_is_a_divergence_error(cls, mode):
    """Values just under the learners' bound (2**500) overflow OCCFM's matrices to infinity; the next
    eigendecomposition then fails inside numba. That is the divergence error naming the hyperparameter to
    lower, not LAPACK's 'Array must not contain infs or NaNs'."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    X[10, 2], X[11, 1] = 3e149, -2e149
    y = np.where(rng.random(50) > 0.5, 1, -1)
    est = cls(mode=mode)
    kw = {"classes": [-1, 1]} if cls is OCCFMClassifier else {}
    with pytest.raises(FloatingPointError, match=r"^OCCFM\w+ diverged: .* Lower delta or scale the features\.$"):
        est.partial_fit(X, y.astype(float) if cls is OCCFMRegressor else y, **kw)
