"""Progressive validation (test-then-train): a generator core and a result-building wrapper.

Each example is scored by the model *before* the model learns from it (Algorithms §1), so the
online error rate and average loss are honest estimates of generalisation on a stream, with no held-out set.
The learners' kernels return these pre-update scores (``partial_fit_scores``), so one call per chunk does
both the scoring and the learning; everything here is vectorised over the chunk.
"""

import math
import numbers
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._signals import raise_if_interrupted
from .._validation import as_weights
from ._common import as_1d_labels, check_learner, example_losses, loss_spec, n_rows, signed_targets, task_of, to_builtin

__all__ = ["iter_progressive_validation", "progressive_validation", "ProgressiveResult", "iter_array_chunks"]

#: Rows per ``partial_fit_scores`` call when an in-memory ``(X, y)`` pair is chunked for you.
DEFAULT_CHUNK_SIZE = 65_536
#: Default upper bound on the number of points kept for the online-error curve.
DEFAULT_CURVE_POINTS = 2_000


# ---------------------------------------------------------------------------------------------------------
# streams
def iter_array_chunks(
    X: Any, y: Any, sample_weight: Any = None, *, chunk_size: int = DEFAULT_CHUNK_SIZE
) -> Iterator[tuple]:
    """Cut an in-memory ``(X, y)`` into consecutive row chunks, for the progressive-validation functions.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Examples, in stream order.
    y : array-like of shape (n_samples,)
        Labels (classification) or targets (regression).
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Per-example weights, cut like ``y``; ``None`` yields 2-tuples.
    chunk_size : int >= 1, default=65536
        Rows per chunk (the last chunk may be shorter).

    Yields
    ------
    chunk : tuple
        ``(X_chunk, y_chunk)`` or ``(X_chunk, y_chunk, sample_weight_chunk)``.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.evaluation import iter_array_chunks
    >>> [Xc.shape[0] for Xc, yc in iter_array_chunks(np.zeros((10, 2)), np.zeros(10), chunk_size=4)]
    [4, 4, 2]
    """
    _check_chunk_size(chunk_size)
    n = n_rows(X)
    y = as_1d_labels(y, n)
    if sp.issparse(X):
        X = X.tocsr()
    elif not hasattr(X, "shape"):
        X = np.asarray(X)
    if sample_weight is not None:
        sample_weight = as_weights(sample_weight)
        if sample_weight.ndim == 0:
            sample_weight = np.full(n, float(sample_weight))
        as_1d_labels(sample_weight, n, what="sample_weight")
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        if sample_weight is None:
            yield X[start:stop], y[start:stop]
        else:
            yield X[start:stop], y[start:stop], sample_weight[start:stop]


def _check_chunk_size(chunk_size):
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an int in the range [1, inf). Got {chunk_size!r} instead.")


def _is_array_pair(stream):
    """True for ``(X, y)`` / ``(X, y, sample_weight)`` whose X is 2-D (ndarray, sparse matrix, DataFrame, ...).

    A stream of chunks never matches: its first element is a chunk tuple, which has no 2-D ``shape``.
    """
    return isinstance(stream, (tuple, list)) and len(stream) in (2, 3) and len(getattr(stream[0], "shape", ())) == 2


def _chunks(stream, chunk_size):
    if _is_array_pair(stream):
        return iter_array_chunks(*stream, chunk_size=chunk_size)
    try:
        return iter(stream)
    except TypeError:
        raise TypeError(
            f"stream must be an iterable of (X, y) or (X, y, sample_weight) chunks, or one such tuple "
            f"of arrays; got {type(stream).__name__}."
        ) from None


def _unpack(chunk, i):
    if not isinstance(chunk, (tuple, list)) or len(chunk) not in (2, 3):
        got = f"a {type(chunk).__name__} of length {len(chunk)}" if hasattr(chunk, "__len__") else type(chunk).__name__
        raise ValueError(f"chunk {i} of the stream must be a tuple (X, y) or (X, y, sample_weight); got {got}.")
    return (chunk[0], chunk[1], chunk[2] if len(chunk) == 3 else None)


# ---------------------------------------------------------------------------------------------------------
# checkpoint schedules: f(lo, hi) -> the checkpoint counts c with lo < c <= hi, increasing
def _doubling(lo, hi):
    c = 1 if lo == 0 else 1 << int(lo).bit_length()
    out = []
    while c <= hi:
        out.append(c)
        c <<= 1
    return out


