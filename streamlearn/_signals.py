"""Holding Ctrl-C back for a few statements that must not be split by it."""

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Block SIGINT in the main thread for the ``with`` block (POSIX; elsewhere, and in other threads, nothing is
    blocked). A Ctrl-C that arrives meanwhile stays pending and is raised as the block ends, as a
    KeyboardInterrupt at that point.

    >>> with interrupts_held():
    ...     pass
    """
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
