"""VW text and CSV from pipes: ``-``, ``/dev/stdin`` and a FIFO as DATA of ``train``, ``predict``, ``evaluate``.

A pipe is read once, in chunks; the results are the file path's, bit for bit (same model arrays, same
predictions). The format of a pipe comes from ``--format``, the model (``predict``) or its first lines.
"""

import gzip
import json
import os
import random
import re
import subprocess
import sys
import threading
import zipfile

import pytest

from streamlearn.datasets import write_click_log
from streamlearn.datasets._pipes import decompressed_head
from tests.cli._subprocess import ENV, assert_ctrl_c_on_open_pipe_leaves_output
from tests.cli._subprocess import cli as _cli
from tests.cli._subprocess import one_line_error as _one_line_error


def _members(path):
    """A model file's members (the zip's timestamps aside): equal members, equal models bit for bit."""
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def _no_seconds(text):
    def drop(o):
        if isinstance(o, dict):
            return {k: drop(v) for k, v in o.items() if "seconds" not in k and k != "examples_per_second"}
        if isinstance(o, list):
            return [drop(v) for v in o]
        return o

    return drop(json.loads(text))


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Click logs as VW text and CSV; the CSV is longer than pyarrow's first block (1 MiB), from which the
    column types are inferred."""
    d = tmp_path_factory.mktemp("pipes")
    write_click_log(d / "c.vw", 4000, seed=1)
    write_click_log(d / "c.csv", 20000, seed=1)
    write_click_log(d / "t.parquet", 50, seed=2)
    assert (d / "c.csv").stat().st_size > 1 << 20
    return d


VW_OPTS = ["-l", "ftrl", "-b", "18", "-q", "ua", "--chunk-size", "700"]
CSV_OPTS = ["-l", "ftrl", "--label", "clicked", "-q", "ua", "--chunk-size", "700"]


@pytest.mark.parametrize(("name", "opts"), [("c.vw", VW_OPTS), ("c.csv", CSV_OPTS)])
def test_train_predict_evaluate_from_stdin_equal_the_file(logs, tmp_path, name, opts):
    data = logs / name
    text = data.read_bytes()
    fmt = ["--format", name.split(".")[1]]
    res = _cli("train", str(data), *opts, "-o", str(tmp_path / "f.slm"), "--json")
    assert res.returncode == 0, res.stderr
    file_out = _no_seconds(res.stdout)
    # standard input, told by --format, and by its first lines (gzip'd: recognised by its magic bytes)
    for i, (extra, payload) in enumerate([(fmt, text), ([], text), ([], gzip.compress(text, mtime=0))]):
        res = _cli("train", "-", *extra, *opts, "-o", str(tmp_path / f"p{i}.slm"), "--json", input=payload)
        assert res.returncode == 0, res.stderr
        assert _no_seconds(res.stdout) == file_out
        assert _members(tmp_path / f"p{i}.slm") == _members(tmp_path / "f.slm")
    model = str(tmp_path / "f.slm")
    want = _cli("predict", model, str(data), "--scores")
    assert want.returncode == 0 and len(want.stdout.splitlines()) == text.count(b"\n") - name.endswith("csv")
    got = _cli("predict", model, "-", "--scores", input=text)
    assert got.returncode == 0 and got.stdout == want.stdout, got.stderr
    ev_file = _cli("evaluate", str(data), *opts, "--json")
    ev_pipe = _cli("evaluate", "/dev/stdin", *opts, "--json", input=text)
    assert ev_file.returncode == 0 and ev_pipe.returncode == 0, ev_pipe.stderr
    assert _no_seconds(ev_pipe.stdout) == _no_seconds(ev_file.stdout)


def _through_fifo(tmp_path, args, payload):
    fifo = tmp_path / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlearn", *[str(fifo) if a == "FIFO" else a for a in args]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )

    def write():
        with open(fifo, "wb") as w:
            w.write(payload)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    out, err = proc.communicate(timeout=300)
    t.join(timeout=10)
    return proc.returncode, out, err


def test_fifo_for_vw_and_csv(logs, tmp_path):
    vw, csv = logs / "c.vw", logs / "c.csv"
    assert _cli("train", str(vw), *VW_OPTS, "-o", str(tmp_path / "v.slm"), "--quiet").returncode == 0
    code, _, err = _through_fifo(tmp_path, ["train", "FIFO", *VW_OPTS, "-o", str(tmp_path / "vf.slm")], vw.read_bytes())
    assert code == 0 and _members(tmp_path / "vf.slm") == _members(tmp_path / "v.slm"), err
    assert _cli("train", str(csv), *CSV_OPTS, "-o", str(tmp_path / "c.slm"), "--quiet").returncode == 0
    want = _cli("predict", str(tmp_path / "c.slm"), str(csv), "--scores").stdout
    code, out, err = _through_fifo(tmp_path, ["predict", str(tmp_path / "c.slm"), "FIFO", "--scores"], csv.read_bytes())
    assert code == 0 and out == want, err


def test_a_stream_that_does_not_tell_its_format_asks_for_format():
    res = _cli("train", "-", "-l", "ftrl", input=b"just some words\nand more\n")
    assert res.returncode == 2 and _one_line_error(res.stderr) and b"--format" in res.stderr, res.stderr
    # LIBSVM from standard input is still told by its lines
    res = _cli("train", "-", "-l", "pa1", "--json", input=b"1 1:1 3:2\n-1 2:1\n1 1:2\n")
    assert res.returncode == 0 and json.loads(res.stdout)["n_train"] == 3, res.stderr


@pytest.mark.parametrize(
    ("name", "opts", "bad", "where"),
    [
        ("c.vw", VW_OPTS, b"abc |u x\n", b"<stdin>:3001: bad label 'abc'"),
        ("c.csv", CSV_OPTS, b"0,zz,1,ES,tv,u1,a1,v1,c5,0.4,1\n", b"<stdin>, line 19001, column 'age'"),
    ],
)
def test_bad_line_mid_stream_names_the_line_and_leaves_outputs(logs, tmp_path, name, opts, bad, where):
    lines = (logs / name).read_bytes().splitlines(keepends=True)
    k = 19000 if name.endswith("csv") else 3000  # CSV: after the first block, whose types are inferred
    payload = b"".join(lines[:k]) + bad + b"".join(lines[k:])
    out = tmp_path / "m.slm"
    out.write_bytes(b"old model")
    res = _cli("train", "-", *opts, "-o", str(out), input=payload)
    assert res.returncode == 2 and _one_line_error(res.stderr) and where in res.stderr, res.stderr
    assert out.read_bytes() == b"old model" and sorted(p.name for p in tmp_path.iterdir()) == ["m.slm"]
    model = tmp_path / "good.slm"
    assert _cli("train", str(logs / name), *opts, "-o", str(model), "--quiet").returncode == 0
    pred = tmp_path / "p.txt"
    pred.write_text("old predictions\n")
    res = _cli("predict", str(model), "-", "-o", str(pred), input=payload)
    assert res.returncode == 2 and _one_line_error(res.stderr) and where in res.stderr, res.stderr
    assert pred.read_text() == "old predictions\n"


@pytest.mark.parametrize(("name", "opts"), [("c.vw", VW_OPTS), ("c.csv", CSV_OPTS)])
def test_more_than_one_pass_over_a_pipe_is_one_line_asking_for_a_file(logs, name, opts):
    res = _cli("train", "-", *opts, "--passes", "2", input=(logs / name).read_bytes())
    assert res.returncode == 2 and _one_line_error(res.stderr), res.stderr
    assert b"--passes > 1 needs a file" in res.stderr


def test_parquet_from_a_pipe_is_one_line_asking_for_a_path(logs, tmp_path):
    payload = (logs / "t.parquet").read_bytes()
    for extra in ([], ["--format", "parquet"]):
        res = _cli("train", "-", *extra, *CSV_OPTS, input=payload)
        assert res.returncode == 2 and _one_line_error(res.stderr), res.stderr
        assert b"Parquet cannot be read from a pipe" in res.stderr and b"path" in res.stderr
    model = tmp_path / "m.slm"
    assert _cli("train", str(logs / "c.csv"), *CSV_OPTS, "-o", str(model), "--quiet").returncode == 0
    res = _cli("predict", str(model), "-", input=payload)
    assert res.returncode == 2 and _one_line_error(res.stderr) and b"Parquet cannot be read" in res.stderr


def _peak_rss_mb(args, path=None):
    """Peak RSS (MB) of `streamlearn ARGS`, reading ``path`` through a pipe (``cat``'s memory is not counted)."""
    cat = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE) if path is not None else None
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlearn", *args],
        stdin=cat.stdout if cat else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    if cat:
        cat.stdout.close()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if cat:
        cat.wait(timeout=60)
    assert proc.returncode == 0, err
    return usage.ru_maxrss / 1024


