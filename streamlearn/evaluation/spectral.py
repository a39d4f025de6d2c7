"""How well a sketch approximates ``A^T A``: spectral error of the implicit difference, never forming d x d.

``relative_spectral_error(A, sketch) = ||A^T A - approx||_2 / ||A^T A||_2`` with ``approx = B^T B`` or
``B^T B + alpha I`` (RFD). The RFD paper's Fig. 1-2 do not define their normalisation (Algorithms
§1.1), so :func:`covariance_errors` also reports the FD literature's ``||A^T A - approx||_2 / ||A||_F^2``.

For ``d <= dense_max_d`` both matrices are formed and the difference goes to ``numpy.linalg.eigvalsh``
(exact). Above that, a Lanczos iteration with full reorthogonalisation finds the extreme eigenvalues of
the symmetric operator ``v -> A^T (A v) - approx v`` (O(nnz(A) + ell d) per step, O(k d) memory for k
steps); it stops when the extreme Ritz value of largest magnitude has a residual bound below ``tol``
(relative: it is that close to an eigenvalue) and the other end cannot overtake it.
"""

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh_tridiagonal
from scipy.sparse.linalg import LinearOperator

from .._typing import MatrixLike
from .._validation import Interval, expected_param

__all__ = ["relative_spectral_error", "covariance_errors"]


def _approx_operator(sketch, d):
    """``(matvec, description)`` of the approximation given as a sketch, B, (B, alpha) or LinearOperator."""
    if hasattr(sketch, "covariance_operator"):
        op = sketch.covariance_operator()
    elif isinstance(sketch, LinearOperator):
        op = sketch
    else:
        alpha = 0.0
        if isinstance(sketch, tuple):
            if len(sketch) != 2:
                raise ValueError("sketch given as a tuple must be (B, alpha).")
            sketch, alpha = sketch
            alpha = float(alpha)
        B = np.asarray(sketch, dtype=np.float64)
        if B.ndim != 2:
            raise ValueError(
                f"sketch must be a streamlearn sketch, a 2-D array B, (B, alpha) or a "
                f"LinearOperator; got an array of shape {B.shape}."
            )

        def mv(v, B=B, alpha=alpha):
            return B.T @ (B @ v) + alpha * v

        op = LinearOperator((B.shape[1], B.shape[1]), matvec=mv, matmat=mv, dtype=np.float64)
    if op.shape != (d, d):
        raise ValueError(
            f"the sketch approximates a {op.shape[0]} x {op.shape[1]} matrix, but A has d={d} "
            f"features (A^T A is {d} x {d})."
        )
    return op


def _lanczos_extremes(matvec, d, *, tol, max_iter, seed):
    """Smallest and largest eigenvalue of a symmetric operator; returns ``(lo, hi, converged, steps)``."""
    rng = np.random.default_rng(seed)
    k_max = int(min(d, max_iter))
    Q = np.empty((k_max + 1, d))
    q = rng.standard_normal(d)
    Q[0] = q / np.linalg.norm(q)
    alphas, betas = [], []
    scale_seen = 0.0
    for j in range(k_max):
        w = np.asarray(matvec(Q[j]), dtype=np.float64).ravel()
        a = float(Q[j] @ w)
        w -= a * Q[j]
        if j > 0:
            w -= betas[-1] * Q[j - 1]
        for _ in range(2):  # full reorthogonalisation, twice is enough
            w -= Q[: j + 1].T @ (Q[: j + 1] @ w)
        b = float(np.linalg.norm(w))
        alphas.append(a)
        betas.append(b)
        scale_seen = max(scale_seen, abs(a), b)
        exhausted = b <= 1e-13 * max(scale_seen, 1e-300) or j + 1 == k_max
        if exhausted or (j + 1) % 5 == 0:
            theta, S = eigh_tridiagonal(np.array(alphas), np.array(betas[:-1]))
            ends = np.array([theta[0], theta[-1]])
            res = b * np.abs(S[-1, [0, -1]])
            dom = int(np.argmax(np.abs(ends)))
            scale = max(abs(ends[dom]), 1e-300)
            # Done when the extreme of largest magnitude is accurate to tol and the other end, even
            # moved by its residual bound, cannot overtake it (its own accuracy does not matter).
            done = res[dom] <= tol * scale and abs(ends[1 - dom]) + res[1 - dom] <= scale - res[dom]
            done = done or bool(np.all(res <= tol * scale))
            if exhausted or done:
                converged = bool(done or b <= 1e-13 * max(scale_seen, 1e-300) or j + 1 == d)
                return float(ends[0]), float(ends[1]), converged, j + 1
        Q[j + 1] = w / b
    raise AssertionError("unreachable")


