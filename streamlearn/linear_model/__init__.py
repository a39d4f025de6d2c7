"""Online linear learners with scikit-learn's estimator API."""

from ._first_order import (
    OGDClassifier,
    OGDRegressor,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    Perceptron,
)
from ._sparse import (
    FOBOSClassifier,
    FOBOSRegressor,
    FTRLProximalClassifier,
    FTRLProximalRegressor,
    RDAClassifier,
    RDARegressor,
    SimpleTruncationClassifier,
    SimpleTruncationRegressor,
    TruncatedGradientClassifier,
    TruncatedGradientRegressor,
)

__all__ = ["OGDClassifier", "OGDRegressor", "Perceptron", "PassiveAggressiveClassifier",
           "PassiveAggressiveRegressor"]
__all__ += ["SimpleTruncationClassifier", "SimpleTruncationRegressor", "TruncatedGradientClassifier",
            "TruncatedGradientRegressor", "FOBOSClassifier", "FOBOSRegressor", "RDAClassifier", "RDARegressor",
            "FTRLProximalClassifier", "FTRLProximalRegressor"]
