"""StreamPipeline: an online scaler in front of an online learner, with the learner's API."""

from __future__ import annotations

from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._estimator import PartialFitMixin, own_params
from ..base import DictRowMixin
from .._typing import ArrayLike, FloatArray, MatrixLike
from .._validation import finite_scores, score_weights
from ..persist import PersistMixin
from ._scalers import MaxAbsScaler, StandardScaler, _restore, _snapshot

__all__ = ["SCALERS", "StreamPipeline", "make_scaler", "make_stream_pipeline"]

#: ``--scale`` choices of the command line and what they build (``"none"``: no scaler).
SCALERS = ("none", "maxabs", "standard")


def make_scaler(name: str) -> MaxAbsScaler | StandardScaler | None:
    """The scaler called ``name`` (one of :data:`SCALERS`; ``"none"`` gives None).

    >>> make_scaler("maxabs"), make_scaler("none")
    (MaxAbsScaler(), None)
    """
    if name == "maxabs":
        return MaxAbsScaler()
    if name == "standard":
        return StandardScaler()
    if name == "none":
        return None
    raise ValueError(f"Unknown scaler {name!r}; expected one of {', '.join(SCALERS)}.")


def make_stream_pipeline(scaler: Any, learner: Any, target_scaler: Any = None) -> StreamPipeline:
    """``StreamPipeline(scaler, learner, target_scaler)``: the learner sees every row (and with a
    ``target_scaler``, every regression target) scaled by the statistics of the rows before it (see
    :class:`StreamPipeline`).

    >>> from streamlearn.linear_model import OGDClassifier
    >>> from streamlearn.preprocessing import StandardScaler, make_stream_pipeline
    >>> make_stream_pipeline(StandardScaler(), OGDClassifier())
    StreamPipeline(learner=OGDClassifier(), scaler=StandardScaler())
    """
    return StreamPipeline(scaler=scaler, learner=learner, target_scaler=target_scaler)


def _kind(step):
    return "None" if step is None else f"a {type(step).__name__}"


def _changed(value, learnt):
    """Whether a parameter differs from the fitted copy's: plain values by value, other objects (a random state,
    which ``clone`` copies) by type only."""
    if type(value) is not type(learnt):
        return True
    return isinstance(value, (bool, int, float, str, tuple, list)) and value != learnt


def _learner_has(name):
    return lambda self: hasattr(self.learner_ if hasattr(self, "learner_") else self.learner, name)


