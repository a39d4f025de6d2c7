"""Input and parameter validation: every user-facing message about bad parameters or arrays lives here.

Parameter constraints follow scikit-learn's message format (``sklearn.utils._param_validation`` is
private API, so we carry a small equivalent)::

    The 'C' parameter of PassiveAggressiveClassifier must be a float in the range (0.0, inf). Got -1 instead.
"""

import math
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

__all__ = ["Interval", "Options", "validate_params", "check_X", "check_X_y", "as_csr_float"]


class Interval:
    """A number in a range: ``Interval(float, 0, None, closed="neither")`` is (0.0, inf).

    ``type_`` is ``int`` or ``float`` (a float parameter also takes ints). ``closed`` is one of
    ``"both"``, ``"left"``, ``"right"``, ``"neither"``.
    """

    def __init__(self, type_, left, right, *, closed="both"):
        self.type_ = type_
        self.left = left
        self.right = right
        self.closed = closed

    def is_satisfied_by(self, value):
        if isinstance(value, bool):
            return False
        if self.type_ is int:
            if not isinstance(value, numbers.Integral):
                return False
        elif not isinstance(value, numbers.Real):
            return False
        if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and math.isnan(value):
            return False
        lo_ok = self.left is None or (value >= self.left if self.closed in ("both", "left") else value > self.left)
        hi_ok = self.right is None or (
            value <= self.right if self.closed in ("both", "right") else value < self.right
        )
        return lo_ok and hi_ok

    def __str__(self):
        kind = "an int" if self.type_ is int else "a float"
        left = "-inf" if self.left is None else (float(self.left) if self.type_ is float else self.left)
        right = "inf" if self.right is None else (float(self.right) if self.type_ is float else self.right)
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        return f"{kind} in the range {lb}{left}, {right}{rb}"


class Options:
    """One of a fixed set of values (strings, booleans or None)."""

    def __init__(self, *values):
        self.values = values

    def is_satisfied_by(self, value):
        return any(value is v or (isinstance(v, str) and value == v) for v in self.values)

    def __str__(self):
        return "one of {" + ", ".join(repr(v) for v in self.values) + "}"


def validate_params(estimator):
    """Check ``estimator.get_params()`` against ``estimator._parameter_constraints``.

    Each constraint entry is a list of alternatives (``Interval``, ``Options``, ``"boolean"``,
    ``"random_state"``, ``None``); the first that accepts the value wins.
    """
    name = type(estimator).__name__
    for pname, alternatives in estimator._parameter_constraints.items():
        value = getattr(estimator, pname)  # == get_params()[pname] (sklearn convention), without inspect
        if any(_satisfies(c, value) for c in alternatives):
            continue
        described = [_describe(c) for c in alternatives]
        expected = described[0] if len(described) == 1 else ", ".join(described[:-1]) + " or " + described[-1]
        raise ValueError(f"The {pname!r} parameter of {name} must be {expected}. Got {value!r} instead.")


def _satisfies(constraint, value):
    if constraint is None:
        return value is None
    if constraint == "boolean":
        return isinstance(value, (bool, np.bool_))
    if constraint == "random_state":
        return value is None or isinstance(value, (numbers.Integral, np.random.RandomState, np.random.Generator))
    return constraint.is_satisfied_by(value)


def _describe(constraint):
    if constraint is None:
        return "None"
    if constraint == "boolean":
        return "an instance of 'bool'"
    if constraint == "random_state":
        return "an int, a numpy Generator or RandomState, or None"
    return str(constraint)


def check_rng(random_state):
    """A random generator from ``random_state``: None (fresh entropy), an int seed, a numpy ``Generator``
    (used as is) or a legacy ``RandomState`` (used as is). Anything else raises ``ValueError``."""
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.Generator)):
        if isinstance(random_state, bool):
            raise ValueError(f"random_state must be an int, a numpy Generator or RandomState, or None; got "
                             f"{random_state!r}.")
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return random_state
    raise ValueError(f"random_state must be an int, a numpy Generator or RandomState, or None; got "
                     f"{random_state!r}.")


def as_csr_float(X):
    """Normalise a matrix once at the boundary: CSR, float64 data, sorted and summed indices.

    Index dtype (int32 / int64) is kept as given. Dense input becomes CSR (explicit zeros dropped).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X) if X.format != "csr" else X
        _check_csr_structure(X)
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()  # also sorts indices
    else:
        X = sp.csr_matrix(np.asarray(X, dtype=np.float64))
    return X


def _check_csr_structure(X):
    """The kernels index without bounds checks, so a CSR matrix built by hand with a bad ``indptr`` or an
    out-of-range column index must be refused here (a few ms per 10^7 non-zeros), never reach a kernel."""
    indptr, indices = X.indptr, X.indices
    n_rows, n_cols = X.shape
    if indptr.shape[0] != n_rows + 1 or indptr[0] != 0 or indptr[-1] > indices.shape[0] or (
            n_rows and np.any(indptr[1:] < indptr[:-1])):
        raise ValueError(f"X is a malformed CSR matrix: indptr must start at 0, be non-decreasing, have "
                         f"n_rows + 1 = {n_rows + 1} entries and end at most at nnz = {indices.shape[0]}.")
    nnz = int(indptr[-1])
    if nnz and (indices[:nnz].min() < 0 or indices[:nnz].max() >= n_cols):
        bad = int(indices[:nnz].min()) if indices[:nnz].min() < 0 else int(indices[:nnz].max())
        raise ValueError(f"X is a malformed CSR matrix: column index {bad} is outside [0, {n_cols}).")
    if X.data.shape[0] < nnz:
        raise ValueError(f"X is a malformed CSR matrix: {X.data.shape[0]} values for {nnz} indices.")


def check_X(estimator, X, *, reset):
    """Validate a feature matrix for ``estimator`` and return it as canonical CSR float64.

    ``reset=True`` (first ``partial_fit`` or ``fit``) records ``n_features_in_``; otherwise a different
    number of features raises ``ValueError`` naming both counts.
    """
    X = validate_data(
        estimator, X, reset=reset, accept_sparse=("csr", "csc", "coo"), dtype=np.float64,
        ensure_all_finite=True, accept_large_sparse=True,
    )
    return as_csr_float(X)


def check_X_y(estimator, X, y, *, reset, y_numeric=False):
    """Validate ``X`` and ``y`` together (same length, finite, 1-D ``y``)."""
    X, y = validate_data(
        estimator, X, y, reset=reset, accept_sparse=("csr", "csc", "coo"), dtype=np.float64,
        ensure_all_finite=True, accept_large_sparse=True, y_numeric=y_numeric,
    )
    return as_csr_float(X), y


def check_sample_weight(sample_weight, n_samples):
    """``None`` -> ones; otherwise a finite, non-negative float64 array of length ``n_samples``."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.ndim == 0:
        return np.full(n_samples, float(sw))
    if sw.shape != (n_samples,):
        raise ValueError(f"sample_weight.shape == {sw.shape}, expected ({n_samples},)!")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity; expected finite non-negative weights.")
    if np.any(sw < 0):
        raise ValueError("Negative values in data passed to sample_weight; expected non-negative weights.")
    return np.ascontiguousarray(sw)
