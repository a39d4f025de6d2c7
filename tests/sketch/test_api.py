"""The verb set shared by every sketch, persistence, and clear errors for bad input."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from streamlearn import load
from streamlearn.sketch import (
    SKETCHES,
    CompensativeFD,
    FrequentDirections,
    OjaSketch,
    ParameterizedFD,
    RandomProjectionSketch,
    RobustFrequentDirections,
)

rng = np.random.default_rng(0)
A = rng.standard_normal((120, 6)) @ rng.standard_normal((6, 20)) + 0.1 * rng.standard_normal((120, 20))

ALL = [
    FrequentDirections(ell=5),
    FrequentDirections(ell=5, fast=False),
    ParameterizedFD(ell=5, beta=0.6),
    CompensativeFD(ell=5),
    RobustFrequentDirections(ell=5, alpha0=0.5),
    RandomProjectionSketch(ell=5, random_state=1),
    RandomProjectionSketch(ell=5, kind="sparse-sign", random_state=1),
    OjaSketch(ell=5, random_state=1),
]


def _gram(s):
    B = s.sketch_
    return B.T @ B + getattr(s, "alpha_", 0.0) * np.eye(B.shape[1])


@pytest.mark.parametrize("sketch", ALL, ids=repr)
def test_rows_one_by_one_chunks_dense_and_csr_agree(sketch):
    whole = clone(sketch).partial_fit(A)
    by_row = clone(sketch)
    for i, a in enumerate(A):
        by_row.update(a if i % 2 else sp.csr_matrix(a))
    chunked = clone(sketch).partial_fit(sp.csr_matrix(A[:37])).partial_fit(A[37:90]).partial_fit(sp.csr_matrix(A[90:]))
    scale = float((A * A).sum())
    for other in (by_row, chunked):
        assert other.n_seen_ == whole.n_seen_ == len(A)
        np.testing.assert_allclose(_gram(other), _gram(whole), atol=1e-9 * scale)


@pytest.mark.parametrize("sketch", ALL, ids=repr)
def test_save_load_round_trip_and_continue(sketch, tmp_path):
    s = clone(sketch).partial_fit(A[:70])
    s.sketch_  # the cache is saved too; it must stay consistent
    path = tmp_path / "sketch.slm"
    s.save(path)
    back = load(path)
    assert type(back) is type(s) and back.get_params() == s.get_params()
    np.testing.assert_array_equal(back.sketch_, s.sketch_)
    s.partial_fit(A[70:])
    back.partial_fit(A[70:])
    np.testing.assert_array_equal(back.sketch_, s.sketch_)
    assert back.n_seen_ == s.n_seen_ == len(A)


@pytest.mark.parametrize("sketch", ALL, ids=repr)
def test_verbs_shapes_and_operators(sketch):
    s = clone(sketch)
    assert s.is_empty() and s.n_seen_ == 0
    with pytest.raises(NotFittedError, match="Call 'partial_fit'"):
        s.sketch_
    s.partial_fit(A)
    assert not s.is_empty() and s.sketch_.shape == (5, 20) and s.n_features_in_ == 20
    with pytest.raises(AttributeError):
        s.n_seen_ = 3
    with pytest.raises(ValueError):
        s.sketch_[0, 0] = 1.0  # read-only result
    G = _gram(s)
    v = rng.standard_normal(20)
    V = rng.standard_normal((20, 3))
    op = s.covariance_operator()
    np.testing.assert_allclose(op @ v, G @ v, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(op @ V, G @ V, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(s.solve(V, extra_alpha=0.7), np.linalg.solve(G + 0.7 * np.eye(20), V), rtol=1e-8)
    if getattr(s, "alpha_", 0.0) > 0:
        np.testing.assert_allclose(s.solve(v), np.linalg.solve(G, v), rtol=1e-8)
    else:
        with pytest.raises(ValueError, match="singular.*extra_alpha > 0"):
            s.solve(v)
    with pytest.raises(ValueError, match=r"v must have shape \(20,\)"):
        s.solve(np.ones(3), extra_alpha=1.0)


@pytest.mark.parametrize("name", sorted(SKETCHES))
def test_bad_input_gives_clear_errors(name):
    cls = SKETCHES[name]
    with pytest.raises(ValueError, match=r"ell=20 must be smaller than the number of features of X \(d=20\)"):
        cls(ell=20).partial_fit(A)
    bad = A[:10].copy()
    bad[4, 3] = np.nan
    with pytest.raises(ValueError, match="X row 4 contains NaN or infinity"):
        cls(ell=3).partial_fit(bad)
    with pytest.raises(ValueError, match="X row 4 contains NaN or infinity"):
        cls(ell=3).partial_fit(sp.csr_matrix(bad))
    s = cls(ell=3).partial_fit(A[:5])
    with pytest.raises(ValueError, match="X has 7 features, but .* was fitted with 20"):
        s.partial_fit(np.ones((2, 7)))
    with pytest.raises(ValueError, match="must be 2-D.*update"):
        s.partial_fit(np.ones(20))
    with pytest.raises(ValueError, match="could not convert"):
        s.partial_fit([["a"] * 20])
    with pytest.raises(ValueError, match="squared Frobenius norm of X is .*overflow"):
        s.partial_fit(np.full((1, 20), 1e151))
    assert s.n_seen_ == 5  # nothing half-written
    with pytest.raises(ValueError, match="The 'ell' parameter of .* must be an int in the range"):
        cls(ell=0).partial_fit(A)
    with pytest.raises(ValueError, match="parameters changed after sketching started"):
        s.set_params(ell=4).partial_fit(A)


def test_ell_below_two_is_undefined_for_the_fd_family():
    for cls in (FrequentDirections, ParameterizedFD, CompensativeFD, RobustFrequentDirections):
        with pytest.raises(
            ValueError,
            match=rf"The 'ell' parameter of {cls.__name__} must be an int in the "
            r"range \[2, inf\). Got 1 instead.",
        ):
            cls(ell=1).partial_fit(A)
    RandomProjectionSketch(ell=1).partial_fit(A)  # defined for RP and Oja
    OjaSketch(ell=1).partial_fit(A)
    with pytest.raises(
        ValueError,
        match=r"'beta' parameter of ParameterizedFD must be a float in the range "
        r"\(0.0, 1.0\]",
    ):
        ParameterizedFD(ell=3, beta=0.0).partial_fit(A)
    with pytest.raises(ValueError, match="'alpha0' parameter"):
        RobustFrequentDirections(ell=3, alpha0=-1.0).partial_fit(A)
    with pytest.raises(ValueError, match="'kind' parameter"):
        RandomProjectionSketch(ell=3, kind="uniform").partial_fit(A)


def test_merge_errors():
    fd = FrequentDirections(ell=4).partial_fit(A)
    with pytest.raises(TypeError, match="cannot merge a RobustFrequentDirections into a FrequentDirections"):
        fd.merge(RobustFrequentDirections(ell=4).partial_fit(A))
    with pytest.raises(ValueError, match="The other sketch has 21 features, but FrequentDirections was fitted with 20"):
        fd.merge(FrequentDirections(ell=4).partial_fit(np.ones((3, 21))))
    with pytest.raises(ValueError, match="ell=5 in the other sketch, 4 in this one"):
        fd.merge(FrequentDirections(ell=5).partial_fit(A))
    with pytest.raises(ValueError, match="alpha0=1.0 in the other sketch, 0.0 in this one"):
        RobustFrequentDirections(ell=4).merge(RobustFrequentDirections(ell=4, alpha0=1.0).partial_fit(A))
    with pytest.raises(ValueError, match="same seed"):
        RandomProjectionSketch(ell=4, random_state=0).partial_fit(A).merge(
            RandomProjectionSketch(ell=4, random_state=0).partial_fit(A)
        )
    with pytest.raises(NotImplementedError, match="OjaSketch cannot be merged"):
        OjaSketch(ell=3).partial_fit(A).merge(OjaSketch(ell=3).partial_fit(A))
    assert fd.n_seen_ == len(A)


def test_merge_into_empty_and_of_empty():
    s = FrequentDirections(ell=4).partial_fit(A)
    empty = FrequentDirections(ell=4)
    before = s.sketch_.copy()
    s.merge(empty)
    np.testing.assert_array_equal(s.sketch_, before)
    empty.merge(s)
    np.testing.assert_allclose(empty.sketch_.T @ empty.sketch_, before.T @ before, atol=1e-9 * (A * A).sum())
    assert empty.n_seen_ == len(A)


def test_a_refused_merge_leaves_an_empty_sketch_empty():
    """RP sketches with one seed cannot merge; the empty sketch merged into was fixed to the other's width."""
    empty = RandomProjectionSketch(ell=2, random_state=0)
    with pytest.raises(ValueError, match="same seed"):
        empty.merge(RandomProjectionSketch(ell=2, random_state=0).partial_fit(A))
    assert empty.is_empty() and not hasattr(empty, "n_features_in_")
    assert empty.partial_fit(A[:, :5]).n_features_in_ == 5


