"""Compact convexified factorization machines (CCFM) trained online: projected OGD and OCCFM (Lin et al., WWW 2018;
Algorithms §7.2-7.4).

The model is one symmetric (d+1) x (d+1) matrix ``C = [[Z, w], [w^T, 2 w0]]`` per output and the score of
``x`` is ``yhat = 1/2 xhat^T C xhat = w0 + w . x + 1/2 x^T Z x`` with ``xhat = (x, 1)``: linear in ``C``, so
any convex loss of ``yhat`` is convex in ``C``; the decision set is the trace-norm ball ``||C||_tr <= delta``.
Unlike the vanilla FM every pair (i, j) interacts, including i = j, and ``Z`` need not be positive
semi-definite.
"""

from collections.abc import Callable

import numpy as np

from .. import _validation
from .._estimator import check_is_fitted
from .._kernels import ccfm as _k
from .._typing import FloatArray
from .._validation import PASS_PARAMS, Interval, Options
from ..base import LogisticProbaMixin, OnlineClassifierMixin, OnlineRegressorMixin, _BaseOnline
from ..losses import loss_code
from .._params import keyword_init, with_defaults
from ._common import PASS_DEFAULTS, check_dense_state, one_blas_thread
from .._validation import csr_args, chunk_args

__all__ = [
    "CCFMOnlineGradientClassifier",
    "CCFMOnlineGradientRegressor",
    "OCCFMClassifier",
    "OCCFMRegressor",
    "occfm_eta",
    "EXACT_MAX_FEATURES",
]

#: ``mode="auto"`` uses the exact (dense) state up to this many features, the low-rank one above
EXACT_MAX_FEATURES = 2000

_LMO = {"lanczos": _k.LMO_LANCZOS, "power": _k.LMO_POWER}
#: step_schedule -> (c, p) with gamma_t = min(1, c / t^p)
_STEPS = {"invsqrt": (1.0, 0.5), "fw": (2.0, 1.0)}
_STAT_NAMES = {"lmo_matvecs": _k.STAT_MATVECS, "lmo_unconverged": _k.STAT_UNCONVERGED}


def occfm_eta(delta: float, grad_bound: float, horizon: int) -> float:
    """The OCCFM step ``eta = D / (2 G T^(3/4))`` of the regret analysis of online conditional gradient.

    Hazan's OCG (Introduction to Online Convex Optimization, Thm 7.3; Algorithms §7.3) sets
    ``eta = D / (2 G T^{3/4})`` with ``D`` the diameter of the decision set and ``G`` a bound on the
    Frobenius norm of the loss gradients. For the trace-norm ball of radius ``delta``, ``D = 2 delta``
    (``||C1 - C2||_F <= ||C1||_tr + ||C2||_tr``); the CCFM gradient is ``l' 1/2 xhat xhat^T``, so
    ``G = max |l'| * 1/2 * max ||xhat||^2``.

    Parameters
    ----------
    delta : float > 0
        Trace-norm radius.
    grad_bound : float > 0
        ``G``, a bound on ``||grad f_t||_F``.
    horizon : int >= 1
        ``T``, the number of rounds.

    Returns
    -------
    float

    Examples
    --------
    >>> round(occfm_eta(delta=10.0, grad_bound=1.0, horizon=10_000), 6)
    0.01
    """
    if delta <= 0 or grad_bound <= 0 or horizon < 1:
        raise ValueError(
            f"occfm_eta needs delta > 0, grad_bound > 0 and horizon >= 1; got {delta}, {grad_bound}, {horizon}."
        )
    return 2.0 * delta / (2.0 * grad_bound * horizon**0.75)


