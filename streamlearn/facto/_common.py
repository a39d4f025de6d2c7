"""Pieces shared by the factorization-machine estimators (not public)."""

from threadpoolctl import threadpool_limits

from .._params import LINEAR_PASS_DEFAULTS

#: the defaults of the pass parameters of the CCFM learners (those of the linear learners but the intercept,
#: which is an entry of their matrix)
PASS_DEFAULTS = {name: value for name, value in LINEAR_PASS_DEFAULTS.items() if name != "fit_intercept"}

#: dense (d+1) x (d+1) states above this many bytes are refused with a message (not attempted)
DENSE_STATE_LIMIT_BYTES = 4 * 1024**3


def one_blas_thread():
    """Context in which LAPACK runs on one thread. The CCFM kernels make many small eigendecompositions
    (numba calls LAPACK): on a busy machine a multi-threaded OpenBLAS makes each small ``eigh`` far
    slower, so the kernels always run single-threaded."""
    return threadpool_limits(limits=1, user_api="blas")


def check_dense_state(estimator, n_features, n_outputs, n_matrices, hint):
    n = n_features + 1
    need = 8 * n * n * n_outputs * n_matrices
    if need > DENSE_STATE_LIMIT_BYTES:
        raise ValueError(
            f"{type(estimator).__name__} keeps {n_matrices * n_outputs} dense (d+1) x (d+1) matrices; with "
            f"d = {n_features} features that is {need / 1024**3:.1f} GiB (limit "
            f"{DENSE_STATE_LIMIT_BYTES / 1024**3:.0f} GiB). {hint}"
        )
