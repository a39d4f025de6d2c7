"""The algebra the papers prove, checked on random low-rank-plus-noise matrices and on a9a.

FD: 0 <= A^T A - B^T B and ||A^T A - B^T B||_2 <= ||A - A_k||_F^2 / (ell - k) for every k < ell.
RFD: ||A^T A - B^T B - alpha I||_2 <= ||A - A_k||_F^2 / (2 (ell - k)).
Merging the sketches of two halves keeps the bound for the whole; results are deterministic.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn.datasets import load_a9a
from streamlearn.sketch import (
    CompensativeFD,
    FrequentDirections,
    ParameterizedFD,
    RandomProjectionSketch,
    OjaSketch,
    RobustFrequentDirections,
)
from tests.naive_sketch import naive_fd_merge, naive_fd_result, naive_fd_stream


def low_rank_plus_noise(seed, n=400, d=30, rank=5, noise=0.3):
    rng = np.random.default_rng(seed)
    spectrum = np.linspace(10, 2, rank)
    U = rng.standard_normal((n, rank)) * spectrum
    return U @ np.linalg.qr(rng.standard_normal((d, rank)))[0].T + noise * rng.standard_normal((n, d))


def tail_energy(ata):
    """``t[k] = ||A - A_k||_F^2`` for k = 0 .. d, from ``A^T A``."""
    s2 = np.sort(np.linalg.eigvalsh(ata))[::-1].clip(min=0)
    return np.concatenate([[s2.sum()], s2.sum() - np.cumsum(s2)]).clip(min=0)


def errors(ata, sketch):
    B = sketch.sketch_
    alpha = getattr(sketch, "alpha_", 0.0)
    w = np.linalg.eigvalsh(ata - B.T @ B - alpha * np.eye(ata.shape[0]))
    return w[0], max(abs(w[0]), abs(w[-1]))


def check_fd_bound(A, sketch, ell, *, factor=1.0):
    """``A`` is the rows, or ``A^T A`` itself when square."""
    ata = A if A.shape[0] == A.shape[1] else A.T @ A
    tail = tail_energy(ata)
    lo, err = errors(ata, sketch)
    tol = 1e-9 * tail[0]
    for k in range(ell):
        assert err <= factor * tail[k] / (ell - k) + tol, (k, err, factor * tail[k] / (ell - k))
    return lo, err


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ell", [3, 8])
@pytest.mark.parametrize("fast", [True, False])
def test_fd_and_rfd_bounds_on_low_rank_plus_noise(seed, ell, fast):
    A = low_rank_plus_noise(seed)
    fd = FrequentDirections(ell=ell, fast=fast).partial_fit(A)
    lo, err_fd = check_fd_bound(A, fd, ell)
    assert lo >= -1e-9 * tail_energy(A.T @ A)[0]  # A^T A - B^T B is PSD
    rfd = RobustFrequentDirections(ell=ell, fast=fast).partial_fit(sp.csr_matrix(A))
    _, err_rfd = check_fd_bound(A, rfd, ell, factor=0.5)
    assert err_rfd < err_fd
    cfd = CompensativeFD(ell=ell, fast=fast).partial_fit(A)
    check_fd_bound(A, cfd, ell)
    # the three process the stream alike: CFD adds Delta = 2 alpha_RFD to FD's non-zero squared row norms
    assert rfd._delta_sum == pytest.approx(fd._delta_sum, rel=1e-9)
    fd_sq = (fd.sketch_**2).sum(axis=1)
    nz = fd_sq > 1e-9 * fd_sq.max()
    np.testing.assert_allclose((cfd.sketch_**2).sum(axis=1)[nz], fd_sq[nz] + 2 * rfd.alpha_, rtol=1e-8)


def test_pfd_keeps_psd_and_beta_one_is_fd():
    A = low_rank_plus_noise(4)
    fd = FrequentDirections(ell=6).partial_fit(A)
    pfd1 = ParameterizedFD(ell=6, beta=1.0).partial_fit(A)
    np.testing.assert_allclose(pfd1.sketch_.T @ pfd1.sketch_, fd.sketch_.T @ fd.sketch_, atol=1e-9)
    for beta in (0.2, 0.4, 0.6, 0.8):
        pfd = ParameterizedFD(ell=6, beta=beta).partial_fit(A)
        lo, _ = errors(A.T @ A, pfd)
        assert lo >= -1e-9 * tail_energy(A.T @ A)[0]


@pytest.mark.parametrize("cls", [FrequentDirections, RobustFrequentDirections])
@pytest.mark.parametrize("fast", [True, False])
def test_merge_of_halves_keeps_the_bound_for_the_whole(cls, fast):
    A = low_rank_plus_noise(5, n=300)
    ell = 5
    half = 170
    s1 = cls(ell=ell, fast=fast).partial_fit(A[:half])
    s2 = cls(ell=ell, fast=fast).partial_fit(sp.csr_matrix(A[half:]))
    merged = s1.merge(s2)
    assert merged is s1 and merged.n_seen_ == A.shape[0]
    check_fd_bound(A, merged, ell, factor=0.5 if cls is RobustFrequentDirections else 1.0)
    # against the twin: stack the second buffer into the first, deltas add
    r1, d1 = naive_fd_stream(A[:half], ell, fast=fast)
    r2, d2 = naive_fd_stream(A[half:], ell, fast=fast)
    rows, ds = naive_fd_merge(r1, d1, r2, d2, ell, fast=fast)
    B, alpha, _ = naive_fd_result(rows, ds, ell)
    scale = float((A * A).sum())
    np.testing.assert_allclose(merged.sketch_.T @ merged.sketch_, B.T @ B, atol=1e-10 * scale)
    if cls is RobustFrequentDirections:
        assert merged.alpha_ == pytest.approx(alpha, rel=1e-9)


def test_rfd_merge_alpha_combines_with_alpha0():
    """alpha = alpha_1 + alpha_2 - alpha0 + (the merge's deltas) / 2: alpha0 is counted once."""
    A = low_rank_plus_noise(6, n=200)
    a0 = 3.0
    s1 = RobustFrequentDirections(ell=4, alpha0=a0).partial_fit(A[:100])
    s2 = RobustFrequentDirections(ell=4, alpha0=a0).partial_fit(A[100:])
    internal = s1._delta_sum + s2._delta_sum
    s1.merge(s2)
    merge_deltas = s1._delta_sum - internal
    assert merge_deltas >= 0
    B = s1.sketch_
    final = 2 * (s1.alpha_ - a0) - s1._delta_sum
    assert s1.alpha_ == pytest.approx(a0 + (internal + merge_deltas + final) / 2, rel=1e-12)
    # and B^T B + alpha I approximates A^T A + alpha0 I within half the FD bound
    w = np.linalg.eigvalsh(A.T @ A + a0 * np.eye(30) - B.T @ B - s1.alpha_ * np.eye(30))
    tail = tail_energy(A.T @ A)
    assert max(abs(w[0]), abs(w[-1])) <= min(0.5 * tail[k] / (4 - k) for k in range(4)) + 1e-9 * tail[0]


@pytest.mark.parametrize("cls", [FrequentDirections, RobustFrequentDirections, CompensativeFD])
def test_merge_with_itself_is_the_merge_with_a_copy(cls):
    """s.merge(s) sketches the stream twice: the merge's own deltas are counted once, as with a copy."""
    A = low_rank_plus_noise(8, n=200)
    itself = cls(ell=5).partial_fit(A)
    twin = cls(ell=5).partial_fit(A)
    itself.merge(itself)
    twin.merge(cls(ell=5).partial_fit(A))
    assert itself.n_seen_ == twin.n_seen_ == 2 * len(A)
    assert itself._delta_sum == pytest.approx(twin._delta_sum, rel=1e-12)
    assert itself._n_shrinks == twin._n_shrinks
    np.testing.assert_allclose(itself.sketch_, twin.sketch_, atol=1e-9 * float((A * A).sum()))
    if cls is RobustFrequentDirections:
        assert itself.alpha_ == pytest.approx(twin.alpha_, rel=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda: FrequentDirections(ell=6),
        lambda: RobustFrequentDirections(ell=6),
        lambda: ParameterizedFD(ell=6, beta=0.4),
        lambda: RandomProjectionSketch(ell=6, random_state=3),
        lambda: OjaSketch(ell=6, random_state=3),
    ],
)
def test_deterministic_for_the_same_input_and_seed(make):
    A = low_rank_plus_noise(7, n=150)
    X = sp.csr_matrix(A)
    a = make().partial_fit(X[:70]).partial_fit(X[70:])
    b = make().partial_fit(X[:70]).partial_fit(X[70:])
    np.testing.assert_array_equal(a.sketch_, b.sketch_)


@pytest.fixture(scope="module")
def a9a():
    X = load_a9a()[0]
    return X, (X.T @ X).toarray()


@pytest.mark.parametrize("ell", [5, 10])
def test_bounds_on_a9a(a9a, ell):
    X, ata = a9a
    fd = FrequentDirections(ell=ell).partial_fit(X)
    rfd = RobustFrequentDirections(ell=ell).partial_fit(X)
    _, err_fd = check_fd_bound(ata, fd, ell)
    _, err_rfd = check_fd_bound(ata, rfd, ell, factor=0.5)
    assert err_rfd <= 0.6 * err_fd
    half = X.shape[0] // 2
    merged = FrequentDirections(ell=ell).partial_fit(X[:half]).merge(FrequentDirections(ell=ell).partial_fit(X[half:]))
    check_fd_bound(ata, merged, ell)