def test_rp_merge_adds_and_seeds_matter():
    a = RandomProjectionSketch(ell=4, random_state=1).partial_fit(A[:60])
    b = RandomProjectionSketch(ell=4, random_state=2).partial_fit(A[60:])
    expected = a.sketch_ + b.sketch_
    np.testing.assert_allclose(a.merge(b).sketch_, expected)
    c = RandomProjectionSketch(ell=4, random_state=3).partial_fit(A)
    assert not np.allclose(c.sketch_, RandomProjectionSketch(ell=4, random_state=4).partial_fit(A).sketch_)


def test_oja_stays_orthonormal_and_finds_the_top_direction():
    r = np.random.default_rng(5)
    basis = np.linalg.qr(r.standard_normal((30, 3)))[0].T
    X = (r.standard_normal((3000, 3)) * [8.0, 3.0, 1.0]) @ basis + 0.05 * r.standard_normal((3000, 30))
    oja = OjaSketch(ell=3, random_state=0).partial_fit(X)
    np.testing.assert_allclose(oja._v @ oja._v.T, np.eye(3), atol=1e-10)
    top = oja._v[np.argmax(oja._lam)]
    assert abs(top @ basis[0]) > 0.99


@pytest.mark.parametrize("dense", [True, False])
def test_overflowing_rows_are_refused_without_a_numpy_warning(dense):
    X = np.full((2, 20), 1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would print lines before the one-line error
        with pytest.raises(ValueError, match="overflows float64"):
            RobustFrequentDirections(ell=3).partial_fit(X if dense else sp.csr_matrix(X))


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan], ids=["inf", "-inf", "nan"])
@pytest.mark.parametrize("sketch", ALL, ids=repr)
def test_non_finite_float_parameters_are_refused(sketch, bad):
    """Every float parameter (beta, alpha0, learning_rate) refuses inf, -inf and NaN with the parameter message."""
    names = [
        k for k, cs in sketch._parameter_constraints.items() if any(getattr(c, "type_", None) is float for c in cs)
    ]
    for name in names:
        with pytest.raises(
            ValueError,
            match=rf"^The '{name}' parameter of {type(sketch).__name__} must be a float in the range .* Got {bad!r} instead\.$",
        ):
            clone(sketch).set_params(**{name: bad}).partial_fit(A)


