"""The scikit-learn estimator API of streamlearn._estimator over the learner registry."""

import re

import pytest

from streamlearn._estimator import BaseEstimator
from streamlearn.learners import LEARNERS, make_learner
from streamlearn.preprocessing import MaxAbsScaler, make_stream_pipeline

# the learners built on streamlearn's BaseEstimator (the batch SVMs use scikit-learn's, and its message)
OURS = sorted(name for name, spec in LEARNERS.items() if issubclass(spec.cls(), BaseEstimator))


def test_the_registry_is_mostly_ours():
    assert len(OURS) >= len(LEARNERS) - 2


@pytest.mark.parametrize("name", OURS)
def test_an_unknown_parameter_is_refused_in_one_line(name):
    # before: the estimator's repr in the message, over several lines for a learner with several set parameters
    est = make_learner(name, {"random_state": 0} if "random_state" in make_learner(name).get_params() else {})
    with pytest.raises(ValueError) as exc_info:
        est.set_params(bogus=1)
    message = str(exc_info.value)
    assert "\n" not in message
    assert message == (
        f"Invalid parameter 'bogus' for estimator {type(est).__name__}. Valid parameters are: "
        f"{sorted(est.get_params(deep=False))!r}."
    )


def test_an_unknown_nested_parameter_names_the_inner_estimator():
    pipe = make_stream_pipeline(MaxAbsScaler(), make_learner("rfd-son", {"random_state": 0}))
    with pytest.raises(ValueError, match=re.escape("Invalid parameter 'bogus' for estimator SketchedOnlineNewton.")):
        pipe.set_params(learner__bogus=1)
