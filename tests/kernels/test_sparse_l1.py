"""streamlearn._kernels.sparse_l1 (lazy, O(nnz)) against the eager dense twins of tests/naive_sparse.py."""

import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels import sparse_l1 as k
from streamlearn.losses import loss_code
from tests.kernels.inputs import csr, csr_arrays, matrix, stream
from tests.naive import naive_fobos, naive_ftrl, naive_rda, naive_simple_truncation, naive_truncated_gradient

N, D = 72, 25


# name -> (twin keyword arguments, estimator of the kernel run)
CASES = {
    "truncation": dict(theta=0.05, k=3, eta0=0.3, schedule="invsqrt"),
    "truncation_const": dict(theta=0.02, k=2, eta0=0.05, schedule="constant"),
    "tg": dict(gravity=0.05, theta=0.3, k=2, eta0=0.3, schedule="invsqrt"),
    "tg_const": dict(gravity=0.1, theta=0.1, k=4, eta0=0.05, schedule="constant"),
    "fobos": dict(l1=0.03, eta0=0.3, schedule="invsqrt"),
    "rda": dict(l1=0.05, gamma=3.0),
    "ftrl": dict(alpha=0.3, beta=1.0, l1=0.5, l2=0.2),
}


def _run_kernel(name, X, targets, sw, loss, fit_intercept, chunks=(slice(None),)):
    """The kernel from zero state over ``chunks`` of rows; returns (W, b, scores, lazy scores, state)."""
    p = CASES[name]
    K = targets.shape[1]
    scores = np.empty((X.shape[0], K))
    lazy = np.empty((X.shape[0], K))
    out = np.empty((K, D + 1))
    code = loss_code(loss)

    def chunk(rows):  # the arguments every epoch kernel takes for a chunk of rows
        Xc = X[rows]
        return dict(
            **stream(Xc, targets[rows], sw[rows]),
            fit_intercept=fit_intercept,
            loss=code,
            out_scores=scores[rows],
        )

    every_row = dict(**csr_arrays(X), fit_intercept=fit_intercept, out=lazy)
    if name.startswith(("truncation", "tg", "fobos")):
        wm = np.zeros((D + 1, K + 1))
        t, pen = 0, 0.0
        if name.startswith("truncation"):
            rule, theta, kk, lam = k.RULE_HARD, p["theta"], p["k"], 0.0
        elif name.startswith("tg"):
            rule, theta, kk, lam = k.RULE_SOFT, p["theta"], p["k"], p["gravity"]
        else:
            rule, theta, kk, lam = k.RULE_SOFT, np.inf, 1, p["l1"]
        sched = k.SCHEDULE_INVSQRT if p["schedule"] == "invsqrt" else k.SCHEDULE_CONSTANT
        for rows in chunks:
            t, pen, bad = k.truncated_epoch(
                **chunk(rows),
                wm=wm,
                rule=rule,
                theta=theta,
                k=kk,
                lam=lam,
                eta0=p["eta0"],
                schedule=sched,
                t=t,
                penalty=pen,
            )
            assert bad == -1
        k.truncated_materialize(wm, pen, theta, rule, out)
        k.truncated_scores(
            **every_row,
            wm=wm,
            penalty=pen,
            theta=theta,
            rule=rule,
        )
        state = wm
    elif name == "rda":
        G = np.zeros((D + 1, K))
        t = 0
        for rows in chunks:
            t, bad = k.rda_epoch(
                **chunk(rows),
                G=G,
                lam=p["l1"],
                gamma=p["gamma"],
                t=t,
            )
            assert bad == -1
        k.rda_materialize(G, t, p["l1"], p["gamma"], out)
        k.rda_scores(
            **every_row,
            G=G,
            t=t,
            lam=p["l1"],
            gamma=p["gamma"],
        )
        state = G
    else:
        zn = np.zeros((D + 1, K, 2))
        t = 0
        hyper = dict(alpha=p["alpha"], beta=p["beta"], l1=p["l1"], l2=p["l2"])
        for rows in chunks:
            t, bad = k.ftrl_epoch(
                **chunk(rows),
                zn=zn,
                t=t,
                **hyper,
            )
            assert bad == -1
        k.ftrl_materialize(zn=zn, out=out, **hyper)
        k.ftrl_scores(zn=zn, **every_row, **hyper)
        state = zn
    return out[:, :-1], out[:, -1], scores, lazy, state


def _run_twin(name, X, targets, sw, loss, fit_intercept):
    p = dict(CASES[name])
    twin = {
        "truncation": naive_simple_truncation,
        "tg": naive_truncated_gradient,
        "fobos": naive_fobos,
        "rda": naive_rda,
        "ftrl": naive_ftrl,
    }[name.split("_")[0]]
    return twin(X, targets, sw, loss=loss, fit_intercept=fit_intercept, **p)


