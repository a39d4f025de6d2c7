"""relative_spectral_error / covariance_errors: exact for small d, Lanczos on the implicit difference above."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import aslinearoperator

from streamlearn.evaluation import covariance_errors, relative_spectral_error
from streamlearn.sketch import FrequentDirections, RobustFrequentDirections


def _reference(A, B, alpha):
    ata = A.T @ A
    w = np.linalg.eigvalsh(ata - B.T @ B - alpha * np.eye(A.shape[1]))
    err = max(abs(w[0]), abs(w[-1]))
    return err / np.linalg.eigvalsh(ata)[-1], err / (A * A).sum()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((150, 4)) @ rng.standard_normal((4, 260)) + 0.2 * rng.standard_normal((150, 260))
    A[rng.random(A.shape) < 0.5] = 0.0
    return A


@pytest.mark.parametrize("cls", [FrequentDirections, RobustFrequentDirections])
@pytest.mark.parametrize("dense_max_d", [2000, 0])  # 0 forces Lanczos
def test_matches_dense_eigenvalues(data, cls, dense_max_d):
    s = cls(ell=6).partial_fit(data)
    spec, frob = _reference(data, s.sketch_, getattr(s, "alpha_", 0.0))
    e = covariance_errors(sp.csr_matrix(data), s, dense_max_d=dense_max_d)
    assert e["converged"]
    assert e["relative_spectral_error"] == pytest.approx(spec, rel=1e-6)
    assert e["relative_frobenius_error"] == pytest.approx(frob, rel=1e-6)
    assert relative_spectral_error(data, s, dense_max_d=dense_max_d) == pytest.approx(spec, rel=1e-6)
    assert relative_spectral_error(data, s, normalization="frobenius") == pytest.approx(frob, rel=1e-6)


def test_accepts_arrays_tuples_and_operators(data):
    s = RobustFrequentDirections(ell=5).partial_fit(data)
    B, alpha = np.array(s.sketch_), s.alpha_
    expected = relative_spectral_error(data, s)
    assert relative_spectral_error(data, (B, alpha)) == pytest.approx(expected, rel=1e-10)
    op = aslinearoperator(B.T @ B + alpha * np.eye(data.shape[1]))
    assert relative_spectral_error(data, op, dense_max_d=0) == pytest.approx(expected, rel=1e-6)
    assert relative_spectral_error(data, B) == pytest.approx(_reference(data, B, 0.0)[0], rel=1e-10)


def test_errors(data):
    with pytest.raises(ValueError, match="A has d=260 features"):
        relative_spectral_error(data, np.ones((3, 5)))
    with pytest.raises(ValueError, match="normalization must be one of"):
        relative_spectral_error(data, np.ones((3, 260)), normalization="nuclear")
    bad = data.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="A contains NaN"):
        relative_spectral_error(bad, np.ones((3, 260)))


def test_lanczos_warns_when_out_of_steps(data):
    s = RobustFrequentDirections(ell=5).partial_fit(data)
    with pytest.warns(RuntimeWarning, match="did not reach tol"):
        e = covariance_errors(data, s, dense_max_d=0, max_iter=4, tol=1e-12)
    assert not e["converged"]
