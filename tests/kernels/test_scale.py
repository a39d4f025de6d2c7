import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels.scale import running_maxabs_scale
from tests.naive_scale import naive_running_maxabs


@pytest.mark.parametrize("density", [0.3, 1.0])
def test_running_maxabs_matches_twin(density):
    rng = np.random.default_rng(3)
    X = sp.random(60, 7, density=density, random_state=4, format="csr") * 10.0
    X.data -= 5.0
    start = np.abs(rng.standard_normal(7)) * (rng.random(7) < 0.5)
    scale = start.copy()
    data = running_maxabs_scale(X.indptr, X.indices, X.data, scale)
    want, want_scale = naive_running_maxabs(X.toarray(), start)
    got = sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape).toarray()
    np.testing.assert_allclose(got, want, rtol=1e-15)
    np.testing.assert_allclose(scale, want_scale, rtol=1e-15)
    assert np.all(np.abs(got) <= 1.0)
