"""Slow NumPy twins of the sketch kernels (streamlearn/_kernels/fd.py, rfd.py, rp.py, oja.py).

Textbook forms: FD / PFD shrink with ``numpy.linalg.svd`` of the buffer (not the Gram route of the
kernels), RP with the hash drawn element by element in masked Python integers, Oja with a
QR per row (not the closed-form rank-one Gram-Schmidt).
"""

import math

import numpy as np

__all__ = [
    "naive_fd_n_shrink",
    "naive_fd_shrink",
    "naive_fd_stream",
    "naive_fd_result",
    "naive_fd_merge",
    "naive_rp_vector",
    "naive_rp_stream",
    "naive_oja_stream",
    "naive_woodbury_solve",
]


def naive_fd_n_shrink(beta, keep):
    return int(min(max(math.floor(beta * (keep + 1) + 1e-9) - 1, 0), keep))


def naive_fd_shrink(B, keep, n_shrink):
    """SVD shrink of the rows of ``B``: returns (new rows (min(keep, n) x d), delta)."""
    n, d = B.shape
    k = min(keep, n)
    if n == 0:
        return np.zeros((0, d)), 0.0
    _, s, vt = np.linalg.svd(B, full_matrices=False)
    s2 = s**2
    delta = float(s2[keep]) if len(s2) > keep else 0.0
    out = np.zeros((k, d))
    first = keep - n_shrink
    for i in range(min(k, len(s2))):
        target = s2[i] - delta if i >= first else s2[i]
        out[i] = math.sqrt(max(target, 0.0)) * vt[i]
    return out, delta


def naive_fd_stream(A, ell, *, fast=True, beta=1.0, rows=None, delta_sum=0.0):
    """Alg. 1 (``fast=False``: ell-row buffer) or Alg. 4 (2 ell rows); PFD when ``beta < 1``.

    Returns (buffer rows, sum of deltas).
    """
    A = np.asarray(A, dtype=float)
    d = A.shape[1]
    cap = 2 * ell if fast else ell
    buf = [] if rows is None else list(np.asarray(rows))
    n_shrink = naive_fd_n_shrink(beta, ell - 1)
    for a in A:
        buf.append(a.copy())
        if len(buf) == cap:
            new, delta = naive_fd_shrink(np.array(buf), ell - 1, n_shrink)
            buf = list(new)
            delta_sum += delta
    return np.array(buf).reshape(-1, d), delta_sum


def naive_fd_result(rows, delta_sum, ell, *, beta=1.0, compensate=False, alpha0=0.0):
    """The published (ell x d) sketch and alpha: one last shrink keeping ell rows (delta = s_{ell+1}^2)."""
    d = rows.shape[1]
    new, delta = naive_fd_shrink(rows, ell, naive_fd_n_shrink(beta, ell))
    total = delta_sum + delta
    sketch = np.zeros((ell, d))
    sketch[: len(new)] = new
    if compensate:
        for i in range(ell):
            sq = sketch[i] @ sketch[i]
            if sq > 0:
                sketch[i] *= math.sqrt((sq + total) / sq)
    return sketch, alpha0 + total / 2.0, total


def naive_fd_merge(rows1, ds1, rows2, ds2, ell, *, fast=True, beta=1.0):
    """Merge = stream the second buffer's rows into the first; the deltas add."""
    rows, ds = naive_fd_stream(rows2, ell, fast=fast, beta=beta, rows=rows1, delta_sum=0.0)
    return rows, ds1 + ds2 + ds


_M64 = (1 << 64) - 1


def _mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _uniform(seed, t, i):
    z = _mix64(seed ^ ((t * 0xD1B54A32D192ED03) & _M64))
    z = _mix64((z + i * 0x9E3779B97F4A7C15 + 0x9E3779B97F4A7C15) & _M64)
    return (z >> 11) * (1.0 / 9007199254740992.0)


def naive_rp_vector(seed, t, m, dist):
    """r_t with Python integers (exact 64-bit arithmetic by masking)."""
    out = np.zeros(m)
    for i in range(m):
        if dist == 0:
            u1 = 1.0 - _uniform(seed, t, 2 * i)
            u2 = _uniform(seed, t, 2 * i + 1)
            out[i] = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2) / math.sqrt(m)
        else:
            u = _uniform(seed, t, i)
            v = math.sqrt(3.0 / m)
            out[i] = v if u < 1 / 6 else (-v if u < 1 / 3 else 0.0)
    return out


def naive_rp_stream(A, m, seed, dist, t0=0, S=None):
    A = np.asarray(A, dtype=float)
    S = np.zeros((m, A.shape[1])) if S is None else S.copy()
    for t, a in enumerate(A):
        S += np.outer(naive_rp_vector(seed, t0 + t, m, dist), a)
    return S


def naive_oja_stream(A, V, lam, t, c):
    """Oja's update with a QR of the updated rows per row."""
    A = np.asarray(A, dtype=float)
    V = V.copy()
    lam = lam.copy()
    for a in A:
        t += 1
        gamma = min(c / t, 1.0)
        p = V @ a
        lam = (1 - gamma) * lam + gamma * p**2
        Vp = V + gamma * np.outer(p, a)
        q, r = np.linalg.qr(Vp.T)  # Gram-Schmidt of the rows, positive R diagonal
        V = (q * np.sign(np.diag(r))).T
    return V, lam, t


def exact_oja_stream(A, V, lam, t, c, digits=100):
    """``naive_oja_stream`` in ``digits``-digit decimal arithmetic (Gram-Schmidt, twice, in place of the QR):
    the reference for rows so long that forming ``V + gamma p a^T`` in float64 loses V in the rounding."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = digits

        def dot(x, y):
            return sum((xi * yi for xi, yi in zip(x, y)), Decimal(0))

        V = [[Decimal(float(x)) for x in row] for row in V]
        for a in np.asarray(A, dtype=float):
            a = [Decimal(float(x)) for x in a]
            t += 1
            gamma = min(Decimal(c) / t, Decimal(1))
            p = [dot(row, a) for row in V]
            Q = []
            for row, pi in zip(V, p):
                w = [vk + gamma * pi * ak for vk, ak in zip(row, a)]
                for _ in range(2):
                    for q in Q:
                        wq = dot(w, q)
                        w = [wk - wq * qk for wk, qk in zip(w, q)]
                norm = dot(w, w).sqrt()
                Q.append([wk / norm for wk in w])
            V = Q
        return np.array([[float(x) for x in row] for row in V]), t


def naive_woodbury_solve(B, alpha, v):
    return np.linalg.solve(B.T @ B + alpha * np.eye(B.shape[1]), v)
