"""Experiment options out of range are one-line errors naming the option, before any data is read: never a
silently different run (``occfm --max-rows -1`` dropped the last row, ``--learners nope`` printed ``[]``)."""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn.cli.main import main


def _run(argv, capsys):
    """``(exit code, standard error)`` of the command line, argparse's own exit for a mistyped value included."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


OCCFM = [
    (["--max-rows", "0"], "--max-rows: expected a positive integer, got '0'"),
    (["--max-rows", "-1"], "--max-rows: expected a positive integer, got '-1'"),
    (["--occfm-rank", "0"], "--occfm-rank: expected a positive integer, got '0'"),
    (["--batch-fw-iters", "0"], "--batch-fw-iters: expected a positive integer, got '0'"),
    (["--budget", "-1"], "--budget must be >= 0 seconds (0: a full pass); got -1.0"),
    *[
        (["--batch-fw-delta", v], f"--batch-fw-delta must be a float in the range (0.0, inf); got {float(v)}.")
        for v in ("inf", "nan", "0", "-3")
    ],
    (["--learners", "fm,nope"], "--learners: unknown learner 'nope'; expected some of fm, river-fm"),
    (["--occfm-deltas", "x"], "--occfm-deltas expects comma-separated numbers; got 'x'"),
    (["--occfm-eta-abs", "0.1,y"], "--occfm-eta-abs expects comma-separated numbers; got '0.1,y'"),
    (["--occfm-steps", "foo"], "--occfm-steps: unknown step schedule 'foo'; expected invsqrt or fw"),
]
RFD_TABLE2 = [
    (["--splits", "0"], "--splits: expected a positive integer, got '0'"),  # was an UnboundLocalError traceback
    (["--seed", "-1"], "--seed must be >= 0; got -1"),
    (["--ells", "x"], "--ells expects comma-separated integers; got 'x'"),
    (["--ells", "0"], "--ells: every sketch size must be >= 1; got [0]"),
    (["--alphas", "x"], "--alphas expects comma-separated numbers; got 'x'"),
    (["--methods", "fd,nope"], "--methods: unknown method 'nope'; expected some of adagrad, full-on, fd"),
]


@pytest.mark.parametrize(
    "experiment,options,message", [("occfm", *case) for case in OCCFM] + [("rfd-table2", *case) for case in RFD_TABLE2]
)
def test_option_errors_come_before_the_data_are_read(experiment, options, message, tmp_path, capsys):
    # the data file does not exist: each error must come before the data are read
    code, err = _run(["experiment", experiment, "--data", str(tmp_path / "absent.svm"), "--json", *options], capsys)
    assert code == 2 and message in err and "absent.svm" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    "options,message",
    [
        (["--learners", "pa,nope"], "--learners: unknown learner 'nope'"),  # was a row of nulls per data set
        (["--learners", "pa,dcd-svm"], "--learners: dcd-svm is a batch learner; the zoo runs one-pass"),  # traceback
        (["--rescale", "-1"], "--rescale must be >= 0 (0: skip); got -1"),  # was 'max() arg is an empty sequence'
        (["--random-state", "-1"], "--random-state must be >= 0; got -1"),
    ],
)
def test_zoo_option_errors(options, message, capsys):
    code = main(["experiment", "zoo", "--quick", "--no-vw", "--no-ceiling", "--json", *options])
    captured = capsys.readouterr()
    assert code == 2 and message in captured.err and captured.out == ""


@pytest.mark.parametrize(
    "options,message",
    [
        (["--tolerance", "-1"], "--tolerance must be a number >= 0; got -1.0"),  # the checks' verdicts were wrong
        (["--tolerance", "nan"], "--tolerance must be a number >= 0; got nan"),
        (["--learners", ","], "--learners: no learner in ','"),  # printed []
        (["--n-features", "0"], "--n-features must be >= 1; got 0"),
    ],
)
def test_sparsity_option_errors(options, message, tmp_path, capsys):
    code = main(["experiment", "sparsity", "--data", str(tmp_path / "absent.svm"), "--json", *options])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "absent.svm" not in err


@pytest.mark.parametrize("name", ["rfd-figure1", "rfd-table2", "sparsity"])
def test_a_folder_as_data_is_named_as_a_directory(name, tmp_path, capsys):
    """rfd-figure1 said "--data 'DIR': no such file" of a folder that exists; the other experiments say what
    it is."""
    code, err = _run(["experiment", name, "--data", str(tmp_path), "--quiet"], capsys)
    assert code == 2 and err == f"streamlearn: error: {tmp_path}: Is a directory.\n"


@pytest.mark.parametrize(
    "labels, shown",
    [
        ([1, 2, 3, 1, 2, 3], "3 distinct labels (1, 2, 3)"),  # every label > 0 was +1: one class, silently
        ([0.5, -1.25, 2.0, 0.5, 3.0, -1.25], "4 distinct labels (-1.25, 0.5, 2, 3)"),
        ([-1, 0, -1, 0, -1, 0], "2 distinct labels (-1, 0)"),  # 0 and -1 both became -1
        ([1, 1, 1, 1, 1, 1], "1 distinct label (1)"),
    ],
)
def test_rfd_table2_refuses_labels_that_are_not_binary(labels, shown, tmp_path, capsys):
    data = tmp_path / "data.svm"
    data.write_text("".join(f"{y:g} 1:{i + 1} 2:1 3:{(i % 3) - 1}\n" for i, y in enumerate(labels)))
    argv = ["experiment", "rfd-table2", "--data", str(data), "--splits", "1", "--ells", "2", "--methods", "fd"]
    code, err = _run([*argv, "--alphas", "1", "--json"], capsys)
    assert code == 2 and "Traceback" not in err
    assert "rfd-table2 is a binary classification experiment (labels -1/+1 or 0/1" in err and shown in err


def test_rfd_table2_takes_0_1_labels(tmp_path, capsys):
    data = tmp_path / "data.svm"
    data.write_text("".join(f"{i % 2} 1:{i + 1} 2:1 3:{(i % 3) - 1}\n" for i in range(20)))
    argv = ["experiment", "rfd-table2", "--data", str(data), "--splits", "1", "--ells", "2", "--methods", "fd"]
    assert _run([*argv, "--alphas", "1", "--quiet"], capsys)[0] == 0


@pytest.mark.parametrize(
    "learners, what",
    [
        ("dcd-svm", "dcd-svm is a batch learner (no progressive validation)"),  # was a TypeError traceback
        ("pa1,ogd-regressor", "ogd-regressor is a regression learner"),  # its R^2 was shown as test_accuracy
    ],
)
def test_demo_refuses_learners_it_cannot_run_before_any_work(learners, what, capsys):
    code, err = _run(["demo", "--learners", learners, "--jobs", "1", "--json"], capsys)
    assert code == 2 and "Traceback" not in err
    assert err == (
        f"streamlearn: error: --learners: {what}; the demo runs one online pass of classifiers over a9a (binary "
        "labels): name online classifiers (see 'streamlearn learners').\n"
    )


def test_river_fm_reads_the_larger_label_as_positive():
    """``experiment occfm`` takes two labels among -1, 0, 1 as classification: river's FM learnt "label > 0",
    so labels -1/0 were all negative for it (its accuracy the share of one class). Its positive class is the
    larger label, as the learners' ``classes_[1]``: -1/0 gives what 0/1 gives."""
    pytest.importorskip("river")
    from streamlearn.experiments.occfm import _rows_to_dicts, _run_river

    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.random((120, 6)) * (rng.random((120, 6)) < 0.5))
    y01 = (X @ rng.standard_normal(6) > 0).astype(np.float64)
    dX, dXt = _rows_to_dicts(X[:80]), _rows_to_dicts(X[80:])
    cfg = {"n_factors": 2, "lr": 0.05}
    zero_one, _ = _run_river("classification", cfg, dX, y01[:80], dXt, y01[80:])
    minus_zero, _ = _run_river("classification", cfg, dX, y01[:80] - 1.0, dXt, y01[80:] - 1.0)
    for key in ("test", "online", "nan_predictions"):
        assert minus_zero[key] == zero_one[key], key
