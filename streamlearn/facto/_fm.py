"""Vanilla factorization machines trained online (Rendle 2010; Algorithms §7.1)."""

import numpy as np

from .. import _validation
from .._estimator import check_is_fitted
from .._kernels import fm as _k
from .._validation import PASS_PARAMS, Interval, Options
from ..base import LogisticProbaMixin, OnlineClassifierMixin, OnlineRegressorMixin, _BaseOnline
from ..losses import loss_code
from .._params import LINEAR_PASS_DEFAULTS, keyword_init, with_defaults
from .._validation import csr_args, chunk_args

__all__ = ["FMClassifier", "FMRegressor"]

_OPTIMIZERS = {"sgd": _k.OPT_SGD, "adagrad": _k.OPT_ADAGRAD}
_SCHEDULES = {"constant": _k.SCHEDULE_CONSTANT, "invsqrt": _k.SCHEDULE_INVSQRT}

_FM_PARAMS = {
    "n_factors": [Interval(int, 1, None, closed="left")],
    "optimizer": [Options("sgd", "adagrad")],
    "learning_rate": [Options("constant", "invsqrt")],
    "eta0": [Interval(float, 0, None, closed="neither")],
    "l2_weight": [Interval(float, 0, None, closed="left")],
    "l2_latent": [Interval(float, 0, None, closed="left")],
    "init_stdev": [Interval(float, 0, None, closed="left")],
    "fit_intercept": ["boolean"],
    **PASS_PARAMS,
}


class _FMBase(_BaseOnline):
    """State: ``intercept_`` (K,), ``coef_`` (K, d), ``latent_`` (K, d, k) (without the K axis for a
    regressor), AdaGrad accumulators ``_state_G*`` of the same shapes. One kernel call per chunk."""

    _start_params = ("init_stdev",)  # the latent factors' initial spread

    def _allocate(self, n_features, n_outputs, X):
        rng = _validation.check_rng(self.random_state)
        latent = rng.normal(0.0, self.init_stdev, size=(n_outputs, n_features, self.n_factors))
        if self._is_regressor:
            self.coef_ = np.zeros(n_features)
            self.latent_ = np.ascontiguousarray(latent[0])
        else:
            self.coef_ = np.zeros((n_outputs, n_features))
            self.latent_ = latent
        self.intercept_ = np.zeros(n_outputs)
        self._state_G0 = np.zeros(n_outputs)
        self._state_Gw = np.zeros((n_outputs, n_features))
        self._state_GV = np.zeros((n_outputs, n_features, self.n_factors))

    def _arrays(self):
        K = self.intercept_.shape[0]
        d = self.n_features_in_
        return self.intercept_, self.coef_.reshape(K, d), self.latent_.reshape(K, d, -1)

    def _check_shape_params(self):
        if self.latent_.shape[-1] != self.n_factors:
            raise ValueError(
                f"n_factors={self.n_factors} but {type(self).__name__} was fitted with "
                f"{self.latent_.shape[-1]} factors; call fit to start again with a new n_factors."
            )

    def _kernel_pass(self, X, targets, sw, out):
        self._check_shape_params()
        w0, w, V = self._arrays()
        t, bad = _k.fm_epoch(
            **chunk_args(X, targets, sw),
            w0=w0,
            w=w,
            V=V,
            G_w0=self._state_G0,
            G_w=self._state_Gw,
            G_V=self._state_GV,
            fit_intercept=bool(self.fit_intercept),
            loss=loss_code(self.loss),
            opt=_OPTIMIZERS[self.optimizer],
            schedule=_SCHEDULES[self.learning_rate],
            eta0=float(self.eta0),
            l2_weight=float(self.l2_weight),
            l2_latent=float(self.l2_latent),
            t=self.t_,
            out_scores=out,
        )
        self.t_ = int(t)
        if bad >= 0:
            self._raise_diverged(bad, "eta0 or init_stdev")

    def _decision_function(self, X):
        check_is_fitted(self)
        X = _validation.check_X(self, X, reset=False)
        w0, w, V = self._arrays()
        out = np.empty((X.shape[0], w0.shape[0]))
        _k.fm_scores(**csr_args(X), w0=w0, w=w, V=V, out=out)
        return _validation.finite_scores(self, out[:, 0] if out.shape[1] == 1 else out)

    @property
    def nnz_weights(self) -> int:
        """Number of non-zero parameters (intercepts, linear weights and latent factors)."""
        check_is_fitted(self)
        return int(np.count_nonzero(self.intercept_) + np.count_nonzero(self.coef_) + np.count_nonzero(self.latent_))


