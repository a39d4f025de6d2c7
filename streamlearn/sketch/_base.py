"""Shared verbs of every sketch: ``partial_fit``, ``update``, ``merge``, ``sketch_``, ``n_seen_``,
``is_empty``, ``covariance_operator``, ``solve``; input checks at the boundary."""

import numbers
from typing import Self

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from .._kernels.fd import fd_woodbury_solve
from .._validation import as_csr_float, refuse_complex, validate_params
from .._typing import ArrayLike, FloatArray, MatrixLike
from ..persist import PersistMixin

#: Squared norms beyond this would overflow float64 once squared again (the FD kernels work on Gram
#: matrices); such input is refused with a message instead of producing inf / NaN.
MAX_SQUARED_NORM = 1e300


def check_rows(name, X):
    """Validate a chunk of rows once: CSR (canonical, float64) or dense C-contiguous float64, 2-D, finite.

    Dense input stays dense (a dense kernel takes it; converting a 20k x 5k matrix to CSR would triple
    its memory). Returns ``(X, squared_frobenius_norm)``.
    """
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"{name}: X must be 2-D (rows x features); got a sparse array of shape {X.shape}.")
        refuse_complex(X, f"{name}: X")
        X = as_csr_float(X)
        data = X.data
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below, in one line
            sq = float(data @ data) if data.size else 0.0
        if not np.isfinite(sq):
            bad = np.flatnonzero(~np.isfinite(data))
            if bad.size:
                row = int(np.searchsorted(X.indptr, bad[0], side="right") - 1)
                raise ValueError(f"{name}: X row {row} contains NaN or infinity; sketches need finite rows.")
            raise ValueError(
                f"{name}: the squared norm of X overflows float64 (entries up to "
                f"{np.abs(data).max():.3g}); rescale the rows."
            )
    else:
        try:
            X = np.asarray(X)
            X = X if X.dtype.kind == "c" else np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name}: X must be a numeric 2-D array or a scipy sparse matrix; could not "
                f"convert it to float64 ({exc})."
            ) from None
        refuse_complex(X, f"{name}: X")
        if X.ndim != 2:
            hint = " Use update(row) for a single row, or X.reshape(1, -1)." if X.ndim == 1 else ""
            raise ValueError(f"{name}: X must be 2-D (rows x features); got an array of shape {X.shape}.{hint}")
        X = np.ascontiguousarray(X)
        flat = X.ravel()
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below, in one line
            sq = float(flat @ flat) if flat.size else 0.0
        if not np.isfinite(sq):
            finite_rows = np.isfinite(X).all(axis=1)
            if not finite_rows.all():
                row = int(np.flatnonzero(~finite_rows)[0])
                raise ValueError(f"{name}: X row {row} contains NaN or infinity; sketches need finite rows.")
            raise ValueError(
                f"{name}: the squared norm of X overflows float64 (entries up to "
                f"{np.abs(X).max():.3g}); rescale the rows."
            )
    if sq > MAX_SQUARED_NORM:
        raise ValueError(
            f"{name}: the squared Frobenius norm of X is {sq:.3g}, above {MAX_SQUARED_NORM:g}; "
            "the sketch's Gram matrices would overflow float64. Rescale the rows."
        )
    return X, sq


