"""streamlearn.datasets._parallel_vw: worker threads and the consumer parse a VW file into exactly the chunks of one
reader."""

import re
import threading
import time

import numpy as np
import pytest

import streamlearn.datasets._parallel_vw as parallel_module
from streamlearn.datasets import InputSpec, VwFormatError, open_stream, write_click_log
from streamlearn.datasets._parallel_vw import parallel_vw_chunks, use_parallel

SPEC = InputSpec(format="vw", bits=16, interactions=["ua"])


@pytest.fixture(scope="module")
def odd_file(tmp_path_factory):
    """A click log with blank and whitespace-only lines, CRLF line ends, a BOM and no final newline."""
    d = tmp_path_factory.mktemp("parallel")
    write_click_log(d / "log.vw", 1200, seed=3)
    lines = (d / "log.vw").read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i % 37 == 0:
            out.append("")
        if i % 53 == 0:
            out.append(" \t ")
    path = d / "odd.vw"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(out).encode())
    # the parsers' kernels compiled (or loaded) here, outside the tests' 30 s deadline that tells a hang: there
    # the first test also paid for the compilation
    list(parallel_vw_chunks(path, SPEC, 5000, require_label=True, workers=0))
    list(open_stream(path, SPEC, 5000, require_label=True))
    return path


def _same_chunks(path, chunk_size, spec=SPEC, workers=None):
    ours = list(parallel_vw_chunks(path, spec, chunk_size, require_label=True, workers=workers))
    one = list(open_stream(path, spec, chunk_size, require_label=True))
    assert [c[0].shape for c in ours] == [c[0].shape for c in one]
    for (X1, y1, w1), (X2, y2, w2) in zip(ours, one):
        assert X1.has_canonical_format
        assert np.array_equal(X1.indptr, X2.indptr) and np.array_equal(X1.indices, X2.indices)
        assert X1.data.tobytes() == X2.data.tobytes()
        assert y1.tobytes() == y2.tobytes() and w1.tobytes() == w2.tobytes()
    return [c[0].shape[0] for c in ours]


@pytest.mark.parametrize("workers", [0, 1, 2])  # 0: the consumer parses every piece itself
@pytest.mark.parametrize("read_bytes", [64, 1000, 4 << 20])  # pieces that span many reads, or one read
@pytest.mark.parametrize("chunk_size", [1, 7, 250, 5000])
def test_chunks_are_those_of_one_reader(odd_file, monkeypatch, read_bytes, chunk_size, workers):
    monkeypatch.setattr(parallel_module, "_READ", read_bytes)
    sizes = _with_deadline(lambda: _same_chunks(odd_file, chunk_size, workers=workers))
    assert sum(sizes) == 1200 and all(s == chunk_size for s in sizes[:-1])


def test_empty_and_blank_files_give_one_empty_chunk(tmp_path):
    for name, text in [("empty.vw", b""), ("blank.vw", b"\n \n\r\n"), ("one.vw", b"1 |u a")]:
        (tmp_path / name).write_bytes(text)
        assert _same_chunks(tmp_path / name, 3) == ([1] if name == "one.vw" else [0])


@pytest.mark.parametrize("workers", [0, 1, 2])
@pytest.mark.parametrize(
    "bad_line, reason",
    [
        (b"abc |u a", "bad label"),
        (b"1 |u a:1e200 |a b:1e200", r"hashed column \d+ is inf: the product of crossed features"),
    ],
)
def test_a_bad_line_is_reported_with_its_line_number_after_the_chunks_before_it(
    odd_file, tmp_path, monkeypatch, workers, bad_line, reason
):
    monkeypatch.setattr(parallel_module, "_READ", 1000)
    lines = odd_file.read_bytes().split(b"\r\n")
    lines.insert(901, bad_line)
    bad = tmp_path / "bad.vw"
    bad.write_bytes(b"\n".join(lines))
    got, expected = [], []
    with pytest.raises(VwFormatError) as ours:
        for X, _, _ in parallel_vw_chunks(bad, SPEC, 100, require_label=True, workers=workers):
            got.append(X.shape[0])
    with pytest.raises(VwFormatError) as one:
        for X, _, _ in open_stream(bad, SPEC, 100, require_label=True):
            expected.append(X.shape[0])
    assert str(ours.value) == str(one.value) and ours.value.line == 902
    assert re.match(reason, ours.value.reason)
    assert got == expected == [100] * 8  # every full chunk before the bad line, as one reader hands them over


def _with_deadline(fn, seconds=30.0):
    """``fn()`` in a thread: a consumer that waits for a piece nobody parses fails the test instead of hanging."""
    out = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "no thread parsed the piece the consumer waits for"
    assert out, "the reader raised (see the thread's traceback above)"
    return out[0]