class FMClassifier(OnlineClassifierMixin, LogisticProbaMixin, _FMBase):
    """Factorization machine for classification, trained online by SGD or AdaGrad (Rendle, ICDM 2010).

    Score ``yhat = w0 + w . x + sum_{i<j} <v_i, v_j> x_i x_j``, computed in O(k nnz(x)) by the identity
    ``1/2 sum_f ((sum_i v_if x_i)^2 - sum_i v_if^2 x_i^2)`` (Algorithms §7.1). After each example every
    parameter it touches takes one step along ``l'(yhat, y) dyhat/dp + l2 p``. Labels are mapped to
    {-1, +1}; more than two classes are learnt one-vs-rest (one FM per class). Non-convex in ``V``: the
    result depends on the random initialisation of ``V`` (seeded by ``random_state``).

    Parameters
    ----------
    loss : {"logistic", "hinge"}, default="logistic"
        ``log(1 + exp(-y yhat))`` or ``max(0, 1 - y yhat)``.
    n_factors : int >= 1, default=10
        Rank ``k`` of the pairwise interactions.
    optimizer : {"adagrad", "sgd"}, default="adagrad"
        AdaGrad (per-parameter step ``eta0 / sqrt(sum of squared gradients)``; no parameter moves by more than
        ``eta0`` per example, so unscaled features do not make it diverge) or plain SGD (step ``eta_t``).
    learning_rate : {"constant", "invsqrt"}, default="constant"
        SGD schedule: ``eta_t = eta0`` or ``eta0 / sqrt(t)`` (ignored by AdaGrad).
    eta0 : float > 0, default=0.1
        Base step size.
    l2_weight : float >= 0, default=0.0
        L2 penalty on ``w``, applied to the features present in the example (lazy, as libFM's SGD).
    l2_latent : float >= 0, default=0.0
        L2 penalty on ``V``, applied likewise.
    init_stdev : float >= 0, default=0.1
        Standard deviation of the normal initialisation of ``V`` (``w`` and ``w0`` start at 0).
    fit_intercept : bool, default=True
        Learn ``w0``.
    max_iter : int >= 1, default=5
        Passes made by ``fit`` (``partial_fit`` always makes one).
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    random_state : int, Generator or None, default=0
        Seed of the initialisation of ``V`` and of the shuffling. The default 0 makes runs reproducible;
        None draws fresh entropy.

    Attributes
    ----------
    intercept_ : ndarray of shape (n_outputs,)
    coef_ : ndarray of shape (n_outputs, n_features)
    latent_ : ndarray of shape (n_outputs, n_features, n_factors)
    classes_ : ndarray of shape (n_classes,)
    t_ : int
        Examples learnt from so far.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.facto import FMClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = FMClassifier(n_factors=4).partial_fit(X, y, classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.3f}")
    0.850
    """

    _parameter_constraints = {"loss": [Options("logistic", "hinge")], **_FM_PARAMS}

    __init__ = keyword_init(
        loss="logistic",
        n_factors=10,
        optimizer="adagrad",
        learning_rate="constant",
        eta0=0.1,
        l2_weight=0.0,
        l2_latent=0.0,
        init_stdev=0.1,
        **{**LINEAR_PASS_DEFAULTS, "random_state": 0},
    )


class FMRegressor(OnlineRegressorMixin, _FMBase):
    """Factorization machine for regression (squared loss), trained online by SGD or AdaGrad.

    As :class:`FMClassifier` with the loss ``(yhat - y)^2`` (no 1/2 factor, as everywhere in streamlearn:
    the gradient is ``2 (yhat - y) dyhat/dp``). Predictions are not clipped to the range of the targets.

    Parameters
    ----------
    n_factors, optimizer, learning_rate, l2_weight, l2_latent, init_stdev, fit_intercept, max_iter, shuffle, random_state
        As in :class:`FMClassifier`.
    eta0 : float > 0, default=0.05
        Base step size. With SGD the squared loss diverges when ``eta0 * ||x||^2`` is large: scale the
        features or lower it (a diverged pass raises ``FloatingPointError`` naming the example).

    Attributes
    ----------
    intercept_ : ndarray of shape (1,)
    coef_ : ndarray of shape (n_features,)
    latent_ : ndarray of shape (n_features, n_factors)
    t_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.facto import FMRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 4))
    >>> y = 1.0 + X[:, 0] - 2.0 * X[:, 1] * X[:, 2]          # one pairwise interaction
    >>> fm = FMRegressor(n_factors=2).fit(X, y)
    >>> print(f"{np.sqrt(np.mean((fm.predict(X) - y) ** 2)):.2f}")
    0.0...
    """

    _parameter_constraints = {"loss": [Options("squared")], **_FM_PARAMS}

    __init__ = with_defaults(FMClassifier.__init__, loss="squared", eta0=0.05)
    _progressive_loss = "squared"
