"""streamlearn.second_order: AdaGrad, full online Newton step and the sketched online Newton step (SON).

Algorithms §6.1-6.4 (Luo et al., JMLR 2019).
"""

from ._son import FULL_ON_MAX_FEATURES, AdaGrad, OnlineNewtonStep, SketchedOnlineNewton

__all__ = ["AdaGrad", "OnlineNewtonStep", "SketchedOnlineNewton", "FULL_ON_MAX_FEATURES"]
