"""Normalized adaptive gradient (NAG): scale-free online linear learning.

The learner of Ross, Mineiro & Langford, "Normalized Online Learning" (UAI 2013), as Vowpal Wabbit runs it
by default (adaptive, normalized and importance-invariant updates); docs/algorithms/nag.md states the rule.
Every feature's scale is tracked online (its largest ``|x_j|`` so far), so the learner needs no
preprocessing: multiplying a column by any positive factor leaves the predictions unchanged.
"""

import numpy as np

from .._kernels import nag as _k
from .._validation import LINEAR_PASS_PARAMS, Interval, Options
from ..base import (
    BaseOnlineLinear,
    LogisticProbaMixin,
    OnlineClassifierMixin,
    OnlineRegressorMixin,
)
from ..losses import loss_code
from .._validation import chunk_args
from .._params import LINEAR_PASS_DEFAULTS, keyword_init

__all__ = ["NAGClassifier", "NAGRegressor"]

#: the parameters after ``loss`` (the regressor has no ``loss``): constraints and defaults
_NAG_PARAMS = {"eta0": [Interval(float, 0, None, closed="neither")], "invariant": ["boolean"], **LINEAR_PASS_PARAMS}
_NAG_DEFAULTS = {"eta0": 0.5, "invariant": True, **LINEAR_PASS_DEFAULTS}


class _NormalizedMixin:
    """Per-feature scales, accumulators and the global normaliser next to ``coef_``/``intercept_``, and the
    call of the normalized kernel. Users say ``_adaptive()``, ``_invariant()``, ``_normalized_schedule()``."""

    def _allocate_normalized(self, n_features, n_outputs):
        adaptive = self._adaptive()
        # per feature, side by side: the largest |x_j| seen, then (adaptive) each output's sum of squared
        # gradients; scale_ is its first column
        self._state_feat = np.zeros((n_features, 1 + n_outputs if adaptive else 1), dtype=np.float64)
        self._state_accum_b = np.zeros(n_outputs if adaptive else 0, dtype=np.float64)
        self._state_norm = np.zeros(2, dtype=np.float64)  # [total weight T, normaliser N]

    @property
    def scale_(self) -> np.ndarray:
        """Largest absolute value seen per feature (0 for a feature never seen)."""
        return self._state_feat[:, 0]

    @scale_.setter
    def scale_(self, value: np.ndarray) -> None:
        if "_state_feat" in self.__dict__:
            self._state_feat[:, 0] = value
        else:  # a file written when scale_ and _state_accum were arrays apart: _after_load joins them
            self._state_legacy_scale = np.asarray(value, dtype=np.float64)

    def _after_load(self):
        scale = self.__dict__.pop("_state_legacy_scale", None)
        accum = self.__dict__.pop("_state_accum", None)
        if scale is not None:
            accum = np.zeros((0, scale.shape[0])) if accum is None or accum.size == 0 else accum
            feat = np.empty((scale.shape[0], 1 + accum.shape[0]), dtype=np.float64)
            feat[:, 0] = scale
            feat[:, 1:] = accum.T
            self._state_feat = feat

    def _normalized_pass(self, X, targets, sw, out):
        t, bad = _k.nag_epoch(
            **chunk_args(X, targets, sw),
            coef=self._coef_2d(),
            intercept=self.intercept_,
            fit_intercept=bool(self.fit_intercept),
            feat=self._state_feat,
            accum_b=self._state_accum_b,
            norm_state=self._state_norm,
            loss=loss_code(self._loss_name()),
            loss_param=self._loss_param(),
            eta0=float(self.eta0),
            schedule=self._normalized_schedule(),
            adaptive=self._adaptive(),
            invariant=self._invariant(),
            t=self.t_,
            out_scores=out,
        )
        self.t_ = int(t)
        if bad >= 0:
            self._raise_diverged(bad, self._diverge_hint)


class _NAG(_NormalizedMixin, BaseOnlineLinear):
    _diverge_hint = "eta0"

    def _loss_param(self):
        return 0.0

    def _allocate(self, n_features, n_outputs, X):
        super()._allocate(n_features, n_outputs, X)
        self._allocate_normalized(n_features, n_outputs)

    def _kernel_pass(self, X, targets, sw, out):
        self._normalized_pass(X, targets, sw, out)

    def _adaptive(self):
        return True

    def _invariant(self):
        return bool(self.invariant)

    def _normalized_schedule(self):
        return _k.SCHEDULE_CONSTANT

    def _loss_name(self):
        return self.loss

    @property
    def normalizer_(self) -> float:
        """``sqrt(T / N)``: total example weight over the weighted sum of squared normalised norms
        ``(x_j / s_j)^2`` (intercept included); the global factor of every step."""
        T, N = self._state_norm
        return float(np.sqrt(T / N)) if N > 0 else 1.0


