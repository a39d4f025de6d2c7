"""The estimator contract shared by every online learner.

* ``fit(X, y)`` resets the model and makes ``max_iter`` passes (shuffled when ``shuffle=True``) through
  the same kernel as ``partial_fit``; ``partial_fit(X, y, classes=None, sample_weight=None)`` makes one
  pass in the given order and never reallocates the model.
* The first ``partial_fit`` (or ``fit``) fixes ``n_features_in_`` and ``classes_``; later calls with
  another number of features raise ``ValueError``.
* Labels are mapped once: binary problems to {-1, +1} (``classes_[1]`` is +1), K > 2 classes to K
  one-vs-rest columns.
* ``partial_fit_scores`` is ``partial_fit`` that also returns every example's decision value under the
  model *before* that example's update (what progressive validation needs), at no extra cost.
* Dense and sparse input are accepted; both become CSR float64 once, at the boundary.

Subclasses provide ``_parameter_constraints``, ``_allocate(n_features, n_outputs, X)``, ``_kernel_pass(X,
targets, sample_weight, out_scores)`` and ``_progressive_loss`` (the loss name reported by progressive
validation).
"""

import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from . import _validation
from ._estimator import BaseEstimator, ClassifierMixin, PartialFitMixin, RegressorMixin, available_if, check_is_fitted
from ._kernels.linear import dense_linear_scores, linear_scores
from ._typing import ArrayLike, FloatArray, MatrixLike
from .persist import PersistMixin

if TYPE_CHECKING:
    from .preprocessing import DictHasher

__all__ = [
    "BaseOnline",
    "OnlineClassifierMixin",
    "OnlineRegressorMixin",
    "BaseOnlineLinear",
    "LogisticProbaMixin",
    "ClassifierPredictionMixin",
    "DictRowMixin",
    "DictPredictMixin",
]


