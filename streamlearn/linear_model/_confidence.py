"""Confidence-weighted learners: CW, AROW, SCW-I/II with full or diagonal covariance (Algorithms §2.4-2.6)."""

import numpy as np
from scipy.special import ndtri

from .._kernels import cw as _k
from .._typing import FloatArray
from .._validation import LINEAR_PASS_PARAMS, Interval, Options
from .._params import LINEAR_PASS_DEFAULTS, keyword_init
from ..base import BaseOnlineLinear, OnlineClassifierMixin
from ._averaging import _AveragingMixin

__all__ = ["ConfidenceWeightedClassifier", "AROWClassifier", "SoftConfidenceWeightedClassifier", "MAX_FULL_FEATURES"]

#: The largest number of features a full covariance accepts. Sigma is (d + 1) x (d + 1) float64 per
#: output (134 MB at d = 4096) and every update costs O(d^2): above this, use ``covariance="diagonal"``, or
#: ``covariance="auto"``, which chooses the full matrix up to this width and the diagonal above it.
MAX_FULL_FEATURES = 4096

_COMMON = {
    "covariance": [Options("full", "diagonal", "auto")],
    "a": [Interval(float, 0, None, closed="neither")],
    **LINEAR_PASS_PARAMS,
}
_ETA = Interval(float, 0.5, 1.0, closed="neither")


class _BaseConfidence(_AveragingMixin, OnlineClassifierMixin, BaseOnlineLinear):
    """Mean ``coef_``/``intercept_`` plus a covariance per output, one kernel call per chunk."""

    _progressive_loss = "hinge"
    _zero_row_no_op_unaveraged = True
    _diverge_hint = "a"
    _start_params = ("a",)  # the initial variance

    #: the kernel's step parameters a rule does not use (subclasses: ``_rule()`` and ``_step()``, the ones it uses)
    _UNUSED_STEP = {"phi": 0.0, "C": 1.0, "r": 1.0}

    def _allocate(self, n_features, n_outputs, X):
        full = self.covariance == "full" or (self.covariance == "auto" and n_features <= MAX_FULL_FEATURES)
        if full and n_features > MAX_FULL_FEATURES:
            self._reset()
            raise ValueError(
                f"{type(self).__name__}(covariance='full') supports at most {MAX_FULL_FEATURES} features; X has "
                f"{n_features}. A full covariance needs (d+1)^2 floats per output "
                f"({8 * (n_features + 1) ** 2 / 2**30:.1f} GiB here) and O(d^2) time per update: use "
                "covariance='diagonal' (O(nnz) per update)."
            )
        super()._allocate(n_features, n_outputs, X)
        a = float(self.a)
        if full:
            eye = np.eye(n_features + 1, dtype=np.float64) * a
            self._state_sigma = np.repeat(eye[None], n_outputs, axis=0)
        else:
            self._state_sigma = np.full((n_outputs, n_features), a, dtype=np.float64)
            self._state_sigma_b = np.full(n_outputs, a, dtype=np.float64)
        self._allocate_average()

    def _kernel_pass(self, X, targets, sw, out):
        full = self._state_sigma.ndim == 3
        if self.covariance != "auto" and self.covariance != ("full" if full else "diagonal"):
            raise ValueError(
                f"covariance={self.covariance!r} differs from the setting this {type(self).__name__} was trained "
                f"with ({self.covariance_}); call fit to start again."
            )
        self._averaged_epoch(
            _k.cw_epoch,
            X,
            targets,
            sw,
            out,
            sigma=self._state_sigma,
            **({} if full else {"sigma_b": self._state_sigma_b}),
            bias_value=1.0 if self.fit_intercept else 0.0,
            rule=self._rule(),
            **{**self._UNUSED_STEP, **self._step()},
        )

    @property
    def variance_(self) -> FloatArray:
        """Per-feature variances ``Sigma_jj``, shape ``(n_outputs, n_features)`` (the diagonal of the full
        covariance when it is full): the model's remaining uncertainty about each weight."""
        sigma = self._state_sigma
        if sigma.ndim == 3:
            return np.diagonal(sigma, axis1=1, axis2=2)[:, :-1].copy()
        return sigma.copy()

    @property
    def covariance_(self) -> str:
        """``"full"`` or ``"diagonal"``: the covariance this model keeps (what ``covariance="auto"`` chose)."""
        return "full" if self._state_sigma.ndim == 3 else "diagonal"


