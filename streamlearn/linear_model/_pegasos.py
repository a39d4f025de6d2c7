"""Pegasos: primal estimated sub-gradient solver for the SVM, online mini-batch form (Algorithms §2.7-2.8)."""

import numpy as np

from .._estimator import check_is_fitted
from .._kernels import pegasos as _k
from .._typing import FloatArray
from .._validation import LINEAR_PASS_PARAMS, Interval
from .._params import LINEAR_PASS_DEFAULTS, keyword_init
from ..base import BaseOnlineLinear, OnlineClassifierMixin
from .._validation import chunk_args

__all__ = ["PegasosClassifier"]


class PegasosClassifier(OnlineClassifierMixin, BaseOnlineLinear):
    """Pegasos (Shalev-Shwartz, Singer, Srebro, Cotter) with mini-batches and the ball projection.

    Minimises ``(alpha / 2) ||w||^2 + mean_i max(0, 1 - y_i w . x_i)`` (``alpha`` is the paper's lambda,
    with scikit-learn's name and meaning). Round ``t`` takes the next ``batch_size`` examples, ``A_t``;
    with ``A_t^+`` those with ``y w_t . x < 1`` and ``eta_t = 1 / (alpha t)``::

        w <- (1 - eta_t alpha) w_t + (eta_t / k) sum_{i in A_t^+} y_i x_i
        w <- min(1, (1 / sqrt(alpha)) / ||w||) w          (projection=True)

    The radius is ``1 / sqrt(alpha)`` (a ``min(1, sqrt(1/lambda))`` found in some restatements is a typo), the sum
    is divided by ``k``, not by ``|A_t^+|``. ``w = scale * v`` with ``||v||^2`` maintained, so shrinking
    and projecting are O(1) and a round costs O(k nnz(x)) (Algorithms §2.8).

    Deviations from the paper's box, for the online setting: ``A_t`` is the next ``k`` examples of the
    stream (``fit`` reshuffles every pass, i.e. sampling without replacement) rather than a uniform
    draw; a round whose ``k`` examples have not all arrived waits for the next call (its examples are
    already scored), so ``coef_`` is the model after the last complete round; with ``fit_intercept`` the
    bias is the weight of a constant feature 1, regularised and projected with the others (the paper
    has no bias). A sample weight ``s`` multiplies the example's hinge term (``s y x`` in the sum); weight-0
    examples are scored and skipped (they do not count towards ``k``). Multi-class: one-vs-rest.

    Parameters
    ----------
    alpha : float > 0, default=1e-4
        Regularisation strength lambda; the step is ``1 / (alpha t)`` and the ball radius ``1/sqrt(alpha)``.
    batch_size : int >= 1, default=1
        Mini-batch size ``k`` (1 is the online algorithm).
    projection : bool, default=True
        Project onto the ball of radius ``1 / sqrt(alpha)`` after each round.
    fit_intercept : bool, default=True
        Learn a (regularised) bias as the weight of a constant feature 1.
    max_iter : int >= 1, default=5
        Passes made by ``fit`` (``partial_fit`` always makes one).
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    random_state : int, Generator or None, default=None
        Seed of the shuffling.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        ``w`` after the last complete round (computed from ``scale * v`` on access).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    t_ : int
        Examples learnt from so far (weight > 0).
    n_rounds_ : int
        Completed rounds ``t``.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.linear_model import PegasosClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = PegasosClassifier(alpha=1e-4).partial_fit(X, y, classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.2f}")
    0.8...
    >>> bool(np.linalg.norm(clf.coef_) <= 1 / np.sqrt(1e-4))
    True
    """

    _parameter_constraints = {
        "alpha": [Interval(float, 0, None, closed="neither")],
        "batch_size": [Interval(int, 1, None, closed="left")],
        "projection": ["boolean"],
        **LINEAR_PASS_PARAMS,
    }
    _progressive_loss = "hinge"
    _diverge_hint = "1/alpha (raise alpha)"  # the step is 1 / (alpha t)

    __init__ = keyword_init(alpha=1e-4, batch_size=1, projection=True, **LINEAR_PASS_DEFAULTS)

    def _allocate(self, n_features, n_outputs, X):
        shape = (n_outputs, n_features + 1)
        self._state_v = np.zeros(shape, dtype=np.float64)
        self._state_acc = np.zeros(shape, dtype=np.float64)
        self._state_marked = np.zeros(shape, dtype=np.uint8)
        self._state_touched = np.zeros(shape, dtype=np.int64)
        self._state_n_touched = np.zeros(n_outputs, dtype=np.int64)
        self._state_scale = np.ones(n_outputs, dtype=np.float64)
        self._state_sqnorm = np.zeros(n_outputs, dtype=np.float64)
        self._state_round = 0
        self._state_pending = 0
        self._state_bias = 1.0 if self.fit_intercept else 0.0

    def _kernel_pass(self, X, targets, sw, out):
        t, pending, bad = _k.pegasos_epoch(
            **chunk_args(X, targets, sw),
            v=self._state_v,
            scale=self._state_scale,
            sqnorm=self._state_sqnorm,
            acc=self._state_acc,
            marked=self._state_marked,
            touched=self._state_touched,
            n_touched=self._state_n_touched,
            bias_value=self._state_bias,
            lam=float(self.alpha),
            batch_size=int(self.batch_size),
            radius=1.0 / np.sqrt(float(self.alpha)),
            project=bool(self.projection),
            t=self._state_round,
            n_pending=self._state_pending,
            out_scores=out,
        )
        self._state_round = int(t)
        self._state_pending = int(pending)
        self.t_ += int(np.count_nonzero(sw[:bad] if bad >= 0 else sw))
        if bad >= 0:
            self._raise_diverged(bad, self._diverge_hint)

    @property
    def coef_(self) -> FloatArray:
        v = self.__dict__.get("_state_v")
        if v is None:
            raise AttributeError("coef_: PegasosClassifier is not fitted yet.")
        return self._state_scale[:, None] * v[:, :-1]

    @property
    def intercept_(self) -> FloatArray:
        v = self.__dict__.get("_state_v")
        if v is None:
            raise AttributeError("intercept_: PegasosClassifier is not fitted yet.")
        return self._state_scale * v[:, -1] * self._state_bias

    @property
    def n_rounds_(self) -> int:
        check_is_fitted(self)
        return self._state_round
