"""VW text parsed by several threads at once, in the chunks a single reader gives.

Parsing and hashing (``_kernels.vw_text.vw_parse``) is most of the work of a ``streamlearn train`` on VW text:
the linear learners update a chunk several times faster than it is parsed. The kernel releases the GIL,
so pieces of the file can be parsed at the same time: a splitter thread reads the file and cuts it into
pieces of ``chunk_size`` lines (a newline search, no parsing), worker threads each parse a piece at a time
with their own parser, and the chunks are handed over in file order. The consumer (the thread that learns)
parses too: whenever the piece it needs next is not ready, it takes the oldest piece no worker has started
instead of waiting. With one worker per core but one, every core is busy and none is shared by two threads
that both want it: the learner is never put aside for a parser, and a learner faster than the parsing
lends its spare time to it. A piece with blank lines gives fewer rows; the chunks are then re-cut so that
every chunk holds ``chunk_size`` rows, as those of :func:`streamlearn.datasets.iter_vw`: the learner sees the
same rows in the same chunks, and learns the same model bit for bit, whichever thread parsed them. A
malformed line is reported with its line number in the file, after the chunks before it have been handed
over, as a single reader does.
"""

from __future__ import annotations

import io
import os
import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from .._cpus import available_cpus as _cores
from ._spec import InputSpec
from .._kernels.vw_text import line_end
from ._svmlight import _detect, _readinto, _Source
from ._vw import VwFormatError, _VwParser

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["parallel_vw_chunks", "use_parallel", "PARALLEL_MIN_BYTES"]

#: plain files below this size are read by one reader (more threads would not pay for themselves)
PARALLEL_MIN_BYTES = 8 << 20
_READ = 4 << 20  # bytes per read of the splitter
_AHEAD = 4  # pieces read, parsed or waiting at once
_JOIN = 10.0  # seconds close() waits for each thread at most (a worker finishes its piece in milliseconds)


