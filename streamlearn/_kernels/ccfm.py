"""Compact convexified factorization machine (CCFM, Lin et al., WWW 2018; Algorithms §7.2-7.4) trained online.

The model of output k is a symmetric (d+1) x (d+1) matrix C = [[Z, w], [w^T, 2 w0]] and the score of x is
``yhat = 1/2 xhat^T C xhat`` with ``xhat = (x, 1)`` (the bias coordinate is the LAST index, d). The decision
set is the trace-norm ball ``||C||_tr <= delta``; the gradient of ``f_t(C) = l(yhat(C), y_t)`` is
``l' 1/2 xhat xhat^T``.

Kernels (one pass over a CSR chunk each; scores before each example's update go to ``out_scores``; examples
with sample weight 0 are scored but neither update nor advance t; ``(t, bad_row)`` is returned as in the
linear kernel):

* ``ccfm_ogd_epoch``: online gradient descent ``C <- Proj_K(C - eta_t l' 1/2 xhat xhat^T)``, eta_t = eta0/sqrt(t),
  projection by a full eigendecomposition (numpy.linalg.eigh) and projection of the eigenvalues onto the
  l1 ball. The projection is skipped only when an upper bound of ||C||_tr (last exact value plus the trace
  norm of the rank-one steps since) shows C is still in the ball, i.e. when it would be the identity.
* ``occfm_dense_epoch``: OCCFM, Alg. 2 of Lin et al. (WWW 2018), with C_1 = 0 and ``gamma_t = min(1, gamma_c / t^gamma_p)``
  (the paper's ``1/sqrt(t)``: gamma_c = 1, gamma_p = 1/2; the classic Frank-Wolfe ``2/t``: 2, 1):
  ``C_{t+1} = (1 - gamma_t) C_t + gamma_t delta sgn(lam) q q^T`` with (lam, q) the largest-|lam| eigenpair
  of ``-grad F_t(C_t) = -(eta S_{t-1} + 2 C_t)``, ``S_{t-1} = sum_{tau<t} l'_tau 1/2 xhat_tau xhat_tau^T``
  (the newest gradient enters F_{t+1} only). Dense state: C = scale * M and S, each (d+1)^2; O(d^2) per
  example plus O(d^2) per Lanczos step.
* ``occfm_lowrank_epoch``: the same algorithm on a shared orthonormal basis W ((d+1) x k, k <= kmax):
  ``C = W A W^T``, ``S ~ W B W^T``. The range of -grad F_t lies in span(W), so the linear step is solved
  exactly on the k x k matrix ``-(eta B + 2 A)``. A new example direction (the part of xhat outside
  span(W)) is appended to W; when W is full it is compressed: A keeps its ``rank`` largest-|eigenvalue|
  eigenpairs (truncation: the trace norm cannot grow, C stays in K), B is shrunk Frequent-Directions style
  (keep ``ell`` eigenpairs, subtract |lam_{ell+1}| from every kept |lam|: ``||S - W B W^T||_2`` grows by at
  most that amount, recorded in ``stats``), and W becomes an orthonormal basis of the kept eigenvectors.
  Nothing is approximated while rank(A) <= rank and rank(B) <= ell. Memory O(d kmax); cost per example
  O(kmax nnz + d kmax + kmax^2 * Lanczos steps), independent of t.

The linear step (LMO) is ``top_abs_eigenpair``: Lanczos with full reorthogonalisation and explicit restarts
(default), or power iteration, on ``H = a1 P1 + a2 P2``, warm-started from the previous eigenvector plus a
small fixed perturbation (so that the Krylov space cannot be stuck in an invariant subspace of the old
vector), stopped when the Ritz residual ``||H q - lam q|| <= tol |lam|``.
"""

import math

import numpy as np

from ._numba import njit_inline, njit_kernel
from .linear import record_score, weighted_row
from .losses import weighted_dloss

LMO_LANCZOS = 0
LMO_POWER = 1

#: Lanczos vectors kept before an explicit restart
LANCZOS_RESTART = 32
#: The largest step ``|a| ||xhat||^2`` of CCFM-OGD's update ``C += a xhat xhat^T``: each entry of ``C`` is at most
#: ``delta`` (the trace-norm ball) before it, so the update keeps ``C`` finite; a larger step is a divergence
MAX_STEP = 1e300

#: weight of the fixed perturbation added to the warm start of the linear step
WARM_START_NOISE = 1e-3

