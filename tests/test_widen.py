"""Widening a started linear model while a stream read once grows wider (streamlearn._widen): the model equals
the one allocated at the final width up front, bit for bit, whatever per-feature state the learner keeps."""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn import linear_model as lm
from streamlearn._widen import PER_FEATURE, WIDENABLE, can_widen, widen

CASES = [
    ("PassiveAggressiveClassifier", {}),
    ("PassiveAggressiveClassifier", {"average": True}),
    ("PassiveAggressiveRegressor", {}),
    ("OGDClassifier", {}),
    ("OGDClassifier", {"normalized": True}),
    ("OGDClassifier", {"normalized": True, "loss": "squared", "eta0": 0.05}),
    ("OGDRegressor", {"normalized": True}),
    ("Perceptron", {}),
    ("Perceptron", {"average": True}),
]


def _stream(seed=0, n=90, widths=(10, 25, 40), n_classes=2):
    """Three chunks; chunk k uses only the first ``widths[k]`` columns (a stream whose width grows)."""
    rng = np.random.default_rng(seed)
    chunks = []
    for w in widths:
        X = rng.standard_normal((n // len(widths), w)) * rng.uniform(0.1, 10.0, w)
        X[rng.random(X.shape) > 0.3] = 0.0
        y = rng.integers(0, n_classes, X.shape[0])
        chunks.append((sp.csr_matrix(X), y))
    return chunks


def _pad(X, d):
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d))


def _learn(wide, grown, chunks, regression, n_classes=2):
    """``wide`` learns the chunks padded to the final width, ``grown`` each at its own width, widened before it;
    returns all the rows at the final width."""
    d = chunks[-1][0].shape[1]
    fit_kw = {} if regression else {"classes": list(range(n_classes))}
    for i, (X, y) in enumerate(chunks):
        t = y.astype(float) if regression else y
        wide.partial_fit(_pad(X, d), t, **fit_kw)
        if i:
            widen(grown, X.shape[1])
        grown.partial_fit(X, t, **fit_kw)
    assert grown.n_features_in_ == d
    return sp.vstack([_pad(X, d) for X, _ in chunks])


WIDEN_CASES = [(n, p, k) for n, p in CASES for k in ((2,) if n.endswith("Regressor") else (2, 3))]


@pytest.mark.parametrize("name,params,n_classes", WIDEN_CASES)
def test_widened_model_equals_the_one_allocated_wide(name, params, n_classes):
    wide, grown = getattr(lm, name)(**params), getattr(lm, name)(**params)
    X_all = _learn(wide, grown, _stream(n_classes=n_classes), name.endswith("Regressor"), n_classes)
    for attr in ("coef_", "intercept_", *PER_FEATURE):
        if attr in wide.__dict__:
            np.testing.assert_array_equal(grown.__dict__[attr], wide.__dict__[attr], err_msg=attr)
    np.testing.assert_array_equal(grown.predict(X_all), wide.predict(X_all))


@pytest.mark.parametrize("name,params", CASES)
def test_every_per_feature_array_is_widened(name, params):
    # a learner's state arrays with a features axis (7 features, 3 classes) are all in PER_FEATURE: one added
    # later and not widened would be read past its end by the kernel
    assert name in WIDENABLE
    est = getattr(lm, name)(**params)
    X = sp.csr_matrix(np.arange(1.0, 15.0).reshape(2, 7))
    if name.endswith("Regressor"):
        est.partial_fit(X, [0.5, -1.0])
    else:
        est.partial_fit(X, [0, 2], classes=[0, 1, 2])
    per_feature = {k for k, v in vars(est).items() if isinstance(v, np.ndarray) and 7 in v.shape}
    assert per_feature <= set(PER_FEATURE), per_feature - set(PER_FEATURE)
    assert "coef_" in per_feature


@pytest.mark.parametrize("name", ["pa", "pa2", "perceptron", "perceptron-nobias", "ogd-hinge", "pa-regressor"])
def test_a_learner_behind_maxabs_scaling_widens_exactly(name):
    # the command line's learners with their default MaxAbs scaling (a StreamPipeline)
    from streamlearn.learners import LEARNERS, make_learner, scaled_learner

    wide, grown = (scaled_learner(name, make_learner(name), None) for _ in range(2))
    assert type(wide).__name__ == "StreamPipeline" and can_widen(grown)
    X_all = _learn(wide, grown, _stream(seed=1), LEARNERS[name].task == "regression")
    np.testing.assert_array_equal(grown.scaler_.max_abs_, wide.scaler_.max_abs_)
    np.testing.assert_array_equal(grown.learner_.coef_, wide.learner_.coef_)
    np.testing.assert_array_equal(grown.predict(X_all), wide.predict(X_all))


def test_standard_scaling_and_other_learners_do_not_widen():
    from streamlearn.learners import make_learner, scaled_learner

    assert not can_widen(scaled_learner("pa1", make_learner("pa1"), "standard"))
    assert not can_widen(make_learner("arow"))
    assert not can_widen(scaled_learner("arow", make_learner("arow"), "maxabs"))