class _CCFMMixin:
    """Shared scoring, diagnostics and the augmented-matrix accessor; state arrays start with ``_state``."""

    # provided by the concrete learners
    _state_stats: np.ndarray
    _dense_C: Callable[[], np.ndarray]
    _stat_names: Callable[[], dict[str, int]]
    _param_arrays: Callable[[], tuple[str, ...]]

    def _n_outputs(self):
        return self._state_stats.shape[0]

    def _decision_function(self, X):
        check_is_fitted(self)
        X = _validation.check_X(self, X, reset=False)
        out = np.empty((X.shape[0], self._n_outputs()))
        self._scores(X, out)
        return _validation.finite_scores(self, out[:, 0] if out.shape[1] == 1 else out)

    def augmented_matrix(self) -> FloatArray:
        """The model as dense ``C = [[Z, w], [w^T, 2 w0]]``: shape (d+1, d+1), or (K, d+1, d+1) for K > 2
        classes. Builds a dense (d+1)^2 array: only for moderate d."""
        check_is_fitted(self)
        C = self._dense_C()
        return C[0] if C.shape[0] == 1 else C

    def diagnostics(self) -> dict[str, float | None]:
        """Counters of the run so far (summed over outputs): see the subclass docstring for their meaning.
        ``trace_norm`` (the largest ||C_k||_tr) is None above 999 features in the dense states (it needs a dense
        eigendecomposition); the scalable OCCFM state gives it from its small core matrix at any size."""
        check_is_fitted(self)
        s = self._state_stats.sum(axis=0)
        out: dict[str, float | None] = {name: float(s[idx]) for name, idx in self._stat_names().items()}
        out["trace_norm"] = self._trace_norm()
        return out

    def _trace_norm(self):
        if not self._small():
            return None
        return float(max(np.abs(np.linalg.eigvalsh(C)).sum() for C in self._dense_C()))

    def _small(self):
        return self.n_features_in_ + 1 <= 1000  # trace_norm needs a dense eigendecomposition

    @property
    def nnz_weights(self) -> int:
        """Number of non-zero stored parameters (entries of the dense C, or of the low-rank factors)."""
        check_is_fitted(self)
        return sum(int(np.count_nonzero(getattr(self, a))) for a in self._param_arrays())


# -------------------------------------------------------------------------------------------------------------
class _CCFMOnlineGradient(_CCFMMixin, _BaseOnline):
    def _allocate(self, n_features, n_outputs, X):
        check_dense_state(
            self,
            n_features,
            n_outputs,
            1,
            "Projected OGD needs the dense matrix and its eigendecomposition: use OCCFMClassifier "
            "or OCCFMRegressor with mode='scalable' for many features.",
        )
        n = n_features + 1
        self._state_C = np.zeros((n_outputs, n, n))
        self._state_tn = np.zeros(n_outputs)
        self._state_stats = np.zeros((n_outputs, _k.N_STATS))

    def _kernel_pass(self, X, targets, sw, out):
        with one_blas_thread():
            t, bad = _k.ccfm_ogd_epoch(
                **chunk_args(X, targets, sw),
                C=self._state_C,
                tn_bound=self._state_tn,
                loss=loss_code(self.loss),
                delta=float(self.delta),
                eta0=float(self.eta0),
                t=self.t_,
                stats=self._state_stats,
                out_scores=out,
            )
        self.t_ = int(t)
        if bad >= 0:
            self._raise_diverged(bad, "eta0")

    def _scores(self, X, out):
        _k.ccfm_dense_scores(X.indptr, X.indices, X.data, self._state_C, np.ones(self._n_outputs()), out)

    def _dense_C(self):
        return self._state_C.copy()

    def _param_arrays(self):
        return ("_state_C",)

    def _stat_names(self):
        return {"eigendecompositions": _k.STAT_EIGH, "projections": _k.STAT_PROJECTIONS}


_OGD_PARAMS = {
    "delta": [Interval(float, 0, None, closed="neither")],
    "eta0": [Interval(float, 0, None, closed="neither")],
    **PASS_PARAMS,
}

_OGD_DOC = """
    The expensive baseline of Lin et al. (WWW 2018): after each example, ``C <- Proj(C - eta0/sqrt(t) * l' 1/2 xhat xhat^T)``
    where ``Proj`` is the Euclidean projection onto ``{C symmetric : ||C||_tr <= delta}``: a full
    eigendecomposition ``C = Q diag(lam) Q^T`` (``numpy.linalg.eigh``, O(d^3)) and the projection of ``lam``
    onto the l1 ball of radius ``delta``. Regret O(sqrt(T)) with ``eta0 = D / G`` (``D = 2 delta``, ``G`` a
    bound on the gradient norm; see :func:`occfm_eta` for ``G``). Implementation shortcut, which changes no
    iterate: an upper bound of ``||C||_tr`` (the last exact value plus the trace norm of each rank-one step)
    is kept, and the eigendecomposition is skipped while that bound is ``<= delta`` (C is then in the ball and
    the projection is the identity). ``diagnostics()`` reports the eigendecompositions done and how many
    changed C. State: a dense (d+1)^2 matrix per output (refused above 4 GiB)."""


