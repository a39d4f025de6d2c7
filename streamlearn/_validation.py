"""Input and parameter validation: every user-facing message about bad parameters or arrays lives here.

Parameter constraints follow scikit-learn's message format (``sklearn.utils._param_validation`` is
private API, so we carry a small equivalent)::

    The 'C' parameter of PassiveAggressiveClassifier must be a float in the range (0.0, inf). Got -1 instead.
"""

import math
import numbers
import weakref
from itertools import repeat
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._kernels.linear import EXPONENT_MASK, csr_check, dense_fill_csr, dense_row_counts

__all__ = [
    "Interval",
    "Options",
    "validate_params",
    "check_X",
    "check_X_y",
    "check_finite",
    "hashed_overflow",
    "float32_overflow",
    "narrow_to_float32",
    "finite_scores",
    "as_csr_float",
    "csr_args",
    "chunk_args",
]


_INT_MAX = (1 << 63) - 1


class Interval:
    """A number in a range: ``Interval(float, 0, None, closed="neither")`` is (0.0, inf).

    ``type_`` is ``int`` or ``float`` (a float parameter also takes ints). ``closed`` is one of
    ``"both"``, ``"left"``, ``"right"``, ``"neither"``. A bound of None is an open end: ``right=None`` refuses
    ``inf`` and ``left=None`` refuses ``-inf``, as the message's ``inf)`` says; an interval that takes infinity
    names it as a closed bound, ``Interval(float, 0, math.inf, closed="both")`` ([0.0, inf]). NaN is never in
    an interval.

    >>> Interval(float, 0, None, closed="left").is_satisfied_by(float("inf"))
    False
    >>> Interval(float, 0, math.inf, closed="both").is_satisfied_by(float("inf"))
    True
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
            if not isinstance(value, numbers.Integral) or abs(value) > _INT_MAX:  # the kernels count in int64
                return False
        elif not isinstance(value, numbers.Real):
            return False
        if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and math.isnan(value):
            return False
        # an open end (None) is -inf / inf, never reached: comparing with the bound refuses an infinite value
        left = -math.inf if self.left is None else self.left
        right = math.inf if self.right is None else self.right
        lo_ok = value >= left if self.closed in ("both", "left") and self.left is not None else value > left
        hi_ok = value <= right if self.closed in ("both", "right") and self.right is not None else value < right
        return bool(lo_ok and hi_ok)

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


#: the constraints of the passes every online estimator makes (``fit``: ``max_iter`` passes, shuffled or not)
PASS_PARAMS = {
    "max_iter": [Interval(int, 1, None, closed="left")],
    "shuffle": ["boolean"],
    "random_state": ["random_state"],
}
#: :data:`PASS_PARAMS` and the intercept switch of the linear learners
LINEAR_PASS_PARAMS = {"fit_intercept": ["boolean"], **PASS_PARAMS}


#: the parameter values each estimator last passed :func:`validate_params` with (kept beside the estimator, not in
#: it: its attributes are what a model file saves)
_VALIDATED: "weakref.WeakKeyDictionary[Any, tuple]" = weakref.WeakKeyDictionary()
#: the values that cannot change in place: only these are remembered as valid
_IMMUTABLE = frozenset({int, float, str, bool, type(None), np.float64, np.int64, np.bool_})


def validate_params(estimator):
    """Check ``estimator.get_params()`` against ``estimator._parameter_constraints``.

    Each constraint entry is a list of alternatives (``Interval``, ``Options``, ``"boolean"``,
    ``"random_state"``, ``None``); the first that accepts the value wins. Values found valid are remembered (when
    every one is a number, string, boolean or None): the next call with the same values, of the same types, returns
    at once (a ``partial_fit`` of one row spent more time here than learning it).
    """
    constraints = estimator._parameter_constraints
    values = tuple(map(getattr, repeat(estimator), constraints))  # == get_params() (sklearn convention)
    types = tuple(map(type, values))
    try:
        cached = _VALIDATED.get(estimator)
    except TypeError:  # an estimator that cannot be weakly referenced: checked every time
        cached, types = None, ()
    # (the types first: values are compared only when all are numbers, strings, booleans or None, as remembered)
    if cached is not None and cached[1] == types and cached[0] == values:
        return
    name = type(estimator).__name__
    for (pname, alternatives), value in zip(constraints.items(), values):
        expected = expected_param(alternatives, value)
        if expected is not None:
            raise ValueError(f"The {pname!r} parameter of {name} must be {expected}. Got {value!r} instead.")
    if types and _IMMUTABLE.issuperset(types):
        _VALIDATED[estimator] = (values, types)


def expected_param(alternatives, value):
    """None when ``value`` meets one of the constraints ``alternatives`` (an entry of ``_parameter_constraints``),
    else what they expect, in words (``"a float in the range (0.0, inf)"``)."""
    if any(_satisfies(c, value) for c in alternatives):
        return None
    described = [_describe(c) for c in alternatives]
    expected = described[0] if len(described) == 1 else ", ".join(described[:-1]) + " or " + described[-1]
    if isinstance(value, numbers.Integral) and abs(value) > _INT_MAX:
        expected += " (an integer of at most 63 bits)"
    return expected


def _satisfies(constraint, value):
    if constraint is None:
        return value is None
    if constraint == "boolean":
        return isinstance(value, (bool, np.bool_))
    if constraint == "random_state":
        if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
            return value >= 0  # numpy's generators take non-negative seeds only
        return value is None or isinstance(value, (np.random.RandomState, np.random.Generator))
    return constraint.is_satisfied_by(value)


def _describe(constraint):
    if constraint is None:
        return "None"
    if constraint == "boolean":
        return "an instance of 'bool'"
    if constraint == "random_state":
        return _RANDOM_STATE
    return str(constraint)


_RANDOM_STATE = "a non-negative int, a numpy Generator or RandomState, or None"


def check_rng(random_state):
    """A random generator from ``random_state``: None (fresh entropy), a non-negative int seed, a numpy
    ``Generator`` (used as is) or a legacy ``RandomState`` (used as is). Anything else raises ``ValueError``."""
    if not _satisfies("random_state", random_state):
        raise ValueError(f"random_state must be {_RANDOM_STATE}; got {random_state!r}.")
    if isinstance(random_state, np.random.RandomState):
        return random_state
    return np.random.default_rng(random_state)


#: The largest feature value (in size) the learners take: beyond it squares overflow (``||x||^2`` of the
#: Passive-Aggressive steps, the squared gradients of AdaGrad-type rates, the covariances and sketches of
#: ``x x^T``) and would leave a learner silently stuck or non-finite. 2**500 (about 3.3e150) leaves room for
#: sums of squares over many features; its exponent bits make the check part of the finiteness sweep, for free.
MAX_FEATURE_VALUE = 2.0**500
_LIMIT_BITS = {
    False: EXPONENT_MASK,  # NaN and infinity
    True: np.uint64(np.float64(MAX_FEATURE_VALUE).view(np.uint64) & EXPONENT_MASK),
}


def as_csr_float(X, *, ensure_finite=False, bounded=False):
    """Normalise a matrix once at the boundary: CSR, float64 data, sorted and summed indices.

    Index dtype (int32 / int64) is kept as given. Dense input becomes CSR (explicit zeros dropped).
    ``ensure_finite=True`` also refuses NaN and infinite values (checked in the same sweep as the structure), and
    with ``bounded=True`` values of :data:`MAX_FEATURE_VALUE` or more in size, what the learners take.
    """
    if sp.issparse(X):
        # (a csr_matrix with native index arrays, the common case, has no conversion to look for)
        if not (type(X) is sp.csr_matrix and X.indices.dtype in _INDEX_DTYPES and X.indptr.dtype in _INDEX_DTYPES):
            X = _native_index_arrays(X)
            X = sp.csr_matrix(X) if X.format != "csr" else X
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        _check_csr_structure(X, ensure_finite=ensure_finite, bounded=bounded)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()  # also sorts indices
            if ensure_finite:  # summed duplicates may overflow; off the path of canonical input
                _check_csr_structure(X, ensure_finite=True, bounded=bounded)
    else:
        X = dense_to_csr(np.asarray(X, dtype=np.float64))
        if ensure_finite:
            _check_csr_structure(X, ensure_finite=True, bounded=bounded)
    return X


_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _csr_layout():
    """The attributes of a ``scipy.sparse.csr_matrix`` instance (``{"_shape", "data", "indices", "indptr",
    "maxprint"}`` since scipy 1.8), or None when they are not those: then :func:`csr_from_arrays` takes scipy's
    constructor."""
    state = dict(vars(sp.csr_matrix((1, 1))))
    return state if set(state) == {"_shape", "data", "indices", "indptr", "maxprint"} else None


_CSR_STATE = _csr_layout()


def csr_from_arrays(data, indices, indptr, shape):
    """``scipy.sparse.csr_matrix((data, indices, indptr), shape=shape)`` without the constructor's checks and
    copies, for arrays made valid by the caller (float64 ``data``; ``indices`` and ``indptr`` of one dtype, int32
    or int64, in range; ``shape`` a pair of ints): scipy's checks were a third of a one-row ``partial_fit`` on a
    NumPy row (``benchmarks/one_row.py``). The matrix is the one scipy's constructor makes over the same arrays
    (its sorted and canonical flags are worked out when asked, as there), except that the arrays are kept as given
    (scipy narrows int64 index arrays to int32 when the shape allows); with an instance layout other than scipy's
    (a future version), scipy's constructor is called.

    >>> import numpy as np
    >>> X = csr_from_arrays(np.array([2.0]), np.array([1], dtype=np.int32), np.array([0, 1], dtype=np.int32), (1, 3))
    >>> X.toarray().tolist(), X.has_canonical_format
    ([[0.0, 2.0, 0.0]], True)
    """
    if _CSR_STATE is None:
        return sp.csr_matrix((data, indices, indptr), shape=shape, copy=False)
    X = sp.csr_matrix.__new__(sp.csr_matrix)
    X.__dict__.update(_CSR_STATE)
    X.data, X.indices, X.indptr, X._shape = data, indices, indptr, (int(shape[0]), int(shape[1]))
    return X


def dense_to_csr(A):
    """A float64 array as a CSR matrix of its non-zeros (NaN kept, zeros dropped), row by row in column order,
    as ``scipy.sparse.csr_matrix(A)`` makes it for a 2-D array, by two compiled passes over ``A`` (the counts per
    row, then the columns and values): no mask or index arrays of A's size, and the fixed cost of a one-row call
    (a ``partial_fit`` of one row spent a third of its time here) low. Other shapes go to scipy (its messages).

    >>> import numpy as np
    >>> X = dense_to_csr(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> X.indptr.tolist(), X.indices.tolist(), X.data.tolist()
    ([0, 1, 2], [1, 0], [2.0, 3.0])
    """
    if A.ndim != 2:
        return sp.csr_matrix(A)
    n_rows, n_cols = A.shape
    indptr = np.empty(n_rows + 1, dtype=np.int64)
    nnz = int(dense_row_counts(A, indptr))
    index = np.int32 if max(nnz, n_cols) < np.iinfo(np.int32).max else np.int64
    indices, data = np.empty(nnz, dtype=index), np.empty(nnz, dtype=np.float64)
    dense_fill_csr(A, indptr, indices, data)
    return csr_from_arrays(data, indices, indptr.astype(index, copy=False), A.shape)


def _native_index_arrays(X):
    """``X`` (a sparse matrix) as it is when its index arrays are int32 or int64 in the machine's byte order, as
    scipy builds them; else (arrays assigned by hand: big-endian, unsigned or narrow integers) a copy whose index
    arrays are int64, the values unchanged (an unsigned index beyond int64 wraps negative and is refused by the
    structure check), which the kernels are compiled for. Index arrays that are not integers are refused."""
    if X.format == "coo":
        arrays = {"row": X.row, "col": X.col}
    else:  # (dok and lil matrices have none)
        arrays = {k: getattr(X, k) for k in ("indptr", "indices") if isinstance(getattr(X, k, None), np.ndarray)}
    if all(a.dtype in _INDEX_DTYPES for a in arrays.values()):
        return X
    for key, a in arrays.items():
        if a.dtype.kind not in "iu":
            raise ValueError(
                f"X is a malformed {X.format.upper()} matrix: its {key} must be integers; got dtype {a.dtype}."
            )
    X = X.copy()
    for key, a in arrays.items():
        setattr(X, key, a.astype(np.int64))
    return X


def csr_args(X):
    """The keyword arguments of a kernel that reads the rows of the CSR matrix ``X``: ``indptr``, ``indices``,
    ``data``."""
    return {"indptr": X.indptr, "indices": X.indices, "data": X.data}


def chunk_args(X, targets, sample_weight):
    """The keyword arguments every epoch kernel takes for a chunk: the CSR arrays of ``X``, the targets and
    the sample weights."""
    return {
        "indptr": X.indptr,
        "indices": X.indices,
        "data": X.data,
        "targets": targets,
        "sample_weight": sample_weight,
    }


def _check_csr_structure(X, *, ensure_finite=False, bounded=False):
    """The kernels index without bounds checks, so a CSR matrix built by hand with a bad ``indptr`` or an
    out-of-range column index must be refused here, never reach a kernel. One vectorised sweep
    (``_kernels.linear.csr_check``, ~0.15 ns per non-zero) checks the indices and, for free, that the values
    are finite; the first offender is located (with NumPy) only to word the error."""
    indptr, indices, data = X.indptr, X.indices, X.data
    n_rows, n_cols = X.shape
    if (
        indptr.ndim != 1
        or indptr.shape[0] != n_rows + 1
        or indptr[0] != 0
        or indptr[-1] > indices.shape[0]
        or indptr[-1] < 0
    ):
        raise _malformed_indptr(n_rows, indices.shape[0])
    nnz = int(indptr[-1])
    if data.shape[0] < nnz:
        raise ValueError(f"X is a malformed CSR matrix: {data.shape[0]} values for {nnz} indices.")
    if data.dtype != np.float64 or not data.flags.c_contiguous:
        data = np.ascontiguousarray(data, dtype=np.float64)
    bad_ptr, bad_idx, bad_val = csr_check(indptr, indices, data.view(np.uint64), n_cols, _LIMIT_BITS[bounded])
    if bad_ptr:
        raise _malformed_indptr(n_rows, indices.shape[0])
    if bad_idx:
        idx = indices[:nnz]
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise ValueError(f"X is a malformed CSR matrix: column index {bad} is outside [0, {n_cols}).")
    if bad_val and ensure_finite:
        p = int(np.flatnonzero(~(np.abs(data[:nnz]) < (MAX_FEATURE_VALUE if bounded else np.inf)))[0])
        row = int(np.searchsorted(indptr, p, side="right")) - 1
        _raise_non_finite(data[p], row, int(indices[p]))


def check_n_features(estimator, X, reset):
    """What ``validate_data(..., skip_check_array=True)`` does for a sparse ``X`` (which has no feature names),
    without its dataframe probing (~25 us a call): record ``n_features_in_`` on ``reset``, else compare."""
    if hasattr(estimator, "feature_names_in_"):  # fitted on a dataframe: let scikit-learn warn as it does
        from sklearn.utils.validation import validate_data

        validate_data(estimator, X, reset=reset, skip_check_array=True)
        return
    if reset:
        estimator.n_features_in_ = X.shape[1]
    elif hasattr(estimator, "n_features_in_") and X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input."
        )


def _malformed_indptr(n_rows, nnz):
    return ValueError(
        f"X is a malformed CSR matrix: indptr must start at 0, be non-decreasing, have n_rows + 1 = "
        f"{n_rows + 1} entries and end at most at nnz = {nnz}."
    )


_FAST_DENSE = (np.dtype(np.float64), np.dtype(np.float32))


def fast_input(X, y):
    """True for the common streaming inputs, a float64 CSR matrix or a 2-D float32/float64 NumPy array (and a 1-D
    numeric ``y`` of matching length): then only the feature count/names go through scikit-learn's
    ``validate_data`` and the finite check rides on our structure sweep, instead of being made twice (sklearn's
    finite check + our structure check): a ``partial_fit`` of one row costs a fraction of scikit-learn's checks.
    Anything else takes scikit-learn's full validation (its messages, conversions and warnings)."""
    if isinstance(X, (sp.csr_matrix, sp.csr_array)):
        if X.dtype != np.float64:
            return False
    elif type(X) is not np.ndarray or X.dtype not in _FAST_DENSE:
        return False
    if not (X.ndim == 2 and X.shape[0] >= 1 and X.shape[1] >= 1):
        return False
    return y is None or (
        isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iuf" and y.shape[0] == X.shape[0]
    )


def plain_dense(estimator, X):
    """True for a C-contiguous 2-D float64 NumPy array of at least one row, with the ``estimator``'s number of
    columns (checked here: a ``ValueError`` naming both counts), when the estimator was not fitted on named
    columns: what a linear score reads where it is, without the CSR copy of :func:`check_X`."""
    if not (
        type(X) is np.ndarray
        and X.dtype == np.float64
        and fast_input(X, None)
        and X.flags.c_contiguous
        and not hasattr(estimator, "feature_names_in_")
    ):
        return False
    check_n_features(estimator, X, reset=False)
    return True


#: the feature matrices the estimators accept (scikit-learn's ``validate_data`` options), off the fast path. NaN and
#: infinity are refused by our own sweep after the conversion (:func:`check_finite`): one line naming the row and
#: column, where scikit-learn's NaN message runs over several lines
_ACCEPTED_X = dict(
    accept_sparse=("csr", "csc", "coo"), dtype=np.float64, ensure_all_finite=False, accept_large_sparse=True
)


def check_finite(X, *, bounded=False):
    """``X`` (a CSR matrix or a dense array) as it is; ``ValueError`` naming the first NaN or infinity (row and
    column) if it holds one, and with ``bounded=True`` the first value of :data:`MAX_FEATURE_VALUE` or more in
    size. For dense input one vectorised sweep; for CSR the structure sweep."""
    if sp.issparse(X):
        _check_csr_structure(X, ensure_finite=True, bounded=bounded)
        return X
    X = np.asarray(X)
    if X.dtype.kind in "fc":
        ok = np.abs(X) < MAX_FEATURE_VALUE if bounded else np.isfinite(X)
        if not ok.all():
            row, col = (int(i[0]) for i in np.nonzero(~ok.reshape(X.shape[0], -1)))
            _raise_non_finite(X[row, col], row, col)
    return X


def _first_non_finite(indptr, data):
    """``None`` when every value of ``data`` (the values of CSR rows delimited by ``indptr``) is finite; else
    ``(row, p)``: the row (from 0) and the position in ``data`` of the first value that is not. One vectorised
    sweep of ``data`` (O(nnz))."""
    finite = np.isfinite(data)
    if finite.all():
        return None
    p = int(np.argmin(finite))
    return int(np.searchsorted(indptr, p, side="right")) - 1, p


def hashed_overflow(X, narrowed=None):
    """``None`` when every value of ``X``, CSR rows of hashed features made from finite values, is finite; else
    ``(row, reason)``: the first row (from 0) holding a value that overflowed, and the one-line reason naming its
    hashed column. From finite values, only a product of crossed features (quadratic/cubic interactions) or a
    sum of the values hashed to one bucket can overflow. With ``narrowed``, ``X.data`` cast to float32, a value
    that does not fit in float32 counts too (:func:`float32_overflow`). One vectorised sweep of ``X.data`` (or of
    ``narrowed``), O(nnz)."""
    hit = _first_non_finite(X.indptr, X.data if narrowed is None else narrowed)
    if hit is None:
        return None
    row, p = hit
    value = X.data[p]
    if np.isfinite(value):  # only its float32 copy overflowed
        return row, _float32_reason(f"hashed column {int(X.indices[p])}", value)
    return row, (
        f"hashed column {int(X.indices[p])} is {value}: the product of crossed features (quadratic/cubic) or the sum "
        "of the values hashed to one bucket overflows; expected feature values small enough to multiply and add "
        "(scale them down)."
    )


def float32_overflow(data, indices, indptr, shift=0):
    """``None`` when every value of ``data``, the float32 values of CSR rows (``indices``, ``indptr``) narrowed
    from finite float64 ones, is finite; else ``(row, reason)``: the first row (from 0) holding a value too large
    for float32 (about 3.4e38 in size), which narrowing made infinite, and the one-line reason naming its feature
    index (the column plus ``shift``, as a file writes it). One vectorised sweep of ``data`` (O(nnz))."""
    hit = _first_non_finite(indptr, data)
    if hit is None:
        return None
    row, p = hit
    return row, _float32_reason(f"feature {int(indices[p]) + shift}", None)


def narrow_to_float32(data):
    """``data`` (float64) cast to float32, a value too large for float32 becoming infinite without NumPy's
    warning: the readers check the result (:func:`float32_overflow`, :func:`hashed_overflow`)."""
    with np.errstate(over="ignore"):
        return data.astype(np.float32)


def _float32_reason(where, value):
    what = "a value" if value is None else f"the value {value:.4g}"
    return (
        f"{where} has {what} too large for float32 (above 3.4e38 in size); expected values that fit, or read "
        "with dtype=float64 (the default)."
    )


def row_error(exc, row, reason):
    """``exc``, an error about row ``row`` (from 0) of a batch, with ``exc.row`` and ``exc.reason`` (the message
    without the row's place in the batch), for callers that name the row by its place in a stream or a file."""
    exc.row = row
    exc.reason = reason
    return exc


#: what a feature value of MAX_FEATURE_VALUE or more is told (the learners' check and the model server's)
EXPECTED_BELOW_BOUND = (
    "expected values below 2**500 (about 3.3e150) in size, beyond which their squares overflow. Scale the features."
)


def _raise_non_finite(value, row, col):
    if np.isfinite(value):
        raise row_error(
            ValueError(f"Input X has the value {value:.4g} (row {row}, column {col}); {EXPECTED_BELOW_BOUND}"),
            row,
            f"a feature value of {value:.4g} is too large: {EXPECTED_BELOW_BOUND}",
        )
    what = "NaN" if np.isnan(value) else "infinity"
    expected = "expected finite values (NaN and infinity are not allowed)."
    raise row_error(
        ValueError(f"Input X contains {what} (row {row}, column {col}); {expected}"),
        row,
        f"a feature value is {what}: {expected}",
    )


def check_2d_real(X, what="X"):
    """``X`` (a feature matrix, before scikit-learn's ``validate_data``) as it is, or a list as an array; a one-line
    ``ValueError`` for what ``validate_data`` words over several lines, printing the whole array: a scalar or a
    1-D array (or any other number of dimensions than 2) and complex values. Reads the shape and dtypes only
    (a list is converted once, and handed on converted)."""
    if isinstance(X, (list, tuple)):
        try:
            X = np.asarray(X)
        except ValueError:  # ragged rows: scikit-learn's message
            return X
    dtypes = getattr(X, "dtypes", None)  # a DataFrame: one dtype per column
    kinds = (
        {getattr(dt, "kind", "") for dt in dtypes}
        if dtypes is not None
        else {getattr(getattr(X, "dtype", None), "kind", "")}
    )
    if "c" in kinds:
        raise ValueError(f"Complex data not supported: {what} has complex values; expected real numbers.")
    ndim = getattr(X, "ndim", None)
    if ndim is not None and ndim != 2:
        got = "a scalar" if ndim == 0 else f"a {ndim}-D array of shape {tuple(X.shape)}"
        # "Reshape your data": the words scikit-learn's estimator checks look for
        hint = (
            ". Reshape your data: X.reshape(-1, 1) if it has one feature, X.reshape(1, -1) if it is one example"
            if ndim == 1
            else ""
        )
        raise ValueError(f"Expected a 2-D {what} (n_samples, n_features); got {got}{hint}.")
    if kinds & {"U", "S", "O"} and not sp.issparse(X):
        _refuse_non_numbers(X, what)
    return X


def _refuse_non_numbers(X, what):
    """A one-line error naming the first cell of ``X`` (text or Python objects: an array, a list or a DataFrame)
    that is not a number, where NumPy's conversion says "could not convert string to float: 'x'" or "float()
    argument must be a string or a real number, not 'dict'", naming neither ``X`` nor the place: a ``ValueError``
    for text, a ``TypeError`` (with Python's words) for other objects. Numbers written as text pass."""
    values = X.to_numpy(dtype=object) if hasattr(X, "to_numpy") else np.asarray(X, dtype=object)
    try:
        np.asarray(values, dtype=np.float64)
        return
    except (TypeError, ValueError):
        pass
    columns = getattr(X, "columns", None)
    for (row, col), value in np.ndenumerate(values):
        if value is None:  # NaN to NumPy, refused as such
            continue
        try:
            float(value)
        except (TypeError, ValueError) as exc:
            shown = repr(value.item() if isinstance(value, np.generic) else value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            where = f"row {row}, column {columns[col]!r}" if columns is not None else f"row {row}, column {col}"
            expected = (
                "expected numbers (text and categories become features through streamlearn.preprocessing.DictHasher)."
            )
            if isinstance(exc, TypeError):  # neither text nor a number: Python's TypeError, with its words
                raise TypeError(f"{what} holds {shown} ({where}): {exc}; {expected}") from None
            raise ValueError(f"{what} holds {shown} ({where}); {expected}") from None


def check_feature_names(estimator, X, reset):
    """A one-line ``ValueError`` when ``X`` (a DataFrame whose column names are all strings) is not reset and its
    column names differ from the ``feature_names_in_`` the estimator was fitted with, or come in another order;
    scikit-learn's message for it lists the names one per line. Anything else is left to ``validate_data`` (names
    that are not all strings, or a fit without names, are warned about there)."""
    fitted = getattr(estimator, "feature_names_in_", None)
    columns = getattr(X, "columns", None)
    if reset or fitted is None or columns is None or not all(isinstance(c, str) for c in columns):
        return
    names = np.asarray(list(columns), dtype=object)
    if names.shape == fitted.shape and bool(np.all(names == fitted)):
        return
    fitted_set, names_set = set(fitted), set(names)
    unseen, missing = [n for n in names if n not in fitted_set], [n for n in fitted if n not in names_set]
    if unseen or missing:
        how = "; ".join(
            f"{what} {_some_names(which)}"
            for what, which in (("unseen at fit time:", unseen), ("seen at fit time, now missing:", missing))
            if which
        )
    else:
        how = "the same names in another order"
    raise ValueError(
        f"The feature names of X differ from those {type(estimator).__name__} was fitted with ({how}); expected "
        f"the same names in the same order: {_some_names(list(fitted))}."
    )


def _some_names(names, most=10):
    shown = ", ".join(repr(str(n)) for n in names[:most])
    return f"[{shown}, ...] ({len(names)})" if len(names) > most else f"[{shown}]"


def check_X(estimator, X, *, reset):
    """Validate a feature matrix for ``estimator`` and return it as canonical CSR float64.

    ``reset=True`` (first ``partial_fit`` or ``fit``) records ``n_features_in_``; otherwise a different
    number of features raises ``ValueError`` naming both counts.
    """
    if fast_input(X, None):
        check_n_features(estimator, X, reset)
        return as_csr_float(X, ensure_finite=True, bounded=True)
    from sklearn.utils.validation import validate_data  # off the fast path only: scikit-learn's import is long

    check_feature_names(estimator, X, reset)
    X = validate_data(estimator, check_2d_real(X), reset=reset, **_ACCEPTED_X)
    return as_csr_float(X, ensure_finite=True, bounded=True)


_OBJECT = np.dtype(object)


def labels_of_one_kind(labels, what):
    """``labels`` (an array) as it is unless it is an object array mixing labels that do not compare (numbers and
    strings, None): then a one-line ``ValueError`` naming their kinds, where sorting them would raise NumPy's
    ``TypeError``. Only object arrays are looked at (one pass over their labels' types)."""
    if labels.dtype != _OBJECT or labels.size == 0:
        return labels
    kinds = {label_kind(v) for v in labels.ravel()}
    if len(kinds) > 1:
        raise ValueError(
            f"{what} mixes labels of kinds {', '.join(sorted(kinds))}; expected labels of one kind (all numbers, "
            "all strings or all booleans)."
        )
    return labels


def label_text(label):
    """A label as messages show it: a number in its shortest form (``-1``, ``0.5``), anything else as text."""
    return f"{label:g}" if isinstance(label, (float, np.floating)) else str(label)


def labels_text(labels):
    """Labels as messages show a set of them: ``{-1, 1}``."""
    return "{" + ", ".join(label_text(c) for c in labels) + "}"


def too_few_classes(estimator, classes):
    """The error of a classifier given fewer than 2 classes: ``... needs at least 2 classes; got 1 class: {yes}.``"""
    n = classes.shape[0]
    return ValueError(
        f"{type(estimator).__name__} needs at least 2 classes; got {n} class{'' if n == 1 else 'es'}: "
        f"{labels_text(classes)}."
    )


def label_kind(label):
    """How messages name a label's kind: "boolean", "string", "number", or its type's name."""
    if isinstance(label, (bool, np.bool_)):
        return "boolean"
    if isinstance(label, (str, np.str_)):
        return "string"
    return "number" if isinstance(label, numbers.Number) else type(label).__name__


def check_X_y(estimator, X, y, *, reset, y_numeric=False):
    """Validate ``X`` and ``y`` together (same length, finite, 1-D ``y``)."""
    if y is not None and fast_input(X, y):  # (no y: scikit-learn's message that y is required)
        check_n_features(estimator, X, reset)
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            what = "NaN" if np.isnan(y).any() else "infinity"
            raise ValueError(f"Input y contains {what}; expected finite targets.")
        return as_csr_float(X, ensure_finite=True, bounded=True), y
    from sklearn.utils.validation import validate_data

    if not y_numeric and (getattr(y, "dtype", None) == _OBJECT or isinstance(y, (list, tuple))):
        y = labels_of_one_kind(np.asarray(y), "y")  # labels (classifiers): one kind, before they are sorted
    if getattr(getattr(y, "dtype", None), "kind", "") == "c":
        raise ValueError(f"Complex data not supported: y has complex values (dtype {y.dtype}); expected real numbers.")
    if y_numeric and y is not None:
        y = _numeric_targets(y)
    check_feature_names(estimator, X, reset)
    X, y = validate_data(estimator, check_2d_real(X), y, reset=reset, y_numeric=y_numeric, **_ACCEPTED_X)
    return as_csr_float(X, ensure_finite=True, bounded=True), y


def _numeric_targets(y):
    """``y`` (regression targets) as it is, or strings and objects as float64; a one-line ``ValueError`` naming y
    when they are not numbers (NumPy's "could not convert string to float" did not)."""
    kind = getattr(getattr(y, "dtype", None), "kind", None)
    if kind is None and isinstance(y, (list, tuple)):
        y = np.asarray(y)
        kind = y.dtype.kind
    if kind is None or kind not in "USO":
        return y
    try:
        return np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"y must hold numbers (regression targets); got dtype {np.asarray(y).dtype}.") from None


def finite_scores(estimator, scores):
    """``scores`` (a learner's decision values or predictions) as they are when all are finite; else a one-line
    ``ValueError`` naming the first example whose score is NaN or infinite (finite features whose score
    overflows the model's weights, or a model that is not finite): never a silent NaN, never a label read from
    one. One vectorised sweep over the scores, O(n_samples x n_outputs)."""
    if not (math.isfinite(scores[0]) if scores.shape == (1,) else np.isfinite(scores).all()):
        bad = ~np.isfinite(scores)
        row = int(np.flatnonzero(bad.any(axis=1) if bad.ndim == 2 else bad)[0])
        value = np.asarray(scores)[row]
        value = value[~np.isfinite(value)][0] if np.ndim(value) else value
        why = (
            f"its score is {float(value)} (the features are too large for the model's weights, or the weights are "
            "not finite). Scale the features."
        )
        name = type(estimator).__name__
        raise row_error(
            ValueError(f"{name} cannot score example {row} of X: {why}"),
            row,
            f"{name} cannot score this example: {why}",
        )
    return scores


def refuse_complex(A, what, expected="real numbers"):
    """``A`` (an array or a sparse matrix) as it is; a one-line ``ValueError`` for complex values, whose imaginary
    parts NumPy's conversion to float64 would drop with only a warning."""
    if A.dtype.kind == "c":
        raise ValueError(f"{what} has complex values (dtype {A.dtype}); expected {expected}.")
    return A


def as_weights(sample_weight, what="sample_weight"):
    """``sample_weight`` as a float64 array (values unchecked); a one-line ``ValueError`` for complex weights (NumPy
    would drop their imaginary parts with a warning) and for values that are not numbers."""
    sw = refuse_complex(np.asarray(sample_weight), what, "real, non-negative weights")
    try:
        return np.asarray(sw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must hold numbers (one weight per example); got dtype {sw.dtype} ({exc}).") from None


def _finite_weights(sample_weight, n_samples):
    """``sample_weight`` (not None) as a finite, non-negative float64 array of length ``n_samples`` (a scalar:
    that weight for each), else a one-line ``ValueError``."""
    sw = as_weights(sample_weight)
    if sw.ndim == 0:
        sw = np.full(n_samples, float(sw))
    if sw.shape != (n_samples,):
        raise ValueError(f"sample_weight.shape == {sw.shape}, expected ({n_samples},)!")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity; expected finite non-negative weights.")
    if np.any(sw < 0):
        raise ValueError("Negative values in data passed to sample_weight; expected non-negative weights.")
    return sw


def score_weights(sample_weight, n_samples):
    """The weights of a score (accuracy, R^2) checked as those of learning: None, or finite, non-negative and not
    all 0 (scikit-learn's metrics take negative weights, and raise ``ZeroDivisionError`` when they sum to 0)."""
    if sample_weight is None:
        return None
    sw = _finite_weights(sample_weight, n_samples)
    if n_samples and not sw.any():
        raise ValueError("sample_weight is 0 for every example; expected a positive weight for at least one.")
    return sw


def all_weights_zero(estimator):
    """The error of a ``fit`` whose sample weights are all zero."""
    return ValueError(f"All sample weights are zero: {type(estimator).__name__}.fit has nothing to learn from.")


def check_sample_weight(sample_weight, n_samples):
    """``None`` -> ones; otherwise a finite, non-negative float64 array of length ``n_samples``, each weight below
    :data:`MAX_FEATURE_VALUE` (a weight multiplies the example's gradient: beyond it its square overflows)."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    sw = _finite_weights(sample_weight, n_samples)
    if np.any(sw >= MAX_FEATURE_VALUE):
        i = int(np.flatnonzero(sw >= MAX_FEATURE_VALUE)[0])
        expected = "expected weights below 2**500 (about 3.3e150), beyond which the squares of the weighted gradients overflow."
        raise row_error(
            ValueError(f"sample_weight[{i}] = {sw[i]:.4g}; {expected}"),
            i,
            f"the importance weight {sw[i]:.4g} is too large: {expected}",
        )
    return np.ascontiguousarray(sw)


_SLICE_ABOVE = 1 << 14  # elements: smaller arrays are checked whole
_PARAM_NAMES: dict = {}


def non_finite_state(model, features=None, _prefix=""):
    """The name of the first fitted attribute of ``model`` (or of a streamlearn object inside it, such as a
    pipeline's ``learner_``) holding NaN or infinity, or None. Constructor parameters are not state (an infinite
    ``theta`` is a valid setting).

    ``features`` (the sorted feature ids of the last batch, for a model that was finite before it and whose
    updates change its arrays at the batch's features only; see ``streamlearn.serve._core.row_local``): of a large
    array with one feature axis (of length ``n_features_in_``, or one more for the intercept), only those slices
    are checked, at O(nnz) instead of O(n_features) per batch.

    >>> import numpy as np
    >>> from streamlearn.linear_model import OGDClassifier
    >>> clf = OGDClassifier().partial_fit(np.eye(3), [1, -1, 1], classes=[-1, 1])
    >>> non_finite_state(clf) is None
    True
    >>> clf.coef_[0, 1] = np.nan
    >>> non_finite_state(clf)
    'coef_'
    """
    cls = type(model)
    if cls not in _PARAM_NAMES:  # sklearn finds them by inspecting __init__: once per class
        _PARAM_NAMES[cls] = frozenset(cls._get_param_names() if hasattr(cls, "_get_param_names") else ())
    params = _PARAM_NAMES[cls]
    d = getattr(model, "n_features_in_", None) if features is not None else None
    for key, value in vars(model).items():
        if key in params:
            continue
        if isinstance(value, np.ndarray):
            if value.dtype.kind != "f":
                continue
            axes = [a for a, n in enumerate(value.shape) if n in (d, d + 1)] if d and value.size > _SLICE_ABOVE else []
            if len(axes) == 1:
                ids = features if value.shape[axes[0]] == d else np.append(features, d)
                value = np.take(value, ids, axis=axes[0])
            # the sum is finite when every value is (it may overflow on finite ones: then the exact test)
            if not math.isfinite(value.sum()) and not np.isfinite(value).all():
                return _prefix + key
        elif isinstance(value, float):
            if not math.isfinite(value):
                return _prefix + key
        elif hasattr(value, "get_params") and hasattr(value, "__dict__"):
            found = non_finite_state(value, features if d else None, f"{_prefix}{key}.")
            if found is not None:
                return found
    return None