def test_infinite_alpha0_is_refused():
    with pytest.raises(
        ValueError, match=r"'alpha0' parameter of RobustFrequentDirections must be a float in the range \[0.0, inf\)"
    ):
        RobustFrequentDirections(ell=3, alpha0=np.inf).partial_fit(A)


@pytest.mark.parametrize("name", sorted(SKETCHES))
def test_complex_rows_and_right_hand_sides_are_refused_in_one_line(name):
    # before: NumPy dropped the imaginary parts with a ComplexWarning and the real parts were sketched / solved
    cls = SKETCHES[name]
    A = np.random.default_rng(1).normal(size=(30, 8))
    for bad in (A.astype(complex), sp.csr_matrix(A.astype(complex)), A.astype(complex).tolist()):
        with pytest.raises(ValueError, match=rf"^{cls.__name__}: X has complex values \(dtype complex128\); expected"):
            cls(ell=4).partial_fit(bad)
    s = cls(ell=4).partial_fit(A)
    with pytest.raises(ValueError, match=rf"^{cls.__name__}.solve: v has complex values \(dtype complex128\);"):
        s.solve(np.ones(8, dtype=complex), extra_alpha=1.0)
    with pytest.raises(ValueError, match=rf"^{cls.__name__}.solve: v must hold numbers; got dtype <U3"):
        s.solve("abc", extra_alpha=1.0)
    assert s.n_seen_ == 30
