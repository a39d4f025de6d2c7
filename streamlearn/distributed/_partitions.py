"""Partitions: small picklable descriptions of one worker task's share of the data."""

import glob as _glob
import numbers
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import as_csr_float
from ..datasets import iter_svmlight
from ..datasets._info import svmlight_info

__all__ = ["Partition", "as_partitions"]

_GLOB_CHARS = set("*?[")


class Partition:
    """One task's share of the data: a LIBSVM file, in-memory arrays, a dask delayed object or a loader.

    Partitions are made by :func:`as_partitions` (or :meth:`from_loader` for a custom reader) and are
    small and picklable: a file partition holds its path and the reading options, not the rows, and is
    read on the worker that runs it.

    Parameters
    ----------
    kind : {"file", "arrays", "delayed", "loader"}
        What ``payload`` is.
    payload : object
        The path (``"file"``), a list of ``(X, y)`` chunks (``"arrays"``; ``y`` may be None), a
        ``dask.delayed`` object computing one ``(X, y)`` pair or a list of them (``"delayed"``), or a
        picklable callable returning an iterable of ``(X, y)`` chunks (``"loader"``).
    index : int >= 0
        Position of the partition (used in error messages).
    n_features : int >= 1 or None
        Width of every chunk (files: required to agree across workers).
    chunk_size : int >= 1, default=10_000
        Rows per chunk read from a file or cut from in-memory arrays.
    zero_based : bool, default=False
        Index base of a LIBSVM file.
    n_rows : int or None
        Rows of the partition when known without reading it.
    name : str or None
        Shown in messages (default: the path, or the kind and index).

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.distributed import as_partitions
    >>> parts = as_partitions([(np.eye(4), np.arange(4.0))], chunk_size=3)
    >>> parts[0].n_rows, [X.shape for X, y in parts[0].load()]
    (4, [(3, 4), (1, 4)])
    """

    def __init__(
        self, kind, payload, *, index, n_features=None, chunk_size=10_000, zero_based=False, n_rows=None, name=None
    ):
        if kind not in ("file", "arrays", "delayed", "loader"):
            raise ValueError(f"Partition kind must be 'file', 'arrays', 'delayed' or 'loader'; got {kind!r}.")
        self.kind = kind
        self.payload = payload
        self.index = int(index)
        self.n_features = None if n_features is None else int(n_features)
        self.chunk_size = int(chunk_size)
        self.zero_based = bool(zero_based)
        self.n_rows = n_rows
        self.name = name

    @classmethod
    def from_loader(
        cls,
        loader: Callable[[], Iterable[tuple[Any, Any]]],
        *,
        index: int = 0,
        name: str | None = None,
        n_rows: int | None = None,
    ) -> "Partition":
        """A partition read by ``loader()``, a picklable callable returning an iterable of ``(X, y)`` chunks
        (run on the worker; e.g. a query against a database)."""
        if not callable(loader):
            raise TypeError(f"loader must be callable (returning (X, y) chunks); got {type(loader).__name__}.")
        return cls("loader", loader, index=index, name=name or getattr(loader, "__name__", None), n_rows=n_rows)

    def describe(self) -> str:
        """Short text naming the partition in messages: its path, or its kind and index."""
        if self.name:
            return str(self.name)
        if self.kind == "file":
            return str(self.payload)
        rows = f", {self.n_rows} rows" if self.n_rows is not None else ""
        return f"{self.kind} partition {self.index}{rows}"

    def __repr__(self):
        return f"Partition({self.kind!r}, {self.describe()!r})"

    def _light(self):
        """A copy without a dask payload (the data of a delayed partition travels as a computed future)."""
        if self.kind != "delayed":
            return self
        out = Partition.__new__(Partition)
        out.__dict__.update(self.__dict__)
        out.payload = None
        return out

    def load(self, data: Any = None) -> Iterator[tuple[Any, Any]]:
        """Iterate over the partition's ``(X, y)`` chunks: ``X`` CSR float64 (``n_features`` wide when
        known), ``y`` a float array or None.

        ``data`` is the computed value of a ``"delayed"`` partition (the workers receive it from Dask);
        when omitted the delayed object is computed here.
        """
        if self.kind == "file":
            try:
                for X, y in iter_svmlight(
                    self.payload, chunk_size=self.chunk_size, n_features=self.n_features, zero_based=self.zero_based
                ):
                    yield X, y
            except FileNotFoundError as exc:
                worker = _worker_address()
                if worker is None:
                    raise
                # the client found the file (as_partitions checks it): the worker does not see the same path
                raise FileNotFoundError(
                    exc.errno,
                    f"{exc.strerror} on the Dask worker {worker}; every worker reads a partition's file at the path "
                    "given on the client (e.g. on a shared file system)",
                    exc.filename,
                ) from None
            return
        if self.kind == "arrays":
            chunks = self.payload
        elif self.kind == "delayed":
            if data is None:
                if self.payload is None:
                    raise ValueError(f"{self.describe()}: the delayed data were not passed to load().")
                data = self.payload.compute()
            chunks = _as_chunk_list(data, self.describe())
        else:
            chunks = self.payload()
        for i, chunk in enumerate(chunks):
            if not (isinstance(chunk, (tuple, list)) and len(chunk) == 2):
                raise ValueError(f"{self.describe()}: chunk {i} must be an (X, y) pair; got {_received(chunk)}.")
            X, y = _check_chunk(chunk[0], chunk[1], self.describe(), self.n_features)
            for start in range(0, X.shape[0], self.chunk_size):
                stop = start + self.chunk_size
                yield X[start:stop], (None if y is None else y[start:stop])