class DictPredictMixin:
    """``predict_one(x)`` (and ``predict_proba_one(x)`` where there are probabilities) on dict rows (river style),
    hashed as :class:`DictRowMixin` hashes them: what the batch learners have (they learn from whole data sets, not
    row by row). A model fitted on hashed rows without a hashing specification hashes with the bits of its width.

    >>> from streamlearn.linear_model import DualCoordinateDescentSVC
    >>> from streamlearn.preprocessing import DictHasher
    >>> rows = [{"country": "FR", "visits": 3}, {"country": "DE", "visits": 1}] * 10
    >>> svm = DualCoordinateDescentSVC().fit(DictHasher(bits=10).transform(rows), [1, 0] * 10)
    >>> int(svm.predict_one({"country": "FR", "visits": 2})), svm.input_spec_["bits"]
    (1, 10)
    """

    # provided by the estimator classes this mixin is combined with
    _is_started: Callable[[], bool]
    predict: Callable[[Any], Any]

    def predict_one(self, x: Mapping[str, Any]) -> Any:
        """The prediction (label or value) for one dict row ``x``."""
        return self.predict(self._one_row(x))[0]

    @available_if(lambda self: hasattr(self, "predict_proba"))
    def predict_proba_one(self, x: Mapping[str, Any]) -> dict[Any, float]:
        """The class probabilities of one dict row ``x``, as ``{label: probability}`` in the order of
        ``classes_`` (river's ``predict_proba_one``); only for models with ``predict_proba`` (the logistic loss).

        >>> from streamlearn.linear_model import OGDClassifier
        >>> clf = OGDClassifier()
        >>> for x, y in [({"country": "FR", "device": "tv"}, "buy"), ({"country": "DE", "device": "tv"}, "skip")] * 20:
        ...     _ = clf.learn_one(x, y, classes=["buy", "skip"])
        >>> {label: round(p, 2) for label, p in clf.predict_proba_one({"country": "FR"}).items()}
        {'buy': 0.74, 'skip': 0.26}
        """
        proba = self.predict_proba(self._one_row(x))[0]  # type: ignore[attr-defined]
        classes = self.classes_  # type: ignore[attr-defined]
        return {label.item() if isinstance(label, np.generic) else label: float(p) for label, p in zip(classes, proba)}

    def predict_many(self, X: Any) -> np.ndarray:
        """The predictions of a chunk of rows: a sequence of dicts, a pandas DataFrame or an Arrow table, hashed
        as ``predict_one`` hashes a row (a model trained by ``streamlearn train`` on a CSV or Parquet file reads
        a DataFrame of that file's columns as the file: same buckets, same predictions)."""
        return self.predict(self._rows(X, "predict_many"))

    @available_if(lambda self: hasattr(self, "predict_proba"))
    def predict_proba_many(self, X: Any) -> FloatArray:
        """``predict_proba`` of a chunk of rows (dicts, a DataFrame or an Arrow table) hashed as by
        ``predict_many``: shape ``(n_rows, n_classes)``, columns in the order of ``classes_``."""
        return self.predict_proba(self._rows(X, "predict_proba_many"))  # type: ignore[attr-defined]

    def _one_row(self, x):
        """``x`` hashed as the model hashes dict rows, once the model is fitted (else ``NotFittedError``)."""
        if not self._is_started():  # before _row_hasher records input_spec_, which reads as fitted
            check_is_fitted(self, "t_")
        return self._row_hasher(None).transform_one(x)

    def _rows(self, X, method, hasher=None, fitted=True):
        """The chunk ``X`` hashed as the model hashes dict rows (``fitted``: once the model is fitted)."""
        if isinstance(X, Mapping):
            raise TypeError(
                f"{type(self).__name__}.{method} takes a sequence of dict rows, a pandas DataFrame or an Arrow "
                f"table; for one dict row use {method.replace('many', 'one')}."
            )
        if fitted and not self._is_started():
            check_is_fitted(self, "t_")
        return self._row_hasher(hasher).transform(X)

    def _row_hasher(self, hasher):
        spec = getattr(self, "input_spec_", None)
        cached = _ROW_HASHERS.get(self)
        if cached is not None and cached[0] is spec:
            return _same_hashing(self, hasher, cached[1])
        from .preprocessing import DictHasher

        if spec is None:
            if self._is_started():
                n = int(self.n_features_in_)
                if n & (n - 1) or hasher is not None and hasher.n_features != n:
                    raise ValueError(
                        f"{type(self).__name__} was trained on {n} features without a hashing "
                        "specification; learn_one/predict_one hash dict rows into 2**bits columns."
                    )
                if hasher is None:
                    hasher = DictHasher(bits=n.bit_length() - 1)
            hasher = DictHasher() if hasher is None else hasher
            hasher.fit()
            self.input_spec_ = spec = {
                "format": "csv",
                "bits": int(hasher.bits),
                "interactions": list(hasher.quadratic) + list(hasher.cubic),
                "ignore": list(hasher.ignore_namespaces),
                "keep": list(hasher.keep_namespaces),
                # every option that changes the buckets, so that a copy or a loaded model hashes as this one
                "ignore_columns": sorted(hasher._ignore),
                "options": {
                    "namespaces": _groups_from_map(hasher._ns),  # (a group given as one column name: its text)
                    "categorical": sorted(hasher._categorical),
                },
            }
            _ROW_HASHERS[self] = (spec, hasher)
            return hasher
        if spec.get("format") not in ("csv", "parquet") or spec.get("bits") is None:
            raise ValueError(
                f"{type(self).__name__} was trained on {spec.get('format')} data; learn_one and "
                "predict_one hash dict rows as the CSV/Parquet readers do."
            )
        opts = spec.get("options") or {}
        terms = list(spec.get("interactions") or [])
        recorded = DictHasher(
            bits=int(spec["bits"]),
            categorical=tuple(opts.get("categorical", ())),
            namespaces=_namespace_groups(opts.get("namespaces")),
            ignore=tuple(spec.get("ignore_columns") or ()),
            quadratic=[t for t in terms if len(t) == 2],
            cubic=[t for t in terms if len(t) == 3],
            ignore_namespaces=list(spec.get("ignore") or []),
            keep_namespaces=list(spec.get("keep") or []),
        )
        recorded.fit()
        _ROW_HASHERS[self] = (spec, recorded)
        return _same_hashing(self, hasher, recorded)


