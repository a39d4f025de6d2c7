"""The learner registry's functions (streamlearn.learners) on arguments of the wrong kind."""

import pytest

from streamlearn.learners import learner_name_of, make_learner


def test_params_that_are_not_a_mapping_are_refused_in_one_line():
    # before: AttributeError: 'list' object has no attribute 'items'
    with pytest.raises(TypeError) as exc_info:
        make_learner("ogd", [("eta0", 0.5)])
    assert str(exc_info.value) == "params must be a mapping of parameter names to values, or None; got list."
    assert make_learner("ogd", None).eta0 == make_learner("ogd", {}).eta0


def test_an_object_that_is_no_estimator_has_no_registry_name():
    # before: AttributeError: 'object' object has no attribute 'get_params'
    assert learner_name_of(object()) is None
    assert learner_name_of(make_learner("cw-diag")) == "cw-diag"
