"""fit_mixing: iterative parameter mixing of online learners over the partitions of a Dask cluster."""

import copy
import numbers
import time
import uuid
from typing import Any

import numpy as np
from sklearn.base import clone

from .._typing import ArrayLike, RandomStateLike
from .._validation import check_rng, label_kind, label_text, labels_of_one_kind, labels_text, validate_params
from ..base import OnlineClassifierMixin
from ._adapters import mixer_for, supported_learners
from ._client import collect, resolve_client, scheduler_kept
from ._tasks import blas_limits, check_partitions, check_widths, data_futures

__all__ = ["fit_mixing", "supported_learners"]


def _labels(part, data):
    seen = set()
    for _, y in part.load(data):
        if y is not None:
            seen.update(np.unique(labels_of_one_kind(y, f"{part.describe()}: y")).tolist())
    return seen


def _all_classes(found, parts):
    """The sorted union of the partitions' label sets ``found``; a ValueError naming two partitions whose labels
    are of different kinds (numbers and strings do not sort into one set of classes; booleans and numbers would
    merge into three classes, False and True being 0 and 1)."""
    kinds = [", ".join(sorted({label_kind(v) for v in labels})) for labels in found]
    learnt = [k for k, labels in enumerate(found) if labels]
    k = next((k for k in learnt if kinds[k] != kinds[learnt[0]]), None)
    if k is None:
        return np.array(sorted(set().union(*found)))
    k0 = learnt[0]
    raise ValueError(
        f"fit_mixing: the labels of {parts[k].describe()} are of kind {kinds[k]}, those of {parts[k0].describe()} of "
        f"kind {kinds[k0]}; expected labels of one kind (all numbers, all strings or all booleans) in every partition."
    )


def _located(exc, part, before, order):
    """``exc`` (raised by the learner on a chunk of ``part``) naming the partition and the example when it is
    about one row (``_validation.row_error``): "FILE, line N: REASON" for a LIBSVM file partition, "PARTITION:
    example N: REASON" otherwise; ``before`` rows of the pass came before the chunk, whose rows were visited in
    ``order`` (None: stored order). Any other error is returned as it is."""
    row, reason = getattr(exc, "row", None), getattr(exc, "reason", None)
    if row is None or reason is None:
        return exc
    from ..datasets._readers import example_message
    from ..datasets._spec import InputSpec

    example = before + int(row if order is None else order[row])
    path = part.payload if part.kind == "file" else None
    out = type(exc)(example_message(path, InputSpec(format="libsvm"), example, reason, part.describe()))
    out.row, out.reason = row, reason
    return out


def _refuse_unknown_labels(y, classes, part, before, order):
    """A label of the chunk ``y`` outside ``classes`` is a ValueError naming the partition and the example, as
    :func:`_located` names a row the learner refuses (the learner's own message named neither)."""
    bad = ~np.isin(y, classes)
    if not bad.any():
        return
    row = int(np.argmax(bad))
    exc = ValueError()
    exc.row, exc.reason = (
        row,
        (
            f"label {label_text(y[row])} is not one of the classes {labels_text(classes)} of the mixed model "
            "(fit_mixing's classes; on the command line, those of the first chunk of the first DATA file)"
        ),
    )
    raise _located(exc, part, before, order)


def _local_passes(template, start, part, data, passes, classes, seed, blas_threads):
    """One partition's share of a round (runs on a worker): ``passes`` passes from ``start``. The progressive
    error counts the examples of the first pass that yields rows (a loader may yield none on a pass), each
    predicted before its update: every example learnt from was so validated once, and a round that learnt from
    examples always has a progressive error."""
    with blas_limits(blas_threads):
        # the scattered start model may be shared by several tasks of this worker: never mutate it
        est = clone(template) if start is None else copy.deepcopy(start)
        rng = None if seed is None else np.random.default_rng(seed)
        is_clf = isinstance(est, OnlineClassifierMixin)
        n = n_first = 0
        err = 0.0
        for _ in range(passes):
            first_visit = n == 0
            before = 0  # rows of this pass before the chunk
            for X, y in part.load(data):
                if y is None:
                    raise ValueError(f"{part.describe()}: no labels (y is None); fit_mixing needs (X, y) chunks.")
                if X.shape[0] == 0:
                    continue
                order = None
                if rng is not None:
                    order = rng.permutation(X.shape[0])
                    X, y = X[order], y[order]
                if is_clf and classes is not None:
                    _refuse_unknown_labels(y, classes, part, before, order)
                try:
                    scores = est.partial_fit_scores(X, y, classes=classes) if is_clf else est.partial_fit_scores(X, y)
                except (ValueError, FloatingPointError) as exc:
                    raise _located(exc, part, before, order) from None
                if first_visit:
                    n_first += X.shape[0]
                    if is_clf:
                        err += float(np.sum(est.scores_to_labels(scores) != y))
                    else:
                        err = _squared_errors(err, scores, y, part, before, order)
                before += X.shape[0]
                n += X.shape[0]
    return (est if n else None), n, n_first, err


