"""Online MaxAbsScaler and StandardScaler (statistics updated row by row, never looking ahead)."""

from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._kernels import scaling as _k
from .._params import keyword_init
from .._validation import (
    as_csr_float,
    check_2d_real,
    check_feature_names,
    check_finite,
    check_n_features,
    fast_input,
)
from .._typing import FloatArray, MatrixLike
from ..persist import PersistMixin

__all__ = ["MaxAbsScaler", "StandardScaler"]

_NO_COLS = np.empty(0, dtype=np.intp)
_EVERY_ROW = np.empty(0, dtype=np.float64)


def _learn_mask(learn, n):
    """The kernels' ``learn``: one weight per row (0: transformed, not added to the statistics), or empty."""
    if learn is None:
        return _EVERY_ROW
    learn = np.asarray(learn, dtype=np.float64)
    if learn.ndim == 0:
        learn = np.full(n, float(learn))
    # a weight array of the wrong length is the learner's error, after which the pipeline restores the scaler
    return _EVERY_ROW if learn.shape != (n,) or learn.all() else np.ascontiguousarray(learn)


def _snapshot(obj):
    """The attributes of ``obj``, arrays copied (None for no object)."""
    if obj is None:
        return None
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(obj).items()}


def _restore(obj, saved):
    """Put back the attributes of ``_snapshot``: arrays in place, the rest reassigned, new ones deleted."""
    if obj is None:
        return
    for k, v in saved.items():
        cur = vars(obj).get(k)
        if isinstance(v, np.ndarray) and isinstance(cur, np.ndarray) and cur.shape == v.shape:
            cur[...] = v
        else:
            setattr(obj, k, v)
    for k in [k for k in vars(obj) if k not in saved]:
        delattr(obj, k)


