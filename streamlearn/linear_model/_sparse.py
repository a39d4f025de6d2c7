"""Sparse (L1-regularised) online linear learners, O(nnz(x)) per example (Algorithms §4.1-4.6).

Five update rules, each for classification (logistic, hinge or squared loss on labels -1/+1, one-vs-rest
for more classes) and regression (squared loss):

* :class:`SimpleTruncationClassifier` / :class:`SimpleTruncationRegressor` - SGD, and every k-th step
  the weights with ``|w_i| <= theta`` are set to 0 (4.1);
* :class:`TruncatedGradientClassifier` / :class:`TruncatedGradientRegressor` - Langford, Li and Zhang's
  truncated gradient: every k-th step weights in ``[-theta, theta]`` are pulled towards 0 by the
  gravity ``k eta_t g`` (4.2);
* :class:`FOBOSClassifier` / :class:`FOBOSRegressor` - L1-FOBOS: SGD then soft thresholding by
  ``eta_t l1`` every step (4.3);
* :class:`RDAClassifier` / :class:`RDARegressor` - L1-RDA, Xiao's regularised dual averaging (4.4);
* :class:`FTRLProximalClassifier` / :class:`FTRLProximalRegressor` - McMahan et al.'s FTRL-Proximal
  with per-coordinate learning rates and L1 + L2 (4.5).

All updates are lazy (4.6): an example costs O(nnz(x)) whatever the number of features; no step sweeps
the whole weight vector. The truncation family keeps, per feature, the cumulative penalty up to which its
weight is current and catches it up when the feature next occurs; RDA and FTRL do not store ``w`` at all
and compute ``w_i`` from ``(G_i, t)`` or ``(z_i, n_i)``. The weights are materialised when ``coef_`` (or
``intercept_``) is read: each read builds a fresh array from the state (O(K d); writing to it does not
change the model). ``decision_function`` and ``predict`` compute only the weights they need (O(K nnz)).

The intercept is the weight of a constant feature 1 and is never penalised (no truncation, L1 or L2):
the papers state their rules for ``w`` alone, and shrinking the bias towards 0 only biases predictions.
"""

import copy
import math
from typing import Any

import numpy as np

from .. import _validation
from .._estimator import check_is_fitted
from .._kernels import sparse_l1 as _k
from .._typing import FloatArray
from .._validation import LINEAR_PASS_PARAMS, Interval, Options
from ..base import BaseOnlineLinear, LogisticProbaMixin, OnlineClassifierMixin, OnlineRegressorMixin
from ..losses import loss_code
from .._mixing import MixableMixin, mixed_count, weighted_average
from .._params import LINEAR_PASS_DEFAULTS, keyword_init, with_defaults
from .._validation import csr_args, chunk_args

_PASS_PARAMS = LINEAR_PASS_PARAMS
_CLF_LOSS = {"loss": [Options("logistic", "hinge", "squared")]}
_REG_LOSS = {"loss": [Options("squared")]}
_SGD_PARAMS = {
    "eta0": [Interval(float, 0, None, closed="neither")],
    "learning_rate": [Options("invsqrt", "constant")],
}
#: the defaults of the step and pass parameters that end the classifiers' lists (regressors: eta0=0.01)
_SGD_DEFAULTS = {"eta0": 0.5, "learning_rate": "invsqrt", **LINEAR_PASS_DEFAULTS}
_SCHEDULES = {"invsqrt": _k.SCHEDULE_INVSQRT, "constant": _k.SCHEDULE_CONSTANT}
#: the truncation rules as data: learner's rule -> (kernel rule, theta, k, lam) from its parameters
_TRUNCATION_RULES = {
    "simple": lambda est: (_k.RULE_HARD, float(est.theta), int(est.k), 0.0),
    "gradient": lambda est: (_k.RULE_SOFT, float(est.theta), int(est.k), float(est.gravity)),
    "fobos": lambda est: (_k.RULE_SOFT, np.inf, 1, float(est.l1)),
}


