"""Sparse (lazy) forms of the sketched online Newton step for FD/PFD/RFD, Oja and RP.

Same per-example protocol, same arithmetic as ``son_epoch`` (son.py, the dense reference), but no O(ell d)
work per example on sparse rows:

FD family (``son_fd_lazy``). Within a chunk the buffer ``B-hat`` (r rows) is kept as ``T @ basis`` where
``basis`` = [``r0`` dense rows (stored transposed, ``Dt`` (d, r0)); the sparse gradient rows appended since
the last materialisation]; T is (r, q) with q = r0 + (number of sparse rows). The weights are kept lazily as
``w = v + basis^T e``. Per example: ``basis x`` costs O(r0 nnz + sparse nnz), ``B x = T (basis x)`` O(r q), the
score ``v.x + e.(basis x)``, the Woodbury solves go through a Cholesky factor of ``BB^T + alpha I`` that is
bordered (O(r^2)) when a row is appended and refactored (O(r^3), every ell + 1 rows) after a shrink; the
updates ``w -= f x`` / ``w += B^T y`` become ``v -= f x`` (sparse) / ``e += T^T y``. A shrink is
``T <- rot T`` with the (keep, r) rotation of ``fd_rotation`` (the Gram matrix of the new rows comes from the
eigendecomposition, nothing d-wide). The dense rows are materialised (``Dt <- Dt T_d^T + sparse part``, one
BLAS-3 product; ``v += basis^T e``) only when the extra work of the lazy form since the last materialisation
exceeds ``mat_factor`` times the cost of materialising (ski-rental rule), when the sparse-row store is full,
and at the end of the chunk (the state between calls is the dense one of ``son_epoch``).

Oja (``son_oja_lazy``). ``V = F Z`` (F (r, r), Z stored transposed (d, r)) and ``w = v + Z^T b``. Oja's
``V' = V + gamma p a^T`` is ``Z += (gamma F^{-1} p) a^T`` (sparse), with ``v -= ((gamma F^{-1} p).b) a`` keeping
w fixed; the orthonormalisation ``V <- D^{-1/2} L^{-1} V'`` acts on F only (``_oja_orthonormalise`` on the
r x r factor) and ``F^{-1} <- F^{-1} L D^{1/2}`` in O(r^2). Every ``REORTH_EVERY`` rows (as in the dense
kernel) V is materialised (``Z <- F Z``, BLAS-3), re-orthonormalised, and b folded into v.

RP (``son_rp_lazy``). ``w = v + S^T c``; S's rows change by the sparse rank-one ``r a^T`` in place (stored
transposed), ``v -= (r.c) a`` keeps w fixed; the Gram matrix changes by rank two, so it is refactored
(O(ell^3)) per solve. No materialisation is needed.

Where ``alpha`` is negligible (the pseudo-inverse phase, RFD0's alpha = 0), the same lazy form is used with
the eigendecomposition solves of ``son.py``; results agree with ``son_epoch`` to rounding.
"""

import math

import numpy as np

from ._numba import njit_inline, njit_kernel
from .fd import block_copy, block_matvec, fd_rotation
from .oja import REORTH_EVERY, _oja_gamma, _oja_orthonormalise
from .rp import rp_row_vector
from .son import (
    CANCEL_TOL,
    SKETCH_RFD,
    _clear_unused,
    _small_matrix,
    _small_solve,
    _split_step,
    _tau,
    _use_pinv,
    oja_step_safe,
    row_outcome,
)