@pytest.mark.parametrize(("fmt", "opts"), [("vw", VW_OPTS), ("csv", CSV_OPTS)])
def test_memory_is_flat_in_the_stream_length(tmp_path, fmt, opts):
    """10x the rows through a pipe, about the same peak memory, and no more than from the file path: 300k
    rows are 38 MB of VW text, 18 MB of CSV, several times that as arrays. What grows (10-20 MB, from the file
    path as well) are the pages of the 2**18 weights touched by more distinct features, bounded by the
    model's size."""
    short, long = tmp_path / f"short.{fmt}", tmp_path / f"long.{fmt}"
    write_click_log(short, 30_000, seed=3)
    write_click_log(long, 300_000, seed=3)
    pipe_short = _peak_rss_mb(["train", "-", "--format", fmt, *opts, "--quiet"], short)
    pipe_long = _peak_rss_mb(["train", "-", "--format", fmt, *opts, "--quiet"], long)
    file_long = _peak_rss_mb(["train", str(long), *opts, "--quiet"])
    assert pipe_long < pipe_short + 40 and pipe_long < file_long + 15, (pipe_short, pipe_long, file_long)


@pytest.mark.parametrize(("name", "opts"), [("c.vw", VW_OPTS), ("c.csv", CSV_OPTS)])
def test_ctrl_c_on_an_open_pipe_is_130_and_leaves_the_output(logs, tmp_path, name, opts):
    assert_ctrl_c_on_open_pipe_leaves_output((logs / name).read_bytes(), opts, tmp_path)


