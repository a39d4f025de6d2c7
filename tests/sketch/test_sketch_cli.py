"""``streamlearn sketch`` and ``streamlearn experiment rfd-figure1``, called in-process."""

import json

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from streamlearn import load
from streamlearn.cli.main import main
from streamlearn.datasets import bundled_path

A9A = str(bundled_path("a9a.xz"))
KEYS = {
    "sketch",
    "ell",
    "n_rows",
    "n_features",
    "relative_spectral_error",
    "seconds",
    "rows_per_second",
    "relative_frobenius_error",
}


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def test_sketch_json_contract_and_saved_sketch(tmp_path, capsys):
    out_path = tmp_path / "rfd.slm"
    assert main(["sketch", A9A, "--sketch", "rfd", "--ell", "5", "-p", "alpha0=0", "-o", str(out_path), "--json"]) == 0
    out = _json(capsys)
    assert set(out) >= KEYS
    assert out["n_rows"] == 32561 and out["n_features"] == 123 and out["ell"] == 5
    assert 0 < out["relative_spectral_error"] < 0.2 and out["rows_per_second"] > 0
    sketch = load(out_path)
    assert sketch.n_seen_ == 32561 and sketch.alpha_ == pytest.approx(out["alpha"])


def test_sketch_human_table_and_params(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 12))
    path = tmp_path / "small.svm"
    dump_svmlight_file(X, np.ones(60), str(path))  # zero-based indices, as scikit-learn writes them
    assert (
        main(
            [
                "sketch",
                str(path),
                "--zero-based",
                "true",
                "--sketch",
                "rp",
                "--ell",
                "4",
                "-p",
                "kind=sparse-sign",
                "-p",
                "random_state=3",
                "--blas-threads",
                "0",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "relative_spectral_error" in text and "RandomProjectionSketch" in text


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--sketch", "fd", "--ell", "1"], "The 'ell' parameter of FrequentDirections must be an int in the range"),
        (["--sketch", "fd", "--ell", "200"], "ell=200 must be smaller than the number of features"),
        (["--sketch", "fd", "-p", "beta=0.5"], "sketch 'fd' has no parameter 'beta'"),
        (["--sketch", "pfd", "-p", "beta=2"], "'beta' parameter of ParameterizedFD must be a float"),
        (["--blas-threads", "-1"], "--blas-threads must be >= 0"),
    ],
)
def test_sketch_errors(argv, message, capsys):
    assert main(["sketch", A9A] + argv) == 2
    assert message in capsys.readouterr().err


def test_sketch_missing_file(tmp_path, capsys):
    assert main(["sketch", str(tmp_path / "nope.svm")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_rfd_figure1_experiment_on_a9a(tmp_path, capsys):
    png, md = tmp_path / "fig.png", tmp_path / "fig.md"
    assert (
        main(
            [
                "experiment",
                "rfd-figure1",
                "--data",
                "a9a",
                "--ells",
                "5,10",
                "--betas",
                "0.2",
                "--markdown",
                str(md),
                "--plot",
                str(png),
                "--json",
            ]
        )
        == 0
    )
    rows = _json(capsys)
    assert {r["method"] for r in rows} == {"FD", "CFD", "PFD-0.2", "RFD"} and len(rows) == 8
    for r in rows:
        if r["method"] == "RFD":
            assert r["ratio_to_fd"] <= 0.6
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert "a9a: " in md.read_text() and "(met)" in md.read_text()


def test_sketch_help_names_sketch_parameters(capsys):
    with pytest.raises(SystemExit):
        main(["sketch", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "sketch parameter (repeatable)" in text and "C=0.01" not in text


def _small_svm(path, n=40, d=8):
    X = np.random.default_rng(0).standard_normal((n, d))
    dump_svmlight_file(X, np.ones(n), str(path), zero_based=False)
    return str(path)


def test_rfd_figure1_markdown_never_overwrites_its_data(tmp_path, capsys):
    data = _small_svm(tmp_path / "data.svm")
    before = (tmp_path / "data.svm").read_bytes()
    argv = ["experiment", "rfd-figure1", "--data", data, "--ells", "3", "--betas", "0.5", "--json"]
    assert main(argv + ["--markdown", data]) == 2
    captured = capsys.readouterr()
    assert "is the input file" in captured.err and captured.out == ""  # refused before the run
    assert (tmp_path / "data.svm").read_bytes() == before


def test_rfd_figure1_outputs_are_checked_before_the_run(tmp_path, capsys):
    data = _small_svm(tmp_path / "data.svm")
    argv = ["experiment", "rfd-figure1", "--data", data, "--ells", "3", "--betas", "0.5", "--json"]
    assert main(argv + ["--markdown", str(tmp_path / "missing" / "fig.md")]) == 2
    captured = capsys.readouterr()
    assert "folder" in captured.err and "does not exist" in captured.err and captured.out == ""
    assert main(argv + ["--plot", str(tmp_path / "fig.svm")]) == 2
    captured = capsys.readouterr()
    assert "--plot" in captured.err and ".png" in captured.err and captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.svm"]


def test_rfd_figure1_markdown_is_written_aside_then_renamed(tmp_path, capsys, monkeypatch):
    import os

    data = _small_svm(tmp_path / "data.svm")
    md = tmp_path / "fig.md"
    md.write_text("previous report\n")

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    argv = ["experiment", "rfd-figure1", "--data", data, "--ells", "3", "--betas", "0.5", "--quiet"]
    assert main(argv + ["--markdown", str(md)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert md.read_text() == "previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.svm", "fig.md"]


def test_sketch_refuses_an_infinite_parameter(tmp_path, capsys):
    """c = inf in Oja's step min(c / t, 1) is outside the range (0.0, inf) the message states: refused, one line."""
    data = _small_svm(tmp_path / "data.svm")
    assert main(["sketch", data, "-s", "oja", "--ell", "2", "-p", "learning_rate=inf", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "streamlearn: error: The 'learning_rate' parameter of OjaSketch must be a float in the range (0.0, inf). "
        "Got inf instead."
    )


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--data", "absent.svm"], "--data 'absent.svm': no such file"),
        (["--betas", "0"], "--betas: every beta must be in (0, 1]; got [0.0]"),
    ],
)
def test_rfd_figure1_checks_every_option_before_sketching(extra, message, tmp_path, capsys, monkeypatch):
    import streamlearn.evaluation.spectral as spectral

    def computed(*args, **kwargs):
        raise AssertionError("a sketch was scored before the options were checked")

    monkeypatch.setattr(spectral, "covariance_errors", computed)
    data = _small_svm(tmp_path / "data.svm")
    assert main(["experiment", "rfd-figure1", "--data", data, "--ells", "3", "--json", *extra]) == 2
    assert message in capsys.readouterr().err


_ZERO_FILES = {
    "explicit zeros": "1 1:0 3:0\n-1 2:0\n1 6:0\n",
    "rows without features": "1\n-1 6:0\n1\n",
}


@pytest.mark.parametrize("sketch", ["fd", "pfd", "cfd", "rfd", "rp", "oja"])
@pytest.mark.parametrize("kind", sorted(_ZERO_FILES))
def test_sketch_of_zero_rows_reports_zero_relative_errors(kind, sketch, tmp_path, capsys):
    """Every value zero: A^T A = 0 and the sketch is zero too, exact: relative errors 0, not NaN (JSON null)."""
    path = tmp_path / "zeros.svm"
    path.write_text(_ZERO_FILES[kind])
    assert main(["sketch", str(path), "-s", sketch, "--ell", "2", "--n-features", "6", "--json"]) == 0
    out = _json(capsys)
    assert (out["relative_spectral_error"], out["relative_frobenius_error"], out["spectral_error"]) == (0.0, 0.0, 0.0)
    assert main(["sketch", str(path), "-s", sketch, "--ell", "2", "--n-features", "6"]) == 0
    assert "nan" not in capsys.readouterr().out


def test_sketch_of_zero_rows_with_a_regularised_rfd_is_refused_in_one_line(tmp_path, capsys):
    """RFD with alpha0 > 0 approximates the zero A^T A by alpha0 I: the relative errors are undefined."""
    path = tmp_path / "zeros.svm"
    path.write_text(_ZERO_FILES["explicit zeros"])
    argv = ["sketch", str(path), "-s", "rfd", "--ell", "2", "-p", "alpha0=0.5"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"streamlearn: error: the relative errors are undefined: every value of {path} is zero (||A^T A||_2 = 0) "
        "but the rfd sketch's approximation is not (alpha = 0.5); expected DATA"
    )
    assert main(argv + ["--no-error", "--json"]) == 0
    assert _json(capsys)["alpha"] == 0.5


@pytest.mark.parametrize("text,message", [("", "no data lines: the file is empty"), ("# c\n\n", "no data lines")])
def test_sketch_of_a_file_without_rows_is_refused_in_one_line(text, message, tmp_path, capsys):
    path = tmp_path / "empty.svm"
    path.write_text(text)
    for extra in ([], ["--no-error", "--n-features", "6"]):
        assert main(["sketch", str(path), "-s", "fd", "--ell", "2", *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err


def test_sketch_of_a_single_row(tmp_path, capsys):
    path = tmp_path / "one.svm"
    path.write_text("1 2:3 4:4\n")
    assert main(["sketch", str(path), "-s", "fd", "--ell", "2", "--n-features", "6", "--json"]) == 0
    out = _json(capsys)
    assert out["n_rows"] == 1 and out["ata_norm"] == pytest.approx(25.0)
    assert out["relative_spectral_error"] == pytest.approx(0.0, abs=1e-12)  # ell = 2 > rank 1: exact


def test_rfd_figure1_on_zero_rows_reports_exact_sketches(tmp_path, capsys):
    """Every sketch exact on a zero A: errors 0 and RFD / FD 1.0 (was 0 / 0)."""
    path = tmp_path / "zeros.svm"
    path.write_text("1 8:0\n" * 10)
    argv = ["experiment", "rfd-figure1", "--data", str(path), "--ells", "3", "--betas", "0.5", "--json"]
    assert main(argv) == 0
    rows = _json(capsys)
    assert {r["method"]: (r["relative_spectral_error"], r["ratio_to_fd"]) for r in rows} == {
        m: (0.0, 1.0) for m in ("FD", "CFD", "PFD-0.5", "RFD")
    }


def test_rfd_figure1_ratio_when_fd_is_exact():
    from streamlearn.experiments.rfd_figure1 import _ratio

    assert (_ratio(0.2, 0.4), _ratio(0.0, 0.0), _ratio(1e-3, 0.0)) == (0.5, 1.0, float("inf"))