# ------------------------------------------------------------------------------------------ small algebra
@njit_kernel
def _chol_extend(gram, alpha, L, n0, r):
    """Extend the Cholesky factor ``L`` of ``gram[:n0, :n0] + alpha I`` to ``r`` rows by bordering.

    Returns the number of rows validly factored (< r when the matrix is not numerically positive definite).
    """
    for i in range(n0, r):
        for j in range(i):
            acc = gram[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            L[i, j] = acc / L[j, j]
        acc = gram[i, i] + alpha
        for k in range(i):
            acc -= L[i, k] * L[i, k]
        if not (acc > 0.0 and math.isfinite(acc)):
            return i
        L[i, i] = math.sqrt(acc)
    return r


@njit_kernel
def _chol_solve(L, r, rhs, out):
    for i in range(r):
        acc = rhs[i]
        for k in range(i):
            acc -= L[i, k] * out[k]
        out[i] = acc / L[i, i]
    for i in range(r - 1, -1, -1):
        acc = out[i]
        for k in range(i + 1, r):
            acc -= L[k, i] * out[k]
        out[i] = acc / L[i, i]


@njit_kernel
def _h_step(newton, tau, sol, r, al, rhs, in_span, nchol, x, dl):
    """The two steps in the H-norm (one compiled function for both): each applies its x part to v and returns
    ``(f, coef, nchol)``; every lazy representation then applies ``w += f B^T coef`` its own way.
    ``sol = (gram, sc, L, z1, z2, diag, v)`` (the output's solver arrays, ``diag``: BB^T is diagonal, and the
    dense part ``v`` of w), ``x = (indices, data, st, en, xx)`` (the example's CSR row and ``xx = x.x``).

    ``newton``: ``u = w - H^{-1} g`` (``rhs = B g``, ``g = dl x``): Woodbury ``(g - B^T z1) / alpha``, or
    ``-B^T G^{+2} B g`` when alpha is negligible. Otherwise the H-norm projection of ``w`` onto ``|w.x| <= C``
    (``tau = tau_C(w.x)``, ``rhs = B x``, ``xx = x.x``; ``v -= f x`` unless the direction has no x_perp part),
    by the rule of ``son._son_project``: direction ``x - B^T (G + alpha I)^{-1} Bx`` unless alpha is
    negligible, its denominator has lost its digits or ``in_span`` (x known to lie in B's row space); then
    ``son._split_step``.

    The kernels call it directly, not through a wrapper per mode: every call of a function that takes ``sol``
    and ``x``, inlined or not, reference-counts their eight arrays (wrapping the Newton step made Oja's a9a
    pass about a tenth slower).
    """
    gram, sc, L, z1, z2, diag, v = sol
    indices, data, st, en, xx = x
    if newton or not in_span:
        # ---- z1 = (BB^T + alpha I)^{-1} rhs (= z2), or the pseudo-inverse pair (z1, z2) = (G^+ rhs, G^{+2} rhs)
        # when alpha is negligible. diag: BB^T is diag(sc^2) (Oja's orthonormal rows), solved directly; otherwise
        # through the Cholesky factor L of its first nchol rows (extended as needed) unless the factorisation
        # fails (then LU / eigendecomposition as in son.py)
        pinv = _use_pinv(gram, sc, r, al)
        solved = False
        if not pinv:
            if diag:
                for a in range(r):
                    z1[a] = rhs[a] / (sc[a] * sc[a] + al)
                    z2[a] = z1[a]
                solved = True
            else:
                if nchol < r:
                    nchol = _chol_extend(gram, al, L, nchol, r)
                if nchol == r:
                    _chol_solve(L, r, rhs, z1)
                    for a in range(r):
                        z2[a] = z1[a]
                    solved = True
        if not solved:
            m = _small_matrix(gram, sc, r, 0.0 if pinv else al)
            a2, a1 = _small_solve(m, rhs[:r].copy(), pinv)
            for a in range(r):
                z1[a] = a1[a]
                z2[a] = a2[a]
        if newton:
            if pinv:
                return -1.0, z2, nchol
            inv = 1.0 / al
            _sub_row(v, inv * dl, indices, data, st, en)
            return inv, z1, nchol
        if not pinv:
            den = xx  # x.x - (Bx)^T z1 = x.(alpha H^{-1} x)
            for a in range(r):
                den -= z1[a] * rhs[a]
            if den > CANCEL_TOL * xx and math.isfinite(den):
                f = tau / den
                _sub_row(v, f, indices, data, st, en)
                return f, z1, nchol
    has_perp, den, c = _split_step(gram=gram, sc=sc, r=r, alpha=al, rhs=rhs, xx=xx, in_span=in_span)
    f = tau / den
    if has_perp:
        _sub_row(v, f, indices, data, st, en)
    return f, c, nchol


@njit_inline
def _solver(gram, sc, n, diag, v):
    """:func:`_h_step`'s ``sol`` for one output: its Gram matrix, scales, ``diag`` flag and dense part ``v``, with
    work arrays for up to ``n`` buffer rows (the Cholesky factor ``L``, the solutions ``z1``, ``z2``)."""
    return (gram, sc, np.zeros((n, n)), np.zeros(n), np.zeros(n), diag, v)


@njit_inline
def _h_modes():
    """:func:`_h_step`'s flags ``(nospan, newton, nonewton)``: x not known to lie in B's row space, and its two
    modes (typed booleans: a literal would compile ``_h_step`` once more)."""
    return np.bool_(False), np.bool_(True), np.bool_(False)


@njit_inline
def _tau_next(z, step, weight, xx):
    """Alg. 3's projection onto the slab of the example x about to be predicted (score ``z = w.x``,
    ``xx = x.x``): returns ``(tau, move)``, ``tau = tau_C(z)`` (0 with ``step.slab_current`` or x = 0), so that
    ``z - tau`` is the score of the projected point, and whether w moves (``tau`` not 0, ``weight`` not 0: an
    example of weight 0 is scored by the projected point, nothing moves)."""
    if step.slab_current or not xx > 0.0:
        return 0.0, False
    tau = _tau(z, step.C)
    return tau, tau != 0.0 and weight != 0.0


@njit_inline
def _outcome(out, i, k, z, sw, targets, step, xx, ti):
    """:func:`son.row_outcome` of example i's score ``z`` (the projected point's), with the count ``ti`` of the
    examples learned from (weight > 0) so far and the scale ``ca = sqrt(mu + eta / ti) dl`` of the row ``ca x``
    fed to the sketch (0 when nothing is learned): returns ``(go, dl, learned, ti, ca)``. An example of weight 0
    (``go = 0``) is scored only: nothing is learned from it nor projected onto its slab."""
    loss, _, mu, eta, _ = step
    go, dl, learned = row_outcome(out=out, i=i, k=k, z=z, sw=sw, targets=targets, loss=loss, xx=xx)
    if go > 0:
        ti += 1
    ca = math.sqrt(mu + eta / ti) * dl if learned else 0.0
    return go, dl, learned, ti, ca


@njit_kernel
def _row_dot(v, indices, data, st, en):
    """``v.x`` for the sparse row ``st:en``."""
    z = 0.0
    for p in range(st, en):
        z += v[indices[p]] * data[p]
    return z


@njit_kernel
def _sub_row(v, f, indices, data, st, en):
    """``v -= f x`` for the sparse row ``st:en``."""
    for p in range(st, en):
        v[indices[p]] -= f * data[p]


@njit_inline
def _scaled_sqnorm(ca, data, st, en):
    """``|ca x|^2`` for the sparse row ``st:en``, summed as ``(ca x_p)^2``."""
    aa = 0.0
    for p in range(st, en):
        gv = ca * data[p]
        aa += gv * gv
    return aa


@njit_kernel
def _store_transposed(bk, Zt, r):
    """``bk[:r] = Zt[:, :r]^T``: the dense rows of the state between calls."""
    d = bk.shape[1]
    for a in range(r):
        for j in range(d):
            bk[a, j] = Zt[j, a]


@njit_inline
def _n_learned(sample_weight, n):
    """The examples of weight > 0 among the first ``n`` (those counted by t; weight 0 changes nothing)."""
    c = 0
    for i in range(n):
        if sample_weight[i] != 0.0:
            c += 1
    return c


@njit_inline
def _earlier_bad(first_bad, bad):
    """The earlier of two first non-finite examples (-1: none)."""
    return bad if bad >= 0 and (first_bad < 0 or bad < first_bad) else first_bad


@njit_inline
def _add_column(out, D, transposed, j, xv, r):
    """``out[:r] += xv D[:r, j]``, the sketch's rows stored transposed (``D[j, a]``) or as rows (``D[a, j]``)."""
    if transposed:
        for a in range(r):
            out[a] += D[j, a] * xv
    else:
        for a in range(r):
            out[a] += D[a, j] * xv


@njit_kernel
def _lazy_score(v, coef, Zt, transposed, r, indices, data, start, end, zx):
    """``zx[:r] = Z x`` (Z stored transposed, (d, r), or as rows, (r, d), in ``Zt``); returns
    ``(v.x + coef.(Z x), ||x||^2)`` for row x."""
    for a in range(r):
        zx[a] = 0.0
    z = 0.0
    xx = 0.0
    for p in range(start, end):
        j = indices[p]
        xv = data[p]
        z += v[j] * xv
        xx += xv * xv
        _add_column(out=zx, D=Zt, transposed=transposed, j=j, xv=xv, r=r)
    for a in range(r):
        z += coef[a] * zx[a]
    return z, xx


@njit_kernel
def _fold_rows(Zt, transposed, b, r, v):
    """``v += Z^T b[:r]`` (Z stored transposed, (d, r), all of ``b`` then, or as the first r rows of an array)."""
    if transposed:
        fold = np.dot(Zt, b)
        for j in range(v.shape[0]):
            v[j] += fold[j]
    else:
        for a in range(r):
            ba = b[a]
            if ba != 0.0:
                for j in range(v.shape[0]):
                    v[j] += ba * Zt[a, j]


@njit_kernel
def _first_rows(Z, r):
    """``Z[:r]`` as a C-contiguous array for ``np.dot``: ``Z`` itself when it has r rows (Oja's buffer, as a rule),
    else a copy."""
    return Z if r == Z.shape[0] else block_copy(Z, r, Z.shape[1], np.bool_(False))


@njit_kernel
def _sparse_rank_one(Zt, transposed, v, s, vec, r, ca, x):
    """``Z += vec (ca x)^T`` (Z stored transposed or as rows, as in ``_lazy_score``; ``x = (indices, data, start,
    end, |x|^2)``, the row) and ``v -= s ca x``.

    With ``s = vec.coef`` this keeps ``w = v + Z^T coef`` unchanged.
    """
    indices, data, start, end, _ = x
    for p in range(start, end):
        j = indices[p]
        gv = ca * data[p]
        v[j] -= s * gv
        if transposed:
            for a in range(r):
                Zt[j, a] += gv * vec[a]
        else:
            for a in range(r):
                Zt[a, j] += gv * vec[a]


# ------------------------------------------------------------------------------------------ FD family
@njit_kernel
def _fd_basis_dot(D, transposed, r0, sp_ptr, sp_idx, sp_val, n_sp, xs, indices, data, st, en, out):
    """``out[:r0 + n_sp] = basis x`` (x scattered into the zeroed scratch ``xs``, which is left zeroed); the
    dense rows are ``D[:, :r0]^T`` (``transposed``) or ``D[:r0]``."""
    for a in range(r0):
        out[a] = 0.0
    for p in range(st, en):
        j = indices[p]
        xv = data[p]
        xs[j] = xv
        _add_column(out=out, D=D, transposed=transposed, j=j, xv=xv, r=r0)
    for s in range(n_sp):
        acc = 0.0
        for p in range(sp_ptr[s], sp_ptr[s + 1]):
            acc += sp_val[p] * xs[sp_idx[p]]
        out[r0 + s] = acc
    for p in range(st, en):
        xs[indices[p]] = 0.0


@njit_kernel
def _add_rmatvec(T, r, q, y, f, e):
    """``e[:q] += f T[:r, :q]^T y``."""
    for a in range(r):
        c = f * y[a]
        if c != 0.0:
            for b in range(q):
                e[b] += c * T[a, b]


@njit_kernel
def _fd_materialise(Dt, r0, T, r, q, sp_ptr, sp_idx, sp_val, n_sp, e, v):
    """New dense basis ``T @ basis`` (returned transposed, (d, r)); folds ``basis^T e`` into v."""
    d = Dt.shape[0]
    if r0 > 0:
        Dr = Dt if r0 == Dt.shape[1] else block_copy(Dt, d, r0, np.bool_(False))  # (always the former: no copy)
        Dn = np.dot(Dr, block_copy(T, r, r0, np.bool_(True)))
        ed = e[:r0].copy()
        fold = np.dot(Dr, ed)
        for j in range(d):
            v[j] += fold[j]
    else:
        Dn = np.zeros((d, r))
    _add_sparse_rows(
        D=Dn,
        transposed=np.bool_(True),
        ident=np.bool_(False),
        T=T,
        r=r,
        r0=r0,
        sp=(sp_ptr, sp_idx, sp_val),
        n_sp=n_sp,
        e=e,
        v=v,
    )
    _reset_basis(T, r, q, e)
    return Dn


@njit_kernel
def _add_sparse_rows(D, transposed, ident, T, r, r0, sp, n_sp, e, v):
    """The sparse rows' part of a materialisation: ``D += T[:r, r0:q] @ sparse rows`` (``D`` transposed or as
    rows; with ``ident`` sparse row ``s`` is row ``r0 + s``) and ``v += sparse rows^T e[r0:q]``."""
    sp_ptr, sp_idx, sp_val = sp
    for s in range(n_sp):
        col = r0 + s
        es = e[col]
        for p in range(sp_ptr[s], sp_ptr[s + 1]):
            j = sp_idx[p]
            val = sp_val[p]
            if es != 0.0:
                v[j] += es * val
            if transposed:
                for a in range(r):
                    D[j, a] += val * T[a, col]
            elif ident:
                D[col, j] += val
            else:
                for a in range(r):
                    D[a, j] += val * T[a, col]


@njit_kernel
def _reset_basis(T, r, q, e):
    """After a materialisation: the basis is the dense rows themselves (``T = I``, ``e = 0``)."""
    for b in range(q):
        e[b] = 0.0
    for a in range(r):
        for b in range(q):
            T[a, b] = 0.0
        T[a, a] = 1.0


@njit_kernel
def _fd_materialise_rows(B, r0, T, r, q, sp_ptr, sp_idx, sp_val, n_sp, e, v, ident):
    """``_fd_materialise`` with the dense rows kept as rows, ``B[:r0]`` of a (cap, d) array whose other rows are
    zero: ``B`` becomes the new rows ``T @ basis`` (rows ``r:`` zero), in place, and ``basis^T e`` is folded
    into v.

    With ``ident`` (no shrink since the dense rows were formed: ``T[:r, :q]`` is the identity, ``r = q``) the
    dense rows stay as they are and the sparse rows are written into the zero rows ``r0 .. r - 1``: O(r0 d)
    for the fold and O(nnz) for the rows, no product (what a call of a few rows costs)."""
    d = B.shape[1]
    _fold_rows(Zt=B, transposed=np.bool_(False), b=e, r=r0, v=v)
    if not ident:
        Tb = np.zeros((B.shape[0], B.shape[0]))  # rows r: and columns r0: zero
        for a in range(r):
            for b in range(r0):
                Tb[a, b] = T[a, b]
        Bn = np.dot(Tb, B)
        for a in range(B.shape[0]):
            for j in range(d):
                B[a, j] = Bn[a, j]
    _add_sparse_rows(
        D=B, transposed=np.bool_(False), ident=ident, T=T, r=r, r0=r0, sp=(sp_ptr, sp_idx, sp_val), n_sp=n_sp, e=e, v=v
    )
    _reset_basis(T, r, q, e)


@njit_kernel
def _materialise(D, transposed, ident, r0, T, r, sp_ptr, sp, n_sp, e, v):
    """The dense rows ``T @ basis`` in ``son_fd_lazy``'s layout: a new transposed array, or (rows) ``D`` itself,
    updated in place. The basis has ``q = r0 + n_sp`` elements."""
    q = r0 + n_sp
    if transposed:
        return _fd_materialise(
            Dt=D, r0=r0, T=T, r=r, q=q, sp_ptr=sp_ptr, sp_idx=sp[0], sp_val=sp[1], n_sp=n_sp, e=e, v=v
        )
    _fd_materialise_rows(
        B=D, r0=r0, T=T, r=r, q=q, sp_ptr=sp_ptr, sp_idx=sp[0], sp_val=sp[1], n_sp=n_sp, e=e, v=v, ident=ident
    )
    return D


@njit_kernel
def _clear_gram(gram, r):
    """Zero the Gram entries of the rows ``[r, cap)`` (``_clear_unused`` for rows known to be zero)."""
    cap = gram.shape[0]
    for a in range(r, cap):
        for b in range(cap):
            gram[a, b] = 0.0
            gram[b, a] = 0.0


@njit_kernel
def _fd_append(sp, sp_ptr, n_sp, indices, data, st, en, ca):
    """Append the sparse row ``ca x`` to the store (``sp`` = (indices, values), grown when full); returns
    ``(sp, |ca x|^2)``."""
    sp_idx, sp_val = sp
    nnz = en - st
    base = sp_ptr[n_sp]
    if base + nnz > sp_idx.shape[0]:
        size = 2 * (base + nnz)
        ni = np.empty(size, dtype=np.int64)
        nv = np.empty(size)
        for p in range(base):  # (a loop: slice assignment compiles numba's shape-mismatch error machinery)
            ni[p] = sp_idx[p]
            nv[p] = sp_val[p]
        sp_idx = ni
        sp_val = nv
    sq = 0.0
    for p in range(nnz):
        gv = ca * data[st + p]
        sp_idx[base + p] = indices[st + p]
        sp_val[base + p] = gv
        sq += gv * gv
    sp_ptr[n_sp + 1] = base + nnz
    return (sp_idx, sp_val), sq


@njit_kernel
def _fd_border(T, gram, r, q, bx, ca, sq):
    """The new row ``a = ca x`` as basis element ``q`` and buffer row ``r``: ``T[r] = e_q``, the Gram matrix
    bordered with ``B a = ca B x`` and ``|a|^2 = sq``."""
    for a in range(r):
        T[a, q] = 0.0
        g = ca * bx[a]
        gram[a, r] = g
        gram[r, a] = g
    gram[r, r] = sq
    for b in range(q + 1):
        T[r, b] = 0.0
    T[r, q] = 1.0


@njit_kernel
def son_fd_lazy(
    indptr, indices, data, targets, sample_weight, state, t, step, sketch, out, max_sp, mat_factor, transposed
):
    """FD / PFD / RFD sketched online Newton step in the lazy sparse form (module docstring), K outputs.

    Same arguments (``state``, ``step``, ``sketch``) and result as ``son.son_epoch`` for these sketches. ``max_sp``
    sparse rows at most between materialisations; ``mat_factor`` weighs the lazy form's extra work against a
    materialisation. ``step.slab_current``: instead of projecting onto the next example's slab before predicting
    it (Alg. 3, the default), project the updated u onto the current example's slab with the post-update H
    (Alg. 6 as printed, K_t; the score is then the unclipped w.x). Returns ``(t, bad, n_materialisations)``
    (mid-chunk ones, summed over the outputs).

    ``transposed``: the dense rows are copied into a (d, r) array for the chunk (each non-zero then reads its r
    coefficients from one cache line) and stored back at its end, O(r d) per call; otherwise they are read in
    place from ``buf`` (r cache lines per non-zero), and a chunk with no shrink ends in O(r d + nnz) with
    no product (``_fd_materialise_rows``): for chunks of a few rows over many features.
    """
    w, buf, gram, _, _, n_rows, alpha = state
    C, slab_current = step.C, step.slab_current
    kind, keep, n_shrink = sketch.kind, sketch.keep, sketch.n_shrink
    n = indptr.shape[0] - 1
    K = w.shape[0]
    d = w.shape[1]
    cap = buf.shape[1]
    qmax = cap + max_sp
    sc = np.ones(cap)
    first_bad = -1
    nospan, newton, nonewton = _h_modes()
    diag = np.bool_(False)
    n_mat = 0
    for k in range(K):
        r = n_rows[k]
        al = alpha[k]
        gk = gram[k]
        r0 = r
        if transposed:
            D = block_copy(buf[k], r0, d, np.bool_(True))  # (d, r0)
        else:
            D = buf[k]  # (cap, d), rows r0: zero
        ident = np.bool_(True)  # no shrink since the dense rows were formed: T[:r, :q] = I (r = q)
        T = np.zeros((cap, qmax))
        for a in range(r):
            T[a, a] = 1.0
        q = r0
        n_sp = np.int64(0)
        sp_ptr = np.zeros(max_sp + 1, dtype=np.int64)
        sp = (np.empty(1024, dtype=np.int64), np.empty(1024))
        e = np.zeros(qmax)
        v = w[k]  # in place: w = v + basis^T e
        ti = t
        xs = np.zeros(d)
        bxb = np.zeros(qmax)
        bx = np.zeros(cap)
        nchol = np.int64(0)
        sol = _solver(gk, sc, cap, diag, v)
        lazy_work = 0.0
        bad = -1
        for i in range(n):
            st = indptr[i]
            en = indptr[i + 1]
            _fd_basis_dot(
                D=D,
                transposed=transposed,
                r0=r0,
                sp_ptr=sp_ptr,
                sp_idx=sp[0],
                sp_val=sp[1],
                n_sp=n_sp,
                xs=xs,
                indices=indices,
                data=data,
                st=st,
                en=en,
                out=bxb,
            )
            lazy_work += sp_ptr[n_sp] + r * (q - r0)
            z = _row_dot(v, indices, data, st, en)
            xx = 0.0
            for p in range(st, en):
                xx += data[p] * data[p]
            x = (indices, data, st, en, xx)
            for b in range(q):
                z += e[b] * bxb[b]
            block_matvec(T, r, q, bxb, bx)
            # ---- projection onto the slab of the example about to be predicted (see slab_current)
            tau, move = _tau_next(z=z, step=step, weight=sample_weight[i], xx=xx)
            if move:
                f, coef, nchol = _h_step(
                    newton=nonewton, tau=tau, sol=sol, r=r, al=al, rhs=bx, in_span=nospan, nchol=nchol, x=x, dl=0.0
                )
                _add_rmatvec(T, r, q, coef, f, e)
            go, dl, learned, ti, ca = _outcome(
                out=out, i=i, k=k, z=z - tau, sw=sample_weight, targets=targets, step=step, xx=xx, ti=ti
            )
            if go < 0:
                bad = i
                break
            shrunk = False
            if learned:  # ---- append the sparse row a = ca x to the basis and the buffer
                sp, sq = _fd_append(sp=sp, sp_ptr=sp_ptr, n_sp=n_sp, indices=indices, data=data, st=st, en=en, ca=ca)
                n_sp += 1
                _fd_border(T=T, gram=gk, r=r, q=q, bx=bx, ca=ca, sq=sq)
                e[q] = 0.0
                bxb[q] = ca * xx
                q += 1
                r += 1
                shrunk = r == cap
                if shrunk:  # FD's shrink in the lazy form: T <- rot T and the Gram matrix of the kept rows
                    rot, kk, delta, new_gram = fd_rotation(gk, r, keep, n_shrink)
                    Tn = np.dot(rot, block_copy(T, r, q, np.bool_(False)))
                    for a in range(kk):
                        for b in range(q):
                            T[a, b] = Tn[a, b]
                        for b in range(kk):
                            gk[a, b] = new_gram[a, b]
                    r = kk
                    nchol = np.int64(0)
                    ident = np.bool_(False)
                    if kind == SKETCH_RFD:
                        al += 0.5 * delta
                # ---- u = w - H^{-1} g with the new H
                block_matvec(T, r, q, bxb, bx)
                for a in range(r):
                    bx[a] *= dl
                f, coef, nchol = _h_step(
                    newton=newton, tau=0.0, sol=sol, r=r, al=al, rhs=bx, in_span=nospan, nchol=nchol, x=x, dl=dl
                )
                _add_rmatvec(T, r, q, coef, f, e)
            if slab_current and go > 0 and xx > 0.0:
                # Alg. 6 as printed (K_t): project u onto |w.x_t| <= C with the post-update H (u = w when
                # nothing was learned); x_t is in B's row space when its row was just appended and no shrink
                # followed
                if learned:
                    for a in range(r):
                        bx[a] /= dl  # B x (the u step scaled it to B g)
                zu = _row_dot(v, indices, data, st, en)
                for b in range(q):
                    zu += e[b] * bxb[b]
                tau = _tau(zu, C)
                span = learned and not shrunk  # x_t's row appended, no shrink since
                if tau != 0.0:
                    f, coef, nchol = _h_step(
                        newton=nonewton, tau=tau, sol=sol, r=r, al=al, rhs=bx, in_span=span, nchol=nchol, x=x, dl=0.0
                    )
                    _add_rmatvec(T, r, q, coef, f, e)
            # ---- materialise the dense rows (right after a shrink, when they are fewest) once the lazy form
            # has cost more than doing so
            if n_sp == max_sp or (shrunk and lazy_work * mat_factor >= r * (r0 * d + sp_ptr[n_sp])):
                D = _materialise(
                    D=D, transposed=transposed, ident=ident, r0=r0, T=T, r=r, sp_ptr=sp_ptr, sp=sp, n_sp=n_sp, e=e, v=v
                )
                ident = np.bool_(True)
                n_mat += 1
                r0 = r
                q = r
                n_sp = np.int64(0)
                sp_ptr[0] = 0
                lazy_work = 0.0
        D = _materialise(
            D=D, transposed=transposed, ident=ident, r0=r0, T=T, r=r, sp_ptr=sp_ptr, sp=sp, n_sp=n_sp, e=e, v=v
        )
        if transposed:
            _store_transposed(buf[k], D, r)
            _clear_unused(buf[k], gk, r)
        else:  # D is buf[k], its rows r: zero
            _clear_gram(gk, r)
        n_rows[k] = r
        alpha[k] = al
        first_bad = _earlier_bad(first_bad, bad)
    return t + _n_learned(sample_weight, n if first_bad < 0 else first_bad), first_bad, n_mat


# ------------------------------------------------------------------------------------------ Oja
#: the Oja factor V = F Z is materialised when max|F| * max|F^{-1}| exceeds this
OJA_FACTOR_COND = 100.0


@njit_kernel
def _oja_materialise(Zt, transposed, F, b, v, last, run):
    """``V = F Z`` made explicit, returned in ``Zt``'s layout (transposed, (d, r), a new array; or ``Zt``'s own
    rows, overwritten); folds ``Z^T b`` into v (b zeroed); ``last[r + 1] = 0``.

    ``last``: the number of orthonormalisations F has taken since it was the identity (``last[r + 1]``), and the
    ``p`` (``last[:r]``) and ``cc`` (``last[r]``) of the latest (``_oja_factor_update``). In the rows' layout,
    with none ``V = Z`` as it is, and with one ``F = D^{-1/2} L^{-1}``, whose structured ``L``
    (``L_ij = p_i beta_j``) ``_oja_orthonormalise`` applies to the rows of Z in O(r d) (``run``: d floats of work
    space) instead of the O(r^2 d) product: what a call learning one row ends with."""
    r = F.shape[0]
    n_factors = last[r + 1]
    last[r + 1] = 0.0
    _fold_rows(Zt=Zt, transposed=transposed, b=b, r=r, v=v)
    Zn = Zt
    if transposed:
        Zn = np.dot(Zt, block_copy(F, r, r, np.bool_(True)))
    elif n_factors == 1.0:
        _oja_orthonormalise(Zt[:r], last[:r], last[r], run)
    elif n_factors > 1.0:
        Zt[:r] = np.dot(F, _first_rows(Zt, r))
    for a in range(r):
        b[a] = 0.0
        for c in range(r):
            F[a, c] = 0.0
        F[a, a] = 1.0
    return Zn


@njit_kernel
def _oja_add_bt(F, sc, r, coef, f, b):
    """``w += f B^T coef`` in Oja's lazy form (``B = diag(sc) F Z``, ``w = v + Z^T b``): ``b += f F^T (sc coef)``."""
    for cc in range(r):
        acc = 0.0
        for a in range(r):
            acc += F[a, cc] * (f * sc[a] * coef[a])
        b[cc] += acc


@njit_kernel
def _oja_factor_update(F, Finv, pv, cc, colsum):
    """Oja's orthonormalisation ``V <- D^{-1/2} L^{-1} V'`` on the factor F, and ``F^{-1} <- F^{-1} L D^{1/2}``
    (``L_ij = p_i beta_j`` for i > j, backwards over the columns); returns ``max|F| max|F^{-1}|``."""
    r = F.shape[0]
    _oja_orthonormalise(F, pv, cc, colsum)
    ai = cc
    betas = np.empty(r)
    dbars = np.empty(r)
    for a in range(r):
        dbar = 1.0 + ai * pv[a] * pv[a]
        betas[a] = pv[a] * ai / dbar
        dbars[a] = dbar
        ai = ai / dbar
    for c in range(r):
        colsum[c] = 0.0
    for jj in range(r - 1, -1, -1):
        bj = betas[jj]
        pj = pv[jj]
        sq = math.sqrt(dbars[jj])
        for a in range(r):
            old = Finv[a, jj]
            Finv[a, jj] = (old + bj * colsum[a]) * sq
            colsum[a] += pj * old
    fm = 0.0
    gm = 0.0
    for a in range(r):
        for c in range(r):
            fm = max(fm, abs(F[a, c]))
            gm = max(gm, abs(Finv[a, c]))
    return fm * gm


@njit_kernel
def _oja_reorthonormalise(Zt, transposed, r, L):
    """Orthonormalise the r vectors of ``Zt`` (the columns of a (d, r) array, or its first r rows):
    ``Z <- L^{-1} Z`` with ``Z Z^T = L L^T``; returned in ``Zt``'s layout (rows: overwritten)."""
    if transposed:
        G = np.dot(block_copy(Zt, Zt.shape[0], r, np.bool_(True)), Zt)
    else:
        Zr = _first_rows(Zt, r)
        G = np.dot(Zr, block_copy(Zt, r, Zt.shape[1], np.bool_(True)))
    if _chol_extend(G, 0.0, L, np.int64(0), r) < r:
        raise np.linalg.LinAlgError("Matrix is not positive definite.")
    M = np.zeros((r, r))  # L^{-T}, column c = L^{-1} e_c read as a row
    for c in range(r):
        for i in range(c, r):
            acc = 1.0 if i == c else 0.0
            for kk in range(c, i):
                acc -= L[i, kk] * M[c, kk]
            M[c, i] = acc / L[i, i]
    if transposed:
        return np.dot(Zt, M)
    Zt[:r] = np.dot(block_copy(M, r, r, np.bool_(True)), Zr)  # M^T Z = L^{-1} Z
    return Zt


@njit_kernel
def son_oja_lazy(indptr, indices, data, targets, sample_weight, state, t, step, sketch, out, max_cond, transposed):
    """Oja sketched online Newton step in the lazy sparse form (module docstring), K outputs.

    Same arrays and result as ``son.son_epoch`` with ``sketch.kind = SKETCH_OJA``. ``max_cond``: V is materialised
    when ``max|F| max|F^{-1}|`` exceeds it (and every ``REORTH_EVERY`` rows). ``slab_current`` as in
    ``son_fd_lazy``, and ``transposed`` (Z copied transposed for the call, or read and written in place as the
    rows of ``buf``; either way a call ends with V = F Z made explicit, O(r^2 d), or O(r d) in place after a
    single learnt row: ``_oja_materialise``). Returns
    ``(t, bad, n_materialisations)``.
    """
    w, buf, gram, sc, aux, n_rows, alpha = state
    C, slab_current = step.C, step.slab_current
    oja_c = sketch.oja_c
    n = indptr.shape[0] - 1
    K = w.shape[0]
    first_bad = -1
    nospan, newton, nonewton = _h_modes()
    diag = np.bool_(True)
    nchol = np.int64(0)  # no Cholesky factor kept between solves
    n_mat = 0
    for k in range(K):
        r = n_rows[k]
        al = alpha[k]
        gk = gram[k]
        sk = sc[k]
        lam = aux[k, :r]
        Zt = block_copy(buf[k], r, buf.shape[2], np.bool_(True)) if transposed else buf[k]
        F = np.zeros((r, r))
        Finv = np.zeros((r, r))
        for a in range(r):
            F[a, a] = 1.0
            Finv[a, a] = 1.0
        b = np.zeros(r)
        v = w[k]  # in place: w = v + Z^T b
        ti = t
        zx = np.zeros(r)
        vx = np.zeros(r)
        bx = np.zeros(r)
        pv = np.zeros(r)
        qv = np.zeros(r)
        colsum = np.zeros(r)
        last = np.zeros(r + 2)  # F's orthonormalisations since the identity, the latest's p and cc (_oja_materialise)
        run = np.empty(0 if transposed else buf.shape[2])
        sol = _solver(gk, sk, r, diag, v)
        bad = -1
        for i in range(n):
            st = indptr[i]
            en = indptr[i + 1]
            z, xx = _lazy_score(
                v=v, coef=b, Zt=Zt, transposed=transposed, r=r, indices=indices, data=data, start=st, end=en, zx=zx
            )
            x = (indices, data, st, en, xx)
            for a in range(r):
                acc = 0.0
                for c in range(r):
                    acc += F[a, c] * zx[c]
                vx[a] = acc
                bx[a] = sk[a] * acc
            # ---- projection onto the slab of the example about to be predicted (see slab_current)
            tau, move = _tau_next(z=z, step=step, weight=sample_weight[i], xx=xx)
            # the outcome (the projected point's score is z - tau) and the check of Oja's update come before the
            # projection: a refused example changes nothing
            go, dl, learned, ti, ca = _outcome(
                out=out, i=i, k=k, z=z - tau, sw=sample_weight, targets=targets, step=step, xx=xx, ti=ti
            )
            aa = _scaled_sqnorm(ca, data, st, en) if learned else 0.0
            if learned:
                for a in range(r):
                    pv[a] = ca * vx[a]
            if go < 0 or (learned and not oja_step_safe(pv, r, aa, ti, oja_c)):
                bad = i
                break
            if move:
                f, coef, _ = _h_step(
                    newton=nonewton, tau=tau, sol=sol, r=r, al=al, rhs=bx, in_span=nospan, nchol=nchol, x=x, dl=0.0
                )
                _oja_add_bt(F, sk, r, coef, f, b)
            if learned:  # ---- Oja's update with the row a = ca x, through the factor F
                gam = _oja_gamma(lam, ti, oja_c, pv)
                qb = 0.0
                for a in range(r):  # qv = gam F^{-1} p
                    acc = 0.0
                    for c in range(r):
                        acc += Finv[a, c] * pv[c]
                    qv[a] = gam * acc
                    qb += qv[a] * b[a]
                _sparse_rank_one(Zt=Zt, transposed=transposed, v=v, s=qb, vec=qv, r=r, ca=ca, x=x)
                for a in range(r):
                    last[a] = pv[a]
                last[r] = 2.0 * gam + gam * gam * aa
                last[r + 1] += 1.0
                cond = _oja_factor_update(F, Finv, pv, last[r], colsum)
                # the factor drifts from orthogonal (V = F Z with F ill-conditioned loses digits): materialise
                # when max|F| max|F^{-1}| exceeds max_cond, and every REORTH_EVERY rows
                reorth = ti % REORTH_EVERY == 0
                if reorth or not (cond <= max_cond):
                    n_mat += 1
                    Zt = _oja_materialise(Zt=Zt, transposed=transposed, F=F, b=b, v=v, last=last, run=run)
                    if reorth:  # (work array: sol's Cholesky factor)
                        Zt = _oja_reorthonormalise(Zt=Zt, transposed=transposed, r=r, L=sol[2])
                    for a in range(r):
                        for c in range(r):
                            Finv[a, c] = 0.0
                        Finv[a, a] = 1.0
                    for a in range(r):
                        zx[a] = 0.0
                    for p in range(st, en):
                        _add_column(out=zx, D=Zt, transposed=transposed, j=indices[p], xv=data[p], r=r)
                else:
                    zxa = ca * xx
                    for a in range(r):
                        zx[a] += qv[a] * zxa
                for a in range(r):
                    u = ti * lam[a]
                    sk[a] = math.sqrt(u) if u > 0.0 else 0.0
                # ---- u = w - H^{-1} g
                for a in range(r):
                    acc = 0.0
                    for c in range(r):
                        acc += F[a, c] * zx[c]
                    bx[a] = dl * sk[a] * acc
                f, coef, _ = _h_step(
                    newton=newton, tau=0.0, sol=sol, r=r, al=al, rhs=bx, in_span=nospan, nchol=nchol, x=x, dl=dl
                )
                _oja_add_bt(F, sk, r, coef, f, b)
            if slab_current and go > 0 and xx > 0.0:
                # Alg. 6 as printed (K_t): project u onto |w.x_t| <= C with the post-update H (u = w when
                # nothing was learned)
                zu = _row_dot(v, indices, data, st, en)
                for a in range(r):
                    zu += b[a] * zx[a]
                    if learned:
                        bx[a] /= dl  # B x (the u step scaled it to B g)
                tau = _tau(zu, C)
                if tau != 0.0:
                    f, coef, _ = _h_step(
                        newton=nonewton, tau=tau, sol=sol, r=r, al=al, rhs=bx, in_span=nospan, nchol=nchol, x=x, dl=0.0
                    )
                    _oja_add_bt(F, sk, r, coef, f, b)
        Zt = _oja_materialise(Zt=Zt, transposed=transposed, F=F, b=b, v=v, last=last, run=run)
        if transposed:
            _store_transposed(buf[k], Zt, r)
        first_bad = _earlier_bad(first_bad, bad)
    return t + _n_learned(sample_weight, n if first_bad < 0 else first_bad), first_bad, n_mat


# ------------------------------------------------------------------------------------------ RP
@njit_kernel
def _rp_gram_update(gram, rvec, bx, r, ca, aa):
    """``G += r q^T + q r^T + |a|^2 r r^T`` with ``q = S a = ca S x`` (old S) for the new row ``a = ca x``."""
    for a in range(r):
        qa = ca * bx[a]
        for b in range(r):
            gram[a, b] += rvec[a] * (ca * bx[b]) + qa * rvec[b] + aa * rvec[a] * rvec[b]


@njit_kernel
def son_rp_lazy(indptr, indices, data, targets, sample_weight, state, t, step, sketch, out, transposed):
    """RP sketched online Newton step in the lazy sparse form, K outputs: ``w = v + S^T c`` with S updated in
    place by its sparse rank-one rows (no materialisation needed), O(ell nnz + ell^3) per example (the Gram
    matrix changes by rank two, so it is refactored each time). Same arrays and result as ``son.son_epoch``
    with ``sketch.kind = SKETCH_RP``. ``slab_current`` and ``transposed`` as in ``son_fd_lazy`` (S read in
    place from ``buf`` without ``transposed``: nothing to store back). Returns ``(t, bad, 0)``."""
    w, buf, gram, _, _, n_rows, alpha = state
    C, slab_current = step.C, step.slab_current
    seed, rp_dist = sketch.seed, sketch.rp_dist
    n = indptr.shape[0] - 1
    K = w.shape[0]
    d = w.shape[1]
    first_bad = -1
    nospan, newton, nonewton = _h_modes()
    diag = np.bool_(False)
    nchol = np.int64(0)  # no Cholesky factor kept between solves
    for k in range(K):
        r = n_rows[k]
        al = alpha[k]
        gk = gram[k]
        St = block_copy(buf[k], r, d, np.bool_(True)) if transposed else buf[k]  # S transposed, or its rows
        sc = np.ones(r)
        c = np.zeros(r)
        v = w[k]  # in place: w = v + S^T c
        ti = t
        bx = np.zeros(r)
        bg = np.zeros(r)
        rvec = np.zeros(r)
        sol = _solver(gk, sc, r, diag, v)
        bad = -1
        for i in range(n):
            st = indptr[i]
            en = indptr[i + 1]
            z, xx = _lazy_score(
                v=v, coef=c, Zt=St, transposed=transposed, r=r, indices=indices, data=data, start=st, end=en, zx=bx
            )
            x = (indices, data, st, en, xx)
            # ---- projection onto the slab of the example about to be predicted (see slab_current)
            tau, move = _tau_next(z=z, step=step, weight=sample_weight[i], xx=xx)
            if move:
                f, coef, _ = _h_step(
                    newton=nonewton, tau=tau, sol=sol, r=r, al=al, rhs=bx, in_span=nospan, nchol=nchol, x=x, dl=0.0
                )
                for a in range(r):  # w += f S^T coef
                    c[a] += f * coef[a]
            go, dl, learned, ti, ca = _outcome(
                out=out, i=i, k=k, z=z - tau, sw=sample_weight, targets=targets, step=step, xx=xx, ti=ti
            )
            if go < 0:
                bad = i
                break
            if learned:  # ---- S += r a^T with a = ca x (sparse), its Gram matrix by rank two
                rp_row_vector(seed, ti - 1, rp_dist, rvec)
                aa = _scaled_sqnorm(ca, data, st, en)
                _rp_gram_update(gk, rvec, bx, r, ca, aa)
                rc = 0.0
                for a in range(r):
                    rc += rvec[a] * c[a]
                # keeps w = v + S^T c fixed
                _sparse_rank_one(Zt=St, transposed=transposed, v=v, s=rc, vec=rvec, r=r, ca=ca, x=x)
                # ---- u = w - H^{-1} g
                for a in range(r):
                    bg[a] = dl * (bx[a] + rvec[a] * ca * xx)
                f, coef, _ = _h_step(
                    newton=newton, tau=0.0, sol=sol, r=r, al=al, rhs=bg, in_span=nospan, nchol=nchol, x=x, dl=dl
                )
                for a in range(r):
                    c[a] += f * coef[a]
            if slab_current and go > 0 and xx > 0.0:
                # Alg. 6 as printed (K_t): project u onto |w.x_t| <= C with the post-update H (u = w when
                # nothing was learned)
                zu = _row_dot(v, indices, data, st, en)
                for a in range(r):
                    if learned:
                        bx[a] = bg[a] / dl  # S x with the updated S
                    zu += c[a] * bx[a]
                tau = _tau(zu, C)
                if tau != 0.0:
                    f, coef, _ = _h_step(
                        newton=nonewton, tau=tau, sol=sol, r=r, al=al, rhs=bx, in_span=nospan, nchol=nchol, x=x, dl=0.0
                    )
                    for a in range(r):
                        c[a] += f * coef[a]
        _fold_rows(Zt=St, transposed=transposed, b=c, r=r, v=v)
        if transposed:
            _store_transposed(buf[k], St, r)
        first_bad = _earlier_bad(first_bad, bad)
    return t + _n_learned(sample_weight, n if first_bad < 0 else first_bad), first_bad, 0