class ConfidenceWeightedClassifier(_BaseConfidence):
    """Confidence-Weighted linear classification (CW) with a full or diagonal covariance.

    The weights are a Gaussian ``N(mu, Sigma)`` (``mu`` is ``coef_``/``intercept_``). After each example
    the update is the closest Gaussian (in KL divergence) under which the example is classified correctly
    with probability at least ``eta``: ``y mu.x >= phi sqrt(x^T Sigma x)``, ``phi = Phi^{-1}(eta)`` (the
    normal quantile, not the CDF as one public port computes). ``update="stdev"`` is the exact solution
    of Crammer, Dredze and Pereira (NIPS 2008), which meets the constraint with equality for a full
    covariance; ``update="variance"`` is the original linearised version of Dredze, Crammer and Pereira
    (ICML 2008), constraint ``y mu.x >= phi x^T Sigma x`` (Algorithms §2.4). Rounds with
    ``x^T Sigma x <= 1e-12`` are skipped.

    ``covariance="diagonal"`` keeps only the diagonal and updates it with the exact precision increment
    (``1 / Sigma_jj += c x_j^2``): O(nnz(x)) per example. This approximation makes ``x^T Sigma' x`` at least
    its full-covariance value, so the probability constraint on the example just seen can be missed
    slightly. On a9a the exact update with a diagonal covariance is erratic (one-pass online error
    0.26-0.36 for eta in 0.6-0.9, ``benchmarks/margin_accuracy.py``); the variance update, the pairing of
    the original paper, is stable (0.21), and it is what the CLI's ``cw-diag`` uses.
    ``covariance="full"`` costs O(d^2) time and memory and is refused above ``MAX_FULL_FEATURES`` (4096)
    features; ``covariance="auto"`` takes the full matrix up to that width and the diagonal above it, decided
    once, when the model is allocated (:attr:`covariance_` says which).

    Multi-class problems are solved one-vs-rest. A sample weight ``s`` multiplies the step: ``mu`` moves
    by ``s alpha y Sigma x`` and the precision grows by ``s c x x^T`` (our convention; the paper has no
    weights).

    Parameters
    ----------
    eta : float in (0.5, 1), default=0.8
        Required probability of a correct classification of each example (confidence). 0.8 was the best
        of {0.55, 0.6, 0.7, 0.8, 0.9, 0.95} for one pass on the first 80% of a9a's training file,
        scored on the last 20%.
    covariance : {"full", "diagonal", "auto"}, default="full"
        Full matrix (exact, O(d^2), d <= 4096), its diagonal (O(nnz)), or the full matrix up to
        ``MAX_FULL_FEATURES`` features and the diagonal above.
    update : {"stdev", "variance"}, default="stdev"
        The exact (standard-deviation) CW update, or the original variance-linearised one.
    a : float > 0, default=1.0
        Initial variance: ``Sigma_1 = a I``.
    average : bool, default=False
        Predict with the average of the means after each example (``coef_``/``intercept_``; the updates move
        ``running_coef_``/``running_intercept_``, which score the examples during training), as
        :class:`Perceptron`'s ``average``: CW's aggressive mean updates swing on noisy data (a9a, one pass:
        0.80 without, 0.84 with).
    fit_intercept : bool, default=True
        Learn an intercept: the mean weight of a constant feature 1 with its own variance.
    max_iter : int >= 1, default=5
        Passes made by ``fit`` (``partial_fit`` always makes one).
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    random_state : int, Generator or None, default=None
        Seed of the shuffling.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Mean weights ``mu`` (their average with ``average=True``).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    variance_ : ndarray of shape (n_outputs, n_features)
        Diagonal of the covariance.
    covariance_ : {"full", "diagonal"}
        The covariance kept (what ``covariance="auto"`` chose for the data's width).
    classes_ : ndarray of shape (n_classes,)
    t_ : int
        Examples learnt from so far.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.linear_model import ConfidenceWeightedClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = ConfidenceWeightedClassifier(eta=0.8).partial_fit(X, y, classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.2f}")
    0.80
    """

    _parameter_constraints = {
        "eta": [_ETA],
        "update": [Options("stdev", "variance")],
        "average": ["boolean"],
        **_COMMON,
    }

    __init__ = keyword_init(eta=0.8, covariance="full", update="stdev", a=1.0, average=False, **LINEAR_PASS_DEFAULTS)

    def _rule(self):
        return _k.RULE_CW if self.update == "stdev" else _k.RULE_CW_VARIANCE

    def _step(self):
        return {"phi": float(ndtri(self.eta))}


