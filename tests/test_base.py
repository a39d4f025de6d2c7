"""The label contract of streamlearn.base shared by every classifier of the registry."""

import re

import numpy as np
import pytest

from streamlearn.base import LogisticProbaMixin
from streamlearn.facto import FMClassifier
from streamlearn.linear_model import AROWClassifier, ConfidenceWeightedClassifier
from streamlearn.second_order import OnlineNewtonStep, SketchedOnlineNewton
from streamlearn.learners import LEARNERS, make_learner

CLASSIFIERS = sorted(name for name, spec in LEARNERS.items() if spec.task == "classification")
ONLINE = [name for name in CLASSIFIERS if not LEARNERS[name].batch]
X = np.random.default_rng(0).normal(size=(12, 3))
MIXED = re.escape("y mixes labels of kinds number, string; expected labels of one kind (all numbers, all strings")


@pytest.mark.parametrize("name", ONLINE)
def test_nan_among_classes_is_refused(name):
    # before: a third class NaN that no target equals, which predict could return as a label
    with pytest.raises(ValueError, match=re.escape("classes must not contain NaN (no label equals it); got classes=")):
        make_learner(name).partial_fit(X, np.arange(12) % 2, classes=[0, 1, np.nan])


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_labels_mixing_numbers_and_strings_are_refused_in_one_line(name):
    # before: NumPy's TypeError "'<' not supported between instances of 'int' and 'str'" from sorting them
    with pytest.raises(ValueError, match=MIXED):
        make_learner(name).fit(X, np.array(["a", 1] * 6, dtype=object))


@pytest.mark.parametrize("name", ONLINE)
def test_mixed_labels_in_a_later_chunk_or_in_classes_are_refused_in_one_line(name):
    y = np.array(["a", "b"] * 6, dtype=object)
    clf = make_learner(name).partial_fit(X, y, classes=["a", "b"])
    with pytest.raises(ValueError, match=MIXED):
        clf.partial_fit(X, np.array(["a", 1] * 6, dtype=object))
    with pytest.raises(ValueError, match=re.escape("classes mixes labels of kinds NoneType, string;")):
        make_learner(name).partial_fit(X, y, classes=["a", "b", None])


def test_object_labels_of_one_kind_are_learnt_as_before():
    strings = np.array(["a", np.str_("b")] * 6, dtype=object)  # str and numpy str are one kind
    clf = make_learner("ogd", {"random_state": 0}).fit(X, strings)
    assert clf.classes_.tolist() == ["a", "b"]
    ref = make_learner("ogd", {"random_state": 0}).fit(X, strings.astype(str))
    np.testing.assert_array_equal(clf.decision_function(X), ref.decision_function(X))


PROBA = [name for name in CLASSIFIERS if hasattr(make_learner(name), "predict_proba")]


@pytest.mark.parametrize("name", PROBA)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_predict_log_proba_is_finite_where_a_probability_rounds_to_0(name, n_classes):
    # before: log(predict_proba), -inf once a score was beyond about 37 in size
    y = np.arange(12) % n_classes
    clf = make_learner(name, {"random_state": 0}).fit(X, y)  # (a seeded shuffle: the same model every run)
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(clf.predict_proba(X)), rtol=1e-12, atol=1e-12)
    far = X * 1e6
    assert np.all(np.abs(clf.decision_function(far)) > 40), "the scores must be far enough for 0 probabilities"
    log_p = clf.predict_log_proba(far)
    assert np.isfinite(log_p).all()
    np.testing.assert_allclose(np.exp(log_p), clf.predict_proba(far), atol=1e-300)


class _GivenScores(LogisticProbaMixin):
    """The mixin on scores given as X."""

    loss = "logistic"

    def fit(self):
        return self

    def __sklearn_is_fitted__(self):
        return True

    def decision_function(self, X):
        return np.asarray(X, dtype=float)


