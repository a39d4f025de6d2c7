"""Online linear learners with scikit-learn's estimator API.

The classes are imported on first access (``streamlearn._lazy``): using FTRL does not import the
confidence-weighted or SVM kernels.
"""

from .._lazy import lazy_attributes

_WHERE = {
    "._confidence": [
        "MAX_FULL_FEATURES",
        "AROWClassifier",
        "ConfidenceWeightedClassifier",
        "SoftConfidenceWeightedClassifier",
    ],
    "._first_order": [
        "OGDClassifier",
        "OGDRegressor",
        "PassiveAggressiveClassifier",
        "PassiveAggressiveRegressor",
        "Perceptron",
    ],
    "._nag": ["NAGClassifier", "NAGRegressor"],
    "._pegasos": ["PegasosClassifier"],
    "._svm": ["BlockMinimizationSVC", "DualCoordinateDescentSVC"],
    "._sparse": [
        "FOBOSClassifier",
        "FOBOSRegressor",
        "FTRLProximalClassifier",
        "FTRLProximalRegressor",
        "RDAClassifier",
        "RDARegressor",
        "SimpleTruncationClassifier",
        "SimpleTruncationRegressor",
        "TruncatedGradientClassifier",
        "TruncatedGradientRegressor",
    ],
}
__getattr__, __dir__ = lazy_attributes(__name__, globals(), {n: m for m, names in _WHERE.items() for n in names})

__all__ = ["OGDClassifier", "OGDRegressor", "Perceptron", "PassiveAggressiveClassifier", "PassiveAggressiveRegressor"]
__all__ += [
    "ConfidenceWeightedClassifier",
    "AROWClassifier",
    "SoftConfidenceWeightedClassifier",
    "MAX_FULL_FEATURES",
    "PegasosClassifier",
    "DualCoordinateDescentSVC",
    "BlockMinimizationSVC",
]
__all__ += [
    "SimpleTruncationClassifier",
    "SimpleTruncationRegressor",
    "TruncatedGradientClassifier",
    "TruncatedGradientRegressor",
    "FOBOSClassifier",
    "FOBOSRegressor",
    "RDAClassifier",
    "RDARegressor",
    "FTRLProximalClassifier",
    "FTRLProximalRegressor",
]
__all__ += ["NAGClassifier", "NAGRegressor"]
