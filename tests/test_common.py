"""scikit-learn's estimator checks over every public streamlearn estimator, plus our online-specific checks."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from streamlearn.linear_model import (
    OGDClassifier,
    OGDRegressor,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    Perceptron,
)

ESTIMATORS = [
    OGDClassifier(),
    OGDClassifier(loss="hinge"),
    OGDRegressor(),
    Perceptron(),
    PassiveAggressiveClassifier(),
    PassiveAggressiveRegressor(),
]

# Checks that cannot hold for a learner whose result depends on the order of the examples, named with
# the reason. Everything else must pass.
_ORDER = ("an online learner makes one step per example: weight 2 is one step of twice the size, not two "
          "successive steps on a duplicated example, so the models differ")
_WEIGHTS = {"check_sample_weight_equivalence_on_dense_data": _ORDER,
            "check_sample_weight_equivalence_on_sparse_data": _ORDER}
_DIVERGE = ("squared-loss OGD with step eta0/sqrt(t) diverges on the check's unscaled features (mean 100); it "
            "raises FloatingPointError naming the example and eta0, as designed")
EXPECTED_FAILED = {
    "OGDClassifier": _WEIGHTS,
    "Perceptron": _WEIGHTS,
    "PassiveAggressiveClassifier": _WEIGHTS,
    "PassiveAggressiveRegressor": _WEIGHTS,
    "OGDRegressor": {**_WEIGHTS, "check_fit_check_is_fitted": _DIVERGE, "check_fit_idempotent": _DIVERGE,
                     "check_n_features_in": _DIVERGE},
}


def _expected_failed(estimator):
    return EXPECTED_FAILED.get(type(estimator).__name__, {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed, xfail_strict=True)
def test_sklearn_compatible(estimator, check):
    check(estimator)