class _LazyLinearMixin:
    """Feature-major state arrays (row j: feature j, row d: the intercept; see streamlearn._kernels.sparse_l1)
    allocated by ``_allocate``; ``coef_``/``intercept_`` are built from them on demand by ``_materialize``;
    scores come from ``_scores`` in O(K nnz)."""

    _diverge_hint = "eta0"
    _is_regressor: bool  # set by the estimator base class

    def _state_shape(self, n_features, n_outputs):
        raise NotImplementedError

    def _allocate(self, n_features, n_outputs, X):
        self._state = np.zeros(self._state_shape(n_features, n_outputs), dtype=np.float64)

    def _n_outputs(self):
        """The number of outputs K: the state's columns (its rows are the features and the intercept)."""
        return self._state.shape[1]

    def _epoch(self, kernel, X, targets, sw, out, **params):
        """One pass of ``kernel`` (an ``*_epoch`` of streamlearn._kernels.sparse_l1) over the chunk: the rows, the
        loss, the intercept setting and the example count, with the rule's own ``params``; the kernel returns
        ``(t, *more, bad)``: ``t_`` is updated, ``more`` goes to ``_after_epoch``, a divergence raises."""
        t, *more, bad = kernel(
            **chunk_args(X, targets, sw),
            fit_intercept=bool(self.fit_intercept),
            loss=loss_code(self.loss),
            t=self.t_,
            out_scores=out,
            **params,
        )
        self.t_ = int(t)
        self._after_epoch(*more)
        if bad >= 0:
            self._raise_diverged(bad, self._diverge_hint)

    def _after_epoch(self):
        """The kernel's results besides ``t`` and ``bad`` (none by default)."""

    def _score_with(self, kernel, X, out, **params):
        """The scores of the rows of ``X`` into ``out`` by ``kernel`` (a ``*_scores`` of sparse_l1), from the rule's
        state and parameters ``params``."""
        kernel(**csr_args(X), fit_intercept=bool(self.fit_intercept), out=out, **params)

    def _weights(self):
        """The materialised model: (K, d + 1), last column the intercept."""
        w = self._materialize(np.empty((self._n_outputs(), self._state.shape[0]), dtype=np.float64))
        w += 0.0  # the kernels' branch-free thresholds give -0.0 for some zeros: show them as 0.0
        return w

    def _not_fitted(self, name):
        if not self._is_started():
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r} before fit or partial_fit.")

    @property
    def coef_(self) -> FloatArray:
        """The weights, materialised from the lazy state at each read: shape (K, n_features), or
        (n_features,) for regressors. A fresh array: writing to it does not change the model."""
        self._not_fitted("coef_")
        w = self._weights()[:, :-1]
        return w[0].copy() if self._is_regressor else np.ascontiguousarray(w)

    @property
    def intercept_(self) -> FloatArray:
        """The intercepts, shape (K,) (0 when ``fit_intercept=False``)."""
        self._not_fitted("intercept_")
        return self._weights()[:, -1].copy()

    def _coef_2d(self):
        return np.ascontiguousarray(self._weights()[:, :-1])

    def _intercept_1d(self):
        return self._weights()[:, -1].copy()

    @property
    def nnz_weights(self) -> int:
        """Number of non-zero weights (coefficients and intercepts) of the materialised model."""
        check_is_fitted(self)
        return int(np.count_nonzero(self._weights()))

    def _decision_function(self, X):
        check_is_fitted(self)
        X = _validation.check_X(self, X, reset=False)
        K = self._n_outputs()
        out = np.empty((X.shape[0], K), dtype=np.float64)
        if X.shape[0]:
            self._scores(X, out)
        return _validation.finite_scores(self, out[:, 0] if K == 1 else out)


class _Truncated(_LazyLinearMixin, MixableMixin, BaseOnlineLinear):
    """Simple truncation, truncated gradient and L1-FOBOS: one kernel, three settings of (rule, theta, k, lam)."""

    def _state_shape(self, n_features, n_outputs):
        return (n_features + 1, n_outputs + 1)  # weights, then the truncation mark

    def _allocate(self, n_features, n_outputs, X):
        super()._allocate(n_features, n_outputs, X)
        self._state_penalty = 0.0

    def _n_outputs(self):
        return self._state.shape[1] - 1

    #: the concrete learner's truncation rule: a key of _TRUNCATION_RULES
    _truncation_rule = ""

    def _truncation(self):
        """``(rule, theta, k, lam)`` for the kernel, from the learner's rule and parameters."""
        return _TRUNCATION_RULES[self._truncation_rule](self)

    def _kernel_pass(self, X, targets, sw, out):
        rule, theta, k, lam = self._truncation()
        self._epoch(
            _k.truncated_epoch,
            X,
            targets,
            sw,
            out,
            wm=self._state,
            rule=rule,
            theta=theta,
            k=k,
            lam=lam,
            eta0=float(self.eta0),
            schedule=_SCHEDULES[self.learning_rate],
            penalty=self._state_penalty,
        )

    def _after_epoch(self, penalty):
        self._state_penalty = float(penalty)

    def _materialize(self, out):
        rule, theta, _, _ = self._truncation()
        return _k.truncated_materialize(self._state, self._state_penalty, theta, rule, out)

    def _after_load(self):
        """Rebuild the mark column of a file whose pending truncations were applied before writing (every
        feature's mark equals the penalty). Files written now hold the whole state, marks included, so that a
        loaded model continues bit for bit as the saved one would have (saving never changes the model)."""
        if getattr(self, "_state_marks", None) == "flushed":
            w = self._state
            wm = np.empty((w.shape[0], w.shape[1] + 1), dtype=np.float64)
            wm[:, :-1] = w
            wm[:-1, -1] = self._state_penalty
            wm[-1, -1] = 0.0  # the intercept row is never truncated: its mark stays at its initial 0
            self._state = wm
            del self._state_marks

    def _scores(self, X, out):
        rule, theta, _, _ = self._truncation()
        self._score_with(
            _k.truncated_scores, X, out, wm=self._state, penalty=self._state_penalty, theta=theta, rule=rule
        )

    # parameter mixing (streamlearn.distributed.fit_mixing)
    mixing_description = (
        "the weights after every pending truncation is applied to each partition's model (the lazy marks are "
        "flushed, so the averaged numbers are the models' actual weights); the marks and the "
        "cumulative penalty restart equal, at the weighted mean penalty (only their differences "
        "matter)"
    )

    def finish_local_passes(self) -> None:
        """Apply every pending truncation, so the state holds the model's actual weights."""
        rule, theta, _, _ = self._truncation()
        _k.truncated_flush(self._state, self._state_penalty, theta, rule)

    @classmethod
    def mix(cls, start: Any, models: list[Any], weights: FloatArray) -> Any:
        """The mixed model of one round (see ``mixing_description``)."""
        out = copy.deepcopy(models[0])
        K = out._state.shape[1] - 1
        penalty = float(sum(w * m._state_penalty for m, w in zip(models, weights)))
        state = np.empty_like(out._state)
        state[:, :K] = weighted_average([m._state[:, :K] for m in models], weights)
        state[:, K] = penalty
        out._state = state
        out._state_penalty = penalty
        out.t_ = mixed_count(start, models)
        return out


_SIMPLE_PARAMS = {
    "theta": [Interval(float, 0, None, closed="left")],
    "k": [Interval(int, 1, None, closed="left")],
    **_SGD_PARAMS,
    **_PASS_PARAMS,
}


class SimpleTruncationClassifier(LogisticProbaMixin, OnlineClassifierMixin, _Truncated):
    """Simple truncation (Algorithms §4.1): SGD, and every ``k``-th step ``w_i <- 0`` where ``|w_i| <= theta``.

    Round t (t = 1, 2, ...): ``v = w - eta_t l'(w . x + b, y) x`` with ``eta_t = eta0 / sqrt(t)`` (or
    ``eta0``); if ``t mod k == 0`` then ``w_i = 0 if |v_i| <= theta else v_i`` for *every* feature i, else
    ``w = v``. The truncation of features absent from the example is applied lazily (when the feature next
    occurs, or when ``coef_`` is read), so an example costs O(nnz(x)). The intercept is never truncated.
    This rule is known to be too aggressive: a weight that is still small when a truncation round comes
    is lost; :class:`TruncatedGradientClassifier` shrinks gradually instead.

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared"}, default="logistic"
        Loss on the score ``z = w . x + b`` with labels in {-1, +1}: ``log(1 + exp(-y z))``,
        ``max(0, 1 - y z)`` or ``(z - y)^2``. ``predict_proba`` exists only for ``"logistic"``.
    theta : float >= 0, default=0.01
        Truncation threshold: weights with ``|w_i| <= theta`` are zeroed on truncation rounds. 0 keeps
        every non-zero weight (plain SGD).
    k : int >= 1, default=10
        Truncate every ``k`` examples (the examples with ``t mod k == 0``).
    eta0 : float > 0, default=0.5
        Base learning rate.
    learning_rate : {"invsqrt", "constant"}, default="invsqrt"
        ``eta_t = eta0 / sqrt(t)`` or ``eta_t = eta0``.
    fit_intercept : bool, default=True
        Learn an (unpenalised) intercept.
    max_iter : int >= 1, default=5
        Passes made by ``fit`` (``partial_fit`` always makes one).
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    random_state : int, Generator or None, default=None
        Seed of the shuffling.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Materialised at each read (pending truncations applied); a fresh array.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    t_ : int
        Examples learnt from so far (examples of weight 0 do not count).
    nnz_weights : int
        Non-zero weights and intercepts.

    Examples
    --------
    {example}
    """

    __init__ = keyword_init(loss="logistic", theta=0.01, k=10, **_SGD_DEFAULTS)

    _parameter_constraints = {**_CLF_LOSS, **_SIMPLE_PARAMS}
    _truncation_rule = "simple"