def test_ctrl_c_while_pyarrow_waits_on_an_open_pipe_never_aborts_the_process(logs, tmp_path):
    """The Ctrl-C lands while pyarrow reads the CSV's first block on a thread of its own, and the pipe ends
    (its writer closes it) as the process exits: pyarrow's thread must hold nothing of Python's by then (a
    thread outside Python's that calls into it during shutdown ends the process by ``std::terminate``:
    exit -6 and "terminate called without an active exception", about one run in three before)."""
    data = (logs / "c.csv").read_bytes()
    for k in range(4):
        folder = tmp_path / str(k)
        folder.mkdir()
        assert_ctrl_c_on_open_pipe_leaves_output(data, CSV_OPTS, folder)


def test_a_pipe_read_by_a_thread_outside_python_is_let_go_of_at_its_end_or_when_closed():
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    from streamlearn.datasets._pipes import Pumped

    r, w = os.pipe()
    os.write(w, b"a,b\n" + b"1,2\n" * 1000)  # the writer keeps the pipe open: the reader waits for more
    source = Pumped(io.FileIO(r, "rb"), size=256)
    released = source.released
    stream = pa.BufferedInputStream(pa.PythonFile(source, mode="r"), buffer_size=1 << 12)
    reader = pacsv.open_csv(stream, read_options=pacsv.ReadOptions(block_size=1 << 10))
    assert reader.read_next_batch().num_rows > 0
    rows = []

    def read_the_rest(batches):
        rows.append(sum(b.num_rows for b in batches))

    rest = threading.Thread(target=read_the_rest, args=(reader,), daemon=True)
    rest.start()
    source.close()  # pyarrow's thread, waiting for more of the pipe, gets its end at once
    rest.join(10)
    assert rows and rows[0] < 1000
    del source, stream, reader, rest
    assert released.wait(10)  # and pyarrow holds it no longer
    os.close(w)


def test_continuing_a_hashed_model_from_a_pipe_reads_the_models_format(logs, tmp_path):
    """`train -i MODEL -`: the model knows its format; a pipe with no telling first line still reads."""
    lines = (logs / "c.vw").read_bytes().splitlines(keepends=True)
    first, rest = tmp_path / "first.vw", tmp_path / "rest.vw"
    first.write_bytes(b"".join(lines[:2000]))
    rest.write_bytes(b"1 2\n" + b"".join(lines[2000:]))  # no feature on the first line: the model tells
    m0, m1, m2 = (str(tmp_path / f"m{i}.slm") for i in range(3))
    assert _cli("train", str(first), *VW_OPTS, "-o", m0, "--quiet").returncode == 0
    assert _cli("train", str(rest), "-i", m0, "-o", m1, "--quiet").returncode == 0
    res = _cli("train", "-", "-i", m0, "-o", m2, "--quiet", input=rest.read_bytes())
    assert res.returncode == 0, res.stderr
    assert _members(m1) == _members(m2)


