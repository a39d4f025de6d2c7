"""Regret of an online run against the best fixed linear predictor in hindsight (Algorithms §1).

``Regret_T = sum_t l(y_t, z_t) - min_{(w, b) in K} sum_t l(y_t, w . x_t + b)`` where ``z_t`` is the learner's
score of example ``t`` *before* its update, and ``K`` is all of R^d x R (or ``||w||_2 <= radius``). The
minimum needs the whole stored stream and a batch solver, chosen per loss:

=====================  ===================================================================================
loss                   batch solver
=====================  ===================================================================================
squared                least squares with the intercept eliminated by centring: dense SVD when
                       ``n * (d + 1) <= 10^7``, else the eigendecomposition of the normal equations when
                       ``d <= 2000``, else ``scipy.sparse.linalg.lsqr`` on the centred operator
logistic               ``scipy.optimize.minimize(method="L-BFGS-B")`` with the exact gradient
hinge, eps.-insens.    linear program, ``scipy.optimize.linprog(method="highs")`` on the LP dual (p sparse
                       equality rows; the primal LP with one row per example is the fallback)
perceptron             none needed: ``w = 0, b = 0`` has loss 0, the minimum of a non-negative loss
=====================  ===================================================================================

``radius`` (``||w||_2 <= radius``) for the smooth losses: the KKT conditions of the ball-constrained problem
are those of ``min f(w, b) + lam ||w||^2`` at the ``lam >= 0`` where ``||w(lam)|| = radius``; ``||w(lam)||``
decreases with ``lam``, so a bisection on ``lam`` finds it (closed form per ``lam`` for least squares,
warm-started L-BFGS for logistic). No quadratically constrained solver is needed.
"""

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.optimize import linprog, minimize
from scipy.sparse.linalg import LinearOperator, lsqr
from scipy.special import expit
from threadpoolctl import threadpool_limits

from .._estimator import is_classifier
from .._typing import ArrayLike, MatrixLike
from .._validation import as_csr_float
from ..losses import CLASSIFICATION_LOSSES, LOSSES, REGRESSION_LOSSES, loss_dloss, loss_value
from ._common import (
    as_1d_labels,
    check_learner,
    example_losses,
    loss_param,
    loss_spec,
    regression_targets,
    signed_targets,
)

__all__ = ["regret", "RegretResult"]

_DENSE_LIMIT = 10_000_000  # n * (d + 1) entries up to which least squares uses a dense SVD
_NORMAL_EQ_LIMIT = 2_000  # d + 1 up to which least squares uses the normal equations (else lsqr)
_LP_LOSSES = ("hinge", "epsilon_insensitive")


@dataclass
class RegretResult:
    """Outcome of :func:`regret`.

    Attributes
    ----------
    loss : str
        Name of the loss (see :mod:`streamlearn.losses`).
    n_examples : int
    online_loss : float
        ``sum_t l(y_t, z_t)`` over the pre-update scores (mean over the K one-vs-rest losses per example
        when K > 2 classes).
    best_fixed_loss : float
        Loss of ``comparator`` on the same examples, recomputed from it (so it is attained by a real predictor;
        it is at least the true minimum, and equal to it up to the solver's tolerance).
    regret : float
        ``online_loss - best_fixed_loss``.
    regret_per_example : float
        ``regret / n_examples``.
    comparator : tuple (coef, intercept)
        The best fixed predictor found: ``coef`` of shape (n_features,) (binary, regression) or
        (n_classes, n_features), ``intercept`` a float or shape (n_classes,).
    radius : float or None
        The constraint ``||w||_2 <= radius`` used (per class for K > 2), or None.
    solver : str
        The batch solver used.
    converged : bool
        Whether the solver reported success.
    note : str
        Caveats (e.g. separable data under the logistic loss), or "".

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.evaluation import regret
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([1.0, 3.0, 5.0, 7.0])
    >>> res = regret(np.zeros(4), X, y, loss="squared")  # scores of a learner that always says 0
    >>> res.online_loss, round(res.best_fixed_loss, 12), res.regret
    (84.0, 0.0, 84.0)
    >>> w, b = res.comparator
    >>> np.round(w, 6), round(b, 6)
    (array([2.]), 1.0)
    """

    loss: str
    n_examples: int
    online_loss: float
    best_fixed_loss: float
    regret: float
    regret_per_example: float
    comparator: tuple
    radius: float | None
    solver: str
    converged: bool
    note: str = ""


