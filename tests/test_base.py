"""The label contract of streamlearn.base shared by every classifier of the registry."""

import re

import numpy as np
import pytest

from streamlearn.learners import LEARNERS, make_learner

ONLINE = sorted(name for name, spec in LEARNERS.items() if spec.task == "classification" and not spec.batch)
X = np.random.default_rng(0).normal(size=(12, 3))


@pytest.mark.parametrize("name", ONLINE)
def test_nan_among_classes_is_refused(name):
    # before: a third class NaN that no target equals, which predict could return as a label
    with pytest.raises(ValueError, match=re.escape("classes must not contain NaN (no label equals it); got classes=")):
        make_learner(name).partial_fit(X, np.arange(12) % 2, classes=[0, 1, np.nan])