def _make_schedule(checkpoints):
    if isinstance(checkpoints, str):
        if checkpoints == "doubling":
            return _doubling
        raise ValueError(
            f"checkpoints must be 'doubling', an int >= 1, a sequence of ints >= 1 or None. "
            f"Got {checkpoints!r} instead."
        )
    if checkpoints is None:
        return lambda lo, hi: ()
    if isinstance(checkpoints, numbers.Integral) and not isinstance(checkpoints, bool):
        step = int(checkpoints)
        if step < 1:
            raise ValueError(f"checkpoints must be an int in the range [1, inf) when an int. Got {step} instead.")
        return lambda lo, hi: range((lo // step + 1) * step, hi + 1, step)
    try:
        points = np.asarray(checkpoints)
    except Exception:  # pragma: no cover - exotic objects
        points = None
    if points is None or points.ndim != 1 or not (points.size == 0 or np.issubdtype(points.dtype, np.integer)):
        raise ValueError(
            f"checkpoints must be 'doubling', an int >= 1, a sequence of ints >= 1 or None. "
            f"Got {checkpoints!r} instead."
        )
    if points.size and points.min() < 1:
        raise ValueError(f"checkpoints must be example counts >= 1; got {int(points.min())}.")
    points = np.unique(points.astype(np.int64))

    def schedule(lo, hi):
        return points[np.searchsorted(points, lo, side="right") : np.searchsorted(points, hi, side="right")].tolist()

    return schedule


# ---------------------------------------------------------------------------------------------------------
# accumulation
class _Curve:
    """Cumulative totals at evenly spaced example counts, at most ``cap`` points in O(cap) memory.

    Points sit at multiples of ``stride``; when they would exceed ``cap``, ``stride`` doubles and every other
    point is dropped, so the curve always holds between cap/2 and cap evenly spaced points (plus the final one).
    """

    def __init__(self, cap):
        self.cap = int(cap)
        self.stride = 1
        self.n = np.zeros(0, dtype=np.int64)
        self.loss = np.zeros(0)
        self.err = np.zeros(0)
        self.w = np.zeros(0)

    def add(self, start, cum_loss, cum_err, cum_w):
        end = start + cum_loss.shape[0] - 1
        while self.n.shape[0] + (end // self.stride - start // self.stride) > self.cap:
            self.stride *= 2
            keep = self.n % self.stride == 0
            self.n, self.loss, self.err, self.w = self.n[keep], self.loss[keep], self.err[keep], self.w[keep]
        pos = np.arange((start // self.stride + 1) * self.stride, end + 1, self.stride, dtype=np.int64)
        j = pos - start
        self.n = np.concatenate((self.n, pos))
        self.loss = np.concatenate((self.loss, cum_loss[j]))
        self.err = np.concatenate((self.err, np.asarray(cum_err[j], dtype=np.float64)))
        self.w = np.concatenate((self.w, cum_w[j]))


def _div(a, b):
    return a / b if b > 0 else math.nan


class _Constant:
    """The best constant prediction of a pass, in hindsight, as Vowpal Wabbit reports it: the label with the
    largest sum of weights (classification) or the weighted mean (regression), and its error rate or RMSE
    over the same examples. Label weights, or the weighted mean and sum of squared deviations (merged chunk
    by chunk with the pairwise update of Chan, Golub & LeVeque), in O(n_classes) memory."""

    def __init__(self, task):
        self.classification = task == "classification"
        self.label_weight: dict = {}
        self.weight = 0.0
        self.mean = 0.0
        self.m2 = 0.0

    def update(self, y, weights, classes=None):
        """Add a chunk's labels ``y`` with their ``weights``; ``classes``: the learner's sorted labels, which
        (when they hold every label of ``y``) spare a sort of the chunk."""
        if self.classification:
            labels = None
            if classes is not None and len(classes):
                index = np.minimum(np.searchsorted(classes, y), len(classes) - 1)
                if np.array_equal(classes[index], y):
                    labels = classes
            if labels is None:
                labels, index = np.unique(y, return_inverse=True)
            sums = np.bincount(index.ravel(), weights=weights, minlength=len(labels))
            for label, w in zip(labels.tolist(), sums.tolist()):
                if w:
                    self.label_weight[label] = self.label_weight.get(label, 0.0) + w
            return
        w = float(np.sum(weights))
        if w <= 0.0:
            return
        yf = np.asarray(y, dtype=np.float64)
        mean = float(np.dot(weights, yf)) / w
        m2 = float(np.dot(weights, (yf - mean) ** 2))
        total = self.weight + w
        delta = mean - self.mean
        self.m2 += m2 + delta * delta * self.weight * w / total
        self.mean += delta * w / total
        self.weight = total

    def result(self):
        """``(constant, error rate or RMSE)``; ``(None, None)`` before any weight."""
        if self.classification:
            total = sum(self.label_weight.values())
            if total <= 0.0:
                return None, None
            label = max(self.label_weight, key=self.label_weight.__getitem__)
            return label, max(0.0, (total - self.label_weight[label]) / total)  # k / n exactly for counts
        if self.weight <= 0.0:
            return None, None
        return self.mean, math.sqrt(max(self.m2, 0.0) / self.weight)


class _Accumulator:
    """Running totals of a progressive pass; turns per-example arrays into checkpoint rows by cumulative sums.

    Losses and mistakes arrive multiplied by the examples' importance weights, and every average divides by
    the sum of weights (with unit weights: by the number of examples, as before)."""

    def __init__(self, task, schedule, *, curve_points=None, t0=None):
        self.task = task
        self.schedule = schedule
        self.t0 = time.perf_counter() if t0 is None else t0
        self.n = 0
        self.loss = 0.0  # cumulative loss
        self.err = 0 if task == "classification" else 0.0  # mistakes, or cumulative squared error
        self.weight = 0.0
        self.prev = (0, 0.0, self.err, 0.0)  # (n, loss, err, weight) at the previous checkpoint
        self.label = self.pred = None
        self.curve = _Curve(curve_points) if curve_points else None
        self.constant = _Constant(task)

    def update(self, losses, errs, weights, y, preds, classes=None):
        """Add one chunk of per-example values; return the checkpoint rows that fall inside it."""
        # Prepending the running total keeps the summation order sequential across chunks, so the totals
        # (and every checkpoint) are bit-for-bit independent of how the stream is chunked.
        cum_loss = np.cumsum(np.concatenate(([self.loss], losses)))
        if self.task == "classification" and errs.dtype.kind in "biu" and isinstance(self.err, int):
            cum_err = np.concatenate(([0], np.cumsum(errs, dtype=np.int64))) + self.err
        else:
            cum_err = np.cumsum(np.concatenate(([self.err], errs)))
        cum_w = np.cumsum(np.concatenate(([self.weight], weights)))
        if not np.isfinite(cum_loss[-1]) or not np.isfinite(cum_err[-1]):
            bad = int(np.flatnonzero(~np.isfinite(cum_loss) | ~np.isfinite(cum_err))[0])
            raise FloatingPointError(
                f"The progressive loss is not finite at example {self.n + bad} of the stream (its pre-update score "
                "overflowed the loss); the learner is diverging: lower its step size or scale the features."
            )
        rows = []
        for c in self.schedule(self.n, self.n + losses.shape[0]):
            j = int(c) - self.n
            rows.append(self._row(int(c), float(cum_loss[j]), cum_err[j], float(cum_w[j]), y[j - 1], preds[j - 1]))
        if self.curve is not None:
            self.curve.add(self.n, cum_loss, cum_err, cum_w)
        self.n += losses.shape[0]
        self.loss = float(cum_loss[-1])
        self.err = cum_err[-1].item()
        self.weight = float(cum_w[-1])
        self.label, self.pred = y[-1], preds[-1]
        self.constant.update(y, weights, classes)
        return rows

    def final_row(self):
        """The row at the last example, unless it already was a checkpoint (or the stream was empty)."""
        if self.n == 0 or self.prev[0] == self.n:
            return None
        return self._row(self.n, self.loss, self.err, self.weight, self.label, self.pred)

    def _row(self, c, loss, err, weight, label, pred):
        _, ploss, perr, pw = self.prev
        dw = weight - pw
        row = {
            "n_examples": c,
            "sum_weights": weight,
            "average_loss": _div(loss, weight),
            "since_last_loss": _div(loss - ploss, dw),
            "cumulative_loss": loss,
        }
        if self.task == "classification":
            err = int(err) if isinstance(err, (int, np.integer)) else float(err)
            row.update(error_rate=_div(err, weight), since_last_error_rate=_div(err - perr, dw), n_mistakes=err)
        else:
            err = float(err)
            row.update(rmse=math.sqrt(_div(err, weight)), since_last_rmse=math.sqrt(max(_div(err - perr, dw), 0.0)))
        row.update(label=to_builtin(label), prediction=to_builtin(pred), seconds=time.perf_counter() - self.t0)
        self.prev = (c, loss, err, weight)
        return row

    def curve_arrays(self):
        """The online curve as arrays (``n_examples``, ``average_loss``, ``error_rate`` or ``rmse``)."""
        metric = "error_rate" if self.task == "classification" else "rmse"
        if self.curve is None:
            return {"n_examples": np.zeros(0, dtype=np.int64), "average_loss": np.zeros(0), metric: np.zeros(0)}
        n, loss, err, w = self.curve.n, self.curve.loss, self.curve.err, self.curve.w
        if self.n and (n.shape[0] == 0 or n[-1] != self.n):
            n = np.append(n, self.n)
            loss = np.append(loss, self.loss)
            err = np.append(err, float(self.err))
            w = np.append(w, self.weight)
        with np.errstate(divide="ignore", invalid="ignore"):
            val = err / w if self.task == "classification" else np.sqrt(err / w)
            return {"n_examples": n, "average_loss": loss / w, metric: val}


def _run(learner, chunks, acc, *, classes, name, param, on_chunk=None):
    """The loop shared by the generator and the wrapper: one ``partial_fit_scores`` call per chunk."""
    classification = acc.task == "classification"
    for i, chunk in enumerate(chunks):
        raise_if_interrupted()  # a Ctrl-C of the command line that a library discarded stops at the next chunk
        X, y, sw = _unpack(chunk, i)
        n = n_rows(X, what=f"X of chunk {i}")
        if n == 0:
            continue
        y = as_1d_labels(y, n, what=f"y of chunk {i}", rows_what=f"X of chunk {i}")
        cls = classes
        if classification and cls is None and not hasattr(learner, "classes_"):
            cls = np.unique(y)
            if cls.shape[0] < 2:
                raise ValueError(
                    f"classes=None and the first chunk of the stream holds only the labels {cls.tolist()}: pass "
                    "classes=[...] (every label of the stream) to the progressive-validation function."
                )
        try:
            scores = np.asarray(learner.partial_fit_scores(X, y, classes=cls, sample_weight=sw))
        except (ValueError, FloatingPointError) as exc:  # a refused or diverging row: its place in the stream (from 0)
            if getattr(exc, "row", None) is not None:
                exc.example = acc.n + exc.row
            elif type(exc) is ValueError:  # a refused chunk (its width, its labels): where it is in the stream
                where = f"examples {acc.n} to {acc.n + n - 1}" if n > 1 else f"example {acc.n}"
                err = ValueError(f"chunk {i} of the stream ({where}, counted from 0): {exc}")
                err.reason, err.chunk = str(exc), i  # (for a caller that names the stream otherwise)
                raise err from None
            raise
        preds = np.asarray(learner.scores_to_labels(scores))
        with np.errstate(over="ignore"):  # an overflowing loss is caught, with a message, by acc.update
            if classification:
                targets = signed_targets(learner.classes_, y, what=f"y of chunk {i}")
                errs = preds != y
            else:
                targets = y.astype(np.float64)
                errs = (scores - targets) ** 2
            losses = example_losses(name, param, targets, scores)
        if sw is None:
            weights = np.ones(n)
        else:
            weights = np.broadcast_to(np.asarray(sw, dtype=np.float64), (n,))
            if not np.all(weights == 1.0):  # importance weights scale each loss and mistake, as in VW
                losses = losses * weights
                errs = errs * weights
        yield from acc.update(losses, errs, weights, y, preds, learner.classes_ if classification else None)
        if on_chunk is not None:
            on_chunk(n)
    row = acc.final_row()
    if row is not None:
        yield row


def _prepare(learner, checkpoints, chunk_size):
    check_learner(learner)
    _check_chunk_size(chunk_size)
    schedule = _make_schedule(checkpoints)
    name, param = loss_spec(learner)
    return task_of(learner), schedule, name, param


# ---------------------------------------------------------------------------------------------------------
# public API
def iter_progressive_validation(
    learner: Any,
    stream: Any,
    *,
    classes: Any = None,
    checkpoints: Any = "doubling",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> Iterator[dict]:
    """Progressive validation as a generator of VW-style checkpoint rows (test-then-train on a stream).

    Every example is scored by the model *before* the model learns from it, so the running error rate and
    loss estimate generalisation without a held-out set. The learner is updated in place (pass
    ``sklearn.base.clone(learner)`` for a fresh run). Each chunk costs one ``partial_fit_scores`` call,
    which returns the pre-update scores from inside the learner's kernel; the checkpoints, which fall inside
    chunks, are read off cumulative sums over the chunk, so the rows do not depend on the chunking.

    The rows are exactly those of this per-example loop (river style), without its Python iteration per
    example::

        n = mistakes = 0; total_loss = 0.0; last = (0, 0.0, 0)
        for x_t, y_t in examples:                        # in stream order
            z_t = learner.decision_function(x_t)         # model BEFORE y_t is revealed (w = 0 at t = 1)
            mistakes += learner.scores_to_labels(z_t) != y_t
            total_loss += loss(target(y_t), z_t)         # the learner's own loss, see below
            learner.partial_fit(x_t, y_t, classes=classes)
            n += 1
            if n in (1, 2, 4, 8, ...) or x_t was the last example:
                yield {"n_examples": n, "average_loss": total_loss / n,
                       "since_last_loss": (total_loss - last[1]) / (n - last[0]),
                       "error_rate": mistakes / n, ...}
                last = (n, total_loss, mistakes)

    Parameters
    ----------
    learner : streamlearn online learner
        Any estimator with ``partial_fit_scores``, ``scores_to_labels`` and ``_progressive_loss`` (the
        contract of :mod:`streamlearn.base`). Classifiers are detected with ``sklearn.base.is_classifier``.
    stream : iterable of tuples, or one tuple of arrays
        Chunks ``(X, y)`` or ``(X, y, sample_weight)`` in stream order (e.g. from a chunked LIBSVM reader);
        a single tuple whose ``X`` is 2-D (ndarray, sparse matrix) is cut with :func:`iter_array_chunks`.
        Importance weights count in the averages as in Vowpal Wabbit: losses and mistakes are summed with
        their weights and divided by the sum of weights.
    classes : array-like or None, default=None
        Every label of the stream (classification). ``None``: the learner's ``classes_`` if it has already
        been fitted, else the labels of the first chunk (a label first seen later raises ``ValueError``).
    checkpoints : "doubling", int >= 1, sequence of ints >= 1, or None, default="doubling"
        When to report: at example counts 1, 2, 4, 8, ... (as Vowpal Wabbit); every ``k`` examples; at the
        given counts; or only at the end. The last example always gets a row.
    chunk_size : int >= 1, default=65536
        Rows per ``partial_fit_scores`` call when ``stream`` is one ``(X, y)`` tuple; ignored otherwise.

    Yields
    ------
    row : dict
        ``n_examples`` (examples seen), ``sum_weights`` (sum of sample weights so far), ``average_loss``
        and ``cumulative_loss`` (so far), ``since_last_loss`` (average over the examples since the previous
        row); classification: ``error_rate``, ``since_last_error_rate``, ``n_mistakes``; regression:
        ``rmse``, ``since_last_rmse``; ``label`` and ``prediction`` of the row's last example; ``seconds``
        since the start (taken when the row is produced, i.e. after its chunk was learnt). An average over
        examples whose weights sum to 0 (weight-0 examples only, so far or since the previous row) has no
        value: it is NaN (``n.a.`` in :meth:`ProgressiveResult.format_table`, as Vowpal Wabbit prints it;
        null in ``streamlearn evaluate --json``).

    Notes
    -----
    The loss is the learner's own (``_progressive_loss``, from :mod:`streamlearn.losses`, with the
    learner's ``epsilon`` for the epsilon-insensitive loss), on targets -1/+1 (``classes_[1]`` is +1).
    With K > 2 classes (one-vs-rest), an example's loss is the **mean of the K binary one-vs-rest losses**.
    Importance weights count in the averages as in Vowpal Wabbit: each loss and mistake is multiplied by
    its example's weight and the sums are divided by the sum of weights (with unit weights, by the number
    of examples: Algorithms §1's online error rate). An example of weight 0 is scored and changes nothing;
    a row whose examples so far all have weight 0 has NaN averages, and :func:`progressive_validation`
    refuses a stream whose weights are all 0.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.evaluation import iter_progressive_validation
    >>> from streamlearn.linear_model import Perceptron
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 2)); y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    >>> for row in iter_progressive_validation(Perceptron(), (X, y), classes=[-1, 1]):
    ...     print(row["n_examples"], row["n_mistakes"])
    1 1
    2 2
    4 2
    8 2
    16 2
    32 6
    64 14
    100 14
    """
    task, schedule, name, param = _prepare(learner, checkpoints, chunk_size)
    acc = _Accumulator(task, schedule)
    return _run(learner, _chunks(stream, chunk_size), acc, classes=classes, name=name, param=param)


@dataclass
class ProgressiveResult:
    """Outcome of :func:`progressive_validation`.

    Attributes
    ----------
    learner : str
        Class name of the learner.
    task : {"classification", "regression"}
    loss : str
        Name of the loss averaged (see :mod:`streamlearn.losses`).
    n_examples : int
        Examples seen.
    sum_weights : float
        Sum of the sample weights (``n_examples`` without weights).
    average_loss, cumulative_loss : float
        Weighted mean and weighted sum of the per-example pre-update losses (importance weights, see
        :func:`iter_progressive_validation`; with unit weights, the plain mean and sum).
    online_error_rate : float or None
        Weighted fraction of examples misclassified before their update (classification; None for
        regression).
    online_rmse : float or None
        Root weighted mean squared pre-update error (regression; None for classification).
    n_mistakes : int, float or None
        Online mistakes (classification), summed with their weights (an int with unit weights).
    checkpoints : list of dict
        The rows of :func:`iter_progressive_validation`.
    curve : dict of ndarray
        ``n_examples``, ``average_loss`` and ``error_rate`` (or ``rmse``): the running values at up to
        ``curve_points`` evenly spaced example counts plus the last one (O(curve_points) memory).
    seconds : float
        Wall-clock time of the pass (learning and evaluating).
    examples_per_second : float
    nnz_weights : int or None
        Non-zero weights of the learner after the pass (when it counts them).
    best_constant : label, float or None
        The best constant prediction in hindsight, as Vowpal Wabbit reports it: the label with the largest
        sum of weights in the pass (classification) or the weighted mean label (regression).
    best_constant_error_rate : float or None
        The weighted error rate of always predicting ``best_constant`` (classification). An
        ``online_error_rate`` above it means the learner did worse than a constant on this stream.
    best_constant_rmse : float or None
        The weighted RMSE of always predicting ``best_constant`` (regression).

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.evaluation import progressive_validation
    >>> from streamlearn.linear_model import OGDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 2)); y = X @ [2.0, -1.0] + 0.5
    >>> result = progressive_validation(OGDRegressor(eta0=0.1), (X, y))
    >>> result.task, result.loss, result.n_examples, result.online_error_rate
    ('regression', 'squared', 1000, None)
    >>> print(result.format_table())  # doctest: +ELLIPSIS
    average    since      online     since             example        example   current   current
    loss       last       rmse       last              counter         weight     label   predict
    ...
    online rmse = 0.22...
    total seconds = ...
    """

    learner: str
    task: str
    loss: str
    n_examples: int
    sum_weights: float
    average_loss: float
    cumulative_loss: float
    online_error_rate: float | None
    online_rmse: float | None
    n_mistakes: int | None
    checkpoints: list = field(repr=False)
    curve: dict = field(repr=False)
    seconds: float = 0.0
    examples_per_second: float = 0.0
    nnz_weights: int | None = None
    best_constant: Any = None
    best_constant_error_rate: float | None = None
    best_constant_rmse: float | None = None

    @property
    def metric_name(self) -> str:
        """``"online_error_rate"`` (classification) or ``"online_rmse"`` (regression)."""
        return "online_error_rate" if self.task == "classification" else "online_rmse"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of every field (curve arrays as lists)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["checkpoints"] = [dict(r) for r in self.checkpoints]
        out["curve"] = {k: np.asarray(v).tolist() for k, v in self.curve.items()}
        return out

    def format_table(self) -> str:
        """The checkpoints as an aligned text table in the style of Vowpal Wabbit's progress output, with a
        summary underneath."""
        from ._report import format_table

        return format_table(self)

    def plot(self, path_or_ax: Any, *, logx: bool = False) -> Any:
        """Plot the online error rate (or RMSE) against examples seen.

        ``path_or_ax`` is a file path (a PNG is written with matplotlib's Agg canvas, no display needed;
        the path is returned) or a matplotlib Axes to draw on (returned). ``logx`` puts examples on a log scale.
        """
        from ._report import plot

        return plot(self, path_or_ax, logx=logx)


def progressive_validation(
    learner: Any,
    stream: Any,
    *,
    classes: Any = None,
    checkpoints: Any = "doubling",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: bool = False,
    curve_points: int = DEFAULT_CURVE_POINTS,
) -> "ProgressiveResult":
    """Run progressive validation over a whole stream and return a :class:`ProgressiveResult`.

    A wrapper around :func:`iter_progressive_validation` (see there for the definition, the equivalent
    per-example loop and the loss conventions) that also times the pass, keeps a bounded-memory online
    curve for plotting, and can show a progress bar. The learner is updated in place.

    Parameters
    ----------
    learner : streamlearn online learner
        As in :func:`iter_progressive_validation`.
    stream : iterable of tuples, or one tuple of arrays
        As in :func:`iter_progressive_validation`.
    classes : array-like or None, default=None
        As in :func:`iter_progressive_validation`.
    checkpoints : "doubling", int >= 1, sequence of ints >= 1, or None, default="doubling"
        As in :func:`iter_progressive_validation`.
    chunk_size : int >= 1, default=65536
        Rows per call when ``stream`` is one ``(X, y)`` tuple.
    progress : bool, default=False
        Show a tqdm progress bar on stderr (automatically off when stderr is not a terminal).
    curve_points : int >= 2, default=2000
        Maximum number of evenly spaced points kept for ``result.curve`` (memory is O(curve_points), never
        O(n_examples)).

    Returns
    -------
    result : ProgressiveResult

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.evaluation import progressive_validation
    >>> from streamlearn.linear_model import OGDClassifier
    >>> X, y, _, _ = load_a9a()
    >>> result = progressive_validation(OGDClassifier(), (X, y), classes=[-1, 1])
    >>> result.n_examples, [row["n_examples"] for row in result.checkpoints][:5]
    (32561, [1, 2, 4, 8, 16])
    >>> print(f"online error {result.online_error_rate:.3f}, average logistic loss {result.average_loss:.3f}")
    online error 0.16..., average logistic loss 0.3...
    """
    task, schedule, name, param = _prepare(learner, checkpoints, chunk_size)
    if isinstance(curve_points, bool) or not isinstance(curve_points, numbers.Integral) or curve_points < 2:
        raise ValueError(f"curve_points must be an int in the range [2, inf). Got {curve_points!r} instead.")
    t0 = time.perf_counter()
    acc = _Accumulator(task, schedule, curve_points=curve_points, t0=t0)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        total = n_rows(stream[0]) if _is_array_pair(stream) else None
        bar = tqdm(total=total, unit=" examples", unit_scale=True, disable=None, desc=type(learner).__name__)
    try:
        rows = list(
            _run(
                learner,
                _chunks(stream, chunk_size),
                acc,
                classes=classes,
                name=name,
                param=param,
                on_chunk=None if bar is None else bar.update,
            )
        )
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - t0
    if acc.n == 0:
        raise ValueError("The stream yielded no examples: progressive validation needs at least one row.")
    if not acc.weight > 0.0:
        raise ValueError(
            f"sample_weight: all {acc.n} examples of the stream have sample weight 0; progressive validation "
            "averages the losses weighted by them and needs a positive total weight."
        )
    classification = task == "classification"
    constant, constant_metric = acc.constant.result()
    return ProgressiveResult(
        learner=type(learner).__name__,
        task=task,
        loss=name,
        n_examples=acc.n,
        sum_weights=acc.weight,
        average_loss=_div(acc.loss, acc.weight),
        cumulative_loss=acc.loss,
        online_error_rate=_div(acc.err, acc.weight) if classification else None,
        online_rmse=None if classification else math.sqrt(_div(acc.err, acc.weight)),
        n_mistakes=(int(acc.err) if isinstance(acc.err, (int, np.integer)) else float(acc.err))
        if classification
        else None,
        checkpoints=rows,
        curve=acc.curve_arrays(),
        seconds=seconds,
        examples_per_second=acc.n / seconds if seconds > 0 else float("inf"),
        nnz_weights=int(learner.nnz_weights) if hasattr(learner, "nnz_weights") else None,
        best_constant=to_builtin(constant),
        best_constant_error_rate=constant_metric if classification else None,
        best_constant_rmse=None if classification else constant_metric,
    )