def _as_matrix(A):
    if sp.issparse(A):
        A = sp.csr_matrix(A, dtype=np.float64)
        if A.ndim != 2:
            raise ValueError(f"A must be 2-D; got shape {A.shape}.")
        if not np.all(np.isfinite(A.data)):
            raise ValueError("A contains NaN or infinity.")
        return A
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"A must be a 2-D array or sparse matrix; got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("A contains NaN or infinity.")
    return A


def covariance_errors(
    A: MatrixLike,
    sketch: Any,
    *,
    dense_max_d: int = 2000,
    tol: float = 1e-6,
    max_iter: int = 400,
    ata_norm: float | None = None,
    random_state: int = 0,
) -> dict[str, float | bool]:
    """Spectral error of a covariance sketch, with both normalisations.

    Parameters
    ----------
    A : array-like or scipy sparse matrix of shape (n, d)
        The sketched rows.
    sketch : streamlearn sketch, ndarray (ell, d), tuple (B, alpha) or LinearOperator (d, d)
        The approximation of ``A^T A``: ``sketch.covariance_operator()`` (``B^T B + alpha I``), ``B^T B``,
        ``B^T B + alpha I`` or the operator itself.
    dense_max_d : int >= 0, default=2000
        Up to this d the d x d matrices are formed and the error is exact; above, Lanczos (0: always Lanczos).
    tol : float in (0, 1), default=1e-6
        Lanczos stopping rule: relative residual bound of the extreme Ritz values.
    max_iter : int >= 2, default=400
        Most Lanczos steps (memory: max_iter * d floats). A warning says when they were not enough.
    ata_norm : float >= 0 or None, default=None
        ``||A^T A||_2`` if already known (saves one eigen-solve when scoring many sketches of one A).
    random_state : int, default=0
        Seed of the Lanczos start vector.

    Returns
    -------
    dict
        ``spectral_error`` = ``||A^T A - approx||_2``; ``relative_spectral_error`` = that over
        ``||A^T A||_2``; ``relative_frobenius_error`` = that over ``||A||_F^2``; ``ata_norm``;
        ``frobenius_sq``; ``min_eig`` / ``max_eig`` of ``A^T A - approx``; ``converged`` (bool).
        A zero ``A`` (no rows, or only zero rows) has both relative errors 0 when the approximation is zero
        too (the sketch is exact).

    Raises
    ------
    ValueError
        If ``A`` is zero but the approximation is not (an RFD sketch's ``alpha0 I``): the relative errors
        are undefined.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.evaluation.spectral import covariance_errors
    >>> A = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    >>> B = np.array([[0.0, 2.0, 0.0]])          # keeps the top direction exactly
    >>> e = covariance_errors(A, B)
    >>> e["spectral_error"], e["relative_spectral_error"], e["relative_frobenius_error"]
    (1.0, 0.25, 0.2)
    """
    _check_options(dense_max_d=dense_max_d, tol=tol, max_iter=max_iter, ata_norm=ata_norm)
    A = _as_matrix(A)
    n, d = A.shape
    op = _approx_operator(sketch, d)
    frob_sq = float(A.multiply(A).sum()) if sp.issparse(A) else float(np.einsum("ij,ij->", A, A))
    converged = True
    if d <= dense_max_d:
        ata = (A.T @ A).toarray() if sp.issparse(A) else A.T @ A
        approx = np.asarray(op.matmat(np.eye(d)), dtype=np.float64)
        diff = ata - 0.5 * (approx + approx.T)
        w = np.linalg.eigvalsh(diff)
        lo, hi = float(w[0]), float(w[-1])
        if ata_norm is None:
            ata_norm = float(np.linalg.eigvalsh(ata)[-1])
    else:

        def diff_mv(v):
            return A.T @ (A @ v) - op.matvec(v)

        lo, hi, converged, _ = _lanczos_extremes(diff_mv, d, tol=tol, max_iter=max_iter, seed=random_state)
        if ata_norm is None:
            _, ata_norm, c2, _ = _lanczos_extremes(
                lambda v: A.T @ (A @ v), d, tol=tol, max_iter=max_iter, seed=random_state
            )
            converged = converged and c2
        if not converged:
            warnings.warn(
                f"covariance_errors: Lanczos did not reach tol={tol:g} in {max_iter} steps; the "
                "errors are lower estimates. Raise max_iter.",
                RuntimeWarning,
                stacklevel=2,
            )
    err = max(abs(lo), abs(hi))
    ata_norm = float(ata_norm)
    return {
        "spectral_error": err,
        "relative_spectral_error": _relative(err, ata_norm, "||A^T A||_2"),
        "relative_frobenius_error": _relative(err, frob_sq, "||A||_F^2"),
        "ata_norm": ata_norm,
        "frobenius_sq": frob_sq,
        "min_eig": lo,
        "max_eig": hi,
        "converged": bool(converged),
    }