class DictRowMixin(DictPredictMixin):
    """``learn_one(x, y)`` / ``predict_one(x)`` on dict rows (river style), hashed by
    :class:`streamlearn.preprocessing.DictHasher` into the buckets the CSV and Parquet readers use.

    The hashing options come from the model's ``input_spec_`` (a model trained by ``streamlearn train`` on a
    CSV file predicts dicts with that file's bits, namespaces and categorical columns), else from
    ``hasher`` on the first ``learn_one`` call (default ``DictHasher(bits=18)``), and are then recorded in
    ``input_spec_`` (a copy or a loaded model hashes as the model does); a ``hasher`` given on a later call
    must hash the same way, else it is an error. Each call hashes one row (a row whose keys come in an order seen
    before takes :meth:`DictHasher.transform_one`'s shortcut) and runs one ``partial_fit`` or ``predict``: several
    times the per-row cost of ``DictHasher().transform`` plus ``partial_fit`` on chunks of 1,000 rows (the
    one-example-per-call benchmark compares both calls with river's); prefer chunks when throughput matters.

    >>> from streamlearn.linear_model import FTRLProximalClassifier
    >>> clf = FTRLProximalClassifier()
    >>> for x, y in [({"country": "FR", "device": "tv"}, 1), ({"country": "DE", "device": "tv"}, 0)] * 20:
    ...     _ = clf.learn_one(x, y)
    >>> int(clf.predict_one({"country": "FR", "device": "phone"})), clf.input_spec_["bits"]
    (1, 18)
    """

    # provided by the estimator classes this mixin is combined with (BaseOnline and its subclasses)
    _is_regressor: bool
    partial_fit: Callable[..., Any]

    def learn_one(
        self,
        x: Mapping[str, Any],
        y: Any,
        *,
        sample_weight: float | None = None,
        classes: ArrayLike | None = None,
        hasher: "DictHasher | None" = None,
    ) -> Self:
        """Learn from one dict row ``x`` with target ``y`` (classifiers: ``classes`` is needed on the first
        call unless the labels are 0/1, -1/+1 or booleans; a stream starting with label 1 is taken as 0/1
        until a -1 comes before any 0). Returns ``self``."""
        X = self._row_hasher(hasher).transform_one(x)
        sw = None if sample_weight is None else np.asarray([sample_weight])  # checked by partial_fit
        return self._learn_rows(X, np.asarray([y]), sw, classes, "learn_one")

    def learn_many(
        self,
        X: Any,
        y: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        classes: ArrayLike | None = None,
        hasher: "DictHasher | None" = None,
    ) -> Self:
        """Learn from a chunk of rows (a sequence of dicts, a pandas DataFrame or an Arrow table) with targets
        ``y``, hashed as ``learn_one`` hashes a row: the model of ``learn_one`` on each row in turn, in one
        compiled pass. Labels as for ``learn_one`` (0/1, -1/+1 or booleans need no ``classes`` on the first
        call). Returns ``self``.

        >>> from streamlearn.linear_model import FTRLProximalClassifier
        >>> rows = [{"country": "FR", "visits": 3}, {"country": "DE", "visits": 1}] * 50
        >>> clf = FTRLProximalClassifier().learn_many(rows, [1, 0] * 50)
        >>> clf.predict_many(rows[:3]).tolist(), clf.t_
        ([1, 0, 1], 100)
        """
        Xh = self._rows(X, "learn_many", hasher, fitted=False)
        return self._learn_rows(Xh, np.asarray(y), sample_weight, classes, "learn_many")

    def _learn_rows(self, X, y, sample_weight, classes, method):
        """``partial_fit`` of hashed rows, ``classes`` guessed on the first call of a classifier when not given:
        a first label 1 (classes guessed [0, 1]) may start a -1/+1 stream: 1 is +1 in both conventions, so while
        every label learnt is 1, a -1 switches classes_ to [-1, 1] exactly (any other training clears the flag:
        _pass)."""
        only_ones = False
        if classes is None and not self._is_regressor and y.ndim == 1 and y.shape[0]:
            if not self._is_started():
                classes = _default_classes(y, f"{type(self).__name__}.{method}")
                only_ones = _numbers_in(y, (1,))
            elif getattr(self, "_classes_guessed_from_one", False):  # (looked at only while every label is 1)
                only_ones = _numbers_in(y, (1,))
                if not only_ones and _numbers_in(y, (-1, 1)):
                    self.classes_ = np.array([-1, 1])
        self.partial_fit(X, y, classes=classes, sample_weight=sample_weight)
        if only_ones:
            self._classes_guessed_from_one = True
        return self


def _hashing(hasher):
    """What decides the buckets of a (fitted) DictHasher, each option in one canonical order."""
    return {
        "bits": int(hasher.bits),
        "namespaces": _groups_from_map(dict(sorted(hasher._ns.items()))),
        "categorical": sorted(hasher._categorical),
        "ignore": sorted(hasher._ignore),
        "quadratic": sorted(hasher.quadratic),
        "cubic": sorted(hasher.cubic),
        "ignore_namespaces": sorted(hasher.ignore_namespaces),
        "keep_namespaces": sorted(hasher.keep_namespaces),
    }


