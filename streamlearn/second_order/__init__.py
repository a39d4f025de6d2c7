"""streamlearn.second_order: AdaGrad, full online Newton step and the sketched online Newton step (SON).

ALGORITHMS.md 6.1-6.4 (RFD paper, seed 004).
"""

from ._son import FULL_ON_MAX_FEATURES, AdaGrad, OnlineNewtonStep, SketchedOnlineNewton

__all__ = ["AdaGrad", "OnlineNewtonStep", "SketchedOnlineNewton", "FULL_ON_MAX_FEATURES"]
