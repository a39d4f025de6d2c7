"""Second-order online learners (Algorithms §6.2-6.4): AdaGrad, full online Newton step, sketched ONS.

Common per-example protocol (RFD paper Alg. 3 / 6, C = the slab radius, mu_t = ``mu``, eta_t = eta / t):

1. the state holds the pending unprojected point ``u`` (``w`` below; 0 at the start);
2. example t arrives: project ``u`` onto ``K_t = {w : |w.x_t| <= C}`` in the H-norm (H = the matrix after
   the previous update), giving ``w_t``; the pre-update score is ``w_t . x_t`` (= clip(u.x_t, -C, C));
3. ``g = w_eight * l'(w_t.x_t, y_t) x_t``; the sketch receives the row ``sqrt(mu + eta_t) g``;
4. ``u <- w_t - H^{-1} g`` with the post-update H.

Sketches for the SON kernel (``son_epoch``) all expose ``H = B^T B + alpha I`` through the same three
arrays: ``buf`` (cap, d) rows, ``gram`` (cap, cap) with ``gram = buf buf^T`` and ``sc`` (cap,) scales, the
effective sketch being ``B = diag(sc) buf[:r]``. FD / PFD / RFD (doubling buffer, cap = 2 ell, keep = ell - 1,
Alg. 6's ell zero rows at the start) use the FD kernels of ``fd.py``/``rfd.py`` and ``sc = 1``; RP keeps
``S`` (ell rows) and borders its Gram matrix; Oja keeps orthonormal V (gram = I) and ``sc = sqrt(t lam)``.
``H^{-1} v`` is computed by Woodbury, ``(v - B^T (BB^T + alpha I)^{-1} B v) / alpha``, O(r d + r^3): never
d x d. With alpha = 0 (RFD0-SON before its first non-trivial shrink), or alpha <= 1e-12 tr(B B^T) (a shrink
that subtracted a rounding-level delta), the pseudo-inverse is used:
``H^+ v = B^T (BB^T)^{+2} B v`` and the projection takes the better of App. A's two candidates.
"""

import math
from collections import namedtuple

import numpy as np

from ._numba import njit_inline, njit_kernel
from .fd import block_matvec, fd_append_csr_row, fd_shrink
from .linear import _all_finite, record_score, sparse_row_dot
from .losses import loss_dloss, weighted_dloss
from .oja import REORTH_EVERY, _oja_gamma, _oja_orthonormalise, oja_reorthonormalise
from .rp import rp_row_vector

SKETCH_FD = 0
SKETCH_PFD = 1
SKETCH_RFD = 2
SKETCH_RP = 3
SKETCH_OJA = 4

#: relative eigenvalue threshold below which a direction of B B^T counts as zero (pseudo-inverse phase)
PINV_TOL = 1.0e-12
#: ||x_perp||^2 / x.x below which x counts as lying in B's row space (rounding level of x.x - y.Bx)
PERP_TOL = 1.0e-9
#: full-on: the largest term ``|f pg_a pg_b|`` of a Sherman-Morrison update of P (a larger one, only from
#: rounding that lost P's positive semi-definiteness on extreme values, refuses the example): entries of P below
#: 2**1023 stay finite
P_SAFE_TERM = 2.0**1000
#: the slab projection's denominator x.(alpha H^{-1} x) / x.x below which it is recomputed by ``_split_step``
#: (the direct difference has lost too many digits)
CANCEL_TOL = 1.0e-6

#: Oja's sketch in SON: the bound on ``cc |p|^2`` (``cc = 2 gamma + gamma^2 |a|^2``, ``p = V a``: each factor
#: ``1 + a_i p_i^2`` of the orthonormalisation is at most ``1 + cc |p|^2``) and on ``t |p|^2`` (``t lam``, the
#: squared scales) of an update; an example beyond it (a gradient row of size 1e140 or more) is refused as
#: diverging, before any write
OJA_SAFE = 2.0**900

