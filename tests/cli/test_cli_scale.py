"""``--scale`` on train/evaluate: the saved model holds the pipeline and ``predict`` applies the scaling."""

import json

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_breast_cancer

from streamlearn import load
from streamlearn.cli.main import main
from streamlearn.datasets import load_svmlight
from streamlearn.learners import make_learner
from streamlearn.preprocessing import MaxAbsScaler, StandardScaler, StreamPipeline, make_stream_pipeline


@pytest.fixture(scope="module")
def raw_files(tmp_path_factory):
    """Breast cancer, unscaled (columns from 1e-3 to 4e3), shuffled once, 400 / 169."""
    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], np.where(y[order] > 0, 1, -1)
    d = tmp_path_factory.mktemp("raw")
    dump_svmlight_file(X[:400], y[:400], str(d / "train.svm"), zero_based=False)
    dump_svmlight_file(X[400:], y[400:], str(d / "test.svm"), zero_based=False)
    return str(d / "train.svm"), str(d / "test.svm")


@pytest.mark.parametrize("scale,scaler", [("maxabs", MaxAbsScaler), ("standard", StandardScaler)])
def test_train_saves_the_pipeline_and_predict_applies_it(raw_files, tmp_path, capsys, scale, scaler):
    train, test = raw_files
    model = tmp_path / "m.slm"
    assert main(["train", train, "-l", "ogd", "--scale", scale, "--test", test, "-o", str(model), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    back = load(model)
    assert isinstance(back, StreamPipeline) and isinstance(back.scaler_, scaler)
    # the same as the library pipeline on the same rows
    X, y = load_svmlight(train, n_features=30)
    Xt, yt = load_svmlight(test, n_features=30)
    pipe = make_stream_pipeline(scaler(), make_learner("ogd")).partial_fit(X, y, classes=[-1, 1])
    np.testing.assert_allclose(back.decision_function(Xt), pipe.decision_function(Xt), rtol=1e-12)
    assert out["test_accuracy"] == pytest.approx(pipe.score(Xt, yt))
    preds = tmp_path / "p.txt"
    assert main(["predict", str(model), test, "-o", str(preds)]) == 0
    assert np.mean(np.array(preds.read_text().split(), dtype=float) == yt) == pytest.approx(out["test_accuracy"])
    # unscaled OGD is far worse on these raw columns
    assert main(["train", train, "-l", "ogd", "--test", test, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["test_accuracy"] < out["test_accuracy"] - 0.2


def test_evaluate_with_scale(raw_files, capsys):
    assert main(["evaluate", raw_files[0], "-l", "pa1", "--scale", "standard", "--json"]) == 0
    scaled = json.loads(capsys.readouterr().out)["online_error_rate"]
    assert main(["evaluate", raw_files[0], "-l", "pa1", "--json"]) == 0
    assert scaled < json.loads(capsys.readouterr().out)["online_error_rate"]


def test_scale_refused_for_batch_learners(raw_files, capsys):
    assert main(["train", raw_files[0], "-l", "dcd-svm", "--scale", "maxabs"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamlearn: error: --scale") and "dcd-svm" in err