def _hashing_text(hashing):
    """``_hashing``'s options in one line, those left empty out."""
    return ", ".join(f"{k}={v!r}" for k, v in hashing.items() if v or k == "bits")


def _same_hashing(model, hasher, recorded):
    """``recorded`` (the model's row hasher), after checking that ``hasher`` (given to ``learn_one``, or None)
    hashes as it does: a different one would silently give other buckets than those the model learnt."""
    if hasher is not None and hasher is not recorded:
        hasher.fit()
        given, learnt = _hashing(hasher), _hashing(recorded)
        if given != learnt:
            raise ValueError(
                f"hasher= hashes dict rows with {_hashing_text(given)}; this {type(model).__name__} learnt them "
                f"with {_hashing_text(learnt)} (its input_spec_): pass that hasher, or none."
            )
    return recorded


_ROW_HASHERS: weakref.WeakKeyDictionary = (
    weakref.WeakKeyDictionary()
)  # estimator -> (its input_spec_, the DictHasher built from it)


def _groups_from_map(mapping):
    """``{column: namespace}`` -> ``{namespace: [columns]}``."""
    groups: dict = {}
    for col, ns in mapping.items():
        groups.setdefault(ns, []).append(col)
    return groups


def _namespace_groups(namespaces):
    """``{column: namespace}`` (a spec's form) or ``{namespace: [columns]}`` -> ``{namespace: [columns]}``."""
    if not namespaces:
        return {}
    if all(isinstance(v, str) for v in namespaces.values()):
        groups = {}
        for col, ns in namespaces.items():
            groups.setdefault(ns, []).append(col)
        return groups
    return {ns: [cols] if isinstance(cols, str) else list(cols) for ns, cols in namespaces.items()}


def _classes_array(classes):
    """``classes=`` as a 1-D array of labels: any collection of them (list, array, set, dict keys, ...); a bare
    string or number is an error."""
    scalar = np.ndim(classes) == 0 and (isinstance(classes, np.ndarray) or not hasattr(classes, "__iter__"))
    if isinstance(classes, (str, bytes)) or scalar:
        got = f"the string {classes!r}" if isinstance(classes, (str, bytes)) else repr(classes)
        raise ValueError(f"classes must hold every label (e.g. classes=[-1, 1]); got {got}.")
    if isinstance(classes, (set, frozenset)) or not hasattr(classes, "__len__") or np.ndim(classes) == 0:
        classes = list(classes)  # sets, dict views, generators: np.asarray would make one object label
    classes = np.asarray(classes)
    if classes.dtype.kind in "fc" and np.isnan(classes).any():
        # NaN equals no target: it would be a class no example can teach, and a label predict could return
        raise ValueError(f"classes must not contain NaN (no label equals it); got classes={classes.tolist()}.")
    return _validation.labels_of_one_kind(classes, "classes")


def _is_number(label):
    return isinstance(label, (int, float, np.number)) and not isinstance(label, (bool, np.bool_))


def _numbers_in(y, values):
    """Whether every label of ``y`` (an array) is a number among ``values``."""
    if y.dtype.kind not in "iuf":
        return False
    hit = y == values[0]
    for v in values[1:]:
        hit |= y == v
    return bool(hit.all())


def _default_classes(y, what):
    """The classes a first ``learn_one`` / ``learn_many`` call (``what``) without ``classes`` takes from its labels
    ``y``: booleans, 0/1 (a chunk of 1s alone too), -1/+1; else a one-line error naming the labels."""
    if y.dtype == np.bool_:
        return np.array([False, True])
    if _numbers_in(y, (0, 1)):
        return np.array([0, 1])
    if _numbers_in(y, (-1, 1)):
        return np.array([-1, 1])
    labels = np.unique(y) if y.dtype.kind in "iufUSb" else y
    shown = (
        f"label {_validation.label_text(y[0])}"
        if y.shape[0] == 1
        else f"labels {_validation.labels_text(labels[:5])}" + (" and more" if len(labels) > 5 else "")
    )
    raise ValueError(
        f"{what} needs classes= on its first call (the model needs every label up front, unless they are 0/1, "
        f"-1/+1 or booleans); got {shown}."
    )


