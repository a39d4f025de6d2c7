"""NumPy twins of streamlearn._kernels.cw, .pegasos and .dcd, written from Algorithms §2.4-2.8 and 3.1.

Dense, row by row, straight from the formulas (full matrices even for the diagonal rules, the mean update
``mu += alpha y Sigma x`` written as a matrix product); no scaled vectors, no shrinking tricks beyond what
the reference specifies.
"""

import math

import numpy as np
from scipy.special import ndtri

from tests.naive_rows import dense, scored_outputs

__all__ = ["naive_cw_step", "naive_cw_epoch", "naive_pegasos_epoch", "naive_dcd_solve", "naive_splitmix64"]


def naive_cw_step(rule, m, v, eta=None, C=1.0, r=1.0, phi=None):
    """``(alpha, c)`` of Algorithms §2.4(a)/(b), 2.5, 2.6 for margin ``m`` and confidence ``v``."""
    if phi is None and eta is not None:
        phi = float(ndtri(eta))
    if rule == "arow":
        loss = max(0.0, 1.0 - m)
        return (loss / (v + r), 1.0 / r) if loss > 0 else (0.0, 0.0)
    if rule == "cw_variance":
        if not m <= phi * v:
            return 0.0, 0.0
        b = 1 + 2 * phi * m
        alpha = max(0.0, (-b + math.sqrt(b * b - 8 * phi * (m - phi * v))) / (4 * phi * v))
        return alpha, 2 * alpha * phi
    loss = max(0.0, phi * math.sqrt(v) - m)
    if loss <= 0:
        return 0.0, 0.0
    psi, zeta = 1 + phi**2 / 2, 1 + phi**2
    if rule == "scw2":
        n = v + 1 / (2 * C)
        gamma = phi * math.sqrt(phi**2 * m**2 * v**2 + 4 * n * v * (n + v * phi**2))
        alpha = max(0.0, (-(2 * m * n + phi**2 * m * v) + gamma) / (2 * (n**2 + n * v * phi**2)))
    else:
        alpha = max(0.0, (-m * psi + math.sqrt(m**2 * phi**4 / 4 + v * phi**2 * zeta)) / (v * zeta))
        if rule == "scw1":
            alpha = min(C, alpha)
    if alpha == 0:
        return 0.0, 0.0
    u = 0.25 * (-alpha * v * phi + math.sqrt(alpha**2 * v**2 * phi**2 + 4 * v)) ** 2
    beta = alpha * phi / (math.sqrt(u) + v * alpha * phi)
    # the full-covariance beta of the papers equals c / (1 + c v) with c = alpha phi / sqrt(u)
    c = alpha * phi / math.sqrt(u)
    assert math.isclose(beta, c / (1 + c * v), rel_tol=1e-9)
    return alpha, c


def naive_cw_epoch(X, targets, sample_weight, mu, b, sigma, rule, phi, C, r, bias_value, full, t):
    """Row-by-row dense CW/AROW/SCW. ``sigma``: (K, d+1, d+1) if ``full`` else (K, d+1) diagonal (last entry
    the bias feature). Returns ``(mu, b, sigma, t, scores)``; the inputs are not modified."""
    mu, b, sigma = np.array(mu, float), np.array(b, float), np.array(sigma, float)
    scores = np.zeros((X.shape[0], mu.shape[0]))
    for i, x, s, _, k, z in scored_outputs(X, sample_weight, t, mu.shape[0], lambda x, k: mu[k] @ x + b[k], scores):
        xa = np.append(x, bias_value)
        y = targets[i, k]
        S = sigma[k] if full else np.diag(sigma[k])
        v = xa @ S @ xa
        if v <= 1e-12:
            continue
        alpha, c = naive_cw_step(rule, y * z, v, phi=phi, C=C, r=r)
        if alpha == 0 and c == 0:
            continue
        alpha, c = alpha * s, c * s
        step = alpha * y * (S @ xa)
        mu[k] += step[:-1]
        b[k] += step[-1] * bias_value
        if full:
            sigma[k] = S - (c / (1 + c * v)) * np.outer(S @ xa, S @ xa)
        else:
            sigma[k] = 1.0 / (1.0 / sigma[k] + c * xa**2)
    return mu, b, sigma, t + np.count_nonzero(sample_weight), scores


