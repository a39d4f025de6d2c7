"""One-pass LIBSVM reading under a fixed index base: pipes, standard input and model contracts.

:class:`SvmlightStream` reads a source exactly once, chunk by chunk, in constant memory (one block of bytes
plus one chunk of rows), so it accepts what cannot be read twice: ``-`` (standard input), ``/dev/stdin``,
named pipes. The index base is decided before reading (never guessed from the data), and the width is

* fixed (``n_features`` given, e.g. by a model's input contract): values of features at or beyond it are
  dropped and counted in :attr:`SvmlightStream.ignored` (a model has no weight for a feature it never saw);
* or growing: every chunk is as wide as the largest index seen so far, up to :data:`MAX_WIDTH` features
  (a larger index is an error naming the line, before anything that large is allocated).

:func:`scan_svmlight` is the validating pass over a regular file that finds its width under the same rules.

>>> import io
>>> chunks = list(SvmlightStream(io.BytesIO(b"1 1:1 3:2\\n-1 2:1 9:5\\n"), zero_based=False, n_features=3,
...                             chunk_size=1))
>>> [X.shape for X, _ in chunks]
[(1, 3), (1, 3)]
>>> SvmlightStream(io.BytesIO(b"1 1:1 3:2\\n-1 2:1 9:5\\n"), zero_based=False, n_features=3).ignored
0
"""

import os

import numpy as np

from .._kernels import svmlight as _k
from ._pipes import is_stream_path, take_pipe
from ._svmlight import _DEFAULT_BLOCK, SvmlightFormatError, _csr, _Parser, _Source

__all__ = ["MAX_WIDTH", "SvmlightStream", "is_stream_path", "scan_svmlight"]

MAX_WIDTH = 1 << 28  # largest width inferred from data: 268,435,456 features (2 GiB per float64 weight vector)


def _source(source):
    """``_Source`` for a path, ``-`` or a file object; pipes are opened here and read without seeking."""
    if isinstance(source, (str, os.PathLike)) and is_stream_path(source):
        f = take_pipe(source)  # replays what a format check read ahead
        return _Source(f), f
    return _Source(source), None


class _Parser1(_Parser):
    """The reader's parser with messages for the two rules of this module (index base, width limit)."""

    zero_hint = ""
    limit = None

    def _raise(self, buf, end):
        st = self.state
        code = int(st[_k.S_ERR_CODE])
        line = int(st[_k.S_ERR_LINE])
        tok = self._token(buf, end, int(st[_k.S_ERR_POS]))
        if code == _k.E_INDEX_ZERO:
            raise SvmlightFormatError(
                self.name, line, f"feature index 0 in {tok!r}, but indices are read as one-based{self.zero_hint}"
            )
        if code in (_k.E_BEYOND, _k.E_INDEX_BIG) and self.limit is not None:
            raise SvmlightFormatError(
                self.name,
                line,
                f"feature index in {tok!r} exceeds the supported width of {self.limit} "
                f"features (2**{self.limit.bit_length() - 1}); fix the width (n_features, --n-features on the "
                "command line) to read such data: values beyond it are then ignored and counted",
            )
        super()._raise(buf, end)


def _parser(name, zero_based, n_features, zero_hint, store, limit=MAX_WIDTH):
    shift = 0 if zero_based else 1
    if n_features is None:  # growing width, limited
        max_index, lim = limit - 1 + shift, limit
    else:  # fixed width: read every index, drop the ones beyond afterwards
        max_index, lim = _k._INDEX_LIMIT, None
    p = _Parser1(
        name,
        shift=shift,
        max_index=max_index,
        index_dtype=np.int32,
        block_size=_DEFAULT_BLOCK,
        store=store,
        n_features_msg=limit,
    )
    p.zero_hint = zero_hint
    p.limit = lim
    return p