class CCFMOnlineGradientClassifier(OnlineClassifierMixin, LogisticProbaMixin, _CCFMOnlineGradient):
    __doc__ = (
        """Compact convexified FM for classification, by projected online gradient descent.
"""
        + _OGD_DOC
        + """

    Parameters
    ----------
    loss : {"logistic", "hinge"}, default="logistic"
        Loss of the score with labels in {-1, +1} (K > 2 classes: one-vs-rest, one matrix per class).
    delta : float > 0, default=10.0
        Trace-norm radius of the decision set (the convex surrogate of a rank budget).
    eta0 : float > 0, default=1.0
        Step ``eta0 / sqrt(t)``.
    max_iter : int >= 1, default=5
        Passes made by ``fit`` (``partial_fit`` always makes one).
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    random_state : int, Generator or None, default=None
        Seed of the shuffling.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    t_ : int
        Examples learnt from so far.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.facto import CCFMOnlineGradientClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = CCFMOnlineGradientClassifier(delta=10.0).partial_fit(X[:2000], y[:2000], classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.2f}")
    0.8...
    """
    )

    _parameter_constraints = {"loss": [Options("logistic", "hinge")], **_OGD_PARAMS}

    __init__ = keyword_init(loss="logistic", delta=10.0, eta0=1.0, **PASS_DEFAULTS)


class CCFMOnlineGradientRegressor(OnlineRegressorMixin, _CCFMOnlineGradient):
    __doc__ = (
        """Compact convexified FM for regression (squared loss ``(yhat - y)^2``), by projected online
    gradient descent.
"""
        + _OGD_DOC
        + """

    Parameters
    ----------
    delta, max_iter, shuffle, random_state
        As in :class:`CCFMOnlineGradientClassifier`.
    eta0 : float > 0, default=0.1
        Step ``eta0 / sqrt(t)``.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.facto import CCFMOnlineGradientRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 3))
    >>> y = 1.0 + X[:, 0] * X[:, 1]
    >>> reg = CCFMOnlineGradientRegressor(delta=5.0, eta0=0.1).fit(X, y)
    >>> print(f"{np.sqrt(np.mean((reg.predict(X) - y) ** 2)):.1f}")
    0.0
    """
    )

    _parameter_constraints = {"loss": [Options("squared")], **_OGD_PARAMS}
    _progressive_loss = "squared"

    __init__ = with_defaults(CCFMOnlineGradientClassifier.__init__, loss="squared", eta0=0.1)


