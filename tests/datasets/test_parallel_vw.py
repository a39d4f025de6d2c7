"""streamlearn.datasets._parallel_vw: two threads parse a VW file into exactly the chunks of one reader."""

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
    return path


def _same_chunks(path, chunk_size, spec=SPEC):
    ours = list(parallel_vw_chunks(path, spec, chunk_size, require_label=True))
    one = list(open_stream(path, spec, chunk_size, require_label=True))
    assert [c[0].shape for c in ours] == [c[0].shape for c in one]
    for (X1, y1, w1), (X2, y2, w2) in zip(ours, one):
        assert X1.has_canonical_format
        assert np.array_equal(X1.indptr, X2.indptr) and np.array_equal(X1.indices, X2.indices)
        assert X1.data.tobytes() == X2.data.tobytes()
        assert y1.tobytes() == y2.tobytes() and w1.tobytes() == w2.tobytes()
    return [c[0].shape[0] for c in ours]


@pytest.mark.parametrize("read_bytes", [64, 1000, 4 << 20])  # pieces that span many reads, or one read
@pytest.mark.parametrize("chunk_size", [1, 7, 250, 5000])
def test_chunks_are_those_of_one_reader(odd_file, monkeypatch, read_bytes, chunk_size):
    monkeypatch.setattr(parallel_module, "_READ", read_bytes)
    sizes = _same_chunks(odd_file, chunk_size)
    assert sum(sizes) == 1200 and all(s == chunk_size for s in sizes[:-1])


def test_empty_and_blank_files_give_one_empty_chunk(tmp_path):
    for name, text in [("empty.vw", b""), ("blank.vw", b"\n \n\r\n"), ("one.vw", b"1 |u a")]:
        (tmp_path / name).write_bytes(text)
        assert _same_chunks(tmp_path / name, 3) == ([1] if name == "one.vw" else [0])


def test_a_bad_line_is_reported_with_its_line_number_after_the_chunks_before_it(odd_file, tmp_path, monkeypatch):
    monkeypatch.setattr(parallel_module, "_READ", 1000)
    lines = odd_file.read_bytes().split(b"\r\n")
    lines.insert(901, b"abc |u a")
    bad = tmp_path / "bad.vw"
    bad.write_bytes(b"\n".join(lines))
    got, expected = [], []
    with pytest.raises(VwFormatError) as ours:
        for X, _, _ in parallel_vw_chunks(bad, SPEC, 100, require_label=True):
            got.append(X.shape[0])
    with pytest.raises(VwFormatError) as one:
        for X, _, _ in open_stream(bad, SPEC, 100, require_label=True):
            expected.append(X.shape[0])
    assert str(ours.value) == str(one.value) and ours.value.line == 902
    assert got == expected == [100] * 8  # every full chunk before the bad line, as one reader hands them over


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