class AROWClassifier(_BaseConfidence):
    """Adaptive Regularization of Weight vectors (AROW; Crammer, Kulesza, Dredze NIPS 2009).

    With ``m = y (mu . x + b)``, ``v = x^T Sigma x`` and ``l = max(0, 1 - m)``, when ``l > 0``:
    ``mu <- mu + l / (v + r) y Sigma x`` and ``Sigma^{-1} <- Sigma^{-1} + x x^T / r``
    (Algorithms §2.5). The full covariance is updated exactly (Sherman-Morrison, O(d^2), refused above
    ``MAX_FULL_FEATURES`` = 4096 features; ``covariance="auto"`` switches to the diagonal there);
    ``covariance="diagonal"`` applies the precision increment to
    the diagonal only (``1 / Sigma_jj += x_j^2 / r``, our derivation from the inverse form; O(nnz)).
    Multi-class: one-vs-rest. A sample weight multiplies the step and the precision increment.

    Parameters
    ----------
    r : float > 0, default=1.0
        Regularisation: larger ``r`` makes smaller, more conservative updates.
    covariance : {"full", "diagonal", "auto"}, default="full"
        Full matrix (exact, O(d^2), d <= 4096), its diagonal (O(nnz)), or the full matrix up to
        ``MAX_FULL_FEATURES`` features and the diagonal above.
    a : float > 0, default=1.0
        Initial variance ``Sigma_1 = a I``.
    fit_intercept : bool, default=True
        Learn an intercept: the mean weight of a constant feature 1 with its own variance.
    max_iter : int >= 1, default=5
        Passes made by ``fit`` (``partial_fit`` always makes one).
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    random_state : int, Generator or None, default=None
        Seed of the shuffling.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.linear_model import AROWClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = AROWClassifier(r=1.0).partial_fit(X, y, classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.3f}")
    0.850
    """

    _parameter_constraints = {"r": [Interval(float, 0, None, closed="neither")], **_COMMON}

    __init__ = keyword_init(r=1.0, covariance="full", a=1.0, **LINEAR_PASS_DEFAULTS)

    def _rule(self):
        return _k.RULE_AROW

    def _step(self):
        return {"r": float(self.r)}


class SoftConfidenceWeightedClassifier(_BaseConfidence):
    """Soft Confidence-Weighted learning, SCW-I and SCW-II (Wang, Zhao, Hoi ICML 2012).

    CW's confidence constraint becomes a hinge ``l = max(0, phi sqrt(v) - m)`` (``m = y (mu . x + b)``,
    ``v = x^T Sigma x``, ``phi = Phi^{-1}(eta)``) traded against the KL step with aggressiveness ``C``:
    SCW-I caps CW's step at ``C``; SCW-II has the squared-hinge closed form (Algorithms §2.6; LIBOL's
    SCW2 ``v*2``/``phi*2`` typo is not reproduced). Mean and covariance updates are CW's (exact ones).
    ``covariance`` as in :class:`ConfidenceWeightedClassifier` (full refused above 4096 features; ``"auto"``
    switches to the diagonal there).
    Multi-class: one-vs-rest. A sample weight multiplies the step and the precision increment.

    Parameters
    ----------
    C : float > 0, default=1.0
        Aggressiveness (tuning range in the paper's experiments: 2^-4 .. 2^4).
    eta : float in (0.5, 1), default=0.75
        Confidence level.
    variant : {"scw1", "scw2"}, default="scw1"
    covariance : {"full", "diagonal", "auto"}, default="full"
        Full matrix (exact, O(d^2), d <= 4096), its diagonal (O(nnz)), or the full matrix up to
        ``MAX_FULL_FEATURES`` features and the diagonal above.
    a : float > 0, default=1.0
        Initial variance ``Sigma_1 = a I``.
    fit_intercept : bool, default=True
        Learn an intercept: the mean weight of a constant feature 1 with its own variance.
    max_iter : int >= 1, default=5
        Passes made by ``fit`` (``partial_fit`` always makes one).
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    random_state : int, Generator or None, default=None
        Seed of the shuffling.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.linear_model import SoftConfidenceWeightedClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = SoftConfidenceWeightedClassifier(variant="scw2").partial_fit(X, y, classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.2f}")
    0.8...
    """

    _parameter_constraints = {
        "C": [Interval(float, 0, None, closed="neither")],
        "eta": [_ETA],
        "variant": [Options("scw1", "scw2")],
        **_COMMON,
    }
    _diverge_hint = "C"

    __init__ = keyword_init(C=1.0, eta=0.75, variant="scw1", covariance="full", a=1.0, **LINEAR_PASS_DEFAULTS)

    def _rule(self):
        return _k.RULE_SCW1 if self.variant == "scw1" else _k.RULE_SCW2

    def _step(self):
        return {"phi": float(ndtri(self.eta)), "C": float(self.C)}
