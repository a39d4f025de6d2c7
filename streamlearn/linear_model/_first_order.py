"""First-order online linear learners: OGD, Perceptron, Passive-Aggressive (Algorithms §2.1-2.3)."""

import copy
from typing import Any

import numpy as np

from .._kernels import linear as _k
from .._kernels import nag as _nk
from .._typing import FloatArray
from .._validation import LINEAR_PASS_PARAMS, Interval, Options
from .._params import LINEAR_PASS_DEFAULTS, keyword_init
from ..base import BaseOnlineLinear, LogisticProbaMixin, OnlineClassifierMixin, OnlineRegressorMixin
from ..losses import loss_code
from .._mixing import MixableMixin, mixed_count, weighted_average
from ._averaging import _AveragingMixin
from ._nag import _NormalizedMixin

__all__ = ["OGDClassifier", "OGDRegressor", "Perceptron", "PassiveAggressiveClassifier", "PassiveAggressiveRegressor"]

_PASS_PARAMS = LINEAR_PASS_PARAMS
#: the width of the regressors' epsilon-insensitive zone
_EPSILON = {"epsilon": [Interval(float, 0, None, closed="left")]}
_PA_VARIANTS = {"pa": _k.RULE_PA, "pa1": _k.RULE_PA1, "pa2": _k.RULE_PA2}


def _rows(kw, first, stop=None):
    """The arguments ``kw`` of ``_k.linear_epoch`` for the chunk's rows ``first`` to ``stop`` (the last one by
    default)."""
    rows = {name: kw[name][first:stop] for name in ("targets", "sample_weight", "out_scores")}
    return {**kw, **rows, "indptr": kw["indptr"][first : None if stop is None else stop + 1]}


def _linear_epoch_checked(**kw):
    """``_k.linear_epoch`` over the chunk; an example it stops at for a step beyond ``_k.SAFE_STEP`` (never on sane
    data) is learnt alone with every weight checked first (``checked=True``), then the pass resumes after it.
    Returns ``(t, bad_row)`` as the kernel, ``bad_row`` an index into the chunk."""
    t, stop = _k.linear_epoch(**kw)
    first = 0
    while stop <= -2:
        i, k = divmod(-2 - stop, kw["coef"].shape[0])
        i += first
        t, stop = _k.linear_epoch(**{**_rows(kw, i, i + 1), "t": t, "k_from": k, "checked": True})
        if stop != -1:
            return t, i
        first = i + 1
        t, stop = _k.linear_epoch(**{**_rows(kw, first), "t": t})
        if stop >= 0:
            stop += first
    return t, stop


class _FirstOrderLinear(_AveragingMixin, MixableMixin, BaseOnlineLinear):
    """Calls the one first-order kernel with the step rule of the concrete learner."""

    # subclasses define: _rule(), _loss_name(), _schedule, _eta0(), _C(), _intercept_sq(), _diverge_hint
    _schedule = _k.SCHEDULE_INVSQRT
    _diverge_hint = "eta0"

    def _C(self):
        return 1.0

    def _eta0(self):
        return 1.0

    def _loss_param(self):
        return 0.0

    def _intercept_sq(self):
        return 1.0 if self.fit_intercept else 0.0

    def _allocate(self, n_features, n_outputs, X):
        super()._allocate(n_features, n_outputs, X)
        self._allocate_average()

    def _kernel_pass(self, X, targets, sw, out):
        self._averaged_epoch(
            _linear_epoch_checked,
            X,
            targets,
            sw,
            out,
            intercept_sq=self._intercept_sq(),
            rule=self._rule(),
            loss=loss_code(self._loss_name()),
            loss_param=self._loss_param(),
            schedule=self._schedule,
            eta0=self._eta0(),
            C=self._C(),
        )

    # parameter mixing (streamlearn.distributed.fit_mixing)
    mixing_description = (
        "``coef_`` and ``intercept_`` (weighted by examples; with ``average=True`` the running weights too); "
        "Perceptron's radius ``radius_`` is the largest over the partitions (it bounds every row norm)"
    )

    @classmethod
    def mix(cls, start: Any, models: list[Any], weights: FloatArray) -> Any:
        """The mixed model of one round: the partitions' weights averaged by ``weights``."""
        out = copy.deepcopy(models[0])
        out.coef_ = weighted_average([m.coef_ for m in models], weights)
        out.intercept_ = weighted_average([m.intercept_ for m in models], weights)
        if hasattr(out, "radius_"):
            out.radius_ = max(m.radius_ for m in models)
        out.t_ = mixed_count(start, models)
        cls._mix_average(out, models, weights)
        return out


