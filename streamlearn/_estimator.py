"""scikit-learn's estimator API without importing scikit-learn.

``import sklearn.base`` runs scikit-learn's package ``__init__``, which imports most of ``sklearn.utils``,
scipy's array-API layer, joblib and narwhals: a quarter to a third of a second of CPU time, paid by every
``streamlearn train`` before it reads a line. The estimators only need the small contract scikit-learn's
tools rely on, so it lives here, and scikit-learn is imported only by the methods that hand work to it
(``score``, ``__sklearn_tags__``, ``__repr__``) or when an error has to be one of its exception classes:

* ``get_params`` / ``set_params`` (nested ``a__b`` keys included) from the ``__init__`` signature, as
  :class:`sklearn.base.BaseEstimator` does, so :func:`sklearn.base.clone`, ``Pipeline`` and ``GridSearchCV``
  treat the estimators as their own;
* ``__sklearn_tags__`` (scikit-learn's ``Tags``), which ``sklearn.utils.get_tags``, ``is_classifier`` and
  the estimator checks read, and ``_estimator_type``, which :func:`is_classifier` here reads without them;
* ``__repr__``: scikit-learn's own pretty printer (only the parameters that differ from their defaults);
* ``score``: accuracy (classifiers) and R^2 (regressors) from ``sklearn.metrics``;
* :func:`check_is_fitted` raising ``sklearn.exceptions.NotFittedError`` and :func:`available_if`.

Not provided: the metadata-routing requests (``set_fit_request`` ...: pass ``sample_weight`` to ``fit``
through a meta-estimator with routing disabled, scikit-learn's default) and the HTML representation in
notebooks (the text representation is shown instead). ``check_estimator`` warns that the estimators do not
inherit from ``sklearn.base.BaseEstimator`` and then runs every check.

>>> from streamlearn.linear_model import FTRLProximalClassifier
>>> clf = FTRLProximalClassifier(alpha=0.5)
>>> clf.get_params()["alpha"], clf.set_params(l1=0.0).l1, clf
(0.5, 0.0, FTRLProximalClassifier(alpha=0.5, l1=0.0))
>>> is_classifier(clf), is_regressor(clf)
(True, False)
"""

from __future__ import annotations

import inspect
from collections import defaultdict
from collections.abc import Callable
from functools import update_wrapper, wraps
from types import MethodType
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from ._typing import ArrayLike, MatrixLike

__all__ = [
    "BaseEstimator",
    "ClassifierMixin",
    "PartialFitMixin",
    "RegressorMixin",
    "TransformerMixin",
    "available_if",
    "check_is_fitted",
    "is_classifier",
    "is_regressor",
    "own_params",
]


def own_params(estimator: Any) -> dict[str, Any]:
    """``estimator.get_params(deep=False)`` for any estimator in scikit-learn's convention, its class's parameter
    names looked up once (scikit-learn's ``get_params`` reads the signature of ``__init__`` at every call).

    >>> from streamlearn.preprocessing import StandardScaler
    >>> own_params(StandardScaler(with_mean=False))
    {'with_mean': False, 'with_std': True}
    """
    cls = type(estimator)
    names = _PARAM_NAMES.get(cls)
    if names is None:
        names = _PARAM_NAMES[cls] = list(cls._get_param_names())
    return {name: getattr(estimator, name) for name in names}


