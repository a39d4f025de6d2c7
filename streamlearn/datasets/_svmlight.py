"""Streaming LIBSVM / svmlight reader: ``iter_svmlight`` (chunks of rows) and ``load_svmlight`` (whole file).

The file is read in byte blocks; a numba kernel (``streamlearn._kernels.svmlight``) parses the complete
lines of each block straight into CSR arrays and the partial last line is carried over to the next
block, so memory is one block plus one chunk whatever the file size.
"""

import bz2
import contextlib
import gzip
import io
import lzma
import numbers
import os
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import DTypeLike
import scipy.sparse as sp

from .._kernels import svmlight as _k
from .._typing import FloatArray, SvmlightSource
from ._pipes import _DECOMPRESSION_ERRORS, _ZSTD_MAGIC, file_object_name, replay_into, require_binary
from ._pipes import _TEXT_MAGIC as _MAGIC

__all__ = ["SvmlightFormatError", "iter_svmlight", "load_svmlight"]

_INT32_MAX = np.iinfo(np.int32).max
_INT64_MAX = np.iinfo(np.int64).max
_DEFAULT_BLOCK = 4 << 20
_FIRST_ROWS = 1 << 16  # rows allocated up front for a chunk; more as they come
_HARD_ROWS = 4096
_BOM = b"\xef\xbb\xbf"
_SUFFIX = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".lzma": "xz"}
#: zstd, which the CSV reader alone decompresses (with pyarrow's codec; the VW and LIBSVM readers refuse it)
_ZSTD_SUFFIX = {".zst": "zstd", ".zstd": "zstd"}


