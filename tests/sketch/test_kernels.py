"""Sketch kernels against their NumPy twins (tests/naive_sketch.py) on adversarial fixtures."""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels.fd import (
    fd_append_csr_row,
    fd_append_dense_row,
    fd_fit_csr,
    fd_fit_dense,
    fd_n_shrink,
    fd_shrink,
    fd_woodbury_solve,
)
from streamlearn._kernels.oja import oja_fit_csr, oja_fit_dense
from streamlearn._kernels.rfd import rfd_update_csr_row, rfd_update_dense_row
from streamlearn._kernels.rp import rp_fit_csr, rp_fit_dense
from tests.kernel_inputs import csr, csr_args
from tests.naive_sketch import (
    exact_oja_stream,
    naive_fd_n_shrink,
    naive_fd_stream,
    naive_oja_stream,
    naive_rp_stream,
    naive_woodbury_solve,
)


def _adversarial(seed=0, n=70, d=12):
    """Low-rank plus noise, with zero rows, duplicated rows, a single non-zero, huge and tiny rows."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, 3)) @ rng.standard_normal((3, d)) + 0.05 * rng.standard_normal((n, d))
    A[[3, 17, 40]] = 0.0  # all-zero rows
    A[21] = A[20]  # duplicated row
    A[33] = 0.0
    A[33, 5] = 7.0  # a single non-zero
    A[50] *= 1e6  # huge row
    A[51] *= 1e-8  # tiny row
    A[rng.random((n, d)) < 0.3] = 0.0  # some sparsity
    return A


FIXTURES = {
    "adversarial": _adversarial(),
    "all_zero": np.zeros((25, 6)),
    "rank_one": np.outer(np.arange(1, 31.0), np.linspace(-1, 1, 9)),
}


def _as_input(A, kind):
    if kind == "dense":
        return np.ascontiguousarray(A)
    return csr(A, np.int32 if kind == "csr32" else np.int64)


def _run_fd(X, d, ell, fast, beta, chunks=1):
    cap = 2 * ell if fast else ell
    buf, gram = np.zeros((cap, d)), np.zeros((cap, cap))
    keep = ell - 1
    n_shrink = fd_n_shrink(beta, keep)
    work, scratch = np.empty((ell, d)), np.zeros(d)
    n_rows, dsum = 0, 0.0
    for idx in np.array_split(np.arange(X.shape[0]), chunks):
        part = X[idx[0] : idx[-1] + 1] if len(idx) else X[:0]
        if isinstance(part, np.ndarray):
            n_rows, ds, _ = fd_fit_dense(
                X=np.ascontiguousarray(part), buf=buf, gram=gram, n_rows=n_rows, keep=keep, n_shrink=n_shrink, work=work
            )
        else:
            n_rows, ds, _ = fd_fit_csr(
                **csr_args(part),
                buf=buf,
                gram=gram,
                n_rows=n_rows,
                keep=keep,
                n_shrink=n_shrink,
                work=work,
                scratch=scratch,
            )
        dsum += ds
        assert not scratch.any()
    return buf[:n_rows], gram[:n_rows, :n_rows], dsum


def _close(X, Y, scale):
    np.testing.assert_allclose(X, Y, rtol=0, atol=1e-10 * scale)


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
@pytest.mark.parametrize("kind", ["dense", "csr32", "csr64"])
@pytest.mark.parametrize("fast,beta", [(True, 1.0), (False, 1.0), (True, 0.4)])
def test_fd_chunk_kernels_match_svd_twin(fixture, kind, fast, beta):
    A = FIXTURES[fixture]
    n, d = A.shape
    ell = 4
    B, G, dsum = _run_fd(_as_input(A, kind), d, ell, fast, beta, chunks=3)
    rows, ds_twin = naive_fd_stream(A, ell, fast=fast, beta=beta)
    scale = max(float((A * A).sum()), 1.0)
    assert B.shape == rows.shape
    _close(B.T @ B, rows.T @ rows, scale)
    _close(G, B @ B.T, scale)  # the Gram matrix is the buffer's
    assert dsum == pytest.approx(ds_twin, rel=1e-9, abs=1e-12 * scale)


def test_fd_shrink_rule_and_pfd_count():
    assert [fd_n_shrink(1.0, k) for k in (1, 4, 9)] == [1, 4, 9]
    for beta in (0.2, 0.4, 0.6, 0.8, 1.0):
        for keep in range(1, 30):
            assert fd_n_shrink(beta, keep) == naive_fd_n_shrink(beta, keep)
    assert fd_n_shrink(0.2, 4) == 0 and fd_n_shrink(0.4, 4) == 1  # m=5: floor(beta m) - 1


@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_per_row_api_matches_twin_and_returns_delta(kind):
    """The per-example steps (what the sketched Newton learner calls) equal the textbook RFD."""
    A = FIXTURES["adversarial"]
    n, d = A.shape
    ell = 3
    buf, gram, work = np.zeros((2 * ell, d)), np.zeros((2 * ell, 2 * ell)), np.empty((ell, d))
    n_rows, alpha, deltas = 0, 0.5, []
    X = sp.csr_matrix(A)
    for i in range(n):
        if kind == "dense":
            n_rows, alpha, delta = rfd_update_dense_row(
                buf=buf, gram=gram, n_rows=n_rows, alpha=alpha, x=A[i], keep=ell - 1, n_shrink=ell - 1, work=work
            )
        else:
            s, e = X.indptr[i], X.indptr[i + 1]
            n_rows, alpha, delta = rfd_update_csr_row(
                buf=buf,
                gram=gram,
                n_rows=n_rows,
                alpha=alpha,
                indices=X.indices[s:e],
                data=X.data[s:e],
                keep=ell - 1,
                n_shrink=ell - 1,
                work=work,
            )
        deltas.append(delta)
    rows, ds = naive_fd_stream(A, ell, fast=True)
    scale = float((A * A).sum())
    _close(buf[:n_rows].T @ buf[:n_rows], rows.T @ rows, scale)
    assert alpha == pytest.approx(0.5 + ds / 2, rel=1e-9, abs=1e-12 * scale)  # eigenvalues: abs. error ~ eps |A|^2
    assert sum(deltas) == pytest.approx(ds, rel=1e-9, abs=1e-12 * scale)
    assert sum(1 for x in deltas if x > 0) >= 1


def test_append_rows_border_the_gram_matrix():
    rng = np.random.default_rng(1)
    d = 9
    buf, gram = np.zeros((5, d)), np.zeros((5, 5))
    n = fd_append_dense_row(buf, gram, 0, rng.standard_normal(d))
    x = sp.random(1, d, density=0.4, random_state=2, format="csr")
    n = fd_append_csr_row(buf, gram, n, x.indices, x.data)
    n = fd_append_dense_row(buf, gram, n, rng.standard_normal(d))
    assert n == 3
    np.testing.assert_allclose(gram[:3, :3], buf[:3] @ buf[:3].T, atol=1e-12)
    np.testing.assert_array_equal(buf[1], x.toarray().ravel())
    k, delta = fd_shrink(buf, gram, 3, 2, 2, np.empty((2, d)))
    assert k == 2 and delta > 0


def test_woodbury_kernel_matches_dense_solve():
    rng = np.random.default_rng(3)
    B = rng.standard_normal((4, 15))
    v = rng.standard_normal(15)
    out = np.empty(15)
    fd_woodbury_solve(B, B @ B.T, 4, 0.3, v, out)
    np.testing.assert_allclose(out, naive_woodbury_solve(B, 0.3, v), rtol=1e-9)


@pytest.mark.parametrize("dist", [0, 1])
def test_rp_kernels_match_twin_and_ignore_chunking(dist):
    A = FIXTURES["adversarial"][:30]
    n, d = A.shape
    seed = 123456789012345
    twin = naive_rp_stream(A, 5, seed, dist)
    S = np.zeros((5, d))
    X = sp.csr_matrix(A)
    rp_fit_csr(**csr_args(X[:11]), sketch=S, seed=np.uint64(seed), t0=0, dist=dist)
    rp_fit_dense(np.ascontiguousarray(A[11:]), S, np.uint64(seed), 11, dist)
    scale = np.abs(A).max()
    np.testing.assert_allclose(S, twin, rtol=0, atol=1e-12 * scale)


def test_oja_kernels_match_twin():
    A = FIXTURES["adversarial"][:40] / 1e3
    d = A.shape[1]
    rng = np.random.default_rng(0)
    V0 = np.ascontiguousarray(np.linalg.qr(rng.standard_normal((d, 3)))[0].T)
    lam0 = np.zeros(3)
    V, lam = V0.copy(), lam0.copy()
    X = sp.csr_matrix(A)
    t = oja_fit_csr(**csr_args(X[:15]), v=V, lam=lam, t=0, c=2.0)
    t = oja_fit_dense(np.ascontiguousarray(A[15:]), V, lam, t, 2.0)
    Vt, lamt, tt = naive_oja_stream(A, V0, lam0, 0, 2.0)
    assert t == tt == 40
    np.testing.assert_allclose(V, Vt, atol=1e-9)
    np.testing.assert_allclose(lam, lamt, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(V @ V.T, np.eye(3), atol=1e-12)


@pytest.mark.parametrize("scale", [1e4, 1e8, 1e30])
def test_oja_kernels_stay_accurate_on_long_rows(scale):
    """Rows of norm >> 1 (raw features): V stays orthonormal and matches a 100-digit twin (the float64
    twin forms V + gamma p a^T, which loses V in the rounding, so it cannot be the reference here)."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((30, 6)) * scale
    A[rng.random(A.shape) < 0.3] = 0.0
    V0 = np.ascontiguousarray(np.linalg.qr(rng.standard_normal((6, 3)))[0].T)
    Vt, tt = exact_oja_stream(A, V0, np.zeros(3), 0, 2.0)
    for kind in ("dense", "csr"):
        V, lam = V0.copy(), np.zeros(3)
        if kind == "dense":
            t = oja_fit_dense(A, V, lam, 0, 2.0)
        else:
            t = oja_fit_csr(**csr_args(sp.csr_matrix(A)), v=V, lam=lam, t=0, c=2.0)
        assert t == tt == 30
        np.testing.assert_allclose(V @ V.T, np.eye(3), atol=1e-12)
        np.testing.assert_allclose(V, Vt, atol=1e-12)
