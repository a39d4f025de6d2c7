"""streamlearn: online (streaming) machine learning at compiled speed.

Subpackages: ``linear_model`` (OGD, Perceptron, Passive-Aggressive, ...), ``second_order``,
``sparse``, ``facto``, ``sketch``, ``datasets`` (streaming LIBSVM reader, bundled a9a),
``evaluation`` (progressive validation, metrics, regret) and ``cli`` (the ``streamlearn`` command).
"""

from ._version import __version__
from . import facto, linear_model, persist, second_order, sketch  # noqa: F401  (registers loadable classes)
from .persist import load

__all__ = ["__version__", "load"]
