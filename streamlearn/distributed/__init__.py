"""Scale-out on Dask: merged sketches and iterative parameter mixing over a ``dask.distributed`` cluster.

The same sketches and learners as on one machine, run on the workers of a Dask cluster (a
``LocalCluster`` for tests, any scheduler address in real use); Dask schedules, moves data and retries
tasks of lost workers: streamlearn adds no scheduler of its own.

* :func:`connect` - a ``distributed.Client`` from ``"local:N"``, a scheduler address or the default client;
* :func:`as_partitions` / :class:`Partition` - LIBSVM files (a glob or a list), in-memory ``(X, y)`` arrays,
  a ``dask.bag`` of ``(X, y)`` chunks or a ``dask.array``, as a list of partitions (one task each);
* :func:`fit_sketch` - one sketch per partition on the workers, merged by a tree reduction of ``merge``;
* :func:`fit_mixing` - iterative parameter mixing: local passes from the current model on every
  partition, models averaged (weighted by examples) on the client after every round;
* :func:`supported_learners` - the learners :func:`fit_mixing` knows how to average.

Needs the ``dask`` extra: ``pip install 'streamlearn[dask]'``. ``import streamlearn`` never imports dask.
"""

try:
    import distributed as _distributed  # noqa: F401
    import dask as _dask  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "streamlearn.distributed needs dask.distributed, which is not installed "
        f"({exc}). Install the extra: pip install 'streamlearn[dask]'"
    ) from exc

from ._client import connect
from ._mixing import fit_mixing, supported_learners
from ._partitions import Partition, as_partitions
from ._sketch import fit_sketch

__all__ = ["Partition", "as_partitions", "connect", "fit_mixing", "fit_sketch", "supported_learners"]
