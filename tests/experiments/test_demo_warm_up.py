"""The demo's us_per_example is measured after compilation: no numba kernel is compiled or loaded from the
cache while a learner's timed pass runs (the warm-up on a few rows went through the same calls)."""

import argparse

import pytest
from numba.core import event

from streamlearn import evaluation
from streamlearn.experiments import demo


class _Compiles(event.Listener):
    """Counts acquisitions of numba's compiler lock: every compilation and every load from the disk cache."""

    def __init__(self):
        self.names = []

    def on_start(self, ev):
        self.names.append(ev.kind)

    def on_end(self, ev):
        pass


@pytest.mark.parametrize("learner", ["truncation", "tg", "pa1"])
def test_no_compilation_during_the_timed_pass(learner, monkeypatch):
    listener = _Compiles()
    timed = []
    original = evaluation.progressive_validation

    def spy(est, stream, **kwargs):
        n = len(stream[1])
        before = len(listener.names)
        result = original(est, stream, **kwargs)
        if n > demo.WARM_UP_ROWS:  # the timed pass over all of a9a
            timed.append(listener.names[before:])
        return result

    monkeypatch.setattr(evaluation, "progressive_validation", spy)
    with event.install_listener("numba:compiler_lock", listener):
        rows = demo.run(argparse.Namespace(learners=learner, progress=False))
    assert len(timed) == 1
    assert timed[0] == [], f"{learner}: {len(timed[0])} kernels compiled or loaded during the timed pass"
    assert rows[0]["us_per_example"] > 0
