"""streamlearn._kernels.dcd (dual CD, LIBLINEAR shrinking, in-kernel splitmix64 permutations) against its twin."""

import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels import dcd as k
from tests.kernels.inputs import csr, signs_and_weights, stream
from tests.naive import naive_dcd_solve, naive_splitmix64


def _problem(kind, rng, n=50, d=8, K=2):
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    if kind == "empty_rows":
        X[::5] = 0.0
    elif kind == "duplicates":
        X[1::2] = X[::2]
    elif kind == "huge":
        X *= 1e3
    return (X, *signs_and_weights(rng, n, K))


def test_splitmix64_matches_twin():
    state = 12345
    for _ in range(5):
        s_py, r_py = naive_splitmix64(state)
        s_nb, r_nb = k._splitmix64(np.uint64(state))
        assert (int(s_nb), int(r_nb)) == (s_py, r_py)
        state = s_py


@pytest.mark.parametrize("kind", ["plain", "empty_rows", "duplicates", "huge"])
@pytest.mark.parametrize("l2", [False, True], ids=["l1", "l2"])
@pytest.mark.parametrize("shrinking", [False, True])
def test_kernel_matches_naive_twin(kind, l2, shrinking):
    rng = np.random.default_rng(zlib.crc32(f"{kind}-{l2}-{shrinking}".encode()))
    X, targets, sw = _problem(kind, rng)
    n, d = X.shape
    K = targets.shape[1]
    for index_dtype, bias, C, tol, max_iter in [(np.int32, 1.0, 0.7, 1e-3, 40), (np.int64, 0.0, 3.0, 0.1, 25)]:
        Xc = csr(X, index_dtype)
        alpha, coef, wb, info = np.zeros((n, K)), np.zeros((K, d)), np.zeros(K), np.zeros((K, 4))
        k.dcd_solve(
            **stream(Xc, targets, sw),
            alpha=alpha,
            coef=coef,
            wb=wb,
            bias_value=bias,
            C=C,
            l2_loss=l2,
            tol=tol,
            max_iter=max_iter,
            shrinking=shrinking,
            seed=np.uint64(987654321),
            out_info=info,
        )
        a2, w2, iters = naive_dcd_solve(X, targets, sw, C, l2, tol, max_iter, bias, 987654321, shrinking=shrinking)
        scale = max(1.0, np.abs(w2).max())
        np.testing.assert_allclose(alpha, a2, rtol=1e-9, atol=1e-9 * scale)
        np.testing.assert_allclose(coef, w2[:, :d], rtol=1e-9, atol=1e-9 * scale)
        np.testing.assert_allclose(wb, w2[:, d], rtol=1e-9, atol=1e-9 * scale)
        assert info[:, 0].tolist() == iters
        # invariants: box constraints, w = sum y alpha x, zero-weight examples never enter
        assert np.all(alpha >= 0) and np.all(alpha[sw == 0] == 0)
        if not l2:
            assert np.all(alpha <= C * sw[:, None] + 1e-12)
        np.testing.assert_allclose(coef, (alpha * targets).T @ X, atol=1e-8 * scale)


def test_warm_start_continues_like_one_call_on_blocks():
    """Block minimization calls the kernel on slices of alpha with a shared w: the twin, warm-started the
    same way, gives the same iterates."""
    rng = np.random.default_rng(7)
    X, targets, sw = _problem("plain", rng, n=40, K=1)
    sw[:] = 1.0
    d = X.shape[1]
    alpha, coef, wb, info = np.zeros((40, 1)), np.zeros((1, d)), np.zeros(1), np.zeros((1, 4))
    a2, w2 = np.zeros((40, 1)), np.zeros((1, d + 1))
    for outer in range(3):
        for a, b in [(0, 25), (25, 40)]:
            Xb = sp.csr_matrix(X[a:b])
            seed = 1000 * outer + a
            k.dcd_solve(
                **stream(Xb, targets[a:b], sw[a:b]),
                alpha=alpha[a:b],
                coef=coef,
                wb=wb,
                bias_value=1.0,
                C=1.0,
                l2_loss=False,
                tol=1e-3,
                max_iter=2,
                shrinking=True,
                seed=np.uint64(seed),
                out_info=info,
            )
            a2[a:b], w2, _ = naive_dcd_solve(
                X[a:b], targets[a:b], sw[a:b], 1.0, False, 1e-3, 2, 1.0, seed, shrinking=True, alpha=a2[a:b], w=w2
            )
    np.testing.assert_allclose(alpha, a2, atol=1e-10)
    np.testing.assert_allclose(np.append(coef[0], wb), w2[0], atol=1e-10)
