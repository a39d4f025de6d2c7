"""Eager dense NumPy twins of streamlearn._kernels.sparse_l1, written from Algorithms §4.1-4.5.

No laziness here: every truncation round touches every weight, and RDA/FTRL recompute the whole ``w``
each round. Each twin takes a dense or sparse ``X`` (n, d), ``targets`` (n, K), ``sample_weight`` (n,)
and returns ``(W, b, scores)``: the (K, d) weights and (K,) intercepts after the pass, and the (n, K)
pre-update scores. Examples of weight 0 are scored but are not rounds.
"""

import numpy as np

from streamlearn.losses import loss_dloss
from tests.naive_rows import dense

__all__ = [
    "naive_simple_truncation",
    "naive_truncated_gradient",
    "naive_fobos",
    "naive_rda",
    "naive_ftrl",
    "naive_l1_subgradient",
]


def _T0(v, theta):
    return np.where(np.abs(v) <= theta, 0.0, v)


def _T1(v, a, theta):
    out = v.copy()
    pos = (v >= 0) & (v <= theta)
    neg = (v < 0) & (v >= -theta)
    out[pos] = np.maximum(0.0, v[pos] - a)
    out[neg] = np.minimum(0.0, v[neg] + a)
    return out


def _rounds(X, targets, sw, loss, score, scores):
    """The pass of every twin here: row ``i`` (dense ``x``) is scored ``scores[i] = score(x, t)`` by the model of the
    ``t`` rounds before it; a row of non-zero weight is the next round, ``t + 1``: yields ``(x, t + 1, g)`` with
    ``g[c]`` the derivative of the loss at ``scores[i, c]`` times the weight. The caller updates the model before the
    next row is scored."""
    t = 0
    for i, x in enumerate(dense(X)):
        scores[i] = score(x, t)
        if sw[i] == 0:
            continue
        t += 1
        yield x, t, [float(loss_dloss(loss, targets[i, c], scores[i, c])) * sw[i] for c in range(targets.shape[1])]


def _sgd_truncation_pass(X, targets, sw, loss, eta0, schedule, fit_intercept, truncate, k):
    """Dense SGD; after the gradient step of every round t with t mod k == 0: W = truncate(W, eta_t)."""
    X = dense(X)
    n, d = X.shape
    K = targets.shape[1]
    W, b = np.zeros((K, d)), np.zeros(K)
    scores = np.zeros((n, K))
    for x, t, g in _rounds(X, targets, sw, loss, lambda x, t: W @ x + b, scores):
        eta = eta0 / np.sqrt(t) if schedule == "invsqrt" else eta0
        for c in range(K):
            W[c] = W[c] - eta * g[c] * x
            if fit_intercept:
                b[c] -= eta * g[c]
        if t % k == 0:
            W[:] = truncate(W, eta)
    return W, b, scores


def naive_simple_truncation(X, targets, sw, *, loss, theta, k, eta0, schedule="invsqrt", fit_intercept=True):
    """4.1: w = T0(w - eta g, theta) when t mod k == 0, plain SGD otherwise."""
    return _sgd_truncation_pass(X, targets, sw, loss, eta0, schedule, fit_intercept, lambda W, eta: _T0(W, theta), k)


def naive_truncated_gradient(X, targets, sw, *, loss, gravity, theta, k, eta0, schedule="invsqrt", fit_intercept=True):
    """4.2: w = T1(w - eta g, k eta g_gravity, theta) when t mod k == 0, plain SGD otherwise."""
    return _sgd_truncation_pass(
        X, targets, sw, loss, eta0, schedule, fit_intercept, lambda W, eta: _T1(W, k * eta * gravity, theta), k
    )


def naive_fobos(X, targets, sw, *, loss, l1, eta0, schedule="invsqrt", fit_intercept=True):
    """4.3: w = sgn(v) max(0, |v| - eta_t l1) with v = w - eta_t g, every round."""
    return _sgd_truncation_pass(
        X,
        targets,
        sw,
        loss,
        eta0,
        schedule,
        fit_intercept,
        lambda W, eta: np.sign(W) * np.maximum(0.0, np.abs(W) - eta * l1),
        1,
    )


def naive_l1_subgradient(X, targets, sw, *, loss, l1, eta0, schedule="invsqrt", fit_intercept=True):
    """The L1 sub-gradient method with the step clipped at zero (the theta = inf, k = 1 case of TG,
    in its clipped form, Algorithms §4.2): v = w - eta g; w = v - eta l1 sgn(v), or 0 where that would
    cross zero."""

    def step(W, eta):
        out = W - eta * l1 * np.sign(W)
        out[np.sign(out) != np.sign(W)] = 0.0
        return out

    return _sgd_truncation_pass(X, targets, sw, loss, eta0, schedule, fit_intercept, step, 1)


def naive_rda(X, targets, sw, *, loss, l1, gamma, fit_intercept=True):
    """4.4: w_{t+1} = argmin gbar.w + l1 |w|_1 + gamma/(2 sqrt t) |w|^2, recomputed in full each round."""
    X = dense(X)
    n, d = X.shape
    K = targets.shape[1]
    G, Gb = np.zeros((K, d)), np.zeros(K)
    scores = np.zeros((n, K))

    def weights(G, Gb, t):
        if t == 0:
            return np.zeros_like(G), np.zeros_like(Gb)
        gbar, gbar_b = G / t, Gb / t
        W = np.where(np.abs(gbar) <= l1, 0.0, -(np.sqrt(t) / gamma) * (gbar - l1 * np.sign(gbar)))
        return W, -(np.sqrt(t) / gamma) * gbar_b

    def score(x, t):
        W, b = weights(G, Gb, t)
        return W @ x + (b if fit_intercept else 0.0)

    for x, _, g in _rounds(X, targets, sw, loss, score, scores):
        for c in range(K):
            G[c] += g[c] * x
            if fit_intercept:
                Gb[c] += g[c]
    W, b = weights(G, Gb, np.count_nonzero(sw))
    return W, (b if fit_intercept else np.zeros(K)), scores


def naive_ftrl(X, targets, sw, *, loss, alpha, beta, l1, l2, fit_intercept=True):
    """4.5, McMahan et al.'s per-coordinate FTRL with the paper's sigma: the whole w recomputed from (z, n) each round;
    the intercept is a coordinate of constant value 1 with l1 = l2 = 0."""
    X = dense(X)
    n, d = X.shape
    K = targets.shape[1]
    if fit_intercept:
        X = np.hstack([X, np.ones((n, 1))])
    D = X.shape[1]
    l1v = np.full(D, l1)
    l2v = np.full(D, l2)
    if fit_intercept:
        l1v[-1] = l2v[-1] = 0.0
    z, nn = np.zeros((K, D)), np.zeros((K, D))
    scores = np.zeros((n, K))

    def weights(z, nn):
        return np.where(np.abs(z) <= l1v, 0.0, -(z - np.sign(z) * l1v) / ((beta + np.sqrt(nn)) / alpha + l2v))

    for x, _, g_row in _rounds(X, targets, sw, loss, lambda x, t: weights(z, nn) @ x, scores):
        W = weights(z, nn)  # the weights that scored x: z and nn change only below
        for c in range(K):
            g = g_row[c] * x
            sigma = (np.sqrt(nn[c] + g * g) - np.sqrt(nn[c])) / alpha
            z[c] += g - sigma * W[c]
            nn[c] += g * g
    W = weights(z, nn)
    if fit_intercept:
        return W[:, :-1], W[:, -1], scores
    return W, np.zeros(K), scores
