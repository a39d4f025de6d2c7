"""The files an experiment writes besides --plot and --markdown (rfd-table2 --curves): checked before the run,
written aside and renamed, never over an input."""

import numpy as np
from sklearn.datasets import dump_svmlight_file

from streamlearn.cli.main import main


def _toy(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    path = tmp_path / "toy"  # no extension: a --curves name that matplotlib could write
    dump_svmlight_file(X, np.where(X[:, 0] > 0, 1, -1), str(path))
    return str(path)


def _table2(data, *options):
    return main(
        ["experiment", "rfd-table2", "--data", data, "--ells", "2", "--splits", "1", "--methods", "fd"]
        + ["--alphas", "1", "--json", *options]
    )


def test_rfd_table2_curves_are_checked_before_the_run(tmp_path, capsys):
    data = _toy(tmp_path)
    before = (tmp_path / "toy").read_bytes()
    for curves, message in [
        (str(tmp_path / "missing" / "c.png"), "does not exist"),
        (data, "is the input file"),
        (str(tmp_path / "c.svm"), "matplotlib cannot write"),
    ]:
        assert _table2(data, "--curves", curves) == 2, curves
        captured = capsys.readouterr()
        assert message in captured.err and captured.out == "", curves
    assert (tmp_path / "toy").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy"]


def test_rfd_table2_curves_without_an_extension_is_a_png(tmp_path, capsys):
    data = _toy(tmp_path)
    assert _table2(data, "--curves", str(tmp_path / "curves")) == 0
    assert (tmp_path / "curves").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curves", "toy"]
