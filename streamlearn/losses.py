"""Public loss names, their kernel codes, and NumPy twins for documentation, tests and evaluation.

Every loss takes the target ``y`` (classification: -1/+1) and the raw score ``z`` and follows the table
in :mod:`streamlearn._kernels.losses`. The NumPy functions are vectorised and are what the evaluation
module uses to compute average losses from the kernels' pre-update scores.
"""

import numpy as np

from ._kernels import losses as _k
from ._typing import ArrayLike, FloatArray

__all__ = ["LOSSES", "loss_code", "loss_value", "loss_dloss", "CLASSIFICATION_LOSSES", "REGRESSION_LOSSES"]

#: name -> (kernel code, name of the estimator parameter it reads, or None)
LOSSES = {
    "hinge": (_k.LOSS_HINGE, None),
    "logistic": (_k.LOSS_LOGISTIC, None),
    "squared": (_k.LOSS_SQUARED, None),
    "perceptron": (_k.LOSS_PERCEPTRON, None),
    "epsilon_insensitive": (_k.LOSS_EPSILON_INSENSITIVE, "epsilon"),
    "modified_huber": (_k.LOSS_MODIFIED_HUBER, None),
}
CLASSIFICATION_LOSSES = ("hinge", "logistic", "squared", "perceptron", "modified_huber")
REGRESSION_LOSSES = ("squared", "epsilon_insensitive")


def loss_code(name: str) -> int:
    """Kernel code of the loss called ``name`` (a ValueError lists the known names otherwise).

    Examples
    --------
    >>> from streamlearn.losses import LOSSES, loss_code
    >>> loss_code("hinge") == LOSSES["hinge"][0]
    True
    """
    try:
        return LOSSES[name][0]
    except KeyError:
        raise ValueError(f"Unknown loss {name!r}; expected one of {sorted(LOSSES)}.") from None


def loss_value(name: str, y: ArrayLike, z: ArrayLike, param: float = 0.0) -> FloatArray:
    """Vectorised loss ``name`` of scores ``z`` against targets ``y``.

    >>> loss_value("hinge", np.array([1.0, -1.0]), np.array([0.5, 0.5]))
    array([0.5, 1.5])
    """
    y = np.asarray(y, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    if name == "hinge":
        return np.maximum(0.0, 1.0 - y * z)
    if name == "logistic":
        return np.logaddexp(0.0, -y * z)
    if name == "squared":
        return (z - y) ** 2
    if name == "perceptron":
        return np.maximum(0.0, -y * z)
    if name == "epsilon_insensitive":
        return np.maximum(0.0, np.abs(z - y) - param)
    if name == "modified_huber":
        m = y * z
        return np.where(m >= -1.0, np.maximum(0.0, 1.0 - m) ** 2, -4.0 * m)
    loss_code(name)  # raises with the list of names
    raise AssertionError(name)


def loss_dloss(name: str, y: ArrayLike, z: ArrayLike, param: float = 0.0) -> FloatArray:
    """Vectorised derivative of loss ``name`` with respect to the score ``z``.

    >>> loss_dloss("squared", np.array([1.0]), np.array([3.0]))
    array([4.])
    """
    y = np.asarray(y, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    if name == "hinge":
        return np.where(y * z < 1.0, -y, 0.0)
    if name == "logistic":
        return -y * _expit(-y * z)
    if name == "squared":
        return 2.0 * (z - y)
    if name == "perceptron":
        return np.where(y * z <= 0.0, -y, 0.0)
    if name == "epsilon_insensitive":
        r = z - y
        return np.where(r > param, 1.0, np.where(r < -param, -1.0, 0.0))
    if name == "modified_huber":
        m = y * z
        return np.where(m >= -1.0, -2.0 * y * np.maximum(0.0, 1.0 - m), -4.0 * y)
    loss_code(name)
    raise AssertionError(name)


def _expit(a):
    out = np.empty_like(a)
    pos = a >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-a[pos]))
    e = np.exp(a[~pos])
    out[~pos] = e / (1.0 + e)
    return out