class BaseOnline(PartialFitMixin, DictRowMixin, PersistMixin, BaseEstimator):
    """The base of every online estimator: ``fit``, ``partial_fit``, ``partial_fit_scores``, saving.

    A concrete learner combines it with :class:`OnlineClassifierMixin` or :class:`OnlineRegressorMixin` and
    supplies ``_kernel_pass`` (one call of its numba kernel over a chunk). The state defaults are those of a
    linear model ``w . x + b``: ``coef_`` (K, d) for classifiers (K = 1 when binary), ``(d,)`` for regressors,
    and ``intercept_`` (K,); learners with other state override ``_allocate`` and ``_decision_function``.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.base import BaseOnline
    >>> from streamlearn.linear_model import OGDClassifier
    >>> X, y = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([1, -1, 1])
    >>> clf = OGDClassifier()
    >>> isinstance(clf, BaseOnline)
    True
    >>> scores = clf.partial_fit_scores(X, y, classes=[-1, 1])  # each row scored before it is learnt
    >>> scores.shape, clf.t_, clf.coef_.shape, clf.n_features_in_
    ((3,), 3, (1, 2), 2)
    """

    _parameter_constraints: dict = {}
    #: parameters read only when the model is allocated (an initial value, a sketch's kind): changed after
    #: learning began they would have no effect, so ``partial_fit`` refuses them until ``fit`` starts again
    _start_params: tuple[str, ...] = ()
    #: set by OnlineRegressorMixin: one output, ``coef_`` of shape (n_features,), squared loss
    _is_regressor = False
    # provided by OnlineClassifierMixin / OnlineRegressorMixin and by the concrete learner's parameters
    _check_X_y: Callable[..., Any]
    _first_call: Callable[..., Any]
    _check_classes_again: Callable[..., Any]
    _targets: Callable[..., Any]
    max_iter: int
    shuffle: bool
    random_state: Any

    def _allocate(self, n_features, n_outputs, X):
        if self._is_regressor:
            self.coef_ = np.zeros(n_features, dtype=np.float64)
        else:
            self.coef_ = np.zeros((n_outputs, n_features), dtype=np.float64)
        self.intercept_ = np.zeros(n_outputs, dtype=np.float64)

    def _coef_2d(self):
        return self.coef_.reshape(1, -1) if self.coef_.ndim == 1 else self.coef_

    def _intercept_1d(self):
        return self.intercept_

    @property
    def _progressive_loss(self):
        """Name of the loss (see streamlearn.losses) that progressive validation reports for this learner:
        its ``loss`` parameter when it has one, else squared loss; learners with a fixed loss set a class
        attribute instead."""
        return getattr(self, "loss", "squared")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- public API -------------------------------------------------------------------------------
    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Reset the model and make ``max_iter`` passes over ``(X, y)``.

        Each pass visits the rows in a fresh random order when ``shuffle=True`` (seeded by
        ``random_state``), in the given order otherwise. Returns ``self``.
        """
        _validation.validate_params(self)
        self._reset()
        try:
            X, y = self._check_X_y(X, y, reset=True)
            sw = _validation.check_sample_weight(sample_weight, X.shape[0])
            if sample_weight is not None and not np.any(sw > 0):
                raise _validation.all_weights_zero(self)
            self._start(X, y, classes=None)
        except BaseException:
            self._reset()  # as a refused first partial_fit: no n_features_in_ of data it did not learn
            raise
        targets = self._targets(y)
        rng = _validation.check_rng(self.random_state)
        for _ in range(self.max_iter):
            if self.shuffle:
                order = rng.permutation(X.shape[0])
                self._pass(X[order], targets[order], sw[order])
            else:
                self._pass(X, targets, sw)
        self.n_iter_ = int(self.max_iter)
        return self

    def partial_fit_scores(
        self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None, sample_weight: ArrayLike | None = None
    ) -> FloatArray:
        """Like ``partial_fit``, and return each example's decision value *before* its own update.

        These are exactly the scores progressive validation needs: ``predict`` applied to them gives
        the online predictions. Shape ``(n_samples,)``, or ``(n_samples, n_classes)`` for K > 2 classes.
        """
        _validation.validate_params(self)
        first = not self._is_started()
        try:
            X, y = self._check_X_y(X, y, reset=first)
            sw = _validation.check_sample_weight(sample_weight, X.shape[0])  # refused before the model is allocated
            if first:
                self._start(X, y, classes=classes)
            else:
                self._check_classes_again(classes)
                self._check_start_params()
        except BaseException:
            if first:  # nothing of a refused first batch is kept (its n_features_in_ made a file that would not load)
                self._reset()
            raise
        scores = self._pass(X, self._targets(y), sw)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def _decision_function(self, X):
        if "t_" not in self.__dict__:  # (t_ is set by learning: fitted without the look at every attribute)
            check_is_fitted(self)
        coef, intercept = self._coef_2d(), self._intercept_1d()
        # a dense array is scored where it is, without the CSR copy (two thirds of a one-row predict); a value
        # the sweep stops at (NaN, infinity, too large) takes the CSR path, whose check refuses it in one line
        out = np.empty((X.shape[0], coef.shape[0]), dtype=np.float64) if _validation.plain_dense(self, X) else None
        if out is None or not dense_linear_scores(X, coef, intercept, out, _validation.MAX_FEATURE_VALUE):
            X = _validation.check_X(self, X, reset=False)
            out = np.empty((X.shape[0], coef.shape[0]), dtype=np.float64)
            linear_scores(X.indptr, X.indices, X.data, coef, intercept, out)
        return _validation.finite_scores(self, out[:, 0] if out.shape[1] == 1 else out)

    @property
    def nnz_weights(self) -> int:
        """Number of non-zero weights (coefficients and intercepts)."""
        check_is_fitted(self)
        return int(np.count_nonzero(self._coef_2d()) + np.count_nonzero(self._intercept_1d()))

    # -- machinery --------------------------------------------------------------------------------
    def _start(self, X, y, classes):
        """The model's state for a first batch (``_first_call``), and the ``_start_params`` it was made with."""
        self._first_call(X, y, classes=classes)
        self._started_with_ = {p: getattr(self, p) for p in self._start_params}

    def _check_start_params(self):
        """ValueError naming the first of ``_start_params`` changed since learning began (a model saved before
        they were recorded is not checked)."""
        for p, started in getattr(self, "_started_with_", {}).items():
            now = getattr(self, p)
            if now != started:
                raise ValueError(
                    f"{p}={now!r} differs from the setting this {type(self).__name__} was trained with "
                    f"({started!r}), which only sets how it starts; call fit to start again with it."
                )

    def _is_started(self):
        return hasattr(self, "t_")

    def _reset(self):
        for attr in list(vars(self)):
            if attr.endswith("_") and not attr.startswith("__") or attr.startswith("_state"):
                delattr(self, attr)

    def _pass(self, X, targets, sw):
        self.__dict__.pop("_classes_guessed_from_one", None)  # learn_one's guess holds until other labels are learnt
        out = np.empty((X.shape[0], targets.shape[1]), dtype=np.float64)
        if X.shape[0]:
            self._kernel_pass(X, targets, sw, out)
        return out

    def _raise_diverged(self, row, what, verb="Lower", state=None):
        """FloatingPointError: the score of example ``row`` (from 0) of this batch (None: one of them), or its
        update, is not finite, or, with ``state``, learning the batch left the fitted attribute ``state`` not
        finite."""
        if state is not None:
            found = f"learning this batch made its {state} not finite"
        else:
            where = "an example of this batch" if row is None else f"example {row} of this batch"
            found = f"the score of {where}, or its update, is not finite"
        name, advice = type(self).__name__, f"{verb} {what} or scale the features."
        exc = FloatingPointError(f"{name} diverged: {found}. {advice}")
        if row is None:
            exc.row = None
            raise exc
        raise _validation.row_error(
            exc, row, f"{name} diverged: the score of this example, or its update, is not finite. {advice}"
        )