# indices of the per-output diagnostics in ``stats`` (float64)
STAT_MATVECS = 0  # matrix-vector products done by the linear steps
STAT_UNCONVERGED = 1  # linear steps that hit lmo_max_iter before the tolerance
STAT_EIGH = 2  # full eigendecompositions (OGD) / compressions (low-rank)
STAT_PROJECTIONS = 3  # OGD projections that changed C / low-rank: C eigenpairs dropped
STAT_DROPPED_TRACE = 4  # low-rank: trace norm removed from C by truncation (sum over compressions)
STAT_SKETCH_SHRINK = 5  # low-rank: sum of the shrinks of B = bound on ||S - W B W^T||_2
STAT_SKIPPED = 6  # low-rank: directions not appended because W could not be freed
N_STATS = 7


# -------------------------------------------------------------------------------------------------------------
# small dense helpers
@njit_inline
def _norm(v, n):
    """Euclidean norm of ``v[:n]`` (summed left to right)."""
    s = 0.0
    for i in range(n):
        s += v[i] * v[i]
    return math.sqrt(s)


@njit_kernel
def noise_vector(n):
    """A fixed unit vector with pseudo-random entries (deterministic, no state)."""
    r = np.empty(n)
    s = 0.0
    for i in range(n):
        v = math.sin((i + 1) * 12.9898) * 43758.5453
        r[i] = v - math.floor(v) - 0.5
        s += r[i] * r[i]
    s = math.sqrt(s)
    for i in range(n):
        r[i] /= s
    return r


@njit_kernel
def _symv2(P1, a1, P2, a2, n, v, out):
    """out[:n] = (a1 P1 + a2 P2)[:n, :n] @ v[:n]."""
    for i in range(n):
        s1 = 0.0
        s2 = 0.0
        for j in range(n):
            s1 += P1[i, j] * v[j]
            s2 += P2[i, j] * v[j]
        out[i] = a1 * s1 + a2 * s2


@njit_kernel
def tridiag_eigvals(alpha, beta, m, d, e):
    """Eigenvalues (unsorted, into d[:m]) of the symmetric tridiagonal matrix with diagonal alpha[:m] and
    off-diagonal beta[:m-1], by the implicit QL algorithm with Wilkinson shifts (no eigenvectors; O(m^2)).
    ``e`` is a workspace of length >= m. Returns False if an eigenvalue did not converge in 60 sweeps."""
    for i in range(m):
        d[i] = alpha[i]
        e[i] = beta[i] if i < m - 1 else 0.0
    for ll in range(m):
        it = 0
        while True:
            mm = ll
            while mm < m - 1:
                dd = abs(d[mm]) + abs(d[mm + 1])
                if abs(e[mm]) <= 2.2e-16 * dd + 1e-300:
                    break
                mm += 1
            if mm == ll:
                break
            it += 1
            if it > 60:
                return False
            g = (d[ll + 1] - d[ll]) / (2.0 * e[ll])
            r = math.hypot(g, 1.0)
            g = d[mm] - d[ll] + e[ll] / (g + math.copysign(r, g))
            s = 1.0
            c = 1.0
            p = 0.0
            i = mm - 1
            underflow = False
            while i >= ll:
                f = s * e[i]
                b = c * e[i]
                r = math.hypot(f, g)
                e[i + 1] = r
                if r == 0.0:
                    d[i + 1] -= p
                    e[mm] = 0.0
                    underflow = True
                    break
                s = f / r
                c = g / r
                g = d[i + 1] - p
                r = (d[i] - g) * s + 2.0 * c * b
                p = s * r
                d[i + 1] = g + p
                g = c * r - b
                i -= 1
            if underflow:
                continue
            d[ll] -= p
            e[ll] = g
            e[mm] = 0.0
    return True


@njit_kernel
def tridiag_solve(dl, dd, du, b, n, tiny):
    """Solve a tridiagonal system in place (b <- x) by Gaussian elimination with partial pivoting (LAPACK
    dgtsv's scheme); dl, dd, du (sub-, main, super-diagonal) are overwritten. Zero pivots become ``tiny``
    (as in inverse iteration, where the matrix is singular on purpose)."""
    for i in range(n - 1):
        if abs(dd[i]) >= abs(dl[i]):
            if dd[i] == 0.0:
                dd[i] = tiny
            fact = dl[i] / dd[i]
            dd[i + 1] -= fact * du[i]
            b[i + 1] -= fact * b[i]
            dl[i] = 0.0
        else:
            fact = dd[i] / dl[i]
            dd[i] = dl[i]
            temp = dd[i + 1]
            dd[i + 1] = du[i] - fact * temp
            if i < n - 2:
                dl[i] = du[i + 1]
                du[i + 1] = -fact * dl[i]
            else:
                dl[i] = 0.0
            du[i] = temp
            temp = b[i]
            b[i] = b[i + 1]
            b[i + 1] = temp - fact * b[i + 1]
    if dd[n - 1] == 0.0:
        dd[n - 1] = tiny
    b[n - 1] /= dd[n - 1]
    if n > 1:
        b[n - 2] = (b[n - 2] - du[n - 2] * b[n - 1]) / dd[n - 2]
    for i in range(n - 3, -1, -1):
        b[i] = (b[i] - du[i] * b[i + 1] - dl[i] * b[i + 2]) / dd[i]