#: The arrays of the model that the SON kernels update in place, one entry per output (K outputs, d features,
#: ``cap`` buffer rows): ``w`` (K, d) pending points, ``buf`` (K, cap, d) sketch rows, ``gram`` (K, cap, cap)
#: their Gram matrix, ``sc`` (K, cap) row scales, ``aux`` (K, cap) Oja's eigenvalues, ``n_rows`` (K,) int64 rows
#: in use, ``alpha`` (K,) the alpha of ``H = B^T B + alpha I``.
SonState = namedtuple("SonState", ["w", "buf", "gram", "sc", "aux", "n_rows", "alpha"])
#: The Newton step's settings: ``loss`` code (losses.py), slab radius ``C``, ``mu`` and ``eta`` (eta_t = eta / t),
#: ``slab_current`` (bool, see ``son_epoch``).
SonStep = namedtuple("SonStep", ["loss", "C", "mu", "eta", "slab_current"])
#: The sketch's settings: ``kind`` (``SKETCH_*``), the FD family's ``keep`` rows and ``n_shrink`` (how many of
#: them a shrink touches, fd.py), RP's hash ``seed`` (uint64) and row distribution ``rp_dist`` (rp.py), Oja's
#: step constant ``oja_c``.
SonSketch = namedtuple("SonSketch", ["kind", "keep", "n_shrink", "seed", "rp_dist", "oja_c"])


@njit_kernel
def _tau(z, C):
    if z > C:
        return z - C
    if z < -C:
        return z + C
    return 0.0


@njit_kernel
def _slab_tau(wk, indices, data, st, en, C):
    """``tau_C(w.x)`` for the sparse row ``st:en``: how far w is outside the slab ``|w.x| <= C``."""
    z = 0.0
    for p in range(st, en):
        z += wk[indices[p]] * data[p]
    return _tau(z, C)


@njit_kernel
def row_outcome(out, i, k, z, sw, targets, loss, xx):
    """Record output k's score ``z`` of example i and weigh its loss derivative: returns ``(go, dl, learned)``.

    ``go`` is -1 when the score is not finite (the pass stops at example i), 0 when the example has weight 0
    (nothing is learned from it nor projected onto its slab), 1 otherwise; ``dl = sw_i l'(z, y_ik)`` and
    ``learned``: the gradient ``dl x`` is not zero (``xx = x.x``).
    """
    if not record_score(out, i, k, z):
        return -1, 0.0, False
    if sw[i] == 0.0:
        return 0, 0.0, False
    dl = weighted_dloss(loss, targets[i, k], z, sw[i])
    return 1, dl, dl != 0.0 and xx != 0.0


@njit_inline
def _row_step(weight, t, eta):
    """``(learn, t, eta_t)`` of an example of weight ``weight``: an example of weight 0 is scored and changes
    nothing, the count ``t`` of examples learned from included; ``eta_t = eta / t`` (0 before the first)."""
    learn = weight != 0.0
    if learn:
        t += 1
    return learn, t, eta / t if t > 0 else 0.0


# ------------------------------------------------------------------------------------------------ AdaGrad
@njit_kernel
def _adagrad_project(wk, sk, alpha0, indices, data, st, en, tau, move):
    """Project ``wk`` onto ``|w.x| <= C`` in the diag(h) norm; returns whether it moved (``move=False``: whether
    it would, ``wk`` left as it is: the score of the projected point of an example of weight 0)."""
    den = 0.0
    for p in range(st, en):
        j = indices[p]
        h = alpha0 + math.sqrt(sk[j])
        if h > 0.0:
            den += data[p] * data[p] / h
    if not den > 0.0:
        return False
    if not move:
        return True
    f = tau / den
    for p in range(st, en):
        j = indices[p]
        h = alpha0 + math.sqrt(sk[j])
        if h > 0.0:
            wk[j] -= f * data[p] / h
    return True


@njit_kernel
def adagrad_epoch(indptr, indices, data, targets, sw, w, s, alpha0, eta, C, loss, project, slab_current, out):
    """Diagonal AdaGrad with slab projection in the diag(h) norm (Algorithms §6.2), K outputs.

    ``w`` (K, d), ``s`` (K, d) sums of squared gradients; ``h = alpha0 + sqrt(s)``. ``slab_current``: project
    the updated point onto the current example's slab (post-update h) instead of projecting the pending point
    onto the next example's slab before predicting it. Returns the index of the first non-finite score or -1.
    """
    n = indptr.shape[0] - 1
    K = w.shape[0]
    for i in range(n):
        st = indptr[i]
        en = indptr[i + 1]
        move = sw[i] != 0.0  # an example of weight 0 is scored by the projected point and changes nothing
        for k in range(K):
            z = sparse_row_dot(w, k, indices, data, st, en)
            tau = _tau(z, C) if project and not slab_current else 0.0
            if tau != 0.0:
                if _adagrad_project(
                    wk=w[k], sk=s[k], alpha0=alpha0, indices=indices, data=data, st=st, en=en, tau=tau, move=move
                ):
                    z -= tau  # the exact score of the projected point
            if not record_score(out, i, k, z):
                return i
            if sw[i] == 0.0:
                continue
            dl = sw[i] * loss_dloss(loss, targets[i, k], z, 0.0)
            if dl != 0.0:
                for p in range(st, en):
                    j = indices[p]
                    gj = dl * data[p]
                    s[k, j] += gj * gj
                    h = alpha0 + math.sqrt(s[k, j])
                    if h > 0.0:
                        w[k, j] -= eta * gj / h
            if project and slab_current:
                tau = _slab_tau(w[k], indices, data, st, en, C)
                if tau != 0.0:
                    _adagrad_project(
                        wk=w[k], sk=s[k], alpha0=alpha0, indices=indices, data=data, st=st, en=en, tau=tau, move=move
                    )
    return -1


