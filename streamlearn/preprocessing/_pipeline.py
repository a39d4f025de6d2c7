"""StreamPipeline: an online scaler in front of an online learner, with the learner's API."""

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..persist import PersistMixin
from ._scalers import MaxAbsScaler, StandardScaler

__all__ = ["SCALERS", "StreamPipeline", "make_scaler", "make_stream_pipeline"]

#: ``--scale`` choices of the command line and what they build (``"none"``: no scaler).
SCALERS = ("none", "maxabs", "standard")


def make_scaler(name):
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


def make_stream_pipeline(scaler, learner):
    """``StreamPipeline(scaler, learner)``: the learner sees every row scaled by the statistics of the rows
    before it (see :class:`StreamPipeline`).

    >>> from streamlearn.linear_model import OGDClassifier
    >>> from streamlearn.preprocessing import StandardScaler, make_stream_pipeline
    >>> make_stream_pipeline(StandardScaler(), OGDClassifier())
    StreamPipeline(learner=OGDClassifier(), scaler=StandardScaler())
    """
    return StreamPipeline(scaler=scaler, learner=learner)


def _learner_has(name):
    return lambda self: hasattr(self.learner_ if hasattr(self, "learner_") else self.learner, name)


class StreamPipeline(PersistMixin, BaseEstimator):
    """An online scaler followed by an online learner, used like the learner.

    ``partial_fit`` / ``partial_fit_scores`` transform each row with the scaler's statistics of the rows
    *before* it, hand the transformed chunk to the learner, and only then add the rows to the statistics:
    progressive validation never looks ahead, and the result does not depend on the chunk size.
    ``predict``, ``decision_function`` and ``predict_proba`` (when the learner has it) scale with the current
    statistics. ``fit`` resets both, learns the statistics of all of ``X`` and then fits the learner on the
    scaled ``X``. The fitted copies are ``scaler_`` and ``learner_`` (the parameters are left untouched).
    ``save``/``load`` store both.

    Parameters
    ----------
    scaler : MaxAbsScaler or StandardScaler
    learner : a streamlearn online learner (with ``partial_fit_scores``)

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

    def __init__(self, scaler, learner):
        self.scaler = scaler
        self.learner = learner

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
            if not hasattr(self.scaler, "partial_fit_transform"):
                raise TypeError(
                    f"scaler must be an online streamlearn scaler (MaxAbsScaler or StandardScaler); "
                    f"got {type(self.scaler).__name__}."
                )
            if not hasattr(self.learner, "partial_fit_scores"):
                raise TypeError(
                    f"learner must be a streamlearn online learner (with partial_fit_scores); got "
                    f"{type(self.learner).__name__}."
                )
            self.scaler_ = clone(self.scaler)
            self.learner_ = clone(self.learner)

    def partial_fit_scores(self, X, y, classes=None, sample_weight=None):
        """Scale each row by the statistics of the rows before it, learn, and return the learner's
        pre-update scores (see the learner's ``partial_fit_scores``)."""
        self._start()
        scaler = self.scaler_
        saved = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(scaler).items()}
        Xt = scaler.partial_fit_transform(X)
        try:
            return self.learner_.partial_fit_scores(Xt, y, classes=classes, sample_weight=sample_weight)
        except BaseException:  # the learner refused the chunk: the scaler forgets it too
            for k, v in saved.items():
                cur = vars(scaler).get(k)
                if isinstance(v, np.ndarray) and isinstance(cur, np.ndarray) and cur.shape == v.shape:
                    cur[...] = v
                else:
                    setattr(scaler, k, v)
            for k in [k for k in vars(scaler) if k not in saved]:
                delattr(scaler, k)
            raise

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over ``(X, y)`` as in ``partial_fit_scores``. Returns ``self``."""
        self.partial_fit_scores(X, y, classes=classes, sample_weight=sample_weight)
        return self

    def fit(self, X, y, sample_weight=None):
        """Reset; learn the scaler's statistics on all of ``X``, then ``fit`` the learner on the scaled rows."""
        for attr in ("scaler_", "learner_"):
            if hasattr(self, attr):
                delattr(self, attr)
        self._start()
        Xt = self.scaler_.fit(X).transform(X)
        self.learner_.fit(Xt, y, sample_weight=sample_weight)
        return self

    # -- prediction ---------------------------------------------------------------------------------
    def _scaled(self, X):
        check_is_fitted(self)
        return self.scaler_.transform(X)

    def _decision_function(self, X):
        Xt = self._scaled(X)
        return self.learner_._decision_function(Xt)

    @available_if(_learner_has("decision_function"))
    def decision_function(self, X):
        """The learner's ``decision_function`` on the scaled rows."""
        Xt = self._scaled(X)
        return self.learner_.decision_function(Xt)

    def predict(self, X):
        """The learner's ``predict`` on the scaled rows."""
        Xt = self._scaled(X)
        return self.learner_.predict(Xt)

    @available_if(_learner_has("predict_proba"))
    def predict_proba(self, X):
        """The learner's ``predict_proba`` on the scaled rows."""
        Xt = self._scaled(X)
        return self.learner_.predict_proba(Xt)

    @available_if(_learner_has("predict_proba"))
    def predict_log_proba(self, X):
        """The learner's ``predict_log_proba`` on the scaled rows."""
        Xt = self._scaled(X)
        return self.learner_.predict_log_proba(Xt)

    def score(self, X, y, sample_weight=None):
        """The learner's ``score`` (accuracy or R^2) on the scaled rows."""
        Xt = self._scaled(X)
        return self.learner_.score(Xt, y, sample_weight=sample_weight)

    def scores_to_labels(self, scores):
        """The learner's ``scores_to_labels``."""
        return self.learner_.scores_to_labels(scores)

    # -- what progressive validation and the command line read from a learner -------------------------
    @property
    def classes_(self):
        return self.learner_.classes_

    @property
    def n_features_in_(self):
        return self.scaler_.n_features_in_

    @property
    def t_(self):
        return self.learner_.t_

    @property
    def _progressive_loss(self):
        return (self.learner_ if hasattr(self, "learner_") else self.learner)._progressive_loss

    @property
    def epsilon(self):
        """The learner's ``epsilon`` (the epsilon-insensitive loss), or None."""
        return getattr(self.learner_ if hasattr(self, "learner_") else self.learner, "epsilon", None)

    @property
    def nnz_weights(self):
        return self.learner_.nnz_weights