@njit_kernel
def tridiag_top_abs(alpha, beta, m, s_out, work):
    """Largest-|theta| eigenpair of the tridiagonal (alpha[:m], beta[:m-1]): QL eigenvalues, then two steps
    of inverse iteration for the unit eigenvector (into s_out[:m]). ``work`` is (5, >= m). Returns theta."""
    d = work[0]
    e = work[1]
    if not tridiag_eigvals(alpha, beta, m, d, e):
        T = np.zeros((m, m))
        for i in range(m):
            T[i, i] = alpha[i]
            if i > 0:
                T[i, i - 1] = beta[i - 1]
                T[i - 1, i] = beta[i - 1]
        lam, U = np.linalg.eigh(T)
        idx = 0
        for i in range(1, m):
            if abs(lam[i]) > abs(lam[idx]):
                idx = i
        for i in range(m):
            s_out[i] = U[i, idx]
        return lam[idx]
    idx = 0
    for i in range(1, m):
        if abs(d[i]) > abs(d[idx]):
            idx = i
    theta = d[idx]
    if m == 1:
        s_out[0] = 1.0
        return theta
    r = noise_vector(m)
    for i in range(m):
        s_out[i] = r[i]
    scale = 0.0
    for i in range(m):
        scale = max(scale, abs(alpha[i]) + (2.0 * abs(beta[i]) if i < m - 1 else 0.0))
    tiny = 2.2e-16 * scale + 1e-300
    dl = work[2]
    dd = work[3]
    du = work[4]
    for _it in range(3):
        for i in range(m):
            dd[i] = alpha[i] - theta
            if i < m - 1:
                dl[i] = beta[i]
                du[i] = beta[i]
        tridiag_solve(dl, dd, du, s_out, m, tiny)
        nrm = _norm(s_out, m)
        if not (nrm > 0.0 and math.isfinite(nrm)):
            for i in range(m):
                s_out[i] = r[i]
            break
        for i in range(m):
            s_out[i] /= nrm
    return theta


@njit_kernel
def top_abs_eigenpair(P1, a1, P2, a2, n, v0, method, tol, max_iter, Vw, w, out_q):
    """Largest-|lambda| eigenpair of the symmetric ``H = a1 P1[:n, :n] + a2 P2[:n, :n]``.

    ``v0[:n]`` is the start vector (a fixed vector if it is zero); ``Vw`` ((m+1) x >= n) and ``w`` (>= n) are
    workspaces, m the Lanczos restart length. Writes the unit eigenvector to ``out_q[:n]`` and returns
    ``(lam, n_matvec, converged)``; ``lam = 0`` (and ``out_q`` meaningless) when H = 0 or n = 0.
    """
    if n == 0:
        return 0.0, 0, True
    nrm = _norm(v0, n)
    if nrm > 0.0:
        for i in range(n):
            Vw[0, i] = v0[i] / nrm
    else:
        r = noise_vector(n)
        for i in range(n):
            Vw[0, i] = r[i]
    total = 0
    lam = 0.0
    if method == LMO_POWER:
        while True:
            _symv2(P1=P1, a1=a1, P2=P2, a2=a2, n=n, v=Vw[0], out=w)
            total += 1
            lam = 0.0
            wn = 0.0
            for i in range(n):
                lam += Vw[0, i] * w[i]
                wn += w[i] * w[i]
            wn = math.sqrt(wn)
            if wn == 0.0:
                for i in range(n):
                    out_q[i] = Vw[0, i]
                return 0.0, total, True
            res = 0.0
            for i in range(n):
                e = w[i] - lam * Vw[0, i]
                res += e * e
            res = math.sqrt(res)
            if res <= tol * abs(lam) or total >= max_iter:
                for i in range(n):
                    out_q[i] = Vw[0, i]
                return lam, total, res <= tol * abs(lam)
            for i in range(n):
                Vw[0, i] = w[i] / wn
    m = min(Vw.shape[0] - 1, n)
    alpha = np.zeros(m)
    beta = np.zeros(m)
    coef = np.zeros(m)
    work = np.zeros((5, m))
    converged = False
    while True:
        nsteps = 0
        for j in range(m):
            _symv2(P1=P1, a1=a1, P2=P2, a2=a2, n=n, v=Vw[j], out=w)
            total += 1
            a = 0.0
            for i in range(n):
                a += w[i] * Vw[j, i]
            alpha[j] = a
            for _rep in range(2):  # full reorthogonalisation, twice
                for jj in range(j + 1):
                    c = 0.0
                    for i in range(n):
                        c += w[i] * Vw[jj, i]
                    for i in range(n):
                        w[i] -= c * Vw[jj, i]
            b = _norm(w, n)
            beta[j] = b
            lam = tridiag_top_abs(alpha, beta, j + 1, coef, work)
            nsteps = j + 1
            res = abs(b * coef[j])
            invariant = b <= 1e-14 * (abs(lam) + 1e-300) or j + 1 == n
            if res <= tol * abs(lam) or invariant or lam == 0.0:
                converged = True
                break
            if total >= max_iter:
                break
            for i in range(n):
                Vw[j + 1, i] = w[i] / b
        s = 0.0
        for i in range(n):
            acc = 0.0
            for jj in range(nsteps):
                acc += coef[jj] * Vw[jj, i]
            out_q[i] = acc
            s += acc * acc
        s = math.sqrt(s)
        if s > 0.0:
            for i in range(n):
                out_q[i] /= s
        if converged or total >= max_iter:
            return lam, total, converged
        for i in range(n):
            Vw[0, i] = out_q[i]


