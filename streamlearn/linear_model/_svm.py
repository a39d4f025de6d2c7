"""Batch linear SVMs: dual coordinate descent in memory, and block minimization for data larger than memory.

Algorithms §3.1 (Hsieh et al. ICML 2008) and 3.2 (Yu, Hsieh, Chang, Lin KDD 2010). These are batch
estimators (``fit`` is the solver; no ``partial_fit``): the dual variables belong to the examples, so
there is no meaningful way to continue on unseen chunks. ``fit_stream(chunks)`` trains from an iterable of
``(X, y)`` chunks (e.g. :func:`streamlearn.datasets.iter_svmlight`), which is how ``streamlearn train``
calls them.
"""

import math
import os
import warnings
from collections.abc import Iterable
from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .. import _validation
from .._kernels.dcd import dcd_solve
from .._kernels.linear import linear_scores
from .._typing import ArrayLike, FloatArray, MatrixLike
from .._validation import Interval, Options
from .._params import keyword_init
from ..base import ClassifierPredictionMixin, DictPredictMixin
from ..persist import PersistMixin
from ._blocks import BlockStore
from .._validation import chunk_args

__all__ = ["DualCoordinateDescentSVC", "BlockMinimizationSVC"]

_LOSSES = ("hinge", "squared_hinge")


class _Path:
    """Constraint: a str or os.PathLike."""

    def is_satisfied_by(self, value):
        return isinstance(value, (str, os.PathLike))

    def __str__(self):
        return "a str or os.PathLike"


def _primal_terms(scores, targets, sw, loss):
    """Sum over examples of ``s_i xi_i`` per output (hinge or squared hinge)."""
    xi = np.maximum(0.0, 1.0 - targets * scores)
    if loss == "squared_hinge":
        xi = xi * xi
    return (sw[:, None] * xi).sum(axis=0)


