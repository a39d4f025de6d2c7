"""relative_spectral_error / covariance_errors: exact for small d, Lanczos on the implicit difference above."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import aslinearoperator

from streamlearn.evaluation import covariance_errors, relative_spectral_error
from streamlearn.sketch import SKETCHES, FrequentDirections, RobustFrequentDirections


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


_ZERO = {
    "all-zero rows": np.zeros((9, 6)),
    "all-zero rows (CSR)": sp.csr_matrix((9, 6)),
    "no rows": np.zeros((0, 6)),
    "explicit zeros (CSR)": sp.csr_matrix((np.zeros(4), np.array([0, 2, 5, 1]), np.array([0, 3, 3, 4])), shape=(3, 6)),
}


@pytest.mark.parametrize("dense_max_d", [2000, 0])  # 0 forces Lanczos
@pytest.mark.parametrize("name", sorted(SKETCHES))
@pytest.mark.parametrize("kind", sorted(_ZERO))
def test_a_zero_matrix_sketched_exactly_has_zero_relative_errors(kind, name, dense_max_d):
    """A^T A = 0 and a zero sketch: exact, both relative errors 0 (not 0 / 0 = NaN)."""
    A = _ZERO[kind]
    s = SKETCHES[name](ell=2).partial_fit(A)
    e = covariance_errors(A, s, dense_max_d=dense_max_d)
    assert (e["spectral_error"], e["relative_spectral_error"], e["relative_frobenius_error"]) == (0.0, 0.0, 0.0)
    assert relative_spectral_error(A, s, normalization="frobenius") == 0.0


@pytest.mark.parametrize(
    "approx", [RobustFrequentDirections(ell=2, alpha0=0.5), (np.zeros((1, 6)), 0.5), np.eye(6)[:1]], ids=repr
)
def test_a_zero_matrix_with_a_non_zero_approximation_has_undefined_relative_errors(approx):
    A = np.zeros((4, 6))
    if hasattr(approx, "partial_fit"):
        approx = approx.partial_fit(A)
    msg = r"^The relative error of the sketch is undefined: \|\|A\^T A\|\|_2 is 0 \(A has no non-zero value\)"
    with pytest.raises(ValueError, match=msg + r".*; expected an A with a non-zero value, or a zero approximation\.$"):
        covariance_errors(A, approx)


def test_a_single_row_is_scored_like_any_matrix():
    A = np.array([[0.0, 3.0, 0.0, 4.0, 0.0, 0.0]])
    s = FrequentDirections(ell=2).partial_fit(A)
    e = covariance_errors(A, s)
    assert e["ata_norm"] == pytest.approx(25.0) and e["relative_spectral_error"] == pytest.approx(0.0, abs=1e-12)
    assert covariance_errors(A, np.zeros((1, 6)))["relative_spectral_error"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "option, bad",
    [
        ("max_iter", 0),
        ("max_iter", 1),
        ("max_iter", 2.5),
        ("tol", -1.0),
        ("tol", 0.0),
        ("tol", float("nan")),
        ("dense_max_d", -1),
        ("dense_max_d", "2000"),
        ("ata_norm", -1.0),
        ("ata_norm", float("inf")),
    ],
)
def test_bad_options_are_one_line_errors_naming_them(data, option, bad):
    s = FrequentDirections(ell=4).partial_fit(data)
    with pytest.raises(ValueError, match=rf"^{option} must be an? (int|float) in the range .*\. Got .* instead\.$"):
        covariance_errors(data, s, **{"dense_max_d": 0, option: bad})
