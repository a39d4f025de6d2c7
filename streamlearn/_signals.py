"""Holding Ctrl-C (and SIGTERM) back for a few statements that must not be split by it, and SIGTERM raised as
an interrupt."""

import contextlib
import signal
import threading
from collections.abc import Iterator

#: the signals :func:`interrupts_held` holds back: Ctrl-C and SIGTERM (raised as an interrupt once
#: :func:`terminate_as_interrupt` has run; at its default action, a held SIGTERM ends the process as the block ends)
_HELD = {signal.SIGINT} | ({signal.SIGTERM} if hasattr(signal, "SIGTERM") else set())


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program runs as a Ctrl-C is (see :func:`terminate_as_interrupt`): the
    ``finally`` blocks and ``except BaseException`` handlers that clean up after a Ctrl-C (temporary files
    removed, outputs left as they were) run after a SIGTERM too."""


def _raise_terminated(signum, frame):
    raise Terminated


def terminate_as_interrupt() -> None:
    """Make SIGTERM raise :class:`Terminated` in the main thread (call it from the main thread)."""
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _raise_terminated)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Block SIGINT and SIGTERM in the main thread for the ``with`` block (POSIX; elsewhere, and in other threads,
    nothing is blocked). A Ctrl-C (or SIGTERM) that arrives meanwhile stays pending and is raised as the block
    ends, as a KeyboardInterrupt (:class:`Terminated`) at that point.

    >>> with interrupts_held():
    ...     pass
    """
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
