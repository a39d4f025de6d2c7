"""``train`` on VW text reads ahead in a thread (the next chunk is parsed while the learner works): the model
is bit for bit the one of a sequential read, a bad line in the middle is the usual one-line error with the
output untouched, Ctrl-C is the usual one line. On this path the ``streamlearn`` executable imports no
scikit-learn, and the modules our dependencies import at start-up without using them (scipy.stats, pandas,
yaml, numpy.f2py, numpy.testing) are loaded only if used (``streamlearn.cli._deferred``)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import streamlearn.datasets._parallel_vw as parallel_module
import streamlearn.datasets._prefetch as prefetch_module
from streamlearn.cli.main import main
from streamlearn.datasets import write_click_log
from streamlearn.persist import load
from tests.cli._subprocess import ENV


def _train(capsys, data, model, learner):
    code = main(["train", str(data), "-l", learner, "-q", "ua", "--chunk-size", "250", "-o", str(model), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


@pytest.mark.parametrize("learner", ["ftrl", "pa1"])
def test_read_ahead_trains_the_same_model_bit_for_bit(clicks, tmp_path, capsys, monkeypatch, learner):
    calls = []
    real = prefetch_module.prefetch

    def counted(chunks, depth=2):
        calls.append(depth)
        return real(chunks, depth)

    monkeypatch.setattr(prefetch_module, "prefetch", counted)
    threaded = _train(capsys, clicks / "train.vw", tmp_path / "a.slm", learner)
    assert calls, "train on VW text did not read ahead"
    monkeypatch.setattr(prefetch_module, "prefetch", lambda chunks, depth=2: iter(chunks))
    sequential = _train(capsys, clicks / "train.vw", tmp_path / "b.slm", learner)
    a, b = load(tmp_path / "a.slm"), load(tmp_path / "b.slm")
    assert a.coef_.tobytes() == b.coef_.tobytes() and np.array_equal(a.intercept_, b.intercept_)
    for key in ("n_train", "average_loss", "online_error_rate", "nnz_weights"):
        assert threaded[key] == sequential[key]


def test_bad_line_in_the_middle_is_one_line_and_leaves_the_model_file(clicks, tmp_path, capsys):
    lines = (clicks / "train.vw").read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.vw"
    bad.write_bytes(b"".join(lines[:2600]) + b"1 |u x:\n" + b"".join(lines[2600:]))
    out = tmp_path / "m.slm"
    out.write_bytes(b"old model")
    code = main(["train", str(bad), "-l", "ftrl", "-q", "ua", "--chunk-size", "100", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"streamlearn: error: {bad}:2601: feature 'x:' has ':' without a value\n"
    assert out.read_bytes() == b"old model" and sorted(p.name for p in tmp_path.iterdir()) == ["bad.vw", "m.slm"]


def _read_position(pid, path):
    """How far the process has read ``path`` (None until it opens it)."""
    for fd in Path(f"/proc/{pid}/fd").glob("*"):
        try:
            if os.readlink(fd) == str(path):
                return int((Path(f"/proc/{pid}/fdinfo") / fd.name).read_text().split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return None


@pytest.mark.skipif(not Path("/proc/self/fdinfo").exists(), reason="needs /proc to see how far the run has read")
def test_ctrl_c_while_the_reader_thread_parses_ahead(tmp_path):
    data = tmp_path / "big.vw"
    write_click_log(data, 300_000, seed=7)
    out = tmp_path / "m.slm"
    out.write_bytes(b"old model")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlearn", "train", str(data), "-l", "ftrl", "-q", "ua"]
        + ["--chunk-size", "500", "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not (_read_position(proc.pid, data) or 0):
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)  # the reader thread is parsing, the main thread learning
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.decode() == f"streamlearn: error: interrupted; {out} left unchanged\n"
    assert out.read_bytes() == b"old model" and sorted(p.name for p in tmp_path.iterdir()) == ["big.vw", "m.slm"]


_COMPILES = """
import sys, threading
from numba.core.dispatcher import Dispatcher
import streamlearn.datasets._parallel_vw as parallel
from streamlearn.datasets import InputSpec, open_stream
from streamlearn.datasets._prefetch import prefetch

where = set()
real = Dispatcher.compile  # compiles a kernel, or loads it from numba's cache

def compile(self, sig):
    where.add((self.py_func.__name__, threading.current_thread().name))
    return real(self, sig)

Dispatcher.compile = compile
spec = InputSpec(format="vw", bits=18, interactions=["ua"])
if sys.argv[2] == "parallel":
    chunks = parallel.parallel_vw_chunks(sys.argv[1], spec, 250, require_label=True, workers=2)
else:
    chunks = prefetch(open_stream(sys.argv[1], spec, 250, require_label=True))