def _worker_address():
    """The address of the Dask worker running this code, or None outside a worker."""
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return None


def _received(item):
    """What a chunk or list item that is no ``(X, y)`` pair is, for the messages."""
    if isinstance(item, (tuple, list)):
        weights = " (sample weights are not supported: fit_mixing weighs every example alike)" if len(item) == 3 else ""
        return f"a {type(item).__name__} of {len(item)} items{weights}"
    return f"an object of type {type(item).__name__}"


def _as_chunk_list(data, name):
    if isinstance(data, tuple) and len(data) == 2 and not isinstance(data[0], tuple):
        return [data]
    if isinstance(data, list):
        return [d if isinstance(d, tuple) else (d, None) for d in data]
    if sp.issparse(data) or isinstance(data, np.ndarray):
        return [(data, None)]
    raise ValueError(
        f"{name}: a delayed partition must compute to an (X, y) pair, an X matrix or a list of "
        f"them; got {type(data).__name__}."
    )


def _check_chunk(X, y, name, n_features):
    if not (sp.issparse(X) or isinstance(X, np.ndarray)):
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name}: X must be a 2-D array or a scipy sparse matrix; got {type(X).__name__}."
            ) from None
    if X.ndim != 2:
        raise ValueError(f"{name}: X must be 2-D (rows x features); got shape {X.shape}.")
    if X.dtype.kind == "c":  # the conversion to float64 would drop the imaginary parts (with only a warning)
        raise ValueError(f"{name}: X has complex values (dtype {X.dtype}); expected real numbers.")
    if X.dtype.kind not in "biuf":  # strings, objects: numbers or an error naming the partition
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: X must hold numbers; got dtype {X.dtype} ({exc}).") from None
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(
            f"{name}: X has {X.shape[1]} features; every partition must have {n_features} "
            "(pass n_features=... to as_partitions)."
        )
    X = as_csr_float(sp.csr_matrix(X) if not sp.issparse(X) else X)
    if y is not None:
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"{name}: y must be 1-D with one label per row of X ({X.shape[0]}); got shape {y.shape}.")
    return X, y


def _is_dask_array(obj):
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, da.Array)


def _is_dask_bag(obj):
    try:
        import dask.bag as db
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, db.Bag)


def _check_chunk_size(chunk_size):
    if not isinstance(chunk_size, numbers.Integral) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an int >= 1; got {chunk_size!r}.")
    return int(chunk_size)


