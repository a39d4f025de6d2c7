"""Builders shared by the test files.

* ``SHARED_DATA``: the shared data directory (``$STREAMLEARN_SHARED_DATA``, else ``../shared/data`` next to
  the repository) that holds the data sets that are not bundled (farm-ads, MovieLens-100K, a9a's copies).
* ``shared_data_file(relative)``: a file of it, or a skip that says which file is missing and how to point
  the tests at it.
* ``small_problem(n, d, tilt)``: ``(X, y, y_reg)``, a small Gaussian problem with "yes"/"no" labels and a linear
  regression target (the models that the model-file tests save).
* the ``a9a`` fixture: the bundled a9a ``(X, y, X_test, y_test)``, loaded once per test session.
* the ``cli_json`` fixture: ``cli_json(*args)`` runs ``streamlearn ARGS`` in the test's process, checks that it
  exits 0 and returns its standard output read as JSON.

A suite started in the background by a shell (``make test &``) inherits Ctrl-C ignored, and so would every
command the tests start: the tests that send one would see it ignored. Ctrl-C gets Python's handler back at the
start of the session (in each worker process too), so that the commands start with its default action.
"""

import io
import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest

from streamlearn.datasets import load_a9a


def pytest_configure(config):
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


_ENV = "STREAMLEARN_SHARED_DATA"
SHARED_DATA = (
    Path(os.environ[_ENV]) if os.environ.get(_ENV) else Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
)


def shared_data_file(relative):
    """``SHARED_DATA / relative``, or skip the calling test with the reason."""
    path = SHARED_DATA / relative
    if not path.is_file():
        pytest.skip(f"shared data file {path} absent (set {_ENV})")
    return path


def small_problem(n, d, tilt=0.0):
    """``(X, y, y_reg)``: ``n x d`` standard normal rows drawn from ``numpy.random.default_rng(0)``, labels ``"yes"``
    where ``X[:, 0] + tilt * X[:, 1] > 0`` else ``"no"``, and ``y_reg = X @ (0, 1, ..., d - 1)``."""
    X = np.random.default_rng(0).normal(size=(n, d))
    return X, np.where(X[:, 0] + tilt * X[:, 1] > 0, "yes", "no"), X @ np.arange(float(d))


@pytest.fixture
def command_line_handlers():
    """The command line's Ctrl-C and SIGTERM handlers (``streamlearn._signals.handle_interrupts``) for the test;
    the previous handlers, and no interrupt remembered, afterwards."""
    from streamlearn import _signals

    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    _signals.handle_interrupts()
    yield _signals
    for s, h in previous.items():
        signal.signal(s, h)
    _signals._RECEIVED.clear()


@pytest.fixture(scope="session")
def a9a():
    """The bundled a9a: ``(X, y, X_test, y_test)``; tests must not modify the arrays."""
    return load_a9a()


@pytest.fixture
def cli_json(capsys):
    """``cli_json(*args)``: ``streamlearn ARGS`` in this process, exit status 0, its printed JSON."""
    from streamlearn.cli.main import main

    def run(*args):
        assert main(list(args)) == 0
        return json.loads(capsys.readouterr().out)

    return run


class NonSeekable(io.RawIOBase):
    """A binary stream over ``raw`` that cannot seek: read once, as standard input or a pipe."""

    def __init__(self, raw, name=None):
        self._f = io.BytesIO(raw)
        if name is not None:
            self.name = name

    def readable(self):
        return True

    def readinto(self, b):
        return self._f.readinto(b)


def decompressible(kind, data):
    """What a streaming decompressor gives of the (possibly truncated) compressed ``data``; ``kind`` is
    ``gzip``/``gz``, ``bz2``, ``xz`` or ``zstd`` (pyarrow's codec, read 64 KiB at a time: the blocks that are whole)."""
    import bz2
    import lzma
    import zlib

    if kind == "zstd":
        import pyarrow as pa

        stream, parts = pa.CompressedInputStream(pa.BufferReader(data), "zstd"), []
        try:
            while part := stream.read(1 << 16):
                parts.append(part)
        except OSError:  # cut short or damaged: what came before
            pass
        return b"".join(parts)

    d = {"gzip": lambda: zlib.decompressobj(31), "gz": lambda: zlib.decompressobj(31)}.get(kind)
    d = d() if d else {"bz2": bz2.BZ2Decompressor, "xz": lzma.LZMADecompressor}[kind]()
    return d.decompress(data)