class _BatchLinearSVC(ClassifierPredictionMixin, DictPredictMixin, PersistMixin, ClassifierMixin, BaseEstimator):
    """Shared pieces: validation, label mapping, prediction (``predict_one`` too), objectives."""

    _progressive_loss = "hinge"

    def _is_started(self):
        return hasattr(self, "coef_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- labels ------------------------------------------------------------------------------------
    def _set_classes(self, labels):
        classes = np.unique(np.asarray(labels))
        if classes.shape[0] < 2:
            raise _validation.too_few_classes(self, classes)
        self.classes_ = classes
        return 1 if classes.shape[0] == 2 else classes.shape[0]

    def _targets(self, y):
        idx = np.minimum(np.searchsorted(self.classes_, y), self.classes_.shape[0] - 1)
        if np.any(self.classes_[idx] != y):
            bad = np.setdiff1d(np.unique(y), self.classes_)
            raise ValueError(f"y contains labels {bad.tolist()} that are not in classes_={self.classes_.tolist()}.")
        return self._targets_from_index(idx)

    def _targets_from_index(self, idx):
        if self.classes_.shape[0] == 2:
            return np.where(idx == 1, 1.0, -1.0).reshape(-1, 1)
        targets = -np.ones((idx.shape[0], self.classes_.shape[0]), dtype=np.float64)
        targets[np.arange(idx.shape[0]), idx] = 1.0
        return targets

    def _bias_value(self):
        return float(self.intercept_scaling) if self.fit_intercept else 0.0

    def _seed(self, rng):
        return np.uint64(rng.integers(0, 2**63, dtype=np.int64))

    def _dcd_solve(self, X, targets, sw, alpha, coef, wb, info, *, max_iter, rng):
        """Dual coordinate descent on ``(X, targets, sw)`` from ``(alpha, coef, wb)`` (updated in place) with
        this SVM's loss, C, tol and shrinking; ``max_iter`` passes at most; per-output results in ``info``."""
        dcd_solve(
            **chunk_args(X, targets, sw),
            alpha=alpha,
            coef=coef,
            wb=wb,
            bias_value=self._bias_value(),
            C=float(self.C),
            l2_loss=self.loss == "squared_hinge",
            tol=float(self.tol),
            max_iter=int(max_iter),
            shrinking=bool(self.shrinking),
            seed=self._seed(rng),
            out_info=info,
        )

    def _finish(self, coef, wb, n_iter, gap):
        self.coef_ = coef
        self.intercept_ = wb * self._bias_value()
        self.n_iter_ = int(n_iter)
        if gap > self.tol:
            warnings.warn(
                f"{type(self).__name__} did not converge in max_iter={self.max_iter} iterations: the "
                f"projected-gradient range is {gap:.3g} > tol={self.tol}. Increase max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )

    # -- prediction --------------------------------------------------------------------------------
    def _decision_function(self, X):
        check_is_fitted(self)
        X = _validation.check_X(self, X, reset=False)
        out = np.empty((X.shape[0], self.coef_.shape[0]), dtype=np.float64)
        linear_scores(X.indptr, X.indices, X.data, self.coef_, self.intercept_, out)
        return _validation.finite_scores(self, out[:, 0] if out.shape[1] == 1 else out)

    @property
    def nnz_weights(self) -> int:
        """Number of non-zero weights (coefficients and intercepts)."""
        check_is_fitted(self)
        return int(np.count_nonzero(self.coef_) + np.count_nonzero(self.intercept_))

    def primal_objective(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> FloatArray:
        """The primal objective ``1/2 (||w||^2 + w_b^2) + C sum_i s_i xi_i`` of the fitted model on ``(X, y)``,
        per output (one-vs-rest problem): ``w_b = intercept_ / intercept_scaling`` is the weight of the
        constant feature, regularised as in LIBLINEAR (and scikit-learn's ``LinearSVC``); ``xi`` is the
        hinge (``loss="hinge"``) or squared hinge."""
        check_is_fitted(self)
        X, y = _validation.check_X_y(self, X, y, reset=False)
        sw = _validation.check_sample_weight(sample_weight, X.shape[0])
        scores = self._decision_function(X).reshape(X.shape[0], -1)
        return self._objective_from(scores, self._targets(y), sw)

    def _objective_from(self, scores, targets, sw):
        bv = self._bias_value()
        wb = self.intercept_ / bv if bv else np.zeros_like(self.intercept_)
        reg = 0.5 * (np.einsum("kd,kd->k", self.coef_, self.coef_) + wb * wb)
        return reg + self.C * _primal_terms(scores, targets, sw, self.loss)

    def _check_chunk(self, X, y, sample_weight, first):
        X, y = _validation.check_X_y(self, X, y, reset=first)
        check_classification_targets(y)
        sw = _validation.check_sample_weight(sample_weight, X.shape[0])
        return X, y, sw


_SVC_PARAMS = {
    "C": [Interval(float, 0, None, closed="neither")],
    "loss": [Options(*_LOSSES)],
    "tol": [Interval(float, 0, None, closed="neither")],
    "max_iter": [Interval(int, 1, None, closed="left")],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [Interval(float, 0, None, closed="neither")],
    "shrinking": ["boolean"],
    "random_state": ["random_state"],
}
#: the defaults both SVMs share (their constraints: ``_SVC_PARAMS``): the loss term, the intercept and shrinking
_SVC_LOSS_DEFAULTS = {"C": 1.0, "loss": "hinge"}
_SVC_DEFAULTS = {"fit_intercept": True, "intercept_scaling": 1.0, "shrinking": True}


class DualCoordinateDescentSVC(_BatchLinearSVC):
    """Linear SVM (L1 or L2 loss) by dual coordinate descent, as LIBLINEAR / scikit-learn's ``LinearSVC``.

    Solves ``min_w 1/2 ||w||^2 + C sum_i s_i xi_i(w)`` (``xi`` the hinge or squared hinge, ``s`` the sample
    weights) through its dual, one coordinate ``alpha_i`` at a time (Hsieh et al. ICML 2008; Algorithms
    §3.1): each outer iteration visits the examples in a fresh random order, and the solver stops when
    the range of the projected gradient over an iteration is ``<= tol``. ``shrinking`` is LIBLINEAR's
    heuristic (bounded variables leave the active set; the full set is re-checked before stopping).
    With ``fit_intercept`` the bias is the weight of a constant feature ``intercept_scaling`` and is
    regularised, exactly as in LIBLINEAR, so the model and objective are comparable with ``LinearSVC`` at
    the same ``C``. Multi-class: one-vs-rest.

    A batch estimator: no ``partial_fit``. ``fit_stream`` accepts an iterable of ``(X, y)`` chunks and
    holds them all in memory; for data larger than memory use :class:`BlockMinimizationSVC`.

    Parameters
    ----------
    C : float > 0, default=1.0
        Weight of the loss term.
    loss : {"hinge", "squared_hinge"}, default="hinge"
        L1-loss (``alpha_i <= C s_i``) or L2-loss SVM (``D_ii = 1 / (2 C s_i)``, no upper bound).
    tol : float > 0, default=1e-4
        Stop when ``max PG - min PG <= tol`` over an outer iteration (``LinearSVC``'s default; LIBLINEAR's
        command line uses 0.1).
    max_iter : int >= 1, default=1000
        Maximum outer iterations; a ``ConvergenceWarning`` is issued when reached.
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` (a regularised bias).
    intercept_scaling : float > 0, default=1.0
        Value of the constant feature; larger values regularise the bias less.
    shrinking : bool, default=True
        Use LIBLINEAR's shrinking heuristic.
    random_state : int, Generator or None, default=None
        Seed of the permutations.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Outer iterations of the slowest one-vs-rest problem.
    objective_ : ndarray of shape (n_outputs,)
        Primal objective at the solution, per one-vs-rest problem.
    dual_objective_ : ndarray of shape (n_outputs,)
        Dual objective (maximisation form) at the solution; ``objective_ - dual_objective_`` is the
        duality gap, >= 0.
    train_loss_ : ndarray of shape (n_outputs,)
        Weighted mean training loss (hinge or squared hinge) at the solution, ``sum s_i xi_i / sum s_i``.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.linear_model import DualCoordinateDescentSVC
    >>> X, y, X_test, y_test = load_a9a()
    >>> svm = DualCoordinateDescentSVC(C=1.0, tol=0.1, random_state=0).fit(X, y)
    >>> print(f"{svm.score(X_test, y_test):.3f}")
    0.85...
    >>> gap = (svm.objective_ - svm.dual_objective_) / svm.objective_  # relative duality gap
    >>> bool(0 <= gap[0] < 1e-3)
    True
    """

    _parameter_constraints = dict(_SVC_PARAMS)

    __init__ = keyword_init(**_SVC_LOSS_DEFAULTS, tol=1e-4, max_iter=1000, **_SVC_DEFAULTS, random_state=None)

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Solve the SVM on ``(X, y)``; returns ``self``."""
        _validation.validate_params(self)
        X, y, sw = self._check_chunk(X, y, sample_weight, first=True)
        return self._solve(X, y, sw)

    def fit_stream(self, chunks: Iterable[tuple[Any, ...]], classes: Iterable[Any] | None = None) -> Self:
        """Solve on the concatenation of an iterable of ``(X, y)`` or ``(X, y, sample_weight)`` chunks.

        All chunks are held in memory (CSR); ``classes`` (optional) must then cover every label.
        """
        import scipy.sparse as sp

        _validation.validate_params(self)
        Xs, ys, sws = [], [], []
        for i, chunk in enumerate(chunks):
            X, y, sw = self._check_chunk(chunk[0], chunk[1], chunk[2] if len(chunk) > 2 else None, first=i == 0)
            Xs.append(X)
            ys.append(y)
            sws.append(sw)
        if not Xs:
            raise ValueError(f"{type(self).__name__}.fit_stream: the stream holds no examples.")
        X = sp.vstack(Xs, format="csr") if len(Xs) > 1 else Xs[0]
        y = np.concatenate(ys)
        if classes is not None:
            unseen = np.setdiff1d(np.unique(y), np.asarray(classes))
            if unseen.size:
                raise ValueError(f"y contains labels {unseen.tolist()} that are not in classes={list(classes)}.")
        return self._solve(_validation.as_csr_float(X), y, np.concatenate(sws))

    def _solve(self, X, y, sw):
        if not np.any(sw > 0):
            raise _validation.all_weights_zero(self)
        n_out = self._set_classes(y)
        targets = self._targets(y)
        n, d = X.shape
        alpha = np.zeros((n, n_out), dtype=np.float64)
        coef = np.zeros((n_out, d), dtype=np.float64)
        wb = np.zeros(n_out, dtype=np.float64)
        info = np.zeros((n_out, 4), dtype=np.float64)
        rng = _validation.check_rng(self.random_state)
        self._dcd_solve(X, targets, sw, alpha, coef, wb, info, max_iter=self.max_iter, rng=rng)
        self._finish(coef, wb, info[:, 0].max(), info[:, 3].max())
        scores = np.empty((n, n_out), dtype=np.float64)
        linear_scores(X.indptr, X.indices, X.data, self.coef_, self.intercept_, scores)
        self.objective_ = self._objective_from(scores, targets, sw)
        self.dual_objective_ = _dual(alpha, coef, wb, sw, self.C, self.loss)
        self.train_loss_ = _primal_terms(scores, targets, sw, self.loss) / sw.sum()
        return self


def _dual(alpha, coef, wb, sw, C, loss):
    """Dual objective in maximisation form, ``sum alpha - 1/2 ||w||^2 - 1/2 sum D_ii alpha_i^2``."""
    val = alpha.sum(axis=0) - 0.5 * (np.einsum("kd,kd->k", coef, coef) + wb * wb)
    if loss == "squared_hinge":
        pos = sw > 0
        val -= 0.5 * ((alpha[pos] ** 2) / (2.0 * C * sw[pos, None])).sum(axis=0)
    return val


class BlockMinimizationSVC(_BatchLinearSVC):
    """Linear SVM for data larger than memory: dual block minimization (Yu, Hsieh, Chang, Lin KDD 2010).

    The training data are split once, while streaming, into blocks of about ``block_mb`` MB (in-memory
    CSR size) stored as compressed binary files in a temporary directory (deleted after ``fit``). Each
    outer iteration then reads the blocks one at a time and runs dual coordinate descent
    (:class:`DualCoordinateDescentSVC`'s kernel, in a fresh random order, up to ``inner_max_iter`` passes
    or until the block's projected-gradient range is ``<= tol``) on that block's dual variables, keeping
    ``w = sum_i y_i alpha_i x_i`` exact (Algorithms §3.2). Memory holds ``w``, ``alpha`` (one float per
    example and output) and one block. The solver stops when the projected-gradient range over all
    blocks in an outer iteration (measured on each block's first pass) is ``<= tol``. It minimises the
    same objective as :class:`DualCoordinateDescentSVC` (same ``C``, loss, regularised bias). Examples of
    weight 0 are dropped when the blocks are written (they never enter the dual).

    After fitting, a final pass over the blocks computes ``objective_``; ``objective_ - dual_objective_``
    (the duality gap) certifies how far the model is from the optimum.

    Convergence: block-cyclic dual CD converges much more slowly than in-memory DCD's global random
    order when the blocks are alike (each block's pass fits ``w`` on its own and the dual mass then
    moves between blocks only slowly). Measured on a9a (``tests/linear_model/test_svm.py``,
    ``benchmarks/svm_speed.py``): with 2 blocks the hinge-loss objective is within 1e-3 of DCD's after
    about 100 outer iterations, more blocks need more; inner passes beyond the first help little. The
    projected-gradient criterion is strict, so ``max_iter`` usually ends the run: watch the duality gap.

    Parameters
    ----------
    C, loss, fit_intercept, intercept_scaling, shrinking, random_state
        As in :class:`DualCoordinateDescentSVC` (``shrinking`` applies within a block's inner passes).
    tol : float > 0, default=0.1
        Stop when the projected-gradient range over an outer iteration is ``<= tol`` (LIBLINEAR's
        command-line default for its dual solvers).
    max_iter : int >= 1, default=50
        Maximum outer iterations (each reads every block once); ``ConvergenceWarning`` when reached.
    inner_max_iter : int >= 1, default=3
        Maximum DCD passes over a block per visit (fewer if the block's projected-gradient range reaches
        ``tol``). The paper's trade-off: more inner work, fewer outer iterations (disk reads).
    block_mb : float in (0, 2**20], default=32.0
        Target size of a block in memory (CSR: 12 bytes per non-zero with int32 indices, 24 per row), in
        MiB; a block is cut at a row boundary (a single larger row makes a block of its own). Peak memory is
        about the process with its libraries (~220 MiB), plus one block, plus the reader's chunk while
        splitting, plus ``w`` (8 bytes per feature and output) and ``alpha`` (8 bytes per example and
        output): ``benchmarks/bm_memory.py`` measures it on a 2 GB file.
    cache_dir : str or None, default=None
        Directory in which the temporary block directory is created (None: the system temp dir).

    Attributes
    ----------
    coef_, intercept_, classes_, objective_, dual_objective_, train_loss_
        As in :class:`DualCoordinateDescentSVC`.
    n_iter_ : int
        Outer iterations made.
    n_blocks_ : int
        Number of blocks the data were split into.
    block_bytes_ : int
        Total size of the compressed block files.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.linear_model import BlockMinimizationSVC
    >>> X, y, X_test, y_test = load_a9a()
    >>> import warnings
    >>> from sklearn.exceptions import ConvergenceWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter ends the run (see Convergence)
    ...     svm = BlockMinimizationSVC(block_mb=2.0, max_iter=20, random_state=0).fit(X, y)
    >>> svm.n_blocks_, svm.n_iter_
    (3, 20)
    >>> print(f"{svm.score(X_test, y_test):.3f}")
    0.849
    >>> gap = (svm.objective_ - svm.dual_objective_) / svm.objective_  # relative duality gap
    >>> bool(gap[0] < 0.02)
    True
    """

    _parameter_constraints = {
        **_SVC_PARAMS,
        "inner_max_iter": [Interval(int, 1, None, closed="left")],
        "block_mb": [Interval(float, 0, 2**20, closed="right")],  # at most 1 TiB: buffers are sized from it
        "cache_dir": [_Path(), None],
    }

    __init__ = keyword_init(
        **_SVC_LOSS_DEFAULTS,
        tol=0.1,
        max_iter=50,
        inner_max_iter=3,
        block_mb=32.0,
        **_SVC_DEFAULTS,
        cache_dir=None,
        random_state=None,
    )

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Split ``(X, y)`` into on-disk blocks and solve; returns ``self``."""
        return self.fit_stream([(X, y, sample_weight)])

    def _block_store(self, n_features):
        """The temporary block store, in ``cache_dir``; a directory that cannot hold it is refused naming
        ``cache_dir`` (the error of ``tempfile.mkdtemp`` named a random subdirectory)."""
        try:
            return BlockStore(n_features, self.block_mb * 2**20, parent=self.cache_dir)
        except OSError as exc:
            raise ValueError(
                f"The 'cache_dir' parameter of {type(self).__name__} must be an existing, writable directory or "
                f"None. Got {self.cache_dir!r} instead ({exc.strerror or exc})."
            ) from None

    def fit_stream(self, chunks: Iterable[tuple[Any, ...]], classes: Iterable[Any] | None = None) -> Self:
        """Split an iterable of ``(X, y)`` or ``(X, y, sample_weight)`` chunks into on-disk blocks while
        reading it (one chunk in memory at a time), then solve. ``classes`` (optional) must cover every
        label. Returns ``self``. A stream that is refused (a bad chunk, no examples, a single class) leaves the
        model as it was before the call."""
        _validation.validate_params(self)
        fitted = {k: v for k, v in vars(self).items() if k.endswith("_") and not k.startswith("__")}
        for key in fitted:
            delattr(self, key)
        store = None
        try:
            # labels of any type are stored as integer codes in order of first appearance (the classes, and
            # so the codes' meaning, are known only at the end of the stream)
            codes: dict[Any, int] = {}
            for i, chunk in enumerate(chunks):
                X, y, sw = self._check_chunk(chunk[0], chunk[1], chunk[2] if len(chunk) > 2 else None, first=i == 0)
                if store is None:
                    store = self._block_store(X.shape[1])
                uniq, inverse = np.unique(y, return_inverse=True)
                y_codes = np.array([codes.setdefault(u, len(codes)) for u in uniq], dtype=np.float64)[inverse]
                keep = sw > 0
                if not keep.all():
                    X, y_codes, sw = X[keep], y_codes[keep], sw[keep]
                store.add(X, y_codes, sw)
            if store is None:
                raise ValueError(f"{type(self).__name__}.fit_stream: the stream holds no examples.")
            store.close()
            if store.n_rows == 0:
                raise _validation.all_weights_zero(self)
            by_code = np.array(list(codes))
            labels = np.unique(by_code)
            if classes is not None:
                unseen = np.setdiff1d(labels, np.asarray(classes))
                if unseen.size:
                    raise ValueError(f"y contains labels {unseen.tolist()} that are not in classes={list(classes)}.")
                labels = np.asarray(classes)
            self._set_classes(labels)
            self._solve(store, np.searchsorted(self.classes_, by_code))
        except BaseException:  # half a fit (n_features_in_, classes_ without coef_) would pass for a fitted model
            for key in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, key)
            self.__dict__.update(fitted)
            raise
        finally:
            if store is not None:
                store.cleanup()
        return self

    def _solve(self, store, code_to_class):
        n_out = 1 if self.classes_.shape[0] == 2 else self.classes_.shape[0]
        d = store.n_features
        alpha = np.zeros((store.n_rows, n_out), dtype=np.float64)
        coef = np.zeros((n_out, d), dtype=np.float64)
        wb = np.zeros(n_out, dtype=np.float64)
        info = np.zeros((n_out, 4), dtype=np.float64)
        rng = _validation.check_rng(self.random_state)
        bv = self._bias_value()
        gap = math.inf
        outer = 0
        for outer in range(1, self.max_iter + 1):  # noqa: B007 (outer is read after the loop)
            pg_max, pg_min = -math.inf, math.inf
            for j, (_, n_rows, first) in enumerate(store.blocks):
                X, y, sw = store.load(j)
                targets = self._targets_from_index(code_to_class[y.astype(np.intp)])
                self._dcd_solve(
                    X, targets, sw, alpha[first : first + n_rows], coef, wb, info, max_iter=self.inner_max_iter, rng=rng
                )
                pg_max = max(pg_max, info[:, 1].max())
                pg_min = min(pg_min, info[:, 2].min())
                del X, y, sw, targets  # before the next block is read
            gap = pg_max - pg_min
            if gap <= self.tol:
                break
        self._finish(coef, wb, outer, gap)
        self.n_blocks_ = len(store.blocks)
        self.block_bytes_ = int(store.compressed_bytes)
        loss_sum = np.zeros(n_out)
        sw_all = np.zeros(store.n_rows)
        for j, (_, n_rows, first) in enumerate(store.blocks):
            X, y, sw = store.load(j)
            scores = np.empty((X.shape[0], n_out), dtype=np.float64)
            linear_scores(X.indptr, X.indices, X.data, self.coef_, self.intercept_, scores)
            targets = self._targets_from_index(code_to_class[y.astype(np.intp)])
            loss_sum += _primal_terms(scores, targets, sw, self.loss)
            sw_all[first : first + n_rows] = sw
            del X, y, sw  # before the next block is read
        wbv = self.intercept_ / bv if bv else np.zeros(n_out)
        self.objective_ = self.C * loss_sum + 0.5 * (np.einsum("kd,kd->k", self.coef_, self.coef_) + wbv * wbv)
        self.train_loss_ = loss_sum / sw_all.sum()
        self.dual_objective_ = _dual(alpha, coef, wb, sw_all, self.C, self.loss)
