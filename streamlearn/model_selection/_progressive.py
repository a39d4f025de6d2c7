"""ProgressiveSelectionClassifier: several online learners side by side, predicting with the one whose
progressive (test-then-train) accuracy is best."""

from __future__ import annotations

from typing import Any, Self

import numpy as np
from .._estimator import BaseEstimator, ClassifierMixin, PartialFitMixin, available_if, check_is_fitted
from .._typing import ArrayLike, FloatArray, MatrixLike
from .._validation import (
    Options,
    all_weights_zero,
    check_feature_names,
    check_sample_weight,
    labels_of_one_kind,
    validate_params,
)
from ..base import DictRowMixin
from ..persist import PersistMixin

__all__ = ["ProgressiveSelectionClassifier", "DEFAULT_LEARNERS"]

#: the learners of the default selection (registry names, as ``streamlearn train -l NAME`` builds them): the
#: confidence-weighted learners that keep a variance for every weight and adapt each step to it
DEFAULT_LEARNERS = "arow,scw1,scw2"


def _names(learners):
    """The registry names in ``learners`` (a comma-separated string or a sequence of names), checked."""
    from ..learners import LEARNERS

    names = [n.strip() for n in learners.split(",")] if isinstance(learners, str) else list(learners)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"learners must name at least one learner, as 'arow,scw1,scw2'; got {learners!r}.")
    usable = [k for k, s in LEARNERS.items() if s.task == "classification" and not s.batch and not _selects(s)]
    for n in names:
        if n not in usable:
            raise ValueError(
                f"learners: {n!r} is not an online classifier of the registry; expected some of {', '.join(usable)}."
            )
    if len(set(names)) != len(names):
        raise ValueError(f"learners: each learner may be named once; got {learners!r}.")
    return names


def _selects(spec):
    """Whether the registry entry ``spec`` is a selection itself (not a learner to select)."""
    return spec.target.endswith(":" + ProgressiveSelectionClassifier.__name__)