class StreamPipeline(PartialFitMixin, DictRowMixin, PersistMixin, BaseEstimator):
    """An online scaler followed by an online learner, used like the learner.

    ``partial_fit`` / ``partial_fit_scores`` transform each row with the scaler's statistics of the rows
    *before* it, hand the transformed chunk to the learner, and only then add the rows to the statistics:
    progressive validation never looks ahead, and the result does not depend on the chunk size.
    ``predict``, ``decision_function`` and ``predict_proba`` (when the learner has it) scale with the current
    statistics. ``fit`` resets both, learns the statistics of all of ``X`` and then fits the learner on the
    scaled ``X``. The fitted copies are ``scaler_`` and ``learner_`` (the parameters are left untouched);
    parameters changed with ``set_params`` reach them at the next ``partial_fit``, as a learner's own do, and a
    step of another kind (or one added or removed) is refused until ``fit``. ``save``/``load`` store both.
    ``learn_one`` / ``predict_one`` take dict rows as the learners' do (hashed with the pipeline's
    ``input_spec_``: a model that ``streamlearn train`` saved with a scaler predicts dicts as it read its file).

    With a ``target_scaler`` (a :class:`~streamlearn.preprocessing.TargetStandardScaler`; regressors only) the
    learner learns each target standardised by the targets before it, and every score and prediction is
    mapped back to the target's units (``target_scaler_``).

    Parameters
    ----------
    scaler : MaxAbsScaler, StandardScaler or None
        None: the rows reach the learner as they are.
    learner : a streamlearn online learner (with ``partial_fit_scores``)
    target_scaler : TargetStandardScaler or None, default=None

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from streamlearn.linear_model import OGDClassifier
    >>> from streamlearn.preprocessing import StandardScaler, make_stream_pipeline
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> order = np.random.default_rng(0).permutation(len(y)); X, y = X[order], y[order]
    >>> raw = OGDClassifier().partial_fit(X[:400], y[:400], classes=[0, 1])
    >>> pipe = make_stream_pipeline(StandardScaler(), OGDClassifier()).partial_fit(X[:400], y[:400], classes=[0, 1])
    >>> print(f"raw {raw.score(X[400:], y[400:]):.2f}, scaled {pipe.score(X[400:], y[400:]):.2f}")
    raw 0.38, scaled 0.92
    """

    def __init__(self, scaler, learner, target_scaler=None):
        self.scaler = scaler
        self.learner = learner
        self.target_scaler = target_scaler

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.learner)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        tags.target_tags = inner.target_tags
        tags.input_tags.sparse = True
        return tags

    # -- learning ---------------------------------------------------------------------------------
    def _start(self):
        if not hasattr(self, "learner_"):
            if self.scaler is not None and not hasattr(self.scaler, "partial_fit_transform"):
                raise TypeError(
                    f"scaler must be an online streamlearn scaler (MaxAbsScaler or StandardScaler) or None; "
                    f"got {type(self.scaler).__name__}."
                )
            if not hasattr(self.learner, "partial_fit_scores"):
                raise TypeError(
                    f"learner must be a streamlearn online learner (with partial_fit_scores); got "
                    f"{type(self.learner).__name__}."
                )
            if self.target_scaler is not None:
                if not hasattr(self.target_scaler, "inverse_transform") or not hasattr(
                    self.target_scaler, "partial_fit_transform"
                ):
                    raise TypeError(
                        f"target_scaler must be a TargetStandardScaler or None; got {type(self.target_scaler).__name__}."
                    )
                if get_tags(self.learner).estimator_type != "regressor":
                    raise TypeError(
                        f"target_scaler applies to regressors; got the {type(self.learner).__name__} "
                        f"({get_tags(self.learner).estimator_type})."
                    )
                if self.learner._progressive_loss != "squared":
                    raise TypeError(
                        f"target_scaler needs a squared-loss learner (its loss is the same in any units); the "
                        f"{type(self.learner).__name__}'s loss is {self.learner._progressive_loss}."
                    )
            self.scaler_ = None if self.scaler is None else clone(self.scaler)
            self.learner_ = clone(self.learner)
            self.target_scaler_ = None if self.target_scaler is None else clone(self.target_scaler)
            return
        self._follow_params()

    def _follow_params(self):
        """Hand the parameters changed with ``set_params`` since learning began to the fitted copies, where they
        take effect as a learner's own do (or are refused by it); a step of another kind, or one added or
        removed, is refused: it would be silently ignored until ``fit``."""
        for name in ("scaler", "learner", "target_scaler"):
            given, fitted = getattr(self, name), getattr(self, name + "_")
            if (given is None) != (fitted is None) or type(given) is not type(fitted):
                raise ValueError(
                    f"{name}={_kind(given)} is not the {name} this StreamPipeline learnt with ({_kind(fitted)}); "
                    "call fit to start again with it."
                )
            if given is None:
                continue
            learnt = own_params(fitted)
            changed = {k: v for k, v in own_params(given).items() if _changed(v, learnt.get(k))}
            if changed:
                fitted.set_params(**changed)

    def partial_fit_scores(
        self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None, sample_weight: ArrayLike | None = None
    ) -> FloatArray:
        """Scale each row by the statistics of the rows before it, learn, and return the learner's
        pre-update scores (see the learner's ``partial_fit_scores``)."""
        self.__dict__.pop("_classes_guessed_from_one", None)  # learn_one's guess holds until other labels are learnt
        self._start()
        scalers = (self.scaler_, self.target_scaler_)
        saved = [_snapshot(s) for s in scalers]
        try:
            # rows of weight 0 are scaled and scored but change nothing, the scaler's statistics included
            Xt = X if self.scaler_ is None else self.scaler_._stream(X, write=True, learn=sample_weight)
            if self.scaler_ is not None:  # (refused: the scalers are put back below)
                self.scaler_._refuse_overflow(Xt)
            if self.target_scaler_ is None:
                return self.learner_.partial_fit_scores(Xt, y, classes=classes, sample_weight=sample_weight)
            t, shift, scale = self.target_scaler_.partial_fit_transform(y, sample_weight)
            scores = self.learner_.partial_fit_scores(Xt, t, classes=classes, sample_weight=sample_weight)
            return shift + scale * scores
        except BaseException:  # the learner (or a scaler) refused the chunk: the scalers forget it too
            for s, state in zip(scalers, saved):
                _restore(s, state)
            raise

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Reset; learn the scaler's statistics on all of ``X`` (the rows of weight > 0), then ``fit`` the
        learner on the scaled rows."""
        for attr in ("scaler_", "learner_", "target_scaler_", "_classes_guessed_from_one"):
            if hasattr(self, attr):
                delattr(self, attr)
        self._start()
        if self.scaler_ is not None:
            self.scaler_._stream(X, write=False, learn=sample_weight)
        Xt = X if self.scaler_ is None else self.scaler_.transform(X)
        if self.target_scaler_ is not None:
            y = self.target_scaler_.fit(y, sample_weight).transform(y)
        self.learner_.fit(Xt, y, sample_weight=sample_weight)
        return self

    # -- prediction ---------------------------------------------------------------------------------
    def _scaled(self, X):
        check_is_fitted(self)
        return X if self.scaler_ is None else self.scaler_.transform(X)

    def _unscaled(self, scores):
        """Regression scores in the target's units (unchanged without a target scaler); a score that overflows
        there is an error, as the learner's own are."""
        if self.target_scaler_ is None:
            return scores
        return finite_scores(self, self.target_scaler_.inverse_transform(scores))

    def _on_scaled(self, method, X, *args, **kwargs):
        """The learner's ``method`` called on the scaled rows (and the other arguments)."""
        Xt = self._scaled(X)  # first: it checks that the pipeline is fitted
        return getattr(self.learner_, method)(Xt, *args, **kwargs)

    def _decision_function(self, X):
        return self._unscaled(self._on_scaled("_decision_function", X))

    @available_if(_learner_has("decision_function"))
    def decision_function(self, X: MatrixLike) -> FloatArray:
        """The learner's ``decision_function`` on the scaled rows."""
        return self._unscaled(self._on_scaled("decision_function", X))

    def predict(self, X: MatrixLike) -> np.ndarray:
        """The learner's ``predict`` on the scaled rows (in the target's units)."""
        return self._unscaled(self._on_scaled("predict", X))

    @available_if(_learner_has("predict_proba"))
    def predict_proba(self, X: MatrixLike) -> FloatArray:
        """The learner's ``predict_proba`` on the scaled rows."""
        return self._on_scaled("predict_proba", X)

    @available_if(_learner_has("predict_proba"))
    def predict_log_proba(self, X: MatrixLike) -> FloatArray:
        """The learner's ``predict_log_proba`` on the scaled rows."""
        return self._on_scaled("predict_log_proba", X)

    def score(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """The learner's ``score`` (accuracy or R^2) on the scaled rows (R^2 in the target's units)."""
        if self.target_scaler_ is not None:
            from sklearn.metrics import r2_score

            pred = self.predict(X)
            return r2_score(y, pred, sample_weight=score_weights(sample_weight, len(pred)))
        return self._on_scaled("score", X, y, sample_weight=sample_weight)

    def scores_to_labels(self, scores: ArrayLike) -> np.ndarray:
        """The learner's ``scores_to_labels``."""
        return self.learner_.scores_to_labels(scores)

    # -- what progressive validation and the command line read from a learner -------------------------
    @property
    def classes_(self) -> np.ndarray:
        return self.learner_.classes_

    @classes_.setter
    def classes_(self, value: np.ndarray) -> None:  # (learn_one's guess of 0/1 labels turned into -1/+1)
        self.learner_.classes_ = value

    @property
    def _is_regressor(self) -> bool:  # type: ignore[override]
        return (self.learner_ if hasattr(self, "learner_") else self.learner)._is_regressor

    def _is_started(self) -> bool:
        return hasattr(self, "learner_") and self.learner_._is_started()

    @property
    def n_features_in_(self) -> int:
        return (self.learner_ if self.scaler_ is None else self.scaler_).n_features_in_

    @property
    def t_(self) -> int:
        return self.learner_.t_

    @property
    def _progressive_loss(self):
        return (self.learner_ if hasattr(self, "learner_") else self.learner)._progressive_loss

    @property
    def epsilon(self) -> float | None:
        """The learner's ``epsilon`` (the epsilon-insensitive loss), or None."""
        return getattr(self.learner_ if hasattr(self, "learner_") else self.learner, "epsilon", None)

    @property
    def nnz_weights(self) -> int:
        return self.learner_.nnz_weights