# ------------------------------------------------------------------------------------------------ FULL-ON
@njit_kernel
def _full_on_project(wk, Pk, indices, data, st, en, tau, px, wp, move):
    """The projection of ``wk`` onto ``|w.x| <= C`` in the H-norm (``P = H^{-1}``): ``wp = wk - tau / x.Px Px``,
    ``px = P x``; ``wk`` is not written. Returns 1 when w moves (``move=False``: when it would, ``wp`` not
    computed), 0 when it does not (``x.Px`` not positive and finite), -1 when the projected point is not finite."""
    d = wk.shape[0]
    for j in range(d):
        px[j] = sparse_row_dot(Pk, j, indices, data, st, en)
    den = 0.0
    for p in range(st, en):
        den += px[indices[p]] * data[p]
    if not (den > 0.0 and math.isfinite(den)):
        return 0
    if not move:
        return 1
    f = tau / den
    for j in range(d):
        wp[j] = wk[j] - f * px[j]
    return 1 if math.isfinite(f) and _all_finite(wp) else -1


@njit_kernel
def _full_on_step(base, Pk, indices, data, st, en, dl, c, pg, px, have_px, slab_current, C, wn):
    """Sherman-Morrison update of ``P = H^{-1}`` with ``H += c g g^T`` (g = dl x), prepared without any write to
    the model: ``pg = P g`` and ``u = base - P_new g`` into ``wn`` (``base``: the pending point, or its projection
    before predicting, which may be ``wn`` itself); with ``slab_current``, u projected onto ``|w.x| <= C`` with
    ``P_new``. ``have_px``: ``px`` already holds ``P x`` (the projection before predicting computed it). Returns
    the factor ``f`` of ``P_new = P - f pg pg^T`` (``_full_on_apply`` writes P and w), or NaN when the update
    would leave a value not finite."""
    d = base.shape[0]
    for j in range(d):
        if have_px:
            pg[j] = dl * px[j]
        else:
            pg[j] = dl * sparse_row_dot(Pk, j, indices, data, st, en)
    gp = 0.0
    for p in range(st, en):
        gp += dl * data[p] * pg[indices[p]]
    f = c / (1.0 + c * gp)
    s = 1.0 - f * gp
    # with P positive semi-definite, |f pg_a pg_b| <= sqrt(P_aa P_bb), so P stays finite when gp, f, s and the
    # new w (so pg) are: O(d) before the O(d^2) writes
    # u = w - P_new g,  P_new g = pg - f pg (g.pg) = pg (1 - f gp)
    for j in range(d):
        wn[j] = base[j] - s * pg[j]
    if slab_current:
        # Alg. 6 (K_t): u projected with P_new, whose P_new x = s pg / dl gives x.P_new x = s gp / dl^2:
        # u -= tau / (x.P_new x) P_new x = tau dl / gp pg (O(d), checked with the rest before any write)
        z = 0.0
        for p in range(st, en):
            z += wn[indices[p]] * data[p]
        tau = _tau(z, C)
        den = s * gp / (dl * dl)
        if tau != 0.0 and den > 0.0 and math.isfinite(den):
            h = tau * dl / gp
            for j in range(d):
                wn[j] -= h * pg[j]
    # rounding can leave P short of positive semi-definite (values of very different sizes in one example): the
    # terms f pg_a pg_b are then bounded by |f| max|pg|^2 alone, which keeps P finite when below 2**1000
    top = 0.0
    for j in range(d):
        top = max(top, abs(pg[j]))
    if not (math.isfinite(gp) and math.isfinite(s) and abs(f) * top * top <= P_SAFE_TERM and _all_finite(wn)):
        return math.nan
    return f


