"""Test-set metrics of a (frozen) online learner after a pass."""

from typing import Any

import numpy as np
from sklearn.metrics import log_loss

from ._common import (
    as_1d_labels,
    check_learner,
    example_losses,
    loss_spec,
    n_rows,
    regression_targets,
    signed_targets,
    task_of,
)

__all__ = ["evaluate"]


def evaluate(learner: Any, X: Any, y: Any) -> dict[str, float]:
    """Metrics of the current model on held-out data, without learning from it.

    Parameters
    ----------
    learner : fitted streamlearn online learner
        Any estimator following :mod:`streamlearn.base` (classifiers: ``decision_function`` and
        ``scores_to_labels``; regressors: ``predict``; both ``_progressive_loss``); it is not modified.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Test examples, at least one.
    y : array-like of shape (n_samples,)
        Their labels (classification; every label must be in ``learner.classes_``) or targets (regression).

    Returns
    -------
    metrics : dict of str to float
        ``n_examples`` and ``average_loss`` (the learner's own loss, as in progressive validation: with
        K > 2 classes the mean of the K one-vs-rest binary losses); classification adds ``accuracy`` and
        ``error_rate``, plus ``log_loss`` (natural log, sklearn's definition) when the learner has
        ``predict_proba``; regression adds ``rmse`` and ``mae``.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.evaluation import evaluate
    >>> from streamlearn.linear_model import OGDClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = OGDClassifier().partial_fit(X, y, classes=[-1, 1])
    >>> metrics = evaluate(clf, X_test, y_test)
    >>> sorted(metrics)
    ['accuracy', 'average_loss', 'error_rate', 'log_loss', 'n_examples']
    >>> print(f"accuracy {metrics['accuracy']:.2f}, log-loss {metrics['log_loss']:.2f}")
    accuracy 0.85, log-loss 0.3...
    """
    # a frozen model is only scored: batch learners (no partial_fit_scores) are evaluated too
    try:
        classification = task_of(learner) == "classification"
    except AttributeError:  # not an estimator at all: check_learner names what it lacks
        classification = False
    check_learner(learner, needs=("decision_function", "scores_to_labels") if classification else ("predict",))
    n = n_rows(X)
    if n == 0:
        raise ValueError("X has 0 rows: evaluate needs at least one test example.")
    y = as_1d_labels(y, n)
    name, param = loss_spec(learner)
    out = {"n_examples": n}
    if classification:
        scores = np.asarray(learner.decision_function(X))
        targets = signed_targets(learner.classes_, y)
        pred = np.asarray(learner.scores_to_labels(scores))
        accuracy = float(np.mean(pred == y))
        out.update(accuracy=accuracy, error_rate=1.0 - accuracy)
        out["average_loss"] = float(np.mean(example_losses(name, param, targets, scores)))
        if hasattr(learner, "predict_proba"):
            out["log_loss"] = float(log_loss(y, learner.predict_proba(X), labels=learner.classes_))
    else:
        scores = np.asarray(learner.predict(X), dtype=np.float64)  # a regressor's score is its prediction
        targets = regression_targets(y)
        residual = scores - targets
        out.update(rmse=float(np.sqrt(np.mean(residual**2))), mae=float(np.mean(np.abs(residual))))
        out["average_loss"] = float(np.mean(example_losses(name, param, targets, scores)))
    return out