_OGD_PARAMS = {"eta0": [Interval(float, 0, None, closed="neither")], "normalized": ["boolean"], **_PASS_PARAMS}


class _OGDMixin(_NormalizedMixin):
    """OGD's step for the classifier and the regressor: the gradient rule on the learner's ``loss`` with
    ``eta0 / sqrt(t)``, and the ``normalized`` option: the normalized kernel in its non-adaptive mode (Ross,
    Mineiro & Langford's NG rule with OGD's ``eta0 / sqrt(t)``), see the NAG page of the Algorithms docs."""

    loss: str  # estimator parameters of the classes using this mixin
    eta0: float
    normalized: bool

    def _rule(self):
        return _k.RULE_GRADIENT

    def _loss_name(self):
        return self.loss

    def _eta0(self):
        return float(self.eta0)

    def check_mixable(self) -> None:
        """Raise TypeError when ``normalized=True``: the per-feature scales are not averaged."""
        if self.normalized:
            raise TypeError(
                f"fit_mixing cannot average {type(self).__name__}(normalized=True): its per-feature "
                "scales are not mixed; use normalized=False."
            )

    def _allocate(self, n_features, n_outputs, X):
        super()._allocate(n_features, n_outputs, X)
        if self.normalized:
            self._allocate_normalized(n_features, n_outputs)

    def _kernel_pass(self, X, targets, sw, out):
        if bool(self.normalized) != hasattr(self, "scale_"):
            raise ValueError(
                f"normalized={self.normalized!r} differs from the setting this "
                f"{type(self).__name__} was trained with; call fit to start again."
            )
        if self.normalized:
            self._normalized_pass(X, targets, sw, out)
        else:
            super()._kernel_pass(X, targets, sw, out)

    def _adaptive(self):
        return False

    def _invariant(self):
        return False

    def _normalized_schedule(self):
        return _nk.SCHEDULE_INVSQRT


# ---------------------------------------------------------------------------------------------------
class OGDClassifier(LogisticProbaMixin, OnlineClassifierMixin, _OGDMixin, _FirstOrderLinear):
    """Online gradient descent for linear classification, step ``eta0 / sqrt(t)``.

    Update (Algorithms §2.1): ``w <- w - eta0 / sqrt(t) * l'(w . x, y) * x`` after every example, with
    ``t`` the number of examples seen (weighted examples count once). Unconstrained (no projection).

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared"}, default="logistic"
        Loss on the score ``z = w . x + b`` with labels in {-1, +1}: ``log(1 + exp(-y z))``,
        ``max(0, 1 - y z)`` or ``(z - y)^2``. ``predict_proba`` exists only for ``"logistic"``.
    eta0 : float > 0, default=0.5
        Base step size; the step at example ``t`` is ``eta0 / sqrt(t)``.
    normalized : bool, default=False
        Scale-free steps (Ross, Mineiro & Langford, "Normalized Online Learning", UAI 2013): weight ``j``
        moves by ``eta0 / sqrt(t) * (T / N) / s_j^2`` times the gradient, with ``s_j`` the largest ``|x_j|``
        seen (``scale_``; the weight is shrunk by ``(s_j / |x_j|)^2`` when a larger value arrives) and ``N / T``
        the average of ``sum_j (x_j / s_j)^2`` over the examples. Multiplying a column by a positive factor
        then leaves the predictions unchanged. :class:`NAGClassifier` adds per-feature adaptive rates.
    fit_intercept : bool, default=True
        Learn an intercept (the weight of a constant feature 1).
    max_iter : int >= 1, default=5
        Passes made by ``fit`` (``partial_fit`` always makes one).
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    random_state : int, Generator or None, default=None
        Seed of the shuffling.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    t_ : int
        Examples learnt from so far.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.linear_model import OGDClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = OGDClassifier(loss="logistic").partial_fit(X, y, classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.3f}")
    0.850
    """

    _parameter_constraints = {"loss": [Options("logistic", "hinge", "squared")], **_OGD_PARAMS}

    __init__ = keyword_init(loss="logistic", eta0=0.5, normalized=False, **LINEAR_PASS_DEFAULTS)