def wide_text(head: bytes) -> str | None:
    """The reason a file is refused when its first bytes ``head`` are a UTF-16 or UTF-32 byte order mark (text
    saved as Windows' "Unicode text"; the readers take UTF-8, of which ASCII is a part); None otherwise."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        enc = "UTF-32"
    elif head.startswith((b"\xff\xfe", b"\xfe\xff")):
        enc = "UTF-16"
    else:
        return None
    return (
        f"the file is {enc} text (it starts with a {enc} byte order mark); expected UTF-8 (or ASCII) text: "
        f"convert it, e.g. with iconv -f {enc} -t UTF-8"
    )


_ARCHIVES = (  # formats whose first bytes tell them and that the VW and LIBSVM readers do not decompress
    (_ZSTD_MAGIC, "zstd-compressed", "zstd -d"),
    (b"PK\x03\x04", "a zip archive", "unzip"),
)


def archive_text(head: bytes) -> str | None:
    """The reason a file is refused when its first bytes ``head`` are those of a zstd or zip file (the VW and
    LIBSVM readers decompress gzip, bz2 and xz only) or of a Parquet file, which no text reader reads; None
    otherwise."""
    if head.startswith(b"PAR1"):
        return "the file is Parquet (its first bytes say so), not text: read it as Parquet"
    for magic, what, tool in _ARCHIVES:
        if head.startswith(magic):
            return (
                f"the file is {what}; expected text, plain or gzip, bz2 or xz compressed: "
                f"decompress it first, e.g. with {tool}"
            )
    return None


def first_bytes_reason(head: bytes, complete: bool, whole: bool) -> str | None:
    """Why a text file is refused from its first bytes ``head`` (up to 64 KiB; ``complete``: the whole file, or
    as much as the reader holds; ``whole``: the whole file): UTF-16/32 text or a zstd or zip file (once 4 bytes
    are known, or all the reader holds), or lines ended by a carriage return alone (once 64 KiB are known, or the
    whole file: a reader reading small blocks holds a first line longer than its block only once it has grown
    its buffer for it, and a line feed may come later); None otherwise."""
    if len(head) >= 4 or complete:
        wide = wide_text(head[:4]) or archive_text(head[:4])
        if wide is not None:
            return wide
    if len(head) >= 1 << 16 or whole:
        return bare_cr_lines(head[: 1 << 16])
    return None


def bare_cr_lines(head: bytes) -> str | None:
    """The reason a file is refused when its first bytes ``head`` (64 KiB, or the whole file) end lines with a
    carriage return alone (classic Mac OS) and hold no line feed: read as one line, silently, otherwise."""
    if b"\n" in head or b"\r" not in head.rstrip(b"\r"):
        return None
    return (
        "the lines end with a carriage return alone ('\\r', classic Mac OS) and the file has no line feed; "
        "expected '\\n' or '\\r\\n' line ends: convert it, e.g. with tr '\\r' '\\n'"
    )


def _is_number(tok: bytes) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def shown_token(tok: bytes) -> str:
    """A token as error messages quote it: at most 60 bytes (a longer one cut to 57 and '...'), bytes that are
    not UTF-8 as U+FFFD (a backslash escape would be doubled by the quoting)."""
    if len(tok) > 60:
        tok = tok[:57] + b"..."
    return tok.decode("utf-8", "replace")


class _LineError:
    """Errors about a malformed line of a text file (before ``ValueError`` in the bases): ``source``, ``line``
    (1-based) and ``reason`` are kept as attributes (and through pickling); the message is the location as
    ``_where`` writes it (the source alone for line 0: a file without lines), then the reason."""

    _where = "{source}, line {line}"

    def __init__(self, source, line, reason):
        self.source = source
        self.line = line
        self.reason = reason
        where = self._where.format(source=source, line=line) if line else str(source)
        super().__init__(f"{where}: {reason}")

    def __reduce__(self):
        return type(self), (self.source, self.line, self.reason)


class SvmlightFormatError(_LineError, ValueError):
    """A LIBSVM / svmlight file that cannot be parsed.

    The message names the file, the 1-based line number and what was wrong; the same facts are kept
    as attributes.

    Attributes
    ----------
    source : str
        The file name (or ``repr`` of the file object).
    line : int
        1-based line number of the offending line (for an empty file: the number of lines read, 0).
    reason : str
        What was wrong, without the location.

    Examples
    --------
    >>> import io
    >>> from streamlearn.datasets import SvmlightFormatError, load_svmlight
    >>> try:
    ...     load_svmlight(io.BytesIO(b"1 1:1 2:1\\n-1 3:1 2:1\\n"))
    ... except SvmlightFormatError as exc:
    ...     print(exc.line, "|", exc.reason.split(":")[0])
    2 | unsorted feature index in '2
    """


# ---------------------------------------------------------------------------------------------------
# opening: paths and file objects, plain or compressed


class _Prefixed(io.RawIOBase):
    """A non-seekable binary stream with some already-read bytes put back in front."""

    def __init__(self, head, raw):
        self._head = head
        self._raw = raw

    def readable(self):
        return True

    def readinto(self, b):
        if self._head:
            n, self._head = replay_into(self._head, b)
            return n
        return _readinto(self._raw, b)


#: compressed streams are read this much at a time (read_block)
_COMPRESSED_READ = 1 << 20
#: a zstd stream is decompressed this much at a time at most (_Zstd.read1)
_ZSTD_READ = 1 << 16


class _Zstd(io.RawIOBase):
    """The zstd-compressed binary stream ``raw`` decompressed by pyarrow's codec (the CSV reader's: pyarrow is
    required for CSV). Closing it closes ``raw``.

    pyarrow raises at damage having lost the text of the read that met it, so :meth:`read1` reads at most 64 KiB:
    what decompresses before the damage is handed out first (:func:`read_block`), for an error naming its line.
    A read after an error raises it again: pyarrow's codec would go on past the damage, handing out text from
    elsewhere in the file as if it followed.
    """

    def __init__(self, raw):
        import pyarrow as pa

        self._stream = pa.CompressedInputStream(pa.PythonFile(raw, mode="r"), "zstd")
        self._error: OSError | None = None

    def readable(self):
        return True

    def _read(self, read, arg):
        if self._error is not None:
            raise self._error
        try:
            return read(arg)
        except OSError as exc:
            self._error = exc
            raise

    def read1(self, size=-1):
        return self._read(self._stream.read, _ZSTD_READ if size is None or size < 0 else min(size, _ZSTD_READ))

    def readinto(self, b):
        return self._read(self._stream.readinto, b)

    def close(self):
        if not self.closed:
            self._stream.close()
        super().close()


#: the decompressing streams the readers open, with the name their errors give the compression
_COMPRESSED = {gzip.GzipFile: "gzip", bz2.BZ2File: "bz2", lzma.LZMAFile: "xz", _Zstd: "zstd"}


#: a decompression error met after some bytes of a read, raised by the stream's next read_block
_HELD: weakref.WeakKeyDictionary[Any, BaseException] = weakref.WeakKeyDictionary()


def read_block(stream, mv):
    """``_readinto(stream, mv)``; from a compressed stream at most ``_COMPRESSED_READ`` bytes, and at damage
    what decompresses before it first (the error comes with the next call), so that an error names the line
    where the text stops."""
    if type(stream) not in _COMPRESSED:
        return _readinto(stream, mv)
    held = _HELD.pop(stream, None)
    if held is not None:
        raise held
    mv = mv[:_COMPRESSED_READ]
    got = 0
    while got < len(mv):
        try:
            part = stream.read1(len(mv) - got)
        except _DECOMPRESSION_ERRORS as exc:
            if not got:
                raise
            _HELD[stream] = exc
            break
        if not part:
            break
        mv[got : got + len(part)] = part
        got += len(part)
    return got


def decompression_reason(stream, exc):
    """The reason of a reader's error when the compressed ``stream`` cannot be decompressed any further."""
    kind = _COMPRESSED.get(type(stream), "compressed")
    return f"cannot decompress the {kind} data ({type(exc).__name__}: {exc}); the file is corrupt or truncated"