class _Pieces:
    """Splitter, workers and the consumer's own parser: ``result(k)`` is the k-th piece's ``(X, y, w)`` or the
    exception it raised."""

    def __init__(self, stream, name, make_parser, own_parser, chunk_size, workers, to_close):
        self.stream, self.name, self.chunk_size, self.to_close = stream, name, chunk_size, to_close
        self.consumer = threading.current_thread()
        self.own_parser = own_parser  # the consumer's, for the pieces it parses itself
        self.cond = threading.Condition()
        self.tasks: list[tuple[int, memoryview, int]] = []
        self.results: dict[int, Any] = {}
        self.n_pieces: int | None = None  # known once the file has been split to its end
        self.stop = False
        self.slots = threading.Semaphore(_AHEAD)
        self.threads = [threading.Thread(target=self._split, name="streamlearn-split", daemon=True)]
        self.threads += [
            threading.Thread(target=self._work, args=(make_parser(),), name=f"streamlearn-parse-{i}", daemon=True)
            for i in range(workers)
        ]
        for t in self.threads:
            t.start()

    def _split(self):
        k = 0
        lines = 0  # lines before the current piece
        try:
            buf = np.empty(0, np.uint8)
            filled = 0
            eof = False
            while not eof:
                # a fresh buffer each time: the pieces handed out are views of the previous one
                nb = np.empty(filled + _READ, np.uint8)
                nb[:filled] = buf[:filled]
                buf = nb
                n = _readinto(self.stream, memoryview(buf)[filled:])
                eof = n == 0
                filled += n
                start = 0
                while start < filled:
                    end = int(line_end(buf, start, filled, self.chunk_size))
                    if end >= 0:
                        n_lines = self.chunk_size
                    elif eof:  # the rest of the file (its last line may have no newline)
                        n_lines = -1 - end + (buf[filled - 1] != 10)
                        end = filled
                    else:
                        break
                    if not self._submit(k, memoryview(buf)[start:end], lines):
                        return
                    k += 1
                    lines += n_lines
                    start = end
                buf = buf[start:filled]  # a view: copied into the next buffer
                filled -= start
        except BaseException as exc:  # an I/O or decompression error: handed to the consumer in its turn
            with self.cond:
                self.results[k] = exc
                k += 1
        finally:
            for f in self.to_close:
                f.close()
            with self.cond:
                self.n_pieces = k
                self.cond.notify_all()

    def _submit(self, k, piece, first_line):
        while not self.slots.acquire(timeout=0.05):
            if self.stop:
                return False
        with self.cond:
            if self.stop:
                return False
            self.tasks.append((k, piece, first_line))
            self.cond.notify_all()
        return True

    def _work(self, parser):
        while True:
            with self.cond:
                while not self.tasks and not self.stop and self.n_pieces is None:
                    self.cond.wait()
                if self.stop or not self.tasks:
                    return
                task = self.tasks.pop(0)
            self._parse(parser, task)

    def _parse(self, parser, task):
        """Parse one piece and hand over its chunk, or the error it raised (with its line in the file)."""
        k, piece, first_line = task
        try:
            parts = [(X, y, w) for X, y, w, _ in parser.chunks(_View(piece), self.chunk_size)]
            out: Any = parts[0] if len(parts) == 1 else _stack(parts)
        except VwFormatError as exc:
            out = VwFormatError(self.name, exc.line + first_line, exc.reason)
        except Exception as exc:
            out = exc
        except BaseException as exc:  # a worker hands even these over; the consumer's own (Ctrl-C) are raised
            if threading.current_thread() is self.consumer:
                raise
            out = exc
        with self.cond:
            self.results[k] = out
            self.cond.notify_all()

    def result(self, k):
        """The k-th piece, or None past the last one. While it is not ready, the consumer parses the oldest
        piece no worker has taken yet (it will be needed next or soon after) instead of waiting idle."""
        while True:
            with self.cond:
                if k in self.results or (self.n_pieces is not None and k >= self.n_pieces):
                    out = self.results.pop(k, None)
                    break
                if not self.tasks:
                    self.cond.wait()
                    continue
                task = self.tasks.pop(0)
            self._parse(self.own_parser, task)
        if out is not None:
            self.slots.release()
        return out

    def close(self):
        """Stop the threads and wait for them: a worker finishes the piece it parses (milliseconds; it never
        waits for input, and never compiles: :func:`_compile_here`), the splitter its read of the regular file.
        None of them may still run compiled code when the interpreter exits (a Ctrl-C ends the command while
        they work)."""
        with self.cond:
            self.stop = True
            self.cond.notify_all()
        for t in self.threads:
            if t is not threading.current_thread():
                t.join(timeout=_JOIN)


class _View:
    """A read-only binary stream over a memoryview (``readinto`` copies once, into the parser's buffer)."""

    def __init__(self, mv):
        self.mv = mv
        self.pos = 0

    def readinto(self, out):
        n = min(len(out), len(self.mv) - self.pos)
        out[:n] = self.mv[self.pos : self.pos + n]
        self.pos += n
        return n


def _stack(parts):
    X = sp.vstack([p[0] for p in parts], format="csr")
    X.has_canonical_format = True  # rows of canonical rows
    return X, np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])


def _rows(X, y, w, a, b):
    part = X[a:b]
    part.has_canonical_format = True
    return part, y[a:b].copy(), w[a:b].copy()


def _compile_here(parser, chunk_size):
    """Compile the kernels that the splitter and the workers call (or load them from numba's cache) in this
    thread, before they start. Compiling takes seconds, up to tens of seconds on a busy machine with no cache: in
    a worker, a Ctrl-C meanwhile would end the command while the worker still runs numba's compiler, which
    :meth:`_Pieces.close` cannot wait for (the process then crashes as it exits); here, it is interrupted
    like any other statement of the command."""
    for _ in parser.chunks(io.BytesIO(b""), chunk_size):  # vw_parse, with the workers' argument types
        pass
    line_end(np.zeros(1, np.uint8), 0, 0, chunk_size)