class SimpleTruncationRegressor(OnlineRegressorMixin, _Truncated):
    """Simple truncation (Algorithms §4.1) for regression with the squared loss ``(z - y)^2``.

    The rule of :class:`SimpleTruncationClassifier`: SGD with ``eta_t = eta0 / sqrt(t)`` (or ``eta0``),
    and every ``k``-th step the weights with ``|w_i| <= theta`` are set to 0 (lazily, O(nnz) per example).

    Parameters
    ----------
    loss : {"squared"}, default="squared"
        The loss ``(z - y)^2``, the only one of the regressor.
    theta : float >= 0, default=0.01
        Truncation threshold.
    k : int >= 1, default=10
        Truncate every ``k`` examples.
    eta0 : float > 0, default=0.01
        Base learning rate. The squared loss diverges when ``eta0 * ||x||^2`` is large: scale the features.
    learning_rate, fit_intercept, max_iter, shuffle, random_state
        As in :class:`SimpleTruncationClassifier`.

    Examples
    --------
    {example}
    """

    _parameter_constraints = {**_REG_LOSS, **_SIMPLE_PARAMS}
    _truncation_rule = "simple"

    __init__ = with_defaults(SimpleTruncationClassifier.__init__, loss="squared", eta0=0.01)


_TG_PARAMS = {
    "gravity": [Interval(float, 0, None, closed="left")],
    # theta = inf is TG's default and a case of the paper (every weight pulled: L1-FOBOS when k = 1)
    "theta": [Interval(float, 0, math.inf, closed="both")],
    "k": [Interval(int, 1, None, closed="left")],
    **_SGD_PARAMS,
    **_PASS_PARAMS,
}


class TruncatedGradientClassifier(LogisticProbaMixin, OnlineClassifierMixin, _Truncated):
    """Truncated gradient (Langford, Li, Zhang, JMLR 2009; Algorithms §4.2), lazily in O(nnz(x)).

    Round t: ``v = w - eta_t l'(w . x + b, y) x``; if ``t mod k == 0`` then ``w_i = T1(v_i, k eta_t g,
    theta)`` for every feature, else ``w = v``, where ``T1(v, a, theta)`` is ``max(0, v - a)`` for
    ``v in [0, theta]``, ``min(0, v + a)`` for ``v in [-theta, 0]`` and ``v`` otherwise. Limiting cases
    (Langford, Li, Zhang 2009): ``k eta_t g >= theta`` gives simple truncation at ``theta``; ``theta = inf`` and ``k = 1``
    give ``w = sgn(v) max(0, |v| - eta_t g)``, the L1 (sub)gradient step clipped at zero, i.e. L1-FOBOS.
    Some restatements of TG print ``max`` in the second case of T1 (a typo for ``min``), and a
    ``theta = inf`` case ``w - eta g - eta g sgn(w)`` drops the clip at 0 (Algorithms §4.2, 8): the
    clipped form, which is what TG computes, is used. The intercept is never truncated.

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared"}, default="logistic"
        As in :class:`SimpleTruncationClassifier`.
    gravity : float >= 0, default=1e-4
        The L1 strength ``g`` (lambda in the paper): every truncation round pulls small weights towards 0
        by ``k eta_t g``. 0 is plain SGD.
    theta : float >= 0 or inf, default=inf
        Only weights with ``|w_i| <= theta`` are pulled; larger ones are left alone. ``inf`` pulls every weight.
    k : int >= 1, default=1
        Truncate every ``k`` examples (with ``k`` times the gravity).
    eta0 : float > 0, default=0.5
        Base learning rate.
    learning_rate : {"invsqrt", "constant"}, default="invsqrt"
        ``eta_t = eta0 / sqrt(t)`` or ``eta_t = eta0``.
    fit_intercept, max_iter, shuffle, random_state
        As in :class:`SimpleTruncationClassifier`.

    Examples
    --------
    {example}
    """

    _parameter_constraints = {**_CLF_LOSS, **_TG_PARAMS}
    _truncation_rule = "gradient"

    __init__ = keyword_init(loss="logistic", gravity=1e-4, theta=float("inf"), k=1, **_SGD_DEFAULTS)