def regret(
    learner_or_scores: Any,
    X: MatrixLike,
    y: ArrayLike,
    *,
    loss: str | None = None,
    radius: float | None = None,
    epsilon: float | None = None,
    classes: ArrayLike | None = None,
    fit_intercept: bool = True,
    max_iter: int = 15_000,
) -> "RegretResult":
    """Regret of one progressive pass against the best fixed linear predictor ``(w, b)`` in hindsight.

    ``regret = sum_t l(y_t, z_t) - min_{w, b} sum_t l(y_t, w . x_t + b)``, where ``z_t`` is the online
    model's score of example ``t`` before it learnt from it. The minimum is computed by a batch solver on
    the stored ``(X, y)`` (see the module docstring: least squares, L-BFGS, an LP, or exactly 0 for the
    perceptron loss). ``best_fixed_loss`` is always recomputed from the returned comparator, so it is an
    upper bound on the true minimum and the reported ``regret`` a lower bound on the true regret, tight up
    to the solver tolerance. For the logistic loss on linearly separable data the infimum is 0 and not
    attained: the solver's value is reported (``note`` says so) and the regret is then a lower bound.

    Parameters
    ----------
    learner_or_scores : streamlearn online learner, or array-like of shape (n_samples,) or (n_samples, K)
        A learner makes one ``partial_fit_scores`` pass over ``(X, y)`` (it is updated in place, continuing
        from its current state; pass ``sklearn.base.clone(learner)`` for a fresh run). Or pre-update scores
        from such a pass, e.g. ``learner.partial_fit_scores(X, y, classes=...)``.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The examples of the pass, in order.
    y : array-like of shape (n_samples,)
        Labels (classification) or real targets (regression).
    loss : str or None, default=None
        Loss name from :mod:`streamlearn.losses`. Default: the learner's own loss; required with scores.
    radius : float > 0 or None, default=None
        Restrict the comparator to ``||w||_2 <= radius`` (the intercept is free; with K > 2 classes each
        class's ``w_k`` separately). Supported for the smooth losses (squared, logistic, modified Huber) by
        solving ``min f(w, b) + lam ||w||^2`` with least squares (squared) or L-BFGS (the others) and bisecting on
        ``lam`` until ``||w|| = radius`` (the KKT conditions of the constrained problem; no QCP solver
        needed). The hinge and epsilon-insensitive losses raise ``NotImplementedError``: an L2 ball is not a
        linear constraint, so their LP cannot carry it. Ignored for the perceptron loss (``w = 0`` is optimal).
    epsilon : float >= 0 or None, default=None
        Width of the epsilon-insensitive loss; default: the learner's ``epsilon``.
    classes : array-like or None, default=None
        Labels of a classification problem when scores are passed (``classes[1]`` is +1 in the binary case).
        Default with scores: ``np.unique(y)`` for the hinge, logistic and perceptron losses; the squared and
        epsilon-insensitive losses on scores without ``classes`` mean regression.
    fit_intercept : bool, default=True
        Whether the comparator has an intercept ``b``.
    max_iter : int >= 1, default=15000
        Iteration limit of the iterative solvers (L-BFGS per solve, lsqr).

    Returns
    -------
    result : RegretResult

    Notes
    -----
    With K > 2 classes (one-vs-rest), the online loss of an example is the mean of its K binary losses, and
    the comparator is K independent linear predictors, so the best fixed loss is the mean of K binary
    problems, solved one at a time.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.evaluation import regret
    >>> from streamlearn.linear_model import OGDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)); y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=500)
    >>> res = regret(OGDRegressor(eta0=0.1), X, y)
    >>> print(f"online {res.online_loss:.1f} - best fixed {res.best_fixed_loss:.2f} = regret {res.regret:.1f}")
    online 61.3 - best fixed 5.29 = regret 56.1
    >>> res.solver
    'least squares (dense SVD)'
    >>> np.round(res.comparator[0], 1)
    array([ 1. , -2. ,  0.5])
    """
    X = as_csr_float(X)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D matrix; got shape {X.shape}.")
    if not np.all(np.isfinite(X.data)):
        raise ValueError("X contains NaN or infinity; regret needs finite features.")
    n, d = X.shape
    y = as_1d_labels(y, n)
    yv = np.asarray(y)
    if yv.dtype.kind == "f" and not np.all(np.isfinite(yv)):  # before classes are taken from y: NaN is no class
        i = int(np.flatnonzero(~np.isfinite(yv))[0])
        raise ValueError(f"y[{i}] is {yv[i]}; expected finite class labels or regression targets.")
    _check_options(radius, fit_intercept, max_iter)

    if callable(getattr(learner_or_scores, "partial_fit_scores", None)):
        learner = learner_or_scores
        check_learner(learner)
        name, param = loss_spec(learner, loss, epsilon)
        classification = is_classifier(learner)
        if classification:
            cls = classes
            if cls is None and not hasattr(learner, "classes_"):
                cls = np.unique(y)
            scores = np.asarray(learner.partial_fit_scores(X, y, classes=cls), dtype=np.float64)
            classes = learner.classes_
        else:
            scores = np.asarray(learner.partial_fit_scores(X, y), dtype=np.float64)
    else:
        if loss is None:
            raise ValueError(
                f"loss must be given when regret() receives scores instead of a learner (one of {sorted(LOSSES)})."
            )
        name, param = loss, loss_param(loss, None, epsilon)
        try:
            scores = np.asarray(learner_or_scores, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                "learner_or_scores must be a streamlearn online learner or an array of pre-update "
                f"scores; got {type(learner_or_scores).__name__}."
            ) from None
        classification = classes is not None or name not in REGRESSION_LOSSES
        if classification and classes is None:
            classes = np.unique(y)
        if classification:
            classes = np.unique(np.asarray(classes))
            if classes.shape[0] < 2:
                raise ValueError(f"A classification regret needs at least 2 classes; got {classes.tolist()}.")
            expected = (n,) if classes.shape[0] == 2 else (n, classes.shape[0])
        else:
            expected = (n,)
        if scores.shape != expected:
            raise ValueError(
                f"scores must have shape {expected} (one pre-update score per example"
                f"{'' if len(expected) == 1 else ' and class'}); got {scores.shape}."
            )
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores contain NaN or infinity: the online run diverged, its regret is undefined.")
    allowed = CLASSIFICATION_LOSSES if classification else REGRESSION_LOSSES
    if name not in allowed:
        task = "classification" if classification else "regression"
        raise ValueError(f"The {name!r} loss does not apply to {task}; expected one of {list(allowed)}.")
    if radius is not None and name in _LP_LOSSES:
        raise NotImplementedError(
            f"radius is not supported for the {name!r} loss: its best fixed predictor is found by a linear "
            "program, which cannot express the ball ||w||_2 <= radius. Use radius=None, or the squared or "
            "logistic loss."
        )

    targets = signed_targets(classes, y) if classification else regression_targets(y)
    online = float(np.sum(example_losses(name, param, targets, scores)))

    columns = targets.reshape(n, -1)
    coefs, intercepts, best, solvers, converged, notes = [], [], 0.0, set(), True, []
    for k in range(columns.shape[1]):
        t = np.ascontiguousarray(columns[:, k])
        # One BLAS thread: the solvers' dense work is small (p-vectors in L-BFGS, an n x (d+1) SVD capped at
        # 10^7 entries), and OpenBLAS threads on a busy machine cost far more than they save (see the
        # documentation's benchmark notes).
        with threadpool_limits(limits=1, user_api="blas"):
            w, b, solver, ok, note = _best_fixed(
                X, t, name, param, radius=radius, fit_intercept=fit_intercept, max_iter=max_iter
            )
        best += float(np.sum(loss_value(name, t, X @ w + b, param)))
        coefs.append(w)
        intercepts.append(b)
        solvers.add(solver)
        converged &= ok
        if note and note not in notes:
            notes.append(note)
    best /= columns.shape[1]
    comparator: tuple[Any, Any]
    if columns.shape[1] == 1:
        comparator = (coefs[0], float(intercepts[0]))
    else:
        comparator = (np.vstack(coefs), np.asarray(intercepts, dtype=np.float64))
    value = online - best
    return RegretResult(
        loss=name,
        n_examples=n,
        online_loss=online,
        best_fixed_loss=best,
        regret=value,
        regret_per_example=value / n,
        comparator=comparator,
        radius=None if radius is None else float(radius),
        solver=", ".join(sorted(solvers)),
        converged=bool(converged),
        note=" ".join(notes),
    )


