"""streamlearn: online (streaming) machine learning at compiled speed.

Subpackages: ``linear_model`` (Perceptron, Passive-Aggressive, OGD, confidence-weighted, Pegasos, linear
SVMs and the sparse L1 learners: truncation, TG, FOBOS, RDA, FTRL-Proximal), ``second_order`` (AdaGrad,
online Newton step, sketched online Newton), ``facto`` (factorization machines, CCFM, OCCFM), ``sketch``
(streaming matrix sketches), ``model_selection`` (the progressive selection among learners),
``preprocessing`` (online scalers, the stream pipeline, dict hashing), ``datasets`` (streaming LIBSVM, VW,
CSV and Parquet readers, bundled a9a, the data-set zoo), ``evaluation`` (progressive validation, metrics,
regret), ``serve`` (the model server), ``experiments`` (paper reproductions), ``distributed`` (training on
Dask), ``persist`` (safe model files) and ``cli`` (the ``streamlearn`` command).
Subpackages are imported on first access (``streamlearn._lazy``), so ``streamlearn train`` imports only
what its learner needs.
"""

from ._lazy import lazy_attributes
from ._version import __version__

_SUBPACKAGES = (
    "cli",
    "datasets",
    "distributed",
    "evaluation",
    "experiments",
    "facto",
    "linear_model",
    "model_selection",
    "preprocessing",
    "second_order",
    "sketch",
)
__getattr__, __dir__ = lazy_attributes(__name__, globals(), {**dict.fromkeys(_SUBPACKAGES, ""), "load": ".persist"})

__all__ = ["__version__", "load"]
