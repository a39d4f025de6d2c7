"""streamlearn: online (streaming) machine learning at compiled speed.

Subpackages: ``linear_model`` (OGD, Perceptron, Passive-Aggressive, ...), ``second_order``,
``sparse``, ``facto``, ``sketch``, ``datasets`` (streaming LIBSVM reader, bundled a9a),
``evaluation`` (progressive validation, metrics, regret), ``preprocessing`` (online scalers, the stream
pipeline) and ``cli`` (the ``streamlearn`` command).
Subpackages are imported on first access (``streamlearn._lazy``), so ``streamlearn train`` imports only
what its learner needs.
"""

from ._lazy import lazy_attributes
from ._version import __version__
from .persist import load

_SUBPACKAGES = ("cli", "datasets", "distributed", "evaluation", "facto", "linear_model", "preprocessing",
                "second_order", "sketch")
__getattr__, __dir__ = lazy_attributes(__name__, globals(), dict.fromkeys(_SUBPACKAGES, ""))

__all__ = ["__version__", "load"]
