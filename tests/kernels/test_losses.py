"""The jitted losses (streamlearn._kernels.losses) against the NumPy ones (streamlearn.losses), and every
derivative against a central difference of its loss."""

import numba
import numpy as np
import pytest

from streamlearn._kernels import losses as k
from streamlearn.losses import LOSSES, loss_dloss, loss_value


@numba.njit
def _kernel_values(code, y, z, param):
    value = np.empty(z.shape[0])
    dloss = np.empty(z.shape[0])
    for i in range(z.shape[0]):
        value[i] = k.loss_value(code, y[i], z[i], param)
        dloss[i] = k.loss_dloss(code, y[i], z[i], param)
    return value, dloss


def _scores(y):
    """Scores from 1e-2 to 30 in size, both signs."""
    rng = np.random.default_rng(0)
    return rng.normal(size=y.shape[0]) * 10.0 ** rng.uniform(-2, 1.5, y.shape[0])


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_kernel_loss_is_the_numpy_loss(name):
    code, param_name = LOSSES[name]
    param = 0.3 if param_name else 0.0
    y = np.where(np.arange(400) % 2 == 0, 1.0, -1.0)
    if name == "epsilon_insensitive":
        y = y * 2.5
    z = np.r_[_scores(y[:-4]), -1.0, 1.0, 0.0, -3.0]
    value, dloss = _kernel_values(code, y, z, param)
    np.testing.assert_allclose(value, loss_value(name, y, z, param), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(dloss, loss_dloss(name, y, z, param), rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_derivative_is_the_slope_of_the_loss(name):
    """Central differences, at scores away from the kinks (hinge 1, perceptron 0, eps band, Huber's -1 and 1)."""
    _, param_name = LOSSES[name]
    param = 0.3 if param_name else 0.0
    y = np.where(np.arange(400) % 2 == 0, 1.0, -1.0)
    z = _scores(y)
    kinks = np.array([-1.0, 0.0, 1.0]) if name != "epsilon_insensitive" else np.array([-param, param])
    r = y * z if name != "epsilon_insensitive" else z - y
    smooth = np.min(np.abs(r[:, None] - kinks[None, :]), axis=1) > 1e-3
    y, z = y[smooth], z[smooth]
    h = 1e-6
    slope = (loss_value(name, y, z + h, param) - loss_value(name, y, z - h, param)) / (2 * h)
    np.testing.assert_allclose(loss_dloss(name, y, z, param), slope, rtol=1e-5, atol=1e-6)
