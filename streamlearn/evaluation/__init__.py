"""Evaluation of online learners: progressive validation, test metrics after a pass, regret.

* :func:`progressive_validation` / :func:`iter_progressive_validation`: test-then-train over a stream,
  with Vowpal-Wabbit-style checkpoint rows at 1, 2, 4, 8, ... examples (ALGORITHMS.md section 1).
* :func:`evaluate`: metrics of a frozen model on held-out data.
* :func:`regret`: cumulative online loss minus that of the best fixed linear predictor in hindsight.

The ``experiments`` subpackage (paper reproductions run by ``streamlearn experiment``) is imported lazily.
"""

from ._metrics import evaluate
from ._progressive import (ProgressiveResult, iter_array_chunks, iter_progressive_validation,
                           progressive_validation)
from ._regret import RegretResult, regret

__all__ = ["evaluate", "iter_array_chunks", "iter_progressive_validation", "progressive_validation",
           "ProgressiveResult", "regret", "RegretResult"]
from .spectral import covariance_errors, relative_spectral_error  # noqa: E402,F401  (sketch accuracy)