_OPTIONS = {
    "dense_max_d": [Interval(int, 0, None, closed="left")],
    "tol": [Interval(float, 0, 1, closed="neither")],
    "max_iter": [Interval(int, 2, None, closed="left")],
    "ata_norm": [Interval(float, 0, None, closed="left"), None],
}


def _check_options(**options):
    """A one-line ValueError naming the option, before any work (a bad ``max_iter`` used to fail inside Lanczos)."""
    for name, value in options.items():
        expected = expected_param(_OPTIONS[name], value)
        if expected is not None:
            raise ValueError(f"{name} must be {expected}. Got {value!r} instead.")


def _relative(err, norm, what):
    """``err / norm``; for a zero ``A`` (``norm`` 0, e.g. no rows or only zero rows) 0 when the approximation is
    the zero matrix too (exact), else undefined: ``ValueError``."""
    if norm > 0:
        return err / norm
    if err == 0:
        return 0.0
    raise ValueError(
        f"The relative error of the sketch is undefined: {what} is 0 (A has no non-zero value) but the "
        f"approximation of A^T A is not the zero matrix (||A^T A - approx||_2 = {err:.6g}); expected an A with a "
        "non-zero value, or a zero approximation."
    )


def relative_spectral_error(A: MatrixLike, sketch: Any, *, normalization: str = "spectral", **kwargs: Any) -> float:
    """``||A^T A - approx||_2 / ||A^T A||_2`` (or ``/ ||A||_F^2`` with ``normalization="frobenius"``).

    ``approx`` is ``B^T B + alpha I`` from ``sketch.covariance_operator()`` (alpha = 0 except for RFD),
    or given directly as B, (B, alpha) or a LinearOperator. Computed on the implicit difference (exact
    eigenvalues for d <= 2000, Lanczos above); see :func:`covariance_errors` for the keyword arguments.

    Parameters
    ----------
    A : array-like or scipy sparse matrix of shape (n, d)
        The sketched rows.
    sketch : streamlearn sketch, ndarray (ell, d), tuple (B, alpha) or LinearOperator (d, d)
        The approximation.
    normalization : {"spectral", "frobenius"}, default="spectral"
        Divide by ``||A^T A||_2`` or by ``||A||_F^2``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.evaluation import relative_spectral_error
    >>> A = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    >>> relative_spectral_error(A, np.zeros((1, 3)))
    1.0
    >>> relative_spectral_error(A, (np.zeros((1, 3)), 2.0), normalization="frobenius")
    0.4
    """
    keys = {"spectral": "relative_spectral_error", "frobenius": "relative_frobenius_error"}
    if normalization not in keys:
        raise ValueError(f"normalization must be one of {sorted(keys)}; got {normalization!r}.")
    return covariance_errors(A, sketch, **kwargs)[keys[normalization]]