assert sum(c[0].shape[0] for c in chunks) == 3000
print(sorted(where))
"""


@pytest.mark.parametrize("reader", ["parallel", "prefetch"])
def test_parsing_threads_never_compile_a_kernel(clicks, reader):
    # compiling takes up to tens of seconds on a busy machine without a cache: a Ctrl-C meanwhile ended the command
    # while a parsing thread still ran numba's compiler (exit by SIGSEGV after the one line, or 10 s late)
    res = subprocess.run(
        [sys.executable, "-c", _COMPILES, str(clicks / "train.vw"), reader], capture_output=True, text=True, env=ENV
    )
    assert res.returncode == 0, res.stderr
    where = eval(res.stdout)
    assert {"vw_parse"} <= {name for name, _ in where}, where
    assert {thread for _, thread in where} == {"MainThread"}, where


@pytest.mark.parametrize("learner", ["ftrl", "nag", "pa1"])
def test_two_parsing_threads_train_the_same_model_bit_for_bit(clicks, tmp_path, capsys, monkeypatch, learner):
    # blank lines (which make a piece of 250 lines give fewer rows, so chunks are re-cut), CRLF, no final newline
    lines = (clicks / "train.vw").read_text().splitlines()
    data = tmp_path / "d.vw"
    data.write_text("\r\n".join(line if i % 97 else line + "\n  " for i, line in enumerate(lines)))
    calls = []
    real = parallel_module.parallel_vw_chunks

    def counted(*a, **k):
        calls.append(a[0])
        return real(*a, **k)

    monkeypatch.setattr(parallel_module, "PARALLEL_MIN_BYTES", 0)  # the test file is small
    monkeypatch.setattr(parallel_module, "_cores", lambda: 2)
    monkeypatch.setattr(parallel_module, "parallel_vw_chunks", counted)
    two = _train(capsys, data, tmp_path / "a.slm", learner)
    assert calls == [str(data)], "train on a large VW file did not parse in two threads"
    monkeypatch.setattr(parallel_module, "PARALLEL_MIN_BYTES", 1 << 60)
    one = _train(capsys, data, tmp_path / "b.slm", learner)
    assert calls == [str(data)]
    a, b = load(tmp_path / "a.slm"), load(tmp_path / "b.slm")
    assert a.coef_.tobytes() == b.coef_.tobytes() and a.intercept_.tobytes() == b.intercept_.tobytes()
    for key in ("n_train", "average_loss", "online_error_rate", "nnz_weights"):
        assert two[key] == one[key]
    assert two["n_train"] == len(lines)


def test_two_parsing_threads_report_a_bad_line_with_its_line_number(clicks, tmp_path, capsys, monkeypatch):
    lines = (clicks / "train.vw").read_text().splitlines()
    lines.insert(1700, "")
    lines.insert(2222, "x |u a")
    data = tmp_path / "bad.vw"
    data.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(parallel_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel_module, "_cores", lambda: 2)
    code = main(["train", str(data), "-l", "ftrl", "--chunk-size", "250", "-o", str(tmp_path / "m.slm")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"streamlearn: error: {data}:2223: bad label 'x'"), err
    assert err.count("\n") == 1 and not (tmp_path / "m.slm").exists()


_PROBE = """
import atexit, sys
HEAVY = ("scipy.stats._stats_py", "pandas.core.frame", "sklearn.base", "yaml.loader", "numpy.f2py.f2py2e",
         "numpy.testing._private.utils")
atexit.register(lambda: print("LOADED", sorted(m for m in HEAVY if m in sys.modules), file=sys.stderr))
sys.argv[0] = "streamlearn"
from streamlearn.cli.main import entry_point
entry_point()
"""


def test_streamlearn_trains_and_predicts_without_loading_sklearn_or_the_deferred_modules(clicks, tmp_path):
    model = tmp_path / "m.slm"
    for args in (
        ["train", str(clicks / "train.vw"), "-l", "ftrl", "-q", "ua", "-o", str(model), "--quiet"],
        ["predict", str(model), str(clicks / "test.vw.gz"), "-o", str(tmp_path / "p.txt")],
    ):
        res = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, env=ENV)
        assert res.returncode == 0 and res.stderr.strip().endswith("LOADED []"), res.stderr


def test_deferred_modules_work_when_used():
    code = """
import sys
from streamlearn.cli._deferred import defer_imports
assert defer_imports() == ["scipy.stats", "pandas", "yaml"]
import numpy
assert defer_imports(["numpy.f2py", "numpy.testing"]) == ["numpy.f2py", "numpy.testing"]
import sklearn.base, scipy.stats, scipy.sparse, pandas as pd
for m in ("numpy.f2py.f2py2e", "numpy.testing._private.utils", "yaml.loader"):
    assert m not in sys.modules, m
import yaml
from numpy.testing import assert_array_equal
assert_array_equal(numpy.arange(2), [0, 1])
assert yaml.safe_load("a: 1") == {"a": 1} and numpy.testing.assert_array_equal is assert_array_equal
assert callable(numpy.f2py.run_main) and numpy.f2py is sys.modules["numpy.f2py"]
assert "scipy.stats._stats_py" not in sys.modules and "pandas.core.frame" not in sys.modules
assert scipy.stats.norm.cdf(0.0) == 0.5
from pandas import DataFrame
import pandas.api.types
assert DataFrame({"a": [1, 2]}).shape == (2, 1) and pd.Series([1]).sum() == 1
assert sys.modules["pandas"].DataFrame is DataFrame and sys.modules["scipy"].stats.norm is scipy.stats.norm
print("ok")
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr
