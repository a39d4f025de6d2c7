"""Widening a fitted linear model when a one-pass stream brings a feature index beyond its width.

A model read from a pipe cannot know the feature-space width in advance. For the learners listed in
``WIDENABLE`` every per-feature number is exactly 0 for a feature never seen: the weight in ``coef_``, and
with ``average=True`` the running weight and the averaging sum, with ``normalized=True`` the feature's scale
and accumulator. Padding each of those arrays with zeros for the new features gives the model that allocating
the final width up front would have given, bit for bit. The same holds behind a streaming ``MaxAbsScaler``
(its largest absolute value is 0 for a feature never seen), so a ``StreamPipeline`` of one with a widenable
learner widens too. Other learners and scalers keep per-feature state with other initial values
(covariances, latent factors, sketches, the standard scaler's counts): they need the width up front.

>>> import numpy as np
>>> from streamlearn.linear_model import PassiveAggressiveClassifier
>>> clf = PassiveAggressiveClassifier().partial_fit(np.eye(2), [-1, 1], classes=[-1, 1])
>>> widen(clf, 4).coef_.shape
(1, 4)
"""

import numpy as np

__all__ = ["PER_FEATURE", "WIDENABLE", "can_widen", "widen"]

WIDENABLE = frozenset(
    {"PassiveAggressiveClassifier", "PassiveAggressiveRegressor", "OGDClassifier", "OGDRegressor", "Perceptron"}
)


def can_widen(est):
    """True when ``est`` can grow its width while it learns (see the module docstring)."""
    if type(est).__name__ == "StreamPipeline":
        scaler = est.scaler
        return (
            (scaler is None or type(scaler).__name__ == "MaxAbsScaler")
            and est.target_scaler is None
            and can_widen(est.learner)
        )
    return type(est).__name__ in WIDENABLE


#: the per-feature arrays of the widenable learners and of MaxAbsScaler (attribute -> the axis of the features)
PER_FEATURE = {"coef_": -1, "running_coef_": -1, "average_sum_": -1, "_state_feat": 0, "max_abs_": -1}


def widen(est, n_features):
    """Pad a started estimator's per-feature arrays (``PER_FEATURE``) with zeros up to ``n_features``
    features; returns ``est``."""
    if not can_widen(est):
        raise TypeError(f"{type(est).__name__} cannot widen its feature space after it started learning.")
    d = int(est.n_features_in_)
    if n_features <= d:
        return est
    steps = (est.scaler_, est.learner_) if type(est).__name__ == "StreamPipeline" else (est,)
    for step in steps:
        if step is None:
            continue
        for name, axis in PER_FEATURE.items():
            a = step.__dict__.get(name)
            if a is not None:
                pad = [(0, 0)] * a.ndim
                pad[axis] = (0, n_features - d)
                setattr(step, name, np.pad(a, pad))
        step.n_features_in_ = int(n_features)
    return est
