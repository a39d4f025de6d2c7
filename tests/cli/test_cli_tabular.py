"""The command line on CSV and Parquet: train -> predict by column name, errors with nothing half-written."""

import json

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from streamlearn.cli.main import main
from streamlearn.datasets import write_click_log


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("clicks")
    write_click_log(d / "clicks.csv", 6000, seed=0)
    write_click_log(d / "more.csv", 1500, seed=9)
    df = pd.read_csv(d / "more.csv")
    # another column order, no label column, users never seen in training, an extra column
    new = df[list(reversed(df.columns))].drop(columns=["clicked"])
    new["user"] = "new-" + new["user"]
    new["note"] = "x"
    new.to_csv(d / "new.csv", index=False)
    df.drop(columns=["clicked"]).to_csv(d / "same_order.csv", index=False)
    return d


def test_train_csv_predict_new_csv_by_column_name(logs, tmp_path, capsys):
    model, preds, scores = tmp_path / "m.slm", tmp_path / "p.txt", tmp_path / "s.txt"
    assert (
        main(["train", str(logs / "clicks.csv"), "--label", "clicked", "--learner", "ftrl", "-o", str(model), "--json"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["n_train"] == 6000 and out["n_features"] == 2**18 and out["online_error_rate"] < 0.3
    assert main(["predict", str(model), str(logs / "new.csv"), "-o", str(preds)]) == 0
    labels = preds.read_text().split()
    assert len(labels) == 1500 and set(labels) <= {"0", "1"}
    # the same rows in the training order (and with the known users) score the same except for the users
    assert main(["predict", str(model), str(logs / "new.csv"), "--scores", "-o", str(scores)]) == 0
    s_new = np.loadtxt(scores)
    assert main(["predict", str(model), str(logs / "same_order.csv"), "--scores", "-o", str(scores)]) == 0
    s_same = np.loadtxt(scores)
    assert s_new.shape == s_same.shape == (1500,)
    from streamlearn import load
    from streamlearn.datasets import iter_csv

    clf = load(model)
    assert clf.input_spec_["label_column"] == "clicked" and clf.input_spec_["format"] == "csv"
    reader = iter_csv(logs / "new.csv", spec=clf.input_spec_, label_required=False, chunk_size=10_000)
    X = next(iter(reader))[0]
    assert np.allclose(s_new, clf.decision_function(X))
    renamed = pd.read_csv(logs / "new.csv")
    renamed["user"] = renamed["user"].str.replace("new-", "", regex=False)
    renamed.to_csv(tmp_path / "known.csv", index=False)
    assert main(["predict", str(model), str(tmp_path / "known.csv"), "--scores", "-o", str(scores)]) == 0
    assert np.allclose(np.loadtxt(scores), s_same)  # column order does not matter


def test_predict_rows_whose_label_is_left_empty(logs, tmp_path, capsys):
    """Rows to score often come in the training layout with the label cell empty: predict scores them."""
    model, preds, ref = tmp_path / "m.slm", tmp_path / "p.txt", tmp_path / "r.txt"
    assert (
        main(["train", str(logs / "clicks.csv"), "--label", "clicked", "-l", "ftrl", "-o", str(model), "--quiet"]) == 0
    )
    assert main(["predict", str(model), str(logs / "same_order.csv"), "--scores", "-o", str(ref)]) == 0
    df = pd.read_csv(logs / "more.csv").astype({"clicked": object})
    df.loc[100:, "clicked"] = None
    df.to_csv(tmp_path / "part.csv", index=False)
    assert main(["predict", str(model), str(tmp_path / "part.csv"), "--scores", "-o", str(preds)]) == 0
    assert preds.read_text() == ref.read_text()
    assert main(["evaluate", str(tmp_path / "part.csv"), "--label", "clicked", "-l", "ftrl"]) == 2
    assert "part.csv, line 102, column 'clicked': the label is missing." in capsys.readouterr().err


def test_parquet_by_extension_with_test_file_and_options(logs, tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    train, test = tmp_path / "c.parquet", tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(pd.read_csv(logs / "clicks.csv")), train)
    pq.write_table(pa.Table.from_pandas(pd.read_csv(logs / "more.csv")), test)
    model = tmp_path / "m.slm"
    assert (
        main(
            [
                "train",
                str(train),
                "--label",
                "clicked",
                "-l",
                "ftrl",
                "--test",
                str(test),
                "--bits",
                "20",
                "--ignore-column",
                "user",
                "--categorical",
                "position",
                "--namespace",
                "u=age,sessions",
                "-o",
                str(model),
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["n_features"] == 2**20 and out["test_n"] == 1500 and out["test_accuracy"] > 0.5
    from streamlearn import load

    spec = load(model).input_spec_
    assert spec["ignore_columns"] == ["user"] and spec["options"]["columns"]["position"] == "text"
    assert spec["options"]["namespaces"] == {"age": "u", "sessions": "u"}
    # a Parquet-trained model predicts a CSV file too (columns by name)
    assert main(["predict", str(model), str(logs / "new.csv"), "-o", str(tmp_path / "p.txt")]) == 0
    assert len((tmp_path / "p.txt").read_text().split()) == 1500


def test_errors_are_one_line_and_write_nothing(logs, tmp_path, capsys):
    model = tmp_path / "m.slm"
    assert main(["train", str(logs / "clicks.csv"), "--label", "click", "-l", "ftrl", "-o", str(model)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"streamlearn: error: {logs / 'clicks.csv'}, line 1: no label column 'click'")
    assert len(err.splitlines()) == 1 and not model.exists()
    assert main(["train", str(logs / "clicks.csv"), "-l", "ftrl"]) == 2
    assert "needs --label COL" in capsys.readouterr().err
    # a ragged row while predicting: exit 2, OUT left as it was
    assert (
        main(["train", str(logs / "clicks.csv"), "--label", "clicked", "-l", "ftrl", "-o", str(model), "--quiet"]) == 0
    )
    bad = tmp_path / "bad.csv"
    lines = (logs / "same_order.csv").read_text().splitlines()
    bad.write_text("\n".join(lines[:700] + ["1,2,3"] + lines[700:]) + "\n")
    out = tmp_path / "p.txt"
    out.write_text("previous\n")
    assert main(["predict", str(model), str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"streamlearn: error: {bad}, line 701: expected 10 columns (as in the header), got 3."
    assert out.read_text() == "previous\n" and len(list(tmp_path.glob("p.txt.tmp*"))) == 0
    # table options on a LIBSVM file
    svm = tmp_path / "d.svm"
    svm.write_text("1 1:1\n-1 2:1\n")
    assert main(["train", str(svm), "-l", "ftrl", "--label", "y"]) == 2
    assert "--label applies to CSV and Parquet files" in capsys.readouterr().err
    assert main(["train", str(svm), "-l", "ftrl", "--label", "y", "--weight", "w"]) == 2
    assert "--label, --weight apply to CSV and Parquet files" in capsys.readouterr().err


def test_interactions_weights_and_predict_one_on_a_table_model(logs, tmp_path, capsys):
    """-q on table namespaces, --weight, and the saved model's predict_one on dict rows == predict on the file."""
    train = tmp_path / "w.csv"
    df = pd.read_csv(logs / "clicks.csv")
    df["w"] = np.where(df["clicked"] == 1, 2.0, 0.5)
    df.to_csv(train, index=False)
    model, plain, scores = tmp_path / "q.slm", tmp_path / "plain.slm", tmp_path / "s.txt"
    common = [
        "--label",
        "clicked",
        "-l",
        "ftrl",
        "--namespace",
        "u=age,sessions,country,device,user",
        "--namespace",
        "a=ad,advertiser,category,price,position",
        "--ignore-column",
        "w",
        "--json",
    ]
    assert main(["train", str(train), *common, "-q", "ua", "-o", str(model)]) == 0
    crossed = json.loads(capsys.readouterr().out)
    assert main(["train", str(train), *common, "-o", str(plain)]) == 0
    json.loads(capsys.readouterr().out)
    from streamlearn import load

    q, p = load(model), load(plain)
    assert q.input_spec_["interactions"] == ["ua"] and q.nnz_weights > 2 * p.nnz_weights  # crossed features
    weighted = tmp_path / "wt.slm"
    assert (
        main(["train", str(train), "--label", "clicked", "-l", "ftrl", "--weight", "w", "-o", str(weighted), "--json"])
        == 0
    )
    json.loads(capsys.readouterr().out)
    assert not np.allclose(load(weighted).coef_, load(tmp_path / "plain.slm").coef_)
    assert load(weighted).input_spec_["weight_column"] == "w"
    # a CSV without the weight column still predicts (the weight is not a feature)
    assert main(["predict", str(weighted), str(logs / "new.csv"), "-o", str(tmp_path / "p.txt")]) == 0
    # the -q model scores dict rows as it scores the file
    assert main(["predict", str(model), str(logs / "new.csv"), "--scores", "-o", str(scores)]) == 0
    s_file = np.loadtxt(scores)
    rows = pd.read_csv(logs / "new.csv").drop(columns=["note"]).head(50).to_dict("records")
    s_dict = [float(q.decision_function(q._row_hasher(None).transform_one(r))[0]) for r in rows]
    assert np.allclose(s_dict, s_file[:50])
    assert [q.predict_one(r) for r in rows] == list(q.predict(q._row_hasher(None).transform(rows)))
    assert crossed["n_train"] == 6000


def test_river_bundled_csvs_and_evaluate(tmp_path, capsys):
    """Real files: river's phishing (classification, .csv.gz) and chick weights (regression, ids as categories)."""
    river_datasets = pytest.importorskip("river.datasets")
    import os

    base = os.path.dirname(river_datasets.__file__)
    phishing = os.path.join(base, "phishing.csv.gz")
    assert main(["evaluate", phishing, "--label", "is_phishing", "-l", "ftrl", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_examples"] == 1250 and out["online_error_rate"] < 0.25
    chicks = os.path.join(base, "chick-weights.csv")
    model = tmp_path / "chick.slm"
    assert (
        main(
            [
                "train",
                chicks,
                "--label",
                "weight",
                "-l",
                "pa-regressor",
                "--categorical",
                "chick",
                "--categorical",
                "diet",
                "-o",
                str(model),
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["n_train"] == 578 and out["n_features"] == 2**18
    from streamlearn import load

    kinds = load(model).input_spec_["options"]["columns"]
    assert kinds == {"time": "numeric", "chick": "text", "diet": "text"}


def _train_and_test(tmp_path, data_text, test_text, test_name="t.csv"):
    """``streamlearn train d.csv --label y -l ftrl --test TEST -o m.slm``, which must fail (exit 2): (TEST, m.slm)."""
    data, test, model = tmp_path / "d.csv", tmp_path / test_name, tmp_path / "m.slm"
    data.write_text(data_text)
    test.write_text(test_text)
    assert main(["train", str(data), "--label", "y", "-l", "ftrl", "--test", str(test), "-o", str(model)]) == 2
    return test, model


@pytest.mark.parametrize("end", ["\n", ""])  # without a line end, pyarrow found no column ("Empty CSV file or block")
def test_a_csv_with_only_its_header_is_an_error_naming_it(tmp_path, capsys, end):
    header, model = _train_and_test(tmp_path, "y,a\n1,2\n0,3\n", "y,a" + end, test_name="header.csv")
    assert capsys.readouterr().err == f"streamlearn: error: {header}: no examples: the test file has no data lines.\n"
    assert not model.exists()
    for command in ("train", "evaluate"):
        assert main([command, str(header), "--label", "y", "-l", "ftrl"]) == 2
        assert (
            capsys.readouterr().err == f"streamlearn: error: {header}: no examples: the data file has no data lines.\n"
        )


def test_test_labels_outside_the_model_classes_are_an_error(tmp_path, capsys):
    """As for LIBSVM: a --test label the classifier never saw is an error naming it, not a silent miss."""
    test, model = _train_and_test(tmp_path, "y,a\n1,2\n0,3\n1,4\n", "y,a\n1,2\n0,5\n2,3\n")
    err = capsys.readouterr().err
    assert err.startswith(f"streamlearn: error: {test}, line 4: label 2 is not one of the model's classes {{0, 1}}")
    assert err.count("\n") == 1 and not model.exists()
    data = tmp_path / "d.csv"
    assert main(["train", str(data), "--label", "y", "-l", "ftrl", "-o", str(model), "--quiet"]) == 0
    assert main(["train", "-i", str(model), str(data), "--test", str(test)]) == 2
    assert f"{test}, line 4: label 2 is not one" in capsys.readouterr().err
    text = tmp_path / "s.csv"
    text.write_text("y,a\nyes,2\nno,3\n")
    test.write_text("y,a\nyes,2\nmaybe,3\n")
    assert main(["train", str(text), "--label", "y", "-l", "ftrl", "--test", str(test)]) == 2
    assert f"{test}, line 3: label maybe is not one of the model's classes {{no, yes}}" in capsys.readouterr().err


def test_a_column_of_no_feature_type_names_the_option_that_leaves_it_out(tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "lists.parquet"
    pq.write_table(pa.table({"y": [0, 1, 0, 1], "x": [1.0, 2.0, 3.0, 4.0], "tags": [[1], [2, 3], [], [4]]}), path)
    assert main(["train", str(path), "--label", "y", "-l", "ftrl"]) == 2
    err = capsys.readouterr().err
    assert "'tags'" in err and "is not a feature type" in err and "--ignore-column" in err, err
    assert main(["train", str(path), "--label", "y", "-l", "ftrl", "--ignore-column", "tags", "--quiet"]) == 0


@pytest.mark.parametrize("name", ["big.csv", "big.parquet"])
def test_crossed_features_that_overflow_exit_2_naming_the_line(tmp_path, capsys, name):
    import pyarrow as pa

    path = tmp_path / name
    table = pa.table({"y": [1.0, 0.0, 1.0], "a": [2.0, 1e200, 3.0], "b": [4.0, 1e200, 5.0]})
    if name.endswith(".csv"):
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, path)
    else:
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    argv = ["train", str(path), "--label", "y", "--namespace", "a=a", "--namespace", "b=b", "-q", "ab", "-l", "pa"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    where = "line 3" if name.endswith(".csv") else "row 2"
    assert err.startswith(f"streamlearn: error: {path}, {where}: hashed column ")
    assert " is inf: the product of crossed features (quadratic/cubic) or the sum of the values hashed" in err
    assert err.count("\n") == 1


def _european(df, path):
    """``df`` written as a CSV separated by ';' with decimal commas."""
    df.to_csv(path, index=False, sep=";", decimal=",")


def test_delimiter_and_decimal_train_test_and_predict_as_the_comma_files(logs, tmp_path, capsys):
    """A model trained on ';'-separated files with decimal commas is the model of the same rows written with
    commas and points: same test figures, same predictions of a new file, which it reads with the recorded
    delimiter and decimal mark."""
    for name in ("clicks", "more", "new"):
        _european(pd.read_csv(logs / f"{name}.csv"), tmp_path / f"{name}.csv")
    figures = {}
    for tag, d, extra in (("comma", logs, []), ("eu", tmp_path, ["--delimiter", ";", "--decimal", ","])):
        model = tmp_path / f"{tag}.slm"
        args = ["train", str(d / "clicks.csv"), "--label", "clicked", "-l", "ftrl", "--test", str(d / "more.csv")]
        assert main([*args, *extra, "-o", str(model), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        figures[tag] = (out["online_error_rate"], out["test_accuracy"], out["nnz_weights"])
        preds = tmp_path / f"{tag}.txt"
        assert main(["predict", str(model), str(d / "new.csv"), "--scores", "-o", str(preds)]) == 0
        figures[tag + " scores"] = np.loadtxt(preds)
    assert figures["eu"] == figures["comma"]
    np.testing.assert_array_equal(figures["eu scores"], figures["comma scores"])


def test_predict_reads_a_file_with_another_delimiter_and_decimal_than_the_model(logs, tmp_path, capsys):
    """predict --delimiter / --decimal read DATA in place of the model's own: a comma model predicts a ';' file with
    decimal commas, and a ';' model a comma file, as each predicts the same rows in its own format; without them
    the error says which delimiter the file looks separated by."""
    _european(pd.read_csv(logs / "new.csv"), tmp_path / "new_eu.csv")
    _european(pd.read_csv(logs / "clicks.csv"), tmp_path / "clicks_eu.csv")
    comma, eu = tmp_path / "comma.slm", tmp_path / "eu.slm"
    base = ["--label", "clicked", "-l", "ftrl"]
    assert main(["train", str(logs / "clicks.csv"), *base, "-o", str(comma)]) == 0
    assert (
        main(["train", str(tmp_path / "clicks_eu.csv"), *base, "--delimiter", ";", "--decimal", ",", "-o", str(eu)])
        == 0
    )
    capsys.readouterr()

    def scores(model, data, *extra):
        out = tmp_path / "s.txt"
        assert main(["predict", str(model), str(data), "--scores", *extra, "-o", str(out)]) == 0
        return np.loadtxt(out)

    expected = scores(comma, logs / "new.csv")
    np.testing.assert_array_equal(
        scores(comma, tmp_path / "new_eu.csv", "--delimiter", ";", "--decimal", ","), expected
    )
    np.testing.assert_array_equal(scores(eu, logs / "new.csv", "--delimiter", ",", "--decimal", "."), expected)
    np.testing.assert_array_equal(scores(eu, tmp_path / "new_eu.csv"), expected)
    out = tmp_path / "x.txt"
    for model, data, extra, message in (
        (
            eu,
            logs / "new.csv",
            [],
            "one column, " + "'" + ",".join(pd.read_csv(logs / "new.csv").columns) + "': its fields look separated by "
            "',', and it was read separated by ';': give delimiter=',' (the command line's --delimiter ',')",
        ),
        (
            eu,
            logs / "new.csv",
            ["--delimiter", ","],
            f"--delimiter ',' is the decimal mark the model in {eu} reads its CSV files with (input_spec_); give "
            "--decimal too.",
        ),
        (comma, logs / "new.csv", ["--delimiter", "ab"], "--delimiter must be one character"),
    ):
        assert main(["predict", str(model), str(data), *extra, "-o", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err and not out.exists()
    svm = tmp_path / "t.svm"
    svm.write_text("1 1:1\n-1 2:1\n")
    assert main(["train", str(svm), "-l", "ftrl", "-o", str(tmp_path / "l.slm")]) == 0
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "l.slm"), str(svm), "--decimal", ","]) == 2
    assert (
        f"--decimal applies to a model that reads CSV files; the model in {tmp_path / 'l.slm'} reads libsvm input"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--delimiter", ";;"], "--delimiter must be one character other than a quote or a line end"),
        (["--decimal", "ab"], "--decimal must be one character"),
        (["--delimiter", ";", "--decimal", ";"], "decimal and delimiter must differ; both are ';'"),
    ],
)
def test_a_bad_delimiter_or_decimal_option_is_one_line(logs, tmp_path, capsys, extra, message):
    model = tmp_path / "m.slm"
    assert main(["train", str(logs / "clicks.csv"), "--label", "clicked", "-l", "ftrl", *extra, "-o", str(model)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and not model.exists()


def test_delimiter_is_refused_for_data_that_are_not_csv(tmp_path, capsys):
    data = tmp_path / "t.vw"
    data.write_text("1 |a x:1\n-1 |a y:1\n")
    assert main(["train", str(data), "-l", "ftrl", "--delimiter", ";"]) == 2
    assert "--delimiter applies to CSV and Parquet files" in capsys.readouterr().err
    parquet = tmp_path / "t.parquet"
    pd.DataFrame({"y": [1, 0], "a": [1.5, 2.5]}).to_parquet(parquet)
    assert main(["train", str(parquet), "--label", "y", "-l", "ftrl", "--delimiter", ";"]) == 2
    assert f"--delimiter applies to CSV files; {parquet} is Parquet" in capsys.readouterr().err


def test_a_tab_is_given_as_backslash_t(tmp_path, capsys):
    data = tmp_path / "t.csv"
    data.write_text("y\ta\n1\t2.5\n0\t1.5\n")
    assert main(["train", str(data), "--label", "y", "-l", "ftrl", "--delimiter", "\\t", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_train"] == 2


def test_a_continued_model_keeps_its_delimiter(tmp_path, capsys):
    data = tmp_path / "eu.csv"
    data.write_text("y;a\n" + "".join(f"{i % 2};{i % 7},5\n" for i in range(200)))
    model, more = tmp_path / "m.slm", tmp_path / "more.slm"
    base = ["--label", "y", "-l", "ftrl"]
    assert main(["train", str(data), *base, "--delimiter", ";", "--decimal", ",", "-o", str(model)]) == 0
    assert main(["train", "-i", str(model), str(data), "-o", str(more)]) == 0  # read with the model's ';' and ','
    assert main(["train", "-i", str(model), str(data), "--delimiter", ";", "-o", str(more)]) == 0
    capsys.readouterr()
    for option, value, own in (("--delimiter", "|", "';'"), ("--decimal", ".", "','")):
        assert main(["train", "-i", str(model), str(data), option, value, "-o", str(tmp_path / "x.slm")]) == 2
        assert (
            f"{option} '{value}' conflicts with the model in {model}, which reads its csv input with {option} {own}"
            in capsys.readouterr().err
        )
    assert not (tmp_path / "x.slm").exists()


@pytest.mark.parametrize("learner", ["perceptron", "pa2"])
def test_a_model_saved_with_its_default_scaler_predicts_and_learns_dict_rows_as_the_files(
    logs, tmp_path, capsys, learner
):
    """A learner whose command-line default puts a scaler in front (a saved StreamPipeline) takes dict rows as a
    learner does: predict_one gives `streamlearn predict`'s labels on the file's rows, and learn_one learns what
    `train -i` learns from them."""
    from streamlearn import load

    model, more = tmp_path / "m.slm", tmp_path / "more.slm"
    assert main(["train", str(logs / "clicks.csv"), "--label", "clicked", "-l", learner, "-o", str(model)]) == 0
    capsys.readouterr()
    loaded = load(model)
    assert type(loaded).__name__ == "StreamPipeline" and loaded.scaler_ is not None
    out = tmp_path / "p.txt"
    assert main(["predict", str(model), str(logs / "new.csv"), "-o", str(out)]) == 0
    frame = pd.read_csv(logs / "new.csv").drop(columns=["note"])
    rows = frame.head(200).to_dict("records")
    assert [loaded.predict_one(r) for r in rows] == list(np.loadtxt(out)[:200])
    assert list(loaded.predict_many(frame)) == list(np.loadtxt(out))  # a DataFrame of the file's columns
    # learn_one on the rows of a file == train -i on that file
    part = tmp_path / "part.csv"
    pd.read_csv(logs / "more.csv").head(300).to_csv(part, index=False)
    assert main(["train", str(part), "-i", str(model), "-o", str(more)]) == 0
    capsys.readouterr()
    for r in pd.read_csv(part).to_dict("records"):
        label = r.pop("clicked")
        loaded.learn_one(r, label)
    again = load(more)
    assert loaded.t_ == again.t_ == 6300
    np.testing.assert_allclose(loaded.learner_.coef_, again.learner_.coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(loaded.scaler_.max_abs_, again.scaler_.max_abs_)