def use_parallel(path: Any, spec: InputSpec, min_bytes: int | None = None) -> bool:
    """True when ``path`` is worth :func:`parallel_vw_chunks`: VW text in an uncompressed regular file of at
    least ``min_bytes`` bytes (default :data:`PARALLEL_MIN_BYTES`), on a machine with two cores or more for
    this process. Pipes and compressed files are read by one reader (a pipe is read once; a compressed file
    is decompressed as it is read)."""
    if spec.format != "vw" or not isinstance(path, (str, os.PathLike)) or _cores() < 2:
        return False
    try:
        if os.path.getsize(path) < (PARALLEL_MIN_BYTES if min_bytes is None else min_bytes) or not os.path.isfile(path):
            return False
        with open(path, "rb") as f:
            head = f.read(6)
    except OSError:
        return False  # the single reader reports it
    return _detect(head, os.path.splitext(os.fspath(path))[1].lower()) is None


def parallel_vw_chunks(
    path: str | os.PathLike[str],
    spec: InputSpec,
    chunk_size: int,
    *,
    require_label: bool,
    workers: int | None = None,
) -> Iterator[tuple[Any, Any, Any]]:
    """``(X, y, sample_weight)`` chunks of the VW text file ``path``, the same as those of
    ``open_stream(path, spec, chunk_size, require_label=require_label)``, parsed by ``workers`` threads
    (default: one per available core but one; 0 is allowed) and by the consumer itself while it waits.

    >>> import os, tempfile
    >>> from streamlearn.datasets import InputSpec, open_stream
    >>> p = os.path.join(tempfile.mkdtemp(), "t.vw")
    >>> _ = open(p, "w").write("".join(f"{(-1) ** i} |a x{i % 7} y\\n" for i in range(2500)) + "\\n1 |a z")
    >>> spec = InputSpec(format="vw", bits=12, interactions=["aa"])
    >>> ours = list(parallel_vw_chunks(p, spec, 1000, require_label=True))
    >>> one = list(open_stream(p, spec, 1000, require_label=True))
    >>> [c[0].shape[0] for c in ours], all((a[0] != b[0]).nnz == 0 for a, b in zip(ours, one))
    ([1000, 1000, 501], True)
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1; got {chunk_size}.")
    src = _Source(path)
    opts = spec.options or {}

    def make_parser():
        return _VwParser(
            src.name,
            bits=int(spec.bits if spec.bits is not None else 18),
            label_convention=spec.label_convention or "pm1",
            n_classes=opts.get("n_classes"),
            require_label=require_label,
            ignore=spec.ignore,
            keep=spec.keep,
            constant=bool(opts.get("constant", False)),
            quadratic=[t for t in spec.interactions if len(t) == 2],
            cubic=[t for t in spec.interactions if len(t) == 3],
            block_size=_READ,
        )

    own = make_parser()  # the consumer's parser; a bad option is raised here, before any thread starts
    _compile_here(own, int(chunk_size))
    if workers is None:
        workers = max(1, _cores() - 1)
    stream, to_close, _ = src.open()
    pieces = _Pieces(stream, src.name, make_parser, own, int(chunk_size), workers, to_close)
    try:
        pending: list[tuple[Any, Any, Any]] = []  # rows waiting for a full chunk
        n_pending = 0
        last = None
        k = 0
        while True:
            out = pieces.result(k)
            k += 1
            if out is None:
                break
            if isinstance(out, BaseException):
                raise out
            last = out
            if not pending and out[0].shape[0] == chunk_size:
                yield out
                continue
            pending.append(out)
            n_pending += out[0].shape[0]
            if n_pending >= chunk_size:
                X, y, w = _stack(pending)
                start = 0
                while n_pending - start >= chunk_size:
                    yield _rows(X, y, w, start, start + chunk_size)
                    start += chunk_size
                pending = [_rows(X, y, w, start, n_pending)] if start < n_pending else []
                n_pending -= start
        if pending:
            yield _stack(pending) if len(pending) > 1 else pending[0]
        elif last is None:  # no piece at all (an empty file): one empty chunk, as a single reader gives
            yield from (c[:3] for c in own.chunks(io.BytesIO(b""), chunk_size))
    finally:
        pieces.close()