# -------------------------------------------------------------------------------------------------------------
class _OCCFM(_CCFMMixin, _BaseOnline):
    def _resolved_mode(self, n_features):
        if self.mode == "auto":
            return "exact" if n_features <= EXACT_MAX_FEATURES else "scalable"
        return self.mode

    def _allocate(self, n_features, n_outputs, X):
        self.mode_ = self._resolved_mode(n_features)
        n = n_features + 1
        if self.mode_ == "exact":
            check_dense_state(self, n_features, n_outputs, 2, "Use mode='scalable' for many features.")
            self._state_M = np.zeros((n_outputs, n, n))
            self._state_scale = np.ones(n_outputs)
            self._state_S = np.zeros((n_outputs, n, n))
            self._state_q = np.zeros((n_outputs, n))
        else:
            kmax = min(2 * (self.rank + self.ell), n)
            self._state_W = np.zeros((n_outputs, n, kmax))
            self._state_A = np.zeros((n_outputs, kmax, kmax))
            self._state_B = np.zeros((n_outputs, kmax, kmax))
            self._state_kdim = np.zeros(n_outputs, dtype=np.int64)
            self._state_u = np.zeros((n_outputs, kmax))
        self._state_stats = np.zeros((n_outputs, _k.N_STATS))

    def _kernel_pass(self, X, targets, sw, out):
        if self.mode != "auto" and self.mode != self.mode_:
            raise ValueError(
                f"mode={self.mode!r} but {type(self).__name__} was started in mode {self.mode_!r}; "
                "call fit to start again in another mode."
            )
        gc, gp = _STEPS[self.step_schedule]
        common = dict(
            **chunk_args(X, targets, sw),
            loss=loss_code(self.loss),
            delta=float(self.delta),
            eta=float(self.eta),
            gamma_c=gc,
            gamma_p=gp,
            lmo=_LMO[self.lmo],
            lmo_tol=float(self.lmo_tol),
            lmo_max_iter=int(self.lmo_max_iter),
            t=self.t_,
            stats=self._state_stats,
            out_scores=out,
        )
        try:
            t, bad = self._occfm_epoch(common)
        except np.linalg.LinAlgError as exc:  # numba's eigh on a matrix an overflowing step left non-finite
            if "infs or NaNs" not in str(exc):
                raise
            self._raise_diverged(None, "delta", state="sketch")
        self.t_ = int(t)
        if bad >= 0:
            self._raise_diverged(bad, "delta")

    def _occfm_epoch(self, common):
        with one_blas_thread():
            if self.mode_ == "exact":
                return _k.occfm_dense_epoch(
                    M=self._state_M,
                    scale=self._state_scale,
                    S=self._state_S,
                    q_prev=self._state_q,
                    **common,
                )
            if self.rank + self.ell >= self._state_W.shape[2] and self._state_W.shape[2] < self._state_W.shape[1]:
                raise ValueError(
                    f"rank + ell = {self.rank + self.ell} but the basis of {type(self).__name__} "
                    f"holds {self._state_W.shape[2]} vectors (2 (rank + ell) at the first call); "
                    "call fit to start again with larger budgets."
                )
            return _k.occfm_lowrank_epoch(
                W=self._state_W,
                A=self._state_A,
                B=self._state_B,
                kdim=self._state_kdim,
                u_prev=self._state_u,
                rank=int(self.rank),
                ell=int(self.ell),
                **common,
            )

    def _scores(self, X, out):
        if self.mode_ == "exact":
            _k.ccfm_dense_scores(X.indptr, X.indices, X.data, self._state_M, self._state_scale, out)
        else:
            _k.ccfm_lowrank_scores(
                **csr_args(X),
                W=self._state_W,
                A=self._state_A,
                kdim=self._state_kdim,
                out=out,
            )

    def _dense_C(self):
        if self.mode_ == "exact":
            return self._state_M * self._state_scale[:, None, None]
        return self._from_basis(self._state_A)

    def _from_basis(self, core):
        """``W core W^T`` per output, dense: symmetric since ``core`` is, exactly; the product's rounding is not,
        so the materialised copy is symmetrised."""
        C = np.array([W[:, :kd] @ M[:kd, :kd] @ W[:, :kd].T for W, M, kd in zip(self._state_W, core, self._state_kdim)])
        return 0.5 * (C + C.transpose(0, 2, 1))

    def _trace_norm(self):
        if self.mode_ == "exact":
            return super()._trace_norm()
        # C = W A W^T with orthonormal W: ||C||_tr = ||A||_tr
        return float(
            max(
                np.abs(np.linalg.eigvalsh(A[:kd, :kd])).sum() if kd else 0.0
                for A, kd in zip(self._state_A, self._state_kdim)
            )
        )

    def dense_gradient_sum(self) -> FloatArray:
        """The sum of past gradients ``S = sum_tau l'_tau 1/2 xhat xhat^T`` as the model holds it: exact in
        mode "exact", the sketch ``W B W^T`` in mode "scalable". Shape as :meth:`augmented_matrix`."""
        check_is_fitted(self)
        if self.mode_ == "exact":
            S = self._state_S.copy()
        else:
            S = self._from_basis(self._state_B)
        return S[0] if S.shape[0] == 1 else S

    def _param_arrays(self):
        return ("_state_M",) if self.mode_ == "exact" else ("_state_W", "_state_A")

    def _stat_names(self):
        names = {"lmo_matvecs": _k.STAT_MATVECS, "lmo_unconverged": _k.STAT_UNCONVERGED}
        if self.mode_ == "scalable":
            names.update(
                compressions=_k.STAT_EIGH,
                dropped_eigenpairs=_k.STAT_PROJECTIONS,
                dropped_trace=_k.STAT_DROPPED_TRACE,
                sketch_error_bound=_k.STAT_SKETCH_SHRINK,
                skipped_directions=_k.STAT_SKIPPED,
            )
        return names


