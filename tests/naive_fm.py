"""NumPy twins of streamlearn._kernels.fm and streamlearn._kernels.ccfm, written from Algorithms §7.1-7.4.

They use other formulas than the kernels where one exists: the FM score as the explicit pair sum
sum_{i<j} <v_i, v_j> x_i x_j, its gradient as x_i sum_{j != i} v_j x_j; the CCFM score as the dense
quadratic form; the linear step of OCCFM and the projection of OGD by a full ``numpy.linalg.eigh``.
"""

import numpy as np

from streamlearn.losses import loss_dloss
from tests.naive_rows import scored_outputs

__all__ = [
    "naive_fm_epoch",
    "naive_fm_score",
    "naive_ccfm_ogd_epoch",
    "naive_occfm_epoch",
    "naive_occfm_lowrank_epoch",
    "naive_lmo",
    "xhat",
]


def xhat(x):
    """(x, 1): the augmented example, bias last."""
    return np.append(np.asarray(x, dtype=float), 1.0)


def _rounds(X, targets, sample_weight, n_out, score, loss, t, scores):
    """One pass in the kernels' order: the score ``score(x, k)`` of every output of every example (made before
    the update) goes to ``scores``; yields ``(x, k, g, t)`` for every output of every example of non-zero weight
    ``s``: ``g = l'(score) s``, ``t`` the count of those examples. The caller updates the model in place before
    the next round."""
    for i, x, s, ti, k, z in scored_outputs(X, sample_weight, t, n_out, score, scores):
        yield x, k, float(loss_dloss(loss, targets[i, k], z)) * s, ti


# ------------------------------------------------------------------------------------------------------------
def naive_fm_score(x, w0, w, V):
    """w0 + w.x + sum_{i<j} <V_i, V_j> x_i x_j (explicit pair sum)."""
    z = w0 + w @ x
    nz = np.flatnonzero(x)
    for a, i in enumerate(nz):
        for j in nz[a + 1 :]:
            z += (V[i] @ V[j]) * x[i] * x[j]
    return z


def naive_fm_epoch(X, targets, sample_weight, model, adagrad_sums, *, fit_intercept, loss, opt, schedule, eta0, l2, t0):
    """Row by row; returns (w0, w, V, G_w0, G_w, G_V, t, scores) without touching the inputs.
    ``model`` is (w0, w, V), ``adagrad_sums`` AdaGrad's (G_w0, G_w, G_V), ``l2`` the penalties (on w, on V);
    ``opt`` is "sgd" or "adagrad", ``schedule`` "constant" or "invsqrt", ``loss`` a loss name."""
    w0, w, V = (np.array(a, float) for a in model)
    G_w0, G_w, G_V = (np.array(a, float) for a in adagrad_sums)
    l2_weight, l2_latent = l2
    scores = np.zeros((X.shape[0], w.shape[0]))
    t = t0
    for x, k, g, t in _rounds(
        X, targets, sample_weight, w.shape[0], lambda x, k: naive_fm_score(x, w0[k], w[k], V[k]), loss, t0, scores
    ):
        nz = np.flatnonzero(x)
        gw0 = g
        gw = g * x[nz] + l2_weight * w[k, nz]
        gV = np.zeros((len(nz), V.shape[2]))
        for a, j in enumerate(nz):
            others = [m for m in nz if m != j]
            inner = sum((V[k, m] * x[m] for m in others), np.zeros(V.shape[2]))
            gV[a] = g * x[j] * inner + l2_latent * V[k, j]
        if opt == "sgd":
            eta = eta0 / np.sqrt(t) if schedule == "invsqrt" else eta0
            if fit_intercept:
                w0[k] -= eta * gw0
            w[k, nz] -= eta * gw
            V[k, nz] -= eta * gV
        else:
            if fit_intercept and gw0 != 0:
                G_w0[k] += gw0**2
                if G_w0[k] > 0:
                    w0[k] -= eta0 * gw0 / np.sqrt(G_w0[k])
            for a, j in enumerate(nz):
                if gw[a] != 0:
                    G_w[k, j] += gw[a] ** 2
                    if G_w[k, j] > 0:
                        w[k, j] -= eta0 * gw[a] / np.sqrt(G_w[k, j])
                on = gV[a] != 0
                G_V[k, j, on] += gV[a, on] ** 2
                on &= G_V[k, j] > 0
                V[k, j, on] -= eta0 * gV[a, on] / np.sqrt(G_V[k, j, on])
    return w0, w, V, G_w0, G_w, G_V, t, scores