def test_probabilities_of_a_row_whose_sigmoids_all_round_to_0_rank_its_classes_as_its_scores_do():
    # before: every one-vs-rest sigmoid clipped to 1e-300, so the probabilities 1/3, 1/3, 1/3 (and their logs)
    # whatever the scores; predict (the largest score) says class 0
    scores = np.array([[-1000.0, -1010.0, -2000.0], [1.0, -1.0, 0.0]])
    proba, log_p = _GivenScores().predict_proba(scores), _GivenScores().predict_log_proba(scores)
    norm = np.log1p(np.exp(-10.0))
    np.testing.assert_allclose(log_p[0], [-norm, -10 - norm, -1000 - norm], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(proba, np.exp(log_p), rtol=1e-12)
    sigmoids = 1 / (1 + np.exp(-scores[1]))
    np.testing.assert_allclose(proba[1], sigmoids / sigmoids.sum(), rtol=1e-12)
    np.testing.assert_allclose(_GivenScores().predict_log_proba(np.array([800.0, -800.0])), [[-800, 0], [0, -800]])


def test_binary_probabilities_are_each_class_sigmoid_to_rounding():
    # before: the first class's probability was 1 - sigmoid(s), 0 where it is about 1e-87, so predict_proba
    # disagreed with exp(predict_log_proba)
    scores = np.array([200.0, -200.0, 0.5, 0.0, -37.5])
    proba = _GivenScores().predict_proba(scores)
    np.testing.assert_allclose(proba, np.exp(_GivenScores().predict_log_proba(scores)), rtol=1e-12, atol=0)
    assert proba[0, 0] > 0 and proba[1, 1] > 0
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-15)


ALL_ONLINE = sorted(name for name, spec in LEARNERS.items() if not spec.batch)


@pytest.mark.parametrize("name", ALL_ONLINE)
@pytest.mark.parametrize("bad", ["value", "sample_weight"])
def test_a_refused_first_batch_leaves_an_unfitted_model_that_saves_loads_and_learns(name, bad, tmp_path):
    """A first ``partial_fit`` refused (a feature value or a sample weight beyond 2**500) kept the
    ``n_features_in_`` of the data it refused: the model passed for fitted, and its saved file did not load
    ("field 'attributes.t_' is missing"). It is left as it was built: no fitted attribute, and the next batch,
    of another width, is its first. A refused ``fit`` likewise."""
    from streamlearn.persist import load

    classification = LEARNERS[name].task == "classification"
    kw = {"classes": [-1, 1]} if classification else {}
    y = np.array([1, -1])
    Xb, sw = np.array([[1.0, 2.0], [3.0, 4.0]]), None
    if bad == "value":
        Xb[1, 0] = 1e300
    else:
        sw = np.array([1.0, 1e300])
    model = make_learner(name)
    with pytest.raises(ValueError, match="2\\*\\*500"):
        model.partial_fit(Xb, y, sample_weight=sw, **kw)
    assert [k for k in vars(model) if k.endswith("_")] == []
    model.partial_fit(X, np.arange(12) % 2 * 2 - 1, **kw)  # 3 features, not the refused batch's 2
    model.save(tmp_path / "model.slm")
    np.testing.assert_array_equal(load(tmp_path / "model.slm").predict(X), model.predict(X))
    with pytest.raises(ValueError, match="2\\*\\*500"):  # fit starts over: refused, it leaves no model either
        model.fit(Xb, y, sample_weight=sw)
    assert [k for k in vars(model) if k.endswith("_")] == []