@njit_kernel
def _lmo_solver(n, method, tol, max_iter):
    """The eigen-solver of the linear steps of one pass, for problems of size up to n: ``(method, tol,
    max_iter, noise, (Vw, w, q, v0))``, ``noise`` the fixed perturbation of the warm starts, then the
    workspaces (the eigenvector of the last step is ``q``)."""
    m = min(n, LANCZOS_RESTART)
    width = max(n, 1)
    workspace = np.zeros((m + 1, width)), np.zeros(width), np.zeros(width), np.zeros(width)
    return method, tol, max_iter, noise_vector(width), workspace


@njit_inline
def _linear_step(P1, a1, P2, a2, n, warm, solver, stats):
    """The linear step of OCCFM: the largest-|lambda| eigenpair of ``a1 P1 + a2 P2`` (n x n), started from
    ``warm`` plus the fixed perturbation ``WARM_START_NOISE noise``; the vector goes to ``q`` of ``solver``
    (see :func:`_lmo_solver`), the matrix-vector products and an unconverged solve are counted in ``stats``
    (one output's row). Returns lambda."""
    method, tol, max_iter, noise, workspace = solver
    Vw, w, q, v0 = workspace
    for j in range(n):
        v0[j] = warm[j] + WARM_START_NOISE * noise[j]
    lam, nmv, ok = top_abs_eigenpair(
        P1=P1, a1=a1, P2=P2, a2=a2, n=n, v0=v0, method=method, tol=tol, max_iter=max_iter, Vw=Vw, w=w, out_q=q
    )
    stats[STAT_MATVECS] += nmv
    if not ok:
        stats[STAT_UNCONVERGED] += 1.0
    return lam


@njit_inline
def _add_vertex(C, a, q, n, warm):
    """``C[:n, :n] += a q q^T`` (exactly symmetric) and ``warm[:n] = q[:n]``, the start of the next linear step."""
    for r in range(n):
        qr = q[r]
        for c in range(n):
            C[r, c] += a * (qr * q[c])
    for j in range(n):
        warm[j] = q[j]


@njit_kernel
def dense_quad(M, indices, data, start, end):
    """xhat^T M xhat over the active indices of the CSR row and the bias (last index); O((nnz+1)^2)."""
    b = M.shape[0] - 1
    acc = M[b, b]
    for p in range(start, end):
        i = np.uintp(indices[p])
        xi = data[p]
        acc += xi * (M[i, b] + M[b, i])
        for q in range(start, end):
            acc += xi * M[i, np.uintp(indices[q])] * data[q]
    return acc


@njit_kernel
def _dense_rank_one_active(M, a, indices, data, start, end):
    """M += a xhat xhat^T on the active indices of the row and the bias."""
    b = M.shape[0] - 1
    M[b, b] += a
    for p in range(start, end):
        i = np.uintp(indices[p])
        xi = data[p]
        M[i, b] += a * xi
        M[b, i] += a * xi
        for q in range(start, end):
            M[i, np.uintp(indices[q])] += a * (xi * data[q])  # a * (x_i x_j): exactly symmetric


@njit_kernel
def _xhat_sqnorm(data, start, end):
    s = 1.0
    for p in range(start, end):
        s += data[p] * data[p]
    return s


