"""RFD0-SON's alpha = 0 step is App. A's pseudo-inverse Newton step, not a numerical artefact.

A well-predicted example whose x brings a new direction gets the step ``-H^+ g`` with H = B^T B: along the
new direction it has size ``1 / ((mu + eta_t) |dl| b)`` (b = x's component off the earlier rows), so the
smaller the loss, the larger the step (tools/rfd0_blowup.py, rfd0_alpha0_audit.py on farm-ads). The
dense kernel, the lazy kernel and the NumPy twin must all take exactly that step: a numerical-rank cut-off
large enough to suppress it would change the algorithm (tuning), not its numerics.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn.second_order import SketchedOnlineNewton
from tests.naive_son import naive_son

MU = 1.0 / 8.0


def _two_examples():
    # example 1: x1 = e1, y = +1, z = 0 -> dl = -2; H^+ g1 = g1 / ((mu + 1) |g1|^2): u.e1 = 1 / (2 (mu + 1))
    u1 = 1.0 / (2.0 * (MU + 1.0))
    a = 0.99 / u1  # example 2 scores u.x2 = 0.99 against y = +1: dl = -0.02, a small loss
    X = np.zeros((2, 5))
    X[0, 0] = 1.0
    X[1, 0], X[1, 1] = a, 1.0  # b = 1: x2's component off the first row is e2
    return X, np.array([1, 1])


@pytest.mark.parametrize("lazy", [False, True])
def test_alpha0_new_direction_step_is_the_pseudo_inverse_step(lazy):
    X, y = _two_examples()
    est = SketchedOnlineNewton(sketch="rfd", ell=3, alpha0=0.0)
    est._lazy_kernel = lazy
    scores = est.partial_fit_scores(sp.csr_matrix(X), y, classes=[-1, 1])
    np.testing.assert_allclose(scores[:, -1] if scores.ndim == 2 else scores, [0.0, 0.99], rtol=0, atol=1e-12)
    assert est.alpha_[0] == 0.0  # still in the alpha = 0 phase
    dl = 2.0 * (0.99 - 1.0)
    expected = -1.0 / ((MU + 0.5) * dl * 1.0)  # = 80: -H^+ g2 along e2 (eta_2 = 1/2)
    assert est.coef_[0, 1] == pytest.approx(expected, rel=1e-9)
    ns, nw, nal = naive_son(X, y, sketch="rfd", ell=3, alpha0=0.0, mu=MU, eta=1.0, C=1.0, loss="squared")
    np.testing.assert_allclose(est.coef_[0], nw, rtol=0, atol=1e-8)
    assert nal == 0.0