def as_partitions(
    source: Any, *, n_features: int | None = None, chunk_size: int = 10_000, zero_based: bool | str = "auto"
) -> list["Partition"]:
    """Describe ``source`` as a list of :class:`Partition` (one task each in :func:`fit_sketch` and
    :func:`fit_mixing`).

    Parameters
    ----------
    source : str, os.PathLike, list, tuple, dask.bag.Bag or dask.array.Array
        * a glob pattern (``"data/part-*.svm.xz"``, sorted by name) or one path: LIBSVM files (plain,
          .gz, .bz2 or .xz), one partition per file;
        * a list of paths: one partition per file, in the given order;
        * a list of ``(X, y)`` pairs (dense arrays or scipy sparse matrices; ``y`` may be None for
          sketches) or of ``X`` matrices: one partition per item (held in memory and shipped with the task);
        * a ``dask.bag.Bag`` whose elements are ``(X, y)`` chunks: one partition per bag partition;
        * a ``dask.array.Array`` ``X``, or a pair ``(X, y)`` of dask arrays chunked alike along the rows:
          one partition per block of rows (columns are joined into one block).
    n_features : int >= 1 or None, default=None
        Width of every chunk. None: for files, the largest width over all files (one validating pass
        over each file on the client, :func:`streamlearn.datasets._info.svmlight_info`); otherwise the
        width of the arrays. Pass it (and ``zero_based``) to skip the pass.
    chunk_size : int >= 1, default=10_000
        Rows per chunk given to ``partial_fit`` on the worker.
    zero_based : bool or "auto", default="auto"
        Index base of LIBSVM files; "auto": one-based unless some file uses index 0 (then all files are
        read as zero-based, so that every worker agrees on the columns).

    Returns
    -------
    list of Partition

    Examples
    --------
    >>> from streamlearn.datasets import bundled_path
    >>> from streamlearn.distributed import as_partitions
    >>> parts = as_partitions([bundled_path("a9a.xz"), bundled_path("a9a.t.xz")])
    >>> [p.n_features for p in parts], parts[0].zero_based
    ([123, 123], False)
    >>> X, y = next(parts[1].load())
    >>> X.shape
    (10000, 123)
    """
    chunk_size = _check_chunk_size(chunk_size)
    if n_features is not None and (
        not isinstance(n_features, numbers.Integral) or isinstance(n_features, bool) or n_features < 1
    ):
        raise ValueError(f"n_features must be an int >= 1 or None; got {n_features!r}.")
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto'; got {zero_based!r}.")
    if isinstance(source, (str, os.PathLike)):
        return _file_partitions(_expand(source), n_features, chunk_size, zero_based)
    if _is_dask_bag(source):
        return [
            Partition(
                "delayed", d, index=k, n_features=n_features, chunk_size=chunk_size, name=f"dask.bag partition {k}"
            )
            for k, d in enumerate(source.to_delayed())
        ]
    if _is_dask_array(source) or (isinstance(source, tuple) and len(source) == 2 and _is_dask_array(source[0])):
        return _dask_array_partitions(source, n_features, chunk_size)
    if isinstance(source, (list, tuple)):
        items = list(source)
        if not items:
            raise ValueError("as_partitions: source is an empty list; expected paths, (X, y) pairs or X arrays.")
        if all(isinstance(it, (str, os.PathLike)) for it in items):
            paths = []
            for it in items:
                if not os.path.isfile(it):
                    raise FileNotFoundError(f"as_partitions: {os.fspath(it)!r} is not a file.")
                paths.append(os.fspath(it))
            return _file_partitions(paths, n_features, chunk_size, zero_based)
        parts = []
        for k, it in enumerate(items):
            if isinstance(it, tuple) and len(it) == 2:
                X, y = it
            elif sp.issparse(it) or isinstance(it, np.ndarray):
                X, y = it, None
            else:
                raise ValueError(
                    f"as_partitions: item {k} of the list is {_received(it)}; expected a path, "
                    "an (X, y) pair or an X matrix (all items of one kind)."
                )
            X, y = _check_chunk(X, y, f"as_partitions item {k}", None)
            parts.append((X, y))
        width = n_features if n_features is not None else max(X.shape[1] for X, _ in parts)
        widest = next(k for k, (X, _) in enumerate(parts) if X.shape[1] == width) if n_features is None else None
        for k, (X, _) in enumerate(parts):
            if X.shape[1] != width:
                expected = f"n_features={n_features}" if widest is None else f"item {widest} has {width}"
                raise ValueError(
                    f"as_partitions: item {k} has {X.shape[1]} columns, {expected}; every partition must have "
                    "the same number of features."
                )
        return [
            Partition("arrays", [(X, y)], index=k, n_features=width, chunk_size=chunk_size, n_rows=X.shape[0])
            for k, (X, y) in enumerate(parts)
        ]
    raise TypeError(
        f"as_partitions: cannot make partitions from a {type(source).__name__}; expected a glob or "
        "path, a list of paths, a list of (X, y) pairs, a dask.bag or a dask.array."
    )