def _check_options(radius, fit_intercept, max_iter):
    if radius is not None and (
        isinstance(radius, bool) or not isinstance(radius, numbers.Real) or not math.isfinite(radius) or radius <= 0
    ):
        raise ValueError(f"radius must be a float in the range (0.0, inf) or None. Got {radius!r} instead.")
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise ValueError(f"fit_intercept must be an instance of 'bool'. Got {fit_intercept!r} instead.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an int in the range [1, inf). Got {max_iter!r} instead.")


# ---------------------------------------------------------------------------------------------------------
# batch solvers: each returns (w, b, solver name, converged, note) for one binary / real target column t
def _best_fixed(X, t, name, param, *, radius, fit_intercept, max_iter):
    n, d = X.shape
    if name == "perceptron":
        return np.zeros(d), 0.0, "exact (w = 0 attains the minimum 0)", True, ""
    if name in _LP_LOSSES:
        w, b, solver = _lp(X, t, name, param, fit_intercept)
        return w, b, solver, True, ""
    if name == "squared":
        solve, solver = _least_squares(X, t, fit_intercept, max_iter)
    else:
        solve, solver = _smooth(X, t, name, fit_intercept, max_iter)
    theta, ok = solve(0.0, None)
    if radius is not None and np.linalg.norm(theta[:d]) > radius:
        theta, ok = _on_sphere(solve, d, radius, theta)
        solver += " + bisection on the L2 penalty"
    w, b = theta[:d].copy(), float(theta[d]) if fit_intercept else 0.0
    note = ""
    if name == "logistic" and np.all(t * (X @ w + b) > 0):
        note = (
            "The comparator separates the data: the infimum of the logistic loss is 0 and is not attained, "
            "so best_fixed_loss is the solver's value and the regret is a lower bound."
        )
    return w, b, solver, ok, note


