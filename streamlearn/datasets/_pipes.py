"""Data read once from a pipe: ``-`` (standard input), ``/dev/stdin``, a named pipe (FIFO).

A pipe cannot be opened twice nor rewound, so its format is told from its first block, which
:func:`peek_pipe` reads and keeps: the reader that :func:`take_pipe` hands over replays those bytes
before the rest of the stream, so nothing is lost. Compressed streams (gzip, bz2, xz, and zstd, which the CSV
reader alone decompresses) are recognised by their magic bytes. :func:`sniff_format` tells VW text, LIBSVM, CSV
and Parquet apart by content.

>>> sniff_format(b"1 2 'tag |user age:31\\n")
'vw'
>>> sniff_format(b"+1 3:1 11:0.5\\n"), sniff_format(b"clicked,age,country\\n1,31,FR\\n")
('libsvm', 'csv')
>>> print(sniff_format(b"hello\\n"))
None
"""

from __future__ import annotations

import bz2
import errno
import io
import lzma
import os
import re
import stat
import sys
import threading
import weakref
import zlib
from collections import deque
from typing import Any

__all__ = [
    "Pumped",
    "Replay",
    "file_object_name",
    "is_stream_path",
    "peek_pipe",
    "pipe_name",
    "replay_into",
    "require_binary",
    "sniff_format",
    "stream_format",
    "take_pipe",
]

_PEEK = 64 << 10  # bytes of a pipe read ahead to tell its format
_LIBSVM_LINE = re.compile(rb"^\s*[-+.0-9eE,]+(\s+(qid:\S+|\d+:\S+))*\s*(#.*)?$")
_pending: dict[str, Replay] = {}  # pipes peeked but not yet handed to a reader


def is_stream_path(path) -> bool:
    """True for ``-`` and for paths that are not regular files (``/dev/stdin``, a FIFO): readable once only."""
    if path == "-":
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, TypeError, ValueError):
        return False


def pipe_name(path) -> str:
    """The name errors give a pipe: ``<stdin>`` for ``-``, else its path."""
    return "<stdin>" if path == "-" else os.fspath(path)


def replay_into(head: bytes, b) -> tuple[int, bytes]:
    """Copy the first bytes of ``head`` (bytes read ahead) into the buffer ``b``: ``(bytes copied, the rest)``."""
    n = min(len(b), len(head))
    b[:n] = head[:n]
    return n, head[n:]


#: what reading a file or a decompressing stream raises: I/O errors, a corrupt or truncated stream
#: (gzip.BadGzipFile is an OSError)
_DECOMPRESSION_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