class NAGClassifier(LogisticProbaMixin, OnlineClassifierMixin, _NAG):
    """Normalized adaptive gradient (NAG) for linear classification: scale-free, no tuning for feature scales.

    Ross, Mineiro & Langford's update ("Normalized Online Learning", UAI 2013), as Vowpal Wabbit runs it by
    default. Per feature it keeps the largest ``|x_j|`` seen (``scale_``) and the sum of squared gradients;
    the step of weight ``j`` is ``eta0 sqrt(T / N) / (s_j sqrt(G_j))`` times the gradient, with ``N / T`` the
    average squared norm of the rows measured in those scales. When a feature exceeds its scale its weight is
    shrunk by the ratio first. Consequence: multiplying any column by a positive factor leaves every
    prediction unchanged (up to rounding), so raw counts, money and lengths need no preprocessing.

    With ``invariant=True`` (the default) an example of weight ``h`` moves the model as far as ``h``
    infinitesimal steps would (Karampatziakis & Langford, "Online Importance Weight Aware Updates", UAI 2011):
    large ``sample_weight`` never overshoots the label. Cost O(K nnz) per example.

    Parameters
    ----------
    loss : {"logistic", "hinge", "squared", "modified_huber"}, default="logistic"
        Loss on the score ``z = w . x + b`` with labels in {-1, +1}. ``"modified_huber"`` is the squared loss
        of the score clipped to [-1, 1], which is what Vowpal Wabbit's default squared loss on -1/+1 labels
        amounts to (it clips its prediction to the label range before each update). ``predict_proba`` exists
        only for ``"logistic"``.
    eta0 : float > 0, default=0.5
        Learning rate (Vowpal Wabbit's default ``-l 0.5``).
    invariant : bool, default=True
        Importance-invariant steps (above); ``False`` takes the plain gradient step ``eta0 h l'(z)``.
    fit_intercept : bool, default=True
        Learn an intercept (the weight of a constant feature 1, with its own adaptive rate).
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
    scale_ : ndarray of shape (n_features,)
        Largest absolute value seen per feature (0 for a feature never seen).
    normalizer_ : float
        The global factor ``sqrt(T / N)``.
    classes_ : ndarray of shape (n_classes,)
    t_ : int
        Examples learnt from so far.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from streamlearn.linear_model import NAGClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)  # raw: columns from 1e-3 to 4e3
    >>> order = np.random.default_rng(0).permutation(len(y)); X, y = X[order], y[order]
    >>> clf = NAGClassifier().partial_fit(X[:400], y[:400], classes=[0, 1])
    >>> print(f"{clf.score(X[400:], y[400:]):.2f}")
    0.90
    >>> scaled = X * np.logspace(-3, 3, X.shape[1])  # every column rescaled
    >>> same = NAGClassifier().partial_fit(scaled[:400], y[:400], classes=[0, 1])
    >>> bool(np.allclose(same.decision_function(scaled[400:]), clf.decision_function(X[400:])))
    True
    """

    _parameter_constraints = {"loss": [Options("logistic", "hinge", "squared", "modified_huber")], **_NAG_PARAMS}

    __init__ = keyword_init(loss="logistic", **_NAG_DEFAULTS)


class NAGRegressor(OnlineRegressorMixin, _NAG):
    """Normalized adaptive gradient (NAG) for linear regression, squared loss ``(z - y)^2``.

    The update of :class:`NAGClassifier` on real targets: scale-free in the features (any column may be
    multiplied by a positive factor without changing the predictions). With ``invariant=True`` a step never
    moves the prediction past the target, whatever the example weight.

    Parameters
    ----------
    eta0 : float > 0, default=0.5
    invariant, fit_intercept, max_iter, shuffle, random_state
        As in :class:`NAGClassifier`.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.linear_model import NAGRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 3)) * [1.0, 1e3, 1e-3]; y = X @ [1.0, -2e-3, 500.0] + 3.0
    >>> reg = NAGRegressor().fit(X, y)
    >>> print(np.round(reg.coef_ * [1.0, 1e3, 1e-3], 2), np.round(reg.intercept_, 2))
    [ 1.  -2.   0.5] [3.]
    """

    _parameter_constraints = _NAG_PARAMS
    _progressive_loss = "squared"

    __init__ = keyword_init(**_NAG_DEFAULTS)

    def _loss_name(self):
        return "squared"
