import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels.scale import maxabs_augment
from tests.naive_scale import naive_running_maxabs


@pytest.mark.parametrize("zero_weights", [False, True])
@pytest.mark.parametrize("density", [0.3, 1.0])
def test_running_maxabs_matches_twin(density, zero_weights):
    rng = np.random.default_rng(3)
    X = sp.random(60, 7, density=density, random_state=4, format="csr") * 10.0
    X.data -= 5.0
    start = np.abs(rng.standard_normal(7)) * (rng.random(7) < 0.5)
    scale = start.copy()
    sw = np.ones(60)
    if zero_weights:  # rows of weight 0 are scaled as predictions and leave the maxima as they are
        sw[rng.random(60) < 0.4] = 0.0
    indptr, indices, data = maxabs_augment(X.indptr, X.indices, X.data, scale, True, sw)
    want, want_scale = naive_running_maxabs(X.toarray(), start, sw)
    got = sp.csr_matrix((data, indices, indptr), shape=(60, 8)).toarray()[:, :7]
    np.testing.assert_allclose(got, want, rtol=1e-15)
    np.testing.assert_allclose(scale, want_scale, rtol=1e-15)
    assert np.all(np.abs(got) <= 1.0)


@pytest.mark.parametrize("update", [True, False])
def test_maxabs_augment_matches_twin(update):
    X = sp.random(40, 6, density=0.4, random_state=5, format="csr") * 7.0
    X.data -= 3.0
    start = np.array([0.0, 1.0, 2.0, 0.0, 5.0, 0.5])
    scale = start.copy()
    indptr, indices, data = maxabs_augment(X.indptr, X.indices, X.data, scale, update, np.ones(40))
    got = sp.csr_matrix((data, indices, indptr), shape=(40, 7)).toarray()
    if update:
        want, want_scale = naive_running_maxabs(X.toarray(), start)
    else:
        dense = X.toarray()
        s = np.maximum(start, np.abs(dense))
        want = np.divide(dense, s, out=np.zeros_like(dense), where=s > 0)
        want_scale = start
    np.testing.assert_allclose(got[:, :6], want, rtol=1e-15)
    np.testing.assert_array_equal(got[:, 6], 1.0)
    np.testing.assert_allclose(scale, want_scale, rtol=1e-15)