def _readinto(f, mv):
    if hasattr(f, "readinto"):
        n = f.readinto(mv)
        return 0 if n is None else n
    chunk = f.read(len(mv))
    mv[: len(chunk)] = chunk
    return len(chunk)


def _detect(head, suffix, zstd=False):
    """The compression of a stream by its first bytes ``head``, else by its name's ``suffix`` when ``head`` is too
    short to tell; zstd only when ``zstd`` is true (the CSV reader); None for plain bytes."""
    magics = (*_MAGIC, (_ZSTD_MAGIC, "zstd")) if zstd else _MAGIC
    suffixes = {**_SUFFIX, **_ZSTD_SUFFIX} if zstd else _SUFFIX
    for magic, kind in magics:
        if head.startswith(magic):
            return kind
    if suffix in suffixes and len(head) < 6:  # too short to tell (empty or truncated): trust the name
        return suffixes[suffix]
    return None


def _decompressor(kind, raw):
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "bz2":
        return bz2.BZ2File(raw, mode="rb")
    if kind == "xz":
        return lzma.LZMAFile(raw, mode="rb")
    if kind == "zstd":
        return _Zstd(raw)
    return raw


class _Source:
    """What the user passed: a path (re-openable) or a binary file object (re-readable if seekable). ``zstd``:
    zstd is decompressed as well (the CSV reader's files)."""

    def __init__(self, source, zstd=False):
        self.zstd = zstd
        if isinstance(source, (str, os.PathLike)):
            self.path = os.fspath(source)
            self.fileobj = None
            self.name = self.path
            self.start = 0
        elif hasattr(source, "read"):
            require_binary(source)
            self.path = None
            self.fileobj = source
            self.name = file_object_name(source)
            self.start = source.tell() if _seekable(source) else None
        else:
            raise TypeError(
                f"expected a path (str or os.PathLike) or a binary file object with .read(), "
                f"got {type(source).__name__}."
            )

    @property
    def rereadable(self):
        return self.path is not None or self.start is not None

    def open(self):
        """Return (stream of decompressed bytes, list of objects to close, size in bytes or None)."""
        if self.path is not None:
            raw = open(self.path, "rb")  # noqa: SIM115 (closed by the caller)
            head = raw.read(6)
            raw.seek(0)
            kind = _detect(head, os.path.splitext(self.path)[1].lower(), self.zstd)
            stream = _decompressor(kind, raw)
            size = os.fstat(raw.fileno()).st_size if stream is raw else None
            return stream, ([stream, raw] if stream is not raw else [raw]), size
        f = self.fileobj
        if self.start is not None:
            f.seek(self.start)
            head = f.read(6)
            f.seek(self.start)
            raw = f
        else:
            head = f.read(6) or b""
            raw = _Prefixed(head, f)
        suffix = os.path.splitext(self.name)[1].lower() if isinstance(self.name, str) else ""
        kind = _detect(head, suffix, self.zstd)
        if kind == "zstd" and raw is f:  # (closing the zstd stream closes what it reads: not the user's object)
            raw = _Prefixed(b"", f)
        stream = _decompressor(kind, raw)
        return stream, ([stream] if stream is not raw else []), None  # never close the user's object

    @contextlib.contextmanager
    def opened(self):
        """The stream of decompressed bytes of :meth:`open`, closed (with what it wraps) when the block ends."""
        stream, to_close, _ = self.open()
        try:
            yield stream
        finally:
            for f in to_close:
                f.close()


def _seekable(f):
    try:
        return bool(f.seekable())
    except (AttributeError, OSError, ValueError):
        return False


# ---------------------------------------------------------------------------------------------------
# the block loop


_REASONS = {
    _k.E_LABEL: "the label {tok!r} is not a number (expected e.g. '-1', '1' or '0.5' first on the line)",
    _k.E_MULTILABEL: (
        "multilabel line (label {tok!r}): only single-label files are supported; "
        "use sklearn.datasets.load_svmlight_file(..., multilabel=True) for these"
    ),
    _k.E_FEATURE: "malformed feature {tok!r}: expected <index>:<value> with a non-negative integer index",
    _k.E_VALUE: "malformed feature {tok!r}: the value after ':' is not a number",
    _k.E_NONFINITE: "non-finite value in {tok!r}: NaN and infinity are not allowed (values must be finite)",
    _k.E_INDEX_NEG: "negative feature index in {tok!r}: indices must be >= 0",
    _k.E_INDEX_ZERO: (
        "feature index 0 in {tok!r}, but zero_based=False (one-based indices start at 1); "
        "pass zero_based=True or 'auto' for zero-based files"
    ),
    _k.E_ORDER: None,  # built below
    _k.E_BEYOND: None,
    _k.E_INDEX_BIG: "feature index in {tok!r} is too large (above 2**62)",
    _k.E_QID: "malformed query id {tok!r}: expected qid:<integer>",
}