class TruncatedGradientRegressor(OnlineRegressorMixin, _Truncated):
    """Truncated gradient (Algorithms §4.2) for regression with the squared loss ``(z - y)^2``.

    The rule of :class:`TruncatedGradientClassifier`, lazily in O(nnz(x)) per example.

    Parameters
    ----------
    loss : {"squared"}, default="squared"
        The loss ``(z - y)^2``, the only one of the regressor.
    gravity : float >= 0, default=1e-4
        L1 strength ``g``.
    theta : float >= 0 or inf, default=inf
        Only weights with ``|w_i| <= theta`` are pulled towards 0 (``inf``: every weight).
    k : int >= 1, default=1
        Truncate every ``k`` examples.
    eta0 : float > 0, default=0.01
        Base learning rate (scale the features: the squared loss diverges for large ``eta0 ||x||^2``).
    learning_rate, fit_intercept, max_iter, shuffle, random_state
        As in :class:`SimpleTruncationClassifier`.

    Examples
    --------
    {example}
    """

    _parameter_constraints = {**_REG_LOSS, **_TG_PARAMS}
    _truncation_rule = "gradient"

    __init__ = with_defaults(TruncatedGradientClassifier.__init__, loss="squared", eta0=0.01)


_FOBOS_PARAMS = {"l1": [Interval(float, 0, None, closed="left")], **_SGD_PARAMS, **_PASS_PARAMS}


class FOBOSClassifier(LogisticProbaMixin, OnlineClassifierMixin, _Truncated):
    """L1-FOBOS (Duchi and Singer, JMLR 2009; Algorithms §4.3), lazily in O(nnz(x)) per example.

    Round t: ``v = w - eta_t l'(w . x + b, y) x``, then ``w_i = sgn(v_i) max(0, |v_i| - eta_t l1)`` for
    every feature. The step of the proximal half ``eta_{t+1/2}`` is a choice; ``eta_t`` is used
    (the same step as the gradient half). Soft thresholds compose additively, so a feature absent from
    the example is thresholded lazily by the sum of the missed ``eta_s l1`` when it next occurs or when
    ``coef_`` is read. The intercept is not thresholded. This is :class:`TruncatedGradientClassifier` with
    ``theta=inf``, ``k=1`` and ``gravity=l1``.

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared"}, default="logistic"
        As in :class:`SimpleTruncationClassifier`.
    l1 : float >= 0, default=1e-4
        L1 strength lambda (the penalty ``l1 ||w||_1``).
    eta0 : float > 0, default=0.5
        Base learning rate.
    learning_rate : {"invsqrt", "constant"}, default="invsqrt"
        ``eta_t = eta0 / sqrt(t)`` or ``eta_t = eta0``.
    fit_intercept, max_iter, shuffle, random_state
        As in :class:`SimpleTruncationClassifier`.

    Examples
    --------
    {example}
    """

    _parameter_constraints = {**_CLF_LOSS, **_FOBOS_PARAMS}
    _truncation_rule = "fobos"

    __init__ = keyword_init(loss="logistic", l1=1e-4, **_SGD_DEFAULTS)


class FOBOSRegressor(OnlineRegressorMixin, _Truncated):
    """L1-FOBOS (Algorithms §4.3) for regression with the squared loss ``(z - y)^2``.

    The rule of :class:`FOBOSClassifier`, lazily in O(nnz(x)) per example.

    Parameters
    ----------
    loss : {"squared"}, default="squared"
        The loss ``(z - y)^2``, the only one of the regressor.
    l1 : float >= 0, default=1e-4
        L1 strength.
    eta0 : float > 0, default=0.01
        Base learning rate (scale the features: the squared loss diverges for large ``eta0 ||x||^2``).
    learning_rate, fit_intercept, max_iter, shuffle, random_state
        As in :class:`SimpleTruncationClassifier`.

    Examples
    --------
    {example}
    """

    _parameter_constraints = {**_REG_LOSS, **_FOBOS_PARAMS}
    _truncation_rule = "fobos"

    __init__ = with_defaults(FOBOSClassifier.__init__, loss="squared", eta0=0.01)


