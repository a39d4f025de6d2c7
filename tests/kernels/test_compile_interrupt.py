"""A Ctrl-C while a kernel compiles, or loads from the disk cache, is raised once the kernel is ready
(``streamlearn/_kernels/_numba.py``): numba's compiler is not safe to interrupt."""

import signal
import subprocess
import sys
import threading

import numba
import pytest
from numba.core import event
from numba.core.caching import NullCache

from streamlearn._kernels import _numba
from tests.kernels.test_kernel_cache import _package

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")


def _plus_one(x):
    return x + 1.0


class _CtrlCAtCompileStart(event.Listener):
    def on_start(self, event):
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    def on_end(self, event):
        pass


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="no compilation with NUMBA_DISABLE_JIT=1")
def test_a_ctrl_c_during_a_compilation_is_raised_once_the_kernel_is_compiled():
    kernel = _numba.njit_kernel(_plus_one)
    kernel._cache = NullCache()  # compiled here, whatever a disk cache holds
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with event.install_listener("numba:compile", _CtrlCAtCompileStart()), pytest.raises(KeyboardInterrupt):
            kernel(1.0)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(kernel.signatures) == 1  # the compilation ran to its end before the interrupt was raised
    assert kernel(1.0) == 2.0


_LOAD_INTERRUPTED = """
import signal, threading
from pkg._kernels import _numba
from pkg._kernels.probe import probe

cache = probe._cache
load = cache.load_overload

def interrupted(sig, target_context):  # a Ctrl-C as the cached code starts loading
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
    result = load(sig, target_context)
    print("loaded" if result is not None else "not loaded")
    return result

cache.load_overload = interrupted
try:
    probe(1.0)
except KeyboardInterrupt:
    print("interrupted")
cache.load_overload = load
print(len(probe.signatures), probe(1.0))
"""


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="no compilation with NUMBA_DISABLE_JIT=1")
def test_a_ctrl_c_during_a_load_from_the_cache_is_raised_once_the_kernel_is_loaded(tmp_path):
    _package(tmp_path)
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run = [sys.executable, "-c", "from pkg._kernels.probe import probe; probe(1.0)"]
    assert subprocess.run(run, env=env, timeout=300, check=False).returncode == 0  # compiled and cached
    res = subprocess.run(
        [sys.executable, "-c", _LOAD_INTERRUPTED], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n") == ["loaded", "interrupted", "1 2.0", ""], res.stdout + res.stderr
