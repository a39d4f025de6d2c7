"""The label contract of streamlearn.base shared by every classifier of the registry."""

import re

import numpy as np
import pytest

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