@njit_kernel
def _full_on_apply(Pk, f, pg):
    """``P -= f pg pg^T``: the O(d^2) writes of an update ``_full_on_step`` prepared and checked."""
    d = pg.shape[0]
    for a in range(d):
        fa = f * pg[a]
        if fa != 0.0:
            for b in range(d):
                Pk[a, b] -= fa * pg[b]


#: what an example does to one output of full-on: nothing, move w (a projection), update P and w
_KEEP = 0
_MOVE = 1
_UPDATE = 2


@njit_kernel
def full_on_epoch(indptr, indices, data, targets, sw, w, P, t, mu, eta, C, loss, slab_current, out):
    """Full-matrix online Newton step, ``P = H^{-1}`` by Sherman-Morrison (Algorithms §6.3).

    ``w`` (K, d) pending points, ``P`` (K, d, d) (``I / alpha0`` at the start). ``slab_current`` as in
    ``adagrad_epoch`` (post-update P). Returns ``(t, bad)``: -1, or the first example whose score is not finite
    or whose projection or update would leave ``w`` or ``P`` not finite (the pass stops there, that example's
    projection and update not applied to any output, and ``t`` not counting it): every output's projection and
    update is computed and checked before the first is written.
    """
    n = indptr.shape[0] - 1
    K = w.shape[0]
    d = w.shape[1]
    px = np.empty(d)
    # each output's new w (its projection, then its update), P g and factor f, written once all are checked
    wn = np.empty((K, d))
    pg = np.empty((K, d))
    fk = np.empty(K)
    act = np.empty(K, np.int64)
    for i in range(n):
        st = indptr[i]
        en = indptr[i + 1]
        t_before = t
        learn, t, eta_t = _row_step(sw[i], t, eta)
        for k in range(K):
            act[k] = _KEEP
            Pk = P[k]
            z = sparse_row_dot(w, k, indices, data, st, en)
            tau = 0.0 if slab_current else _tau(z, C)
            have_px = tau != 0.0  # _full_on_project fills px = P x
            moved = False
            if have_px:
                r = _full_on_project(
                    wk=w[k], Pk=Pk, indices=indices, data=data, st=st, en=en, tau=tau, px=px, wp=wn[k], move=learn
                )
                if r < 0:
                    return t_before, i
                if r > 0:
                    z -= tau  # the exact score of the projected point
                    moved = learn
            if not record_score(out, i, k, z):
                return t_before, i
            if sw[i] == 0.0:
                continue
            dl = sw[i] * loss_dloss(loss, targets[i, k], z, 0.0)
            if dl != 0.0:
                f = _full_on_step(
                    base=wn[k] if moved else w[k],
                    Pk=Pk,
                    indices=indices,
                    data=data,
                    st=st,
                    en=en,
                    dl=dl,
                    c=mu + eta_t,
                    pg=pg[k],
                    px=px,
                    have_px=have_px,
                    slab_current=slab_current,
                    C=C,
                    wn=wn[k],
                )
                if math.isnan(f):
                    return t_before, i
                fk[k] = f
                act[k] = _UPDATE
                continue
            if slab_current:  # Alg. 6 (K_t): nothing learned, u = w projected with the current P
                tau = _slab_tau(w[k], indices, data, st, en, C)
                if tau != 0.0:
                    r = _full_on_project(
                        wk=w[k], Pk=Pk, indices=indices, data=data, st=st, en=en, tau=tau, px=px, wp=wn[k], move=learn
                    )
                    if r < 0:
                        return t_before, i
                    moved = r > 0 and learn
            if moved:
                act[k] = _MOVE
        for k in range(K):
            if act[k] == _UPDATE:
                _full_on_apply(P[k], fk[k], pg[k])
            if act[k] != _KEEP:
                for j in range(d):
                    w[k, j] = wn[k, j]
    return t, -1


# ------------------------------------------------------------------------------------------------ SON
@njit_inline
def oja_step_safe(pv, r, aa, t, c):
    """Whether Oja's update of row ``t`` with the row a (``aa = |a|^2``, ``pv[:r] = V a``, step constant ``c``) is
    within :data:`OJA_SAFE` (False for NaN and infinities)."""
    gam = min(c / t, 1.0)
    cc = 2.0 * gam + gam * gam * aa
    pp = 0.0
    for a in range(r):
        pp += pv[a] * pv[a]
    return cc * pp <= OJA_SAFE and t * pp <= OJA_SAFE


@njit_kernel
def _small_matrix(gram, sc, r, alpha):
    m = np.empty((r, r))
    for a in range(r):
        for b in range(r):
            m[a, b] = 0.5 * (gram[a, b] + gram[b, a]) * sc[a] * sc[b]
        m[a, a] += alpha
    return m


