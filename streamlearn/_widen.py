"""Widening a fitted linear model when a one-pass stream brings a feature index beyond its width.

A model read from a pipe cannot know the feature-space width in advance. For the learners listed in
``WIDENABLE`` the whole per-feature state is ``coef_`` and a feature never seen has weight exactly 0, so
padding ``coef_`` with zero columns gives the model that allocating the final width up front would have
given, bit for bit. Other learners keep per-feature state with other initial values (covariances,
accumulators, latent factors, sketches): they need the width up front.

>>> import numpy as np
>>> from streamlearn.linear_model import PassiveAggressiveClassifier
>>> clf = PassiveAggressiveClassifier().partial_fit(np.eye(2), [-1, 1], classes=[-1, 1])
>>> widen(clf, 4).coef_.shape
(1, 4)
"""

import numpy as np

__all__ = ["WIDENABLE", "can_widen", "widen"]

WIDENABLE = frozenset(
    {"PassiveAggressiveClassifier", "PassiveAggressiveRegressor", "OGDClassifier", "OGDRegressor", "Perceptron"}
)


def can_widen(est):
    """True when ``est`` can grow its width while it learns (see the module docstring)."""
    return type(est).__name__ in WIDENABLE


def widen(est, n_features):
    """Pad a started estimator's ``coef_`` with zero columns up to ``n_features``; returns ``est``."""
    if not can_widen(est):
        raise TypeError(f"{type(est).__name__} cannot widen its feature space after it started learning.")
    d = int(est.n_features_in_)
    if n_features <= d:
        return est
    coef = est.coef_
    pad = [(0, 0)] * (coef.ndim - 1) + [(0, n_features - d)]
    est.coef_ = np.pad(coef, pad)
    est.n_features_in_ = int(n_features)
    return est
