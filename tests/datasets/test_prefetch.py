"""Read-ahead of chunk streams (``streamlearn.datasets._prefetch.prefetch``): same chunks in the same order,
errors raised at the same place, the reader thread stopped and the file closed when the consumer stops."""

import threading
import time

import numpy as np
import pytest

from streamlearn.datasets import iter_vw, write_click_log
from streamlearn.datasets._prefetch import prefetch


def _readers():
    return [t for t in threading.enumerate() if t.name == "streamlearn-reader"]


def _wait_no_reader(timeout=10.0):
    deadline = time.time() + timeout
    while _readers() and time.time() < deadline:
        time.sleep(0.01)
    return not _readers()


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    path = tmp_path_factory.mktemp("pf") / "train.vw"
    write_click_log(path, 5000, seed=3)
    return path


def test_same_chunks_in_the_same_order(log):
    kw = dict(chunk_size=700, bits=18, quadratic=["ua"])
    seq = list(iter_vw(log, **kw))
    par = list(prefetch(iter_vw(log, **kw), depth=1))
    assert len(seq) == len(par) == 8
    for (X1, y1, w1, t1), (X2, y2, w2, t2) in zip(seq, par):
        assert (X1 != X2).nnz == 0 and np.array_equal(X1.indptr, X2.indptr)
        assert np.array_equal(X1.indices, X2.indices) and np.array_equal(X1.data, X2.data)
        assert np.array_equal(y1, y2) and np.array_equal(w1, w2) and t1 == t2
    assert _wait_no_reader()


def test_error_in_the_middle_comes_after_the_chunks_before_it(log, tmp_path):
    lines = log.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.vw"
    bad.write_bytes(b"".join(lines[:2345]) + b"abc |u x\n" + b"".join(lines[2345:]))
    got = []
    with pytest.raises(ValueError, match=r"bad\.vw:2346: bad label 'abc'"):
        for X, *_ in prefetch(iter_vw(bad, chunk_size=500, quadratic=["ua"])):
            got.append(X.shape[0])
    assert got == [500] * 4  # the rows of complete chunks before the bad line, as when read in sequence
    assert _wait_no_reader()


def test_consumer_stopping_early_stops_the_reader_and_closes_the_file(log):
    closed = []

    def chunks():
        try:
            yield from iter_vw(log, chunk_size=100)
        finally:
            closed.append(True)

    it = prefetch(chunks(), depth=1)
    next(it)
    assert len(_readers()) == 1
    it.close()  # an error in the learner, or Ctrl-C: the generator is closed
    assert _wait_no_reader() and closed == [True]


def test_reader_runs_ahead_by_at_most_depth_chunks():
    made = []

    def chunks():
        for i in range(100):
            made.append(i)
            yield i

    it = prefetch(chunks(), depth=2)
    assert next(it) == 0
    time.sleep(0.3)
    assert len(made) <= 4  # the one taken, two queued, one waiting to be queued
    assert list(it) == list(range(1, 100))
    assert _wait_no_reader()


def test_depth_must_be_positive():
    with pytest.raises(ValueError, match="depth must be >= 1"):
        next(prefetch(iter([1]), depth=0))