@njit_kernel
def project_l1_ball(lam, radius):
    """Euclidean projection of the vector ``lam`` onto {v : sum |v_i| <= radius} (returns a new array)."""
    n = lam.shape[0]
    a = np.abs(lam)
    total = a.sum()
    if total <= radius:
        return lam.copy()
    u = np.sort(a)[::-1]
    css = 0.0
    theta = 0.0
    for j in range(n):
        css += u[j]
        th = (css - radius) / (j + 1)
        if u[j] - th > 0.0:
            theta = th
    out = np.empty(n)
    for i in range(n):
        v = a[i] - theta
        out[i] = math.copysign(v, lam[i]) if v > 0.0 else 0.0
    return out


# -------------------------------------------------------------------------------------------------------------
# dense state: scores, OGD, OCCFM exact
@njit_kernel
def ccfm_dense_scores(indptr, indices, data, M, scale, out):
    """out[i, k] = 1/2 scale[k] xhat_i^T M[k] xhat_i; O(K nnz^2)."""
    for i in range(indptr.shape[0] - 1):
        for k in range(M.shape[0]):
            out[i, k] = 0.5 * scale[k] * dense_quad(M[k], indices, data, indptr[i], indptr[i + 1])
    return out


@njit_kernel
def ccfm_ogd_epoch(indptr, indices, data, targets, sample_weight, C, tn_bound, loss, delta, eta0, t, stats, out_scores):
    """Online gradient descent with projection onto {||C||_tr <= delta} (see the module docstring).

    ``C`` (K, n, n) and ``tn_bound`` (K,) (an upper bound of each ||C_k||_tr) are updated in place; ``stats``
    (K, N_STATS) counts eigendecompositions and effective projections. A bad row (its score not finite, or its
    step ``a xhat xhat^T`` beyond :data:`MAX_STEP` in size, which could make ``C`` infinite) stops the pass before
    its update and is not counted in ``t``.
    """
    n_rows = indptr.shape[0] - 1
    n_out = C.shape[0]
    for i in range(n_rows):
        t_before = t
        start, end, sw, t = weighted_row(indptr, sample_weight, i, t)
        for k in range(n_out):
            z = 0.5 * dense_quad(C[k], indices, data, start, end)
            if not record_score(out_scores, i, k, z):
                return t_before, i
            g = weighted_dloss(loss, targets[i, k], z, sw)
            if g == 0.0:
                continue
            a = -eta0 / math.sqrt(t) * 0.5 * g
            xs = _xhat_sqnorm(data, start, end)
            if not (abs(a) * xs <= MAX_STEP):  # (also NaN) C's entries are at most delta before the step
                return t_before, i
            _dense_rank_one_active(C[k], a, indices, data, start, end)
            tn_bound[k] += abs(a) * xs
            if tn_bound[k] <= delta:
                continue
            lam, Q = np.linalg.eigh(C[k])
            stats[k, STAT_EIGH] += 1.0
            tn = np.abs(lam).sum()
            if tn <= delta:
                tn_bound[k] = tn
                continue
            lp = project_l1_ball(lam, delta)
            stats[k, STAT_PROJECTIONS] += 1.0
            n = C.shape[1]
            Ck = C[k]
            Ck[:, :] = 0.0
            for c in range(n):
                if lp[c] == 0.0:
                    continue
                for r in range(n):
                    qr = lp[c] * Q[r, c]
                    for s in range(r, n):
                        Ck[r, s] += qr * Q[s, c]
            for r in range(n):
                for s in range(r + 1, n):
                    Ck[s, r] = Ck[r, s]
            tn_bound[k] = np.abs(lp).sum()
    return t, -1


@njit_inline
def _occfm_round(loss, y, z, sw, t, gamma_c, gamma_p):
    """``(g, gamma)`` of round ``t`` of OCCFM for an example of target ``y``, score ``z`` and sample weight ``sw``: the
    weighted loss derivative ``g = sw l'(z)`` (the example's gradient is ``g/2 xhat xhat^T``) and the step size
    ``gamma_t = min(1, gamma_c / t^gamma_p)``."""
    return weighted_dloss(loss, y, z, sw), min(1.0, gamma_c / t**gamma_p)


