"""The command line, called in-process through ``main([...])``, plus one subprocess smoke test."""

import json
import subprocess
import sys

import numpy as np
import pytest

from streamlearn.cli.main import main
from streamlearn.datasets import bundled_path, load_a9a
from streamlearn.learners import LEARNERS, make_learner

A9A = str(bundled_path("a9a.xz"))
A9A_T = str(bundled_path("a9a.t.xz"))
TRAIN_KEYS = {
    "learner",
    "params",
    "n_train",
    "n_features",
    "online_error_rate",
    "average_loss",
    "test_accuracy",
    "train_seconds",
    "examples_per_second",
    "nnz_weights",
}


def _json(capsys):
    out = capsys.readouterr().out
    return json.loads(out)


def test_train_json_contract_and_saved_model(tmp_path, capsys):
    model = tmp_path / "pa1.slm"
    png = tmp_path / "curve.png"
    assert (
        main(
            [
                "train",
                A9A,
                "--learner",
                "pa1",
                "-p",
                "C=0.01",
                "--test",
                A9A_T,
                "-o",
                str(model),
                "--plot",
                str(png),
                "--json",
            ]
        )
        == 0
    )
    out = _json(capsys)
    assert set(out) >= TRAIN_KEYS
    assert out["n_train"] == 32561 and out["n_features"] == 123 and out["params"] == {"C": "0.01"}
    assert out["test_accuracy"] >= 0.84
    assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"
    # predict with the saved model == the model's own predictions
    preds = tmp_path / "pred.txt"
    assert main(["predict", str(model), A9A_T, "-o", str(preds)]) == 0
    lines = preds.read_text().split()
    _, _, X_test, y_test = load_a9a()
    assert len(lines) == X_test.shape[0] and set(lines) <= {"-1", "1"}
    assert np.mean(np.array(lines, dtype=float) == y_test) == pytest.approx(out["test_accuracy"])