class _Parser:
    """Runs the kernel over one opened stream and accumulates rows into chunks.

    ``chunk_rows`` rows per chunk (``None``: one chunk with everything); ``store=False`` validates and
    counts only (the first pass of ``iter_svmlight``).
    """

    def __init__(
        self,
        name,
        *,
        shift,
        max_index,
        edge_index=-1,
        index_dtype=np.int32,
        dtype=np.float64,
        block_size=_DEFAULT_BLOCK,
        store=True,
        n_features_msg=None,
    ):
        self.name = name
        self.shift = shift
        self.max_index = max_index
        self.edge_index = edge_index
        self.index_dtype = np.dtype(index_dtype)
        self.dtype = np.dtype(dtype)
        self.block_size = block_size
        self.store = store
        self.n_features_msg = n_features_msg
        self.state = np.zeros(_k.STATE_LEN, dtype=np.int64)
        self.state[_k.S_LINE] = 1
        self.state[_k.S_MIN_IDX] = -1
        self.state[_k.S_MAX_IDX] = -1
        self.hard = np.zeros((_HARD_ROWS, _k.HARD_COLS), dtype=np.int64)
        self.total_rows = 0
        self.nnz_hint = 0
        self.size = None  # bytes in the stream, when known: lets the arrays grow straight to the estimate
        self.consumed = 0  # bytes of the stream before the start of the current buffer

    # -- output arrays of the current chunk
    def _new_chunk(self, rows_cap):
        nnz_cap = max(self.nnz_hint, 1024) if self.store else 0
        rows_alloc = rows_cap if self.store else 0
        self.data = np.empty(nnz_cap, dtype=self.dtype)
        self.indices = np.empty(nnz_cap, dtype=self.index_dtype)
        self.indptr = np.zeros(rows_alloc + 1, dtype=np.int64)
        self.y = np.empty(rows_alloc, dtype=np.float64)
        self.row_line = np.empty(rows_alloc, dtype=np.int64)
        self.state[_k.S_ROWS] = 0
        self.state[_k.S_NNZ] = 0

    def _estimate(self, done):
        """Extrapolate a count (rows or nnz) from the bytes parsed so far to the whole stream."""
        parsed = self.consumed + int(self.state[_k.S_POS])
        if self.size is None or parsed <= 0:
            return 0
        return int(done / parsed * self.size * 1.02) + 1024

    def _grow_rows(self, cap=None):
        n = max(2 * len(self.y), 1024, self._estimate(int(self.state[_k.S_ROWS])))
        if cap is not None:
            n = min(n, cap)
        self.indptr = np.concatenate([self.indptr, np.zeros(n - len(self.y), dtype=np.int64)])
        self.row_line = np.concatenate([self.row_line, np.empty(n - len(self.y), dtype=np.int64)])
        self.y = np.concatenate([self.y, np.empty(n - len(self.y))])

    def _grow_nnz(self):
        n = max(2 * len(self.data), 1024, self._estimate(int(self.state[_k.S_NNZ])))
        nnz = int(self.state[_k.S_NNZ])
        data = np.empty(n, dtype=self.dtype)
        data[:nnz] = self.data[:nnz]
        indices = np.empty(n, dtype=self.index_dtype)
        indices[:nnz] = self.indices[:nnz]
        self.data, self.indices = data, indices

    def _to_int64(self):
        self.index_dtype = np.dtype(np.int64)
        self.indices = self.indices.astype(np.int64)

    def _check_float32(self):
        """With float32 values: ``SvmlightFormatError`` naming the first line of the chunk parsed so far that holds
        a value too large for float32 (the kernel narrowed it to infinity; it refuses non-finite text)."""
        if not self.store or self.dtype != np.float32:
            return
        from .._validation import float32_overflow

        rows, nnz = int(self.state[_k.S_ROWS]), int(self.state[_k.S_NNZ])
        overflow = float32_overflow(self.data[:nnz], self.indices[:nnz], self.indptr[: rows + 1], shift=self.shift)
        if overflow is not None:
            raise SvmlightFormatError(self.name, int(self.row_line[overflow[0]]), overflow[1])

    def _finish_chunk(self):
        self._check_float32()
        rows = int(self.state[_k.S_ROWS])
        nnz = int(self.state[_k.S_NNZ])
        self.total_rows += rows
        if not self.store:
            return rows
        self.nnz_hint = nnz + nnz // 8 + 16
        self.chunk_lines = self.row_line[:rows]
        data, indices = self.data[:nnz], self.indices[:nnz]
        if nnz < 0.8 * len(self.data):  # do not keep a mostly empty buffer alive
            data, indices = data.copy(), indices.copy()
        return data, indices, self.indptr[: rows + 1], self.y[:rows]

    # -- errors
    @staticmethod
    def _raw_token(buf, end, pos):
        q = pos
        while q < end and buf[q] not in b" \t\r\x0b\x0c\n#":
            q += 1
        return bytes(buf[pos:q])

    def _token(self, buf, end, pos):
        return shown_token(self._raw_token(buf, end, pos))

    def _raise(self, buf, end):
        self._check_float32()  # a value too large for float32 on an earlier line of the chunk is the first error
        st = self.state
        code = int(st[_k.S_ERR_CODE])
        raw = self._raw_token(buf, end, int(st[_k.S_ERR_POS]))
        tok = shown_token(raw)
        if code == _k.E_MULTILABEL and not all(_is_number(t) for t in raw.split(b",")):
            code = _k.E_LABEL  # words between commas (a CSV header read as LIBSVM), not a list of labels
        if code == _k.E_ORDER:
            prev = int(st[_k.S_ERR_AUX])
            here = tok.split(":", 1)[0].lstrip("+")
            kind = "duplicate" if here.isdigit() and int(here) == prev else "unsorted"
            reason = (
                f"{kind} feature index in {tok!r} (after index {prev}): indices must be strictly "
                f"increasing within a line"
            )
        elif code == _k.E_BEYOND:
            n = self.n_features_msg
            reason = (
                f"feature index in {tok!r} is beyond n_features={n} (indices must be < {n} "
                f"if zero-based, <= {n} if one-based)"
            )
        else:
            reason = _REASONS[code].format(tok=tok)
        raise SvmlightFormatError(self.name, int(st[_k.S_ERR_LINE]), reason)

    def _resolve_hard(self, buf):
        st = self.state
        nh = int(st[_k.S_HARD])
        for kind, slot, a, b, line in self.hard[:nh].tolist():
            v = float(bytes(buf[a:b]))
            if not np.isfinite(v):
                tok = shown_token(bytes(buf[a:b]))
                raise SvmlightFormatError(
                    self.name, line, f"non-finite value {tok!r}: it overflows to infinity (values must be finite)"
                )
            if self.store:
                if kind == 0:
                    self.y[slot] = v
                else:
                    with np.errstate(over="ignore"):  # too large for float32: infinity, refused by _check_float32
                        self.data[slot] = v
        st[_k.S_HARD] = 0

    # -- main loop
    def chunks(self, stream, chunk_rows=None, size=None):
        """Yield chunk tuples (store=True) or row counts per chunk (store=False) for the whole stream."""
        st = self.state
        self.size = size
        buf = np.empty(self.block_size, dtype=np.uint8)
        end = 0
        final = False
        # a chunk's row arrays start at most _FIRST_ROWS long and grow up to chunk_rows, so a huge chunk_size
        # costs only the rows the file has
        rows_cap = min(chunk_rows, _FIRST_ROWS) if chunk_rows is not None else 1024
        self._new_chunk(rows_cap)
        while True:
            if not final:
                if end == len(buf):  # a single line longer than the buffer: grow it
                    buf = np.concatenate([buf, np.empty(len(buf), dtype=np.uint8)])
                try:
                    n = read_block(stream, memoryview(buf)[end:])
                except _DECOMPRESSION_ERRORS as e:
                    if type(stream) not in _COMPRESSED:
                        raise
                    # the first line not yet read: the line where the text stops (read_block)
                    raise SvmlightFormatError(self.name, int(st[_k.S_LINE]), decompression_reason(stream, e)) from e
                if n == 0:
                    final = True
                end += n
                if self.consumed == 0 and st[_k.S_POS] == 0 and end >= 3 and bytes(buf[:3]) == _BOM:
                    st[_k.S_POS] = 3  # a UTF-8 byte order mark (Windows editors write one) starts no line
                if self.consumed == 0 and st[_k.S_POS] == 0:
                    bad = first_bytes_reason(bytes(buf[: min(end, 1 << 16)]), final or end == len(buf), final)
                    if bad is not None:
                        raise SvmlightFormatError(self.name, 1, bad)
            while True:
                rows_now = int(st[_k.S_ROWS])
                if chunk_rows is not None:
                    max_rows = chunk_rows - rows_now
                    if self.store:
                        max_rows = min(max_rows, len(self.y) - rows_now)
                else:
                    max_rows = (len(self.y) - rows_now) if self.store else _INT64_MAX
                index_cap = _INT32_MAX if self.index_dtype == np.int32 else _INT64_MAX
                status = _k.svmlight_parse(
                    buf=buf,
                    end=end,
                    final=final,
                    max_rows=max_rows,
                    shift=self.shift,
                    max_index=self.max_index,
                    edge_index=self.edge_index,
                    index_cap=index_cap,
                    store=self.store,
                    data=self.data,
                    indices=self.indices,
                    indptr=self.indptr,
                    y=self.y,
                    row_line=self.row_line,
                    hard=self.hard,
                    state=st,
                )
                n_hard = int(st[_k.S_HARD])
                if n_hard:  # first: an overflowing value may sit on an earlier line than an error
                    self._resolve_hard(buf)
                if status == _k.ST_ERROR:
                    self._raise(buf, end)
                if status == _k.ST_ROWS_FULL:
                    if chunk_rows is not None and rows_now + max_rows == chunk_rows:
                        yield self._finish_chunk()
                        self._new_chunk(rows_cap)
                    elif chunk_rows is not None:
                        self._grow_rows(cap=chunk_rows)
                        rows_cap = len(self.y)  # the next chunks start at the size this one reached
                    else:
                        self._grow_rows()
                elif status == _k.ST_NEED_SPACE:
                    self._grow_nnz()
                elif status == _k.ST_NEED_INT64:
                    self._to_int64()
                elif status == _k.ST_HARD_FULL:  # resolved above; grow if one line needs more room
                    if n_hard == 0:
                        self.hard = np.zeros((2 * len(self.hard), _k.HARD_COLS), dtype=np.int64)
                else:  # NEED_INPUT or DONE
                    break
            if status == _k.ST_DONE:
                break
            # move the unparsed tail (the partial last line) to the front
            pos = int(st[_k.S_POS])
            tail = end - pos
            if pos > 0:
                buf[:tail] = buf[pos:end]
            self.consumed += pos
            end = tail
            st[_k.S_POS] = 0
        if int(st[_k.S_ROWS]) or chunk_rows is None:
            yield self._finish_chunk()

    def check_not_empty(self):
        if self.total_rows == 0:
            lines = int(self.state[_k.S_LINE]) - 1
            what = "the file is empty" if lines == 0 else f"all {lines} lines are blank or comments"
            raise SvmlightFormatError(self.name, lines, f"no data lines: {what}")


