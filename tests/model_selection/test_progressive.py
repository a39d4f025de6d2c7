"""ProgressiveSelectionClassifier against a naive recomputation of its selection, and its refusals."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn.learners import make_learner, scaled_learner
from streamlearn.model_selection import ProgressiveSelectionClassifier


def _data(n=300, d=6, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.choice([1e-3, 1.0, 1e3], size=d)  # raw columns of mixed scales
    w = rng.normal(size=(d, classes)) / np.abs(X).mean(axis=0)[:, None]
    y = np.argmax(X @ w + rng.normal(size=(n, classes)), axis=1) if classes > 2 else (X @ w[:, 0] > 0).astype(int)
    return X, y


def _naive(names, X, y, classes, weight, weighting):
    """Each learner built as the command line builds it, fed the rows one at a time; before each row the learner
    with the largest weighted count of right progressive predictions so far (the first on ties) is selected."""
    members = [scaled_learner(n, make_learner(n)) for n in names]
    hits = np.zeros(len(names))
    out = []
    for i in range(X.shape[0]):
        scores = [
            m.partial_fit_scores(X[i : i + 1], y[i : i + 1], classes=classes, sample_weight=weight[i : i + 1])
            for m in members
        ]
        k = max(range(len(names)), key=lambda j: (hits[j], -j))
        out.append(scores[k][0])
        w = weight[i] * ((i + 1) if weighting == "linear" else 1.0)
        for j, (m, s) in enumerate(zip(members, scores)):
            hits[j] += w * (m.scores_to_labels(s)[0] == y[i])
    return np.array(out), hits


@pytest.mark.parametrize("weighting", ["linear", "uniform"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_selection_equals_a_naive_recomputation(weighting, n_classes):
    X, y = _data(classes=n_classes)
    classes = np.unique(y)
    weight = np.random.default_rng(1).choice([0.0, 0.5, 1.0, 3.0], size=len(y))
    names = ["pa1", "arow", "nag"]
    expected, hits = _naive(names, X, y, classes, weight, weighting)
    clf = ProgressiveSelectionClassifier(learners=",".join(names), weighting=weighting)
    got = np.concatenate(
        [
            clf.partial_fit_scores(X[i : i + 37], y[i : i + 37], classes=classes, sample_weight=weight[i : i + 37])
            for i in range(0, len(y), 37)
        ]
    )
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    total = np.sum(weight * (np.arange(1, len(y) + 1) if weighting == "linear" else 1.0))
    assert clf.progressive_accuracy_ == pytest.approx(dict(zip(names, hits / total)), rel=1e-12)
    assert clf.selected_ == names[int(np.argmax(hits))]
    assert clf.t_ == len(y)
    np.testing.assert_array_equal(clf.predict(X), clf.members_[clf.selected_].predict(X))
    np.testing.assert_array_equal(clf.decision_function(X), clf.members_[clf.selected_].decision_function(X))


def test_learners_are_checked():
    X, y = _data(n=20)
    expected = (
        "The 'learners' parameter of ProgressiveSelectionClassifier must be the names of distinct online classifiers"
    )
    for learners in ["arow,nope", "arow,ogd-regressor", "arow,dcd-svm", "arow,auto", "arow,arow", "", ["arow", 3], 3]:
        clf = ProgressiveSelectionClassifier(learners=learners)
        with pytest.raises(ValueError, match=re.escape(expected) + ".* Got " + re.escape(repr(learners))):
            clf.partial_fit(X, y, classes=[0, 1])
        assert not hasattr(clf, "t_")
    with pytest.raises(ValueError, match=re.escape(expected)):  # the command line: before any data is read
        make_learner("auto", {"learners": "arow,nope"})
    assert ProgressiveSelectionClassifier(learners=("nag", "arow")).fit(X, y).members_.keys() == {"nag", "arow"}
    with pytest.raises(ValueError, match="weighting"):
        ProgressiveSelectionClassifier(weighting="exp").partial_fit(X, y, classes=[0, 1])


def test_changed_learners_are_refused_until_fit():
    X, y = _data(n=40)
    clf = ProgressiveSelectionClassifier(learners="arow,nag").partial_fit(X, y, classes=[0, 1])
    clf.set_params(learners=["arow", "scw1"])
    with pytest.raises(ValueError, match="differs from the learners this ProgressiveSelectionClassifier was trained"):
        clf.partial_fit(X, y)
    clf.fit(X, y)
    assert list(clf.members_) == ["arow", "scw1"] and clf.t_ == 40


def test_a_learner_refusing_after_others_learnt_is_reported_and_blocks_the_model(tmp_path):
    """A chunk learnt by the first learners and refused by a later one leaves the learners with different pasts:
    the error says so and every later call is refused, rather than selecting among learners that saw other
    rows."""
    X, y = _data(n=40)
    clf = ProgressiveSelectionClassifier(learners="arow,nag").partial_fit(X, y, classes=[0, 1])
    arow_seen = clf.members_["arow"].t_
    nag = clf.members_["nag"]
    original = nag.partial_fit_scores

    def refuse(*args, **kwargs):
        exc = FloatingPointError("NAGClassifier diverged")
        exc.row = 1  # what the command line reads to name the file's line
        raise exc

    nag.partial_fit_scores = refuse
    with pytest.raises(FloatingPointError, match="'nag' refused a chunk that 'arow' had learnt") as info:
        clf.partial_fit(X[:2], y[:2])
    assert info.value.row == 1 and str(info.value).startswith("NAGClassifier diverged (nag in a")
    nag.partial_fit_scores = original
    assert clf.members_["arow"].t_ == arow_seen + 2
    for call in (lambda: clf.partial_fit(X, y), lambda: clf.predict(X), lambda: clf.save(tmp_path / "m.slm")):
        with pytest.raises(ValueError, match="no longer learnt the same rows"):
            call()
    assert not (tmp_path / "m.slm").exists()
    clf.fit(X, y)  # starts again
    assert clf.t_ == 40


def test_a_refused_first_chunk_leaves_nothing():
    X, y = _data(n=20)
    X[3, 1] = np.nan
    clf = ProgressiveSelectionClassifier()
    with pytest.raises(ValueError):
        clf.partial_fit(X, y, classes=[0, 1])
    assert not hasattr(clf, "t_") and not hasattr(clf, "_member_0")
    with pytest.raises(ValueError, match="classes must be passed on the first call to ProgressiveSelection"):
        clf.partial_fit(X[:2], y[:2])


def test_dict_rows_and_sparse_input():
    X, y = _data(n=120)
    clf = ProgressiveSelectionClassifier(learners="nag,pa1")
    for row, label in zip(X, y):
        clf.learn_one({f"c{j}": v for j, v in enumerate(row)}, int(label))
    assert clf.t_ == 120 and clf.predict_one({"c0": 1.0}) in (0, 1)
    dense = ProgressiveSelectionClassifier().partial_fit_scores(X, y, classes=[0, 1])
    sparse = ProgressiveSelectionClassifier().partial_fit_scores(sp.csr_matrix(X), y, classes=[0, 1])
    np.testing.assert_allclose(dense, sparse, rtol=1e-12)


def test_learn_one_guess_of_0_1_labels_turns_to_minus_1_plus_1_in_every_learner():
    clf = ProgressiveSelectionClassifier(learners="arow,nag")
    clf.learn_one({"a": 1.0}, 1)
    assert clf.classes_.tolist() == [0, 1]
    clf.learn_one({"a": -1.0}, -1)
    assert clf.classes_.tolist() == [-1, 1]
    assert all(m.classes_.tolist() == [-1, 1] for m in clf.members_.values())
    clf.learn_one({"a": 2.0}, 1)
    assert clf.predict_one({"a": -3.0}) == -1


def test_other_feature_names_in_a_later_chunk_are_refused_naming_the_selection():
    pd = pytest.importorskip("pandas")
    X, y = _data(n=30, d=3)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    clf = ProgressiveSelectionClassifier().partial_fit(df, y, classes=[0, 1])
    with pytest.raises(ValueError, match="differ from those ProgressiveSelectionClassifier was fitted with"):
        clf.partial_fit(df[["c", "b", "a"]], y)
    assert clf.t_ == 30 and all(m.t_ == 30 for m in clf.members_.values())


def test_the_command_line_trains_auto_and_says_which_learner_predicts(tmp_path, capsys):
    import json

    from sklearn.datasets import dump_svmlight_file

    from streamlearn import load
    from streamlearn.cli.main import main

    X, y = _data(n=200)
    dump_svmlight_file(X, y, str(tmp_path / "d.svm"), zero_based=False)
    code = main(
        [
            "train",
            str(tmp_path / "d.svm"),
            "--learner",
            "auto",
            "-p",
            "learners=nag,arow",
            "-o",
            str(tmp_path / "m.slm"),
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    model = load(tmp_path / "m.slm")
    assert out["learner"] == "auto" and out["selected"] == model.selected_ and list(model.members_) == ["nag", "arow"]
    assert model.t_ == 200