def _least_squares(X, t, fit_intercept, max_iter):
    """``solve(lam, warm) -> (theta = [w, b], ok)`` minimising ``||X w + b - t||^2 + lam ||w||^2``.

    The intercept is eliminated by centring (``b = mean(t) - mean(X) . w``), so the penalty never touches it.
    Dense SVD of the centred X (every lam in closed form) when it is small enough, else an eigendecomposition
    of the centred normal equations (d small), else lsqr on the centred operator (``damp = sqrt(lam)``).
    """
    n, d = X.shape
    mu = np.asarray(X.mean(axis=0)).ravel() if fit_intercept else np.zeros(d)
    tbar = float(t.mean()) if fit_intercept else 0.0
    tc = t - tbar

    def pack(w):
        return np.append(w, tbar - mu @ w) if fit_intercept else w

    if n * (d + 1) <= _DENSE_LIMIT:
        U, s, Vt = np.linalg.svd(X.toarray() - mu, full_matrices=False)
        keep = s > s.max(initial=0.0) * max(n, d) * np.finfo(float).eps
        U, s, Vt = U[:, keep], s[keep], Vt[keep]
        r = U.T @ tc
        return (lambda lam, warm: (pack(Vt.T @ (s / (s * s + lam) * r)), True)), "least squares (dense SVD)"
    if d <= _NORMAL_EQ_LIMIT:
        G = (X.T @ X).toarray() - n * np.outer(mu, mu)
        evals, Q = scipy.linalg.eigh(G)
        keep = evals > evals.max(initial=0.0) * d * 1e3 * np.finfo(float).eps
        evals, Q = evals[keep], Q[:, keep]
        q = Q.T @ (X.T @ tc)
        return (lambda lam, warm: (pack(Q @ (q / (evals + lam))), True)), "least squares (normal equations)"
    op = LinearOperator(
        (n, d), dtype=np.float64, matvec=lambda v: X @ v - mu @ v, rmatvec=lambda u: X.T @ u - mu * u.sum()
    )

    def solve(lam, warm):
        out = lsqr(op, tc, damp=math.sqrt(lam), atol=1e-12, btol=1e-12, iter_lim=max_iter)
        return pack(out[0]), out[1] in (0, 1, 2, 4, 5)

    return solve, "least squares (scipy.sparse.linalg.lsqr)"