class BaseEstimator:
    """``get_params``, ``set_params``, ``__repr__`` and ``__sklearn_tags__`` as in
    :class:`sklearn.base.BaseEstimator`; the parameters are the arguments of ``__init__`` (no ``*args``),
    each stored unchanged under its own name."""

    #: "classifier", "regressor" or None; the mixins set it and ``__sklearn_tags__`` reports it
    _estimator_type: str | None = None

    @classmethod
    def _get_param_names(cls):
        names = _PARAM_NAMES.get(cls)
        if names is None:
            init = cls.__init__
            if init is object.__init__:
                names = []
            else:
                params = [
                    p
                    for p in inspect.signature(init).parameters.values()
                    if p.name != "self" and p.kind != p.VAR_KEYWORD
                ]
                if any(p.kind == p.VAR_POSITIONAL for p in params):
                    raise RuntimeError(
                        f"{cls.__name__}.__init__ takes *args; an estimator names every parameter in its signature."
                    )
                names = sorted(p.name for p in params)
            _PARAM_NAMES[cls] = names
        return list(names)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The parameters of this estimator (``deep=True``: and of the estimators among them, as
        ``name__parameter``)."""
        out: dict[str, Any] = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params: Any) -> Self:
        """Set parameters (``name__parameter`` reaches into a parameter that is itself an estimator).
        Returns ``self``."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested: defaultdict[str, dict[str, Any]] = defaultdict(dict)
        for key, value in params.items():
            key, delim, sub_key = key.partition("__")
            if key not in valid:
                raise ValueError(
                    f"Invalid parameter {key!r} for estimator {type(self).__name__}. "
                    f"Valid parameters are: {self._get_param_names()!r}."  # the repr would run over several lines
                )
            if delim:
                nested[key][sub_key] = value
            else:
                setattr(self, key, value)
                valid[key] = value
        for key, sub_params in nested.items():
            valid[key].set_params(**sub_params)
        return self

    def __repr__(self, N_CHAR_MAX=700):
        from sklearn.base import BaseEstimator as _SklearnEstimator

        return _SklearnEstimator.__repr__(_repr_twin(self), N_CHAR_MAX)

    def __dir__(self):
        # methods behind available_if are listed only when available, as scikit-learn does
        return [attr for attr in super().__dir__() if hasattr(self, attr)]

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags

        kind = self._estimator_type
        return Tags(
            estimator_type=kind,
            target_tags=TargetTags(required=kind in ("classifier", "regressor")),
            transformer_tags=None,
            classifier_tags=ClassifierTags() if kind == "classifier" else None,
            regressor_tags=RegressorTags() if kind == "regressor" else None,
        )


_PARAM_NAMES: dict[type, list[str]] = {}
_REPR_TWINS: dict[type, type] = {}


def _repr_twin(value):
    """``value`` with each of our estimators (itself included, and those among its parameters) replaced by an
    instance of a ``sklearn.base.BaseEstimator`` subclass of the same name, ``__init__`` and parameters: what
    scikit-learn's pretty printer formats as an estimator."""
    if isinstance(value, BaseEstimator):
        cls = type(value)
        twin_cls = _REPR_TWINS.get(cls)
        if twin_cls is None:
            from sklearn.base import BaseEstimator as _SklearnEstimator

            twin_cls = _REPR_TWINS[cls] = type(
                cls.__name__, (_SklearnEstimator,), {"__init__": cls.__init__, "__module__": cls.__module__}
            )
        twin = object.__new__(twin_cls)
        twin.__dict__.update((k, _repr_twin(v)) for k, v in value.get_params(deep=False).items())
        return twin
    if type(value) in (list, tuple):
        return type(value)(_repr_twin(v) for v in value)
    return value


def _scored(metric, pred, y, sample_weight):
    """``metric(y, pred)`` weighted by ``sample_weight``, checked as learning checks it (one-line errors for
    negative, NaN or all-zero weights)."""
    from ._validation import score_weights

    return float(metric(y, pred, sample_weight=score_weights(sample_weight, len(pred))))


