"""Factorization machines trained online.

* :class:`FMClassifier` / :class:`FMRegressor`: vanilla FM (Rendle 2010), SGD or AdaGrad, O(k nnz) per example.
* :class:`CCFMOnlineGradientClassifier` / :class:`CCFMOnlineGradientRegressor`: the compact convexified FM
  (Lin et al., WWW 2018) by projected online gradient descent (eigendecomposition per projection): the expensive baseline.
* :class:`OCCFMClassifier` / :class:`OCCFMRegressor`: OCCFM, projection-free online conditional gradient
  (Lin et al., WWW 2018, Alg. 2), exact (dense) or scalable (low-rank) state.
"""

from . import _ccfm, _fm
from ._ccfm import *  # noqa: F403
from ._fm import *  # noqa: F403

__all__ = [*_fm.__all__, *_ccfm.__all__]