def _read_all(src, parser):
    stream, to_close, size = src.open()
    try:
        return list(parser.chunks(stream, size=size))
    finally:
        for f in to_close:
            f.close()


# ---------------------------------------------------------------------------------------------------
# public functions


def _check_args(n_features, zero_based, dtype, block_size, chunk_size=None):
    if n_features is not None and (
        isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) or n_features < 1
    ):
        raise ValueError(f"n_features must be None or an int >= 1, got {n_features!r}.")
    if not (zero_based is True or zero_based is False or (isinstance(zero_based, str) and zero_based == "auto")):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}.")
    dt = _float_dtype(dtype)
    if isinstance(block_size, bool) or not isinstance(block_size, numbers.Integral) or block_size < 16:
        raise ValueError(f"block_size must be an int >= 16 (bytes), got {block_size!r}.")
    if chunk_size is not None and (
        isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1
    ):
        raise ValueError(f"chunk_size must be an int >= 1 (rows per chunk), got {chunk_size!r}.")
    return dt


def _float_dtype(dtype):
    """``dtype`` as a NumPy dtype, float32 or float64 (the readers' ``dtype`` option)."""
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dt}.")
    return dt


def _index_dtype(n_features, nnz=0):
    return np.int32 if (n_features - 1 <= _INT32_MAX and nnz <= _INT32_MAX) else np.int64