def _smooth(X, t, name, fit_intercept, max_iter):
    """``solve(lam, warm) -> (theta = [w, b], ok)`` minimising ``sum l(t, X w + b) + lam ||w||^2`` for a loss
    with a continuous gradient (logistic, modified Huber) with L-BFGS-B and the exact gradient."""
    n, d = X.shape
    A = sp.hstack([X, np.ones((n, 1))], format="csr") if fit_intercept else X
    At = A.T.tocsr()
    mask = np.ones(A.shape[1])
    mask[d:] = 0.0

    def solve(lam, warm):
        def fun(theta):
            z = A @ theta
            if name == "logistic":
                m = t * z
                loss, dloss = np.logaddexp(0.0, -m), -t * expit(-m)
            else:
                loss, dloss = loss_value(name, t, z), loss_dloss(name, t, z)
            return loss.sum() + lam * np.dot(mask * theta, theta), At @ dloss + 2.0 * lam * mask * theta

        x0 = np.zeros(A.shape[1]) if warm is None else warm
        res = minimize(
            fun,
            x0,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": max_iter, "maxfun": 2 * max_iter, "ftol": 1e-13, "gtol": 1e-8, "maxcor": 30},
        )
        ok = bool(res.success)
        if not ok:  # ABNORMAL line search at machine precision: accept a tiny gradient
            f, g = fun(res.x)
            ok = bool(np.max(np.abs(g)) <= 1e-6 * max(1.0, abs(f)))
        return res.x, ok

    return solve, "L-BFGS-B (scipy)"


def _on_sphere(solve, d, radius, theta):
    """Solution constrained to ``||w|| <= radius`` when the unconstrained ``theta`` is outside: the penalised
    solution ``theta(lam)`` with ``||w(lam)|| = radius`` (the norm decreases as ``lam`` grows), by bisection."""

    def norm(th):
        return np.linalg.norm(th[:d])

    lo, hi = 0.0, 1.0
    th_lo, th_hi, ok = theta, None, True
    for _ in range(80):  # bracket: grow lam until the penalised solution is inside the ball
        th, ok_ = solve(hi, th_lo)
        if norm(th) <= radius:
            th_hi, ok = th, ok_
            break
        lo, th_lo, hi = hi, th, hi * 10.0
    else:  # pragma: no cover - lam = 1e80 keeps every weight at 0
        raise RuntimeError("could not find an L2 penalty that brings the comparator inside the radius ball.")
    for _ in range(200):  # geometric bisection on lam (halving while lo == 0)
        if radius - norm(th_hi) <= 1e-10 * radius:
            break
        mid = 0.5 * hi if lo == 0.0 else math.sqrt(lo * hi)
        if not lo < mid < hi:
            break
        th, ok_ = solve(mid, th_hi)
        if norm(th) > radius:
            lo = mid
        else:
            hi, th_hi, ok = mid, th, ok_
    nrm = norm(th_hi)
    if nrm > radius:  # rounding: project into the ball
        th_hi = th_hi.copy()
        th_hi[:d] *= radius / nrm
    return th_hi, ok


