"""Read ahead: iterate a chunk stream in a background thread while the caller works on the previous chunk.

The parsing kernels release the GIL (numba ``nogil``), and so do the learners' kernels, so parsing chunk
``k + 1`` runs on another core while chunk ``k`` is learnt. The chunks come out in the same order and are the
same objects as without read-ahead, so results are identical. At most ``depth`` chunks wait in the queue
(plus the one being parsed and the one being used): memory stays flat on an endless stream.

An error raised by the stream (a malformed line, an unreadable file) is raised by the consumer at the
same place in the sequence, after the chunks before it. Closing the consumer early (an error while
learning, Ctrl-C) stops the reader thread after its current chunk and closes the stream. The first chunk is
read by the caller's thread, before the reader starts: the parsing kernels are compiled (numba) there, where a
Ctrl-C stops the command once they are, and never in the reader, which the interpreter could not wait for as it exits.
"""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["prefetch"]

_CHUNK, _END, _ERROR = 0, 1, 2
_POLL = 0.05  # seconds between checks of the stop flag while the queue is full
_JOIN = 0.5  # seconds close() waits for the reader to finish the chunk it is parsing


_NONE = object()  # no first chunk


def _close(it):
    close = getattr(it, "close", None)
    if close is not None:
        close()


class _Reader:
    def __init__(self, chunks: Iterable[Any], depth: int):
        self.queue: queue.Queue = queue.Queue(maxsize=depth)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(chunks,), name="streamlearn-reader", daemon=True)
        self.thread.start()

    def _put(self, item) -> bool:
        while not self.stop.is_set():
            try:
                self.queue.put(item, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, chunks):
        try:
            it = iter(chunks)
            try:
                for chunk in it:
                    if not self._put((_CHUNK, chunk)):
                        return
            finally:
                _close(it)
            self._put((_END, None))
        except BaseException as exc:  # handed to the consumer, raised there
            self._put((_ERROR, exc))

    def get(self):
        return self.queue.get()

    def close(self):
        self.stop.set()
        while True:  # unblock a reader waiting to put, drop what it read ahead
            try:
                self.queue.get_nowait()
            except queue.Empty:
                break
        # a reader parsing a chunk finishes it (milliseconds): none may still run compiled code when the interpreter
        # exits; a reader blocked on an open pipe cannot be joined: it is a daemon, and stops at its next chunk
        self.thread.join(timeout=_JOIN)


def prefetch(chunks: Iterable[Any], depth: int = 2) -> Iterator[Any]:
    """The items of ``chunks``, read ahead by up to ``depth`` items in a background thread.

    >>> list(prefetch(iter(range(5))))
    [0, 1, 2, 3, 4]
    >>> def bad():
    ...     yield 1
    ...     raise ValueError("line 2: bad label")
    >>> it = prefetch(bad())
    >>> next(it)
    1
    >>> next(it)
    Traceback (most recent call last):
    ...
    ValueError: line 2: bad label
    """
    if depth < 1:
        raise ValueError(f"depth must be >= 1; got {depth}.")
    it = iter(chunks)
    # the first chunk is read here: reading it compiles the parser's kernels (or loads them from numba's cache),
    # seconds of work that the reader thread must not do (close() waits for it only as long as a chunk takes)
    try:
        first = next(it, _NONE)
    except BaseException:
        _close(it)
        raise
    if first is _NONE:
        _close(it)
        return
    reader = _Reader(it, depth)
    try:
        yield first
        while True:
            kind, value = reader.get()
            if kind == _CHUNK:
                yield value
            elif kind == _ERROR:
                raise value
            else:
                return
    finally:
        reader.close()
