"""The demo's us_per_example is measured after compilation: no numba kernel is compiled or loaded from the
cache while a learner's timed pass runs (the warm-up on a few rows went through the same calls)."""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from numba.core import event

from streamlearn import evaluation
from streamlearn.experiments import demo

ROOT = Path(__file__).resolve().parents[2]


class _Compiles(event.Listener):
    """Counts acquisitions of numba's compiler lock: every compilation and every load from the disk cache."""

    def __init__(self):
        self.names = []

    def on_start(self, ev):
        self.names.append(ev.kind)

    def on_end(self, ev):
        pass


@pytest.mark.parametrize("learner", ["truncation", "tg", "pa1"])
def test_no_compilation_during_the_timed_pass(learner, monkeypatch):
    listener = _Compiles()
    timed = []
    original = evaluation.progressive_validation

    def spy(est, stream, **kwargs):
        n = len(stream[1])
        before = len(listener.names)
        result = original(est, stream, **kwargs)
        if n > demo.WARM_UP_ROWS:  # the timed pass over all of a9a
            timed.append(listener.names[before:])
        return result

    monkeypatch.setattr(evaluation, "progressive_validation", spy)
    with event.install_listener("numba:compiler_lock", listener):
        rows = demo.run(argparse.Namespace(learners=learner, progress=False))
    assert len(timed) == 1
    assert timed[0] == [], f"{learner}: {len(timed[0])} kernels compiled or loaded during the timed pass"
    assert rows[0]["us_per_example"] > 0


def _few():
    from streamlearn.datasets import load_a9a

    X, y, X_test, y_test = load_a9a()
    n = demo.WARM_UP_ROWS
    return X[:n], y[:n], X_test[:n], y_test[:n]


def test_first_rows_are_load_a9as_without_compiling():
    listener = _Compiles()
    with event.install_listener("numba:compile", listener):
        got = demo.first_rows()
    assert listener.names == []
    for a, b in zip(got, _few()):
        assert type(a) is type(b) and a.shape == b.shape and a.dtype == b.dtype
        if hasattr(a, "indices"):
            for part in ("data", "indices", "indptr"):
                x, z = getattr(a, part), getattr(b, part)
                assert x.dtype == z.dtype and np.array_equal(x, z), part
        else:
            assert np.array_equal(a, b)


needs_fork = pytest.mark.skipif(sys.platform != "linux", reason="the parallel warm-up forks workers (Linux only)")


# The forking tests run in a fresh interpreter: a process with other threads (left by earlier tests, e.g.
# Dask's) forks no workers, by design. Each unit of warm-up work first sleeps, the forked worker longer than
# the parent: that makes the order of the claims certain on a loaded machine (the parent takes the front at
# once, the worker the back, and the worker reaches the front only after the parent has claimed it).
_SHARE = r"""
import json, os, sys, time
from streamlearn.experiments import demo
parent, original, mine = os.getpid(), demo._warm_up_group, []
def paced(names, few):
    if os.getpid() == parent:
        mine.append(names)
    time.sleep(0.5 if os.getpid() == parent else 2.0)
    original(names, few)
demo._warm_up_group = paced
with demo.ParallelWarmUp(sys.argv[1].split(","), 2, demo.first_rows) as warm_ups:
    workers = warm_ups.share()
print(json.dumps({"workers": workers, "mine": mine}))
"""

_LEAVE = r"""
import json, time
from streamlearn.experiments import demo
demo._warm_up_group = lambda names, few: time.sleep(30)
t0 = time.monotonic()
with demo.ParallelWarmUp(["pa1", "rfd-son"], 2, demo.first_rows) as warm_ups:
    workers = list(warm_ups.workers)
    started = bool(workers) and all(w.is_alive() for w in workers)
print(json.dumps({"started": started, "alive": [w.is_alive() for w in workers], "seconds": time.monotonic() - t0}))
"""


def _fresh_python(code, *args):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1]), res.stderr


@needs_fork
def test_parallel_warm_up_shares_the_units_between_this_process_and_a_worker():
    got, _ = _fresh_python(_SHARE, "pa1,pa2,rfd-son")
    # pa1 and pa2 share an estimator class (one unit), taken from the front; the worker takes the back
    assert got == {"workers": [["rfd-son"]], "mine": [["pa1", "pa2"]]}


@needs_fork
def test_without_sharing_the_workers_are_stopped_on_leaving():
    got, _ = _fresh_python(_LEAVE)
    assert got["started"] and not any(got["alive"]) and got["seconds"] < 10, got


@needs_fork
def test_a_learner_failing_in_a_worker_is_left_to_this_process():
    got, err = _fresh_python(_SHARE, "pa1,no-such-learner")
    assert got["workers"] == [["no-such-learner"]] and got["mine"] == [["pa1"]]
    assert "Traceback" not in err, err
    with pytest.raises(ValueError, match="no-such-learner"):  # the demo's own pass reports it
        demo.run(argparse.Namespace(learners="pa1,no-such-learner", jobs=2, progress=False))


def test_one_job_forks_nothing(monkeypatch):
    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_context", None)
    with demo.ParallelWarmUp(["pa1", "ogd"], 1, _few) as warm_ups:
        assert warm_ups.share() == []


@needs_fork
def test_ctrl_c_during_a_cold_parallel_warm_up_is_one_line_and_stops_the_workers(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlearn", "demo", "--jobs", "2", "--learners", "pa1,rfd-son,oja-son,nag"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # Ctrl-C in a terminal signals the whole process group
    )
    deadline = time.monotonic() + 60
    while not _children(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # until the worker is forked (after the data parser's compilation)
    time.sleep(0.5)
    children = _children(proc.pid)
    assert children, "no worker was forked: the numba cache was not cold?"
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["streamlearn: error: interrupted"], err
    for pid in children:  # the forked workers are gone (terminated and reaped)
        assert not Path(f"/proc/{pid}").exists(), f"worker {pid} outlived the demo"


def _children(pid):
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_a_cold_numba_cache_is_told_from_a_warm_one(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    code = "from streamlearn.experiments import demo; print(demo._numba_cache_is_cold())"
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True) for _ in range(2)]
    assert [r.stdout.strip() for r in runs] == ["True", "False"], [r.stderr for r in runs]