class _LearnerNames:
    """The ``learners`` constraint: registry names of online classifiers, each once, comma-separated in a string
    or in a list or tuple (checked when the parameters are, so that the command line refuses a wrong name before
    it reads any data)."""

    def is_satisfied_by(self, value):
        if not (isinstance(value, str) or isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
            return False
        try:
            _names(value)
        except ValueError:
            return False
        return True

    def __str__(self):
        return (
            "the names of distinct online classifiers of the registry ('streamlearn learners'; not a selection), "
            "comma-separated in a string or in a list"
        )


def _selected_has(name):
    return lambda self: hasattr(self._selected_member() if self._is_started() else None, name)


class ProgressiveSelectionClassifier(PartialFitMixin, DictRowMixin, PersistMixin, ClassifierMixin, BaseEstimator):
    """Online learners trained side by side on the same rows; predictions come from the one whose progressive
    accuracy, with recent examples weighted more, is the highest so far.

    Each learner scores every example before it learns from it (progressive validation), so each one's record
    of right and wrong predictions is an honest estimate of how it generalises on this stream, with no held-out
    set. With ``weighting="linear"`` example ``t`` of the stream counts ``t`` times its weight (``sample_weight``):
    the early examples, which every learner gets wrong while it knows little, count less than the ones that show
    what each learner has become. The selection is made again before every example, so ``partial_fit_scores``
    returns, for each row, the score of the learner selected before that row (the result does not depend on how
    the stream is cut into chunks). Ties go to the learner named first.

    The learners are registry names (``streamlearn learners``), each built with its command-line defaults and
    behind its default streaming scaler, as ``streamlearn train -l NAME`` builds it. Learning costs the sum of
    theirs. The default trio is the confidence-weighted family: AROW (Crammer, Kulesza & Dredze, "Adaptive
    Regularization of Weight Vectors", NIPS 2009) and SCW-I and SCW-II (Wang, Zhao & Hoi, "Exact Soft
    Confidence-Weighted Learning", ICML 2012). Each keeps a full covariance up to 4,096 features (O(d^2) per
    example) and its diagonal above (O(nnz)); where one of them is best on a data set another is often not, and
    the selection follows whichever is right on the stream at hand.

    Parameters
    ----------
    learners : str or sequence of str, default="arow,scw1,scw2"
        Registry names of online classifiers, comma-separated in a string.
    weighting : {"linear", "uniform"}, default="linear"
        ``"linear"``: example ``t`` counts ``t`` times its weight in each learner's accuracy; ``"uniform"``:
        every example counts its weight.

    Attributes
    ----------
    members_ : dict
        Registry name -> the fitted learner, in the order of ``learners``.
    selected_ : str
        The name of the learner that predicts now.
    progressive_accuracy_ : dict
        Registry name -> its weighted progressive accuracy so far.
    classes_ : ndarray
    n_features_in_ : int
    t_ : int
        Examples seen.

    Notes
    -----
    If one learner refuses a chunk that the learners before it have learnt (it diverges, or is interrupted), the
    learners no longer share their past: the error says so, and every later call is refused until ``fit``
    starts again (a saved copy from before can be loaded). The average loss that progressive validation reports
    for the selection is the hinge loss of the selected learners' scores.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from streamlearn.model_selection import ProgressiveSelectionClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> order = np.random.default_rng(0).permutation(len(y)); X, y = X[order], y[order]
    >>> clf = ProgressiveSelectionClassifier().partial_fit(X[:400], y[:400], classes=[0, 1])
    >>> clf.selected_, round(clf.score(X[400:], y[400:]), 2)
    ('arow', 0.94)
    """

    _parameter_constraints: dict = {
        "learners": [_LearnerNames()],
        "weighting": [Options("linear", "uniform")],
    }
    _progressive_loss = "hinge"
    _is_regressor = False

    def __init__(self, learners: Any = DEFAULT_LEARNERS, weighting: str = "linear"):
        self.learners = learners
        self.weighting = weighting

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- state ----------------------------------------------------------------------------------------
    def _is_started(self):
        return hasattr(self, "t_")

    def _member_names(self):
        return [str(n) for n in self.learned_with_]

    def _members(self):
        return [getattr(self, f"_member_{i}") for i in range(len(self.learned_with_))]

    def _first_member(self):
        return self._member_0

    def _selected_index(self):
        return int(np.argmax(self._state_hits[:-1]))  # ties: the first

    def _selected_member(self):
        return getattr(self, f"_member_{self._selected_index()}")

    def _reset(self):
        for attr in list(vars(self)):
            if attr.endswith("_") and not attr.startswith("__") or attr.startswith(("_state", "_member_", "_broken")):
                delattr(self, attr)

    def _start(self):
        from ..learners import make_learner, scaled_learner

        names = _names(self.learners)
        for i, name in enumerate(names):
            setattr(self, f"_member_{i}", scaled_learner(name, make_learner(name)))
        self.learned_with_ = names
        self._state_hits = np.zeros(len(names) + 1)  # each learner's weighted right predictions, then the total weight
        self.t_ = 0

    def _check_usable(self):
        broken = getattr(self, "_broken", None)
        if broken:
            raise ValueError(
                f"This ProgressiveSelectionClassifier's learners no longer learnt the same rows ({broken}); call fit "
                "to start again, or load a copy saved before."
            )
        if self._is_started() and self._learners_changed():
            raise ValueError(
                f"learners={self.learners!r} differs from the learners this ProgressiveSelectionClassifier was "
                f"trained with ({','.join(self._member_names())!r}); call fit to start again with them."
            )

    def _learners_changed(self):
        """Whether ``learners`` names other learners than those learning (read as they were recorded first: the
        check runs before every prediction)."""
        given, names = self.learners, self._member_names()
        if given == ",".join(names) or isinstance(given, (list, tuple)) and list(given) == names:
            return False
        return _names(given) != names

    def save(self, path: Any) -> None:
        """Write the model file (every learner and the record of each); refused when the learners no longer
        learnt the same rows."""
        self._check_usable()
        super().save(path)

    # -- fitted attributes --------------------------------------------------------------------------------
    @property
    def members_(self) -> dict:
        check_is_fitted(self, "t_")
        return dict(zip(self._member_names(), self._members()))

    @property
    def selected_(self) -> str:
        check_is_fitted(self, "t_")
        return self._member_names()[self._selected_index()]

    @property
    def progressive_accuracy_(self) -> dict:
        check_is_fitted(self, "t_")
        total = self._state_hits[-1]
        return {
            n: float(h / total) if total > 0 else float("nan") for n, h in zip(self._member_names(), self._state_hits)
        }

    @property
    def classes_(self) -> np.ndarray:
        check_is_fitted(self, "t_")
        return self._first_member().classes_

    @classes_.setter
    def classes_(self, value: np.ndarray) -> None:
        # learn_one's guess of 0/1 labels turned into -1/+1 by a first -1: every learner's classes change
        for member in self._members():
            getattr(member, "learner_", member).classes_ = value

    @property
    def n_features_in_(self) -> int:
        check_is_fitted(self, "t_")
        return self._first_member().n_features_in_

    @property
    def feature_names_in_(self) -> np.ndarray:
        """The column names of the DataFrames learnt (when they had names of strings)."""
        check_is_fitted(self, "t_")
        for part in (
            self._first_member(),
            getattr(self._first_member(), "scaler_", None),
            getattr(self._first_member(), "learner_", None),
        ):
            names = getattr(part, "feature_names_in_", None)
            if names is not None:
                return names
        raise AttributeError("feature_names_in_: the rows learnt had no column names.")

    @property
    def nnz_weights(self) -> int:
        """The selected learner's number of non-zero weights."""
        check_is_fitted(self, "t_")
        return int(self._selected_member().nnz_weights)

    # -- learning -------------------------------------------------------------------------------------
    def partial_fit_scores(
        self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None, sample_weight: ArrayLike | None = None
    ) -> FloatArray:
        """Every learner learns ``(X, y)`` in order; returns, for each row, the pre-update score of the learner
        selected before that row (shape ``(n_samples,)``, or ``(n_samples, n_classes)`` for K > 2 classes)."""
        validate_params(self)
        self._check_usable()
        self.__dict__.pop("_classes_guessed_from_one", None)  # learn_one's guess holds until other labels are learnt
        first = not self._is_started()
        if first:
            if classes is None:
                raise ValueError(
                    "classes must be passed on the first call to ProgressiveSelectionClassifier.partial_fit: the "
                    "learners need every label up front (e.g. classes=[-1, 1])."
                )
            self._start()
        else:
            check_feature_names(self, X, reset=False)  # (the learners would name themselves in the error)
        members, names = self._members(), self._member_names()
        scores = []
        for k, member in enumerate(members):
            try:
                scores.append(np.asarray(member.partial_fit_scores(X, y, classes=classes, sample_weight=sample_weight)))
            except BaseException as exc:
                if k == 0:  # nothing was learnt: the learners all check their input alike, the first one first
                    if first:
                        self._reset()
                    raise
                self._broken = f"{names[k]!r} refused a chunk that {', '.join(map(repr, names[:k]))} had learnt"
                if isinstance(exc, Exception) and exc.args:  # the same exception (its type, the row it names)
                    exc.args = (f"{exc.args[0]} ({names[k]} in a ProgressiveSelectionClassifier: {self._broken}).",)
                raise
        n = scores[0].shape[0]
        labels = np.asarray(y).reshape(-1)
        right = np.stack([m.scores_to_labels(s) == labels for m, s in zip(members, scores)]).astype(np.float64)
        # (the weights were checked by the first learner)
        weight = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).reshape(-1)
        if self.weighting == "linear":
            weight = weight * np.arange(self.t_ + 1, self.t_ + n + 1, dtype=np.float64)
        hits = self._state_hits
        running = np.cumsum(right * weight, axis=1) + hits[:-1, None]  # after each row
        before = np.concatenate([hits[:-1, None], running[:, :-1]], axis=1)
        chosen = np.argmax(before, axis=0)  # the learner selected before each row (ties: the first)
        out = np.stack(scores)[chosen, np.arange(n)]
        hits[:-1] = running[:, -1] if n else hits[:-1]
        hits[-1] += weight.sum()
        self.t_ += n
        return out

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Start again and make one pass over ``(X, y)`` in order (the selection needs the examples one after
        the other: each learner's progressive record is what it is chosen on). Returns ``self``."""
        validate_params(self)
        self._reset()
        if sample_weight is not None and not np.any(
            check_sample_weight(sample_weight, np.asarray(y).reshape(-1).shape[0]) > 0
        ):
            raise all_weights_zero(self)
        classes = np.unique(labels_of_one_kind(np.asarray(y), "y"))
        return self.partial_fit(X, y, classes=classes, sample_weight=sample_weight)

    # -- prediction -----------------------------------------------------------------------------------
    def _predicting(self, X):
        check_is_fitted(self, "t_")
        self._check_usable()
        check_feature_names(self, X, reset=False)
        return self._selected_member()

    def decision_function(self, X: MatrixLike) -> FloatArray:
        """The selected learner's scores."""
        return self._predicting(X).decision_function(X)

    _decision_function = decision_function

    def predict(self, X: MatrixLike) -> np.ndarray:
        """The selected learner's labels."""
        return self._predicting(X).predict(X)

    @available_if(_selected_has("predict_proba"))
    def predict_proba(self, X: MatrixLike) -> FloatArray:
        """The selected learner's class probabilities (when it has them)."""
        return self._predicting(X).predict_proba(X)

    def scores_to_labels(self, scores: ArrayLike) -> np.ndarray:
        """Labels from scores as every learner maps them (binary: ``classes_[1]`` where the score is >= 0)."""
        check_is_fitted(self, "t_")
        return self._first_member().scores_to_labels(scores)
