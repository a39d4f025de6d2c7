"""A log write that fails (a full disk, a quota): the requests of that batch get 507 and are not learned, the log
is cut back to its last whole record, the model is as before them, and learning goes on; a cut that fails stops
learning. A restart replays exactly the acknowledged updates."""

import asyncio
import errno
import os
from functools import partial

import numpy as np
import pytest

from streamlearn.serve import BadRequest, ServedModel, _wal
from streamlearn.serve._wal import read_records
from tests.serve._rows import labelled_body, served_ftrl

D = 20
PROBE = b"1:1 2:-0.5 3:0.25\n4:1 5:1\n6:-1 7:0.5 8:2\n"


_body = partial(labelled_body, n_features=D)
_served = partial(served_ftrl, n_features=D)


def _scores(m):
    return m.predict(m.parse(PROBE, labelled=False)[0])["scores"]


def _reference(tmp_path, bodies):
    """The model of the acknowledged requests alone, learned one by one by a server of its own."""
    ref = _served(tmp_path / "reference")
    for body in bodies:
        ref.learn_text(body).result(timeout=30)
    return ref


class _Disk:
    """Makes the log's writes fail: ``fail(err, keep)`` makes the next write store its first ``keep`` bytes (a
    torn record) and then raise ``err``; the writes after it succeed. ``locked`` records whether the model lock
    was held during each failing write."""

    def __init__(self, monkeypatch, served):
        self.real = os.writev
        self.served = served
        self.pending = []
        self.locked = []
        monkeypatch.setattr(_wal, "_writev", self.writev)

    def fail(self, err, keep=0):
        self.pending.append((err, keep))

    def writev(self, fd, parts):
        if not self.pending:
            return self.real(fd, parts)
        err, keep = self.pending.pop(0)
        self.locked.append(self.served.lock.locked())
        data = b"".join(bytes(p) for p in parts)
        if keep:
            assert keep < len(data)
            os.write(fd, data[:keep])
        raise OSError(err, os.strerror(err))