@njit_kernel
def _use_pinv(gram, sc, r, alpha):
    """alpha negligible against ``tr(B B^T)`` (incl. alpha = 0): use the pseudo-inverse of ``B^T B``."""
    tr = 0.0
    for a in range(r):
        tr += gram[a, a] * sc[a] * sc[a]
    return alpha <= PINV_TOL * tr


@njit_kernel
def _apply_B_sparse(buf, sc, r, indices, data, st, en, out):
    for a in range(r):
        out[a] = sc[a] * sparse_row_dot(buf, a, indices, data, st, en)


@njit_kernel
def _lu_solve(m, rhs):
    """``m^{-1} rhs`` by Gaussian elimination with partial pivoting (``m`` is overwritten; r is small).

    Raises like LAPACK's ``gesv`` behind ``np.linalg.solve``: ``ValueError`` for a non-finite matrix,
    ``LinAlgError`` for a singular one."""
    r = rhs.shape[0]
    x = rhs.copy()
    for a in range(r):
        for b in range(r):
            if not math.isfinite(m[a, b]):
                raise ValueError("Array must not contain infs or NaNs.")
    for c in range(r):
        piv = c
        for i in range(c + 1, r):
            if abs(m[i, c]) > abs(m[piv, c]):
                piv = i
        if m[piv, c] == 0.0:
            raise np.linalg.LinAlgError("Matrix is singular to machine precision.")
        if piv != c:
            for b in range(r):
                m[c, b], m[piv, b] = m[piv, b], m[c, b]
            x[c], x[piv] = x[piv], x[c]
        for i in range(c + 1, r):
            f = m[i, c] / m[c, c]
            if f != 0.0:
                for b in range(c + 1, r):
                    m[i, b] -= f * m[c, b]
                x[i] -= f * x[c]
    for i in range(r - 1, -1, -1):
        acc = x[i]
        for b in range(i + 1, r):
            acc -= m[i, b] * x[b]
        x[i] = acc / m[i, i]
    return x


@njit_kernel
def _small_solve(m, rhs, pinv):
    """``m^{-1} rhs``; with ``pinv`` the squared pseudo-inverse ``(m^+)^2 rhs`` and also ``m^+ rhs``."""
    r = rhs.shape[0]
    if r == 0:
        return rhs.copy(), rhs.copy()
    if not pinv:
        z = _lu_solve(m, rhs)
        return z, z
    lam, u = np.linalg.eigh(m)
    top = lam[r - 1]
    tol = top * r * PINV_TOL
    c1 = np.zeros(r)
    c2 = np.zeros(r)
    for a in range(r):
        ca = 0.0  # (u^T rhs)_a
        for b in range(r):
            ca += u[b, a] * rhs[b]
        if lam[a] > tol and lam[a] > 0.0:
            c1[a] = ca / lam[a]
            c2[a] = ca / (lam[a] * lam[a])
    return _small_matvec(u, c2), _small_matvec(u, c1)


@njit_kernel
def _small_matvec(u, c):
    """``u c`` for a small square u (a plain loop: no BLAS call for r <= 2 ell)."""
    r = c.shape[0]
    out = np.zeros(r)
    block_matvec(u, r, r, c, out)
    return out


