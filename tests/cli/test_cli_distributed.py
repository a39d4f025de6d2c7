"""``streamlearn train/sketch --scheduler``: the command line over streamlearn.distributed on a LocalCluster.

One ``local:2`` run (the CLI starts and stops its own cluster of 2 worker processes); the other cluster runs
share one module-scoped LocalCluster of 2 worker threads through its tcp address (the ``ADDRESS`` form of
``--scheduler``).
"""

import importlib.util
import lzma
import subprocess
import sys

import numpy as np
import pytest

import streamlearn
from streamlearn.cli.main import main
from streamlearn.datasets import bundled_path, load_svmlight

A9A = str(bundled_path("a9a.xz"))
A9A_T = str(bundled_path("a9a.t.xz"))


@pytest.fixture(scope="module")
def address():
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'streamlearn[dask]')"
    )
    # worker threads in this process (no worker start-up: the CLI's --scheduler ADDRESS path is the same);
    # the local:2 test runs real worker processes
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=":0"
    ) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """a9a cut into 3 LIBSVM files of consecutive rows (10,854 + 10,854 + 10,853)."""
    with lzma.open(A9A, "rt") as f:
        lines = f.read().splitlines(keepends=True)
    root = tmp_path_factory.mktemp("a9a_parts")
    cuts = np.array_split(np.arange(len(lines)), 3)
    paths = []
    for k, idx in enumerate(cuts):
        path = root / f"part{k}.svm"
        path.write_text("".join(lines[idx[0] : idx[-1] + 1]))
        paths.append(str(path))
    return paths


def test_train_local2_json_saved_model_and_sequential_accuracy(tmp_path, cli_json):
    pytest.importorskip("distributed")
    model = tmp_path / "pa1.slm"
    sequential = cli_json("train", A9A, "-l", "pa1", "--test", A9A_T, "--json")
    out = cli_json(
        "train",
        A9A,
        "-l",
        "pa1",
        "--scheduler",
        "local:2",
        "--rounds",
        "2",
        "--test",
        A9A_T,
        "-o",
        str(model),
        "--json",
    )
    assert {
        "learner",
        "params",
        "n_train",
        "n_features",
        "online_error_rate",
        "test_accuracy",
        "train_seconds",
        "nnz_weights",
        "scheduler",
        "n_workers",
        "n_partitions",
        "rounds",
        "mixing_history",
    } <= set(out)
    assert (out["scheduler"], out["n_workers"], out["n_partitions"], out["rounds"]) == ("local:2", 2, 1, 2)
    assert out["n_train"] == 32561 and out["n_features"] == 123 and out["test_n"] == 16281
    assert [h["round"] for h in out["mixing_history"]] == [1, 2]
    assert all(h["n_examples"] == 32561 for h in out["mixing_history"])
    # one partition, round 1 = the sequential pass: the same online error; the test score within 0.5 pt
    assert out["online_error_rate"] == pytest.approx(sequential["online_error_rate"])
    assert abs(out["test_accuracy"] - sequential["test_accuracy"]) < 0.005
    preds = tmp_path / "pred.txt"
    assert main(["predict", str(model), A9A_T, "-o", str(preds)]) == 0
    _, y_test = load_svmlight(A9A_T, n_features=123)
    labels = np.array(preds.read_text().split(), dtype=float)
    assert np.mean(labels == y_test) == pytest.approx(out["test_accuracy"])


def test_train_several_files_glob_and_holdout(address, parts, cli_json):
    listed = cli_json("train", *parts, "-l", "ftrl", "--scheduler", address, "--rounds", "3", "--test", A9A_T, "--json")
    assert listed["n_partitions"] == 3 and listed["n_train"] == 32561 and listed["rounds"] == 3
    assert listed["n_workers"] == 2 and listed["test_accuracy"] > 0.84
    glob = parts[0].replace("part0.svm", "part*.svm")  # quoted glob, expanded by the command (sorted)
    globbed = cli_json("train", glob, "-l", "ftrl", "--scheduler", address, "--rounds", "3", "--test", A9A_T, "--json")
    assert globbed["n_partitions"] == 3 and globbed["test_accuracy"] == pytest.approx(listed["test_accuracy"])
    held_out = ["train", glob, "-l", "pa1", "--scheduler", address, "--rounds", "1", "--holdout", "0.2", "--seed", "1"]
    assert main([*held_out, "--quiet"]) == 0
    held = cli_json(*held_out, "--json")
    assert held["n_train"] + held["test_n"] == 32561 and 0.15 * 32561 < held["test_n"] < 0.25 * 32561
    assert held["test_accuracy"] > 0.8