# ---------------------------------------------------------------------------------------------------
# L1-RDA
class _RDA(_LazyLinearMixin, MixableMixin, BaseOnlineLinear):
    _diverge_hint = "1/gamma (raise gamma)"
    _parameter_constraints = {
        "l1": [Interval(float, 0, None, closed="left")],
        "gamma": [Interval(float, 0, None, closed="neither")],
        **_PASS_PARAMS,
    }

    def _state_shape(self, n_features, n_outputs):
        return (n_features + 1, n_outputs)  # the gradient sums G

    def _kernel_pass(self, X, targets, sw, out):
        self._epoch(_k.rda_epoch, X, targets, sw, out, G=self._state, lam=float(self.l1), gamma=float(self.gamma))

    def _materialize(self, out):
        return _k.rda_materialize(self._state, self.t_, float(self.l1), float(self.gamma), out)

    def _scores(self, X, out):
        self._score_with(_k.rda_scores, X, out, G=self._state, t=self.t_, lam=float(self.l1), gamma=float(self.gamma))

    # parameter mixing (streamlearn.distributed.fit_mixing)
    mixing_description = (
        "the mean gradients ``G_k / t_k`` of the partitions, averaged by examples and multiplied by "
        "the total ``t_`` (examples seen): RDA thresholds this mean gradient against ``l1``, and "
        "``sqrt(t)`` is the step scale of one learner that saw every example. (Adding the "
        "partitions' increments of ``G`` instead, which RDA's additive state suggests, mixed "
        "worse: the increments are gradients at the partitions' diverging models, all counted "
        "at full weight.)"
    )

    @classmethod
    def mix(cls, start: Any, models: list[Any], weights: FloatArray) -> Any:
        """The mixed model of one round (see ``mixing_description``)."""
        out = copy.deepcopy(models[0])
        t = mixed_count(start, models)
        out._state = weighted_average([m._state / max(m.t_, 1) for m in models], weights) * t
        out.t_ = t
        return out


class RDAClassifier(LogisticProbaMixin, OnlineClassifierMixin, _RDA):
    """L1-RDA, regularised dual averaging (Xiao, JMLR 2010; Algorithms §4.4), O(nnz(x)) per example.

    State: the sum ``G`` of the loss gradients and the number of rounds ``t``. The model after t rounds is
    ``argmin_w gbar . w + l1 ||w||_1 + gamma / (2 sqrt(t)) ||w||^2`` with ``gbar = G / t``, i.e.
    ``w_i = 0 if |gbar_i| <= l1 else -(sqrt(t) / gamma) (gbar_i - l1 sgn(gbar_i))`` (Xiao, JMLR 2010;
    zeroing on ``|gbar_i| < l1`` instead gives 0 in the boundary case too). Nothing is stored per weight:
    ``w_i`` is computed from ``(G_i, t)`` when it is needed, with the current ``t`` (so ``gbar_i`` keeps
    shrinking while feature i is absent, as the algorithm says). The intercept follows the same rule with
    ``l1 = 0``. RDA thresholds the *average* gradient against ``l1`` at every step, which is why it is
    sparser than FOBOS at the same accuracy (Xiao, JMLR 2010).

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared"}, default="logistic"
        As in :class:`SimpleTruncationClassifier`.
    l1 : float >= 0, default=1e-4
        L1 strength lambda: a weight is non-zero only while ``|average gradient| > l1``.
    gamma : float > 0, default=1.0
        Strength of the proximal term ``beta_t h(w)`` with ``beta_t = gamma sqrt(t)``, ``h = ||w||^2 / 2``;
        the effective step is about ``1 / (gamma sqrt(t))``.
    fit_intercept, max_iter, shuffle, random_state
        As in :class:`SimpleTruncationClassifier`.

    Examples
    --------
    {example}
    """

    _parameter_constraints = {**_CLF_LOSS, **_RDA._parameter_constraints}

    __init__ = keyword_init(loss="logistic", l1=1e-4, gamma=1.0, **LINEAR_PASS_DEFAULTS)