class _BaseSketch(PersistMixin, BaseEstimator):
    """Common verbs; subclasses implement ``_allocate``, ``_fit_chunk``, ``_compute``, ``_merge_state``."""

    _parameter_constraints: dict = {}
    #: Smallest ``ell`` for which the algorithm is defined.
    _min_ell = 1

    # ------------------------------------------------------------------ state
    @property
    def n_seen_(self) -> int:
        """Number of rows sketched so far (read-only; merging adds the other sketch's count)."""
        return getattr(self, "_n_seen", 0)

    def is_empty(self) -> bool:
        """True while no row has been sketched."""
        return self.n_seen_ == 0

    def _is_allocated(self):
        return hasattr(self, "n_features_in_")

    def _touch(self):
        self._version = getattr(self, "_version", 0) + 1

    # ------------------------------------------------------------------ input
    def _check_params(self):
        validate_params(self)
        if self._is_allocated() and getattr(self, "_fitted_params", None) != self._state_params():
            raise ValueError(
                f"{type(self).__name__}: parameters changed after sketching started "
                f"({self._fitted_params} -> {self._state_params()}); create a new sketch "
                "(sklearn.base.clone(sketch)) instead."
            )

    def _state_params(self):
        return {
            k: v
            for k, v in self.get_params(deep=False).items()
            if not isinstance(v, (np.random.Generator, np.random.RandomState))
        }

    def _start(self, d):
        name = type(self).__name__
        if self.ell >= d:
            raise ValueError(
                f"{name}: ell={self.ell} must be smaller than the number of features of X "
                f"(d={d}); a sketch with ell >= d rows is no smaller than A^T A itself."
            )
        self.n_features_in_ = int(d)
        self._n_seen = 0
        self._version = 0
        self._cache_version = -1
        self._fitted_params = self._state_params()
        self._allocate(int(d))

    def _check_d(self, d, what="X"):
        if d != self.n_features_in_:
            raise ValueError(
                f"{what} has {d} features, but {type(self).__name__} was fitted with "
                f"{self.n_features_in_}. Keep the feature space fixed (pass n_features=... "
                "to the reader)."
            )

    # ------------------------------------------------------------------ verbs
    def partial_fit(self, X: MatrixLike, y: object = None) -> Self:
        """Sketch the rows of ``X`` (dense array or scipy sparse matrix, shape (n_rows, d)); returns self.

        ``y`` is ignored (present for pipeline compatibility). The first call fixes ``d``.
        """
        self._check_params()
        X, sq = check_rows(type(self).__name__, X)
        if not self._is_allocated():
            self._start(X.shape[1])
        else:
            self._check_d(X.shape[1])
        if X.shape[0] == 0:
            return self
        self._check_capacity(sq)
        self._fit_chunk(X)
        self._n_seen += int(X.shape[0])
        self._touch()
        return self

    def update(self, row: MatrixLike) -> Self:
        """Sketch one row (1-D array of length d, or a 1 x d sparse matrix); returns self."""
        if sp.issparse(row):
            if row.shape[0] != 1:
                raise ValueError(
                    f"{type(self).__name__}.update: expected one row (1 x d); got shape "
                    f"{row.shape}. Use partial_fit for several rows."
                )
            return self.partial_fit(row)
        row = np.asarray(row)
        if row.ndim != 1:
            raise ValueError(
                f"{type(self).__name__}.update: expected a 1-D row; got shape {row.shape}. "
                "Use partial_fit for several rows."
            )
        return self.partial_fit(row.reshape(1, -1))

    def _check_capacity(self, sq):
        pass

    def merge(self, other: Self) -> Self:
        """Fold ``other`` (a sketch of another stream, same class, parameters and d) into self; returns self.

        Afterwards ``self`` sketches the concatenation of both streams and ``n_seen_`` is the sum.
        ``other`` is not modified.
        """
        name = type(self).__name__
        if type(other) is not type(self):
            raise TypeError(
                f"{name}.merge: cannot merge a {type(other).__name__} into a {name}; both sketches "
                "must be of the same kind."
            )
        self._check_params()
        other._check_params()
        mine, theirs = self._state_params(), other._state_params()
        for key in self._merge_keys():
            if mine[key] != theirs[key]:
                raise ValueError(
                    f"{name}.merge: {key}={theirs[key]!r} in the other sketch, {mine[key]!r} in "
                    "this one; only sketches with the same parameters can be merged."
                )
        if not other._is_allocated():
            return self
        if not self._is_allocated():
            before = dict(self.__dict__)
            self._start(other.n_features_in_)
            try:
                self._merge_state(other)
            except BaseException:  # a refused merge (RP's shared seed) leaves an empty sketch as it was
                self.__dict__.clear()
                self.__dict__.update(before)
                raise
        else:
            self._check_d(other.n_features_in_, what="The other sketch")
            self._merge_state(other)
        self._n_seen += other.n_seen_
        self._touch()
        return self

    def _merge_keys(self):
        return ["ell"]

    # ------------------------------------------------------------------ results
    def _result(self):
        """``(sketch (ell, d), alpha, gram (ell, ell))``, computed once per state."""
        if not self._is_allocated():
            raise NotFittedError(
                f"This {type(self).__name__} instance has not seen any data yet. Call "
                "'partial_fit' with some rows first."
            )
        if getattr(self, "_cache_version", -1) != self._version:
            sketch, alpha, gram = self._compute()
            sketch.setflags(write=False)
            self._cache_sketch = sketch
            self._cache_gram = np.ascontiguousarray(gram)
            self._cache_alpha = float(alpha)
            self._cache_version = self._version
        return self._cache_sketch, self._cache_alpha, self._cache_gram

    @property
    def sketch_(self) -> FloatArray:
        """The sketch B, shape (ell, d), read-only: ``B^T B`` approximates ``A^T A``."""
        return self._result()[0]

    def _alpha(self):
        return self._result()[1]

    def covariance_operator(self) -> LinearOperator:
        """``B^T B + alpha I`` as a ``scipy.sparse.linalg.LinearOperator`` (d x d, symmetric), never formed.

        alpha is ``alpha_`` for RobustFrequentDirections and 0 for the other sketches.
        """
        B, alpha, _ = self._result()
        d = B.shape[1]

        def matvec(v):
            return B.T @ (B @ v) + alpha * v

        return LinearOperator((d, d), matvec=matvec, rmatvec=matvec, matmat=matvec, rmatmat=matvec, dtype=np.float64)

    def solve(self, v: ArrayLike, extra_alpha: float = 0.0) -> FloatArray:
        """``(B^T B + (alpha + extra_alpha) I)^{-1} v`` by the Woodbury identity, O(ell d + ell^3) per column.

        Parameters
        ----------
        v : array-like of shape (d,) or (d, k)
            Right-hand side(s).
        extra_alpha : float >= 0, default=0
            Added to the diagonal (e.g. alpha_0 of an online Newton step). The total must be > 0: B^T B
            alone has rank <= ell < d.

        Returns
        -------
        ndarray of the shape of ``v``
        """
        name = type(self).__name__
        B, alpha, gram = self._result()
        if (
            not isinstance(extra_alpha, numbers.Real)
            or isinstance(extra_alpha, bool)
            or not np.isfinite(extra_alpha)
            or extra_alpha < 0
        ):
            raise ValueError(f"{name}.solve: extra_alpha must be a finite float >= 0; got {extra_alpha!r}.")
        total = alpha + float(extra_alpha)
        if total <= 0.0:
            raise ValueError(
                f"{name}.solve: B^T B + alpha I is singular (alpha = {alpha:g}, and B^T B has rank "
                f"<= ell < d); pass extra_alpha > 0."
            )
        v = np.asarray(v)
        refuse_complex(v, f"{name}.solve: v")
        try:
            v = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}.solve: v must hold numbers; got dtype {v.dtype} ({exc}).") from None
        d = B.shape[1]
        if v.ndim not in (1, 2) or v.shape[0] != d:
            raise ValueError(f"{name}.solve: v must have shape ({d},) or ({d}, k); got {v.shape}.")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name}.solve: v contains NaN or infinity.")
        cols = v.reshape(d, -1)
        out = np.empty_like(cols)
        work = np.empty(d)
        for j in range(cols.shape[1]):
            fd_woodbury_solve(B, gram, B.shape[0], total, np.ascontiguousarray(cols[:, j]), work)
            out[:, j] = work
        return out.reshape(v.shape)

    def _after_load(self):
        if self._is_allocated():
            self._fitted_params = self._state_params()
