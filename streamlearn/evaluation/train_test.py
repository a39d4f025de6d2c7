"""The train-then-test run behind ``streamlearn train``: stream a file through a learner (progressive
validation on the first pass), optional further passes, then score a test file or a held-out fraction.

Nothing here holds the training file in memory: it is read chunk by chunk on every pass. A held-out
fraction (``holdout``) is drawn row by row with a seeded generator while streaming and kept in memory
(it must be scored by the final model).
"""

import time
from dataclasses import dataclass, field

import numpy as np

from .._estimator import is_classifier
from .._validation import check_sample_weight
from ..losses import loss_value

__all__ = ["TrainReport", "train_test_run", "infer_classes"]


@dataclass
class TrainReport:
    """What a training run measured; ``as_dict()`` is the ``--json`` object of ``streamlearn train``."""

    learner: str
    params: dict
    n_train: int
    n_features: int
    passes: int
    online_error_rate: float | None
    online_rmse: float | None
    average_loss: float
    train_seconds: float
    examples_per_second: float
    nnz_weights: int
    test: dict = field(default_factory=dict)
    progressive: object = None
    best_constant_error_rate: float | None = None
    best_constant_rmse: float | None = None

    def as_dict(self):
        out = {
            "learner": self.learner,
            "params": self.params,
            "n_train": self.n_train,
            "n_features": self.n_features,
            "passes": self.passes,
            "online_error_rate": self.online_error_rate,
            "online_rmse": self.online_rmse,
            "best_constant_error_rate": self.best_constant_error_rate,
            "best_constant_rmse": self.best_constant_rmse,
            "average_loss": self.average_loss,
            "train_seconds": self.train_seconds,
            "examples_per_second": self.examples_per_second,
            "nnz_weights": self.nnz_weights,
        }
        for key, value in self.test.items():
            out[f"test_{key}"] = value
        return {k: v for k, v in out.items() if v is not None}


def infer_classes(y):
    """Classes for a binary/multiclass stream from its first chunk's labels.

    Labels in {-1, +1} or {0, 1} are completed to both values (a first chunk may hold only one of
    them); other label sets are taken as they are: pass ``classes`` explicitly when a later chunk may
    bring a label the first one lacks.

    >>> infer_classes(np.array([1.0, 1.0])).tolist(), infer_classes(np.array([0, 2, 1])).tolist()
    ([-1.0, 1.0], [0, 1, 2])
    """
    labels = np.unique(y)
    if np.all(np.isin(labels, (-1, 1))):
        return np.array([-1.0, 1.0])
    if np.all(np.isin(labels, (0, 1))):
        return np.array([0.0, 1.0])
    return labels


def _xyw(chunk):
    """``(X, y, sample_weight or None)`` of an ``(X, y)`` or ``(X, y, sample_weight)`` chunk."""
    return chunk[0], chunk[1], (chunk[2] if len(chunk) > 2 else None)


def _split(stream, holdout, seed, held):
    rng = np.random.default_rng(seed)
    for chunk in stream:
        X, y, sw = _xyw(chunk)
        mask = rng.random(X.shape[0]) < holdout
        if mask.any():
            held.append((X[mask], y[mask]) if sw is None else (X[mask], y[mask], sw[mask]))
        keep = ~mask
        if keep.all():
            yield chunk
        elif keep.any():
            yield (X[keep], y[keep]) if sw is None else (X[keep], y[keep], sw[keep])


def score_stream(learner, stream):
    """Accuracy (classification) or RMSE / MAE (regression) and average loss of a fitted learner on a
    stream of ``(X, y)`` or ``(X, y, sample_weight)`` chunks, accumulated chunk by chunk. With importance
    weights, every metric is a weighted average (``n`` still counts rows); a ValueError when the weights of the
    examples all are 0. ``{}`` for a stream without examples."""
    n = 0
    total = 0.0
    correct = 0
    sq = 0.0
    ab = 0.0
    loss_sum = 0.0
    clf = is_classifier(learner)
    loss_name = learner._progressive_loss
    param = float(getattr(learner, "epsilon", 0.0) or 0.0)
    for chunk in stream:
        X, y, sw = _xyw(chunk)
        if X.shape[0] == 0:
            continue
        try:
            # the learners' own check: finite, non-negative, one per row, below 2**500 (else the sums overflow)
            w = np.ones(X.shape[0]) if sw is None else check_sample_weight(sw, X.shape[0])
            scores = learner._decision_function(X)
        except ValueError as exc:  # a refused row (weight or features): its place among the test examples (from 0)
            if getattr(exc, "row", None) is not None:
                exc.test_example = n + exc.row
            raise
        pred = learner.scores_to_labels(scores)
        n += X.shape[0]
        total += float(w.sum())
        if clf:
            correct += float(w @ (pred == y))
            loss_sum += float(w @ _ovr_loss(learner, loss_name, y, scores, param))
        else:
            r = pred - y
            sq += float(w @ (r * r))
            ab += float(w @ np.abs(r))
            loss_sum += float(w @ loss_value(loss_name, y, scores, param))
    if n == 0:
        return {}
    if not total > 0:
        raise ValueError(
            f"sample_weight: all {n} test examples have sample weight 0; the test metrics are averages weighted by "
            "them and need a positive total weight."
        )
    if clf:
        return {
            "n": n,
            "accuracy": correct / total,
            "error_rate": (total - correct) / total,  # k / n exactly for counts
            "average_loss": loss_sum / total,
        }
    return {"n": n, "rmse": float(np.sqrt(sq / total)), "mae": ab / total, "average_loss": loss_sum / total}