@njit_kernel
def _split_step(gram, sc, r, alpha, rhs, xx, in_span):
    """Cancellation-free pieces of the slab projection for x with ``rhs = B x`` (``G = B B^T``).

    Returns ``(has_perp, den, c)``: the projection is ``w -= tau / den * (has_perp x - B^T c)``. With
    ``y = G^+ Bx``, ``z = (G (G + alpha I))^+ Bx`` and ``x_perp = x - B^T y``, one has
    ``alpha H^{-1} x = x_perp + alpha B^T z`` and ``x.(alpha H^{-1} x) = ||x_perp||^2 + alpha z.Bx``: both
    terms are non-negative, where the usual ``x.x - (Bx)^T (G + alpha I)^{-1} Bx`` subtracts nearly equal
    numbers when x is close to B's row space. ``||x_perp||^2 = x.x - y.Bx`` still cancels, so below
    ``PERP_TOL x.x`` (rounding level), or when x is known to lie in B's row space (``in_span``), x_perp is
    taken as 0: direction ``B^T z``, den ``z.Bx`` (App. A's w1 when alpha = 0); otherwise direction
    ``x_perp + alpha B^T z`` (App. A's w2*, zero H-cost, when alpha = 0). Eigenvalues of G below the
    pseudo-inverse cut-off count as 0; a den that is not positive and finite gives the Euclidean projection.
    """
    c = np.zeros(r)
    if r == 0:
        return True, xx, c
    m = _small_matrix(gram, sc, r, 0.0)
    lam, u = np.linalg.eigh(m)
    tol = lam[r - 1] * r * PINV_TOL
    q = np.zeros(r)  # u^T Bx
    for a in range(r):
        for b in range(r):
            q[a] += u[b, a] * rhs[b]
    qy = np.zeros(r)
    qz = np.zeros(r)
    proj2 = 0.0
    zb = 0.0
    for a in range(r):
        if lam[a] > tol and lam[a] > 0.0:
            qy[a] = q[a] / lam[a]
            qz[a] = q[a] / (lam[a] * (lam[a] + alpha))
            proj2 += q[a] * qy[a]
            zb += q[a] * qz[a]
    perp2 = xx - proj2
    if in_span or not (perp2 > PERP_TOL * xx):
        has_perp, den = False, zb
        for a in range(r):
            qz[a] = -qz[a]
    else:
        has_perp, den = True, perp2 + alpha * zb
        for a in range(r):
            qz[a] = qy[a] - alpha * qz[a]
    c = _small_matvec(u, qz)
    if not (den > 0.0 and math.isfinite(den)):
        return True, xx, np.zeros(r)  # numerically degenerate: Euclidean projection (finite and feasible)
    return has_perp, den, c


@njit_kernel
def _fill_direction(dirv, has_perp, c, sk, bk, r, indices, data, st, en):
    """``dirv = has_perp x - B^T c`` (dense, B = diag(sk) bk[:r])."""
    for j in range(dirv.shape[0]):
        dirv[j] = 0.0
    if has_perp:
        for p in range(st, en):
            dirv[indices[p]] = data[p]
    for a in range(r):
        f = c[a] * sk[a]
        if f != 0.0:
            for j in range(dirv.shape[0]):
                dirv[j] -= f * bk[a, j]


@njit_kernel
def _clear_unused(buf, gram, r):
    """Zero the buffer rows ``[r, cap)`` and their Gram entries (canonical state: no stale rows)."""
    cap = buf.shape[0]
    for a in range(r, cap):
        for j in range(buf.shape[1]):
            buf[a, j] = 0.0
        for b in range(cap):
            gram[a, b] = 0.0
            gram[b, a] = 0.0


@njit_kernel
def _move(wk, f, dirv):
    """``w -= f dirv`` (dense)."""
    for j in range(wk.shape[0]):
        wk[j] -= f * dirv[j]


@njit_kernel
def _project_along(wk, dirv, bk, gk, sk, r, al, bx, indices, data, st, en, tau, xx):
    """``w -= tau / den * dirv`` for a candidate direction ``dirv = x - B^T c`` (``bx = B x``), ``den = x.dirv``.

    A den below ``CANCEL_TOL x.x`` (x close to B's row space: the difference has lost its digits) or not
    finite takes ``_split_step``'s direction instead.
    """
    den = 0.0
    for p in range(st, en):
        den += dirv[indices[p]] * data[p]
    if not (den > CANCEL_TOL * xx and math.isfinite(den)):
        has_perp, den, c = _split_step(gram=gk, sc=sk, r=r, alpha=al, rhs=bx, xx=xx, in_span=np.bool_(False))
        _fill_direction(dirv=dirv, has_perp=has_perp, c=c, sk=sk, bk=bk, r=r, indices=indices, data=data, st=st, en=en)
    _move(wk, tau / den, dirv)