# ------------------------------------------------------------------------------------------------------------
def naive_lmo(H):
    """argmin_{||C||_tr <= 1} <C, -H> for symmetric H: sgn(lam) q q^T with (lam, q) the largest-|lam|
    eigenpair (Lin et al., WWW 2018, Lemma 5), by a full eigendecomposition. Returns (lam, q)."""
    lam, Q = np.linalg.eigh(H)
    j = int(np.argmax(np.abs(lam)))
    return lam[j], Q[:, j]


def _project_trace_ball(C, delta):
    lam, Q = np.linalg.eigh(C)
    if np.abs(lam).sum() <= delta:
        return C
    a = np.abs(lam)
    u = np.sort(a)[::-1]
    css = np.cumsum(u)
    j = np.arange(1, len(u) + 1)
    rho = np.nonzero(u - (css - delta) / j > 0)[0][-1]
    theta = (css[rho] - delta) / (rho + 1)
    lp = np.sign(lam) * np.maximum(a - theta, 0)
    return (Q * lp) @ Q.T


def _ccfm_score(x, C):
    """1/2 xhat^T C xhat (the dense quadratic form)."""
    return 0.5 * xhat(x) @ C @ xhat(x)


def naive_ccfm_ogd_epoch(X, targets, sample_weight, C, loss, delta, eta0, t0):
    """OGD on the CCFM, projected onto {||C||_tr <= delta} after every step (no shortcut).
    ``C`` (K, d+1, d+1). Returns (C, t, scores)."""
    C = np.array(C, float)
    scores = np.zeros((X.shape[0], C.shape[0]))
    t = t0
    for x, k, g, t in _rounds(
        X, targets, sample_weight, C.shape[0], lambda x, k: _ccfm_score(x, C[k]), loss, t0, scores
    ):
        xh = xhat(x)
        C[k] = _project_trace_ball(C[k] - eta0 / np.sqrt(t) * 0.5 * g * np.outer(xh, xh), delta)
    return C, t, scores


def naive_occfm_epoch(X, targets, sample_weight, C, S, loss, delta, eta, t0, gamma_c=1.0, gamma_p=0.5):
    """OCCFM (Lin et al., WWW 2018, Alg. 2) with C_1 = 0, gamma_t = min(1, gamma_c / t^gamma_p) (paper: 1/sqrt(t)), dense C
    and gradient sum S (K, n, n), linear step by numpy.linalg.eigh. Returns (C, S, t, scores, lams)."""
    C, S = np.array(C, float), np.array(S, float)
    scores = np.zeros((X.shape[0], C.shape[0]))
    lams = []
    t = t0
    for x, k, g, t in _rounds(
        X, targets, sample_weight, C.shape[0], lambda x, k: _ccfm_score(x, C[k]), loss, t0, scores
    ):
        xh = xhat(x)
        gamma = min(1.0, gamma_c / t**gamma_p)
        H = -(eta * S[k] + 2 * C[k])
        lam, q = naive_lmo(H)
        lams.append(lam)
        C_hat = delta * np.sign(lam) * np.outer(q, q) if lam != 0 else 0 * C[k]
        C[k] = (1 - gamma) * C[k] + gamma * C_hat
        S[k] = S[k] + 0.5 * g * np.outer(xh, xh)
    return C, S, t, scores, lams