def scan_svmlight(path, zero_based, *, zero_hint="", limit=MAX_WIDTH):
    """Validate a whole file under a fixed base; return ``{"n_features", "n_rows"}`` (width as found).

    >>> from streamlearn.datasets import bundled_path
    >>> scan_svmlight(bundled_path("a9a.t.xz"), zero_based=False)
    {'n_features': 122, 'n_rows': 16281}
    """
    src, owned = _source(path)
    p = _parser(src.name, zero_based, None, zero_hint, store=False, limit=limit)
    stream, to_close, size = src.open()
    try:
        for _ in p.chunks(stream, size=size):
            pass
    finally:
        for f in to_close + ([owned] if owned else []):
            f.close()
    p.check_not_empty()
    gmax = int(p.state[_k.S_MAX_IDX])
    width = max(gmax - p.shift + 1, 1) if gmax >= 0 else 1
    return {"n_features": int(width), "n_rows": int(p.total_rows)}


class SvmlightStream:
    """Iterate once over ``(X, y)`` chunks of a LIBSVM source read with a fixed index base.

    Parameters
    ----------
    source : path, ``"-"`` (standard input) or binary file object
    zero_based : bool
        Index base, decided by the caller (a ``0:`` feature under ``False`` is an error naming the line).
    n_features : int or None
        Fixed width (features beyond it dropped and counted), or None: growing width up to ``limit``.
    chunk_size : int
        Rows per chunk.
    zero_hint : str
        Appended to the message of a ``0:`` feature under one-based reading (what to do about it).
    allow_empty : bool, default=False
        A source without data lines (empty, or only blank and comment lines) yields no chunk; by default it
        is an error naming the source (a run never trains on, or scores, nothing).

    Attributes
    ----------
    n_features : int
        The width so far (the final width once the iteration has ended).
    ignored : int
        Feature values dropped because their index is at or beyond a fixed width.
    n_rows : int
        Rows yielded so far.
    """

    def __init__(
        self,
        source,
        *,
        zero_based,
        n_features=None,
        chunk_size=10_000,
        zero_hint="",
        limit=MAX_WIDTH,
        allow_empty=False,
    ):
        self.source = source
        self.zero_based = bool(zero_based)
        self.fixed = n_features is not None
        self.n_features = int(n_features) if n_features is not None else 0
        self.chunk_size = int(chunk_size)
        if self.chunk_size < 1:  # a chunk of 0 rows never advances: the reader would loop forever
            raise ValueError(f"chunk_size must be an int >= 1 (rows per chunk), got {chunk_size!r}.")
        self.zero_hint = zero_hint
        self.limit = limit
        self.allow_empty = bool(allow_empty)
        self.ignored = 0
        self.n_rows = 0
        self._used = False

    def __iter__(self):
        if self._used:
            raise ValueError(f"{self.source!r} is read once; open a new stream for another pass.")
        self._used = True
        src, owned = _source(self.source)
        self.name = src.name
        p = _parser(
            src.name,
            self.zero_based,
            self.n_features if self.fixed else None,
            self.zero_hint,
            store=True,
            limit=self.limit,
        )
        stream, to_close, _ = src.open()
        try:
            for data, indices, indptr, y in p.chunks(stream, chunk_rows=self.chunk_size):
                if self.fixed:
                    data, indices, indptr = self._drop_beyond(data, indices, indptr)
                elif len(indices):
                    self.n_features = max(self.n_features, int(indices.max()) + 1)
                self.n_rows += len(y)
                yield _csr(data, indices, indptr, max(self.n_features, 1)), y
            if not self.allow_empty:
                p.check_not_empty()
        finally:
            for f in to_close + ([owned] if owned else []):
                f.close()

    def _drop_beyond(self, data, indices, indptr):
        d = self.n_features
        if not len(indices) or int(indices.max()) < d:
            return data, indices, indptr
        keep = indices < d
        n = len(indptr) - 1
        rows = np.repeat(np.arange(n), np.diff(indptr))
        dropped = np.bincount(rows[~keep], minlength=n)
        self.ignored += int(dropped.sum())
        new_indptr = indptr.copy()
        new_indptr[1:] -= np.cumsum(dropped)
        return data[keep], indices[keep].astype(np.int32), new_indptr