@njit_kernel
def occfm_dense_epoch(
    indptr,
    indices,
    data,
    targets,
    sample_weight,
    M,
    scale,
    S,
    q_prev,
    loss,
    delta,
    eta,
    gamma_c,
    gamma_p,
    lmo,
    lmo_tol,
    lmo_max_iter,
    t,
    stats,
    out_scores,
):
    """OCCFM (Lin et al., WWW 2018, Alg. 2) with dense state, C_1 = 0 and gamma_t = min(1, gamma_c / t^gamma_p) (the
    paper: gamma_c = 1, gamma_p = 1/2; module docstring).

    ``M`` (K, n, n) and ``scale`` (K,) hold C_k = scale[k] M[k]; ``S`` (K, n, n) is the sum of past gradients
    divided by nothing (exact); ``q_prev`` (K, n) the last linear-step eigenvector (warm start).
    """
    n_rows = indptr.shape[0] - 1
    n_out = M.shape[0]
    n = M.shape[1]
    solver = _lmo_solver(n, lmo, lmo_tol, lmo_max_iter)
    q = solver[4][2]
    for i in range(n_rows):
        start, end, sw, t = weighted_row(indptr, sample_weight, i, t)
        for k in range(n_out):
            z = 0.5 * scale[k] * dense_quad(M[k], indices, data, start, end)
            if not record_score(out_scores, i, k, z):
                return t, i
            if sw == 0.0:
                continue
            g, gamma = _occfm_round(loss=loss, y=targets[i, k], z=z, sw=sw, t=t, gamma_c=gamma_c, gamma_p=gamma_p)
            # linear step on -grad F_t(C_t) = -(eta S_{t-1} + 2 C_t)
            lam = _linear_step(
                P1=S[k], a1=-eta, P2=M[k], a2=-2.0 * scale[k], n=n, warm=q_prev[k], solver=solver, stats=stats[k]
            )
            # C_{t+1} = (1 - gamma) C_t + gamma delta sgn(lam) q q^T, with the (1 - gamma) kept in scale
            c = scale[k] * (1.0 - gamma)
            if c < 1e-100:
                Mk = M[k]
                for a_ in range(n):
                    for b_ in range(n):
                        Mk[a_, b_] *= c
                c = 1.0
            scale[k] = c
            if lam != 0.0:
                _add_vertex(M[k], gamma * delta * (1.0 if lam > 0.0 else -1.0) / c, q, n, q_prev[k])
            # the newest gradient enters F_{t+1}
            if g != 0.0:
                _dense_rank_one_active(S[k], 0.5 * g, indices, data, start, end)
    return t, -1


# -------------------------------------------------------------------------------------------------------------
# low-rank state (scalable OCCFM)
@njit_kernel
def _basis_coords(W, k, kd, indices, data, start, end, z):
    """z[:kd] = W[k][:, :kd]^T xhat (sparse xhat, bias last); O(kd nnz)."""
    b = W.shape[1] - 1
    for c in range(kd):
        z[c] = W[k, b, c]
    for p in range(start, end):
        j = np.uintp(indices[p])
        x = data[p]
        for c in range(kd):
            z[c] += x * W[k, j, c]


@njit_kernel
def _small_quad(A, k, kd, z):
    acc = 0.0
    for a in range(kd):
        s = 0.0
        for b in range(kd):
            s += A[k, a, b] * z[b]
        acc += z[a] * s
    return acc


@njit_kernel
def ccfm_lowrank_scores(indptr, indices, data, W, A, kdim, out):
    """out[i, k] = 1/2 xhat_i^T W_k A_k W_k^T xhat_i; O(K (kd nnz + kd^2))."""
    z = np.zeros(W.shape[2] + 1)
    for i in range(indptr.shape[0] - 1):
        for k in range(W.shape[0]):
            kd = kdim[k]
            _basis_coords(W=W, k=k, kd=kd, indices=indices, data=data, start=indptr[i], end=indptr[i + 1], z=z)
            out[i, k] = 0.5 * _small_quad(A, k, kd, z)
    return out


@njit_kernel
def _residual(W, k, kd, indices, data, start, end, z, p):
    """p = xhat - W z (dense, length n); returns ||p||^2."""
    n = W.shape[1]
    for i in range(n):
        acc = 0.0
        for c in range(kd):
            acc += W[k, i, c] * z[c]
        p[i] = -acc
    p[n - 1] += 1.0
    for q in range(start, end):
        p[np.uintp(indices[q])] += data[q]
    s = 0.0
    for i in range(n):
        s += p[i] * p[i]
    return s


@njit_kernel
def _reorthogonalise(W, k, kd, z, p, z2):
    """p -= W (W^T p), z += W^T p (second Gram-Schmidt pass); returns the new ||p||^2."""
    n = W.shape[1]
    for c in range(kd):
        z2[c] = 0.0
    for i in range(n):
        pi = p[i]
        for c in range(kd):
            z2[c] += W[k, i, c] * pi
    s = 0.0
    for i in range(n):
        acc = 0.0
        for c in range(kd):
            acc += W[k, i, c] * z2[c]
        p[i] -= acc
        s += p[i] * p[i]
    for c in range(kd):
        z[c] += z2[c]
    return s