class Replay(io.RawIOBase):
    """A pipe with its first bytes read ahead (:meth:`head`) and replayed before the rest; read once."""

    def __init__(self, raw, name, owned, inner=None):
        self._raw = raw
        self.name = name
        self._owned = owned
        self._inner = inner  # the Replay this one decompresses, closed with it
        self._buf = b""
        self._eof = False
        self.counting = False  # True: the bytes handed out are counted, for a reader's errors:
        self.quote_state = None  # with a CSV reader's quote state (_kernels.tabular.new_quote_state): their quotes
        self.quotes = False  # whether they end inside a quoted value
        self._quote_marks = None  # the scan's per-byte output, unused here
        self.lines = 0  # and their line feeds

    def readable(self):
        return True

    def fill(self) -> bool:
        """Read what the pipe has ready (one read) into the kept head; False at the end of the stream."""
        if not self._eof:
            read = getattr(self._raw, "read1", self._raw.read)
            chunk = read(_PEEK)
            self._eof = not chunk
            self._buf += chunk
        return not self._eof

    def head(self, n=_PEEK) -> bytes:
        """Up to ``n`` first bytes (fewer only at the end of the stream), without consuming them."""
        while len(self._buf) < n and self.fill():
            pass
        return self._buf[:n]

    def kept(self) -> bytes:
        """The bytes read ahead so far."""
        return self._buf

    def blank(self) -> bool:
        """True when the stream has ended and held nothing but white space (no line to tell a format by)."""
        return self._eof and not self._buf.strip()

    @property
    def decompressing(self) -> bool:
        """Whether this stream decompresses another one."""
        return self._inner is not None

    def decompression_reason(self, exc: BaseException) -> str:
        """The reason of an error when the decompression failed with ``exc``."""
        from ._svmlight import decompression_reason

        return decompression_reason(self._raw, exc)

    def readinto(self, b):
        if self._buf:
            n, self._buf = replay_into(self._buf, b)
        elif self._eof:
            return 0
        elif self._inner is not None:  # what decompresses before damage first, the error at the next read
            from ._svmlight import read_block

            n = read_block(self._raw, memoryview(b))
        else:
            data = self._raw.read(len(b))
            n = len(data)
            b[:n] = data
        if self.counting:
            part = bytes(memoryview(b)[:n])
            if self.quote_state is not None:
                import numpy as np

                from .._kernels.tabular import csv_quote_scan

                if self._quote_marks is None or self._quote_marks.shape[0] < n:  # (one scratch for every read)
                    self._quote_marks = np.empty(max(n, len(b)), np.uint8)
                self.quotes = bool(csv_quote_scan(np.frombuffer(part, np.uint8), self.quote_state, self._quote_marks))
            self.lines += part.count(b"\n")
        return n

    def close(self):
        if self._owned and not self._raw.closed:
            self._raw.close()
        if self._inner is not None:
            self._inner.close()
        super().close()


class _Pump:
    """The state :class:`Pumped` shares with its thread: the parts read ahead, the end, a read error."""

    def __init__(self, pipe, size, ahead):
        self.pipe, self.size, self.ahead = pipe, size, ahead
        self.cond = threading.Condition()
        self.parts: deque[bytes] = deque()
        self.end = False  # the pipe has ended, or failed (error)
        self.error: BaseException | None = None
        self.stop = False  # the reader is done: the pump stops after the read in progress, if any

    def run(self):
        try:
            while True:
                with self.cond:
                    while len(self.parts) >= self.ahead and not self.stop:
                        self.cond.wait()
                    if self.stop:
                        return
                data = self.pipe.read(self.size)
                # parts of the whole size, but at the end: pyarrow's CSV reader takes each read as a block and
                # refuses a row that straddles three (a short read, from a decompressor or at the end of the
                # bytes read ahead, stopped files of 150 KB rows)
                if data and len(data) < self.size:
                    parts, n = [data], len(data)
                    while n < self.size and (more := self.pipe.read(self.size - n)):
                        parts.append(more)  # (joined once: adding each read to the part would copy it again)
                        n += len(more)
                    data = b"".join(parts)
                with self.cond:
                    if data:
                        self.parts.append(data)
                    else:
                        self.end = True
                    self.cond.notify_all()
                if not data:
                    return
        except BaseException as exc:  # handed to the reader, as the pipe's own read would have raised it
            with self.cond:
                self.error = exc
                self.end = True
                self.cond.notify_all()
        finally:
            self.pipe.close()