def _expand(source):
    text = os.fspath(source)
    if isinstance(source, str) and _GLOB_CHARS & set(text):
        paths = sorted(p for p in _glob.glob(text) if os.path.isfile(p))
        if not paths:
            raise FileNotFoundError(f"as_partitions: the glob {text!r} matches no file.")
        return paths
    if not os.path.isfile(text):
        raise FileNotFoundError(f"as_partitions: {text!r} is not a file (nor a glob pattern).")
    return [text]


def _file_partitions(paths, n_features, chunk_size, zero_based):
    if n_features is None or zero_based == "auto":
        infos = [svmlight_info(p, zero_based=zero_based) for p in paths]
        zb = {i["zero_based"] for i in infos}
        if len(zb) > 1:  # some file uses index 0: read all zero-based, so columns agree
            infos = [svmlight_info(p, zero_based=True) for p in paths]
            zb = {True}
        zero_based = zb.pop()
        widest = max(i["n_features"] for i in infos)
        if n_features is None:
            n_features = widest
        elif widest > n_features:
            exc = ValueError(f"as_partitions: n_features={n_features}, but the files use up to {widest} features.")
            exc.widest = widest  # (the command line names its own option)
            raise exc
    return [
        Partition("file", p, index=k, n_features=n_features, chunk_size=chunk_size, zero_based=zero_based)
        for k, p in enumerate(paths)
    ]


def _dask_array_partitions(source, n_features, chunk_size):
    X, y = (source, None) if _is_dask_array(source) else source
    if X.ndim != 2:
        raise ValueError(f"as_partitions: the dask array X must be 2-D; got shape {X.shape}.")
    X = X.rechunk({1: -1})
    xb = X.to_delayed().ravel()
    if y is not None:
        if not _is_dask_array(y) or y.ndim != 1:
            raise ValueError("as_partitions: with a dask array X, y must be a 1-D dask array (or omitted).")
        if not (np.isnan(y.shape[0]) or np.isnan(X.shape[0])) and y.shape[0] != X.shape[0]:
            raise ValueError(
                f"as_partitions: the dask array y has {y.shape[0]} labels and X {X.shape[0]} rows; expected one "
                "label per row of X."
            )
        if _same_blocks(y.chunks[0], X.chunks[0]):
            pass  # (blocks of unknown size, e.g. both cut by the same mask, are paired as they are)
        elif np.isnan(X.chunks[0]).any() or np.isnan(y.chunks[0]).any():
            raise ValueError(
                "as_partitions: the dask arrays X and y have blocks of unknown size (e.g. after boolean indexing) that "
                "do not pair up; call compute_chunk_sizes() on them first."
            )
        else:
            y = y.rechunk((X.chunks[0],))
        yb = y.to_delayed().ravel()
    import dask

    parts = []
    for k, xd in enumerate(xb):
        pair = dask.delayed(tuple)([xd, yb[k]]) if y is not None else xd
        rows = X.chunks[0][k]
        known = not np.isnan(rows)
        parts.append(
            Partition(
                "delayed",
                pair,
                index=k,
                n_features=n_features or X.shape[1],
                chunk_size=chunk_size,
                n_rows=int(rows) if known else None,
                name=f"dask.array block {k}" + (f" ({rows} rows)" if known else ""),
            )
        )
    return parts


def _same_blocks(a, b):
    """Whether two tuples of block lengths are the same (an unknown length, NaN, matching an unknown one)."""
    return len(a) == len(b) and all(p == q or (np.isnan(p) and np.isnan(q)) for p, q in zip(a, b))
