"""streamlearn: online (streaming) machine learning at compiled speed.

Subpackages: ``linear_model`` (OGD, Perceptron, Passive-Aggressive, ...), ``second_order``,
``sparse``, ``facto``, ``sketch``, ``datasets`` (streaming LIBSVM reader, bundled a9a),
``evaluation`` (progressive validation, metrics, regret) and ``cli`` (the ``streamlearn`` command).
Subpackages are imported on first access (``streamlearn._lazy``), so ``streamlearn train`` imports only
what its learner needs.
"""

from . import persist
from ._lazy import ImportingRegistry, lazy_attributes
from ._version import __version__
from .persist import load

# Classes register with persist when their module is imported; a model file names its class's public
# module, which the registry imports on a miss (subpackages are lazy).
persist._REGISTRY = ImportingRegistry(persist._REGISTRY)

_SUBPACKAGES = ("cli", "datasets", "distributed", "evaluation", "facto", "linear_model", "second_order", "sketch")
__getattr__, __dir__ = lazy_attributes(__name__, globals(), dict.fromkeys(_SUBPACKAGES, ""))

__all__ = ["__version__", "load"]