def _recording_parsers(monkeypatch, delay_workers=0.0):
    """Record the name of the thread that parses each piece; workers take ``delay_workers`` s more per piece."""
    original = parallel_module._VwParser.chunks
    who = []

    def chunks(self, *args, **kwargs):
        name = threading.current_thread().name
        who.append(name)
        if name.startswith("streamlearn-parse"):
            time.sleep(delay_workers)
        yield from original(self, *args, **kwargs)

    monkeypatch.setattr(parallel_module._VwParser, "chunks", chunks)
    return who


def test_the_consumer_parses_every_piece_without_workers(odd_file, monkeypatch):
    monkeypatch.setattr(parallel_module, "_READ", 1000)
    who = _recording_parsers(monkeypatch)
    _with_deadline(lambda: _same_chunks(odd_file, 50, workers=0))
    assert not [n for n in who if n.startswith("streamlearn-")]
    assert len(who) > 24  # every piece (of 50 lines, blank ones included), and the comparison reader


def test_the_consumer_takes_the_pieces_a_slow_worker_has_not_started(odd_file, monkeypatch):
    monkeypatch.setattr(parallel_module, "_READ", 1000)
    who = _recording_parsers(monkeypatch, delay_workers=0.05)
    _with_deadline(lambda: _same_chunks(odd_file, 50, workers=1))
    by_worker = [n for n in who if n.startswith("streamlearn-parse")]
    assert by_worker and len(who) - 1 - len(by_worker) > len(by_worker)


def test_an_interrupt_in_the_consumers_parse_is_raised_at_once(tmp_path, monkeypatch):
    # the worker parses the first piece slowly, so the consumer takes the second one and is interrupted there:
    # the interrupt is raised then, not kept for its turn in the file as a worker's error would be
    write_click_log(tmp_path / "log.vw", 1000, seed=3)  # no blank lines: the first piece is the first chunk
    monkeypatch.setattr(parallel_module, "_READ", 1000)
    original = parallel_module._VwParser.chunks

    def chunks(self, *args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt
        time.sleep(0.3)
        yield from original(self, *args, **kwargs)

    result = parallel_module._Pieces.result

    def late_result(self, k):
        if k == 0:
            time.sleep(0.1)  # the worker has taken the first piece by then
        return result(self, k)

    monkeypatch.setattr(parallel_module._VwParser, "chunks", chunks)
    monkeypatch.setattr(parallel_module._Pieces, "result", late_result)
    with pytest.raises(KeyboardInterrupt):
        next(parallel_vw_chunks(tmp_path / "log.vw", SPEC, 100, require_label=True, workers=1))
    assert not [t.name for t in threading.enumerate() if t.name.startswith("streamlearn-")]


def test_the_threads_stop_when_the_reader_stops(odd_file, monkeypatch):
    monkeypatch.setattr(parallel_module, "_READ", 64)
    chunks = parallel_vw_chunks(odd_file, SPEC, 10, require_label=True)
    next(chunks)
    chunks.close()
    deadline = time.time() + 10
    while time.time() < deadline and any(t.name.startswith("streamlearn-") for t in threading.enumerate()):
        time.sleep(0.02)
    assert not [t.name for t in threading.enumerate() if t.name.startswith("streamlearn-")]


def test_which_files_are_parsed_in_two_threads(odd_file, tmp_path, monkeypatch):
    monkeypatch.setattr(parallel_module, "_cores", lambda: 2)
    assert use_parallel(odd_file, SPEC, min_bytes=0)
    assert not use_parallel(odd_file, SPEC)  # small: below PARALLEL_MIN_BYTES
    assert not use_parallel(odd_file, InputSpec(format="libsvm"), min_bytes=0)
    gz = tmp_path / "log.vw.gz"
    import gzip

    gz.write_bytes(gzip.compress(odd_file.read_bytes()))
    assert not use_parallel(gz, SPEC, min_bytes=0)  # compressed: decompressed by one reader
    assert not use_parallel(tmp_path / "missing.vw", SPEC, min_bytes=0)
    monkeypatch.setattr(parallel_module, "_cores", lambda: 1)
    assert not use_parallel(odd_file, SPEC, min_bytes=0)


def test_closing_waits_for_the_workers_to_finish_their_piece(odd_file, monkeypatch):
    # a worker still parsing (compiled code, no GIL) when the interpreter exits could crash it: close() returns
    # only once every thread has stopped
    original = parallel_module._VwParser.chunks

    def slow_chunks(self, *args, **kwargs):
        time.sleep(0.3)  # a long parse
        yield from original(self, *args, **kwargs)

    monkeypatch.setattr(parallel_module._VwParser, "chunks", slow_chunks)
    chunks = parallel_vw_chunks(odd_file, SPEC, 100, require_label=True)
    next(chunks)  # the workers are now parsing the next pieces
    chunks.close()
    assert not [t.name for t in threading.enumerate() if t.name.startswith("streamlearn-")]
