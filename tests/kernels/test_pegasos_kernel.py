"""streamlearn._kernels.pegasos (scaled vector, mini-batches across calls) against its dense NumPy twin."""

import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels import pegasos as k
from tests.kernels.inputs import csr, matrix, signs_and_weights, stream
from tests.naive import naive_pegasos_epoch


class _State:
    def __init__(self, K, d):
        D = d + 1
        self.v, self.acc = np.zeros((K, D)), np.zeros((K, D))
        self.marked, self.touched = np.zeros((K, D), np.uint8), np.zeros((K, D), np.int64)
        self.n_touched, self.scale, self.sqnorm = np.zeros(K, np.int64), np.ones(K), np.zeros(K)
        self.t, self.pending = 0, 0

    def run(self, Xc, targets, sw, bias, lam, batch, project):
        out = np.zeros((Xc.shape[0], targets.shape[1]))
        self.t, self.pending, bad = k.pegasos_epoch(
            **stream(Xc, targets, sw),
            v=self.v,
            scale=self.scale,
            sqnorm=self.sqnorm,
            acc=self.acc,
            marked=self.marked,
            touched=self.touched,
            n_touched=self.n_touched,
            bias_value=bias,
            lam=lam,
            batch_size=batch,
            radius=1 / np.sqrt(lam),
            project=project,
            t=self.t,
            n_pending=self.pending,
            out_scores=out,
        )
        assert bad == -1
        return out

    def w(self):
        return self.scale[:, None] * self.v


@pytest.mark.parametrize("kind", ["dense", "sparse", "empty_rows", "huge"])
@pytest.mark.parametrize("batch", [1, 3, 8])
@pytest.mark.parametrize("project", [True, False])
def test_kernel_matches_naive_twin_across_calls(kind, batch, project):
    rng = np.random.default_rng(zlib.crc32(f"{kind}-{batch}-{project}".encode()))
    X = matrix(kind, rng, 60, 15)
    K, lam = 2, 0.05
    targets, sw = signs_and_weights(rng, X.shape[0], K)
    for index_dtype, bias in [(np.int32, 1.0), (np.int64, 0.0)]:
        state = _State(K, X.shape[1])
        w2, t2, pending2 = np.zeros((K, X.shape[1] + 1)), 0, []
        # cut the stream at ragged places: rounds span calls
        for a, b in [(0, 1), (1, 8), (8, 9), (9, 33), (33, 60)]:
            Xc = csr(X[a:b], index_dtype)
            out = state.run(Xc, targets[a:b], sw[a:b], bias, lam, batch, project)
            w2, t2, pending2, out2 = naive_pegasos_epoch(
                X[a:b], targets[a:b], sw[a:b], w2, lam, batch, project, bias, t2, pending2
            )
            np.testing.assert_allclose(out, out2, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(out2).max()))
            np.testing.assert_allclose(state.w(), w2, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(w2).max()))
            assert (state.t, state.pending) == (t2, len(pending2))
        assert state.t >= 2


def test_sqnorm_tracks_the_norm_and_refresh_folds_the_scale():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.normal(size=(500, 20)) * (rng.random((500, 20)) < 0.3))
    y = np.where(rng.random((500, 1)) < 0.5, -1.0, 1.0)
    state = _State(1, 20)
    state.run(X, y, np.ones(500), 1.0, 1e-3, 1, True)
    np.testing.assert_allclose(state.sqnorm[0], state.v[0] @ state.v[0], rtol=1e-9)
    assert state.scale[0] < 0.05  # the scale shrinks as 1/t between refreshes: the trick is exercised


def test_first_round_wipes_the_initial_vector():
    """At t = 1, 1 - eta_1 lambda = 0: w_{3/2} = (eta_1 / k) sum y x, whatever w_1 was (Algorithms §2.7)."""
    state = _State(1, 3)
    state.v[0] = [5.0, -5.0, 5.0, 1.0]
    X = sp.csr_matrix(np.array([[1.0, 0.0, 0.0]]))
    state.run(X, -np.ones((1, 1)), np.ones(1), 0.0, 0.5, 1, False)
    np.testing.assert_allclose(state.w()[0], [-2.0, 0.0, 0.0, 0.0])  # eta_1 = 1/(0.5 * 1) = 2
