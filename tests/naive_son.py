"""Slow NumPy twins of the second-order kernels (streamlearn/_kernels/son.py).

Explicit matrices: H = B^T B + alpha I is formed (d x d) and solved with ``numpy.linalg.solve`` (or
``numpy.linalg.pinv`` when alpha = 0); the H-norm projection onto the slab is the textbook formula
(Algorithms §6.1) and, in the alpha = 0 phase, the H-cheaper of App. A's candidate w1 and the optimal
w2* = u - tau / |x_perp|^2 x_perp. Sketches use the twins of tests/naive_sketch.py (SVD shrink, QR Oja).
Binary only (one output), dense X.
"""

import math

import numpy as np

from tests.naive_sketch import naive_fd_n_shrink, naive_fd_shrink, naive_rp_vector

__all__ = ["naive_dloss", "naive_adagrad", "naive_full_on", "naive_son"]


def naive_dloss(loss, y, z):
    if loss == "squared":
        return 2.0 * (z - y)
    if loss == "logistic":
        return -y / (1.0 + math.exp(y * z))
    return -y if y * z < 1.0 else 0.0


def _tau(z, C):
    return z - min(max(z, -C), C)


def naive_adagrad(X, y, *, alpha0, eta, C, loss, project=True, slab="next"):
    """``slab="current"``: no projection before predicting; the updated point is projected onto the current
    example's slab in the post-update diag(h) norm."""
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    w = np.zeros(d)
    s = np.zeros(d)
    scores = []

    def project_onto(w, x, h):
        tau = _tau(w @ x, C)
        return w - tau / np.sum(x**2 / h) * (x / h) if tau != 0.0 and np.any(x) else w

    for x, yt in zip(X, y):
        z = w @ x
        if project and slab == "next" and _tau(z, C) != 0.0:
            w = project_onto(w, x, alpha0 + np.sqrt(s))
            z = min(max(z, -C), C)  # the projected point's exact score
        scores.append(z)
        g = naive_dloss(loss, yt, z) * x
        s += g**2
        w = w - eta * g / (alpha0 + np.sqrt(s))
        if project and slab == "current":
            w = project_onto(w, x, alpha0 + np.sqrt(s))
    return np.array(scores), w


def naive_full_on(X, y, *, alpha0, mu, eta, C, loss, slab="next"):
    """``slab`` as in :func:`naive_adagrad` (post-update H)."""
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    H = alpha0 * np.eye(d)
    w = np.zeros(d)
    scores = []

    def project_onto(w, x):
        tau = _tau(w @ x, C)
        if tau == 0.0:
            return w
        hx = np.linalg.solve(H, x)
        return w - tau / (x @ hx) * hx

    for t, (x, yt) in enumerate(zip(X, y), start=1):
        z = w @ x
        if slab == "next" and _tau(z, C) != 0.0:
            w = project_onto(w, x)
            z = min(max(z, -C), C)  # the projected point's exact score
        scores.append(z)
        g = naive_dloss(loss, yt, z) * x
        if np.any(g):
            H = H + (mu + eta / t) * np.outer(g, g)
            w = w - np.linalg.solve(H, g)
        if slab == "current":
            w = project_onto(w, x)
    return np.array(scores), w


def _pinv(B, alpha):
    """``(H^+, projector onto the row space of B)`` when alpha is negligible (<= 1e-12 ||B||_F^2), else None."""
    if alpha > 1e-12 * np.sum(B**2):
        return None
    lam, U = np.linalg.eigh(B.T @ B)
    top = max(lam.max(), 0.0) if lam.size else 0.0
    k = (lam > top * B.shape[0] * 1e-12) & (lam > 0)
    Uk = U[:, k]
    return (Uk / lam[k]) @ Uk.T, Uk @ Uk.T