def _csr(data, indices, indptr, n_features):
    dt = _index_dtype(n_features, len(data))
    indices = indices.astype(dt, copy=False)
    indptr = indptr.astype(dt, copy=False)
    X = sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, n_features), copy=False)
    X.has_sorted_indices = True
    return X


def _max_index(n_features, shift):
    """Largest index allowed as written in the file."""
    return _k._INDEX_LIMIT if n_features is None else n_features - 1 + shift


def _whole_file_parser(src, zero_based, n_features, block_size, **options):
    """The parser of a pass over the whole file that decides the index base and the width (``load_svmlight``,
    the first pass of ``iter_svmlight``): with ``zero_based="auto"`` it reads the indices as zero-based and
    allows index ``n_features`` (the last one of a one-based file); :func:`_base_and_width` decides after the
    pass. ``options`` go to :class:`_Parser`."""
    if zero_based == "auto":
        shift = 0
        max_index = _k._INDEX_LIMIT if n_features is None else n_features  # n_features allowed if one-based
        edge = -1 if n_features is None else n_features
    else:
        shift = 0 if zero_based else 1
        max_index, edge = _max_index(n_features, shift), -1
    return _Parser(
        src.name,
        shift=shift,
        max_index=max_index,
        edge_index=edge,
        block_size=block_size,
        n_features_msg=n_features,
        **options,
    )


