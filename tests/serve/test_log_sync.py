"""The log-sync threads fsync the write-ahead log through open file descriptions of their own. The kernel reports
a write-back error (EIO) once per open file description: two overlapping fsyncs through one description would
report it to one of them only, and the other would acknowledge updates whose pages did not reach the disk."""

import errno
import os
import threading
import time
from functools import partial

import numpy as np
import pytest

from streamlearn.serve import BadRequest, _wal
from streamlearn.serve._core import _SYNC_THREADS
from streamlearn.serve._wal import WriteAheadLog
from tests.serve._rows import labelled_body, served_ftrl

D = 20
WAIT = 30


_body = partial(labelled_body, n_features=D)
_served = partial(served_ftrl, n_features=D)


def _until(condition, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


class _Kernel:
    """``os.open``, ``os.dup``, ``os.close`` and ``os.fsync`` with the kernel's rule for write-back errors: an
    error is recorded on the file (``fail(path)``), and each open file description reports each error once, to
    the first fsync through it that checks after the error (``os.dup`` shares the description of its fd).

    ``hold(n)``: the next ``n`` fsyncs of the log-sync threads wait in the call (``entered``: ``(fd, release)``
    of each) until ``release`` is set; an fsync that reports an error waits until ``report`` is set before it
    raises (``failing``: how many wait there)."""

    def __init__(self, monkeypatch):
        self.real = {name: getattr(os, name) for name in ("open", "dup", "close", "fsync")}
        self.lock = threading.Lock()
        self.errors = {}  # (st_dev, st_ino) -> write-back errors recorded on that file
        self.descriptions = {}  # fd -> [description id, (st_dev, st_ino), errors seen]
        self.paths = {}  # fd -> the path it was opened with
        self.next_id = 0
        self.held = 0
        self.entered = []
        self.failing = 0
        self.report = threading.Event()
        for name in self.real:
            monkeypatch.setattr(_wal.os, name, getattr(self, name))

    @staticmethod
    def _key(stat):
        return stat.st_dev, stat.st_ino

    def open(self, path, flags, mode=0o777, **kw):
        fd = self.real["open"](path, flags, mode, **kw)
        key = self._key(os.fstat(fd))
        with self.lock:
            self.next_id += 1
            self.descriptions[fd] = [self.next_id, key, self.errors.get(key, 0)]
            self.paths[fd] = os.fspath(path)
        return fd

    def dup(self, fd, *args):
        new = self.real["dup"](fd, *args)
        with self.lock:
            if fd in self.descriptions:
                self.descriptions[new] = self.descriptions[fd]  # the same description, not a copy
                self.paths[new] = self.paths[fd]
        return new

    def close(self, fd):
        with self.lock:
            self.descriptions.pop(fd, None)
            self.paths.pop(fd, None)
        self.real["close"](fd)

    def fail(self, path):
        key = self._key(os.stat(path))
        with self.lock:
            self.errors[key] = self.errors.get(key, 0) + 1

    def hold(self, n):
        with self.lock:
            self.held += n

    def open_logs(self, folder):
        with self.lock:
            return sorted(
                (fd, path)
                for fd, path in self.paths.items()
                if os.path.dirname(path) == os.fspath(folder) and os.path.basename(path).startswith("wal-")
            )

    def fsync(self, fd):
        release = None
        with self.lock:
            if self.held and threading.current_thread().name.startswith("streamlearn-log-sync-"):
                self.held -= 1
                release = threading.Event()
                self.entered.append((fd, release))
        if release is not None:
            assert release.wait(WAIT), "an fsync was held for too long"
        self.real["fsync"](fd)
        key = self._key(os.fstat(fd))
        with self.lock:
            description = self.descriptions.get(fd)
            if key not in self.errors:
                return
            assert description is not None, "an fsync of the log through a descriptor not made by os.open"
            if description[2] == self.errors[key]:
                return
            description[2] = self.errors[key]  # reported once to this description
            self.failing += 1
        assert self.report.wait(WAIT), "a failing fsync was held for too long"
        raise OSError(errno.EIO, os.strerror(errno.EIO))


def _overlapping(kernel, m, rng):
    """Two requests whose fsyncs run at the same time, in the two log-sync threads (both are held): their
    futures and the descriptors of the two fsyncs."""
    kernel.hold(2)
    first = m.learn_text(_body(rng, 3))
    assert _until(lambda: len(kernel.entered) == 1)
    second = m.learn_text(_body(rng, 2))
    assert _until(lambda: len(kernel.entered) == 2)
    assert not first.done() and not second.done()
    return first, second, [fd for fd, _ in kernel.entered]


def test_the_log_sync_threads_fsync_through_open_file_descriptions_of_their_own(tmp_path, monkeypatch):
    assert _SYNC_THREADS == 2
    kernel = _Kernel(monkeypatch)
    rng = np.random.default_rng(1)
    state = tmp_path / "state"
    m = _served(state)
    m.learn_text(_body(rng, 4)).result(timeout=WAIT)
    first, second, fds = _overlapping(kernel, m, rng)
    writer = m.wal.fd
    log = os.stat(m.wal.path)
    assert len(set(fds + [writer])) == 3  # three descriptors ...
    assert all(kernel._key(os.fstat(fd)) == kernel._key(log) for fd in fds)  # ... of the log ...
    # ... and three open file descriptions: moving the offset of one leaves the others' (a dup shares it)
    offsets = {fd: os.lseek(fd, 0, os.SEEK_CUR) for fd in fds + [writer]}
    for k, fd in enumerate(fds):
        marker = max(offsets.values()) + 1 + k
        os.lseek(fd, marker, os.SEEK_SET)
        assert {other: os.lseek(other, 0, os.SEEK_CUR) for other in offsets if other != fd} == {
            other: offset for other, offset in offsets.items() if other != fd
        }
        os.lseek(fd, offsets[fd], os.SEEK_SET)
    assert len({kernel.descriptions[fd][0] for fd in fds + [writer]}) == 3
    for _, release in kernel.entered:
        release.set()
    assert first.result(timeout=WAIT)["learned"] == 3 and second.result(timeout=WAIT)["learned"] == 2

    # a snapshot starts a new log and closes the old one's descriptors; closing the server closes the new one's
    old = m.wal.path
    assert [path for _, path in kernel.open_logs(state)] == [old] * (1 + _SYNC_THREADS)
    m.snapshot().result(timeout=WAIT)
    assert m.wal.path != old
    assert [path for _, path in kernel.open_logs(state)] == [m.wal.path] * (1 + _SYNC_THREADS)
    m.learn_text(_body(rng, 2)).result(timeout=WAIT)
    m.close()
    assert kernel.open_logs(state) == []


def test_a_write_back_error_during_overlapping_fsyncs_acknowledges_nothing_written_before_it(tmp_path, monkeypatch):
    """Both log-sync threads are in an fsync when a page of the log fails to reach the disk: each of them sees
    the error, and neither request is acknowledged (503); learning stops. Through one shared description, the
    fsync that checks second would succeed and acknowledge requests whose pages may be lost."""
    kernel = _Kernel(monkeypatch)
    rng = np.random.default_rng(2)
    m = _served(tmp_path / "state")
    acknowledged = m.learn_text(_body(rng, 4)).result(timeout=WAIT)
    first, second, _ = _overlapping(kernel, m, rng)
    kernel.fail(m.wal.path)
    for _, release in kernel.entered:
        release.set()
    # both fsyncs report the error (and wait to raise it), or one succeeds and its requests are answered
    assert _until(lambda: kernel.failing == 2 or first.done() or second.done())
    kernel.report.set()
    for fut in (first, second):
        exc = fut.exception(timeout=WAIT)
        assert isinstance(exc, BadRequest) and exc.status == 503, fut.result()
        assert str(exc) == "the learner stopped after an error: OSError: [Errno 5] Input/output error"
    assert kernel.failing == 2
    assert m.failed is not None and m.health()["status"] == "failed"
    assert m.stats["n_learned"] == acknowledged["n_learned"] + 5  # learned, not acknowledged
    with pytest.raises(BadRequest, match="stopped after an error"):
        m.learn_text(_body(rng, 1))
    m.close(snapshot=False)


def test_an_fsync_that_succeeds_after_another_failed_acknowledges_nothing(tmp_path, monkeypatch):
    """One fsync fails; the one that overlapped it returns success afterwards: its requests get 503 as well,
    since after a failed fsync it is not known which pages reached the disk."""
    kernel = _Kernel(monkeypatch)
    rng = np.random.default_rng(3)
    m = _served(tmp_path / "state")
    m.learn_text(_body(rng, 4)).result(timeout=WAIT)
    first, second, _ = _overlapping(kernel, m, rng)
    (_, release_first), (fd_second, release_second) = kernel.entered
    kernel.fail(m.wal.path)
    kernel.report.set()
    release_first.set()
    assert _until(lambda: m.failed is not None)
    assert isinstance(first.exception(timeout=WAIT), BadRequest) and not second.done()
    with kernel.lock:  # the second fsync does not report the error (as through a shared description)
        kernel.descriptions[fd_second][2] = kernel.errors[kernel._key(os.fstat(fd_second))]
    release_second.set()
    exc = second.exception(timeout=WAIT)
    assert isinstance(exc, BadRequest) and exc.status == 503 and "Input/output error" in str(exc)
    m.close(snapshot=False)


def test_each_sync_slot_is_a_description_of_its_own_closed_with_the_log(tmp_path):
    path = str(tmp_path / "wal-0.log")
    log = WriteAheadLog(path, sync_slots=2)
    log.append(0, b"1 1:0.5\n")
    log.write(1, b"-1 2:1\n")
    log.sync(0)
    log.sync(1)
    fds = [log.fd, *log._sync_fds]
    assert len(set(fds)) == 3
    assert len({(os.fstat(fd).st_dev, os.fstat(fd).st_ino) for fd in fds}) == 1
    os.lseek(fds[1], 3, os.SEEK_SET)
    assert os.lseek(fds[2], 0, os.SEEK_CUR) == 0 and os.lseek(fds[0], 0, os.SEEK_CUR) == log.size
    log.close()
    for fd in fds:
        with pytest.raises(OSError):
            os.fstat(fd)
    log.close()  # twice: nothing left to close
    unsynced = WriteAheadLog(path, sync_slots=2, fsync=False)
    assert unsynced._sync_fds == []  # no fsync: no descriptions for it
    unsynced.sync(0)
    unsynced.close()
