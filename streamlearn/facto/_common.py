"""Pieces shared by the factorization-machine estimators (not public)."""

import types
from typing import Any, TypeVar, cast

from threadpoolctl import threadpool_limits

F = TypeVar("F", bound=Any)


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


def with_defaults(init: F, **defaults: object) -> F:
    """A copy of the constructor ``init`` (keyword-only parameters) with other defaults for some parameters.

    The regressor of a classifier/regressor pair takes the same parameters as the classifier and differs only in
    some defaults (``loss``, the step size): it uses ``__init__ = with_defaults(Classifier.__init__, ...)``.
    ``inspect.signature`` (hence ``get_params``, ``clone``, the learners table and the docs) shows the new
    defaults.
    """
    kwdefaults = init.__kwdefaults__ or {}
    unknown = sorted(set(defaults) - set(kwdefaults))
    if unknown:
        raise TypeError(f"with_defaults: {init.__qualname__} has no keyword-only parameter {', '.join(unknown)}")
    copy = types.FunctionType(init.__code__, init.__globals__, init.__name__, init.__defaults__, init.__closure__)
    copy.__kwdefaults__ = {**kwdefaults, **defaults}
    copy.__doc__ = init.__doc__
    return cast(F, copy)