def _base_and_width(src, p, zero_based, n_features):
    """``(shift, n_features)`` of a file that the parser ``p`` of :func:`_whole_file_parser` has read, decided
    as scikit-learn decides them."""
    p.check_not_empty()
    gmin, gmax = int(p.state[_k.S_MIN_IDX]), int(p.state[_k.S_MAX_IDX])
    shift = p.shift
    if zero_based == "auto":
        shift = 1 if gmin > 0 else 0
        if n_features is not None and shift == 0 and int(p.state[_k.S_EDGE_LINE]):
            _raise_edge(src.name, p, n_features)
    inferred = max(gmax - shift + 1, 1) if gmax >= 0 else 1
    return shift, (inferred if n_features is None else n_features)


def _first_pass(src, zero_based, n_features, block_size):
    """Validate the whole file and return (shift, n_features) as ``load_svmlight`` would decide them."""
    p = _whole_file_parser(src, zero_based, n_features, block_size, store=False)
    _read_all(src, p)
    return _base_and_width(src, p, zero_based, n_features)


def _raise_edge(name, parser, n_features):
    raise SvmlightFormatError(
        name,
        int(parser.state[_k.S_EDGE_LINE]),
        f"feature index {n_features} is beyond n_features={n_features}: the file uses index 0, so "
        f"zero_based='auto' reads it as zero-based",
    )


def load_svmlight(
    source: SvmlightSource,
    n_features: int | None = None,
    zero_based: bool | str = "auto",
    *,
    dtype: DTypeLike = np.float64,
    block_size: int = _DEFAULT_BLOCK,
) -> tuple[Any, FloatArray]:
    """Load a whole LIBSVM / svmlight file into a CSR matrix, the same as scikit-learn's loader.

    Equal to ``sklearn.datasets.load_svmlight_file(source, n_features=..., zero_based=...)`` (same
    ``data``, ``indices``, ``indptr``, ``y`` and shape, bit for bit) on every file that both accept,
    several times faster (a numba kernel over the raw bytes, see ``benchmarks/reader_speed.py``),
    with error messages that name the file and line. Differences, all on purpose:

    * Stricter: NaN / infinity (values or labels), ``'1_000'``-style digit separators, a ``qid``
      that is not an integer, a first feature that starts with ``qid`` but is not ``qid:<int>`` (e.g.
      ``qid0:1``; scikit-learn skips any such token), an index written with a minus sign (``-0:1``) and
      files without any data line are errors (scikit-learn accepts them).
    * ``qid:<int>`` as the first feature is skipped, as scikit-learn does with ``query_id=False``.
    * Indices are int32 when ``n_features`` and the number of non-zeros fit, else int64 (scikit-learn:
      int64), and indices up to 2**62 are accepted (scikit-learn: up to 2**31 - 1).
    * Multilabel files are rejected (use scikit-learn's ``multilabel=True``).

    Parameters
    ----------
    source : str, os.PathLike or binary file object
        Path of the file, or a file object opened in binary mode (read from its current position; not
        closed). gzip, bz2 and xz compression are recognised by their magic bytes.
    n_features : int >= 1 or None, default=None
        Number of columns. ``None``: the largest index in the file + 1 (1 for a file without any
        feature), as scikit-learn. An index at or beyond ``n_features`` raises
        :class:`SvmlightFormatError`.
    zero_based : bool or "auto", default="auto"
        ``True``: indices start at 0. ``False``: they start at 1 (index 0 is an error) and are stored
        minus 1. ``"auto"``: one-based unless index 0 occurs somewhere in the file (scikit-learn's
        rule).
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Type of ``X.data`` (values are parsed as doubles, then cast). ``y`` is always float64. With
        float32, a value too large for it (above 3.4e38 in size) raises :class:`SvmlightFormatError`.
    block_size : int >= 16, default=4 MiB
        Bytes read per read call; a line longer than that grows the buffer.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Sorted indices; explicit zeros written in the file are kept (as scikit-learn does).
    y : ndarray of shape (n_samples,), float64
        The labels.

    Raises
    ------
    SvmlightFormatError
        A ``ValueError`` naming the file, the line and what was wrong.

    Examples
    --------
    >>> import io
    >>> from streamlearn.datasets import load_svmlight
    >>> X, y = load_svmlight(io.BytesIO(b"1 1:0.5 3:2\\n-1 2:1.5  # comment\\n"))
    >>> X.toarray()
    array([[0.5, 0. , 2. ],
           [0. , 1.5, 0. ]])
    >>> y
    array([ 1., -1.])
    """
    dt = _check_args(n_features, zero_based, dtype, block_size)
    src = _Source(source)
    index_dtype = np.int64 if (n_features is not None and n_features - 1 > _INT32_MAX) else np.int32
    p = _whole_file_parser(src, zero_based, n_features, block_size, index_dtype=index_dtype, dtype=dt)
    ((data, indices, indptr, y),) = _read_all(src, p)
    shift, n_features = _base_and_width(src, p, zero_based, n_features)
    if shift != p.shift:  # zero_based="auto" and the file is one-based
        indices -= 1
    return _csr(data, indices, indptr, n_features), y