@njit_kernel
def _son_project(wk, bk, gk, sk, r, al, x, tau, xx, in_span, dirv):
    """Project ``wk`` onto ``|w.x| <= C`` in the H-norm, ``H = B^T B + alpha I`` (``tau = tau_C(w.x)``), for the
    sparse row ``x = (indices, data, st, en)``.

    Direction ``alpha H^{-1} x = x - B^T (G + alpha I)^{-1} Bx`` with den ``x.`` of it (``_project_along``),
    unless alpha is negligible (pseudo-inverse phase, App. A's candidates) or ``in_span`` (x known to lie in
    B's row space: ``slab="current"``, FD family, its row just appended and no shrink): then ``_split_step``.
    """
    indices, data, st, en = x
    bx = np.empty(r)
    _apply_B_sparse(buf=bk, sc=sk, r=r, indices=indices, data=data, st=st, en=en, out=bx)
    if not in_span and not _use_pinv(gk, sk, r, al):
        _, zz1 = _small_solve(_small_matrix(gk, sk, r, al), bx, np.bool_(False))
        _fill_direction(
            dirv=dirv, has_perp=np.bool_(True), c=zz1, sk=sk, bk=bk, r=r, indices=indices, data=data, st=st, en=en
        )
        _project_along(
            wk=wk,
            dirv=dirv,
            bk=bk,
            gk=gk,
            sk=sk,
            r=r,
            al=al,
            bx=bx,
            indices=indices,
            data=data,
            st=st,
            en=en,
            tau=tau,
            xx=xx,
        )
        return
    has_perp, den, c = _split_step(gram=gk, sc=sk, r=r, alpha=al, rhs=bx, xx=xx, in_span=in_span)
    _fill_direction(dirv=dirv, has_perp=has_perp, c=c, sk=sk, bk=bk, r=r, indices=indices, data=data, st=st, en=en)
    _move(wk, tau / den, dirv)