def _integral_labels(y):
    """True when ``y`` is a 1-D array of finite integer-valued numbers (always valid classification labels)."""
    if not isinstance(y, np.ndarray) or y.ndim != 1:
        return False
    if y.dtype.kind in "iu":
        return True
    return y.dtype.kind == "f" and bool(np.all(np.isfinite(y))) and bool(np.all(y == np.trunc(y)))


class ClassifierPredictionMixin:
    """``decision_function``, ``predict``, ``scores_to_labels`` and ``score`` of every linear classifier, online or
    batch, on top of its ``_decision_function(X)`` and ``classes_``.

    >>> import numpy as np
    >>> from streamlearn.linear_model import PassiveAggressiveClassifier
    >>> clf = PassiveAggressiveClassifier().partial_fit(np.eye(2), ["spam", "ham"], classes=["ham", "spam"])
    >>> z = clf.decision_function(np.eye(2))  # > 0 is classes_[1]
    >>> clf.scores_to_labels(z).tolist(), clf.predict(np.eye(2)).tolist()
    (['spam', 'ham'], ['spam', 'ham'])
    """

    classes_: np.ndarray
    _decision_function: Callable[[Any], Any]

    # accuracy with the weights checked, for the batch classifiers too (built on scikit-learn's mixin)
    score = ClassifierMixin.score

    def decision_function(self, X: MatrixLike) -> FloatArray:
        """Scores ``w . x + b``: shape ``(n_samples,)`` (binary; > 0 means ``classes_[1]``) or
        ``(n_samples, n_classes)`` (one-vs-rest)."""
        return self._decision_function(X)

    def predict(self, X: MatrixLike) -> np.ndarray:
        """Class labels: ``classes_[1]`` where the score is >= 0 (binary), else the arg-max class."""
        return self.scores_to_labels(self._decision_function(X))

    def scores_to_labels(self, scores: ArrayLike) -> np.ndarray:
        """Map decision values (e.g. from ``partial_fit_scores``) to class labels; ties go to ``classes_[1]``."""
        scores = np.asarray(scores)
        if scores.ndim == 1:
            return self.classes_[(scores >= 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]


class OnlineClassifierMixin(ClassifierPredictionMixin, ClassifierMixin):
    """Classification side of the contract: ``classes_``, label mapping, ``predict``.

    >>> import numpy as np
    >>> from streamlearn.base import OnlineClassifierMixin
    >>> from streamlearn.linear_model import Perceptron
    >>> X, y = np.eye(3), np.array(["a", "b", "c"])
    >>> clf = Perceptron().partial_fit(X, y, classes=["a", "b", "c"])
    >>> isinstance(clf, OnlineClassifierMixin), clf.classes_.tolist(), clf.coef_.shape  # one-vs-rest rows
    (True, ['a', 'b', 'c'], (3, 3))
    """

    def _check_X_y(self, X, y, *, reset):
        X, y = _validation.check_X_y(self, X, y, reset=reset)
        # later calls: _targets() refuses any label outside classes_, which covers this check. Integer-valued
        # numeric 1-D labels are what sklearn's type_of_target calls binary/multiclass: skip its 0.1 ms then
        if reset and not _integral_labels(y):
            from sklearn.utils.multiclass import check_classification_targets

            check_classification_targets(y)
        return X, y

    def _first_call(self, X, y, classes):
        if classes is None:
            # fit() uses y's classes; partial_fit() needs them on its first call (as in scikit-learn)
            if not self._called_from_fit():
                raise ValueError(
                    f"classes must be passed on the first call to {type(self).__name__}.partial_fit: the "
                    "model needs every label up front (e.g. classes=[-1, 1])."
                )
            classes = np.unique(y)
        classes = np.unique(_classes_array(classes))
        if classes.shape[0] < 2:
            raise _validation.too_few_classes(self, classes)
        if classes.dtype.kind in "iuf" and y.dtype.kind in "iuf":  # numbers: a search, not two sorts
            idx = np.searchsorted(classes, y)
            unknown = np.any(idx >= classes.shape[0]) or np.any(classes[np.minimum(idx, classes.shape[0] - 1)] != y)
        else:
            unknown = np.setdiff1d(np.unique(y), classes).size > 0
        if unknown:
            unseen = np.setdiff1d(np.unique(y), classes)
            raise ValueError(f"y contains labels {unseen.tolist()} that are not in classes={classes.tolist()}.")
        self.classes_ = classes
        n_out = 1 if classes.shape[0] == 2 else classes.shape[0]
        self.t_ = 0
        self._allocate(X.shape[1], n_out, X)

    def _called_from_fit(self):
        return getattr(self, "_in_fit", False)

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        self._in_fit = True
        try:
            return super().fit(X, y, sample_weight=sample_weight)  # type: ignore[misc]  # BaseOnline.fit
        finally:
            del self._in_fit

    def _check_classes_again(self, classes):
        if classes is not None and not np.array_equal(np.unique(classes := _classes_array(classes)), self.classes_):
            raise ValueError(
                f"classes={classes.tolist()!r} is not the same as on the first call to partial_fit: "
                f"{self.classes_.tolist()!r}."
            )

    def _targets(self, y):
        classes = self.classes_
        if y.shape[0] == 1:  # one example (learn_one, a server's single request): scalar steps, no array passes
            i = int(classes.searchsorted(y[0]))
            if i < classes.shape[0] and classes[i] == y[0]:
                if classes.shape[0] == 2:
                    return np.full((1, 1), 1.0 if i == 1 else -1.0)
                one = np.full((1, classes.shape[0]), -1.0)
                one[0, i] = 1.0
                return one
        idx = np.searchsorted(classes, y)
        if np.any(idx >= classes.shape[0]) or np.any(classes[np.minimum(idx, len(classes) - 1)] != y):
            bad = np.setdiff1d(np.unique(y), classes)
            raise ValueError(f"y contains labels {bad.tolist()} that are not in classes_={classes.tolist()}.")
        if classes.shape[0] == 2:
            return np.where(idx == 1, 1.0, -1.0).reshape(-1, 1)
        targets = -np.ones((y.shape[0], classes.shape[0]), dtype=np.float64)
        targets[np.arange(y.shape[0]), idx] = 1.0
        return targets


class LogisticProbaMixin:
    """``predict_proba`` / ``predict_log_proba`` for classifiers trained with ``loss="logistic"`` (and only
    them: the methods do not exist for other losses, so no uncalibrated "probability" is ever offered).

    >>> import numpy as np
    >>> from streamlearn.linear_model import OGDClassifier
    >>> X, y = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1, -1])
    >>> OGDClassifier().partial_fit(X, y, classes=[-1, 1]).predict_proba(X).shape
    (2, 2)
    >>> hasattr(OGDClassifier(loss="hinge").partial_fit(X, y, classes=[-1, 1]), "predict_proba")
    False
    """

    def _has_proba(self):
        return getattr(self, "loss", None) == "logistic"

    decision_function: Callable[[Any], Any]

    @available_if(_has_proba)
    def predict_proba(self, X: MatrixLike) -> FloatArray:
        """Class probabilities of the logistic model: sigmoid of the score (binary) or normalised
        one-vs-rest sigmoids (K > 2 classes)."""
        check_is_fitted(self)
        scores = self.decision_function(X)
        if scores.ndim == 1:
            from scipy.special import expit

            # each class's sigmoid on its own (not 1 - p, which rounds to 0 where the probability is 1e-90),
            # equal to exp(predict_log_proba) to rounding
            return np.column_stack([expit(-scores), expit(scores)])
        return np.exp(_log_proba(scores))

    @available_if(_has_proba)
    def predict_log_proba(self, X: MatrixLike) -> FloatArray:
        """Logarithm of ``predict_proba``, computed from the scores (log-sigmoids): finite where a probability
        rounds to 0 (a score beyond about 37 in size), as the logarithm of the rounded probability is not."""
        check_is_fitted(self)
        return _log_proba(self.decision_function(X))


def _log_proba(scores):
    """The logarithms of the probabilities of :class:`LogisticProbaMixin` from the scores: log-sigmoids (stable at
    both ends), normalised in logs for K > 2 classes, so that a row whose sigmoids all round to 0 still ranks
    its classes as its scores do (not a uniform row, which disagreed with ``predict``)."""
    log_p = -np.logaddexp(0.0, -scores)  # log sigmoid(s)
    if scores.ndim == 1:
        return np.column_stack([-np.logaddexp(0.0, scores), log_p])  # log(1 - sigmoid(s)) = log sigmoid(-s)
    top = log_p.max(axis=1, keepdims=True)  # log_p - log(sum(exp(log_p))), without overflow or underflow
    return log_p - (top + np.log(np.exp(log_p - top).sum(axis=1, keepdims=True)))


class OnlineRegressorMixin(RegressorMixin):
    """Regression side of the contract: real targets, ``predict`` = decision value.

    >>> import numpy as np
    >>> from streamlearn.base import OnlineRegressorMixin
    >>> from streamlearn.linear_model import OGDRegressor
    >>> reg = OGDRegressor().partial_fit(np.array([[1.0], [2.0]]), np.array([0.5, 1.0]))
    >>> isinstance(reg, OnlineRegressorMixin), reg.predict([[1.0]]).shape
    (True, (1,))
    """

    _is_regressor = True
    _decision_function: Callable[[Any], Any]  # from BaseOnline

    def _check_X_y(self, X, y, *, reset):
        return _validation.check_X_y(self, X, y, reset=reset, y_numeric=True)

    def _first_call(self, X, y, classes):
        self.t_ = 0
        self._allocate(X.shape[1], 1, X)

    def _check_classes_again(self, classes):
        pass

    def _targets(self, y):
        return np.asarray(y, dtype=np.float64).reshape(-1, 1)

    def predict(self, X: MatrixLike) -> FloatArray:
        """Predicted targets ``w . x + b``."""
        return self._decision_function(X)

    def scores_to_labels(self, scores: ArrayLike) -> np.ndarray:
        return np.asarray(scores)


#: linear models ``w . x + b`` (the state defaults of :class:`BaseOnline`)
BaseOnlineLinear = BaseOnline
_BaseOnline = BaseOnline