@njit_kernel
def _outside_part(W, k, kd, x, z, p, z2, xsq):
    """``p`` = the part of xhat outside the basis ``W[k][:, :kd]`` (``z`` its coordinates in the basis; ``x =
    (indices, data, start, end)`` the CSR row) by one Gram-Schmidt pass (:func:`_residual`), and a second
    (:func:`_reorthogonalise`) when the first left less than half of ``||xhat||^2 = xsq``; returns ``||p||^2``."""
    indices, data, start, end = x
    ps = _residual(W=W, k=k, kd=kd, indices=indices, data=data, start=start, end=end, z=z, p=p)
    if ps < 0.5 * xsq:
        ps = _reorthogonalise(W, k, kd, z, p, z2)
    return ps


@njit_kernel
def _kept_eigenpairs(X, kd, budget):
    """Eigenpairs of the symmetric X[:kd, :kd] with the ``budget`` largest |eigenvalues| (non-zero ones only).

    Returns (vals, vecs (kd x m), dropped_abs_sum, delta) with delta = |lam_{budget+1}| (0 when no non-zero
    eigenvalue is dropped), the shrinkage a Frequent-Directions step subtracts from every kept |lam|."""
    lam, U = np.linalg.eigh(np.ascontiguousarray(X[:kd, :kd]))
    order = np.argsort(-np.abs(lam))
    top = 0.0
    if kd > 0:
        top = abs(lam[order[0]])
    nz = 0
    for i in range(kd):
        if abs(lam[order[i]]) > 1e-13 * top:
            nz += 1
    m = min(nz, budget)
    dlt = 0.0
    if nz > budget:
        dlt = abs(lam[order[budget]])
    dropped = 0.0
    for i in range(m, kd):
        dropped += abs(lam[order[i]])
    vals = np.empty(m)
    vecs = np.empty((kd, m))
    for c in range(m):
        v = lam[order[c]]
        vals[c] = v
        for r in range(kd):
            vecs[r, c] = U[r, order[c]]
    return vals, vecs, dropped, dlt


@njit_kernel
def _compress(W, A, B, u_prev, k, kd, rank, ell, stats):
    """Shrink the basis of output k from kd to <= rank + ell vectors (module docstring); returns the new kd."""
    n = W.shape[1]
    va, Ua, dropped, _ = _kept_eigenpairs(A[k], kd, rank)
    vb, Ub, _, dlt = _kept_eigenpairs(B[k], kd, ell)
    for c in range(vb.shape[0]):
        vb[c] = math.copysign(abs(vb[c]) - dlt, vb[c])
    stats[k, STAT_EIGH] += 1.0
    stats[k, STAT_DROPPED_TRACE] += dropped
    stats[k, STAT_SKETCH_SHRINK] += dlt
    stats[k, STAT_PROJECTIONS] += kd - Ua.shape[1]
    ma = Ua.shape[1]
    mb = Ub.shape[1]
    # orthonormal basis O of span([Ua, Ub]) in R^kd (modified Gram-Schmidt, twice, dropping dependent columns)
    O = np.zeros((kd, ma + mb))
    k2 = 0
    for c in range(ma + mb):
        v = np.empty(kd)
        for r in range(kd):
            v[r] = Ua[r, c] if c < ma else Ub[r, c - ma]
        for _rep in range(2):
            for cc in range(k2):
                d = 0.0
                for r in range(kd):
                    d += O[r, cc] * v[r]
                for r in range(kd):
                    v[r] -= d * O[r, cc]
        nv = _norm(v, kd)
        if nv > 1e-8:
            for r in range(kd):
                O[r, k2] = v[r] / nv
            k2 += 1
    # A <- O^T (Ua diag(va) Ua^T) O, B likewise, u_prev <- O^T u_prev
    Ot = np.ascontiguousarray(O[:, :k2].T)
    Pa = Ot @ Ua
    Pb = Ot @ Ub
    An = (Pa * va) @ np.ascontiguousarray(Pa.T)
    Bn = (Pb * vb) @ np.ascontiguousarray(Pb.T)
    un = Ot @ np.ascontiguousarray(u_prev[k, :kd])
    kmax = W.shape[2]
    for r in range(kmax):
        for c in range(kmax):
            A[k, r, c] = 0.0
            B[k, r, c] = 0.0
        u_prev[k, r] = 0.0
    for r in range(k2):
        u_prev[k, r] = un[r]
        for c in range(k2):
            A[k, r, c] = 0.5 * (An[r, c] + An[c, r])
            B[k, r, c] = 0.5 * (Bn[r, c] + Bn[c, r])
    # W <- W O, row by row
    tmp = np.empty(k2)
    for i in range(n):
        for c2 in range(k2):
            tmp[c2] = 0.0
        for c in range(kd):
            wic = W[k, i, c]
            if wic != 0.0:
                for c2 in range(k2):
                    tmp[c2] += wic * O[c, c2]
        for c2 in range(k2):
            W[k, i, c2] = tmp[c2]
        for c in range(k2, kmax):
            W[k, i, c] = 0.0
    return k2


