"""Online linear learners with scikit-learn's estimator API."""

from ._first_order import (
    OGDClassifier,
    OGDRegressor,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    Perceptron,
)

__all__ = ["OGDClassifier", "OGDRegressor", "Perceptron", "PassiveAggressiveClassifier",
           "PassiveAggressiveRegressor"]
