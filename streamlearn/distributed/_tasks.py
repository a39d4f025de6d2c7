"""Helpers shared by the task functions: BLAS limits, partition checks, data futures."""

import contextlib

from ._partitions import Partition, as_partitions


@contextlib.contextmanager
def blas_limits(n):
    """Cap BLAS / OpenMP threads inside a task (the workers may be remote: their environment is not ours)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn depends on threadpoolctl
        yield
        return
    with threadpool_limits(limits=int(n)):
        yield


def check_partitions(partitions):
    """A non-empty list of Partition (anything else goes through as_partitions)."""
    if isinstance(partitions, Partition):
        return [partitions]
    if isinstance(partitions, list) and partitions and all(isinstance(p, Partition) for p in partitions):
        return partitions
    parts = as_partitions(partitions)
    if not parts:
        raise ValueError("no partitions: the data source is empty.")
    return parts


def data_futures(client, parts):
    """For delayed partitions, a future of their computed value (computed once, reused every round)."""
    out = []
    for p in parts:
        if p.kind == "delayed":
            out.append(client.compute(p.payload))
        else:
            out.append(None)
    return out


def check_widths(widths, parts, what):
    """``widths[k]``: the number of features partition k was learnt or sketched with (None: it held no row). A
    ValueError naming two partitions that differ (partitions of unknown width, e.g. a dask.bag's, are not checked
    before their tasks run), instead of the error of combining their models."""
    known = [(k, w) for k, w in enumerate(widths) if w is not None]
    for k, w in known[1:]:
        k0, w0 = known[0]
        if w != w0:
            raise ValueError(
                f"{what}: {parts[k].describe()} has {w} features, {parts[k0].describe()} has {w0}; every partition "
                "must have the same number of features (pass n_features=... to as_partitions)."
            )