def _project(u, x, B, alpha, C, in_span=False):
    """H-norm projection of u onto ``|w.x| <= C``, H = B^T B + alpha I, computed in d-space (explicit H,
    eigendecomposition of B^T B). The textbook ``u - tau H^{-1}x / x.H^{-1}x`` when ``alpha x.H^{-1}x`` is
    above 1e-6 x.x; otherwise (and in the pseudo-inverse phase) split x = P x + x_perp (P: projector onto B's
    row space): when ``||x_perp||^2 <= 1e-9 x.x`` or ``in_span`` (x's row was just appended) the direction
    is H^{-1} P x (App. A's w1 when alpha = 0), else ``x_perp + alpha H^{-1} P x`` (w2* when alpha = 0)."""
    tau = _tau(u @ x, C)
    if tau == 0.0 or not np.any(x):
        return u
    d = x.shape[0]
    xx = x @ x
    pinv = _pinv(B, alpha) is not None
    if not pinv and not in_span:
        hx = np.linalg.solve(B.T @ B + alpha * np.eye(d), x)
        if alpha * (x @ hx) > 1e-6 * xx:
            return u - tau / (x @ hx) * hx
    lam, U = np.linalg.eigh(B.T @ B)
    top = max(lam.max(), 0.0) if lam.size else 0.0
    k = (lam > top * B.shape[0] * 1e-12) & (lam > 0)
    Uk = U[:, k]
    hpar = Uk @ ((Uk.T @ x) / (lam[k] + alpha))  # H^{-1} P x
    xp = x - Uk @ (Uk.T @ x)
    if in_span or not xp @ xp > 1e-9 * xx:
        return u - tau / (x @ hpar) * hpar
    direction = xp + alpha * hpar
    return u - tau / (xp @ xp + alpha * (x @ hpar)) * direction


def naive_son(
    X, y, *, sketch, ell, alpha0, mu, eta, C, loss, beta=0.2, seed=0, rp_dist=0, V0=None, oja_c=2.0, slab="next"
):
    """Returns (pre-update scores, final pending u, final alpha).

    ``slab="current"``: Alg. 6 as printed, no projection before predicting, the updated u projected onto the
    current example's slab with the post-update H.
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    w = np.zeros(d)
    alpha = float(alpha0)
    keep = ell - 1
    n_shrink = naive_fd_n_shrink(beta if sketch == "pfd" else 1.0, keep)
    rows = [np.zeros(d) for _ in range(ell)]  # Alg. 6: ell zero rows
    S = np.zeros((ell, d))
    V = None if V0 is None else V0.copy()
    lam = np.zeros(ell)
    osc = np.zeros(ell)
    scores = []

    def sketch_matrix():
        if sketch in ("fd", "pfd", "rfd"):
            return np.array(rows).reshape(-1, d)
        if sketch == "rp":
            return S
        return osc[:, None] * V

    t = 0
    for x, yt in zip(X, y):
        B = sketch_matrix()
        if slab == "current":
            z = w @ x
        else:
            z = min(max(w @ x, -C), C)  # the projected point's exact score
            w = _project(w, x, B, alpha, C)
        scores.append(z)
        t += 1
        dl = naive_dloss(loss, yt, z)
        if dl == 0.0 or not np.any(x):
            if slab == "current":
                w = _project(w, x, B, alpha, C)  # u = w, still projected onto the current slab
            continue
        g = dl * x
        a = math.sqrt(mu + eta / t) * g
        shrunk = sketch not in ("fd", "pfd", "rfd")  # RP / Oja: x is not in B's row space
        if sketch in ("fd", "pfd", "rfd"):
            rows.append(a)
            shrunk = len(rows) == 2 * ell
            if shrunk:
                new, delta = naive_fd_shrink(np.array(rows), keep, n_shrink)
                rows = list(new)
                if sketch == "rfd":
                    alpha += delta / 2
        elif sketch == "rp":
            S = S + np.outer(naive_rp_vector(seed, t - 1, ell, rp_dist), a)
        else:
            gamma = min(oja_c / t, 1.0)
            p = V @ a
            lam = (1 - gamma) * lam + gamma * p**2
            q, r = np.linalg.qr((V + gamma * np.outer(p, a)).T)
            V = (q * np.sign(np.diag(r))).T
            osc = np.sqrt(t * lam)
        B = sketch_matrix()
        pv = _pinv(B, alpha)
        if pv is None:
            w = w - np.linalg.solve(B.T @ B + alpha * np.eye(d), g)
        else:
            w = w - pv[0] @ g
        if slab == "current":
            w = _project(w, x, B, alpha, C, in_span=not shrunk)
    return np.array(scores), w, alpha
