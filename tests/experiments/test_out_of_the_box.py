"""CLI defaults give sensible results out of the box: every learner whose defaults were chosen on the zoo beats
the majority-class rate on the raw zoo sets where the previous defaults did not (one pass, the zoo's split),
and the demo's weakest learners reach 0.80 on a9a.t."""

import json

import numpy as np
import pytest

from streamlearn import load
from streamlearn.cli.main import main
from streamlearn.datasets import load_a9a, load_zoo
from streamlearn.experiments.zoo import fit_score, split_shuffled
from streamlearn.learners import LEARNERS, make_learner, scaled_learner
from streamlearn.preprocessing import StreamPipeline

#: learner -> zoo sets where its earlier CLI defaults were below the majority-class rate
WAS_BELOW = {
    "perceptron": ["bananas"],
    "perceptron-nobias": ["bananas"],
    "pa2": ["bananas"],
    "ogd-hinge": ["wine"],
    "pegasos": ["breast-cancer", "bananas", "wine", "segment"],
    "fm": ["wine"],
    "ccfm-ogd": ["breast-cancer", "wine"],
    "occfm": ["breast-cancer", "wine"],
    "cw": ["wine", "bananas"],
}
_RIVER_SETS = {"bananas", "segment", "phishing"}


def _split(name):
    if name in _RIVER_SETS:
        pytest.importorskip("river", reason="river's data sets load only when river is installed")
    X, y, task = load_zoo(name)
    X_tr, y_tr, X_te, y_te = split_shuffled(X, y, 0)
    values, counts = np.unique(y_tr, return_counts=True)
    return X_tr, y_tr, X_te, y_te, task, float(np.mean(y_te == values[np.argmax(counts)]))


@pytest.mark.parametrize("learner,dataset", [(k, d) for k, sets in WAS_BELOW.items() for d in sets])
def test_cli_defaults_beat_the_majority_rate(learner, dataset):
    X_tr, y_tr, X_te, y_te, task, majority = _split(dataset)
    assert fit_score(learner, X_tr, y_tr, X_te, y_te, task) >= majority  # "not below" (pegasos ties on bananas)


@pytest.mark.parametrize("learner", ["perceptron-nobias", "pa", "cw"])
def test_demo_learners_reach_080_on_a9a(learner):
    X, y, X_test, y_test = load_a9a()
    model = scaled_learner(learner, make_learner(learner)).partial_fit(X, y, classes=[-1, 1])
    assert model.score(X_test, y_test) >= 0.80


def test_every_default_scale_is_a_known_scaler():
    assert {s.scale for s in LEARNERS.values()} <= {"none", "maxabs", "standard"}
    assert all(s.scale == "none" for s in LEARNERS.values() if s.batch)


@pytest.mark.filterwarnings("ignore:DualCoordinateDescentSVC did not converge")
def test_train_without_scale_uses_the_learners_default(tmp_path, capsys):
    from sklearn.datasets import dump_svmlight_file, load_wine

    X, y = load_wine(return_X_y=True)
    data = tmp_path / "wine.svm"
    dump_svmlight_file(X, np.where(y == 0, 1, -1), str(data), zero_based=False)
    for learner, scale, expected in [
        ("pegasos", None, StreamPipeline),
        ("pegasos", "none", None),
        ("ftrl", None, None),
    ]:
        model = tmp_path / f"{learner}-{scale}.slm"
        argv = ["train", str(data), "-l", learner, "-o", str(model)] + ([] if scale is None else ["--scale", scale])
        assert main(argv) == 0
        back = load(model)
        assert isinstance(back, StreamPipeline) == (expected is StreamPipeline), (learner, scale)
    # a batch learner keeps working without --scale (no default scaler applies to it)
    assert main(["train", str(data), "-l", "dcd-svm", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_every_cli_default_has_its_reason():
    from streamlearn.learners import DEFAULTS_WHY

    assert set(DEFAULTS_WHY) <= set(LEARNERS)
    changed = {n for n, s in LEARNERS.items() if s.defaults or s.scale != "none"}
    assert changed <= set(DEFAULTS_WHY), sorted(changed - set(DEFAULTS_WHY))
