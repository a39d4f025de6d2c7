"""NumPy twin of streamlearn._kernels.nag (normalized adaptive gradient), written from the paper's algorithm
(Ross, Mineiro & Langford, UAI 2013) and docs/algorithms/nag.md: dense rows, one example at a time."""

import math

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from streamlearn.losses import loss_dloss
from tests.naive_rows import dense

__all__ = ["naive_invariant_step", "naive_nag_epoch"]


def _logistic_margin_gain(m0, ph):
    """Solve m + exp(m) = m0 + exp(m0) + ph for m - m0 (by bisection-type root finding)."""
    if ph <= 0:
        return 0.0
    if m0 >= 0:
        a = math.exp(-m0)
        f = lambda d: a * d + math.expm1(d) - a * ph
        hi = math.log1p(a * ph)
    else:
        b = math.exp(m0)
        f = lambda d: d + (b * math.expm1(d) if d < 1 else math.exp(m0 + d) - b) - ph
        hi = min(ph, math.log(b + ph) - m0)
    if f(hi) <= 0:
        return hi
    return brentq(f, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)


def _modified_huber_margin_gain(m0, ph):
    """Integrate dm/dtau = -dl/dm of the modified Huber loss over [0, ph] numerically (an ODE solver, no
    closed form): the margin gained."""
    if m0 >= 1:
        return 0.0

    def slope(_tau, m):
        return [4.0 if m[0] < -1 else 2.0 * max(0.0, 1.0 - m[0])]

    # the right-hand side has a kink at m = -1: integrate up to it as an event, then on from there
    def at_kink(_tau, m):
        return m[0] + 1.0

    at_kink.terminal = True
    sol = solve_ivp(slope, (0.0, ph), [m0], events=at_kink if m0 < -1 else None, rtol=1e-12, atol=1e-14)
    m, tau = sol.y[0, -1], sol.t[-1]
    if tau < ph:
        sol = solve_ivp(slope, (tau, ph), [max(m, -1.0)], rtol=1e-12, atol=1e-14)
        m = sol.y[0, -1]
    return m - m0


def naive_invariant_step(loss, y, z, H, P):
    """Total gradient of the flow du/dtau = l'(z - u P), tau in [0, H] (squared, hinge, logistic, modified
    Huber)."""
    if P <= 0:
        return H * float(loss_dloss(loss, y, z))
    if loss == "squared":
        return (z - y) * -math.expm1(-2 * P * H) / P
    if loss == "hinge":
        return 0.0 if y * z >= 1 else -y * min(H, (1 - y * z) / P)
    if loss == "modified_huber":
        return -y * _modified_huber_margin_gain(y * z, P * H) / P
    return -y * _logistic_margin_gain(y * z, P * H) / P


def naive_nag_epoch(
    X,
    targets,
    sample_weight,
    coef,
    intercept,
    fit_intercept,
    scale,
    accum,
    accum_b,
    norm_state,
    loss,
    eta0,
    schedule,
    adaptive,
    invariant,
    t,
):
    """Returns (coef, intercept, scale, accum, accum_b, norm_state, t, scores); the inputs are not touched."""
    X = dense(X)
    W, b = np.array(coef, dtype=float), np.array(intercept, dtype=float)
    s, G, Gb = np.array(scale, dtype=float), np.array(accum, dtype=float), np.array(accum_b, dtype=float)
    T, N = (float(v) for v in norm_state)
    c = 1.0 if fit_intercept else 0.0  # the constant feature
    scores = np.zeros((X.shape[0], W.shape[0]))
    for i, x in enumerate(X):
        scores[i] = W @ x + b
        h = sample_weight[i]
        if h == 0:
            continue
        t += 1
        eta = eta0 / math.sqrt(t) if schedule == "invsqrt" else eta0
        nz = x != 0
        grow = nz & (np.abs(x) > s)
        ratio = np.ones_like(s)
        ratio[grow & (s > 0)] = s[grow & (s > 0)] / np.abs(x[grow & (s > 0)])
        W *= ratio if adaptive else ratio**2
        s[grow] = np.abs(x[grow])
        xn = np.zeros_like(x)
        xn[nz] = x[nz] / s[nz]
        norm = c + xn @ xn
        T += h
        if norm == 0:
            continue
        N += h * norm
        mult = math.sqrt(T / N) if adaptive else T / N
        for k in range(W.shape[0]):
            y, z = targets[i, k], scores[i, k]
            dz = float(loss_dloss(loss, y, z))
            if dz == 0:
                continue
            r = np.zeros_like(x)
            if adaptive:
                G[k, nz] += h * dz * dz * x[nz] ** 2
                r[nz] = 1.0 / (s[nz] * np.sqrt(G[k, nz]))
                rb = 0.0
                if fit_intercept:
                    Gb[k] += h * dz * dz
                    rb = 1.0 / math.sqrt(Gb[k])
            else:
                r[nz] = 1.0 / s[nz] ** 2
                rb = c
            r, rb = mult * r, mult * rb
            P = r @ (x * x) + rb
            u = naive_invariant_step(loss, y, z, eta * h, P) if invariant else eta * h * dz
            W[k] -= u * r * x
            b[k] -= u * rb
    return W, b, s, G, Gb, np.array([T, N]), t, scores