def test_a_pipe_whose_first_lines_say_another_format_than_the_models_is_an_error(logs, tmp_path):
    """predict reads a pipe in the model's format, unless its first lines clearly say LIBSVM or CSV: then it
    is an error, not one featureless VW prediction per line."""
    model = str(tmp_path / "c.slm")
    assert _cli("train", str(logs / "c.vw"), *VW_OPTS, "-o", model, "--quiet").returncode == 0
    for data, what in ((b"1 1:1 3:2\n-1 2:1\n", b"libsvm"), ((logs / "c.csv").read_bytes(), b"csv")):
        res = _cli("predict", model, "-", input=data)
        assert res.returncode == 2 and _one_line_error(res.stderr), res.stderr
        assert b"and <stdin> is " + what + b" by its first lines" in res.stderr and res.stdout == b""
        res = _cli("train", "-i", model, "-", input=data)
        assert res.returncode == 2 and _one_line_error(res.stderr), res.stderr
        assert b"and <stdin> is " + what + b" by its first lines" in res.stderr
    res = _cli("predict", model, "-", input=(logs / "c.vw").read_bytes())
    assert res.returncode == 0 and res.stdout.count(b"\n") == (logs / "c.vw").read_bytes().count(b"\n")


def test_standard_input_as_both_data_and_test_is_an_error(tmp_path):
    """A stream is read once: DATA '-' and --test '-' cannot both be it (the test read nothing; for VW text
    the run ended with exit 0 and no test score)."""
    for data, opts in ((b"1 |a x\n-1 |a y\n", ["--format", "vw", "-l", "ftrl"]), (b"1 1:1\n-1 2:1\n", ["-l", "pa1"])):
        for test in ("-", "/dev/stdin"):
            res = _cli("train", "-", *opts, "--test", test, input=data)
            assert res.returncode == 2 and _one_line_error(res.stderr), res.stderr
            assert b"DATA and TEST are the same stream" in res.stderr


def test_a_closed_standard_input_is_one_line_naming_it(tmp_path):
    """``streamlearn train - ... <&-``: Python has no standard input at all (``sys.stdin`` is None); this was
    a traceback (AttributeError) in every command that reads ``-``."""
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n" * 5)
    model = tmp_path / "m.slm"
    assert _cli("train", str(data), "-l", "pa1", "-o", str(model), "--quiet").returncode == 0
    before = model.read_bytes()

    def close_stdin():
        os.close(0)

    for args in (
        ["train", "-", "-l", "pa1", "-o", str(model)],
        ["train", "-", "-l", "pa1", "--format", "libsvm"],
        ["evaluate", "-", "-l", "pa1"],
        ["predict", str(model), "-"],
        ["sketch", "-"],
    ):
        res = _cli(*args, stdin=None, preexec_fn=close_stdin)
        assert res.returncode == 2 and _one_line_error(res.stderr), (args, res.stderr)
        assert b"<stdin>: standard input is closed" in res.stderr, (args, res.stderr)
    assert model.read_bytes() == before


def test_zstd_and_zip_data_are_named_as_such():
    """zstd VW or LIBSVM text on a pipe is an error saying so (it was "cannot tell the format of <stdin>" or a
    garbled label, "the label '(\ufffd/...' is not a number"); zstd CSV is read (it was the same error)."""
    pa = pytest.importorskip("pyarrow")
    for text, opts in (
        (b"1 |a x\n-1 |a y\n", ["--format", "vw"]),
        (b"1 |a x\n-1 |a y\n", []),
        (b"1 1:1\n-1 2:1\n", []),
        (b"y,a\n1,2\n0,3\n", ["--format", "vw"]),
    ):
        res = _cli("train", "-", "-l", "pa1", *opts, input=pa.compress(text, codec="zstd", asbytes=True))
        assert res.returncode == 2 and _one_line_error(res.stderr), (opts, res.stderr)
        assert re.search(rb"<stdin>(, line |:)1: the file is zstd-compressed; expected text, plain or", res.stderr)
    zstd = pa.compress(b"y,a\n1,2\n0,3\n", codec="zstd", asbytes=True)
    for opts in (["--label", "y"], ["--format", "csv", "--label", "y"]):
        res = _cli("train", "-", "-l", "pa1", *opts, "--json", input=zstd)
        assert res.returncode == 0 and json.loads(res.stdout)["n_train"] == 2, (opts, res.stderr)