class ClassifierMixin:
    """Classifiers: ``_estimator_type = "classifier"`` and ``score`` = accuracy."""

    _estimator_type: str | None = "classifier"
    predict: Callable[[Any], Any]

    def score(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Mean accuracy of ``self.predict(X)`` against ``y`` (weighted by ``sample_weight``)."""
        from sklearn.metrics import accuracy_score

        return _scored(accuracy_score, self.predict(X), y, sample_weight)


class RegressorMixin:
    """Regressors: ``_estimator_type = "regressor"`` and ``score`` = coefficient of determination R^2."""

    _estimator_type: str | None = "regressor"
    predict: Callable[[Any], Any]

    def score(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """R^2 of ``self.predict(X)`` against ``y`` (weighted by ``sample_weight``)."""
        from sklearn.metrics import r2_score

        return _scored(r2_score, self.predict(X), y, sample_weight)


class TransformerMixin:
    """Transformers: ``fit_transform`` and the transformer tags."""

    def fit_transform(self: Any, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """``fit(X, y, **fit_params)`` then ``transform(X)``."""
        return self.fit(X, y, **fit_params).transform(X)

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags()
        return tags


class PartialFitMixin:
    """``partial_fit``: the learning of ``partial_fit_scores``, without the scores."""

    partial_fit_scores: Callable[..., Any]

    def partial_fit(
        self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None, sample_weight: ArrayLike | None = None
    ) -> Self:
        """One pass over ``(X, y)`` in the given order, continuing from the current model (as
        ``partial_fit_scores``). Returns ``self``."""
        self.partial_fit_scores(X, y, classes=classes, sample_weight=sample_weight)
        return self


def is_classifier(estimator):
    """True when ``estimator`` is a classifier (ours: read from the class; others: ``sklearn.base``'s answer)."""
    return _kind(estimator) == "classifier"


def is_regressor(estimator):
    """True when ``estimator`` is a regressor (ours: read from the class; others: ``sklearn.base``'s answer)."""
    return _kind(estimator) == "regressor"


def _kind(estimator):
    if isinstance(estimator, BaseEstimator):
        return estimator._estimator_type
    from sklearn.utils import get_tags

    return get_tags(estimator).estimator_type


def check_is_fitted(estimator, attributes=None, *, msg=None, all_or_any=all):
    """Raise ``sklearn.exceptions.NotFittedError`` unless ``estimator`` is fitted: it has the ``attributes``
    (a name or a list of names; ``all_or_any`` of them) or, without ``attributes``, any attribute whose name
    ends with ``_`` (or ``__sklearn_is_fitted__()`` says so), as ``sklearn.utils.validation.check_is_fitted``."""
    if isinstance(estimator, type):
        raise TypeError(f"{estimator} is a class, not an instance.")
    if not hasattr(estimator, "fit"):
        raise TypeError(f"{estimator} is not an estimator instance.")
    if attributes is not None:
        names = [attributes] if isinstance(attributes, str) else attributes
        fitted = all_or_any(hasattr(estimator, a) for a in names)
    elif hasattr(estimator, "__sklearn_is_fitted__"):
        fitted = estimator.__sklearn_is_fitted__()
    else:
        fitted = any(v.endswith("_") and not v.startswith("__") for v in vars(estimator))
    if not fitted:
        from sklearn.exceptions import NotFittedError

        if msg is None:
            msg = (
                "This %(name)s instance is not fitted yet. Call 'fit' with appropriate arguments before "
                "using this estimator."
            )
        raise NotFittedError(msg % {"name": type(estimator).__name__})


class _AvailableIf:
    """The method ``fn`` where ``check(self)`` is true; elsewhere reading it raises ``AttributeError`` (so
    ``hasattr`` is false), as ``sklearn.utils.metaestimators.available_if``."""

    def __init__(self, fn, check):
        self.fn = fn
        self.check = check
        update_wrapper(self, fn)

    def _check(self, obj, owner):
        message = f"This {owner.__name__!r} has no attribute {self.fn.__name__!r}"
        try:
            ok = self.check(obj)
        except Exception as exc:
            raise AttributeError(message) from exc
        if not ok:
            raise AttributeError(message)

    def __get__(self, obj, owner=None):
        if obj is not None:
            self._check(obj, owner=owner)
            return MethodType(self.fn, obj)

        @wraps(self.fn)
        def unbound(*args, **kwargs):
            self._check(args[0], owner=owner)
            return self.fn(*args, **kwargs)

        return unbound


def available_if(check):
    """Decorator: the method exists on an instance only where ``check(instance)`` is true."""
    return lambda fn: _AvailableIf(fn, check)
