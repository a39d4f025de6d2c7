"""The static table of learner parameters (``streamlearn learners`` reads it) equals the classes' signatures."""

from streamlearn._learner_signatures import SIGNATURES, live_signatures
from streamlearn.learners import LEARNERS, learner_parameters


def test_table_equals_the_classes_signatures():
    live = live_signatures()
    assert live == SIGNATURES, (
        "streamlearn/_learner_signatures.py is out of date: regenerate it with "
        "`python -m streamlearn._learner_signatures`"
    )
    assert {s.target for s in LEARNERS.values()} == set(SIGNATURES)
    assert all(list(SIGNATURES[t]) == list(live[t]) for t in live)  # same order as the signature


def test_learner_parameters_from_the_table():
    params = learner_parameters("pa1")
    assert params["C"] == 0.01 and "variant" not in params  # CLI default applied, fixed one excluded