class RDARegressor(OnlineRegressorMixin, _RDA):
    """L1-RDA (Algorithms §4.4) for regression with the squared loss ``(z - y)^2``.

    The rule of :class:`RDAClassifier`: ``w`` computed from the gradient sum ``G`` and ``t`` on demand.

    Parameters
    ----------
    loss : {"squared"}, default="squared"
        The loss ``(z - y)^2``, the only one of the regressor.
    l1 : float >= 0, default=1e-4
        L1 strength.
    gamma : float > 0, default=10.0
        Proximal strength; the step is about ``1 / (gamma sqrt(t))`` (raise it if the squared loss diverges).
    fit_intercept, max_iter, shuffle, random_state
        As in :class:`SimpleTruncationClassifier`.

    Examples
    --------
    {example}
    """

    _parameter_constraints = {**_REG_LOSS, **_RDA._parameter_constraints}

    __init__ = with_defaults(RDAClassifier.__init__, loss="squared", gamma=10.0)


# ---------------------------------------------------------------------------------------------------
# FTRL-Proximal
class _FTRL(_LazyLinearMixin, MixableMixin, BaseOnlineLinear):
    _diverge_hint = "alpha"
    _parameter_constraints = {
        "alpha": [Interval(float, 0, None, closed="neither")],
        "beta": [Interval(float, 0, None, closed="left")],
        "l1": [Interval(float, 0, None, closed="left")],
        "l2": [Interval(float, 0, None, closed="left")],
        **_PASS_PARAMS,
    }

    def _state_shape(self, n_features, n_outputs):
        return (n_features + 1, n_outputs, 2)  # z and n, interleaved

    def _kernel_pass(self, X, targets, sw, out):
        self._epoch(_k.ftrl_epoch, X, targets, sw, out, zn=self._state, **self._hyper())

    def _hyper(self):
        return dict(alpha=float(self.alpha), beta=float(self.beta), l1=float(self.l1), l2=float(self.l2))

    def _materialize(self, out):
        return _k.ftrl_materialize(zn=self._state, out=out, **self._hyper())

    def _scores(self, X, out):
        self._score_with(_k.ftrl_scores, X, out, zn=self._state, **self._hyper())

    # parameter mixing (streamlearn.distributed.fit_mixing)
    mixing_description = (
        "``z`` and ``n`` (the sum of squared gradients; stored as sqrt(n)), both weighted by "
        "examples: ``w = -(z - sgn(z) l1) / ((beta + sqrt(n)) / alpha + l2)`` then stays on the "
        "scale of one partition's model, and a coordinate whose averaged ``|z|`` is within "
        "``l1`` is an exact zero, as in the single-machine model (summing the increments instead "
        "would put ``z`` and ``sqrt(n)`` on different scales and inflate ``w`` by about the "
        "square root of the number of partitions)"
    )

    @classmethod
    def mix(cls, start: Any, models: list[Any], weights: FloatArray) -> Any:
        """The mixed model of one round (see ``mixing_description``)."""
        out = copy.deepcopy(models[0])
        state = np.empty_like(out._state)
        state[..., 0] = weighted_average([m._state[..., 0] for m in models], weights)
        state[..., 1] = np.sqrt(weighted_average([m._state[..., 1] ** 2 for m in models], weights))
        out._state = state
        out.t_ = mixed_count(start, models)
        return out