@njit_kernel
def son_epoch(indptr, indices, data, targets, sample_weight, state, t, step, sketch, out):
    """Sketched online Newton step over one CSR chunk (module docstring), K outputs.

    ``state`` (a ``SonState``) is updated in place, ``step`` a ``SonStep``, ``sketch`` a ``SonSketch``.
    ``step.slab_current``: Alg. 6 as printed (K_t): no projection before predicting; the updated u is projected
    onto the current example's slab with the post-update H. Returns ``(t, bad)`` with ``bad`` the first example
    with a non-finite score or (Oja) whose sketch update is beyond :data:`OJA_SAFE`, or -1; the pass stops there,
    ``t`` not counting it, and that example's projection and update not applied to any output: every output is
    scored (its score is the projected point's, known before projecting) and Oja's update of every output checked
    before the first output is projected or updated.
    """
    w, buf, gram, sc, aux, n_rows, alpha = state
    loss, C, mu, eta, slab_current = step
    kind, keep, n_shrink, seed, rp_dist, oja_c = sketch
    n = indptr.shape[0] - 1
    K = w.shape[0]
    d = w.shape[1]
    cap = buf.shape[1]
    work = np.empty((cap, d))
    gdata = np.empty(0)
    dirv = np.empty(d)
    rvec = np.empty(cap)
    qvec = np.empty(cap)
    run = np.empty(d)
    # each output's score before projecting, its outcome (row_outcome), and Oja's V a and |a|^2
    zs = np.empty(K)
    gos = np.empty(K, np.int64)
    dls = np.empty(K)
    learneds = np.empty(K, np.bool_)
    pvs = np.empty((K, cap) if kind == SKETCH_OJA else (0, 0))
    aas = np.empty(K)
    nospan = np.bool_(False)
    for i in range(n):
        st = indptr[i]
        en = indptr[i + 1]
        x = (indices, data, st, en)
        nnz = en - st
        if gdata.shape[0] < nnz:
            gdata = np.empty(2 * nnz)
        t_before = t
        learn, t, eta_t = _row_step(sample_weight[i], t, eta)
        xx = 0.0
        for p in range(st, en):
            xx += data[p] * data[p]
        # ---- every output's score and outcome (Oja: and its update's check) before any output is written
        for k in range(K):
            z = 0.0
            for p in range(st, en):
                z += w[k, indices[p]] * data[p]
            zs[k] = z
            tau = 0.0 if slab_current else _tau(z, C)
            if tau != 0.0 and xx > 0.0:
                z -= tau  # = +-C: the exact score of the projected point (w.x is within rounding of it)
            go, dl, learned = row_outcome(out=out, i=i, k=k, z=z, sw=sample_weight, targets=targets, loss=loss, xx=xx)
            if go < 0:
                return t_before, i
            gos[k] = go
            dls[k] = dl
            learneds[k] = learned
            if kind == SKETCH_OJA and go > 0 and learned:
                r = n_rows[k]
                ca = math.sqrt(mu + eta_t) * dl
                aa = 0.0
                for p in range(nnz):
                    gdata[p] = ca * data[st + p]
                    aa += gdata[p] * gdata[p]
                aas[k] = aa
                pv = pvs[k]
                for a in range(r):
                    acc = 0.0
                    for p in range(st, en):
                        acc += buf[k, a, indices[p]] * gdata[p - st]
                    pv[a] = acc
                if not oja_step_safe(pv, r, aa, t, oja_c):
                    return t_before, i
        for k in range(K):
            bk = buf[k]
            gk = gram[k]
            sk = sc[k]
            r = n_rows[k]
            al = alpha[k]
            # ---- projection of the pending u with x_t
            tau = 0.0 if slab_current else _tau(zs[k], C)
            if tau != 0.0 and xx > 0.0 and learn:
                _son_project(wk=w[k], bk=bk, gk=gk, sk=sk, r=r, al=al, x=x, tau=tau, xx=xx, in_span=nospan, dirv=dirv)
            go = gos[k]
            dl = dls[k]
            learned = learneds[k]
            if go == 0:
                continue
            in_span = False  # x_t in B's row space: FD family, its row appended, no shrink
            if learned:  # ---- sketch update with the row a = sqrt(mu + eta_t) g
                ca = math.sqrt(mu + eta_t) * dl
                for p in range(nnz):
                    gdata[p] = ca * data[st + p]
                if kind == SKETCH_FD or kind == SKETCH_PFD or kind == SKETCH_RFD:
                    r = fd_append_csr_row(bk, gk, r, indices[st:en], gdata[:nnz])
                    in_span = r != cap
                    if not in_span:
                        r, delta = fd_shrink(bk, gk, r, keep, n_shrink, work)
                        _clear_unused(bk, gk, r)
                        if kind == SKETCH_RFD:
                            al += 0.5 * delta
                elif kind == SKETCH_RP:
                    rp_row_vector(seed, t - 1, rp_dist, rvec[:r])
                    # q = S a (old S); G += r q^T + q r^T + |a|^2 r r^T
                    aa = 0.0
                    for p in range(nnz):
                        aa += gdata[p] * gdata[p]
                    for a in range(r):
                        acc = 0.0
                        for p in range(st, en):
                            acc += bk[a, indices[p]] * gdata[p - st]
                        qvec[a] = acc
                    for a in range(r):
                        for b in range(r):
                            gk[a, b] += rvec[a] * qvec[b] + qvec[a] * rvec[b] + aa * rvec[a] * rvec[b]
                    for a in range(r):
                        ra = rvec[a]
                        if ra != 0.0:
                            for p in range(st, en):
                                bk[a, indices[p]] += ra * gdata[p - st]
                else:  # Oja: V = buf[:r] orthonormal, lam = aux, gram = I, sc = sqrt(t lam)
                    lam = aux[k, :r]
                    aa = aas[k]
                    pv = pvs[k, :r]  # V a, computed (and checked) with the outputs' scores
                    gam = _oja_gamma(lam, t, oja_c, pv)
                    for a in range(r):
                        f = gam * pv[a]
                        if f != 0.0:
                            for p in range(st, en):
                                bk[a, indices[p]] += f * gdata[p - st]
                    _oja_orthonormalise(bk[:r], pv, 2.0 * gam + gam * gam * aa, run)
                    if t % REORTH_EVERY == 0:
                        oja_reorthonormalise(bk[:r])
                    for a in range(r):
                        v = t * lam[a]
                        sk[a] = math.sqrt(v) if v > 0.0 else 0.0
                n_rows[k] = r
                alpha[k] = al
                # ---- u = w - H^{-1} g
                bg = np.empty(r)
                _apply_B_sparse(buf=bk, sc=sk, r=r, indices=indices, data=data, st=st, en=en, out=bg)
                for a in range(r):
                    bg[a] *= dl
                pinv = _use_pinv(gk, sk, r, al)
                m = _small_matrix(gk, sk, r, 0.0 if pinv else al)
                zz2, zz1 = _small_solve(m, bg, pinv)
                if not pinv:
                    inv = 1.0 / al
                    for p in range(st, en):
                        w[k, indices[p]] -= inv * dl * data[p]
                    for a in range(r):
                        f = zz1[a] * sk[a] * inv
                        if f != 0.0:
                            for j in range(d):
                                w[k, j] += f * bk[a, j]
                else:
                    for a in range(r):
                        f = zz2[a] * sk[a]
                        if f != 0.0:
                            for j in range(d):
                                w[k, j] -= f * bk[a, j]
            if slab_current and xx > 0.0:  # Alg. 6 (K_t), after the update (u = w when nothing was learned)
                tau = _slab_tau(w[k], indices, data, st, en, C)
                if tau != 0.0:
                    _son_project(
                        wk=w[k], bk=bk, gk=gk, sk=sk, r=r, al=al, x=x, tau=tau, xx=xx, in_span=in_span, dirv=dirv
                    )
    return t, -1
