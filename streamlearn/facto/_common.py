"""Pieces shared by the factorization-machine estimators (not public)."""

import numpy as np
from sklearn.utils.metaestimators import available_if
from threadpoolctl import threadpool_limits
from sklearn.utils.validation import check_is_fitted

from .._validation import Interval

PASS_PARAMS = {
    "max_iter": [Interval(int, 1, None, closed="left")],
    "shuffle": ["boolean"],
    "random_state": ["random_state"],
}

#: dense (d+1) x (d+1) states above this many bytes are refused with a message (not attempted)
DENSE_STATE_LIMIT_BYTES = 4 * 1024 ** 3


def one_blas_thread():
    """Context in which LAPACK runs on one thread. The CCFM kernels make many small eigendecompositions
    (numba calls LAPACK): on a busy machine a multi-threaded OpenBLAS made each 80 x 80 ``eigh`` ~100x
    slower (163 ms vs 0.64 ms measured), so the kernels always run single-threaded."""
    return threadpool_limits(limits=1, user_api="blas")


def check_dense_state(estimator, n_features, n_outputs, n_matrices, hint):
    n = n_features + 1
    need = 8 * n * n * n_outputs * n_matrices
    if need > DENSE_STATE_LIMIT_BYTES:
        raise ValueError(
            f"{type(estimator).__name__} keeps {n_matrices * n_outputs} dense (d+1) x (d+1) matrices; with "
            f"d = {n_features} features that is {need / 1024 ** 3:.1f} GiB (limit "
            f"{DENSE_STATE_LIMIT_BYTES / 1024 ** 3:.0f} GiB). {hint}")


class LogisticProbaMixin:
    """``predict_proba`` / ``predict_log_proba`` for classifiers trained with the logistic loss."""

    def _has_proba(self):
        return getattr(self, "loss", None) == "logistic"

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities of the logistic model: sigmoid of the score (binary) or normalised
        one-vs-rest sigmoids (K > 2 classes)."""
        check_is_fitted(self)
        scores = self.decision_function(X)
        p = 0.5 * (1.0 + np.tanh(0.5 * scores))  # stable sigmoid
        if scores.ndim == 1:
            return np.column_stack([1.0 - p, p])
        p = np.clip(p, 1e-300, None)
        return p / p.sum(axis=1, keepdims=True)

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        """Logarithm of ``predict_proba``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
