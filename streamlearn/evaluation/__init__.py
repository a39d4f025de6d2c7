"""Evaluation of online learners: progressive validation, test metrics after a pass, regret.

* :func:`progressive_validation` / :func:`iter_progressive_validation`: test-then-train over a stream,
  with Vowpal-Wabbit-style checkpoint rows at 1, 2, 4, 8, ... examples.
* :func:`evaluate`: metrics of a frozen model on held-out data.
* :func:`regret`: cumulative online loss minus that of the best fixed linear predictor in hindsight.

Paper reproductions (``streamlearn experiment ...``) live in :mod:`streamlearn.experiments`.
"""

from .._lazy import lazy_exports

_WHERE = {
    "._metrics": ["evaluate"],
    "._progressive": [
        "iter_array_chunks",
        "iter_progressive_validation",
        "progressive_validation",
        "ProgressiveResult",
    ],
    "._regret": ["regret", "RegretResult"],
    ".spectral": ["covariance_errors", "relative_spectral_error"],
}
# imported on first access: ``streamlearn train`` needs neither sklearn.metrics nor scipy's optimisers
__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _WHERE)