class _OnlineScaler(PersistMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Validation and the row-by-row kernel call shared by the scalers (subclasses: ``_allocate(d)``,
    ``_run(rows)`` with the kernel's row arguments ``indptr, cols, data, write, out``, ``_transform_values(...)``).
    One output column per input column, of the same name (``get_feature_names_out``, ``set_output``)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.requires_fit = True
        return tags

    #: whether the scaler's statistics square the values (then those of 2**500 or more in size are refused)
    _bounded = False

    def _check(self, X, reset):
        if fast_input(X, None):  # a float CSR matrix or NumPy array: scikit-learn's checks only for the names
            check_n_features(self, X, reset)
            X = X if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        else:
            check_feature_names(self, X, reset)
            X = validate_data(
                self,
                check_2d_real(X),
                reset=reset,
                accept_sparse=("csr", "csc", "coo"),
                dtype=np.float64,
                ensure_all_finite=False,  # refused below in one line naming the row and column
                accept_large_sparse=True,
            )
        if sp.issparse(X):
            return as_csr_float(X, ensure_finite=True, bounded=self._bounded)
        return np.ascontiguousarray(check_finite(X, bounded=self._bounded))

    def _stream(self, X, write, learn=None):
        """Transform each row with the statistics of the rows before it (when ``write``), then add it (unless
        its entry of ``learn``, e.g. the pipeline's sample weights, is 0)."""
        first = not hasattr(self, "n_samples_seen_")
        X = self._check(X, reset=first)
        if first:
            self.n_samples_seen_ = 0
            self._allocate(X.shape[1])
            self._first_input(X)
        if sp.issparse(X):
            out = X.copy() if write else X
            self._run(
                dict(
                    indptr=X.indptr,
                    cols=X.indices,
                    data=X.data,
                    write=write,
                    out=out.data if write else np.empty(0),
                    learn=_learn_mask(learn, X.shape[0]),
                )
            )
            return out
        n, d = X.shape
        flat = X.reshape(-1)
        out = np.empty_like(flat) if write else np.empty(0)
        indptr = np.arange(0, n * d + 1, d, dtype=np.int64) if d else np.zeros(n + 1, np.int64)
        self._run(dict(indptr=indptr, cols=_NO_COLS, data=flat, write=write, out=out, learn=_learn_mask(learn, n)))
        return out.reshape(n, d) if write else X

    def _first_input(self, X):
        """Record what the transform depends on in the first ``X`` (checked): nothing here."""

    def fit(self, X: MatrixLike, y: Any = None) -> Self:
        """Reset, then learn the statistics of ``X``. Returns ``self``."""
        for attr in [a for a in vars(self) if a.endswith("_") or a.startswith("_state")]:
            delattr(self, attr)
        return self.partial_fit(X)

    def partial_fit(self, X: MatrixLike, y: Any = None) -> Self:
        """Add the rows of ``X`` to the statistics. Returns ``self``."""
        self._stream(X, write=False)
        return self

    def partial_fit_transform(self, X: MatrixLike, y: Any = None) -> Any:
        """Transform each row of ``X`` with the statistics of the rows seen before it, then add it: the
        no-look-ahead transform of a stream (chunking does not change the result). A value that overflows once
        scaled is a one-line ``ValueError``, and the statistics are left as they were before the call."""
        saved = _snapshot(self)
        try:
            return self._refuse_overflow(self._stream(X, write=True))
        except ValueError:
            _restore(self, saved)
            raise

    def transform(self, X: MatrixLike) -> Any:
        """Scale ``X`` with the current statistics (they do not change)."""
        check_is_fitted(self)
        X = self._check(X, reset=False)
        scale, offset = self._scale_offset(sp.issparse(X))
        scale = np.where(scale > 0, scale, np.inf)  # a feature without a scale gives 0, as in the stream
        with np.errstate(over="ignore"):  # a value too large for its column's scale is refused just below
            if sp.issparse(X):
                X = X.copy()
                X.data /= scale[X.indices]
            else:
                X = (X - offset) / scale if offset is not None else X / scale
        return self._refuse_overflow(X)

    def _refuse_overflow(self, Xt):
        """``Xt`` (scaled, from finite input) when every value is finite; else a one-line ``ValueError`` naming
        the first value that overflowed once scaled: far beyond its column's scale, never a silent infinity."""
        data = Xt.data if sp.issparse(Xt) else Xt.reshape(-1)
        if np.isfinite(data).all():
            return Xt
        p = int(np.flatnonzero(~np.isfinite(data))[0])
        if sp.issparse(Xt):
            row, col = int(np.searchsorted(Xt.indptr, p, side="right")) - 1, int(Xt.indices[p])
        else:
            row, col = divmod(p, Xt.shape[1])
        raise ValueError(
            f"{type(self).__name__}: the value in row {row}, column {col} overflows once divided by its column's "
            "scale (from the values seen before it, far smaller). Scale the features before, or fit the scaler on "
            "data that holds such values."
        )


class MaxAbsScaler(_OnlineScaler):
    """Divide every feature by the largest absolute value seen so far; sparse input stays sparse.

    Statistics are learnt online. Used in a stream (``partial_fit_transform``, or inside
    :class:`~streamlearn.preprocessing.StreamPipeline`), each row is divided by the maxima of the rows before
    it, and only then added to them. A feature without a scale yet (never seen non-zero) gives 0: it reaches
    the learner once earlier rows say how large it is, never at its raw size.

    Attributes
    ----------
    max_abs_ : ndarray of shape (n_features,)
    scale_ : ndarray of shape (n_features,)
        ``max_abs_`` with zeros replaced by 1.
    n_samples_seen_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.preprocessing import MaxAbsScaler
    >>> X = np.array([[1.0, -200.0], [4.0, 100.0], [2.0, 400.0]])
    >>> MaxAbsScaler().partial_fit_transform(X)  # each row scaled by the rows before it
    array([[0. , 0. ],
           [4. , 0.5],
           [0.5, 2. ]])
    >>> MaxAbsScaler().fit(X).transform(X[:1])
    array([[ 0.25, -0.5 ]])
    """

    def __init__(self):
        pass

    def _allocate(self, d):
        self.max_abs_ = np.zeros(d, dtype=np.float64)

    def _run(self, rows):
        self.n_samples_seen_ += int(
            _k.maxabs_transform_update(**rows, n_cols=self.max_abs_.shape[0], max_abs=self.max_abs_)
        )

    @property
    def scale_(self) -> FloatArray:
        check_is_fitted(self, "max_abs_")
        return np.where(self.max_abs_ > 0, self.max_abs_, 1.0)

    def _scale_offset(self, sparse):
        return self.max_abs_, None


class StandardScaler(_OnlineScaler):
    """Standardise features online: ``(x - mean) / std`` with running means and variances.

    Sparse input is never centred (that would fill it in): it is only divided by the standard deviation
    (computed with its zeros). So that a row is scaled the same whatever its container, a scaler whose first
    rows were sparse centres no rows, and one that centred its first (dense) rows refuses sparse ones.
    Statistics are exact running moments, per column: sums of the deviations from the column's first non-zero
    value and of their squares (the shifted-data sums of Chan, Golub & LeVeque,
    "Algorithms for Computing the Sample Variance: Analysis and Recommendations", The American Statistician,
    1983), so that columns far from 0 lose no precision; O(nnz) per row. Used in a stream
    (``partial_fit_transform``, or inside :class:`~streamlearn.preprocessing.StreamPipeline`), each row is
    scaled by the statistics of the rows before it, and only then added to them. A feature without spread
    yet (standard deviation 0) gives 0, in the stream and in ``transform``.

    Parameters
    ----------
    with_mean : bool, default=True
        Centre the rows, when the first rows fitted are dense (see above).
    with_std : bool, default=True
        Divide by the standard deviation (1 for a constant column).

    Attributes
    ----------
    mean_, var_, scale_ : ndarray of shape (n_features,)
    n_samples_seen_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.preprocessing import StandardScaler
    >>> X = np.array([[1.0, 10.0], [3.0, 10.0], [5.0, 40.0]])
    >>> sc = StandardScaler().fit(X)
    >>> sc.mean_, sc.var_
    (array([ 3., 20.]), array([  2.66666667, 200.        ]))
    >>> StandardScaler().partial_fit_transform(X)  # row 3 scaled by the mean and std of rows 1-2
    array([[0., 0.],
           [0., 0.],
           [3., 0.]])
    """

    _parameter_constraints: dict = {"with_mean": ["boolean"], "with_std": ["boolean"]}
    _bounded = True  # sums of squared deviations

    __init__ = keyword_init(with_mean=True, with_std=True)

    def _allocate(self, d):
        self._state_shift = np.zeros(d, dtype=np.float64)
        self._state_count = np.zeros(d, dtype=np.int64)
        self._state_s1 = np.zeros(d, dtype=np.float64)
        self._state_s2 = np.zeros(d, dtype=np.float64)

    def _sums(self):
        """The per-column state the kernels read and update: first values, counts, sums and sums of squares of
        the deviations from the first values."""
        return dict(shift=self._state_shift, count=self._state_count, s1=self._state_s1, s2=self._state_s2)

    def _first_input(self, X):
        self._state_sparse = bool(sp.issparse(X))

    def _centres(self, sparse):
        """Whether rows are centred: with ``with_mean``, when the first rows were dense (a scaler saved before
        this was recorded: when these rows are dense)."""
        first = getattr(self, "_state_sparse", None)
        return bool(self.with_mean) and not (sparse if first is None else first)

    def _check(self, X, reset):
        X = super()._check(X, reset)
        if sp.issparse(X) and self.with_mean and getattr(self, "_state_sparse", None) is False:
            raise ValueError(
                "X is sparse, but this StandardScaler centres its rows (with_mean=True, first fitted on dense rows) "
                "and sparse rows are never centred (that would fill them in): pass X dense, as the rows it was "
                "fitted on, or use StandardScaler(with_mean=False)."
            )
        return X

    def _run(self, rows):
        center = self._centres(sparse=rows["cols"] is not _NO_COLS)
        self.n_samples_seen_ = int(
            _k.standard_transform_update(
                **rows,
                n_cols=self._state_shift.shape[0],
                **self._sums(),
                n_seen=self.n_samples_seen_,
                center=center,
                with_std=bool(self.with_std),
            )
        )

    def _moments(self):
        check_is_fitted(self, "n_samples_seen_")
        d = self._state_shift.shape[0]
        mean, var = np.empty(d), np.empty(d)
        _k.standard_moments(**self._sums(), n=self.n_samples_seen_, mean=mean, var=var)
        return mean, var

    @property
    def mean_(self) -> FloatArray:
        return self._moments()[0]

    @property
    def var_(self) -> FloatArray:
        return self._moments()[1]

    @property
    def scale_(self) -> FloatArray:
        var = self._moments()[1]
        return np.where(var > 0, np.sqrt(var), 1.0) if self.with_std else np.ones_like(var)

    def _scale_offset(self, sparse):
        mean, var = self._moments()
        return (np.sqrt(var) if self.with_std else np.ones_like(var)), (mean if self._centres(sparse) else None)