def test_train_holdout_passes_and_regression(tmp_path, capsys):
    assert main(["train", A9A, "-l", "ogd", "--holdout", "0.25", "--seed", "3", "--passes", "2", "--json"]) == 0
    out = _json(capsys)
    assert 0.2 * 32561 < out["test_n"] < 0.3 * 32561 and out["n_train"] + out["test_n"] == 32561
    assert out["passes"] == 2
    data = tmp_path / "reg.svm"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = X @ [1.0, -2.0, 0.5]
    data.write_text(
        "".join(f"{t:.6f} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(x)) + "\n" for x, t in zip(X, y))
    )
    # a noiseless linear target: PA-I's full steps (the default PA-II with C=0.03 is cautious, for noisy data)
    argv = ["train", str(data), "-l", "pa-regressor", "-p", "epsilon=0.01", "-p", "variant=pa1", "-p", "C=1"]
    assert main([*argv, "--json"]) == 0
    out = _json(capsys)
    assert out["online_rmse"] < 0.5 and "online_error_rate" not in out


def test_evaluate_prints_progressive_table(capsys):
    assert main(["evaluate", A9A, "-l", "pa1", "--chunk-size", "1000"]) == 0
    text = capsys.readouterr().out
    counts = [int(line.split()[4]) for line in text.splitlines()[2:] if line[:1].isdigit()]
    assert counts[:6] == [1, 2, 4, 8, 16, 32] and counts[-1] == 32561


def test_learners_lists_every_registered_learner(capsys):
    assert main(["learners", "--json"]) == 0
    rows = _json(capsys)
    assert {r["name"] for r in rows} == set(LEARNERS)
    pa1 = next(r for r in rows if r["name"] == "pa1")
    assert pa1["parameters"]["C"] == 0.01 and "variant" not in pa1["parameters"]


def test_learners_json_shows_an_infinite_default_as_text(capsys):
    """tg's theta defaults to inf: JSON has no inf, and null would read as None; "inf" is what -p takes."""
    assert main(["learners", "--json"]) == 0
    rows = {r["name"]: r for r in _json(capsys)}
    assert rows["tg"]["parameters"]["theta"] == "inf"
    assert make_learner("tg", {"theta": rows["tg"]["parameters"]["theta"]}).theta == float("inf")
    assert main(["learners"]) == 0
    assert " theta=inf " in capsys.readouterr().out


def test_demo_json_and_plot(tmp_path, capsys):
    png = tmp_path / "demo.png"
    assert main(["demo", "--learners", "pa1,ogd", "--json", "--plot", str(png)]) == 0
    rows = _json(capsys)
    assert [r["learner"] for r in rows] == ["pa1", "ogd"]
    assert all(r["test_accuracy"] > 0.84 and r["us_per_example"] > 0 for r in rows)
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_demo_write_data_materialises_the_bundled_files_and_never_overwrites(tmp_path, capsys):
    import lzma

    out = tmp_path / "data"
    assert main(["demo", "--write-data", str(out)]) == 0
    assert f"wrote {out / 'a9a'}" in capsys.readouterr().out
    for name, target in (("a9a.xz", "a9a"), ("a9a.t.xz", "a9a.t")):
        with lzma.open(bundled_path(name)) as f:
            assert (out / target).read_bytes() == f.read()
    (out / "a9a.t").write_text("mine\n")
    assert main(["demo", "--write-data", str(out)]) == 2
    assert "a9a exists" in capsys.readouterr().err
    assert (out / "a9a.t").read_text() == "mine\n"  # existing files are left as they were
    assert not list(out.glob("*.part"))


@pytest.mark.parametrize(
    "argv,message",
    [
        (["train", A9A, "-l", "nope"], "Unknown learner 'nope'"),
        (["train", A9A, "-l", "pa1", "-p", "C"], "-p expects KEY=VALUE"),
        (["train", A9A, "-l", "pa1", "-p", "gamma=1"], "Learner 'pa1' has no parameter 'gamma'"),
        (["train", A9A, "-l", "pa1", "-p", "variant=pa2"], "Parameter 'variant' is fixed"),
        (["train", A9A, "-l", "pa1", "-p", "C=-1"], "The 'C' parameter of PassiveAggressiveClassifier must be"),
        (["train", "/nonexistent.svm", "-l", "pa1"], "data file '/nonexistent.svm' does not exist"),
        (["train", A9A, "-l", "pa1", "--passes", "0"], "--passes must be >= 1"),
        (["predict", "/nonexistent.slm", A9A], "model file '/nonexistent.slm' does not exist"),
        # the operand '--' after '--' is a file name (argparse gave a single positional as [], a traceback)
        (["predict", "/nonexistent.slm", "--", "--"], "model file '/nonexistent.slm' does not exist"),
        (["predict", A9A, "--", "--"], "data file '--' does not exist"),
        (["predict", "--", A9A, "--"], "data file '--' does not exist"),
        (["predict", "--", "--", A9A], "model file '--' does not exist"),
    ],
)
def test_user_errors_exit_2_with_a_message(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamlearn: error:") and message in err


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_a_bad_parameter_value_is_refused_before_the_stream_is_read(command):
    """A -p value out of the learner's range was found at its first update: on a pipe, only once the first
    chunk had arrived (an open stream that is slow to fill waited for ever), and named as an error of the data
    ('<stdin>: ...'). It is refused at once, the pipe still open and unread."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlearn", command, "-", "-l", "pa1", "--n-features", "10", "-p", "C=-1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.wait(timeout=60)  # standard input stays open and empty: the run must not wait for rows
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
    err = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == 2
    assert err.decode() == (
        "streamlearn: error: The 'C' parameter of PassiveAggressiveClassifier must be a float in the range "
        "(0.0, inf). Got -1.0 instead.\n"
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", A9A, "-l", "pa1", "--chunk-size", "nan"], "argument --chunk-size: invalid int value: 'nan'"),
        (["train", A9A, "-l", "pa1", "--passes", "1e400"], "argument --passes: invalid int value: '1e400'"),
        (["predict", "m.slm", A9A, "--scores", "--proba"], "argument --proba: not allowed with argument --scores"),
        (["predict", "m.slm"], "the following arguments are required: DATA"),
        (["predict", "m.slm", A9A, "extra"], "unrecognized arguments: extra"),
        (["nosuch"], "argument COMMAND: invalid choice: 'nosuch'"),
        (["experiment", "demo", "--jobs", "0"], "argument --jobs: expected a positive integer, got '0'"),
    ],
)
def test_option_errors_are_one_line_too(argv, message, capsys):
    """argparse's own errors (a value of the wrong type, a missing argument, options that exclude each other)
    printed its usage block over several lines, then ``streamlearn train: error: ...``."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("streamlearn: error: ") and message in err, err
    assert "--help" in err  # where the usage is


def test_bad_data_file_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:1 2:1\n-1 3:x\n")
    assert main(["train", str(bad), "-l", "pa1"]) == 2
    err = capsys.readouterr().err
    assert "bad.svm" in err and "line 2" in err


def test_a_file_the_learner_refuses_as_a_whole_is_named(tmp_path, capsys):
    """A data file whose width a learner refuses (a full covariance above 4096 features) is an error naming the
    file and the learner's reason, not a chunk of a stream."""
    rng = np.random.default_rng(0)
    path = tmp_path / "wide.svm"
    rows = (" ".join(f"{j}:1" for j in sorted(rng.choice(6000, 5, replace=False) + 1)) for _ in range(20))
    path.write_text("".join(f"{2 * (i % 2) - 1} {r}\n" for i, r in enumerate(rows)))
    assert main(["train", str(path), "-l", "cw"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"streamlearn: error: {path}: ConfidenceWeightedClassifier(covariance='full') supports at ")
    assert err.count("\n") == 1


def test_entry_point_subprocess():
    res = subprocess.run(
        [sys.executable, "-m", "streamlearn", "--version"], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0 and res.stdout.startswith("streamlearn ")


def test_infinite_parameter_from_the_command_line(capsys):
    assert main(["train", A9A, "-l", "tg", "-p", "theta=inf", "--json"]) == 0
    assert _json(capsys)["params"] == {"theta": "inf"}


def _noise_file(path, n=600, seed=0):
    """Labels 80 % +1 that the features say nothing about: no learner beats always predicting +1."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.8, 1, -1)
    X = rng.normal(size=(n, 4))
    path.write_text(
        "".join(f"{t} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x)) + "\n" for x, t in zip(X, y))
    )
    return float(np.mean(y != 1))


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_warns_when_the_learner_does_worse_than_a_constant(command, tmp_path, capsys):
    data = tmp_path / "noise.svm"
    rate = _noise_file(data)
    assert main([command, str(data), "-l", "perceptron", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["best_constant_error_rate"] == pytest.approx(rate)
    assert out["online_error_rate"] > rate
    (line,) = captured.err.splitlines()
    assert line.startswith("streamlearn: warning: the online error rate on ") and str(data) in line
    assert f"({rate:.4f})" in line and "perceptron did worse than a constant" in line
    assert main([command, str(data), "-l", "perceptron", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    # a learner that beats the constant: a9a (24 % positives), no warning
    assert main([command, A9A, "-l", "pa1", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["online_error_rate"] < out["best_constant_error_rate"] and captured.err == ""


def test_plot_without_an_extension_is_a_png(tmp_path, capsys):
    png = tmp_path / "curve"
    assert main(["train", A9A, "-l", "pa1", "--plot", str(png), "--quiet"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve"]  # no temporary file left beside it


def test_plot_in_an_unknown_format_is_refused_before_training(tmp_path, capsys):
    assert main(["evaluate", A9A, "-l", "pa1", "--plot", str(tmp_path / "curve.svm"), "--json"]) == 2
    captured = capsys.readouterr()
    assert "--plot" in captured.err and "curve.svm" in captured.err and ".png" in captured.err
    assert captured.out == "" and list(tmp_path.iterdir()) == []


def test_holdout_and_seed_errors_name_the_option(tmp_path, capsys):
    data = tmp_path / "small.svm"
    data.write_text("".join(f"{1 if i % 2 else -1} 1:{i % 7} 2:{i % 3}\n" for i in range(30)))
    cases = [
        (["--holdout", "0.999"], "--holdout 0.999: every row of"),  # 30 rows: all held out, none to train on
        (["--holdout", "1.5"], "--holdout must be a fraction in (0, 1); got 1.5."),
        (["--holdout", "0.3", "--seed", "-1"], "--seed must be >= 0; got -1."),
    ]
    for extra, message in cases:
        assert main(["train", str(data), "-l", "pa1", "--json", *extra]) == 2, extra
        assert message in capsys.readouterr().err, extra


def test_demo_write_data_json_and_a_failed_write(tmp_path, capsys, monkeypatch):
    import shutil

    out = tmp_path / "data"
    assert main(["demo", "--write-data", str(out), "--json"]) == 0
    rows = _json(capsys)
    assert [r["file"] for r in rows] == [str(out / "a9a"), str(out / "a9a.t")] and rows[0]["bytes"] > 0

    def full_disk(src, dst, *args):
        dst.write(src.read(100))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shutil, "copyfileobj", full_disk)
    other = tmp_path / "other"
    assert main(["demo", "--write-data", str(other)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamlearn: error: ") and "No space left on device" in err and "--write-data" in err
    assert list(other.iterdir()) == []  # no half-written file, no .part left behind
    assert main(["demo", "--write-data", ""]) == 2
    assert "--write-data" in capsys.readouterr().err


def test_dash_as_an_output_is_standard_output_or_refused(tmp_path, capsys, monkeypatch):
    """'-' is standard input for DATA; as an output it never becomes a file named '-'."""
    monkeypatch.chdir(tmp_path)
    model = tmp_path / "m.slm"
    assert main(["train", A9A, "-l", "pa1", "-o", str(model), "--quiet"]) == 0
    for argv, what in [
        (["train", A9A, "-l", "pa1", "-o", "-", "--quiet"], "model file '-'"),
        (["evaluate", A9A, "-l", "pa1", "--plot", "-", "--quiet"], "plot '-'"),
        (["sketch", A9A, "--ell", "2", "-o", "-", "--quiet"], "sketch file '-'"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert what in err and "standard output" in err, argv
    capsys.readouterr()
    assert main(["predict", str(model), A9A_T, "-o", "-"]) == 0  # predictions: '-' is standard output
    assert capsys.readouterr().out.count("\n") == 16281
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.slm"]


@pytest.mark.parametrize(("name", "text", "kind"), [("d.vw", "1 |a x\n", "VW text"), ("d.csv", "y,a\n1,2\n", "CSV")])
def test_sketch_refuses_a_file_in_another_format_by_name(tmp_path, capsys, name, text, kind):
    """sketch reads LIBSVM: VW text or CSV (by the file's name) is refused naming the format, not a parse error
    on its first line; with several files (a Dask run) before any cluster starts."""
    data, other = tmp_path / name, tmp_path / f"other-{name}"
    data.write_text(text)
    other.write_text(text)
    out = tmp_path / "s.slm"
    for files, extra in (([data], []), ([data, other], ["--scheduler", "local:1"])):
        assert main(["sketch", *map(str, files), "--sketch", "fd", "--ell", "2", "-o", str(out), *extra]) == 2
        err = capsys.readouterr().err
        assert (
            err
            == f"streamlearn: error: sketch reads LIBSVM/svmlight data; {data} is {kind} (convert it to LIBSVM to sketch it).\n"
        )
        assert not out.exists()
