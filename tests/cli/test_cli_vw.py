"""``--format vw`` on the command line: hashing options, the model's input spec, tags, weights, errors."""

import json

import numpy as np
import pytest

from streamlearn.cli.main import main
from streamlearn.datasets import load_vw
from streamlearn.persist import load


def test_train_predict_evaluate_with_the_models_spec(clicks, tmp_path, capsys):
    model = tmp_path / "m.slm"
    assert (
        main(
            [
                "train",
                str(clicks / "train.vw"),
                "--learner",
                "ftrl",
                "-b",
                "20",
                "-q",
                "ua",
                "--test",
                str(clicks / "test.vw.gz"),
                "-o",
                str(model),
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["n_train"] == 3000 and out["n_features"] == 1 << 20 and out["test_n"] == 500
    spec = load(model).input_spec_
    assert spec["format"] == "vw" and spec["bits"] == 20 and spec["interactions"] == ["ua"]
    assert spec["label_convention"] == "pm1"
    # predict: no hashing options given, the model's are used; features never seen in training are fine
    new = tmp_path / "new.vw"
    new.write_text(
        "1 'first |u age:30 country=ZZ brand_new_feature |a ad=never_seen\n|u age:50 'x\n-1 1 tagged|a ad=a1\n"
    )
    pred = tmp_path / "p.txt"
    assert main(["predict", str(model), str(new), "-o", str(pred), "--scores"]) == 0
    rows = pred.read_text().splitlines()
    assert len(rows) == 3 and rows[0].endswith(" first") and rows[2].endswith(" tagged")
    X, *_ = load_vw(new, bits=20, quadratic=["ua"])
    want = load(model).decision_function(X)
    np.testing.assert_allclose([float(r.split()[0]) for r in rows], want, rtol=1e-9)
    assert main(["predict", str(model), str(clicks / "test.vw.gz")]) == 0
    labels = capsys.readouterr().out.split()
    assert len(labels) == 500 and set(labels) <= {"-1", "1"}
    assert main(["evaluate", str(clicks / "train.vw"), "--learner", "ftrl", "-q", "ua", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_examples"] == 3000


def test_importance_weights_reach_training_and_every_average(tmp_path, capsys):
    rng = np.random.default_rng(0)
    plain, weighted = [], []
    for i in range(400):
        y = rng.choice([-1, 1])
        line = f"{y} |a f{rng.integers(20)} g{rng.integers(5)}:{rng.normal():.3f}"
        plain.append(line)
        weighted.append(line.replace(" |", " 1 |", 1))
        if i % 3 == 0:  # weight-0 rows change nothing: neither the model nor any average
            weighted.append(f"{-y} 0 |a f{rng.integers(20)} h{i}")
    (tmp_path / "p.vw").write_text("\n".join(plain) + "\n")
    (tmp_path / "w.vw").write_text("\n".join(weighted) + "\n")
    outs = []
    for name in ("p.vw", "w.vw"):
        assert (
            main(
                [
                    "train",
                    str(tmp_path / name),
                    "--learner",
                    "ftrl",
                    "--test",
                    str(tmp_path / name),
                    "--passes",
                    "2",
                    "--json",
                ]
            )
            == 0
        )
        outs.append(json.loads(capsys.readouterr().out))
    for key in ("online_error_rate", "average_loss", "test_accuracy", "test_average_loss"):
        assert outs[0][key] == pytest.approx(outs[1][key], rel=1e-9), key
    assert outs[1]["n_train"] > outs[0]["n_train"]


def test_malformed_vw_exits_2_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.vw"
    bad.write_text("1 |a x\n-1 |a y\n1 |a z:\n")
    model = tmp_path / "m.slm"
    assert main(["train", str(bad), "--learner", "ftrl", "-o", str(model)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3: feature 'z:' has ':' without a value" in err and err.count("\n") == 1
    assert not model.exists()
    (tmp_path / "nolabel.vw").write_text("1 |a x\n|a y\n")
    assert main(["train", str(tmp_path / "nolabel.vw"), "--learner", "ftrl"]) == 2
    assert "nolabel.vw:2: no label (training needs one; the line starts '|a y')" in capsys.readouterr().err
    (tmp_path / "z.vw").write_text("1 |a x\n0 |a y\n")
    assert main(["train", str(tmp_path / "z.vw"), "--learner", "ftrl"]) == 2
    err = capsys.readouterr().err
    assert "z.vw:2: bad label '0'" in err and "use --labels 01" in err  # the command line's option
    assert main(["train", str(tmp_path / "z.vw"), "--learner", "ftrl", "--labels", "01", "--quiet"]) == 0


def test_crossed_features_that_overflow_exit_2_with_file_and_line(tmp_path, capsys):
    big = tmp_path / "big.vw"
    big.write_text("1 |a x:2 |b z:3\n-1 |a x:1e200 |b z:1e200\n")
    assert main(["train", str(big), "--learner", "pa", "-q", "ab"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"streamlearn: error: {big}:2: hashed column ")
    assert " is inf: the product of crossed features (quadratic/cubic) or the sum of the values hashed" in err
    assert err.count("\n") == 1
    big.write_text("1 |a x:2 |b z:3 |c w:4\n-1 |a x:1e110 |b z:1e110 |c w:1e110\n")
    assert main(["train", str(big), "--learner", "pa", "--cubic", "abc"]) == 2
    assert "product of crossed features" in capsys.readouterr().err.split(f"{big}:2: hashed column ")[1]


def test_the_labels_hint_is_given_only_where_labels_can_be_set(tmp_path, capsys):
    """A VW label outside the binary convention: the data of a new model gets the ``--labels`` that reads it
    (train and evaluate); a test file (read in the training data's convention), a continued or frozen model (its
    convention is fixed) and predict (no --labels option) get the reader's error alone, never advice that the
    command refuses."""
    good, zero = tmp_path / "good.vw", tmp_path / "z.vw"
    good.write_text("1 |a x\n-1 |a y\n")
    zero.write_text("1 |a x\n0 |a y\n")
    model = str(tmp_path / "m.slm")
    assert main(["train", str(good), "--learner", "ftrl", "-o", model, "--quiet"]) == 0
    reason = "z.vw:2: bad label '0': expected -1 or 1 (binary labels: the pm1 label convention)"
    for argv, hint in (
        (["train", str(zero), "--learner", "ftrl"], True),
        (["evaluate", str(zero), "--learner", "ftrl"], True),
        (["train", str(good), "--learner", "ftrl", "--test", str(zero)], False),
        (["train", str(zero), "-i", model], False),
        (["evaluate", str(zero), "-i", model], False),
        (["predict", model, str(zero)], False),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and reason in err, (argv, err)
        assert ("; for 0/1 labels use --labels 01." in err) is hint, (argv, err)


def test_hashing_options_are_refused_for_libsvm(tmp_path, capsys):
    from streamlearn.datasets import bundled_path

    assert main(["train", str(bundled_path("a9a.xz")), "--learner", "pa", "-q", "ab"]) == 2
    assert "-q applies to hashed formats" in capsys.readouterr().err
    assert main(["train", str(bundled_path("a9a.xz")), "--learner", "pa", "-q", "ab", "-b", "10"]) == 2
    assert "apply to hashed formats" in capsys.readouterr().err


def test_empty_data_or_test_file_is_an_error_naming_it(tmp_path, capsys):
    """A training, evaluation or test file without examples stops the run with its name: a train run never
    ends with exit 0 and no test score because --test named an empty file."""
    data = tmp_path / "d.vw"
    data.write_text("1 |a x\n-1 |a y\n")
    for text in ("", "\n  \n\r\n"):
        empty = tmp_path / "empty.vw"
        empty.write_text(text)
        model = tmp_path / "m.slm"
        assert main(["train", str(data), "--learner", "ftrl", "--test", str(empty), "-o", str(model)]) == 2
        err = capsys.readouterr().err
        assert err == f"streamlearn: error: {empty}: no examples: the test file has no data lines.\n"
        assert not model.exists()
        assert main(["train", str(empty), "--learner", "ftrl"]) == 2
        assert (
            capsys.readouterr().err == f"streamlearn: error: {empty}: no examples: the data file has no data lines.\n"
        )
        assert main(["evaluate", str(empty), "--learner", "ftrl"]) == 2
        assert (
            capsys.readouterr().err == f"streamlearn: error: {empty}: no examples: the data file has no data lines.\n"
        )
    assert main(["train", str(data), "--learner", "ftrl", "-o", str(model), "--quiet"]) == 0
    assert main(["train", "-i", str(model), str(data), "--test", str(empty)]) == 2
    assert capsys.readouterr().err == f"streamlearn: error: {empty}: no examples: the test file has no data lines.\n"
    assert main(["train", "-i", str(model), str(empty)]) == 2
    assert capsys.readouterr().err == f"streamlearn: error: {empty}: no examples: the data file has no data lines.\n"


def test_multiclass_test_labels_outside_the_model_classes_are_an_error(tmp_path, capsys):
    data = tmp_path / "d.vw"
    data.write_text("1 |a x\n2 |a y\n3 |a z\n")
    test = tmp_path / "t.vw"
    test.write_text("1 |a x\n\n4 |a y\n")
    assert main(["train", str(data), "-l", "ftrl", "--labels", "multiclass", "--test", str(test)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"streamlearn: error: {test}:3: label 4 is not one of the model's classes {{1, 2, 3}}")
    assert err.count("\n") == 1


def test_data_in_another_format_than_the_models_is_an_error(tmp_path, capsys):
    """A VW model (or a VW run's --test) given a LIBSVM or CSV file, by its name or its first lines: an error
    naming it, not one featureless prediction per line."""
    data = tmp_path / "d.vw"
    data.write_text("1 |a x\n-1 |a y\n")
    model = tmp_path / "m.slm"
    assert main(["train", str(data), "-l", "ftrl", "-o", str(model), "--quiet"]) == 0
    svm, svm_txt, csv_txt, vw_txt = (tmp_path / n for n in ("d.svm", "s.txt", "c.txt", "v.txt"))
    svm.write_text("1 1:1\n-1 2:1\n")
    svm_txt.write_text("# LIBSVM\n1 1:1\n-1 2:1\n")
    csv_txt.write_text("y,a\n1,2\n")
    vw_txt.write_text("1 |a x\n-1 |a y\n")
    for path, what in (
        (svm, "libsvm by its name"),
        (svm_txt, "libsvm by its first lines"),
        (csv_txt, "csv by its first lines"),
    ):
        out = tmp_path / "p.txt"
        assert main(["predict", str(model), str(path), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"streamlearn: error: the model in {model} reads vw input (input_spec_), and {path} is {what}; "
            "give DATA in the model's format.\n"
        )
        assert not out.exists()
        assert main(["train", str(data), "-l", "ftrl", "--test", str(path)]) == 2
        err = capsys.readouterr().err
        assert (
            err
            == f"streamlearn: error: DATA is read as vw, and the test file {path} is {what}; give TEST in DATA's format.\n"
        )
        assert main(["train", "-i", str(model), str(data), "--test", str(path)]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"streamlearn: error: the model in {model} reads vw input (input_spec_), and the test file {path} is "
            f"{what}; give TEST in the model's format.\n"
        )
    assert main(["predict", str(model), str(vw_txt)]) == 0
    assert capsys.readouterr().out.count("\n") == 2
    assert main(["train", str(data), "-l", "ftrl", "--test", str(vw_txt), "--quiet"]) == 0


_TWO_EXAMPLES = {"vw": "1 |a x\n-1 |a y\n", "libsvm": "1 1:1\n-1 2:1\n", "csv": "y,a\n1,2\n-1,0\n"}


def _files_in_other_formats(folder, fmt):
    """``(path, what)`` of two files in each format but ``fmt`` written in ``folder``: ``t.vw`` (``t.svm``,
    ``t.csv``), whose name says its format, and ``vw.txt`` (...), whose first lines do; ``what`` is how the
    error names it ("vw by its name")."""
    files = []
    for other, text in _TWO_EXAMPLES.items():
        if other != fmt:
            for path, how in (
                (folder / f"t.{other.replace('libsvm', 'svm')}", "name"),
                (folder / f"{other}.txt", "first lines"),
            ):
                path.write_text(text)
                files.append((path, f"{other} by its {how}"))
    return files


def test_data_in_another_format_than_a_libsvm_models_is_an_error(tmp_path, capsys):
    """A LIBSVM model given VW text or CSV to predict, score or learn from, by its name or its first lines: the
    error names the format (it was a malformed feature, or a label that is not a number, on line 1)."""
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n")
    model = tmp_path / "m.slm"
    assert main(["train", str(data), "-l", "ftrl", "-o", str(model), "--quiet"]) == 0
    reads = f"the model in {model} reads libsvm input (input_spec_)"
    for path, what in _files_in_other_formats(tmp_path, "libsvm"):
        out = tmp_path / "p.txt"
        assert main(["predict", str(model), str(path), "-o", str(out)]) == 2
        assert (
            capsys.readouterr().err
            == f"streamlearn: error: {reads}, and {path} is {what}; give DATA in the model's format.\n"
        )
        assert not out.exists()
        for argv in (["evaluate", "-i", str(model), str(path)], ["train", "-i", str(model), str(path)]):
            assert main(argv) == 2
            assert capsys.readouterr().err == (
                f"streamlearn: error: {reads}, and {path} is {what}; give DATA in the model's format (or --format).\n"
            )
    assert main(["evaluate", "-i", str(model), str(tmp_path / "t.vw"), "--format", "vw"]) == 2
    assert capsys.readouterr().err == (
        f"streamlearn: error: {reads}, and DATA is read as vw (--format); give DATA in the model's format.\n"
    )
    commented = tmp_path / "d.t"  # LIBSVM by its first lines, a "|" in a comment notwithstanding
    commented.write_text("1 1:1 # from a|b\n-1 2:1\n")
    assert main(["predict", str(model), str(commented)]) == 0
    assert main(["evaluate", "-i", str(model), str(commented), "--quiet"]) == 0
    assert capsys.readouterr().out.count("\n") == 2


def test_a_vw_or_csv_model_scores_and_learns_from_files_whose_name_says_no_format(tmp_path, capsys):
    """``data.txt`` holding the model's VW text or CSV: read as the model reads (its first lines say so), as
    predict does; it was refused as 'libsvm by its name'."""
    _files_in_other_formats(tmp_path, "libsvm")
    vw, vw_txt, csv, csv_txt = (tmp_path / n for n in ("t.vw", "vw.txt", "t.csv", "csv.txt"))
    for data, txt, label in ((vw, vw_txt, []), (csv, csv_txt, ["--label", "y"])):
        model = tmp_path / "m.slm"
        assert main(["train", str(data), "-l", "ftrl", *label, "-o", str(model), "--quiet"]) == 0
        assert main(["evaluate", "-i", str(model), str(txt), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["n"] == 2
        assert main(["train", "-i", str(model), str(txt), "--quiet", "-o", str(model)]) == 0, capsys.readouterr().err
        assert main(["predict", str(model), str(txt)]) == 0
        assert capsys.readouterr().out.count("\n") == 2


def test_a_test_file_in_another_format_than_libsvm_data_is_named_as_such(tmp_path, capsys):
    """LIBSVM DATA with a VW or CSV --test (by its name or its first lines): the same error as VW DATA with a
    LIBSVM --test, not a malformed feature on the test file's first line."""
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n")
    for path, what in _files_in_other_formats(tmp_path, "libsvm"):
        for learner in ("ftrl", "dcd-svm"):  # online and batch learners
            model = tmp_path / "m.slm"
            assert main(["train", str(data), "-l", learner, "--test", str(path), "-o", str(model)]) == 2
            assert capsys.readouterr().err == (
                f"streamlearn: error: DATA is read as libsvm, and the test file {path} is {what}; give TEST in "
                "DATA's format.\n"
            )
            assert not model.exists()
    assert main(["train", str(data), "-l", "ftrl", "--test", str(data), "--quiet"]) == 0
    vw, csv = tmp_path / "t.vw", tmp_path / "t.csv"
    for data, path, fmt, what in ((vw, csv, "vw", "csv by its name"), (csv, vw, "csv", "vw by its name")):
        assert main(["train", str(data), "-l", "ftrl", "--label", "y", "--test", str(path)]) == 2
        assert capsys.readouterr().err == (
            f"streamlearn: error: DATA is read as {fmt}, and the test file {path} is {what}; give TEST in DATA's "
            "format.\n"
        )


def test_data_or_test_file_whose_weights_are_all_zero_is_an_error_naming_it(tmp_path, capsys):
    """Importance weights all 0: nothing to learn and no weighted average; it was 'diverged: average loss nan'
    for the data and a run without test score (exit 0) for --test."""
    data = tmp_path / "d.vw"
    data.write_text("1 |a x\n-1 |a y\n")
    zero = tmp_path / "zero.vw"
    zero.write_text("1 0 |a x\n-1 0 |a y\n")
    assert main(["train", str(data), "-l", "ftrl", "--test", str(zero)]) == 2
    assert capsys.readouterr().err == (
        f"streamlearn: error: {zero}: every example has importance weight 0; the test file needs a positive weight.\n"
    )
    for command in ("train", "evaluate"):
        assert main([command, str(zero), "-l", "ftrl"]) == 2
        assert capsys.readouterr().err == (
            f"streamlearn: error: {zero}: every example has importance weight 0; the data file needs a positive "
            "weight.\n"
        )


@pytest.mark.parametrize("learner", ["ftrl", "ogd-regressor"])
def test_averages_over_weight_zero_are_na_in_the_table_and_null_in_json(tmp_path, capsys, learner):
    """A checkpoint whose examples so far, or since the previous row, all have weight 0 has no average: the
    table says n.a. (as Vowpal Wabbit does), --json null; the table printed 'nan'."""
    data = tmp_path / "d.vw"
    data.write_text("1 0 |a x\n-1 |a y\n1 0 |a x\n-1 0 |a y\n1 0 |a z\n")
    assert main(["evaluate", str(data), "-l", learner]) == 0
    table = capsys.readouterr().out
    assert "nan" not in table.lower()
    rows = [line.split() for line in table.splitlines()[2:6]]
    assert [r[:4] for r in rows[0:1]] == [["n.a."] * 4] and rows[2][1] == rows[2][3] == "n.a." and len(rows) == 4
    assert all(float(r[0]) >= 0 and float(r[2]) >= 0 for r in rows[1:])
    assert main(["evaluate", str(data), "-l", learner, "--json"]) == 0
    checkpoints = json.loads(capsys.readouterr().out)["checkpoints"]
    assert checkpoints[0]["average_loss"] is None and checkpoints[2]["since_last_loss"] is None
    assert checkpoints[1]["average_loss"] == checkpoints[3]["average_loss"] > 0


def test_holdout_whose_held_or_kept_rows_all_have_weight_zero_names_the_option(tmp_path, capsys):
    """--holdout over a file whose rows mostly have weight 0: held-out rows all of weight 0 were reported as 'no
    row of DATA was held out'; training rows all of weight 0 as the library's 'sample_weight: all 31 examples of
    the stream...'."""
    data = tmp_path / "few.vw"
    data.write_text("1 |u a\n-1 |u b\n" + "1 0 |u a\n-1 0 |u b\n" * 20)
    where = f"streamlearn: error: --holdout 0.3: every row of {data}"
    for seed, message in (
        (1, f"{where} held out has importance weight 0, none can be scored; hold out a larger fraction.\n"),
        (2, f"{where} left to train on has importance weight 0; hold out a smaller fraction.\n"),
    ):
        assert main(["train", str(data), "-l", "ftrl", "--holdout", "0.3", "--seed", str(seed)]) == 2
        assert capsys.readouterr().err == message
    assert main(["train", str(data), "-l", "ftrl", "--holdout", "0.3", "--seed", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["test_n"] == 10


def test_out_of_memory_says_what_was_asked_and_names_the_bits_option(tmp_path, capsys, monkeypatch):
    """``train clicks.vw -b 31``: 32 GiB of weights; the message advised --chunk-size or --n-features, which a
    hashed format does not take, and did not say how much had been asked."""
    from streamlearn.linear_model import FTRLProximalClassifier

    def refused(self, n_features, n_outputs, X):
        raise MemoryError(f"Unable to allocate 32.0 GiB for an array with shape ({n_features + 1}, 1, 2)")

    monkeypatch.setattr(FTRLProximalClassifier, "_allocate", refused)
    data = tmp_path / "d.vw"
    data.write_text("1 |a x\n-1 |a y\n")
    assert main(["train", str(data), "-l", "ftrl", "-b", "31", "--quiet"]) == 2
    assert capsys.readouterr().err == (
        "streamlearn: error: out of memory (Unable to allocate 32.0 GiB for an array with shape (2147483649, 1, "
        "2)); use a smaller --chunk-size, --n-features, or -b for hashed formats.\n"
    )