def _ovr_loss(learner, loss_name, y, scores, param):
    classes = learner.classes_
    if scores.ndim == 1:
        return loss_value(loss_name, np.where(y == classes[1], 1.0, -1.0), scores, param)
    targets = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    return loss_value(loss_name, targets, scores, param).mean(axis=1)


def train_test_run(
    learner,
    open_stream,
    *,
    name=None,
    params=None,
    passes=1,
    classes=None,
    test_stream=None,
    holdout=None,
    seed=0,
    progress=False,
    chunk_hook=None,
):
    """Train ``learner`` on the chunks of ``open_stream()`` (called once per pass) and score it.

    Parameters
    ----------
    learner : streamlearn estimator
    open_stream : callable returning an iterable of ``(X, y)`` or ``(X, y, sample_weight)`` chunks (a fresh
        one per pass)
    passes : int >= 1
        The first pass is progressive validation (honest online metrics); the others only train.
    classes : array-like or None
        Classification labels; None infers them from the first chunk (see :func:`infer_classes`).
    test_stream : callable returning an iterable of ``(X, y)`` chunks, or None
    holdout : float in (0, 1) or None
        Hold out this fraction of the training rows (same rows on every pass, drawn with ``seed``) and
        score on them. Exclusive with ``test_stream``.
    chunk_hook : callable or None
        ``chunk_hook(pass_index, chunk)`` after each training chunk is learnt (``chunk`` is its ``(X, y)`` or
        ``(X, y, sample_weight)``), and ``chunk_hook(pass_index, None)`` at the end of each pass (checkpoints
        are written from there).
    """
    from . import progressive_validation  # the evaluation package's public API

    if passes < 1:
        raise ValueError(f"passes must be >= 1; got {passes}.")
    if holdout is not None and not 0.0 < holdout < 1.0:
        raise ValueError(f"holdout must be a fraction in (0, 1); got {holdout}.")
    if holdout is not None and test_stream is not None:
        raise ValueError("Give either a test file or a holdout fraction, not both.")
    clf = is_classifier(learner)
    held = []

    def stream_for_pass(p):
        raw = open_stream()
        if holdout is not None:
            raw = _split(raw, holdout, seed, held if p == 0 else [])
        return raw if chunk_hook is None else _hooked(raw, p, chunk_hook)

    start = time.perf_counter()
    first = stream_for_pass(0)
    if clf and classes is None:
        first = _peek_classes(first)
        classes = next(first)
    result = progressive_validation(learner, first, classes=classes, progress=progress)
    n_train = int(result.n_examples)
    for p in range(1, passes):
        for chunk in stream_for_pass(p):
            X, y, sw = _xyw(chunk)
            if X.shape[0]:
                learner.partial_fit(X, y, sample_weight=sw)
    seconds = time.perf_counter() - start
    if n_train == 0:
        raise ValueError("The training data holds no examples.")
    test = {}
    if test_stream is not None:
        test = score_stream(learner, test_stream())
    elif holdout is not None:
        test = score_stream(learner, held)
    return TrainReport(
        learner=name or type(learner).__name__,
        params=params or {},
        n_train=n_train,
        n_features=int(learner.n_features_in_),
        passes=passes,
        online_error_rate=getattr(result, "online_error_rate", None) if clf else None,
        online_rmse=None if clf else getattr(result, "online_rmse", None),
        average_loss=float(result.average_loss),
        train_seconds=seconds,
        examples_per_second=n_train * passes / seconds if seconds > 0 else float("inf"),
        nnz_weights=int(learner.nnz_weights),
        test=test,
        progressive=result,
        best_constant_error_rate=result.best_constant_error_rate,
        best_constant_rmse=result.best_constant_rmse,
    )


def _hooked(stream, p, hook):
    """Yield the chunks of ``stream``; call ``hook(p, chunk)`` once a chunk has been learnt (when the next one
    is asked for) and ``hook(p, None)`` at the end."""
    previous = None
    for chunk in stream:
        if previous is not None:
            hook(p, previous)
        previous = chunk
        yield chunk
    if previous is not None:
        hook(p, previous)
    hook(p, None)


def _peek_classes(stream):
    """Generator that first yields the classes inferred from the first non-empty chunk, then all chunks."""
    it = iter(stream)
    buffered = []
    for chunk in it:
        buffered.append(chunk)
        if chunk[0].shape[0]:
            break
    labels = np.concatenate([c[1] for c in buffered]) if buffered else np.zeros(0)
    yield infer_classes(labels)
    yield from buffered
    yield from it
