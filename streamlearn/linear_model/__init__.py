"""Online linear learners with scikit-learn's estimator API."""

from ._confidence import (
    MAX_FULL_FEATURES,
    AROWClassifier,
    ConfidenceWeightedClassifier,
    SoftConfidenceWeightedClassifier,
)
from ._first_order import (
    OGDClassifier,
    OGDRegressor,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    Perceptron,
)
from ._pegasos import PegasosClassifier
from ._svm import BlockMinimizationSVC, DualCoordinateDescentSVC
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
__all__ += ["ConfidenceWeightedClassifier", "AROWClassifier", "SoftConfidenceWeightedClassifier", "MAX_FULL_FEATURES",
            "PegasosClassifier", "DualCoordinateDescentSVC", "BlockMinimizationSVC"]
__all__ += ["SimpleTruncationClassifier", "SimpleTruncationRegressor", "TruncatedGradientClassifier",
            "TruncatedGradientRegressor", "FOBOSClassifier", "FOBOSRegressor", "RDAClassifier", "RDARegressor",
            "FTRLProximalClassifier", "FTRLProximalRegressor"]
