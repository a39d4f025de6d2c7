"""Trustworthy I/O of the command line: no silent wrong result, no lost file, no traceback, data from pipes.

Each test reproduces a case that the command line used to get wrong (a silent index shift, a destroyed
output file, a traceback...). Cases that need a real process (standard input, a full device, signals) run
the CLI as a subprocess; the others call ``main([...])`` in-process.
"""

import json
import lzma
import os
import random
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

from streamlearn.cli.main import main
from streamlearn.datasets import bundled_path
from streamlearn.persist import load
from tests.cli._subprocess import ENV, assert_ctrl_c_on_open_pipe_leaves_output
from tests.cli._subprocess import cli as _cli
from tests.cli._subprocess import one_line_error as _one_line_error

A9A = str(bundled_path("a9a.xz"))
A9A_T = str(bundled_path("a9a.t.xz"))


def _rows(n, seed=0, base=1, labels=(-1, 1)):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        idx = np.sort(rng.choice(20, size=4, replace=False)) + base
        lab = labels[int(idx[0] < 10 + base)]
        lines.append(f"{lab} " + " ".join(f"{j}:{rng.uniform(0.5, 1.5):.3f}" for j in idx) + "\n")
    return "".join(lines)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A small one-based training file, a test file and a model trained on it."""
    d = tmp_path_factory.mktemp("io")
    data, test, model = d / "train.svm", d / "test.svm", d / "m.slm"
    data.write_text(_rows(400))
    test.write_text(_rows(100, seed=1))
    assert main(["train", str(data), "-l", "pa1", "-o", str(model), "--quiet"]) == 0
    return {"dir": d, "data": data, "test": test, "model": model}


def _err(capsys):
    err = capsys.readouterr().err
    assert _one_line_error(err), err
    return err


# ---------------------------------------------------------------------------------------------------
# silent wrong results


def test_test_file_with_index_0_under_one_based_model_is_an_error(small, tmp_path, capsys):
    bad = tmp_path / "t0.svm"
    lines = small["test"].read_text().splitlines(keepends=True)
    lines[4] = lines[4].replace(" ", " 0:1 ", 1)
    bad.write_text("".join(lines))
    assert main(["train", str(small["data"]), "-l", "pa1", "--test", str(bad), "--json"]) == 2
    assert "t0.svm, line 5: feature index 0" in _err(capsys)
    assert main(["predict", str(small["model"]), str(bad)]) == 2
    assert "line 5: feature index 0" in _err(capsys)


def test_training_file_with_one_index_0_is_an_error_not_a_shift(small, tmp_path, capsys):
    bad = tmp_path / "d0.svm"
    lines = small["data"].read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace(" ", " 0:1 ", 1)
    bad.write_text("".join(lines))
    assert main(["train", str(bad), "-l", "pa1", "--json"]) == 2
    assert "d0.svm, line 3: feature index 0" in _err(capsys)
    # explicitly zero-based: read as such, and the model remembers it
    model = tmp_path / "z.slm"
    assert main(["train", str(bad), "-l", "pa1", "--zero-based", "true", "-o", str(model), "--quiet"]) == 0
    spec = load(model).input_spec_
    assert spec["zero_based"] is True and spec["n_features"] == 21


def test_test_labels_outside_the_model_classes_are_an_error(small, tmp_path, capsys):
    zero_one = tmp_path / "01.svm"
    zero_one.write_text(_rows(300, labels=(0, 1)))
    assert main(["train", str(zero_one), "-l", "pa1", "--test", str(small["test"]), "--json"]) == 2
    err = _err(capsys)
    assert "label -1" in err and "test.svm" in err


def test_single_class_training_file_is_refused_as_by_the_api(tmp_path, capsys):
    one = tmp_path / "one.svm"
    one.write_text("".join(f"1 {1 + i % 5}:1\n" for i in range(50)))
    assert main(["train", str(one), "-l", "pa1", "--json"]) == 2
    assert "at least 2 classes" in _err(capsys)


def test_huge_feature_values_report_divergence(tmp_path, capsys):
    data = tmp_path / "big.svm"
    lines = ["1 1:1\n" if i % 2 else "-1 2:1\n" for i in range(200)]
    lines[100] = "-1 1:1e150\n"  # a positive weight times 1e150: a loss of about 1e150 on this example
    data.write_text("".join(lines))
    assert main(["train", str(data), "-l", "pa1", "--json"]) == 2
    assert "diverged" in _err(capsys)
    lines[100] = "-1 1:1e300\n"  # beyond 2**500 its square overflows: refused as input, whatever the learner
    data.write_text("".join(lines))
    assert main(["train", str(data), "-l", "pa1", "--json"]) == 2
    assert f"{data}, line 101: a feature value of 1e+300 is too large: expected values below 2**500" in _err(capsys)


def test_features_beyond_the_model_width_are_ignored_and_counted(small, tmp_path, capsys):
    wide = tmp_path / "wide.svm"
    wide.write_text(small["test"].read_text().replace("\n", " 500:7\n", 3))
    out1, out2 = tmp_path / "a.txt", tmp_path / "b.txt"
    assert main(["predict", str(small["model"]), str(small["test"]), "-o", str(out1)]) == 0
    assert main(["predict", str(small["model"]), str(wide), "-o", str(out2)]) == 0
    assert out1.read_text() == out2.read_text()  # the model has no weight there: same predictions
    assert "3 feature values" in capsys.readouterr().err
    assert main(["train", str(small["data"]), "-l", "pa1", "--test", str(wide), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["test_ignored_features"] == 3
    # the same rule for training data under --n-features (indices 1..20: 11..20 are beyond a width of 10)
    assert main(["train", str(small["data"]), "-l", "pa1", "--n-features", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    beyond = sum(
        int(tok.split(":")[0]) > 10 for line in small["data"].read_text().splitlines() for tok in line.split()[1:]
    )
    assert out["n_features"] == 10 and out["ignored_features"] == beyond > 0


def test_model_without_input_contract_predicts_as_before(tmp_path, capsys):
    from streamlearn.linear_model import PassiveAggressiveClassifier

    X = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    old = tmp_path / "old.slm"
    PassiveAggressiveClassifier().fit(X, [-1, 1]).save(old)
    assert not hasattr(load(old), "input_spec_")
    data = tmp_path / "z.svm"
    data.write_text("1 0:1\n1 2:1\n")  # zero-based, guessed from the file as before
    assert main(["predict", str(old), str(data)]) == 0
    assert capsys.readouterr().out.split() == ["-1", "1"]


def test_huge_index_is_one_line_before_any_allocation(tmp_path, capsys):
    data = tmp_path / "huge.svm"
    data.write_text("1 1:1 99999999999:1\n-1 2:1\n")
    assert main(["train", str(data), "-l", "pa1"]) == 2
    assert "line 1: feature index in '99999999999:1' exceeds the supported width" in _err(capsys)


# ---------------------------------------------------------------------------------------------------
# outputs: validated first, atomic, never destroying another file


def test_bad_data_leaves_previous_predictions_byte_identical(small, tmp_path, capsys):
    out = tmp_path / "pred.txt"
    out.write_bytes(b"previous\n")
    for where in (0, -1):  # a bad first line, a bad last line
        lines = small["test"].read_text().splitlines(keepends=True)
        lines[where] = "1 3:x\n"
        bad = tmp_path / "bad.svm"
        bad.write_text("".join(lines))
        assert main(["predict", str(small["model"]), str(bad), "-o", str(out), "--chunk-size", "10"]) == 2
        _err(capsys)
        assert out.read_bytes() == b"previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.svm", "pred.txt"]  # no temporary file left


def test_output_that_is_an_input_or_a_directory_is_refused(small, tmp_path, capsys):
    data, model = small["data"], small["model"]
    before = {p: p.read_bytes() for p in (data, model)}
    link = tmp_path / "alias.svm"
    link.symlink_to(data)
    for argv in (
        ["train", str(data), "-l", "pa1", "-o", str(data)],
        ["train", str(data), "-l", "pa1", "-o", str(link)],
        ["predict", str(model), str(data), "-o", str(data)],
        ["predict", str(model), str(data), "-o", str(model)],
        ["train", str(data), "-l", "pa1", "-o", str(tmp_path)],
        ["predict", str(model), str(data), "-o", str(tmp_path)],
    ):
        assert main(argv) == 2, argv
        _err(capsys)
    assert {p: p.read_bytes() for p in (data, model)} == before


def test_two_outputs_of_one_command_at_the_same_path_are_refused(small, tmp_path, capsys):
    """``train -o m.png --plot m.png`` wrote the model, then the figure over it (exit 0, the model lost); so did
    ``demo --markdown r.png --plot r.png`` with the report."""
    data, model = str(small["data"]), str(small["model"])
    same, link = tmp_path / "same.png", tmp_path / "alias.png"
    same.write_bytes(b"older")
    link.symlink_to(same)
    s, a = str(same), str(link)
    for argv, words in (
        (["train", data, "-l", "pa1", "-o", s, "--plot", s], f"plot {s!r} is also the model file {s!r}"),
        (["train", data, "-l", "pa1", "-o", s, "--plot", a], f"plot {a!r} is also the model file {s!r}"),
        (["train", data, "-i", model, "-o", s, "--plot", s], f"plot {s!r} is also the model file {s!r}"),
        (
            ["experiment", "demo", "--learners", "pa1", "--markdown", s, "--plot", s],
            f"Markdown file {s!r} is also the plot {s!r}",
        ),
    ):
        assert main([*argv, "--quiet"]) == 2, argv
        assert _err(capsys) == f"streamlearn: error: {words}; give each output its own path.\n"
    assert same.read_bytes() == b"older" and sorted(p.name for p in tmp_path.iterdir()) == ["alias.png", "same.png"]


def test_missing_output_folder_is_reported_before_training(small, tmp_path, capsys):
    t0 = time.perf_counter()
    assert main(["train", A9A, "-l", "arow", "-o", str(tmp_path / "no" / "m.slm")]) == 2
    assert time.perf_counter() - t0 < 5  # nothing was read or trained
    err = _err(capsys)
    assert "folder" in err and "does not exist" in err and ".tmp" not in err


def test_a_folder_that_refuses_new_files_names_the_output_not_its_temporary_file(small, tmp_path, capsys, monkeypatch):
    """A folder where no file can be created although it looks writable (a read-only or special file system, or
    a check that root passes): the error named the hidden temporary file (``/sys/.tmp-d_amn3_8.slm: Permission
    denied.``; ``[Errno 2] ... '/proc/.tmp-cvlje4pu.slm'``), not the output the user gave."""
    from streamlearn import _atomic

    mkstemp = _atomic.tempfile.mkstemp

    def refused(errno_, strerror):
        def make(**kwargs):
            if kwargs.get("dir") == str(tmp_path):
                raise OSError(errno_, strerror, os.path.join(kwargs["dir"], f".tmp-x1y2z3{kwargs.get('suffix', '')}"))
            return mkstemp(**kwargs)

        return make

    model, preds, fig = tmp_path / "m.slm", tmp_path / "p.txt", tmp_path / "f.png"
    for p in (model, preds, fig):
        p.write_bytes(b"older")
    for errno_, strerror in (
        (13, "Permission denied"),
        (2, "No such file or directory"),
        (30, "Read-only file system"),
    ):
        monkeypatch.setattr(_atomic.tempfile, "mkstemp", refused(errno_, strerror))
        for argv, out in (
            (["train", str(small["data"]), "-l", "pa1", "--quiet", "-o", str(model)], model),
            (["predict", str(small["model"]), str(small["test"]), "-o", str(preds)], preds),
            (["sketch", str(small["data"]), "--quiet", "-o", str(model)], model),
            (["evaluate", str(small["data"]), "-l", "pa1", "--quiet", "--plot", str(fig)], fig),
        ):
            assert main(argv) == 2, argv
            assert _err(capsys) == f"streamlearn: error: {out}: {strerror}.\n", argv
    assert all(p.read_bytes() == b"older" for p in (model, preds, fig))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png", "m.slm", "p.txt"]


def test_a_folder_that_refuses_new_files_is_found_before_training(small, tmp_path, capsys, monkeypatch):
    """Root passes every permission check and a read-only file system keeps its bits: the output's folder is
    probed with a file when the output is announced, so the error comes before the work, not after it."""
    from streamlearn import _atomic

    mkstemp = _atomic.tempfile.mkstemp

    def read_only(**kwargs):
        if kwargs.get("dir") == str(tmp_path):
            raise OSError(30, "Read-only file system", os.path.join(kwargs["dir"], ".tmp-x1y2z3"))
        return mkstemp(**kwargs)

    monkeypatch.setattr(_atomic.tempfile, "mkstemp", read_only)
    with pytest.raises(_atomic.OutputError, match=r"m\.slm: Read-only file system\.$"):
        _atomic.Output(tmp_path / "m.slm")
    assert main(["train", str(small["data"]), "-l", "pa1", "-o", str(tmp_path / "m.slm")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"streamlearn: error: {tmp_path / 'm.slm'}: Read-only file system.\n"
    assert list(tmp_path.iterdir()) == []


def test_an_output_on_a_read_only_file_system_is_named_as_such(small, tmp_path, capsys, monkeypatch):
    """A read-only file system keeps the permission bits that allow writing: its refusal is not reported as a
    permission denied, which would send the user to chmod."""
    import types

    access, statvfs = os.access, os.statvfs

    def refused(path, mode, **kwargs):
        return False if str(path).startswith(str(tmp_path)) else access(path, mode, **kwargs)

    def read_only(path):
        if str(path).startswith(str(tmp_path)):
            return types.SimpleNamespace(f_flag=statvfs(path).f_flag | os.ST_RDONLY)
        return statvfs(path)

    model = tmp_path / "m.slm"
    model.write_bytes(b"older")
    monkeypatch.setattr(os, "access", refused)
    train = ["train", str(small["data"]), "-l", "pa1", "--quiet", "-o"]
    assert main([*train, str(model)]) == 2
    assert _err(capsys) == f"streamlearn: error: model file {str(model)!r} is not writable (permission denied).\n"
    monkeypatch.setattr(os, "statvfs", read_only)
    assert main([*train, str(model)]) == 2
    assert _err(capsys) == f"streamlearn: error: model file {str(model)!r} is not writable (read-only file system).\n"
    assert main([*train, str(tmp_path / "new.slm")]) == 2
    assert _err(capsys) == (
        f"streamlearn: error: cannot write model file {str(tmp_path / 'new.slm')!r}: the folder {str(tmp_path)!r} "
        "is not writable (read-only file system).\n"
    )
    monkeypatch.undo()
    assert model.read_bytes() == b"older" and [p.name for p in tmp_path.iterdir()] == ["m.slm"]


def test_symlink_is_followed_and_permissions_kept(small, tmp_path, capsys):
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert main(["predict", str(small["model"]), str(small["test"]), "-o", str(link)]) == 0
    assert link.is_symlink() and len(target.read_text().split()) == 100
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    new = tmp_path / "new.txt"
    mask = os.umask(0o027)
    try:
        assert main(["predict", str(small["model"]), str(small["test"]), "-o", str(new)]) == 0
    finally:
        os.umask(mask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o640  # 0666 minus the umask, not mkstemp's 0600
    model = tmp_path / "m.slm"  # models follow the same rules
    model.write_bytes(b"old")
    os.chmod(model, 0o604)
    assert main(["train", str(small["data"]), "-l", "pa1", "-o", str(model), "--quiet"]) == 0
    assert stat.S_IMODE(model.stat().st_mode) == 0o604 and load(model).t_ == 400


def test_devices_are_written_through_never_replaced(small, capsys):
    assert main(["predict", str(small["model"]), str(small["test"]), "-o", "/dev/null"]) == 0
    assert main(["train", str(small["data"]), "-l", "pa1", "-o", "/dev/null", "--quiet"]) == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_figure_that_cannot_be_written_leaves_the_model_file_as_it_was(small, tmp_path, capsys):
    """train -o MODEL --plot PNG saved the model, then failed on the figure: exit 2 with the figure's error,
    and the old model file already replaced. The figure now takes its place before the model does."""
    out = tmp_path / "m.slm"
    out.write_bytes(b"old model")
    assert main(["train", str(small["data"]), "-l", "pa1", "-o", str(out), "--plot", "/dev/full", "--quiet"]) == 2
    assert "/dev/full: No space left on device" in _err(capsys)
    assert out.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.slm"]  # no temporary file left either


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_full_device_is_one_line_enospc(small):
    for argv in (
        ["predict", str(small["model"]), str(small["test"]), "-o", "/dev/full"],
        ["train", str(small["data"]), "-l", "pa1", "-o", "/dev/full"],
    ):
        res = _cli(*argv)
        assert res.returncode == 2 and _one_line_error(res.stderr) and b"No space left" in res.stderr, res.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    with open("/dev/full", "w") as full:  # standard output on a full device: predictions, and train --json
        for argv in (
            ["predict", str(small["model"]), str(small["test"])],
            ["train", str(small["data"]), "-l", "pa1", "--json"],
        ):
            res = subprocess.run(
                [sys.executable, "-m", "streamlearn", *argv],
                stdout=full,
                stderr=subprocess.PIPE,
                timeout=300,
                env=ENV,
                check=False,
            )
            assert res.returncode == 2 and _one_line_error(res.stderr), res.stderr
            assert b"standard output: No space left" in res.stderr


def test_sketch_file_given_to_predict_is_one_line(small, tmp_path, capsys):
    sk = tmp_path / "s.slm"
    assert main(["sketch", str(small["data"]), "--ell", "3", "-o", str(sk), "--quiet"]) == 0
    assert main(["predict", str(sk), str(small["test"])]) == 2
    assert "does not predict" in _err(capsys)


# ---------------------------------------------------------------------------------------------------
# standard input, /dev/stdin, FIFOs


def test_stdin_training_gives_the_file_model(tmp_path, capsys):
    """`zcat a9a.gz | streamlearn train - --learner pa1 --test a9a.t --json` == the file path."""
    file_model, pipe_model = tmp_path / "f.slm", tmp_path / "p.slm"
    assert main(["train", A9A, "-l", "pa1", "--test", A9A_T, "--json", "-o", str(file_model)]) == 0
    file_out = json.loads(capsys.readouterr().out)
    with lzma.open(A9A) as f:
        text = f.read()
    res = _cli("train", "-", "-l", "pa1", "--test", A9A_T, "--json", "-o", str(pipe_model), input=text)
    assert res.returncode == 0, res.stderr
    pipe_out = json.loads(res.stdout)
    assert pipe_out["test_accuracy"] == file_out["test_accuracy"] and pipe_out["n_features"] == 123
    a, b = load(file_model), load(pipe_model)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    assert a.input_spec_ == b.input_spec_


def test_dev_stdin_fifo_and_dash_for_every_command(small, tmp_path):
    data = small["data"].read_bytes()
    res = _cli("train", "/dev/stdin", "-l", "pa1", "--json", input=data)
    assert res.returncode == 0 and json.loads(res.stdout)["n_train"] == 400, res.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlearn", "evaluate", str(fifo), "-l", "pa1", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    with open(fifo, "wb") as w:
        w.write(data)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and json.loads(out)["n_examples"] == 400, err
    res = _cli("predict", str(small["model"]), "-", input=small["test"].read_bytes())
    assert res.returncode == 0 and len(res.stdout.split()) == 100, res.stderr
    res = _cli("sketch", "-", "--ell", "3", "--json", input=data)
    assert res.returncode == 0 and json.loads(res.stdout)["n_rows"] == 400, res.stderr
    # a learner that cannot widen needs the width of a stream up front: a clear error, then it works
    res = _cli("train", "-", "-l", "arow", input=data)
    assert res.returncode == 2 and _one_line_error(res.stderr) and b"--n-features" in res.stderr
    res = _cli("train", "-", "-l", "arow", "--n-features", "21", "--json", input=data)
    assert res.returncode == 0 and json.loads(res.stdout)["ignored_features"] == 0, res.stderr


# ---------------------------------------------------------------------------------------------------
# Ctrl-C and kill -9 at random moments


def test_ctrl_c_is_one_line_and_names_the_output(small, tmp_path):
    assert_ctrl_c_on_open_pipe_leaves_output(small["data"].read_bytes(), ["-l", "pa1"], tmp_path)


@pytest.mark.parametrize("command", ["train", "predict"])
def test_random_sigint_and_sigkill_leave_the_old_file_or_a_valid_new_one(small, tmp_path, command):
    """20 SIGINT and 20 SIGKILL trials at random moments (start-up, reading, writing), 4 processes at a time."""
    rng = random.Random(13 if command == "train" else 14)
    data = tmp_path / "d.svm"
    data.write_text(_rows(20_000, seed=3) * 5)  # a fraction of a second of reading, training and writing
    trials = [(signum, i) for signum in (signal.SIGINT, signal.SIGKILL) for i in range(20)]
    outs = []
    for signum, i in trials:
        folder = tmp_path / f"{signum.name}{i}"
        folder.mkdir()
        out = folder / "OUT"
        out.write_bytes(b"previous content\n")
        outs.append(out)
    argv = {
        "train": lambda o: [
            sys.executable,
            "-m",
            "streamlearn",
            "train",
            str(data),
            "-l",
            "pa1",
            "-o",
            str(o),
            "--quiet",
        ],
        "predict": lambda o: [
            sys.executable,
            "-m",
            "streamlearn",
            "predict",
            str(small["model"]),
            str(data),
            "-o",
            str(o),
        ],
    }[command]
    t0 = time.time()  # whole runs, 2 at a time: the signals then fall over start-up, reading, training, writing
    probes = [
        subprocess.Popen(argv(tmp_path / f"probe{i}"), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for i in range(2)
    ]
    assert [p.wait(timeout=300) for p in probes] == [0] * 2
    span = 1.5 * (time.time() - t0)  # the trials run 4 at a time: a little slower than the probes
    pending = list(zip(trials, outs))
    while pending:
        batch, pending = pending[:4], pending[4:]
        procs = []
        for (signum, _), out in batch:
            procs.append(
                (
                    subprocess.Popen(argv(out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV),
                    signum,
                    out,
                    rng.uniform(0.05, span),
                )
            )
        start = time.time()
        for proc, signum, _out, delay in sorted(procs, key=lambda p: p[3]):
            time.sleep(max(0.0, start + delay - time.time()))
            proc.send_signal(signum)
        for proc, signum, out, _ in procs:
            _, err = proc.communicate(timeout=300)
            content = out.read_bytes()
            if content != b"previous content\n":  # the run completed before the signal: a whole new file
                if command == "train":
                    assert load(out).t_ == 100_000
                else:
                    assert len(content.split()) == 100_000
            if signum == signal.SIGINT:
                assert sorted(p.name for p in out.parent.iterdir()) == ["OUT"], err  # no temporary file left
                if proc.returncode == 130:
                    assert _one_line_error(err), err


@pytest.mark.parametrize(
    "name,text,options,label,place",
    [
        ("late.svm", "1 1:1\n2 2:1\n# c\n3 3:1\n4 1:1\n", ["-l", "pa1"], "3", ", line 4"),
        ("ones.svm", "1 1:1\n1 2:1\n0 3:1\n1 1:1\n", ["-l", "pa1"], "0", ", line 3"),
        ("late.vw", "1 |a x\n2 |a y\n\n3 |a z\n4 |a x\n", ["-l", "ftrl", "--labels", "multiclass"], "3", ":4"),
        ("late.csv", "y,a\n1,2\n2,3\n3,4\n4,5\n", ["-l", "ftrl", "--label", "y"], "3", ", line 4"),
    ],
)
def test_a_class_first_seen_after_the_first_chunk_is_an_error_naming_the_file(
    tmp_path, capsys, name, text, options, label, place
):
    """The classes come from the first chunk's labels: a later new label stops the run with the file, the
    line of the example and what to do (it was the learner's 'y contains labels ... not in classes_')."""
    path = tmp_path / name
    path.write_text(text)
    for command in ("train", "evaluate"):
        assert main([command, str(path), *options, "--chunk-size", "2", "--quiet"]) == 2
        err = _err(capsys)
        assert err.startswith(f"streamlearn: error: {path}{place}: label {label} is not one of the classes ")
        assert "--chunk-size" in err
    assert main(["train", str(path), *options, "--chunk-size", "4", "--quiet"]) == 0


@pytest.mark.parametrize(
    "name,text,options,place",
    [
        ("one.svm", "2 1:1\n2 2:1\n\n5 2:2\n7 1:1\n", ["-l", "pa1"], ", line 4"),
        ("one.csv", "y,a\n2,1\n2,3\n5,4\n7,5\n", ["-l", "ftrl", "--label", "y"], ", line 4"),
    ],
)
def test_a_first_chunk_with_one_class_names_the_next_class_and_the_chunk_size(
    tmp_path, capsys, name, text, options, place
):
    """A first chunk holding one label: the learner said it "needs at least 2 classes; got 1 class" of a file
    with three; the second class in the next chunk is now named, with the line and --chunk-size."""
    path = tmp_path / name
    path.write_text(text)
    for command in ("train", "evaluate"):
        assert main([command, str(path), *options, "--chunk-size", "2", "--quiet"]) == 2
        err = _err(capsys)
        assert err.startswith(
            f"streamlearn: error: {path}{place}: label 5 is not one of the classes {{2}} of the first "
        )
        assert "--chunk-size" in err and "needs at least 2 classes" not in err
    assert main(["evaluate", str(path), *options, "--chunk-size", "3", "--quiet"]) == 2
    assert ": label 7 is not one of the classes {2, 5} of the first chunk (3 rows)" in _err(capsys)
    assert main(["train", str(path), *options, "--chunk-size", "10", "--quiet"]) == 0


@pytest.mark.parametrize(
    "name,text,options,place",
    [("r.svm", "1 1:1\n\n0.5 2:1\n", [], ", line 3"), ("r.csv", "y,a\n1,2\n0.5,3\n", ["--label", "y"], ", line 3")],
)
def test_a_classifier_on_continuous_labels_is_an_error_naming_the_file(tmp_path, capsys, name, text, options, place):
    path = tmp_path / name
    path.write_text(text)
    for command in ("train", "evaluate"):
        assert main([command, str(path), "-l", "ftrl", *options, "--quiet"]) == 2
        err = _err(capsys)
        assert err.startswith(f"streamlearn: error: {path}{place}: label 0.5 is not a class") and "regress" in err


def test_a_holdout_that_holds_out_no_row_is_an_error(tmp_path, capsys):
    """--holdout asks for a score: a fraction too small for the file gives no held-out row, which was a run
    without a test score (exit 0), and no model written."""
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n1 1:1\n-1 2:1\n")
    model = tmp_path / "m.slm"
    assert main(["train", str(data), "-l", "pa1", "--holdout", "0.01", "-o", str(model)]) == 2
    err = _err(capsys)
    assert (
        err
        == f"streamlearn: error: --holdout 0.01: no row of {data} was held out (4 rows trained on); hold out a larger fraction.\n"
    )
    assert not model.exists()
    assert main(["train", str(data), "-l", "pa1", "--holdout", "0.5", "--quiet"]) == 0


def test_a_model_of_dict_rows_cannot_read_table_files_and_says_so(tmp_path, capsys):
    """A model that learned dict rows (``learn_one``) hashes them as the CSV reader does but knows no table
    columns: ``predict`` and ``train -i`` on a CSV file are one line naming the model (they were the reader's
    message, or for ``train -i`` of a spec without its label column, "y of chunk 1 must be a 1-D array")."""
    import json
    import zipfile

    from streamlearn.cli.main import main
    from streamlearn.linear_model import FTRLProximalClassifier

    model = FTRLProximalClassifier()
    model.learn_one({"a": 1.0, "b": "x"}, 1, classes=[-1, 1])
    rows = tmp_path / "rows.slm"
    model.save(rows)
    data = tmp_path / "d.csv"
    data.write_text("y,a,b\n1,0.5,x\n-1,1.5,y\n")
    table = tmp_path / "table.slm"
    assert main(["train", str(data), "-l", "ftrl", "--label", "y", "-o", str(table), "--quiet"]) == 0
    with zipfile.ZipFile(table) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(entries["meta.json"])
    meta["attributes"]["input_spec_"]["label_column"] = None
    entries["meta.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(table, "w") as zf:
        for name, raw in entries.items():
            zf.writestr(name, raw)
    capsys.readouterr()
    for argv, expected in [
        (["predict", str(rows), str(data)], f"{rows}: the model's input specification (input_spec_) has no table"),
        (["train", "-i", str(rows), str(data), "--quiet"], f"{rows}: the model's input specification"),
        (["train", "-i", str(table), str(data), "--quiet"], f"{table}: the model's input specification "),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"streamlearn: error: {expected}") and err.count("\n") == 1, err


def test_a_model_holding_nan_is_refused_and_train_does_not_write_one(tmp_path, capsys):
    """``predict`` printed 'nan' scores for a model whose weights are NaN (one saved through the Python API after
    it diverged), and ``train`` wrote a NAG model whose accumulator had overflowed to infinity (the feature
    stopped learning): both are one-line errors now, naming the file or the learner and the attribute."""
    import numpy as np

    from streamlearn.cli.main import main
    from streamlearn.linear_model import OGDClassifier

    model = OGDClassifier().partial_fit(np.eye(3), [1, -1, 1], classes=[-1, 1])
    model.coef_[0, 1] = np.nan
    path = tmp_path / "nan.slm"
    model.save(path)
    data = tmp_path / "d.svm"
    data.write_text("1 1:1 2:0.5\n-1 3:1\n1 1:1e300 2:1\n-1 1:2e300 3:1\n")
    capsys.readouterr()
    for argv in (["predict", str(path), str(data)], ["train", "-i", str(path), str(data), "--quiet"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert (
            err == f"streamlearn: error: {path}: the model's coef_ holds NaN or infinity (it diverged); retrain it.\n"
        )
    out = tmp_path / "nag.slm"
    assert main(["train", str(data), "-l", "nag", "-o", str(out), "--quiet"]) == 2
    assert (
        f"{data}, line 3: a feature value of 1e+300 is too large: expected values below 2**500"
        in capsys.readouterr().err
    )
    assert not out.exists()


def test_a_value_the_learners_refuse_is_named_by_file_and_line(tmp_path, capsys):
    """Refused by the learner (not by the reader), in the third chunk: the file and the line of the example (a
    comment line before it), the same line for a resumed model; from a pipe, which cannot be read again, the
    example's number."""
    import io

    from streamlearn.cli.main import main

    data = tmp_path / "d.svm"
    text = "1 1:1\n-1 2:1\n# note\n1 1:1 3:1\n-1 2:1\n1 1:4e150\n"
    data.write_text(text)
    out = tmp_path / "m.slm"
    for argv in (["train", str(data), "-l", "pa", "-o", str(out)], ["evaluate", str(data), "-l", "pa"]):
        assert main([*argv, "--chunk-size", "2", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"streamlearn: error: {data}, line 6: a feature value of 4e+150 is too large: expected values below 2**500 "
            "(about 3.3e150) in size, beyond which their squares overflow. Scale the features.\n"
        ), err
        assert not out.exists()
    model = tmp_path / "first.slm"
    data.write_text(text.replace("4e150", "4"))
    assert main(["train", str(data), "-l", "pa", "-o", str(model), "--quiet"]) == 0
    data.write_text(text.replace("4e150", "1e200"))  # over the bound after the model's scaling too
    assert main(["train", "-i", str(model), str(data), "-o", str(out), "--chunk-size", "2", "--quiet"]) == 2
    assert capsys.readouterr().err.startswith(
        f"streamlearn: error: {data}, line 6: a feature value of 2.5e+199 is too large"
    )
    stdin = io.TextIOWrapper(io.BytesIO(text.encode()))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stdin", stdin)
        assert main(["train", "-", "-l", "pa", "--n-features", "3", "--chunk-size", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamlearn: error: <stdin>: example 5: a feature value of 4e+150 is too large: expected"), (
        err
    )


@pytest.mark.parametrize(
    ("name", "text", "extra", "place"),
    [
        ("d.vw", "1 |a x\n\n-1 |a y\n1 |a x:1e200\n", [], ":4"),
        ("d.csv", 'y,a,b\n1,1,"x\ny"\n\n-1,2,z\n1,1e200,x\n', ["--label", "y"], ", line 6"),
    ],
)
def test_a_refused_value_in_a_hashed_format_is_named_by_its_line(tmp_path, capsys, name, text, extra, place):
    """VW text (after a blank line) and CSV (after a quoted field holding a newline and an empty line): the
    line where the refused example starts, in the reader's own way of naming a place."""
    if name.endswith(".csv"):
        pytest.importorskip("pyarrow")
    from streamlearn.cli.main import main

    data = tmp_path / name
    data.write_text(text)
    for cmd in ("train", "evaluate"):
        assert main([cmd, str(data), "-l", "ogd", *extra, "--chunk-size", "2", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"streamlearn: error: {data}{place}: a feature value of 1e+200 is too large: expected"), (
            err
        )


@pytest.mark.parametrize(
    ("name", "text", "extra", "place", "reason"),
    [
        ("w.vw", "1 |a x\n\n-1 1e200 |a y\n", ["-l", "ogd"], ":3", "the importance weight 1e+200 is too large"),
        (
            "w.csv",
            "y,w,a\n1,1,2\n-1,1e200,3\n",
            ["-l", "ogd", "--label", "y", "--weight", "w"],
            ", line 3",
            "the importance weight 1e+200 is too large",
        ),
        (
            "t.svm",
            "1 1:1\n# c\n1e200 1:2\n",
            ["-l", "nag-regressor"],
            ", line 3",
            "the target 1e+200 (importance weight 1) is too large to standardise",
        ),
    ],
)
def test_a_refused_weight_or_target_is_named_by_its_line(tmp_path, capsys, name, text, extra, place, reason):
    """An importance weight or a target too large: the file and line, and the reason without the row's place in
    its batch ('sample_weight[1]', 'y[1]' are the Python API's words)."""
    if name.endswith(".csv"):
        pytest.importorskip("pyarrow")
    from streamlearn.cli.main import main

    data = tmp_path / name
    data.write_text(text)
    assert main(["train", str(data), *extra, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"streamlearn: error: {data}{place}: {reason}"), err
    assert "[1]" not in err


def test_a_refused_value_in_parquet_is_named_by_its_row(tmp_path, capsys):
    """Parquet has no lines: the row of the file, counted from 1."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from streamlearn.cli.main import main

    data = tmp_path / "d.parquet"
    pq.write_table(pa.table({"y": [1, -1, 1, -1], "a": [1.0, 2.0, 1.0, 1e200]}), data)
    assert main(["train", str(data), "-l", "ogd", "--label", "y", "--chunk-size", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"streamlearn: error: {data}, row 4: a feature value of 1e+200 is too large: expected"), err


def test_a_value_a_model_refuses_to_score_is_named_by_file_and_line(tmp_path, capsys):
    """predict and train --test: the file and the line (a comment before it), no output file written; from
    standard input, the example's number."""
    import io

    from streamlearn.cli.main import main

    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n1 1:1 2:1\n")
    model = tmp_path / "m.slm"
    assert main(["train", str(data), "-l", "ogd", "-o", str(model), "--quiet"]) == 0
    test = tmp_path / "t.svm"
    test.write_text("1 1:1\n# c\n-1 2:1e200\n")
    out = tmp_path / "p.txt"
    expected = f"{test}, line 3: a feature value of 1e+200 is too large: expected values below 2**500"
    assert main(["predict", str(model), str(test), "-o", str(out), "--chunk-size", "1"]) == 2
    assert capsys.readouterr().err.startswith(f"streamlearn: error: {expected}")
    assert not out.exists()
    assert main(["train", str(data), "-l", "ogd", "--test", str(test), "-o", str(out), "--quiet"]) == 2
    assert capsys.readouterr().err.startswith(f"streamlearn: error: {expected}")
    assert not out.exists()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(test.read_bytes())))
        assert main(["predict", str(model), "-", "--chunk-size", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamlearn: error: <stdin>: example 2: a feature value of 1e+200 is too large: expected"), (
        err
    )


def test_a_divergence_is_named_by_file_and_line(tmp_path, capsys):
    """A step no float holds (SCW-II on values of 1e75), in the second chunk: the file and the example in it,
    one line, no model written, not the learner's place in its batch."""
    from streamlearn.cli.main import main

    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n1 1:1 3:1\n\n-1 1:1e75 2:-3e75\n1 1:2e75\n")
    out = tmp_path / "m.slm"
    for argv in (["train", str(data), "-o", str(out)], ["evaluate", str(data)]):
        assert main([*argv, "-l", "scw2", "--scale", "none", "--chunk-size", "2", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(
            f"streamlearn: error: {data}, line 5: SoftConfidenceWeightedClassifier diverged: the score of this example, or its update"
        ), err
        assert err.count("\n") == 1 and not out.exists()


def test_a_divergence_of_a_scaled_learner_names_the_learner_not_its_pipeline(tmp_path, capsys):
    """cw runs behind MaxAbs scaling (a StreamPipeline); an average loss that exploded said "StreamPipeline
    diverged"."""
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n" * 20)
    for command in ("train", "evaluate"):
        assert main([command, str(data), "-l", "cw", "-p", "a=1e300", "--quiet"]) == 2
        assert _err(capsys).startswith("streamlearn: error: ConfidenceWeightedClassifier diverged: average loss")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
@pytest.mark.parametrize(
    "name, text, options, where",
    [
        ("d.svm", "1 1:1 2:1\n-1 2:1\n" * 5, ["-l", "pa1"], "d.svm, line 1"),
        ("d.vw", "1 |a x y\n-1 |a y\n" * 5, ["-l", "pa1"], "d.vw:1"),
        ("d.csv", "y,x\n1,2\n-1,3\n" * 5, ["-l", "pa1", "--label", "y"], "d.csv, line 1"),
    ],
)
def test_a_utf16_or_utf32_file_is_named_as_such(tmp_path, capsys, encoding, name, text, options, where):
    """A data file saved as UTF-16 (Windows' "Unicode text") was refused for a reason it did not have: "the
    label '\\xff\\xfe1\\x00' is not a number", "bad label '��-\\x001\\x00'", or a CSV column count on line
    502 of a 501-line file."""
    enc = encoding[:6].upper()  # UTF-16 or UTF-32
    path = tmp_path / name
    bom = {"utf-16-be": "\ufeff"}.get(encoding, "")  # Python writes a byte order mark for utf-16 and utf-32
    path.write_bytes((bom + text).encode(encoding))
    model = tmp_path / "m.slm"
    model.write_bytes(b"older")
    assert main(["train", str(path), *options, "-o", str(model)]) == 2
    err = _err(capsys)
    assert err == (
        f"streamlearn: error: {tmp_path / where}: the file is {enc} text (it starts with a {enc} byte order "
        f"mark); expected UTF-8 (or ASCII) text: convert it, e.g. with iconv -f {enc} -t UTF-8\n"
    ), err
    assert model.read_bytes() == b"older"


def test_a_test_file_weight_too_large_is_named_by_its_line(tmp_path, capsys):
    """A --test file's importance weight is checked as a training file's, and a refused one is named by its file
    and line (a weight of 1e200 was scored with, and one of 1e308 made the test metrics NaN)."""
    from streamlearn.cli.main import main

    data, test = tmp_path / "d.vw", tmp_path / "t.vw"
    data.write_text("1 |a x\n-1 |a y\n")
    test.write_text("1 |a x\n\n-1 1e200 |a y\n")
    assert main(["train", str(data), "-l", "ogd", "--test", str(test), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"streamlearn: error: {test}:3: the importance weight 1e+200 is too large"), err


@pytest.mark.parametrize("learner", ["ogd-squared", "ogd", "pa"])  # normalized scales, weights only, MaxAbs + averaged
def test_a_stream_whose_width_grows_learns_the_model_of_its_final_width(learner, tmp_path):
    # rows reaching further columns as the stream goes on, read once from standard input, in chunks of 50: the
    # learner is widened between chunks, and ends as the one told the width up front
    rng = np.random.default_rng(4)
    lines, width = [], 0
    for i in range(600):
        cols = np.sort(rng.choice(np.arange(1, 11 + i // 2), size=4, replace=False))
        width = max(width, int(cols[-1]))
        lines.append(f"{rng.choice(['+1', '-1'])} " + " ".join(f"{c}:{rng.uniform(0.5, 30):.3f}" for c in cols))
    data = ("\n".join(lines) + "\n").encode()
    models = {}
    for told in (False, True):
        out = tmp_path / f"m{told}"
        extra = ["--n-features", str(width)] if told else []
        res = _cli("train", "-", "-l", learner, "--chunk-size", "50", "-o", str(out), *extra, input=data)
        assert res.returncode == 0, res.stderr
        models[told] = load(out)
    a, b = models[False], models[True]
    assert a.n_features_in_ == b.n_features_in_ == width
    if hasattr(a, "learner_"):  # behind a scaler
        assert np.array_equal(a.scaler_.max_abs_, b.scaler_.max_abs_)
        a, b = a.learner_, b.learner_
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