def _problem(name, kind, loss, index_dtype, n_out):
    rng = np.random.default_rng(zlib.crc32(f"{name}-{kind}-{loss}-{n_out}".encode()))
    X = matrix(kind, rng, N, D)
    wstar = rng.normal(size=(D, n_out)) * (rng.random((D, n_out)) < 0.4)
    if loss == "squared" and n_out == 1:
        targets = X @ wstar + 0.1 * rng.normal(size=(N, 1))
    else:
        targets = np.where(X @ wstar + 0.3 * rng.normal(size=(N, n_out)) > 0, 1.0, -1.0)
    sw = rng.choice([0.0, 0.5, 1.0, 2.0], size=N, p=[0.1, 0.2, 0.5, 0.2])
    return csr(X, index_dtype), targets, sw


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("loss,n_out", [("logistic", 3), ("hinge", 1), ("squared", 1)])
@pytest.mark.parametrize("kind", ["dense", "sparse", "empty_rows", "single_nonzero", "duplicated_rows"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_lazy_kernel_equals_eager_twin(name, loss, n_out, kind, index_dtype):
    X, targets, sw = _problem(name, kind, loss, index_dtype, n_out)
    fit_intercept = kind != "single_nonzero"
    W, b, scores, lazy, _ = _run_kernel(name, X, targets, sw, loss, fit_intercept)
    W2, b2, scores2 = _run_twin(name, X, targets, sw, loss, fit_intercept)
    np.testing.assert_allclose(scores, scores2, rtol=1e-10, atol=1e-10, err_msg="pre-update scores")
    np.testing.assert_allclose(W, W2, rtol=1e-10, atol=1e-10, err_msg="materialised weights")
    np.testing.assert_allclose(b, b2, rtol=1e-10, atol=1e-10, err_msg="intercepts")
    np.testing.assert_allclose(lazy, X.toarray() @ W2.T + b2, rtol=1e-10, atol=1e-10, err_msg="lazy scores")
    np.testing.assert_array_equal(W == 0, W2 == 0, err_msg="exact zeros differ")


@pytest.mark.parametrize("name", list(CASES))
def test_cases_are_not_degenerate(name):
    """The parameters of CASES truncate some weights to exactly 0 and leave others: the comparisons above
    exercise the sparse part of every rule."""
    X, targets, _ = _problem(name, "sparse", "logistic", np.int32, 3)
    W, _, _, _, _ = _run_kernel(name, X[: N - N % 12], targets, np.ones(N), "logistic", True)  # ends on a truncation
    assert 0 < np.count_nonzero(W) < W.size, f"{name}: degenerate case, nnz={np.count_nonzero(W)} of {W.size}"


@pytest.mark.parametrize("name", list(CASES))
def test_chunked_calls_continue_the_state(name):
    X, targets, sw = _problem(name, "sparse", "logistic", np.int32, 2)
    W, b, scores, _, _ = _run_kernel(name, X, targets, sw, "logistic", True)
    cuts = (slice(0, 1), slice(1, 23), slice(23, 24), slice(24, N))
    W2, b2, scores2, _, _ = _run_kernel(name, X, targets, sw, "logistic", True, chunks=cuts)
    np.testing.assert_array_equal(scores, scores2)
    np.testing.assert_array_equal(W, W2)
    np.testing.assert_array_equal(b, b2)


@pytest.mark.parametrize("name", list(CASES))
def test_no_sweep_over_absent_features(name):
    """Laziness: an example's update writes to the state of its own features only (O(nnz), no O(d) pass);
    features never seen keep their initial state (the truncation marks included)."""
    rng = np.random.default_rng(5)
    X = np.zeros((N, D))
    X[:, :6] = rng.normal(size=(N, 6))
    targets = np.where(rng.normal(size=(N, 1)) > 0, 1.0, -1.0)
    _, _, _, _, state = _run_kernel(name, sp.csr_matrix(X), targets, np.ones(N), "logistic", True)
    assert not np.any(state[6:D]), f"{name}: state of absent features was written"
    assert np.any(state[:6]), f"{name}: state of present features was not written"


@pytest.mark.parametrize("name", ["truncation", "tg", "fobos"])
def test_flush_applies_pending_truncations_without_changing_the_model(name):
    X, targets, sw = _problem(name, "sparse", "logistic", np.int32, 2)
    W, b, _, _, wm = _run_kernel(name, X[:40], targets[:40], sw[:40], "logistic", True)
    p = CASES[name]
    rule, theta = (k.RULE_HARD, p["theta"]) if name == "truncation" else (k.RULE_SOFT, p.get("theta", np.inf))
    pen = wm[:-1, -1].max() + (1.0 if name == "truncation" else 0.01)  # with truncations pending for every feature
    flushed = k.truncated_flush(wm.copy(), pen, theta, rule)
    assert np.all(flushed[:-1, -1] == pen), "every mark is the current penalty after a flush"
    np.testing.assert_allclose(
        k.truncated_materialize(flushed, pen, theta, rule, np.empty((2, D + 1))),
        k.truncated_materialize(wm, pen, theta, rule, np.empty((2, D + 1))),
        rtol=1e-13,
        atol=1e-15,
    )
