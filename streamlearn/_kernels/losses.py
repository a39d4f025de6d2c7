"""Loss functions as integer codes, jitted.

Convention for every loss: ``y`` is the target (classification: -1 or +1), ``z`` the raw score w.x.
``loss_value(code, y, z, param)`` is the loss, ``loss_dloss(code, y, z, param)`` its derivative with respect
to ``z`` (a sub-gradient where the loss has a kink: we take the one-sided value used by the papers).

=================  ============================  ==============================  =========
code               value                         d/dz                            param
=================  ============================  ==============================  =========
LOSS_HINGE         max(0, 1 - y z)               -y if y z < 1 else 0            -
LOSS_LOGISTIC      log(1 + exp(-y z))            -y sigmoid(-y z)                -
LOSS_SQUARED       (z - y)^2  (no 1/2 factor)    2 (z - y)                       -
LOSS_PERCEPTRON    max(0, -y z)                  -y if y z <= 0 else 0           -
LOSS_EPS_INSENS.   max(0, |z - y| - eps)         sgn(z - y) if |z - y| > eps     eps
LOSS_MOD_HUBER     max(0, 1 - y z)^2 if y z >=   -2 y max(0, 1 - y z) if y z      -
                   -1, else -4 y z               >= -1, else -4 y
=================  ============================  ==============================  =========

The modified Huber loss (Zhang, "Solving large scale linear prediction problems using stochastic gradient
descent algorithms", ICML 2004) is the squared loss of the score clipped to the label range [-1, 1]: the
gradient a squared-loss learner takes when it clips its prediction to [-1, 1] before the update, as Vowpal
Wabbit does with its default squared loss on -1/+1 labels.

The squared loss has no 1/2 so that its strong-convexity constant is the one the RFD paper derives
(mu = 1/(8 C^2)); see Algorithms §6.1.
"""

import math

from ._numba import njit_inline

LOSS_HINGE = 0
LOSS_LOGISTIC = 1
LOSS_SQUARED = 2
LOSS_PERCEPTRON = 3
LOSS_EPSILON_INSENSITIVE = 4
LOSS_MODIFIED_HUBER = 5


@njit_inline
def log1pexp(a):
    """Stable log(1 + exp(a))."""
    if a > 0.0:
        return a + math.log1p(math.exp(-a))
    return math.log1p(math.exp(a))


@njit_inline
def sigmoid(a):
    """Stable 1 / (1 + exp(-a))."""
    if a >= 0.0:
        return 1.0 / (1.0 + math.exp(-a))
    e = math.exp(a)
    return e / (1.0 + e)


@njit_inline
def loss_value(code, y, z, param):
    if code == LOSS_HINGE:
        m = 1.0 - y * z
        return m if m > 0.0 else 0.0
    if code == LOSS_LOGISTIC:
        return log1pexp(-y * z)
    if code == LOSS_SQUARED:
        r = z - y
        return r * r
    if code == LOSS_PERCEPTRON:
        m = -y * z
        return m if m > 0.0 else 0.0
    if code == LOSS_MODIFIED_HUBER:
        m = y * z
        if m >= 1.0:
            return 0.0
        return (1.0 - m) * (1.0 - m) if m >= -1.0 else -4.0 * m
    # LOSS_EPSILON_INSENSITIVE
    r = abs(z - y) - param
    return r if r > 0.0 else 0.0


@njit_inline
def loss_dloss(code, y, z, param):
    if code == LOSS_HINGE:
        return -y if y * z < 1.0 else 0.0
    if code == LOSS_LOGISTIC:
        return -y * sigmoid(-y * z)
    if code == LOSS_SQUARED:
        return 2.0 * (z - y)
    if code == LOSS_PERCEPTRON:
        return -y if y * z <= 0.0 else 0.0
    if code == LOSS_MODIFIED_HUBER:
        m = y * z
        if m >= 1.0:
            return 0.0
        return -2.0 * y * (1.0 - m) if m >= -1.0 else -4.0 * y
    # LOSS_EPSILON_INSENSITIVE
    r = z - y
    if r > param:
        return 1.0
    if r < -param:
        return -1.0
    return 0.0


@njit_inline
def weighted_dloss(code, y, z, s):
    """``s l'(z)`` (loss parameter 0) for an example of sample weight ``s``, and 0.0 for weight 0: an example of
    weight 0 is scored only, so a kernel skips the update when this is 0."""
    if s == 0.0:
        return 0.0
    return loss_dloss(code, y, z, 0.0) * s