class OGDRegressor(OnlineRegressorMixin, _OGDMixin, _FirstOrderLinear):
    """Online gradient descent for linear regression, step ``eta0 / sqrt(t)``.

    Update: ``w <- w - eta0 / sqrt(t) * l'(w . x, y) * x`` (Algorithms §2.1).

    Parameters
    ----------
    loss : {"squared", "epsilon_insensitive"}, default="squared"
        ``(z - y)^2`` (no 1/2 factor) or ``max(0, |z - y| - epsilon)``.
    epsilon : float >= 0, default=0.1
        Width of the insensitive zone (``"epsilon_insensitive"`` only).
    eta0 : float > 0, default=0.01
        Base step size. Squared loss diverges when ``eta0 * ||x||^2`` is large: scale features, lower it or
        set ``normalized``.
    normalized : bool, default=False
        Scale-free steps, as in :class:`OGDClassifier`.
    fit_intercept, max_iter, shuffle, random_state
        As in :class:`OGDClassifier`.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.linear_model import OGDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)); y = X @ [1.0, -2.0, 0.5] + 3.0
    >>> reg = OGDRegressor(eta0=0.1).fit(X, y)
    >>> print(np.round(reg.coef_, 2), np.round(reg.intercept_, 2))
    [ 1.   -2.    0.5] [3.]
    """

    _parameter_constraints = {"loss": [Options("squared", "epsilon_insensitive")], **_EPSILON, **_OGD_PARAMS}

    __init__ = keyword_init(loss="squared", epsilon=0.1, eta0=0.01, normalized=False, **LINEAR_PASS_DEFAULTS)

    def _loss_param(self):
        return float(self.epsilon)


# ---------------------------------------------------------------------------------------------------
class Perceptron(OnlineClassifierMixin, _FirstOrderLinear):
    """Rosenblatt's Perceptron, with or without bias, (Rosenblatt 1958; Novikoff 1962; Algorithms §2.2).

    On a mistake (``y (w . x + b) <= 0``): ``w <- w + eta0 y x`` and, with ``fit_intercept``,
    ``b <- b + eta0 y R^2`` where ``R`` is a bound on ``||x||`` fixed before the stream (Novikoff's
    augmented-feature form: the Perceptron on ``(x, R)``). Without bias and with ``w_1 = 0`` predictions do
    not depend on ``eta0``. Mistake bound ``(2R/gamma)^2`` on data separable with margin gamma.
    With many features per row ``R^2`` is large and the bias moves in big steps. scikit-learn's
    Perceptron uses ``b += eta0 y`` on dense input (``radius=1.0`` here: the same model, tested on dense a9a rows) and
    ``b += 0.01 eta0 y`` on sparse input (its intercept decay; ``radius=0.1`` is the nearest rule here).
    The ``R^2`` rule is the default because it is the algorithm with the bound; neither rule wins
    everywhere (one pass, held-out accuracy, R^2 rule / radius=1 / scikit-learn: a9a 0.704 / 0.793 /
    0.826, farm-ads 0.888 / 0.849 / 0.837, 200k x 1M synthetic 0.683 / 0.722 / 0.737).

    Parameters
    ----------
    eta0 : float > 0, default=1.0
        Step on a mistake.
    fit_intercept : bool, default=True
        Learn a bias ``b`` as above.
    radius : float > 0 or None, default=None
        ``R``. None: the largest row norm of the first batch given to ``fit``/``partial_fit``, then
        frozen (stored as ``radius_``); rows seen later may be longer, which only weakens the bound.
    average : bool, default=False
        Predict with the average of the weights after each example (the averaged Perceptron: Freund &
        Schapire, "Large margin classification using the perceptron algorithm", Machine Learning 1999), O(nnz)
        per update; ``coef_``/``intercept_`` hold the average, ``running_coef_``/``running_intercept_`` the
        weights the updates move (these score the examples during training).
    max_iter, shuffle, random_state
        As in :class:`OGDClassifier`.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.linear_model import Perceptron
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = Perceptron().partial_fit(X, y, classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.2f}")
    0.7...
    """

    _parameter_constraints = {
        "eta0": [Interval(float, 0, None, closed="neither")],
        "radius": [Interval(float, 0, None, closed="neither"), None],
        "average": ["boolean"],
        **_PASS_PARAMS,
    }
    _progressive_loss = "perceptron"
    _schedule = _k.SCHEDULE_CONSTANT
    _zero_row_no_op_unaveraged = True
    _chunking_params = {"radius": 3.0}  # radius=None takes R from the first batch, so depends on its cut

    __init__ = keyword_init(
        eta0=1.0, fit_intercept=True, radius=None, average=False, max_iter=5, shuffle=True, random_state=None
    )

    def _allocate(self, n_features, n_outputs, X):
        super()._allocate(n_features, n_outputs, X)
        if self.radius is not None:
            self.radius_ = float(self.radius)
        else:
            r = float(np.sqrt(_k.csr_max_row_sqnorm(X.indptr, X.data)))
            self.radius_ = r if r > 0 else 1.0

    def _intercept_sq(self):
        return self.radius_ * self.radius_ if self.fit_intercept else 0.0  # ** raises beyond the float range

    def _rule(self):
        return _k.RULE_GRADIENT

    def _loss_name(self):
        return "perceptron"

    def _eta0(self):
        return float(self.eta0)


