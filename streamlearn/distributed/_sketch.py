"""fit_sketch: one sketch per partition on the workers, merged by a tree reduction of ``merge``."""

import copy
import numbers
import uuid
from typing import Any

from sklearn.base import clone

from .._validation import validate_params
from ._client import collect, resolve_client, scheduler_kept
from ._tasks import blas_limits, check_partitions, check_widths, data_futures

__all__ = ["fit_sketch"]


def _sketch_partition(template, part, data, blas_threads):
    with blas_limits(blas_threads):
        sk = clone(template)
        for X, _ in part.load(data):
            sk.partial_fit(X)
    return sk


def _width(sketch):
    return getattr(sketch, "n_features_in_", None)  # None: the partition held no row


def _merge(*sketches):
    out = copy.deepcopy(sketches[0])  # the inputs are other tasks' results (maybe shared in worker memory)
    for other in sketches[1:]:
        out.merge(other)
    return out


def _check_mergeable(sketch, n_parts):
    """Refuse, before any task, the sketches whose merge would fail once every partition is sketched."""
    from ..sketch import OjaSketch, RandomProjectionSketch

    if isinstance(sketch, OjaSketch):
        raise TypeError(
            f"fit_sketch cannot merge OjaSketch sketches (no merge rule with any guarantee), so it cannot sketch "
            f"{n_parts} partitions; use FrequentDirections, RobustFrequentDirections or RandomProjectionSketch, "
            "or one partition."
        )
    if isinstance(sketch, RandomProjectionSketch) and sketch.random_state is not None:
        raise ValueError(
            f"fit_sketch: RandomProjectionSketch(random_state={sketch.random_state!r}) would draw the same "
            f"projections on each of the {n_parts} partitions, and the sum of such sketches is biased; use "
            "random_state=None (each partition draws its own seed)."
        )


def fit_sketch(sketch: Any, partitions: Any, client: Any = None, *, split_every: int = 2, blas_threads: int = 1) -> Any:
    """Sketch every partition on the workers and merge the sketches by a tree reduction.

    Each partition is one task: a fresh clone of ``sketch`` runs ``partial_fit`` over the partition's
    chunks on a worker. The sketches are then merged ``split_every`` at a time (pairs, then pairs of
    pairs, ...) by the sketch's own ``merge``, as tasks on the workers; only the final sketch travels to
    the client. For FD, PFD, CFD and RFD the merged sketch obeys the same bound as one sketch of the
    concatenated stream (:meth:`streamlearn.sketch.FrequentDirections.merge`; RFD's ``alpha_`` follows the
    merge rule of :class:`streamlearn.sketch.RobustFrequentDirections`).

    Parameters
    ----------
    sketch : sketch estimator
        Any streamlearn sketch with ``partial_fit`` and ``merge`` (FrequentDirections,
        RobustFrequentDirections, ...). Not modified; its parameters are used.
    partitions : list of Partition, or anything :func:`as_partitions` accepts
        The data, one task per partition.
    client : distributed.Client or None, default=None
        None: the default client (``distributed.get_client()``).
    split_every : int >= 2, default=2
        Sketches merged per reduction task.
    blas_threads : int >= 1, default=1
        BLAS threads per task (threadpoolctl), so that tasks on one machine do not oversubscribe it.

    Returns
    -------
    sketch
        A new fitted sketch of the same class, sketching all partitions (``n_seen_`` = total rows).

    Raises
    ------
    ValueError
        No partition holds a row, or partitions differ in width.
    RuntimeError
        A partition's worker died more often than the scheduler allows (Dask's
        ``distributed.scheduler.allowed-failures``, 3 by default; each loss re-runs the task elsewhere), or the
        client lost its connection to the scheduler. No partial sketch is returned.

    Examples
    --------
    >>> import numpy as np
    >>> from distributed import Client
    >>> from streamlearn.distributed import fit_sketch
    >>> from streamlearn.sketch import FrequentDirections
    >>> client = Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None)
    >>> rng = np.random.default_rng(0)
    >>> blocks = [rng.standard_normal((500, 30)) for _ in range(4)]
    >>> fd = fit_sketch(FrequentDirections(ell=8), blocks, client)
    >>> fd.n_seen_, fd.sketch_.shape
    (2000, (8, 30))
    >>> A = np.vstack(blocks)
    >>> err = np.linalg.norm(A.T @ A - fd.sketch_.T @ fd.sketch_, 2)
    >>> bool(err <= np.linalg.norm(A) ** 2 / 8)   # the FD bound for the whole, k = 0
    True
    >>> client.close()
    """
    if not (hasattr(sketch, "merge") and hasattr(sketch, "partial_fit")):
        raise TypeError(
            f"fit_sketch needs a sketch with partial_fit and merge (e.g. FrequentDirections); got "
            f"{type(sketch).__name__}."
        )
    if not isinstance(split_every, numbers.Integral) or isinstance(split_every, bool) or split_every < 2:
        raise ValueError(f"split_every must be an int >= 2; got {split_every!r}.")
    if type(sketch).__module__.startswith("streamlearn."):  # its parameters: here, once, not on every worker
        validate_params(sketch)
    parts = check_partitions(partitions)
    if len(parts) > 1:
        _check_mergeable(sketch, len(parts))
    client = resolve_client(client)
    template = clone(sketch)
    tag = uuid.uuid4().hex[:8]
    data = data_futures(client, parts)
    leaves = [
        client.submit(
            _sketch_partition,
            template,
            p._light(),
            data[k],
            blas_threads,
            pure=False,
            key=f"streamlearn-sketch-{tag}-{k}",
        )
        for k, p in enumerate(parts)
    ]
    collect_leaves = leaves
    level, depth = leaves, 0
    while len(level) > 1:
        depth += 1
        level = [
            client.submit(_merge, *level[i : i + split_every], pure=False, key=f"streamlearn-merge-{tag}-{depth}-{i}")
            if len(level[i : i + split_every]) > 1
            else level[i]
            for i in range(0, len(level), split_every)
        ]
    collect(
        collect_leaves, parts, "fit_sketch", gather=False
    )  # names a failed partition (its worker died, or it raised)
    if len(parts) > 1 and any(p.n_features is None for p in parts):  # e.g. a dask.bag's: read only on the workers
        widths = [
            client.submit(_width, f, pure=False, key=f"streamlearn-width-{tag}-{k}") for k, f in enumerate(leaves)
        ]
        with scheduler_kept("fit_sketch"):
            widths = client.gather(widths)
        check_widths(widths, parts, "fit_sketch")
    root = level[0]
    try:
        with scheduler_kept("fit_sketch"):
            out = root.result()
    finally:
        for f in leaves:
            f.release()
    if _width(out) is None:  # no partition yielded a row: no sketch was fitted
        raise ValueError("fit_sketch: no partition holds any row; nothing to sketch.")
    return out