class Pumped(io.RawIOBase):
    """A pipe read by a Python thread of its own, for a reader that reads it from a thread outside Python's
    (pyarrow's CSV reader reads ahead on a C++ thread of its own).

    ``readinto`` takes what the pump has read (at most ``ahead`` reads of ``size`` bytes are kept ahead), and
    :meth:`close` ends the stream at once: a read waiting for the pipe gets its end instead. A thread that
    is not Python's must be out of Python before the interpreter shuts down (one that still calls into it
    then, as one blocked on a pipe whose writer keeps it open would once the pipe ends, brings the process
    down with ``std::terminate``); :attr:`released` is set once the reader has let go of this object, so a
    caller can close it, drop its own references and wait for that. The pump itself stops at the end of the
    pipe, at a read error (raised by the next ``readinto``) or after its read in progress once closed, and
    closes the pipe.

    >>> import io
    >>> f = Pumped(io.BytesIO(b"a,b\\n1,2\\n"), size=4)
    >>> f.read()
    b'a,b\\n1,2\\n'
    >>> released = f.released
    >>> f.close(); del f
    >>> released.wait(1)
    True
    """

    def __init__(self, pipe, size=1 << 20, ahead=2):
        self.name = getattr(pipe, "name", None)
        self._state = _Pump(pipe, size, ahead)
        self.released = threading.Event()
        weakref.finalize(self, self.released.set)
        threading.Thread(target=self._state.run, name="streamlearn-pipe", daemon=True).start()

    def readable(self):
        return True

    def readinto(self, b):
        st = self._state
        with st.cond:
            while not st.parts and not st.end and not st.stop:
                st.cond.wait()
            if st.parts:
                part = st.parts.popleft()
                n = min(len(b), len(part))
                b[:n] = part[:n]
                if n < len(part):
                    st.parts.appendleft(part[n:])
                st.cond.notify_all()
                return n
            if st.error is not None and not st.stop:
                raise st.error
            return 0

    def close(self):
        st = self._state
        with st.cond:
            st.stop = True
            st.cond.notify_all()
        super().close()


def _stdin():
    """The binary standard input; an OSError naming ``<stdin>`` when the process has none (started with it
    closed, ``<&-``: Python then sets ``sys.stdin`` to None)."""
    if sys.stdin is None:
        raise OSError(errno.EBADF, "standard input is closed; expected the data on it", "<stdin>")
    return sys.stdin.buffer


def _open(path) -> Replay:
    if path == "-":
        return Replay(_stdin(), "<stdin>", owned=False)
    f = open(path, "rb", buffering=0)  # noqa: SIM115 (closed with the Replay)
    return Replay(f, os.fspath(path), owned=True)


def peek_pipe(path) -> Replay:
    """The pipe at ``path``, opened once and kept (with its head read) for :func:`take_pipe`."""
    key = os.fspath(path)
    kept = _pending.get(key)
    if kept is None or kept.closed or (key == "-" and kept._raw is not _stdin()):
        _pending[key] = kept = _open(path)
    return kept


def take_pipe(path) -> Replay:
    """The pipe at ``path`` for reading: the one :func:`peek_pipe` opened (its head replayed), else opened now."""
    kept = _pending.pop(os.fspath(path), None)
    if kept is None or kept.closed or (path == "-" and kept._raw is not _stdin()):
        return _open(path)
    return kept


#: the magic bytes of the compressions every reader decompresses, and of zstd, which the CSV reader alone does
_TEXT_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"))
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_MAGIC = (*_TEXT_MAGIC, (_ZSTD_MAGIC, "zstd"))
#: the name endings of compressed files
_COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".lzma", ".zst", ".zstd")
_ZSTD_HEAD = 1 << 20  # the most text a zstd head is decompressed to, to tell the format


