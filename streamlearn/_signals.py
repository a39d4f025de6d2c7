"""Holding Ctrl-C (and SIGTERM) back for a few statements that must not be split by it; the command line's
handlers, which raise SIGTERM as an interrupt and remember every interrupt they raised."""

import contextlib
import signal
import threading
from collections.abc import Iterator

#: the signals :func:`interrupts_held` holds back: Ctrl-C and SIGTERM (raised as an interrupt once
#: :func:`handle_interrupts` has run; at its default action, a held SIGTERM ends the process as the block ends)
_HELD = {signal.SIGINT} | ({signal.SIGTERM} if hasattr(signal, "SIGTERM") else set())

#: the signals the handlers of :func:`handle_interrupts` have raised as interrupts in this process
_RECEIVED: list[int] = []
#: how many times :func:`raise_if_interrupted` has raised one again
_RAISED_AGAIN = [0]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program runs as a Ctrl-C is (see :func:`handle_interrupts`): the
    ``finally`` blocks and ``except BaseException`` handlers that clean up after a Ctrl-C (temporary files
    removed, outputs left as they were) run after a SIGTERM too."""


def _raise_interrupt(signum, frame):
    _RECEIVED.append(signum)
    raise Terminated if signum != signal.SIGINT else KeyboardInterrupt


def handle_interrupts() -> None:
    """The command line's handlers (call it from the main thread): Ctrl-C raises KeyboardInterrupt and SIGTERM
    :class:`Terminated` in the main thread, and both are remembered for :func:`raise_if_interrupted`."""
    signal.signal(signal.SIGINT, _raise_interrupt)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _raise_interrupt)


def raise_if_interrupted() -> None:
    """Raise the interrupt again if one was raised in this process by :func:`handle_interrupts`' handlers.

    Python runs a signal's handler in whatever Python code the main thread runs next, which can be a callback
    from a library's compiled code (an attribute look-up, a ``__del__``) that discards every exception raised in
    it: the KeyboardInterrupt is then lost, and the command would go on and end as if no Ctrl-C had come. The
    command line calls this where a lost one must not pass: before it replaces an output file, at every chunk of
    data and as the command ends. Once an interrupt has been raised, the process is stopping (a command that
    catches one to stop in order says so with :func:`interrupts_handled`).

    >>> raise_if_interrupted()  # no interrupt so far
    """
    if _RECEIVED:
        _RAISED_AGAIN[0] += 1
        raise Terminated if any(s != signal.SIGINT for s in _RECEIVED) else KeyboardInterrupt


def raised_again() -> int:
    """How many times :func:`raise_if_interrupted` has raised an interrupt again (a program that would send a lost
    interrupt again later checks that it has not been raised meanwhile: a second one would cut its clean-up)."""
    return _RAISED_AGAIN[0]


def interrupts_handled() -> None:
    """Forget the interrupts raised so far: the program caught them and stopped as they asked (the model server's
    orderly stop at Ctrl-C or SIGTERM), so :func:`raise_if_interrupted` must not raise them again."""
    _RECEIVED.clear()


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back for the ``with`` block (in the main thread; elsewhere nothing is held). One that
    arrives meanwhile is raised as the block ends, as a KeyboardInterrupt (:class:`Terminated`) at that point.

    A signal handled in Python (Ctrl-C's KeyboardInterrupt, :func:`handle_interrupts`' SIGTERM) is noted by a
    stand-in handler during the block and sent again as it ends. Blocking it with a signal mask would not do: the
    mask is the calling thread's, and the system hands a signal sent to the process to another thread (a reader
    parsing ahead), where Python's C-level handler still schedules the KeyboardInterrupt in the main thread, inside
    the block. A signal at its system default action (a SIGTERM that ends the process) is blocked with the mask
    (POSIX) and so ends the process as the block ends, when the main thread is the only one.

    >>> with interrupts_held():
    ...     pass
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum, frame):
        noted.append(signum)

    replaced = {}  # signal -> the Python handler it had
    masked = []
    previous = None
    try:
        for signum in sorted(_HELD):
            handler = signal.getsignal(signum)
            if callable(handler):
                replaced[signum] = handler  # first: restored even if the swap below raises a pending interrupt
                signal.signal(signum, note)
            elif handler != signal.SIG_IGN:
                masked.append(signum)
        if masked and hasattr(signal, "pthread_sigmask"):
            previous = signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the mask to restore, before changing it
            signal.pthread_sigmask(signal.SIG_BLOCK, masked)
        yield
    finally:
        interrupt = None
        for signum, handler in replaced.items():
            while True:  # a handler restored just before can raise a signal arriving now, before this one is set
                try:
                    signal.signal(signum, handler)
                    break
                except KeyboardInterrupt as exc:
                    interrupt = interrupt or exc
        if previous is not None:
            try:
                signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # a pending default-action signal acts here
            except KeyboardInterrupt as exc:  # raised by a restored handler once the mask is back
                interrupt = interrupt or exc
        if interrupt is not None:
            raise interrupt
        if noted:
            signal.raise_signal(noted[0])  # the handler restored above raises it, in this thread, now