def test_a_full_disk_refuses_the_request_and_the_next_one_is_learned(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    state = tmp_path / "state"
    logged = []
    m = _served(state, log=logged.append)
    disk = _Disk(monkeypatch, m)
    acknowledged = [_body(rng, 4), _body(rng, 3)]
    for body in acknowledged:
        m.learn_text(body).result(timeout=30)
    before, n, size = _scores(m), m.stats["n_learned"], m.wal.size

    disk.fail(errno.ENOSPC)
    err = m.learn_text(_body(rng, 5)).exception(timeout=30)
    assert isinstance(err, BadRequest) and err.status == 507
    assert str(err) == (
        "the write-ahead log could not be written (No space left on device): the update was not learned; "
        "retry when there is room."
    )
    assert disk.locked == [True]  # no reader could see the update while it was not in the log
    assert _scores(m) == before and m.stats["n_learned"] == n and m.failed is None
    assert os.path.getsize(m.wal.path) == m.wal.size == size
    health = m.health()
    assert health["status"] == "ok" and health["log_write_errors"] == 1

    # a quota, then a group of three queued requests on a full disk: each gets the error, nothing is learned
    disk.fail(errno.EDQUOT)
    err = m.learn_text(_body(rng, 2)).exception(timeout=30)
    assert err.status == 507 and "(Disk quota exceeded)" in str(err)
    disk.fail(errno.ENOSPC)
    with m._cv:  # hold the writer: the three requests form one group, one log record
        futures = [m.learn_text(_body(rng, 2)) for _ in range(3)]
    assert [f.exception(timeout=30).status for f in futures] == [507, 507, 507]
    assert _scores(m) == before and m.stats["n_learned"] == n and m.health()["log_write_errors"] == 3

    # room again: the next request is learned and acknowledged at the position the refused ones did not take
    body = _body(rng, 6)
    got = m.learn_text(body).result(timeout=30)
    acknowledged.append(body)
    assert got["first"] == n and got["n_learned"] == n + 6
    assert [line for line in logged if "write-ahead log" in line] == [  # once per spell, not once per request
        "the write-ahead log could not be written (No space left on device): the update was not learned; retry "
        "when there is room. Requests are refused with 507 until the log can be written again.",
        "the write-ahead log is written again (3 failed writes so far)",
    ]
    ref = _reference(tmp_path, acknowledged)
    assert _scores(m) == _scores(ref)
    records, good, torn = read_records(m.wal.path)
    assert [p for _, p in records] == acknowledged and not torn and good == m.wal.size

    back = ServedModel(state, snapshot_every=0)  # a crash: a second server on the folder, the first not closed
    assert back.stats["n_learned"] == n + 6 and _scores(back) == _scores(ref)
    for served in (back, ref, m):
        served.close()


@pytest.mark.parametrize("keep", [5, _wal.HEADER.size + 3], ids=["in-header", "in-payload"])
def test_a_torn_write_is_cut_off_and_a_restart_replays_the_acknowledged_updates(tmp_path, monkeypatch, keep):
    """A write that stores part of its record and then fails: the part is cut off, so the next record follows
    the last whole one and a restart replays every acknowledged request, and nothing else. A snapshot taken
    after the failure holds the same model."""
    rng = np.random.default_rng(2)
    state = tmp_path / "state"
    m = _served(state)
    disk = _Disk(monkeypatch, m)
    acknowledged = []
    for k in range(8):
        body = _body(rng, int(rng.integers(1, 6)))
        if k in (2, 3, 6):  # twice in a row (the second learned on a copy of the model), then once more
            disk.fail(errno.ENOSPC, keep=keep)
            assert m.learn_text(body).exception(timeout=30).status == 507
            assert os.path.getsize(m.wal.path) == m.wal.size
            continue
        m.learn_text(body).result(timeout=30)
        acknowledged.append(body)
        if k == 4:
            m.snapshot().result(timeout=30)
    assert m.health()["log_write_errors"] == 3 and m.failed is None
    ref = _reference(tmp_path, acknowledged)
    assert _scores(m) == _scores(ref)
    back = ServedModel(state, snapshot_every=0)  # a crash
    assert back.stats["n_learned"] == ref.stats["n_learned"] == sum(b.count(b"\n") for b in acknowledged)
    assert _scores(back) == _scores(ref)
    assert back.online_metrics() == ref.online_metrics()
    for served in (back, ref, m):
        served.close()


def test_a_write_that_cannot_be_cut_off_stops_learning(tmp_path, monkeypatch):
    """When the torn record cannot be cut off, a later record would follow it: learning stops (503), reads go
    on with the model as before the request, and a restart drops the torn record."""
    rng = np.random.default_rng(3)
    state = tmp_path / "state"
    m = _served(state)
    disk = _Disk(monkeypatch, m)
    acknowledged = [_body(rng, 4)]
    m.learn_text(acknowledged[0]).result(timeout=30)
    before = _scores(m)

    def no_cut(fd, length):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(_wal.os, "ftruncate", no_cut)
    disk.fail(errno.ENOSPC, keep=_wal.HEADER.size + 3)
    err = m.learn_text(_body(rng, 3)).exception(timeout=30)
    assert isinstance(err, BadRequest) and err.status == 503
    assert str(err).startswith("the learner stopped after an error: TornRecordError: ")
    assert "(No space left on device)" in str(err) and "failed too (Input/output error)" in str(err)
    assert m.failed is not None and m.health()["status"] == "failed" and m.health()["log_write_errors"] == 1
    with pytest.raises(BadRequest, match="stopped after an error") as info:
        m.learn_text(_body(rng, 2))
    assert info.value.status == 503
    assert _scores(m) == before
    monkeypatch.undo()
    assert read_records(m.wal.path)[2]  # the torn record is still there
    back = ServedModel(state, snapshot_every=0)
    ref = _reference(tmp_path, acknowledged)
    assert back.stats["n_learned"] == 4 and _scores(back) == _scores(ref)
    for served in (back, ref):
        served.close()
    m.close(snapshot=False)


def test_the_http_answer_and_the_metrics_of_a_full_disk(tmp_path, monkeypatch):
    httpx = pytest.importorskip("httpx")
    from streamlearn.serve import create_app

    m = _served(tmp_path / "state")
    disk = _Disk(monkeypatch, m)
    app = create_app(m)

    async def run():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            disk.fail(errno.ENOSPC)
            refused = await c.post("/learn", content=b"1 1:1\n")
            learned = await c.post("/learn", content=b"1 1:1\n")
            return refused, learned, await c.get("/health"), await c.get("/metrics")

    refused, learned, health, metrics = asyncio.run(run())
    assert refused.status_code == 507 and refused.json()["error"].startswith(
        "the write-ahead log could not be written (No space left on device)"
    )
    assert learned.status_code == 200 and learned.json()["first"] == 0
    assert health.status_code == 200 and health.json()["log_write_errors"] == 1
    assert "\nstreamlearn_log_write_errors_total 1\n" in metrics.text
    m.close()


def test_a_cut_that_cannot_be_fsynced_stops_learning(tmp_path, monkeypatch):
    """The cut is fsynced before anything is written after it; when that fsync fails, pages of the log may be
    lost: learning stops, as after any failed fsync of the log."""
    rng = np.random.default_rng(4)
    m = _served(tmp_path / "state")
    disk = _Disk(monkeypatch, m)
    m.learn_text(_body(rng, 4)).result(timeout=30)
    sync = m.wal.sync

    def broken_sync(slot=None):
        if disk.locked:  # from the failed write on
            raise OSError(errno.EIO, "Input/output error")
        sync(slot)

    m.wal.sync = broken_sync
    disk.fail(errno.ENOSPC, keep=7)
    err = m.learn_text(_body(rng, 3)).exception(timeout=30)
    assert err.status == 503 and str(err) == "the learner stopped after an error: OSError: [Errno 5] Input/output error"
    assert m.failed is not None and m.stats["n_learned"] == 4
    m.close(snapshot=False)


def test_the_log_is_cut_back_after_a_real_short_write(tmp_path):
    """The kernel stores part of a record and then refuses the rest (here the file size limit, EFBIG, which
    fails a write as a full disk does): the log is cut back to its last whole record, and the next record
    follows it."""
    resource = pytest.importorskip("resource")
    import signal

    path = tmp_path / "wal-0.log"
    log = _wal.WriteAheadLog(str(path))
    log.append(0, b"1 1:0.5\n")
    size = log.size
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 30, hard))
    try:
        with pytest.raises(OSError) as info:
            log.write(1, b"-1 2:1 3:1\n" * 10)
        written = os.path.getsize(path)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)
    assert info.value.errno == errno.EFBIG and written == size == log.size
    log.append(1, b"-1 3:1\n")
    log.close()
    assert read_records(str(path)) == ([(0, b"1 1:0.5\n"), (1, b"-1 3:1\n")], path.stat().st_size, False)