_OCCFM_PARAMS = {
    "delta": [Interval(float, 0, None, closed="neither")],
    "eta": [Interval(float, 0, None, closed="neither")],
    "step_schedule": [Options("invsqrt", "fw")],
    "mode": [Options("auto", "exact", "scalable")],
    "rank": [Interval(int, 1, None, closed="left")],
    "ell": [Interval(int, 1, None, closed="left")],
    "lmo": [Options("lanczos", "power")],
    "lmo_tol": [Interval(float, 0, 1, closed="neither")],
    "lmo_max_iter": [Interval(int, 1, None, closed="left")],
    **PASS_PARAMS,
}

_OCCFM_DOC = """
    Online conditional gradient on the compact convexified FM (Lin et al., WWW 2018, Alg. 2; Algorithms §7.3). With
    ``C_1 = 0`` and ``gamma_t = 1/sqrt(t)``, after the score of example t (made with ``C_t``)::

        S_{t-1} = sum_{tau < t} l'(yhat_tau, y_tau) 1/2 xhat_tau xhat_tau^T     (newest gradient excluded)
        (lam, q) = largest-|lam| eigenpair of -grad F_t(C_t) = -(eta S_{t-1} + 2 C_t)
        C_{t+1} = (1 - gamma_t) C_t + gamma_t delta sgn(lam) q q^T

    ``F_t(C) = eta sum_{tau<t} <grad f_tau(C_tau), C> + ||C - C_1||_F^2``; the linear step
    ``argmin_{||C||_tr <= delta} <C, grad F_t(C_t)> = delta sgn(lam) q q^T`` (the paper's Lemma 5 / Thm 1) needs one
    extreme eigenvector, found by Lanczos (``lmo="lanczos"``: full reorthogonalisation, restarts every 32
    steps) or power iteration (``lmo="power"``: converges at rate |lam_2|/|lam_1| and fails when the top two
    magnitudes are equal, e.g. +-lam), warm-started from the previous eigenvector plus a fixed 1e-3
    perturbation, stopped at ``||H q - lam q|| <= lmo_tol |lam|``. Every iterate is a convex combination of
    points of the ball, so it stays in it (the paper's Thm 2). Where the paper is silent we chose:
    ``C_1 = 0`` (so the regulariser is ``||C||_F^2``), ``gamma_t = 1/sqrt(t)`` (the legible footnote, the
    default ``step_schedule="invsqrt"``; ``"fw"`` is the classic Frank-Wolfe ``min(1, 2/t)``, an ablation that
    is not the paper's), and ``eta`` is a parameter: :func:`occfm_eta` gives the value of the OCG regret
    analysis. Targets are used as given (no centring: the global bias is ``C[d, d] / 2``, inside the ball, as
    in the paper). When
    ``-grad F_t(C_t) = 0`` (t = 1) the step only shrinks C by ``1 - gamma_t``.

    Two state representations (``mode``):

    * ``"exact"``: dense C (as ``scale * M``, so the ``(1 - gamma_t)`` shrink is O(1)) and dense S, each
      (d+1)^2; O(d^2) per example plus O(d^2) per Lanczos step. ``"auto"`` picks it up to
      ``EXACT_MAX_FEATURES`` = 2000 features.
    * ``"scalable"``: one orthonormal basis W of at most ``kmax = 2 (rank + ell)`` columns with
      ``C = W A W^T`` and ``S ~ W B W^T``. The linear step is exact on the small matrix ``-(eta B + 2 A)``
      (the range of -grad F_t lies in span(W)); the direction of ``xhat_t`` outside span(W) is appended to W.
      When W is full it is compressed: C keeps its ``rank`` largest-|eigenvalue| eigenpairs (truncation:
      the trace norm cannot grow, so C stays in the ball, but the regret proof no longer applies
      verbatim), and S keeps ``ell`` eigenpairs shrunk Frequent-Directions style by the next |eigenvalue|
      (a symmetric, indefinite variant of FD; each shrink adds at most its amount to ``||S - W B W^T||_2``,
      reported as ``diagnostics()["sketch_error_bound"]``). Nothing is approximated while rank(C) <= rank
      and rank(S) <= ell (then both modes give the same iterates). Memory O(d kmax); cost per example
      O(kmax nnz + d kmax + kmax^2 x Lanczos steps), independent of t.

    ``diagnostics()`` reports Lanczos/power matrix-vector products, linear steps stopped by ``lmo_max_iter``
    and, in scalable mode, compressions, dropped eigenpairs and trace norm, and the sketch error bound."""