@pytest.mark.parametrize(
    "make,param,value",
    [
        (lambda: OnlineNewtonStep(alpha0=2.0), "alpha0", 5.0),
        (lambda: SketchedOnlineNewton(alpha0=10.0), "alpha0", 1.0),
        (lambda: SketchedOnlineNewton(sketch="rfd"), "sketch", "fd"),
        (lambda: AROWClassifier(a=1.0), "a", 0.1),
        (lambda: ConfidenceWeightedClassifier(), "a", 0.1),
        (lambda: FMClassifier(), "init_stdev", 0.5),
    ],
)
def test_start_values_changed_after_learning_began_are_refused(make, param, value):
    """A parameter that only sets how a learner starts (an initial value, a sketch's kind) would be ignored once
    it learns: partial_fit refuses it, naming the value it started with; fit starts again with it."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 6))
    y = np.where(X[:, 0] > 0, 1, -1)
    clf = make().partial_fit(X[:15], y[:15], classes=[-1, 1])
    started = clf.get_params()[param]
    clf.set_params(**{param: value})
    with pytest.raises(ValueError, match=rf"^{param}={value!r} differs from the setting this \w+ was trained with"):
        clf.partial_fit(X[15:], y[15:])
    clf.fit(X, y)  # starts again with the new value
    clf.partial_fit(X[15:], y[15:])
    clf.set_params(**{param: started})  # and now refuses the old one
    with pytest.raises(ValueError, match="differs from the setting"):
        clf.partial_fit(X[15:], y[15:])


@pytest.mark.parametrize(
    "classes, labels",
    [
        ([-1, 1], [1, -1, 1]),
        ([0, 1], [1.0, 0.0, 1]),
        ([3, 7, 9], [9, 3, 7]),
        (["ham", "spam"], ["spam", "ham", "spam"]),
        (["a", "b", "c"], ["c", "a", "b"]),
        ([False, True], [True, False, True]),
    ],
)
def test_one_row_targets_equal_those_of_the_same_row_in_a_chunk(classes, labels):
    """A call of one row takes a shorter way to its targets (no array passes): the same +-1 columns as the row
    in a longer chunk, and the same error for a label outside classes_."""
    from streamlearn.linear_model import OGDClassifier

    est = OGDClassifier().partial_fit(np.eye(2)[:1], np.asarray(labels[:1]), classes=classes)
    chunk = est._targets(np.asarray(labels))
    for k, label in enumerate(labels):
        np.testing.assert_array_equal(est._targets(np.asarray([label])), chunk[k : k + 1])
    other = "nope" if isinstance(classes[0], str) else 5
    with pytest.raises(ValueError) as one:
        est._targets(np.asarray([other]))
    with pytest.raises(ValueError) as many:
        est._targets(np.asarray([other, other]))
    assert str(one.value) == str(many.value)


def test_a_dense_array_is_scored_without_its_csr_copy_and_bad_values_are_refused_as_before(monkeypatch):
    """decision_function on a C-contiguous float64 array scores it where it is (the CSR kernel is never called),
    bit for bit as its CSR matrix; a NaN, an infinity or a value of 2**500 or more still gets the one-line
    refusal of the CSR path, and other layouts and dtypes still take that path."""
    import scipy.sparse as sp

    import streamlearn.base as base
    from streamlearn.learners import make_learner

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 6)) * (rng.random((50, 6)) < 0.7)
    for name, y in [("pa1", np.where(X[:, 0] > 0, 1, -1)), ("ogd", np.arange(50) % 3)]:
        clf = make_learner(name).partial_fit(X, y, classes=np.unique(y))
        want = clf.decision_function(sp.csr_matrix(X))
        fortran = clf.decision_function(np.asfortranarray(X))
        messages = []
        for bad in (np.nan, np.inf, 2.0**500):
            B = np.asfortranarray(X).copy()
            B[3, 2] = bad
            with pytest.raises(ValueError) as slow:
                clf.predict(B)
            messages.append(str(slow.value))

        def no_csr(*args):
            raise AssertionError("the CSR kernel was called")

        monkeypatch.setattr(base, "linear_scores", no_csr)
        np.testing.assert_array_equal(clf.decision_function(X), want)
        np.testing.assert_array_equal(clf.decision_function(X[:1]), want[:1])
        np.testing.assert_array_equal(fortran, want)
        for bad, message in zip((np.nan, np.inf, 2.0**500), messages):
            B = X.copy()
            B[3, 2] = bad
            with pytest.raises(ValueError) as fast:
                clf.predict(B)
            assert str(fast.value) == message and "\n" not in message
        with pytest.raises(ValueError, match="X has 5 features, but"):
            clf.predict(X[:, :5].copy())
        monkeypatch.undo()