def naive_pegasos_epoch(X, targets, sample_weight, w, lam, k, project, bias_value, t, pending):
    """Dense Pegasos with mini-batches spanning calls. ``w`` (K, d+1) (last: bias feature weight);
    ``pending`` is a list of ``(x_aug, y_row, s)`` examples of the unfinished round. Returns
    ``(w, t, pending, scores)``."""
    X = dense(X)
    w = np.array(w, float)
    pending = list(pending)
    scores = np.zeros((X.shape[0], w.shape[0]))
    for i, x in enumerate(X):
        xa = np.append(x, bias_value)
        scores[i] = w @ xa
        if sample_weight[i] == 0:
            continue
        pending.append((xa, targets[i], sample_weight[i], scores[i].copy()))
        if len(pending) < k:
            continue
        t += 1
        eta = 1.0 / (lam * t)
        for kk in range(w.shape[0]):
            grad_sum = sum(s * y[kk] * xa_ for xa_, y, s, z in pending if y[kk] * z[kk] < 1)
            w[kk] = (1 - eta * lam) * w[kk] + (eta / k) * grad_sum
            if project:
                norm = np.linalg.norm(w[kk])
                if norm > 0:
                    w[kk] *= min(1.0, (1 / math.sqrt(lam)) / norm)
        pending = []
    return w, t, pending, scores


_M64 = (1 << 64) - 1


def naive_splitmix64(state):
    """The splitmix64 step of streamlearn._kernels.dcd on Python ints: ``(new_state, output)``."""
    state = (state + 0x9E3779B97F4A7C15) & _M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return state, z ^ (z >> 31)


def naive_dcd_solve(
    X, targets, sample_weight, C, l2_loss, tol, max_iter, bias_value, seed, shrinking=False, alpha=None, w=None
):
    """Dense dual CD (Algorithms §3.1, with LIBLINEAR's shrinking when asked) with the kernel's random
    permutations. Returns ``(alpha, w_aug, n_iters)``; ``w_aug`` (K, d+1) ends with the bias weight."""
    X = dense(X)
    n, d = X.shape
    K = targets.shape[1]
    Xa = np.hstack([X, np.full((n, 1), bias_value)])
    alpha = np.zeros((n, K)) if alpha is None else np.array(alpha, float)
    w = np.zeros((K, d + 1)) if w is None else np.array(w, float)
    state = int(seed)
    iters = []
    for k in range(K):
        index = [i for i in range(n) if sample_weight[i] > 0]
        n_all = len(index)
        active = n_all
        pg_max_old, pg_min_old = math.inf, -math.inf
        it = 0
        while it < max_iter:
            for a in range(active):
                state, r = naive_splitmix64(state)
                j = a + (((r >> 32) * (active - a)) >> 32)  # multiply-shift bounded draw, as the kernel
                index[a], index[j] = index[j], index[a]
            pg_max, pg_min = -math.inf, math.inf
            pos = 0
            while pos < active:
                i = index[pos]
                y, s = targets[i, k], sample_weight[i]
                upper, dii = (math.inf, 1 / (2 * C * s)) if l2_loss else (C * s, 0.0)
                g = y * (w[k] @ Xa[i]) - 1 + dii * alpha[i, k]
                if alpha[i, k] == 0:
                    if shrinking and g > pg_max_old:
                        active -= 1
                        index[pos], index[active] = index[active], index[pos]
                        continue
                    pg = min(g, 0.0)
                elif alpha[i, k] == upper:
                    if shrinking and g < pg_min_old:
                        active -= 1
                        index[pos], index[active] = index[active], index[pos]
                        continue
                    pg = max(g, 0.0)
                else:
                    pg = g
                pg_max, pg_min = max(pg_max, pg), min(pg_min, pg)
                if abs(pg) > 1e-12:
                    q = Xa[i] @ Xa[i] + dii
                    old = alpha[i, k]
                    alpha[i, k] = min(max(old - g / q, 0.0), upper) if q > 0 else upper
                    w[k] += (alpha[i, k] - old) * y * Xa[i]
                pos += 1
            it += 1
            if pg_max - pg_min <= tol:
                if active == n_all:
                    break
                active, pg_max_old, pg_min_old = n_all, math.inf, -math.inf
                continue
            pg_max_old = pg_max if pg_max > 0 else math.inf
            pg_min_old = pg_min if pg_min < 0 else -math.inf
        iters.append(it)
    return alpha, w, iters
