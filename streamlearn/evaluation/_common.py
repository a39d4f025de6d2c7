"""Helpers shared by progressive validation, test metrics and regret (not public).

Everything here is vectorised NumPy on whole chunks: the per-example work already happened in the learner's
kernel, which returned each example's pre-update score.
"""

import numbers

import numpy as np

from .._estimator import is_classifier
from ..losses import LOSSES, loss_value

_CONTRACT = ("partial_fit_scores", "scores_to_labels")


def check_learner(learner, *, what="learner", needs=_CONTRACT):
    """Raise ``TypeError`` unless ``learner`` follows the streamlearn online-learner contract: the methods
    ``needs`` (learning and scoring by default; a frozen model's metrics need only scoring) and the loss."""
    missing = [name for name in needs if not callable(getattr(learner, name, None))]
    if not isinstance(getattr(learner, "_progressive_loss", None), str):
        missing.append("_progressive_loss")
    if missing:
        raise TypeError(
            f"{what} must follow the streamlearn online-learner contract (see streamlearn.base): it needs "
            f"{', '.join(f'{name}()' for name in needs)} and _progressive_loss; {type(learner).__name__} lacks "
            f"{', '.join(missing)}."
        )


def task_of(learner):
    """``"classification"`` or ``"regression"``."""
    return "classification" if is_classifier(learner) else "regression"


def loss_spec(learner, loss=None, epsilon=None):
    """``(loss name, loss parameter)`` for ``learner``: its ``_progressive_loss`` unless ``loss`` is given.

    The parameter is read from the learner attribute the loss declares in ``streamlearn.losses.LOSSES``
    (``epsilon`` for the epsilon-insensitive loss) unless ``epsilon`` is given.
    """
    name = loss if loss is not None else learner._progressive_loss
    return name, loss_param(name, learner, epsilon)


def loss_param(name, learner=None, epsilon=None):
    """The numeric parameter of loss ``name`` (0.0 for losses without one)."""
    if name not in LOSSES:
        raise ValueError(f"Unknown loss {name!r}; expected one of {sorted(LOSSES)}.")
    attr = LOSSES[name][1]
    if attr is None:
        return 0.0
    value = epsilon if epsilon is not None else getattr(learner, attr, None)
    if value is None:
        raise ValueError(f"The {name!r} loss needs its parameter {attr!r}: pass {attr}=... (a float >= 0).")
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value < 0:
        raise ValueError(
            f"The {attr!r} parameter of the {name!r} loss must be a float in the range [0.0, inf). "
            f"Got {value!r} instead."
        )
    return float(value)


def signed_targets(classes, y, *, what="y"):
    """Targets the learners train on: ``(n,)`` in {-1, +1} (``classes[1]`` is +1) for two classes, else the
    ``(n, K)`` one-vs-rest matrix with +1 in the column of the true class and -1 elsewhere."""
    classes = np.asarray(classes)
    y = np.asarray(y)
    idx = np.searchsorted(classes, y)
    idx_c = np.minimum(idx, classes.shape[0] - 1)
    bad = classes[idx_c] != y
    if np.any(bad):
        unknown = np.unique(y[bad])
        raise ValueError(
            f"{what} contains labels {unknown.tolist()[:10]} that are not among the learner's "
            f"classes {classes.tolist()[:20]}."
        )
    if classes.shape[0] == 2:
        return np.where(idx_c == 1, 1.0, -1.0)
    out = -np.ones((y.shape[0], classes.shape[0]), dtype=np.float64)
    out[np.arange(y.shape[0]), idx_c] = 1.0
    return out


def regression_targets(y):
    """``y`` as float64, refused unless every target is a finite real number (a NaN would make every loss NaN)."""
    try:
        targets = None if np.iscomplexobj(y) else y.astype(np.float64)
    except (TypeError, ValueError):
        targets = None
    if targets is None:
        raise ValueError(f"y must hold real numbers (regression targets); got dtype {y.dtype}.")
    bad = np.flatnonzero(~np.isfinite(targets))
    if bad.size:
        raise ValueError(f"y[{bad[0]}] is {targets[bad[0]]}; expected finite regression targets.")
    return targets


def example_losses(name, param, targets, scores):
    """Per-example loss: ``loss_value`` for 1-D scores, the mean of the K one-vs-rest losses for ``(n, K)``."""
    values = loss_value(name, targets, scores, param)
    return values.mean(axis=1) if values.ndim == 2 else values


def as_1d_labels(y, n_rows, *, what="y", rows_what="X"):
    """``np.asarray(y)`` checked to be 1-D with ``n_rows`` entries."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{what} must be a 1-D array of labels or targets; got shape {y.shape}.")
    if y.shape[0] != n_rows:
        raise ValueError(f"{what} has {y.shape[0]} entries but {rows_what} has {n_rows} rows; expected equal.")
    return y


def n_rows(X, *, what="X"):
    """Number of rows of a 2-D array-like or sparse matrix."""
    shape = getattr(X, "shape", None)
    if shape is None:
        X = np.asarray(X)
        shape = X.shape
    if len(shape) != 2:
        raise ValueError(f"{what} must be 2-D (n_samples, n_features); got shape {tuple(shape)}.")
    return int(shape[0])


def to_builtin(value):
    """Numpy scalars -> Python scalars (JSON-serialisable checkpoint rows)."""
    if isinstance(value, np.generic):
        return value.item()
    return value
