"""Ctrl-C and SIGTERM held back for a block of statements (streamlearn._signals.interrupts_held)."""

import contextlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from streamlearn import _signals
from streamlearn._signals import Terminated, interrupts_held, raise_if_interrupted

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")


@pytest.fixture
def handlers(command_line_handlers):
    """Ctrl-C raises KeyboardInterrupt and SIGTERM raises Terminated (the command line's handlers); both restored."""
    return command_line_handlers


@pytest.fixture
def other_thread():
    """A second thread, alive during the test, that does not block any signal."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    yield thread
    stop.set()
    thread.join()


def _busy(seconds=0.05):
    """Run bytecodes for a while: Python raises a pending interrupt at the first boundary it meets."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


@pytest.mark.parametrize(
    "signum,raised", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)], ids=["SIGINT", "SIGTERM"]
)
@pytest.mark.parametrize("where", ["main thread", "other thread"])
def test_a_signal_in_the_block_is_raised_as_the_block_ends(handlers, other_thread, signum, raised, where):
    """Sent to the process, a signal goes to any thread not blocking it: Python's handler then runs in the main
    thread whichever thread received it, and must wait for the end of the block either way."""
    done = []
    with pytest.raises(raised):  # noqa: PT012
        with interrupts_held():
            signal.pthread_kill(threading.main_thread().ident if where == "main thread" else other_thread.ident, signum)
            _busy()
            done.append(True)
        done.append("after")
    assert done == [True]
    assert signal.getsignal(signal.SIGINT) is _signals._raise_interrupt


def test_handlers_are_restored_and_a_quiet_block_raises_nothing(handlers):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with interrupts_held():
        _busy(0.01)
    assert {s: signal.getsignal(s) for s in before} == before


def test_nested_blocks_raise_once_at_the_outer_end(handlers, other_thread):
    steps = []
    with pytest.raises(KeyboardInterrupt), interrupts_held():  # noqa: PT012
        with interrupts_held():
            signal.pthread_kill(other_thread.ident, signal.SIGINT)
            _busy()
            steps.append("inner")
        _busy()
        steps.append("outer")
    assert steps == ["inner", "outer"]
    assert signal.getsignal(signal.SIGINT) is _signals._raise_interrupt


def test_an_interrupt_raised_at_the_start_leaves_the_handlers_as_they_were(handlers):
    """A Ctrl-C already scheduled when the block starts is raised there, before the block; nothing stays swapped."""
    with pytest.raises(KeyboardInterrupt):  # noqa: PT012
        signal.raise_signal(signal.SIGINT)  # raised right here, at the latest at the block's first statement
        with interrupts_held():
            raise AssertionError("the block ran")
    assert signal.getsignal(signal.SIGINT) is _signals._raise_interrupt
    assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL


def test_in_another_thread_nothing_is_held(handlers):
    seen = []

    def work():
        with interrupts_held():
            seen.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == [_signals._raise_interrupt]


def test_a_sigterm_at_its_default_action_ends_the_process_as_the_block_ends():
    """No Python handler: the signal mask holds it, and the process ends by SIGTERM once the block is over."""
    code = textwrap.dedent(
        """
        import os, signal, sys
        from streamlearn._signals import interrupts_held
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with interrupts_held():
            os.kill(os.getpid(), signal.SIGTERM)
            print("block ended", flush=True)
        print("after the block", flush=True)
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == -signal.SIGTERM, run.stderr
    assert run.stdout == "block ended\n"


@pytest.mark.parametrize(
    "signum,raised", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)], ids=["SIGINT", "SIGTERM"]
)
def test_an_interrupt_a_library_discarded_is_raised_again(handlers, signum, raised):
    """A handler's KeyboardInterrupt raised inside a callback that discards every exception (as compiled code
    that looks up an attribute can) is lost to the program; raise_if_interrupted raises it again."""
    raise_if_interrupted()  # none yet
    with contextlib.suppress(KeyboardInterrupt):  # discarded
        signal.raise_signal(signum)
    with pytest.raises(raised):
        raise_if_interrupted()
    with pytest.raises(raised):
        raise_if_interrupted()  # and at every later check: the process is stopping
