"""The scikit-learn estimator API of streamlearn._estimator over the learner registry."""

import re

import numpy as np
import pytest

from streamlearn._estimator import BaseEstimator
from streamlearn.learners import LEARNERS, make_learner
from streamlearn.preprocessing import MaxAbsScaler, TargetStandardScaler, make_stream_pipeline

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


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_score_weights_are_checked_as_those_of_learning(name):
    # before: scikit-learn's metrics took negative weights (a score from them), and weights summing to 0 were a
    # ZeroDivisionError "Weights sum to zero, can't be normalized"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = X[:, 0] if LEARNERS[name].task == "regression" else (X[:, 0] > 0).astype(int)
    model = make_learner(name).fit(X, y)
    if LEARNERS[name].target_scale == "standard":
        model = make_stream_pipeline(None, make_learner(name), TargetStandardScaler()).fit(X, y)
    for weights, message in (
        (
            np.r_[np.ones(10), -np.ones(10)],
            "Negative values in data passed to sample_weight; expected non-negative weights.",
        ),
        (np.zeros(20), "sample_weight is 0 for every example; expected a positive weight for at least one."),
        (np.full(20, np.nan), "sample_weight contains NaN or infinity; expected finite non-negative weights."),
        (np.ones(19), "sample_weight.shape == (19,), expected (20,)!"),
    ):
        with pytest.raises(ValueError) as exc_info:
            model.score(X, y, sample_weight=weights)
        assert str(exc_info.value) == message
    assert model.score(X, y, sample_weight=2.0) == model.score(X, y)
    assert np.isfinite(model.score(X, y, sample_weight=np.r_[np.zeros(10), np.ones(10)]))