_OCCFM_PARAM_DOC = """
    delta : float > 0, default=10.0
        Trace-norm radius of the decision set (the convex surrogate of a rank budget).
    eta : float > 0, default=0.01
        Weight of the past gradients against the regulariser ``||C||_F^2`` in ``F_t``; see :func:`occfm_eta`.
    step_schedule : {"invsqrt", "fw"}, default="invsqrt"
        Conditional-gradient step ``gamma_t``: ``1/sqrt(t)`` (the paper's) or ``min(1, 2/t)`` (classic
        Frank-Wolfe; not the paper's, kept for comparison).
    mode : {"auto", "exact", "scalable"}, default="auto"
        State representation (above). Fixed by the first call to ``partial_fit``/``fit``.
    rank : int >= 1, default=20
        Rank budget of C in scalable mode. The truncation costs accuracy once C would need more (on
        MovieLens-100K the test RMSE of one pass falls steadily from rank = ell = 10 to 120: the OCCFM
        reproduction in the documentation) and the cost per example grows about quadratically with it.
    ell : int >= 1, default=20
        Sketch size of the gradient sum in scalable mode.
    lmo : {"lanczos", "power"}, default="lanczos"
        Eigen-solver of the linear step.
    lmo_tol : float in (0, 1), default=1e-6
        Relative residual at which the eigen-solver stops.
    lmo_max_iter : int >= 1, default=200
        Matrix-vector products allowed per linear step (the best vector so far is used past it).
    max_iter : int >= 1, default=5
        Passes made by ``fit`` (``partial_fit`` always makes one).
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    random_state : int, Generator or None, default=None
        Seed of the shuffling (the algorithm itself is deterministic)."""


class OCCFMClassifier(OnlineClassifierMixin, LogisticProbaMixin, _OCCFM):
    __doc__ = (
        """Online compact convexified factorization machine (OCCFM) for classification.
"""
        + _OCCFM_DOC
        + """

    Parameters
    ----------
    loss : {"logistic", "hinge"}, default="logistic"
        Loss of the score with labels in {-1, +1} (K > 2 classes: one-vs-rest, one model per class)."""
        + _OCCFM_PARAM_DOC
        + """

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    mode_ : {"exact", "scalable"}
    t_ : int
        Examples learnt from so far.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.facto import OCCFMClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = OCCFMClassifier(delta=20.0, eta=0.01).partial_fit(X[:4000], y[:4000], classes=[-1, 1])
    >>> print(clf.mode_, f"{clf.score(X_test, y_test):.2f}")
    exact 0.8...
    """
    )

    _parameter_constraints = {"loss": [Options("logistic", "hinge")], **_OCCFM_PARAMS}

    __init__ = keyword_init(
        loss="logistic",
        delta=10.0,
        eta=0.01,
        step_schedule="invsqrt",
        mode="auto",
        rank=20,
        ell=20,
        lmo="lanczos",
        lmo_tol=1e-6,
        lmo_max_iter=200,
        **PASS_DEFAULTS,
    )


class OCCFMRegressor(OnlineRegressorMixin, _OCCFM):
    __doc__ = (
        """Online compact convexified factorization machine (OCCFM) for regression (squared loss
    ``(yhat - y)^2``).
"""
        + _OCCFM_DOC
        + """

    Predictions are not clipped to the range of the targets.

    Parameters
    ----------
    loss : {"squared"}, default="squared"
        The loss."""
        + _OCCFM_PARAM_DOC
        + """

    Attributes
    ----------
    mode_ : {"exact", "scalable"}
    t_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.facto import OCCFMRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 3))
    >>> y = 1.0 + X[:, 0] * X[:, 1]
    >>> reg = OCCFMRegressor(delta=5.0, eta=0.01).fit(X, y)
    >>> print(reg.mode_, f"{np.sqrt(np.mean((reg.predict(X) - y) ** 2)):.1f}")
    exact 0.1
    """
    )

    _parameter_constraints = {"loss": [Options("squared")], **_OCCFM_PARAMS}
    _progressive_loss = "squared"

    __init__ = with_defaults(OCCFMClassifier.__init__, loss="squared")