def iter_svmlight(
    source: SvmlightSource,
    chunk_size: int = 10_000,
    n_features: int | None = None,
    zero_based: bool | str = "auto",
    *,
    dtype: DTypeLike = np.float64,
    block_size: int = _DEFAULT_BLOCK,
) -> Iterator[tuple[Any, FloatArray]]:
    """Stream a LIBSVM / svmlight file as ``(X, y)`` chunks of ``chunk_size`` rows, in constant memory.

    The file is read in blocks of ``block_size`` bytes; complete lines are parsed by a numba kernel and
    the partial last line is carried over, so memory holds one block and one chunk, never the file.
    Concatenating the chunks gives exactly :func:`load_svmlight` on the same file (and so
    scikit-learn's ``load_svmlight_file``).

    Every chunk has the same width, ready for ``partial_fit``:

    * ``n_features`` given and ``zero_based`` True or False: one pass. An error in the file is raised
      when the reader gets there, possibly after earlier chunks were yielded (every yielded chunk is
      complete and valid).
    * ``n_features=None`` or ``zero_based="auto"`` (the defaults): the width and the index base are
      whole-file properties, so a first pass reads (and fully validates) the file, then a second pass
      yields the chunks; any format error is raised before the first chunk (except, with
      ``dtype=float32``, a value too large for float32, raised with its chunk). Pass both to read once.
      A non-seekable file object cannot be read twice and needs both.

    Parameters
    ----------
    source : str, os.PathLike or binary file object
        Path, or a file object opened in binary mode (read from its current position; not closed).
        gzip, bz2 and xz compression are recognised by their magic bytes.
    chunk_size : int >= 1, default=10_000
        Rows per chunk; the last chunk may be shorter. Blank and comment lines do not count.
    n_features : int >= 1 or None, default=None
        Width of every chunk. ``None``: inferred by the first pass (largest index + 1, as
        :func:`load_svmlight`). An index at or beyond ``n_features`` raises
        :class:`SvmlightFormatError`.
    zero_based : bool or "auto", default="auto"
        ``True``: indices start at 0; ``False``: at 1 (index 0 is an error); ``"auto"``: one-based
        unless index 0 occurs anywhere in the file, decided by the first pass.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Type of ``X.data``; ``y`` is always float64. With float32, a value too large for it (above 3.4e38
        in size) raises :class:`SvmlightFormatError`.
    block_size : int >= 16, default=4 MiB
        Bytes read per read call; a line longer than that grows the buffer.

    Yields
    ------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
        ``n_rows == chunk_size`` except for the last chunk. int32 indices when they fit, else int64.
    y : ndarray of shape (n_rows,), float64

    Raises
    ------
    SvmlightFormatError
        A ``ValueError`` naming the file, the line and what was wrong (see :func:`load_svmlight`).

    Examples
    --------
    >>> from streamlearn.datasets import bundled_path, iter_svmlight, load_a9a
    >>> from streamlearn.linear_model import PassiveAggressiveClassifier
    >>> clf = PassiveAggressiveClassifier()
    >>> for X, y in iter_svmlight(bundled_path("a9a.xz"), chunk_size=8192, n_features=123, zero_based=False):
    ...     clf = clf.partial_fit(X, y, classes=[-1, 1])
    >>> X.shape  # the last of 4 chunks: 32561 = 3 * 8192 + 7985
    (7985, 123)
    >>> _, _, X_test, y_test = load_a9a()
    >>> round(clf.score(X_test, y_test), 2)
    0.8...
    """
    dt = _check_args(n_features, zero_based, dtype, block_size, chunk_size)
    src = _Source(source)
    return _iter(src, chunk_size, n_features, zero_based, dt, block_size)


def _iter(src, chunk_size, n_features, zero_based, dt, block_size):
    # a generator behind a plain function, so bad arguments raise at the call, not at the first next()
    if n_features is None or zero_based == "auto":
        if not src.rereadable:
            raise ValueError(
                f"{src.name} is a non-seekable stream, so it cannot be read twice: pass n_features=<int> "
                f"and zero_based=True or False to stream it in one pass."
            )
        shift, n_features = _first_pass(src, zero_based, n_features, block_size)
    else:
        shift = 0 if zero_based else 1
    p = _Parser(
        src.name,
        shift=shift,
        max_index=_max_index(n_features, shift),
        index_dtype=_index_dtype(n_features),
        dtype=dt,
        block_size=block_size,
        n_features_msg=n_features,
    )
    return _gen(src, p, chunk_size, n_features)


def _gen(src, p, chunk_size, n_features):
    with src.opened() as stream:
        for data, indices, indptr, y in p.chunks(stream, chunk_rows=chunk_size):
            yield _csr(data, indices, indptr, n_features), y
        p.check_not_empty()