@njit_kernel
def occfm_lowrank_epoch(
    indptr,
    indices,
    data,
    targets,
    sample_weight,
    W,
    A,
    B,
    kdim,
    u_prev,
    loss,
    delta,
    eta,
    gamma_c,
    gamma_p,
    rank,
    ell,
    lmo,
    lmo_tol,
    lmo_max_iter,
    t,
    stats,
    out_scores,
):
    """Scalable OCCFM (module docstring): ``W`` (K, n, kmax) orthonormal columns [:kdim[k]], ``A``, ``B``
    (K, kmax, kmax) with C_k = W A W^T and S_k ~ W B W^T, ``u_prev`` (K, kmax) the last linear-step vector
    in basis coordinates. All updated in place."""
    n_rows = indptr.shape[0] - 1
    n_out = W.shape[0]
    n = W.shape[1]
    kmax = W.shape[2]
    solver = _lmo_solver(kmax, lmo, lmo_tol, lmo_max_iter)
    q = solver[4][2]
    z = np.zeros(kmax + 1)
    z2 = np.zeros(kmax + 1)
    p = np.zeros(n)
    for i in range(n_rows):
        start, end, sw, t = weighted_row(indptr, sample_weight, i, t)
        for k in range(n_out):
            kd = kdim[k]
            _basis_coords(W=W, k=k, kd=kd, indices=indices, data=data, start=start, end=end, z=z)
            zs = 0.5 * _small_quad(A, k, kd, z)
            if not record_score(out_scores, i, k, zs):
                return t, i
            if sw == 0.0:
                continue
            g, gamma = _occfm_round(loss=loss, y=targets[i, k], z=zs, sw=sw, t=t, gamma_c=gamma_c, gamma_p=gamma_p)
            # linear step, exactly, in the basis: -(eta B + 2 A)
            lam = _linear_step(P1=B[k], a1=-eta, P2=A[k], a2=-2.0, n=kd, warm=u_prev[k], solver=solver, stats=stats[k])
            for r_ in range(kd):
                for c_ in range(kd):
                    A[k, r_, c_] *= 1.0 - gamma
            if lam != 0.0:
                _add_vertex(A[k], gamma * delta * (1.0 if lam > 0.0 else -1.0), q, kd, u_prev[k])
            if g == 0.0:
                continue
            # the newest gradient: g/2 xhat xhat^T, in the basis extended by xhat's new direction
            xsq = _xhat_sqnorm(data, start, end)
            ps = _outside_part(W=W, k=k, kd=kd, x=(indices, data, start, end), z=z, p=p, z2=z2, xsq=xsq)
            if ps > 1e-20 * xsq:
                if kd == kmax:
                    kd = _compress(W=W, A=A, B=B, u_prev=u_prev, k=k, kd=kd, rank=rank, ell=ell, stats=stats)
                    kdim[k] = kd
                    _basis_coords(W=W, k=k, kd=kd, indices=indices, data=data, start=start, end=end, z=z)
                    ps = _outside_part(W=W, k=k, kd=kd, x=(indices, data, start, end), z=z, p=p, z2=z2, xsq=xsq)
                if kd < kmax and ps > 1e-20 * xsq:
                    pn = math.sqrt(ps)
                    for j in range(n):
                        W[k, j, kd] = p[j] / pn
                    z[kd] = pn
                    for c_ in range(kd + 1):
                        A[k, kd, c_] = 0.0
                        A[k, c_, kd] = 0.0
                        B[k, kd, c_] = 0.0
                        B[k, c_, kd] = 0.0
                    u_prev[k, kd] = 0.0
                    kd += 1
                    kdim[k] = kd
                elif ps > 1e-20 * xsq:
                    stats[k, STAT_SKIPPED] += 1.0
            hg = 0.5 * g
            for r_ in range(kd):
                zr = z[r_]
                for c_ in range(kd):
                    B[k, r_, c_] += hg * (zr * z[c_])
    return t, -1