def _lp(X, t, name, eps, fit_intercept):
    """Best fixed predictor of the hinge / epsilon-insensitive loss by linear programming.

    We solve the LP dual, which has one equality row per parameter instead of one inequality row per example
    (much faster than the primal with HiGHS):

    * hinge: ``max sum a_i  s.t.  sum_i a_i t_i x~_i = 0, 0 <= a <= 1``;
    * epsilon-insensitive: ``max sum (t_i - eps) u_i - (t_i + eps) v_i  s.t.  sum_i (u_i - v_i) x~_i = 0,
      0 <= u, v <= 1``;

    with ``x~ = (x, 1)`` when there is an intercept. The primal ``(w, b)`` is minus the equality marginals.
    Strong duality is checked (primal loss recomputed from ``(w, b)`` == dual value); on a gap the primal LP
    ``min sum xi`` over ``(w, b, xi)`` is solved instead.
    """
    n, d = X.shape
    A = sp.hstack([X, np.ones((n, 1))], format="csr") if fit_intercept else X
    p = A.shape[1]
    opts = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9}
    if name == "hinge":
        res = linprog(
            -np.ones(n),
            A_eq=(sp.diags(t) @ A).T.tocsr(),
            b_eq=np.zeros(p),
            bounds=(0.0, 1.0),
            method="highs",
            options=opts,
        )
    else:
        At = A.T.tocsr()
        res = linprog(
            np.concatenate([eps - t, eps + t]),
            A_eq=sp.hstack([At, -At], format="csr"),
            b_eq=np.zeros(p),
            bounds=(0.0, 1.0),
            method="highs",
            options=opts,
        )
    if res.status == 0 and res.x is not None:
        theta = -res.eqlin.marginals
        primal = float(np.sum(loss_value(name, t, A @ theta, eps)))
        if abs(primal + res.fun) <= 1e-7 * max(1.0, abs(res.fun)):
            return theta[:d].copy(), float(theta[d]) if fit_intercept else 0.0, "linear program (HiGHS, dual)"
    return _lp_primal(A, t, name, eps, d, fit_intercept)


def _lp_primal(A, t, name, eps, d, fit_intercept):
    """The primal LP ``min sum xi`` over ``(theta, xi)``: one (hinge) or two (eps) inequality rows per example."""
    n, p = A.shape
    opts = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9}
    eye = sp.identity(n, format="csr")
    if name == "hinge":
        A_ub = sp.hstack([-sp.diags(t) @ A, -eye], format="csr")
        b_ub = -np.ones(n)
    else:
        A_ub = sp.vstack([sp.hstack([A, -eye]), sp.hstack([-A, -eye])], format="csr")
        b_ub = np.concatenate([t + eps, eps - t])
    bounds = np.column_stack([np.r_[np.full(p, -np.inf), np.zeros(n)], np.full(p + n, np.inf)])
    res = linprog(np.r_[np.zeros(p), np.ones(n)], A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs", options=opts)
    if res.status != 0 or res.x is None:
        raise RuntimeError(
            f"linprog (HiGHS) failed to find the best fixed predictor for the {name!r} loss: {res.message}"
        )
    theta = res.x[:p]
    return theta[:d].copy(), float(theta[d]) if fit_intercept else 0.0, "linear program (HiGHS, primal)"