class FTRLProximalClassifier(LogisticProbaMixin, OnlineClassifierMixin, _FTRL):
    """FTRL-Proximal with per-coordinate learning rates, L1 and L2 (McMahan et al., KDD 2013; Algorithms
    §4.5), O(nnz(x)) per example.

    Note: ``alpha`` is a learning rate here (the paper's name), not a penalty as in scikit-learn.

    State ``z, n`` (zero at the start; ``w`` is not stored; ``sqrt(n)`` is kept instead of ``n``, which saves
    two square roots per update and changes nothing but rounding). For the features i of an example:
    ``w_i = 0 if |z_i| <= l1 else -(z_i - sgn(z_i) l1) / ((beta + sqrt(n_i)) / alpha + l2)``; predict
    ``w . x + b``; with ``g_i = l'(w . x + b, y) x_i``: ``sigma_i = (sqrt(n_i + g_i^2) - sqrt(n_i)) / alpha``,
    ``z_i += g_i - sigma_i w_i``, ``n_i += g_i^2``. ``1/alpha`` multiplies the whole difference in
    ``sigma_i`` (some restatements misplace the parenthesis); McMahan et al.'s
    form is used (Algorithms §4.5). The intercept is a coordinate with ``l1 = l2 = 0``. The rule is the
    same as Vowpal Wabbit's ``--ftrl`` with ``--ftrl_alpha alpha --ftrl_beta beta --l1 l1 --l2 l2``,
    except that VW also penalises its constant feature and computes in float32.

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared"}, default="logistic"
        As in :class:`SimpleTruncationClassifier`.
    alpha : float > 0, default=0.1
        Learning rate scale: the per-coordinate rate is ``alpha / (beta + sqrt(n_i))``.
    beta : float >= 0, default=1.0
        Smoothing of the per-coordinate rate (1 is "usually good enough", McMahan et al.).
    l1 : float >= 0, default=1.0
        L1 strength lambda1: ``w_i = 0`` while ``|z_i| <= l1`` (exact zeros).
    l2 : float >= 0, default=1.0
        L2 strength lambda2.
    fit_intercept, max_iter, shuffle, random_state
        As in :class:`SimpleTruncationClassifier`.

    Examples
    --------
    {example}
    """

    _parameter_constraints = {**_CLF_LOSS, **_FTRL._parameter_constraints}

    __init__ = keyword_init(loss="logistic", alpha=0.1, beta=1.0, l1=1.0, l2=1.0, **LINEAR_PASS_DEFAULTS)


class FTRLProximalRegressor(OnlineRegressorMixin, _FTRL):
    """FTRL-Proximal (Algorithms §4.5) for regression with the squared loss ``(z - y)^2``.

    The rule of :class:`FTRLProximalClassifier`: ``w`` computed from ``(z, n)`` on demand.

    Parameters
    ----------
    loss : {"squared"}, default="squared"
        The loss ``(z - y)^2``, the only one of the regressor.
    alpha : float > 0, default=0.1
        Learning rate scale (a rate, not a penalty as in scikit-learn).
    beta : float >= 0, default=1.0
        Smoothing of the per-coordinate rate.
    l1 : float >= 0, default=1.0
        L1 strength.
    l2 : float >= 0, default=1.0
        L2 strength.
    fit_intercept, max_iter, shuffle, random_state
        As in :class:`SimpleTruncationClassifier`.

    Examples
    --------
    {example}
    """

    _parameter_constraints = {**_REG_LOSS, **_FTRL._parameter_constraints}

    __init__ = with_defaults(FTRLProximalClassifier.__init__, loss="squared")


_CLASSIFIER_EXAMPLE = """>>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.linear_model import {name}
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = {name}({args}).partial_fit(X, y, classes=[-1, 1])
    >>> print(f"{{clf.score(X_test, y_test):.2f}}", clf.nnz_weights < X.shape[1])
    0.8... True"""
_REGRESSOR_EXAMPLE = """>>> import numpy as np
    >>> from streamlearn.linear_model import {name}
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 5)); y = X @ [1.0, -2.0, 0.0, 0.0, 0.5] + 3.0
    >>> reg = {name}({args}).fit(X, y)
    >>> print(np.round(reg.coef_, 1), np.round(reg.intercept_, 1))
    [ 1. -2.  0.  0.  0.5] [3.]"""

# each docstring's example: the classifiers learn a9a (and keep fewer weights than features), the regressors find
# a sparse linear target; the table gives each public class's arguments
_EXAMPLE_ARGS = {
    SimpleTruncationClassifier: "theta=0.05",
    SimpleTruncationRegressor: "eta0=0.1, theta=0.05",
    TruncatedGradientClassifier: "gravity=1e-3",
    TruncatedGradientRegressor: "eta0=0.1, gravity=0.01",
    FOBOSClassifier: "l1=1e-3",
    FOBOSRegressor: "eta0=0.1, l1=0.01",
    RDAClassifier: "l1=1e-3",
    RDARegressor: "l1=0.01",
    FTRLProximalClassifier: "l1=1.0",
    FTRLProximalRegressor: "alpha=0.5, l1=1.0",
}
for _cls, _args in _EXAMPLE_ARGS.items():
    _example = _REGRESSOR_EXAMPLE if _cls._is_regressor else _CLASSIFIER_EXAMPLE
    _cls.__doc__ = (_cls.__doc__ or "").replace("{example}", _example.format(name=_cls.__name__, args=_args))

__all__ = [cls.__name__ for cls in _EXAMPLE_ARGS]
