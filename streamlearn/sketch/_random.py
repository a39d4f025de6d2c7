"""Randomised sketches: random projection and Oja's streaming PCA."""

import numbers
from typing import Self

import numpy as np

from .._kernels.oja import oja_fit_csr, oja_fit_dense
from .._kernels.rp import DIST_GAUSSIAN, DIST_SPARSE_SIGN, rp_fit_csr, rp_fit_dense
from .._params import keyword_init
from .._validation import Interval, Options
from ._base import _BaseSketch
from .._validation import csr_args

__all__ = ["RandomProjectionSketch", "OjaSketch"]

_DISTS = {"gaussian": DIST_GAUSSIAN, "sparse-sign": DIST_SPARSE_SIGN}


def _seed_from(random_state):
    """A 63-bit integer seed from ``random_state`` (int, Generator, RandomState or None), drawn once."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, numbers.Integral):
        return int(np.random.SeedSequence(int(random_state)).generate_state(1, np.uint64)[0] >> np.uint64(1))
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))


class RandomProjectionSketch(_BaseSketch):
    """Random projection sketch (RP; Luo, Agarwal, Cesa-Bianchi, Langford, NIPS 2016):
    ``S = sum_t r_t a_t^T`` with i.i.d. zero-mean entries of variance 1/ell, so ``E[S^T S] = A^T A``.

    No deterministic error bound (the error decays like ``||A||_F^2 / sqrt(ell)``), but O(ell nnz(a)) per
    row and trivially mergeable: sketches of two streams drawn with *different* seeds add up.

    ``r_t`` is a hash of (seed, t, entry): the sketch is the same however the stream is chunked.
    Deviation: the paper's distribution is not stated (Algorithms §5.7); ``kind`` offers Gaussian entries
    and the sparse signs of the authors' code.

    Parameters
    ----------
    ell : int >= 1, default=10
        Rows of the sketch, smaller than d.
    kind : {"gaussian", "sparse-sign"}, default="gaussian"
        Distribution of the entries of r_t: N(0, 1/ell), or +-sqrt(3/ell) with probability 1/6 each and
        0 otherwise.
    random_state : int, numpy Generator or RandomState, or None, default=None
        Seed; drawn from once, at the first ``partial_fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.sketch import RandomProjectionSketch
    >>> A = np.random.default_rng(0).standard_normal((400, 30))
    >>> rp = RandomProjectionSketch(ell=20, random_state=0).partial_fit(A)
    >>> rp.sketch_.shape
    (20, 30)
    >>> bool(np.allclose(rp.sketch_, RandomProjectionSketch(ell=20, random_state=0).partial_fit(A).sketch_))
    True
    """

    _parameter_constraints = {
        "ell": [Interval(int, 1, None, closed="left")],
        "kind": [Options("gaussian", "sparse-sign")],
        "random_state": ["random_state"],
    }

    __init__ = keyword_init(ell=10, kind="gaussian", random_state=None)

    def _allocate(self, d):
        self._sketch = np.zeros((self.ell, d))
        self._seed = _seed_from(self.random_state)

    def _fit_chunk(self, X):
        dist = _DISTS[self.kind]
        seed = np.uint64(self._seed)
        if isinstance(X, np.ndarray):
            rp_fit_dense(X, self._sketch, seed, self._n_seen, dist)
        else:
            rp_fit_csr(
                **csr_args(X),
                sketch=self._sketch,
                seed=seed,
                t0=self._n_seen,
                dist=dist,
            )

    def _merge_keys(self):
        return ["ell", "kind"]

    def _merge_state(self, other):
        if other._seed == self._seed:
            raise ValueError(
                "RandomProjectionSketch.merge: both sketches drew their projections from the same "
                "seed, so their sum would be biased (the cross terms do not vanish). Sketch the "
                "two streams with different random_state values."
            )
        self._sketch += other._sketch

    def _compute(self):
        s = self._sketch.copy()
        return s, 0.0, s @ s.T


class OjaSketch(_BaseSketch):
    """Oja's streaming PCA as a sketch (Luo, Agarwal, Cesa-Bianchi, Langford, NIPS 2016; Algorithms
    §5.8): orthonormal rows V tracking the top-ell eigenvectors of the covariance, eigenvalue estimates
    ``lam``, and ``sketch_ = diag(sqrt(t lam)) V`` so that ``sketch_^T sketch_ = V^T diag(t lam) V``.

    Per row a: ``gamma = min(learning_rate / t, 1)``, ``p = V a``,
    ``lam <- (1 - gamma) lam + gamma p^2``, ``V <- orthonormalise(V + gamma p a^T)``.
    No error guarantee; O(ell d) per row.

    Deviations: the QR of each update is done in closed form (Gram-Schmidt of a rank-one update of
    orthonormal rows, O(ell d) instead of O(ell^2 d); see ``streamlearn/_kernels/oja.py``); the step size
    schedule follows the authors' vowpal_wabbit code (the paper's is not stated). Oja sketches cannot be
    merged: there is no rule with any guarantee for combining two eigenvector estimates.

    Parameters
    ----------
    ell : int >= 1, default=10
        Number of directions tracked (rows of ``sketch_``), smaller than d.
    learning_rate : float > 0, default=2.0
        c in the step size gamma_t = min(c / t, 1).
    random_state : int, numpy Generator or RandomState, or None, default=None
        Seed of the random orthonormal initial V (drawn at the first ``partial_fit``).

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.sketch import OjaSketch
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((2000, 3)) @ np.diag([10.0, 5.0, 1.0]) @ np.linalg.qr(rng.standard_normal((20, 3)))[0].T
    >>> oja = OjaSketch(ell=3, random_state=0).partial_fit(A)
    >>> top = np.linalg.svd(A, full_matrices=False)[2][0]
    >>> bool(np.abs(oja.sketch_ @ top).max() / np.linalg.norm(oja.sketch_, axis=1).max() > 0.99)
    True
    """

    _parameter_constraints = {
        "ell": [Interval(int, 1, None, closed="left")],
        "learning_rate": [Interval(float, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    __init__ = keyword_init(ell=10, learning_rate=2.0, random_state=None)

    def _allocate(self, d):
        rng = np.random.default_rng(_seed_from(self.random_state))
        q, _ = np.linalg.qr(rng.standard_normal((d, self.ell)))
        self._v = np.ascontiguousarray(q.T)
        self._lam = np.zeros(self.ell)
        self._t = 0

    def _fit_chunk(self, X):
        c = float(self.learning_rate)
        if isinstance(X, np.ndarray):
            t = oja_fit_dense(X, self._v, self._lam, self._t, c)
        else:
            t = oja_fit_csr(**csr_args(X), v=self._v, lam=self._lam, t=self._t, c=c)
        self._t = int(t)

    def merge(self, other: Self) -> Self:
        """Not available: Oja's sketch has no merge rule with any guarantee (raises NotImplementedError)."""
        raise NotImplementedError(
            "OjaSketch cannot be merged: there is no sound rule for combining two "
            "eigenvector estimates. Use FrequentDirections / RobustFrequentDirections "
            "(mergeable with the FD guarantee) or RandomProjectionSketch."
        )

    def _compute(self):
        scale = np.sqrt(self._t * np.maximum(self._lam, 0.0))
        s = self._v * scale[:, None]
        return s, 0.0, s @ s.T
