"""Online linear learners with scikit-learn's estimator API.

The classes are imported on first access (``streamlearn._lazy``): using FTRL does not import the
confidence-weighted or SVM kernels.
"""

from .._lazy import lazy_exports

#: where each public name is defined, in the order of ``__all__`` (and of the API reference)
_WHERE = {
    "._first_order": [
        "OGDClassifier",
        "OGDRegressor",
        "Perceptron",
        "PassiveAggressiveClassifier",
        "PassiveAggressiveRegressor",
    ],
    "._confidence": [
        "ConfidenceWeightedClassifier",
        "AROWClassifier",
        "SoftConfidenceWeightedClassifier",
        "MAX_FULL_FEATURES",
    ],
    "._pegasos": ["PegasosClassifier"],
    "._svm": ["DualCoordinateDescentSVC", "BlockMinimizationSVC"],
    "._sparse": [
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
    ],
    "._nag": ["NAGClassifier", "NAGRegressor"],
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _WHERE)