def test_sketch_several_files_meets_the_fd_bound(address, parts, tmp_path, cli_json):
    out_file = tmp_path / "rfd.slm"
    fd = cli_json("sketch", *parts, "--sketch", "fd", "--ell", "10", "--scheduler", address, "--json")
    assert fd["n_rows"] == 32561 and fd["n_features"] == 123 and fd["nnz"] == 451592
    assert fd["n_partitions"] == 3 and fd["scheduler"] == address
    # merged sketch of the 3 partitions: the FD bound (k = 0) for the whole matrix
    assert 0 < fd["relative_frobenius_error"] <= 1 / 10
    rfd = cli_json("sketch", *parts, "--ell", "10", "--scheduler", address, "-o", str(out_file), "--json")
    assert rfd["class"] == "RobustFrequentDirections" and 0 < rfd["relative_frobenius_error"] <= 1 / 20
    assert streamlearn.load(out_file).n_seen_ == 32561
    quick = cli_json("sketch", parts[0], "--ell", "10", "--scheduler", address, "--no-error", "--json")
    assert quick["n_rows"] == 10854 and "relative_spectral_error" not in quick


@pytest.mark.parametrize("value", ["local:0", "local:x", "", "nonsense", "tcp://", "tcp://host:99999"])
def test_bad_scheduler_values_are_named(value, capsys):
    """Named as the option the user gave (``--scheduler 'x'``), with the forms the option takes: not the Python
    parameter (``scheduler='x'``) nor its None."""
    pytest.importorskip("distributed")
    for argv in (["train", A9A, "-l", "pa1"], ["sketch", A9A]):
        assert main([*argv, "--scheduler", value]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and (f"--scheduler {value!r}" in err or "--scheduler must not be empty" in err), err
        assert "scheduler=" not in err and "None" not in err, err
        assert "local:N" in err or "port 99999 is out of range" in err, err


def test_local_cluster_larger_than_the_machine_is_one_line(capsys):
    pytest.importorskip("distributed")
    assert main(["train", A9A, "-l", "pa1", "--scheduler", "local:99999"]) == 2
    err = capsys.readouterr().err
    assert "asks for 99999 worker processes" in err and "4 per CPU" in err and len(err.strip().splitlines()) == 1


def test_option_errors_before_any_cluster(parts, capsys):
    cases = [
        (["train", *parts, "-l", "pa1"], "reads one DATA file without --scheduler"),
        (["sketch", *parts], "reads one DATA file without --scheduler"),
        (["train", A9A, "-l", "pa1", "--rounds", "2"], "--rounds is the number of parameter-mixing rounds"),
        (["train", A9A, "-l", "bm-svm", "--scheduler", "local:2"], "batch learner"),
        (["train", A9A, "-l", "pa1", "--scheduler", "local:2", "--plot", "x.png"], "--plot"),
        (["train", A9A, "-l", "pa1", "--scheduler", "local:2", "--rounds", "0"], "--rounds must be >= 1"),
        (["sketch", *parts, "--scheduler", "local:2", "--chunk-size", "0"], "--chunk-size must be >= 1; got 0."),
        (["train", parts[0].replace("part0", "nothing*"), "-l", "pa1", "--scheduler", "local:2"], "matches no file"),
    ]
    if importlib.util.find_spec("distributed") is not None:
        cases.append((["train", A9A, "-l", "cw", "--scheduler", "local:2"], "parameter mixing supports"))
        # settings the learner cannot mix: one line, before the cluster (ogd-squared's TypeError was a traceback)
        cases.append((["train", A9A, "-l", "ogd-squared", "--scheduler", "local:2"], "cannot train ogd-squared: "))
        cases.append((["train", A9A, "-l", "oja-son", "--scheduler", "local:2"], "cannot train oja-son: "))
        cases.append((["sketch", *parts, "-s", "oja", "--scheduler", "local:2"], "cannot merge OjaSketch"))
        rp = ["sketch", *parts, "-s", "rp", "-p", "random_state=0", "--scheduler", "local:2"]
        cases.append((rp, "would draw the same projections"))
    for argv, message in cases:
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv


def test_without_dask_local_runs_work_and_scheduler_names_the_extra(monkeypatch, capsys):
    for name in list(sys.modules):
        if name in ("dask", "distributed") or name.startswith(("dask.", "distributed.", "streamlearn.distributed")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    monkeypatch.setitem(sys.modules, "dask", None)
    if "distributed" in vars(streamlearn):  # (a plain getattr would import it: streamlearn's lazy attributes)
        monkeypatch.delattr(streamlearn, "distributed")
    assert main(["train", A9A, "-l", "pa1", "--quiet"]) == 0
    assert main(["sketch", A9A, "--quiet", "--no-error"]) == 0
    assert main(["train", A9A, "-l", "pa1", "--scheduler", "local:2"]) == 2
    assert "pip install 'streamlearn[dask]'" in capsys.readouterr().err
    assert main(["sketch", A9A, "--scheduler", "local:2"]) == 2
    assert "pip install 'streamlearn[dask]'" in capsys.readouterr().err


def test_importing_the_cli_does_not_import_dask():
    code = (
        "import sys; from streamlearn.cli.main import build_parser; build_parser(); "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')); "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def _closed_port():
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "form,message",
    [
        ("tcp://127.0.0.1:{port}", "could not connect to the Dask scheduler"),
        ("127.0.0.1:{port}", "connection refused"),
        ("tcp://127.0.0.1:99999", "port 99999 is out of range"),
    ],
)
def test_unreachable_scheduler_fails_fast(form, message, capsys):
    import time

    pytest.importorskip("distributed")
    value = form.format(port=_closed_port())
    t0 = time.monotonic()
    assert main(["train", A9A, "-l", "pa1", "--scheduler", value]) == 2
    assert time.monotonic() - t0 < 10  # not Dask's 30 s of connection retries
    err = capsys.readouterr().err
    assert message in err and repr(value) in err


def test_a_scheduler_without_workers_is_named_after_the_connect_timeout(parts):
    """A scheduler no worker has joined would queue the tasks for ever: the run waits for one within
    distributed.comm.timeouts.connect, then fails in one line naming the scheduler (in a subprocess with a time
    limit: the run used to wait for ever)."""
    from tests.cli._subprocess import ENV, one_line_error

    distributed = pytest.importorskip("distributed")
    env = {**ENV, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=":0") as cluster:
        address = cluster.scheduler_address
        for command in (["train", *parts[:2], "-l", "pa1"], ["sketch", *parts[:2], "--ell", "4"]):
            argv = [sys.executable, "-m", "streamlearn", *command, "--scheduler", address]
            res = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
            assert res.returncode == 2 and one_line_error(res.stderr), res.stderr
            assert f"the Dask scheduler {address!r} has no worker: none joined within 1 s" in res.stderr


_DYING_CLUSTER = """
import os, sys, time
from distributed import LocalCluster

cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=":0")
print(cluster.scheduler_address, flush=True)
while len(cluster.scheduler.clients) < 2:  # its own client, then the command's
    time.sleep(0.05)
time.sleep(float(sys.argv[1]))  # the command is mixing
os._exit(0)  # the scheduler and its worker are gone at once
"""


def test_a_scheduler_lost_mid_run_is_one_line(parts, tmp_path):
    """The scheduler's process dies while the command mixes: one line naming the lost connection, exit 2 (Dask's
    FuturesCancelledError was a traceback, after the client's own log records of the lost scheduler)."""
    from tests.cli._subprocess import ENV, one_line_error

    pytest.importorskip("distributed")
    script = tmp_path / "cluster.py"
    script.write_text(_DYING_CLUSTER)
    env = {**ENV, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"}
    cluster = subprocess.Popen([sys.executable, str(script), "2"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        address = cluster.stdout.readline().strip()
        argv = [sys.executable, "-m", "streamlearn", "train", *parts[:2], "-l", "pa1", "--rounds", "100000"]
        res = subprocess.run([*argv, "--scheduler", address], capture_output=True, text=True, timeout=120, env=env)
    finally:
        cluster.kill()
        cluster.wait()
    assert res.returncode == 2 and one_line_error(res.stderr), res.stderr
    assert (
        "stopped: the connection to the Dask scheduler was lost" in res.stderr and "nothing was returned" in res.stderr
    )


def test_worker_errors_of_a_local_cluster_are_one_line(tmp_path):
    """A partition that fails on its worker (read there: --n-features and --zero-based skip the scan here) is
    one error line: no log record of the worker process, no warning about a busy HTTP port."""
    import socket

    from tests.cli._subprocess import cli, one_line_error

    pytest.importorskip("distributed")
    good, empty = tmp_path / "good.svm", tmp_path / "empty.svm"
    good.write_text("1 1:1 2:0.5\n-1 1:-1 3:2\n")
    empty.write_text("")
    busy = socket.socket()  # another cluster's scheduler holds Dask's default HTTP port
    try:
        busy.bind(("127.0.0.1", 8787))
        busy.listen()
    except OSError:
        pass  # already held by something else: the same situation
    try:
        argv = [str(good), str(empty), "-l", "pa1", "--scheduler", "local:1", "--n-features", "3"]
        res = cli("train", *argv, "--zero-based", "false")
    finally:
        busy.close()
    assert res.returncode == 2 and one_line_error(res.stderr), res.stderr.decode()
    assert "empty.svm" in res.stderr.decode()


def test_holdout_that_empties_a_partition_names_it(address, parts, tmp_path, capsys):
    small = tmp_path / "small.svm"
    small.write_text("1 1:1 2:0.5\n-1 1:-1 3:2\n")
    argv = ["train", parts[0], str(small), "-l", "pa1", "--scheduler", address, "--holdout", "0.999", "--json"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--holdout 0.999: every row of {small} was held out" in err


def test_a_partition_named_twice_is_an_error_before_any_cluster(parts, capsys):
    """``train part0.svm 'part*.svm' --scheduler ...``: part0 matched twice and was trained on twice (its
    examples counted double in the mixing), exit 0; so was a sketch's partition merged twice."""
    pattern = parts[0].replace("part0", "part*")
    for argv in (
        ["train", parts[0], pattern, "-l", "pa1", "--scheduler", "local:2"],
        ["sketch", parts[1], parts[1], "--scheduler", "local:2"],
    ):
        assert main(argv) == 2, argv
        twice = parts[0] if argv[0] == "train" else parts[1]
        assert capsys.readouterr().err == (
            f"streamlearn: error: DATA names {twice!r} twice; each file is one partition, read once.\n"
        ), argv


def test_sketch_n_features_narrower_than_the_files_names_the_option(address, parts, capsys):
    """``sketch A B --n-features 50 --no-error --scheduler ...`` with indices up to 123: the one-line error names
    --n-features and the files' width, not the Python argument ('as_partitions: n_features=50, ...')."""
    code = main(["sketch", *parts, "--n-features", "50", "--no-error", "--scheduler", address, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("streamlearn: error: --n-features 50: the DATA files use up to 123 features")
    assert "as_partitions" not in err and len(err.strip().splitlines()) == 1


def test_only_the_commands_that_take_scheduler_mention_it_in_their_help(capsys):
    """``evaluate`` has no --scheduler (nor batch learners): its --scale help does not send the reader there."""
    for command, mentions in (("train", True), ("evaluate", False)):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert ("--scheduler" in capsys.readouterr().out) is mentions, command