# ---------------------------------------------------------------------------------------------------
_PA_PARAMS = {"C": [Interval(float, 0, None, closed="neither")], "variant": [Options("pa", "pa1", "pa2")]}


class _PassiveAggressiveMixin:
    """The PA step of the classifier and the regressor: ``variant`` picks PA, PA-I or PA-II, ``C`` is the
    aggressiveness; the loss is the learner's progressive-validation loss (hinge or epsilon-insensitive)."""

    C: float
    variant: str
    _progressive_loss: str
    _diverge_hint = "C"
    _zero_row_no_op = True

    def _rule(self):
        return _PA_VARIANTS[self.variant]

    def _loss_name(self):
        return self._progressive_loss

    def _C(self):
        return float(self.C)


class PassiveAggressiveClassifier(OnlineClassifierMixin, _PassiveAggressiveMixin, _FirstOrderLinear):
    """Passive-Aggressive classification: PA, PA-I, PA-II (Crammer et al. 2006; Algorithms §2.3).

    With hinge loss ``l = max(0, 1 - y (w . x + b))``: ``w <- w + tau y x`` where ``tau`` is
    ``l / ||x||^2`` (PA), ``min(C, l / ||x||^2)`` (PA-I) or ``l / (||x||^2 + 1 / (2C))`` (PA-II).
    The intercept is the weight of a constant feature 1 (so ``||x||^2`` includes it). An example with
    ``x = 0`` and no intercept is skipped. A sample weight ``s`` multiplies ``tau`` (as scikit-learn does).
    The update is ``w <- w + tau y x`` (Crammer et al., JMLR 2006; Algorithms §2.3).

    Parameters
    ----------
    C : float > 0, default=1.0
        Aggressiveness (PA-I, PA-II; ignored by PA).
    variant : {"pa", "pa1", "pa2"}, default="pa1"
    average : bool, default=False
        Predict with the average of the weights after each example, as :class:`Perceptron`'s ``average``.
    fit_intercept, max_iter, shuffle, random_state
        As in :class:`OGDClassifier`.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.linear_model import PassiveAggressiveClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = PassiveAggressiveClassifier(C=0.01).partial_fit(X, y, classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.3f}")
    0.84...
    """

    _parameter_constraints = {**_PA_PARAMS, "average": ["boolean"], **_PASS_PARAMS}
    _progressive_loss = "hinge"
    _zero_row_no_op_unaveraged = True
    _zero_row_no_op = _AveragingMixin._zero_row_no_op  # averaged: not a no-op (the mixin's rule, not the PA one's)

    __init__ = keyword_init(C=1.0, variant="pa1", average=False, **LINEAR_PASS_DEFAULTS)


class PassiveAggressiveRegressor(OnlineRegressorMixin, _PassiveAggressiveMixin, _FirstOrderLinear):
    """Passive-Aggressive regression with the epsilon-insensitive loss (Algorithms §2.3).

    ``l = max(0, |w . x + b - y| - epsilon)``; ``w <- w + sgn(y - w . x - b) tau x`` with the PA, PA-I or
    PA-II ``tau`` of :class:`PassiveAggressiveClassifier`.

    Parameters
    ----------
    C : float > 0, default=1.0
    epsilon : float >= 0, default=0.1
    variant : {"pa", "pa1", "pa2"}, default="pa1"
    fit_intercept, max_iter, shuffle, random_state
        As in :class:`OGDClassifier`.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.linear_model import PassiveAggressiveRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)); y = X @ [1.0, -2.0, 0.5] + 3.0
    >>> reg = PassiveAggressiveRegressor(epsilon=0.01).fit(X, y)
    >>> print(np.round(reg.coef_, 1), np.round(reg.intercept_, 1))
    [ 1.  -2.   0.5] [3.]
    """

    _parameter_constraints = {"C": _PA_PARAMS["C"], **_EPSILON, "variant": _PA_PARAMS["variant"], **_PASS_PARAMS}
    _progressive_loss = "epsilon_insensitive"

    __init__ = keyword_init(C=1.0, epsilon=0.1, variant="pa1", **LINEAR_PASS_DEFAULTS)

    def _loss_param(self):
        return float(self.epsilon)