_NAMED = {".vw": "vw", ".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def named_format(path) -> str | None:
    """The format a pipe's name gives by its extension (``.vw``, ``.csv.gz``...), None when it says none."""
    name = os.path.basename(os.fspath(path)).lower()
    for suffix in _COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    ext = os.path.splitext(name)[1]
    return "libsvm" if ext in (".svm", ".libsvm", ".svmlight") else _NAMED.get(ext)


def device_path(path) -> bool:
    """True for names of a process's open files (``/dev/stdin``, ``/dev/fd/N``, ``/proc/self/fd/N``), which say
    nothing of the format even when they lead to a regular file (``streamlearn train /dev/stdin < data.vw``)."""
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else ""
    return name == "/dev/stdin" or name.startswith(("/dev/fd/", "/proc/self/fd/"))


def file_head_format(path) -> str | None:
    """The format the first lines of the regular file at ``path`` say (decompressed when they are compressed),
    as for a pipe; None when they do not tell."""
    with open(path, "rb") as f:
        head = f.read(_PEEK)
        if compression(head) == "zstd":  # (as for a pipe: whole blocks of up to 128 KiB of text)
            head += f.read(3 * _PEEK)
        return sniff_format(decompressed_head(head))


def stream_format(path) -> str | None:
    """The format of the pipe at ``path``: by its name, else by its first lines (read ahead and kept; no
    more is waited for than what the pipe has ready once 20 lines or 64 KiB are there; 256 KiB of zstd, whose
    blocks of up to 128 KiB of text decompress only once they are whole)."""
    named = named_format(path)
    if named is not None:
        return named
    pipe = peek_pipe(path)
    while True:
        text = decompressed_head(pipe.kept())
        enough = 4 * _PEEK if compression(pipe.kept()) == "zstd" else _PEEK
        if text.count(b"\n") >= 20 or len(pipe.kept()) >= enough or not pipe.fill():
            return sniff_format(decompressed_head(pipe.kept()))


def compression(head: bytes) -> str | None:
    """``gzip``, ``bz2``, ``xz`` or ``zstd`` by the magic bytes of ``head``; None for plain bytes."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return None


def decompressed_head(head: bytes) -> bytes:
    """As much of ``head`` as its (partial) decompression gives; ``head`` itself when not compressed."""
    kind = compression(head)
    if kind is None:
        return head
    if kind == "zstd":
        return _zstd_head(head)
    d: Any = (
        zlib.decompressobj(31)
        if kind == "gzip"
        else bz2.BZ2Decompressor()
        if kind == "bz2"
        else lzma.LZMADecompressor()
    )
    try:
        return d.decompress(head)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError):
        return b""


def _zstd_head(head: bytes) -> bytes:
    """The text the zstd bytes ``head`` decompress to, up to ``_ZSTD_HEAD`` bytes: the blocks that are whole
    (pyarrow's codec raises at the end of a stream cut short, as a head is); ``head`` itself without pyarrow,
    whose readers then say it is zstd."""
    try:
        import pyarrow as pa
    except ImportError:
        return head
    stream = pa.CompressedInputStream(pa.BufferReader(head), "zstd")
    parts: list[bytes] = []
    got = 0
    try:
        while got < _ZSTD_HEAD and (part := stream.read(1 << 16)):
            parts.append(part)
            got += len(part)
    except OSError:  # cut short (the rest of the stream is not read yet), or damaged
        pass
    return b"".join(parts)


def sniff_format(head: bytes) -> str | None:
    """``vw``, ``libsvm``, ``csv`` or ``parquet`` from the first bytes of a (decompressed) stream; None if
    its first lines do not tell."""
    if head.startswith(b"PAR1"):
        return "parquet"
    lines = head.split(b"\n")
    if len(lines) > 1:
        lines = lines[:-1]  # the last piece may be a partial line
    for line in lines[:20]:
        line = line.rstrip(b"\r")
        if not line.strip() or line.lstrip().startswith(b"#"):
            continue
        if _LIBSVM_LINE.match(line):  # before the "|" of VW: a LIBSVM comment may hold one
            if len(line.split()) > 1:
                return "libsvm"
            if b"," not in line:
                continue  # a label alone: VW or LIBSVM, look further
        if b"|" in line:
            return "vw"
        if b"," in line or b"\t" in line:
            return "csv"
        return None
    return None


def file_object_name(f):
    """How errors name a file object: its ``name`` (a path), ``<file descriptor N>`` for one opened on a
    descriptor (a subprocess's pipe), or ``<BytesIO object>`` and the like."""
    name = getattr(f, "name", None)
    if isinstance(name, int):
        return f"<file descriptor {name}>"
    return str(name or f"<{type(f).__name__} object>")


def require_binary(f):
    """Refuse a file object opened in text mode: the readers parse bytes."""
    if isinstance(f, io.TextIOBase):
        raise TypeError(
            f"a data file object must be opened in binary mode ('rb'); got the text file object "
            f"{file_object_name(f)} (mode {getattr(f, 'mode', '?')!r})."
        )
