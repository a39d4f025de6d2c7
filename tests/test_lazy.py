"""Lazy subpackage imports (streamlearn._lazy): the FTRL command path imports only what it needs, every public
name is still reachable, and a model file loads whatever has been imported before."""

import subprocess
import sys

import pytest

import streamlearn
from streamlearn import linear_model
from streamlearn._lazy import lazy_attributes
from streamlearn.persist import _registered_class


def _run(code):
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_learner_path_imports_no_other_subpackage():
    out = _run(
        "import sys\n"
        "from streamlearn.learners import make_learner\n"
        "from streamlearn.datasets import iter_svmlight\n"
        "make_learner('ftrl', {})\n"
        "heavy = ['streamlearn.facto', 'streamlearn.second_order', 'streamlearn.sketch', "
        "'streamlearn.linear_model._svm', 'streamlearn.linear_model._confidence', 'sklearn.metrics', "
        "'streamlearn.evaluation']\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    assert out.strip() == "[]"


def test_model_file_loads_in_a_fresh_process(tmp_path):
    import numpy as np

    from streamlearn.facto import FMClassifier
    from streamlearn.sketch import FrequentDirections

    rng = np.random.default_rng(0)
    FMClassifier(n_factors=2, random_state=0).partial_fit(rng.random((6, 3)), [0, 1] * 3, classes=[0, 1]).save(
        tmp_path / "fm.slm"
    )
    FrequentDirections(ell=2).partial_fit(rng.random((5, 4))).save(tmp_path / "fd.slm")
    linear_model.FTRLProximalClassifier().partial_fit(rng.random((6, 3)), [0, 1] * 3, classes=[0, 1]).save(
        tmp_path / "ftrl.slm"
    )  # a lazily imported name of its package
    # only persist imported: the registry imports streamlearn.facto / streamlearn.sketch on the lookup
    out = _run(
        f"from streamlearn.persist import load\n"
        f"print(type(load({str(tmp_path / 'fm.slm')!r})).__name__, "
        f"type(load({str(tmp_path / 'fd.slm')!r})).__name__, "
        f"type(load({str(tmp_path / 'ftrl.slm')!r})).__name__)"
    )
    assert out.split() == ["FMClassifier", "FrequentDirections", "FTRLProximalClassifier"]


@pytest.mark.parametrize("module", ["streamlearn", "streamlearn.linear_model", "streamlearn.evaluation"])
def test_every_public_name_resolves(module):
    import importlib

    mod = importlib.import_module(module)
    for name in getattr(mod, "__all__", []):
        assert getattr(mod, name) is not None
        assert name in dir(mod)


def test_subpackages_and_unknown_names():
    assert streamlearn.sketch.SKETCHES["fd"].__name__ == "FrequentDirections"
    assert linear_model.FTRLProximalClassifier.__module__ == "streamlearn.linear_model._sparse"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        streamlearn.nope  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        linear_model.Nope  # noqa: B018


def test_helpers_directly():
    ns = {}
    getattr_, dir_ = lazy_attributes("streamlearn", ns, {"losses": "", "LOSSES": ".losses"})
    assert getattr_("LOSSES") is ns["LOSSES"] and "logistic" in ns["LOSSES"]
    assert getattr_("losses").__name__ == "streamlearn.losses"
    assert dir_() == ["LOSSES", "losses"]
    assert _registered_class("streamlearn.no_such_module.X") is None
    assert _registered_class("other.X") is None and _registered_class(None) is None