def _kept(X, budget, shrink):
    lam, U = np.linalg.eigh(X)
    order = np.argsort(-np.abs(lam), kind="stable")
    lam, U = lam[order], U[:, order]
    top = abs(lam[0]) if len(lam) else 0.0
    nz = int(np.sum(np.abs(lam) > 1e-13 * top))
    m = min(nz, budget)
    dlt = abs(lam[budget]) if shrink and nz > budget else 0.0
    vals = np.sign(lam[:m]) * (np.abs(lam[:m]) - dlt)
    return vals, U[:, :m], float(np.abs(lam[m:]).sum()), dlt


def naive_occfm_lowrank_epoch(
    X, targets, sample_weight, W, A, B, kdim, loss, delta, eta, rank, ell, t0, gamma_c=1.0, gamma_p=0.5
):
    """Scalable OCCFM with eigh everywhere: basis W (K, n, kmax), C = W A W^T, S ~ W B W^T, compression to the
    ``rank`` largest |eigenpairs| of A and the FD-shrunk ``ell`` of B when W is full. Returns
    (W, A, B, kdim, t, scores, shrink) with shrink the summed FD shrinks per output."""
    W, A, B = np.array(W, float), np.array(A, float), np.array(B, float)
    kdim = np.array(kdim)
    K, n, kmax = W.shape
    shrink = np.zeros(K)
    scores = np.zeros((X.shape[0], K))

    def score(x, k):  # 1/2 z^T A z with z = W^T xhat, the coordinates in the basis
        z = W[k, :, : kdim[k]].T @ xhat(x)
        return 0.5 * z @ A[k, : kdim[k], : kdim[k]] @ z

    t = t0
    for x, k, g, t in _rounds(X, targets, sample_weight, K, score, loss, t0, scores):
        xh = xhat(x)
        kd = kdim[k]
        Wk = W[k, :, :kd]
        z = Wk.T @ xh
        gamma = min(1.0, gamma_c / t**gamma_p)
        Ak = A[k, :kd, :kd] * (1 - gamma)
        if kd:
            lam, u = naive_lmo(-(eta * B[k, :kd, :kd] + 2 * A[k, :kd, :kd]))
            if lam != 0:
                Ak = Ak + gamma * delta * np.sign(lam) * np.outer(u, u)
        A[k, :kd, :kd] = Ak
        if g == 0:
            continue
        p = xh - Wk @ z
        p = p - Wk @ (Wk.T @ p)
        if np.linalg.norm(p) ** 2 > 1e-20 * (xh @ xh):
            if kd == kmax:
                va, Ua, _, _ = _kept(A[k, :kd, :kd], rank, False)
                vb, Ub, _, dlt = _kept(B[k, :kd, :kd], ell, True)
                shrink[k] += dlt
                O, _ = np.linalg.qr(np.hstack([Ua, Ub]))
                O = O[:, : np.linalg.matrix_rank(np.hstack([Ua, Ub]), tol=1e-8)]
                An = O.T @ (Ua * va) @ Ua.T @ O
                Bn = O.T @ (Ub * vb) @ Ub.T @ O
                k2 = O.shape[1]
                Wn = W[k, :, :kd] @ O
                W[k] = 0
                A[k] = 0
                B[k] = 0
                W[k, :, :k2] = Wn
                A[k, :k2, :k2] = An
                B[k, :k2, :k2] = Bn
                kd = k2
                Wk = W[k, :, :kd]
                z = Wk.T @ xh
                p = xh - Wk @ z
                p = p - Wk @ (Wk.T @ p)
            pn = np.linalg.norm(p)
            W[k, :, kd] = p / pn
            A[k, kd, :] = A[k, :, kd] = B[k, kd, :] = B[k, :, kd] = 0
            z = np.append(z, pn)
            kd += 1
            kdim[k] = kd
        B[k, :kd, :kd] += 0.5 * g * np.outer(z, z)
    return W, A, B, kdim, t, scores, shrink