def test_zstd_csv_from_a_pipe_or_its_path_gives_the_plain_files_model(logs, tmp_path):
    """A zstd CSV (more than one block of 1 MiB, Windows line ends, quoted cells of two lines) from standard input
    (told by its first lines, or by --format) or from its path gives the plain file's model; one cut short is a
    one-line error naming the line where its text stops."""
    pa = pytest.importorskip("pyarrow")
    lines = (logs / "c.csv").read_bytes().split(b"\n")
    text = (
        lines[0]
        + b",note\r\n"
        + b"\r\n".join(line + (b',"x\r\ny"' if i % 3 else b",z") for i, line in enumerate(lines[1:-1]))
        + b"\r\n"
    )
    plain, packed = tmp_path / "n.csv", tmp_path / "n.csv.zst"
    plain.write_bytes(text)
    packed.write_bytes(pa.compress(text, codec="zstd", asbytes=True))
    opts = [*CSV_OPTS, "--json"]
    res = _cli("train", str(plain), *opts, "-o", str(tmp_path / "f.slm"))
    assert res.returncode == 0, res.stderr
    want = _no_seconds(res.stdout)
    for i, (data, extra) in enumerate([(str(packed), []), ("-", []), ("-", ["--format", "csv"])]):
        model = tmp_path / f"z{i}.slm"
        res = _cli("train", data, *extra, *opts, "-o", str(model), input=packed.read_bytes() if data == "-" else None)
        assert res.returncode == 0, (data, extra, res.stderr)
        assert _no_seconds(res.stdout) == want and _members(model) == _members(tmp_path / "f.slm")
    cut = packed.read_bytes()[: packed.stat().st_size // 2]
    for extra in ([], ["--format", "csv"]):
        res = _cli("train", "-", *extra, *opts, input=cut)
        assert res.returncode == 2 and _one_line_error(res.stderr), res.stderr
        assert re.search(rb"<stdin>, line \d+: cannot decompress the zstd data \(OSError: Truncated", res.stderr)


def test_zstd_csv_that_compresses_poorly_is_told_by_its_first_lines():
    """zstd decompresses a block (up to 128 KiB of text) once it is whole: 64 KiB read ahead of a CSV of random
    ids (compressed to half) gave no text, and "cannot tell the format of <stdin>"."""
    pa = pytest.importorskip("pyarrow")
    rng = random.Random(0)
    text = "y,id\n" + "".join(f"{i % 2},{rng.getrandbits(96):024x}\n" for i in range(20000))
    zstd = pa.compress(text.encode(), codec="zstd", asbytes=True)
    assert decompressed_head(zstd[: 64 << 10]) == b""
    res = _cli("train", "-", "-l", "pa1", "--label", "y", "--json", input=zstd)
    assert res.returncode == 0 and json.loads(res.stdout)["n_train"] == 20000, res.stderr


def test_utf16_on_standard_input_is_named_as_such():
    """Without --format, UTF-16 text on a pipe said "cannot tell the format of <stdin> from its first lines"."""
    res = _cli("train", "-", "-l", "pa1", input="1 1:1\n-1 2:1\n".encode("utf-16"))
    assert res.returncode == 2 and _one_line_error(res.stderr), res.stderr
    assert b"<stdin>, line 1: the file is UTF-16 text (it starts with a UTF-16 byte order mark)" in res.stderr


@pytest.mark.parametrize(("name", "opts"), [("c.vw", VW_OPTS), ("c.csv", CSV_OPTS)])
def test_dev_stdin_redirected_from_a_file_is_told_by_its_first_lines(logs, tmp_path, name, opts):
    """``streamlearn train /dev/stdin < c.vw``: /dev/stdin is then the regular file itself, whose name says no
    format; it was read as LIBSVM ("malformed feature '|u'"). Its first lines tell, as for a pipe, and as a
    regular file it can be read twice (--passes 2)."""
    data = logs / name
    want = _cli("train", str(data), *opts, "--passes", "2", "-o", str(tmp_path / "f.slm"), "--json")
    assert want.returncode == 0, want.stderr
    with open(data, "rb") as f:
        got = _cli("train", "/dev/stdin", *opts, "--passes", "2", "-o", str(tmp_path / "s.slm"), "--json", stdin=f)
    assert got.returncode == 0, got.stderr
    assert _no_seconds(got.stdout) == _no_seconds(want.stdout)
    assert _members(tmp_path / "s.slm") == _members(tmp_path / "f.slm")