def _squared_errors(total, scores, y, part, before, order):
    """``total`` plus the chunk's squared errors of the pre-update ``scores`` against the targets ``y`` (numbers, or
    the strings of numbers the learner took); a FloatingPointError naming the example whose error makes the sum
    overflow (the progressive MSE would be infinite), as progressive validation does."""
    with np.errstate(over="ignore", invalid="ignore"):
        sq = (np.asarray(scores, dtype=np.float64) - np.asarray(y, dtype=np.float64)) ** 2
        cum = np.cumsum(np.concatenate(([total], sq)))  # in stream order, as progressive validation sums
    if np.isfinite(cum[-1]):
        return float(cum[-1])
    exc = FloatingPointError()
    exc.row, exc.reason = (
        int(np.argmin(np.isfinite(cum[1:]))),
        "the squared error of this example's pre-update score overflows the progressive MSE; the learner is "
        "diverging: lower its step size, or scale the features or the targets",
    )
    raise _located(exc, part, before, order)


def fit_mixing(
    learner: Any,
    partitions: Any,
    client: Any = None,
    *,
    rounds: int = 5,
    passes: int = 1,
    classes: ArrayLike | None = None,
    random_state: RandomStateLike = None,
    verbose: bool = False,
    blas_threads: int = 1,
) -> Any:
    """Train ``learner`` by iterative parameter mixing over the partitions (McDonald et al., 2010).

    Round r: the current model is broadcast to the workers (``client.scatter``); every partition is one
    task that makes ``passes`` passes over its chunks with ``partial_fit``, starting from that model (a
    fresh clone of ``learner`` in round 1); the partitions' models are gathered and combined on the client,
    weighted by the number of examples each learnt from. What "combined" means depends on the learner
    family (each estimator class defines how its models are mixed, :func:`supported_learners` lists them):

    * first-order linear learners (Perceptron, PassiveAggressive*, OGD*): ``coef_`` and ``intercept_``
      averaged; Perceptron's ``radius_`` is the largest over the partitions;
    * SimpleTruncation*, TruncatedGradient*, FOBOS*: the weights averaged after each partition's model applied
      its pending (lazy) truncations;
    * RDA*: the partitions' mean gradients ``G / t`` averaged, times the total ``t_``;
    * FTRLProximal*: ``z`` and ``n`` averaged (a coordinate stays an exact zero when the averaged ``|z|``
      is within ``l1``);
    * AdaGrad: ``coef_`` and the squared-gradient sums averaged;
    * SketchedOnlineNewton (FD, PFD, RFD sketches): ``coef_`` averaged; the sketches merged as the start's
      ``B^T B`` plus every partition's increment (the shared starting sketch counts once), shrunk to
      ell - 1 rows; RFD's alpha follows the RFD merge rule.

    In every family ``t_`` becomes the total number of examples seen, which drives the step schedules. A round
    in which only one partition holds examples keeps that partition's model as it is: with one partition (and
    ``random_state=None``), the result is the model of ``rounds * passes`` sequential passes of ``partial_fit``
    over its chunks, bit for bit.

    Deviation from McDonald et al.: they mix perceptrons uniformly or by mistakes; here every family is
    weighted by examples (the partitions may differ in size), and the second-order and sparse learners'
    extra state is combined as listed above.

    Parameters
    ----------
    learner : online learner
        A supported streamlearn learner (unfitted, or fitted: only its parameters are used).
    partitions : list of Partition, or anything :func:`as_partitions` accepts
        One task per partition per round. Chunks must carry labels.
    client : distributed.Client or None, default=None
        None: the default client.
    rounds : int >= 1, default=5
        Mixing rounds (each partition is read ``rounds * passes`` times).
    passes : int >= 1, default=1
        Local passes over its partition per round.
    classes : array-like or None, default=None
        All class labels (classifiers). None: found by one extra task per partition that reads the labels.
    random_state : int, Generator or None, default=None
        None: rows are visited in their stored order (a round is then ``partial_fit`` over the
        partition). An int or Generator: each pass visits each chunk's rows in a fresh random order
        (seeded per round and partition).
    verbose : bool, default=False
        Print one line per round.
    blas_threads : int >= 1, default=1
        BLAS threads per task (threadpoolctl).

    Returns
    -------
    learner
        A new fitted learner (a clone; the input is not modified) with ``mixing_history_``: one dict per
        round with ``round``, ``n_examples`` (examples learnt from in the round), ``seconds`` (wall clock of
        the round, including the broadcast and the combination) and ``progressive_error`` (classifiers:
        the fraction of examples mispredicted before their update on their first visit: the first pass over
        the partition, or the first that yields rows when a loader yields none on a pass) or ``progressive_mse``.

    Raises
    ------
    TypeError
        The learner cannot be mixed; the message lists the supported ones.
    RuntimeError
        A partition's worker died more often than the scheduler allows (Dask retries the task of a lost
        worker up to ``distributed.scheduler.allowed-failures`` times, 3 by default), or the client lost its
        connection to the scheduler. No model is returned.

    Examples
    --------
    >>> from distributed import Client
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.distributed import fit_mixing
    >>> from streamlearn.linear_model import PassiveAggressiveClassifier
    >>> X, y, X_test, y_test = load_a9a()
    >>> client = Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None)
    >>> quarters = [(X[i::4], y[i::4]) for i in range(4)]
    >>> clf = fit_mixing(PassiveAggressiveClassifier(C=0.01), quarters, client, rounds=3, classes=[-1, 1])
    >>> len(clf.mixing_history_), clf.mixing_history_[0]["n_examples"], clf.t_
    (3, 32561, 97683)
    >>> print(f"{clf.score(X_test, y_test):.2f}")
    0.8...
    >>> client.close()
    """
    mixer = mixer_for(learner)
    validate_params(learner)  # here, once, not on every partition's worker (where the error would name a partition)
    for name, value in (("rounds", rounds), ("passes", passes), ("blas_threads", blas_threads)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be an int >= 1; got {value!r}.")
    client = resolve_client(client)
    parts = check_partitions(partitions)
    template = clone(learner)
    rng = None if random_state is None else check_rng(random_state)
    tag = uuid.uuid4().hex[:8]
    data = data_futures(client, parts)
    is_clf = isinstance(template, OnlineClassifierMixin)
    if is_clf and classes is None:
        futs = [
            client.submit(_labels, p._light(), data[k], pure=False, key=f"streamlearn-labels-{tag}-{k}")
            for k, p in enumerate(parts)
        ]
        classes = _all_classes(collect(futs, parts, "fit_mixing (reading the labels)"), parts)
    if classes is not None:
        classes = np.unique(np.asarray(classes))
    model: Any = None
    history: list[dict[str, Any]] = []
    for r in range(rounds):
        t0 = time.perf_counter()
        with scheduler_kept(f"fit_mixing (round {r + 1} of {rounds})"):
            start = client.scatter(model, broadcast=True) if model is not None else None
        seeds = [None] * len(parts) if rng is None else [int(s) for s in rng.integers(0, 2**63 - 1, len(parts))]
        futs = [
            client.submit(
                _local_passes,
                template,
                start,
                p._light(),
                data[k],
                passes,
                classes,
                seeds[k],
                blas_threads,
                pure=False,
                key=f"streamlearn-mix-{tag}-r{r + 1}-p{k}",
            )
            for k, p in enumerate(parts)
        ]
        results = collect(futs, parts, f"fit_mixing (round {r + 1} of {rounds})")
        del futs, start
        check_widths([res[0].n_features_in_ if res[1] > 0 else None for res in results], parts, "fit_mixing")
        models = [res[0] for res in results if res[1] > 0]
        counts = np.array([res[1] for res in results if res[1] > 0], dtype=np.float64)
        if not models:
            raise ValueError("fit_mixing: no partition holds any example; nothing to learn from.")
        if len(models) == 1:
            # one partition learnt in the round: its model is the round's model as it is (the mix of one model
            # would only round it, and shrink a SketchedOnlineNewton sketch that no merge grew), so one partition
            # trains the sequential model of ``rounds * passes`` passes
            model = models[0]
        else:
            for m in models:
                m.finish_local_passes()
            model = mixer.mix(model, models, counts / counts.sum())
        n_first = sum(res[2] for res in results)
        entry = {"round": r + 1, "n_examples": int(counts.sum()), "seconds": time.perf_counter() - t0}
        key = "progressive_error" if is_clf else "progressive_mse"
        entry[key] = float(sum(res[3] for res in results) / n_first)  # > 0: every learnt example was counted
        history.append(entry)
        if verbose:
            print(
                f"round {r + 1}/{rounds}: {entry['n_examples']} examples, {key} {entry[key]:.4f}, "
                f"{entry['seconds']:.2f} s",
                flush=True,
            )
    model.mixing_history_ = history
    return model
