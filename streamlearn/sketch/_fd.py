"""The frequent-directions family: FD (Alg. 1 and fast Alg. 4), PFD, CFD and RFD (Alg. 2 and fast Alg. 5)."""

import math

import numpy as np

from .._kernels.fd import fd_fit_csr, fd_fit_dense, fd_n_shrink, fd_shrink
from .._params import keyword_init
from .._validation import Interval
from ._base import MAX_SQUARED_NORM, _BaseSketch
from .._validation import csr_args

__all__ = ["FrequentDirections", "ParameterizedFD", "CompensativeFD", "RobustFrequentDirections"]


class _FDBase(_BaseSketch):
    """Buffer, Gram matrix and delta sum; one kernel call per chunk (``fd_fit_csr`` / ``fd_fit_dense``)."""

    _min_ell = 2
    _beta_value = 1.0
    _compensate = False
    _robust = False

    def _beta(self):
        return self._beta_value

    def _alpha0(self):
        return 0.0

    def _capacity(self):
        return 2 * self.ell if self.fast else self.ell

    def _allocate(self, d):
        cap = self._capacity()
        self._buffer = np.zeros((cap, d))
        self._gram = np.zeros((cap, cap))
        self._n_rows = 0
        self._delta_sum = 0.0
        self._n_shrinks = 0

    def _check_capacity(self, sq):
        mass = float(np.trace(self._gram[: self._n_rows, : self._n_rows]))
        if mass + sq > MAX_SQUARED_NORM:
            raise ValueError(
                f"{type(self).__name__}: the sketched rows' total squared norm would exceed "
                f"{MAX_SQUARED_NORM:g} and overflow float64; rescale the rows."
            )

    def _run(self, X):
        """Stream X through the buffer (one kernel call) and account the deltas."""
        if self._buffer.shape[0] != self._capacity():  # `fast` differs from the allocation (after load)
            raise ValueError(
                f"{type(self).__name__}: buffer of {self._buffer.shape[0]} rows does not match "
                f"fast={self.fast}, ell={self.ell}."
            )
        keep = self.ell - 1
        n_shrink = fd_n_shrink(self._beta(), keep)
        common = dict(buf=self._buffer, gram=self._gram, n_rows=self._n_rows, keep=keep, n_shrink=n_shrink)
        work = np.empty((self.ell, self.n_features_in_))
        if isinstance(X, np.ndarray):
            n_rows, dsum, n_sh = fd_fit_dense(X=X, work=work, **common)
        else:
            scratch = np.zeros(self.n_features_in_)
            n_rows, dsum, n_sh = fd_fit_csr(**csr_args(X), work=work, scratch=scratch, **common)
        self._n_rows = int(n_rows)
        self._delta_sum += float(dsum)
        self._n_shrinks += int(n_sh)

    def _fit_chunk(self, X):
        self._run(X)

    def _merge_state(self, other):
        # read before the run: other may be self, whose buffer, delta sum and shrink count the run changes
        rows = other._buffer[: other._n_rows].copy()
        delta_sum, n_shrinks = other._delta_sum, other._n_shrinks
        self._check_capacity(float(np.trace(other._gram[: other._n_rows, : other._n_rows])))
        self._run(rows)
        self._delta_sum += delta_sum
        self._n_shrinks += n_shrinks

    def _compute(self):
        ell, d, r = self.ell, self.n_features_in_, self._n_rows
        sketch = np.zeros((ell, d))
        gram = np.zeros((ell, ell))
        delta = 0.0
        if r > 0:
            buf = self._buffer[:r].copy()  # the shrink works in place: never on the state itself
            g = self._gram[:r, :r].copy()
            work = np.empty((ell, d))
            k, delta = fd_shrink(buf, g, r, ell, fd_n_shrink(self._beta(), ell), work)
            sketch[:k] = buf[:k]
            gram[:k, :k] = g[:k, :k]
        total = self._delta_sum + delta
        if self._compensate and total > 0.0:
            sq = np.diag(gram).copy()
            scale = np.ones(ell)
            pos = sq > 0.0
            scale[pos] = np.sqrt((sq[pos] + total) / sq[pos])
            sketch *= scale[:, None]
            gram *= np.outer(scale, scale)
        alpha = self._alpha0() + 0.5 * total if self._robust else 0.0
        return sketch, alpha, gram


_ELL = [Interval(int, 2, None, closed="left")]


class FrequentDirections(_FDBase):
    """Frequent Directions (Liberty 2013; Ghashami et al. 2016): a deterministic, mergeable sketch of a
    row stream with ``||A^T A - B^T B||_2 <= ||A - A_k||_F^2 / (ell - k)`` for every ``k < ell``.

    ``fast=True`` is the doubling-space Alg. 4 of Luo et al. (JMLR 2019): rows are appended to a 2 ell-row
    buffer, and when it is full it is shrunk to ell - 1 rows by subtracting ``delta = s_ell^2`` from the
    squared singular values (amortised O(ell d) per row). ``fast=False`` is the exact Alg. 1 (ell-row
    buffer, a shrink after every row, O(ell^2 d) per row). Both keep ``A^T A - B^T B`` positive
    semi-definite with norm at most the sum of the deltas.

    Deviations from the algorithm boxes, all for cost: the shrink uses the eigendecomposition of the
    buffer's (2 ell x 2 ell) Gram matrix instead of an SVD of the d-wide buffer (same result up to
    rounding; Algorithms §5.2), and sparse rows stay sparse until the buffer is shrunk. The published
    ``sketch_`` (ell x d) applies one more shrink to the buffer, keeping ell rows with
    ``delta = s_{ell+1}^2`` (zero when at most ell rows are buffered); the bound above holds for it.

    Parameters
    ----------
    ell : int >= 2, default=10
        Sketch size: rows of ``sketch_`` (the paper's m). Must be smaller than the number of features d.
    fast : bool, default=True
        Doubling-space buffer (Alg. 4) if True, exact Alg. 1 if False.

    Attributes
    ----------
    sketch_ : ndarray of shape (ell, d)
        The sketch B (read-only; orthogonal rows sorted by decreasing norm).
    n_seen_ : int
        Rows sketched so far.
    n_features_in_ : int
        d, fixed by the first ``partial_fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.sketch import FrequentDirections
    >>> from streamlearn.evaluation import relative_spectral_error
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((500, 8)) @ rng.standard_normal((8, 40))  # rank 8
    >>> fd = FrequentDirections(ell=10).partial_fit(A)
    >>> fd.sketch_.shape, fd.n_seen_
    ((10, 40), 500)
    >>> relative_spectral_error(A, fd) < 1e-8   # ell > rank: exact
    True
    """

    _parameter_constraints = {"ell": _ELL, "fast": ["boolean"]}

    __init__ = keyword_init(ell=10, fast=True)


class ParameterizedFD(_FDBase):
    """Parameterized FD (PFD, "alpha-FD" of Desai, Ghashami and Phillips, TKDE 2016).

    Like :class:`FrequentDirections`, but a shrink affects only ``floor(beta * ell)`` singular values:
    the ell-th (discarded, as in FD) and the ``floor(beta * ell) - 1`` smallest kept ones, which lose
    ``delta``; the leading ones are kept unchanged. ``beta = 1`` is FD; small ``beta`` approaches the
    truncated SVD (iSVD, no guarantee). ``A^T A - B^T B`` stays positive semi-definite; the error bound is
    FD's up to a constant factor.

    Deviation: the paper's text says floor(beta m) values "get affected by the shrinkage" (Luo et al.,
    Sec. 6.1) without saying whether the discarded one counts; here it does (so ``beta = 1`` is FD).

    Parameters
    ----------
    ell : int >= 2, default=10
        Sketch size (rows of ``sketch_``), smaller than d.
    beta : float in (0, 1], default=0.2
        Fraction of the singular values affected by each shrink (the RFD paper uses 0.2 to 0.8).
    fast : bool, default=True
        Doubling-space buffer if True, a shrink per row if False.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.sketch import ParameterizedFD
    >>> A = np.random.default_rng(0).standard_normal((300, 30))
    >>> ParameterizedFD(ell=8, beta=0.4).partial_fit(A).sketch_.shape
    (8, 30)
    """

    _parameter_constraints = {"ell": _ELL, "beta": [Interval(float, 0, 1, closed="right")], "fast": ["boolean"]}

    __init__ = keyword_init(ell=10, beta=0.2, fast=True)

    def _beta(self):
        return float(self.beta)

    def _merge_keys(self):
        return ["ell", "beta"]


class CompensativeFD(_FDBase):
    """Compensative FD (CFD; Desai, Ghashami and Phillips, TKDE 2016): FD whose output adds back the
    total shrinkage on the retained directions.

    The stream is sketched exactly as by :class:`FrequentDirections`; ``sketch_`` then gives each
    non-zero row ``i`` the squared norm ``s_i^2 + Delta``, with ``Delta`` the sum of all deltas
    subtracted (including the final shrink). ``A^T A - B^T B`` is then the difference of two PSD
    matrices each below ``Delta I``, so FD's bound still holds. The exact form of the compensation is
    not spelled out in the RFD paper (Algorithms §5.5 marks it unconfirmed); this is the one stated
    there.

    Parameters
    ----------
    ell : int >= 2, default=10
        Sketch size (rows of ``sketch_``), smaller than d.
    fast : bool, default=True
        Doubling-space buffer if True, a shrink per row if False.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.sketch import CompensativeFD
    >>> A = np.random.default_rng(0).standard_normal((300, 30))
    >>> CompensativeFD(ell=8).partial_fit(A).sketch_.shape
    (8, 30)
    """

    _parameter_constraints = {"ell": _ELL, "fast": ["boolean"]}
    _compensate = True

    __init__ = keyword_init(ell=10, fast=True)


class RobustFrequentDirections(_FDBase):
    """Robust Frequent Directions (RFD; Luo, Chen, Zhang, Li, Zhang, JMLR 2019): approximates ``A^T A`` by
    ``B^T B + alpha I`` with half of FD's error bound,
    ``||A^T A - B^T B - alpha I||_2 <= ||A - A_k||_F^2 / (2 (ell - k))``.

    The rows are sketched exactly as by :class:`FrequentDirections` (Alg. 2, or the doubling-space
    Alg. 5 with ``fast=True``); in addition every shrink by ``delta`` adds ``delta / 2`` to ``alpha``,
    starting from ``alpha0`` (so ``B^T B + alpha I`` approximates ``A^T A + alpha0 I``; ``alpha0 = 0``
    approximates ``A^T A``). Each step is the spectral-norm-optimal (B, alpha) for the previous
    ``B^T B + alpha I`` plus the new row (Thm. 2), and ``B^T B + alpha I`` is positive definite once
    alpha > 0, so :meth:`solve` needs no extra regularisation.

    Merging (derived here, not in the paper): if the two parts have ``alpha_j = alpha0 + D_j / 2`` with
    ``D_j`` their delta sums, ``A_j^T A_j - B_j^T B_j`` is PSD with norm at most ``D_j`` for each part;
    stacking the buffers gives ``0 <= A^T A - B^T B <= (D_1 + D_2) I`` and every shrink of the stacked
    buffer by ``delta`` keeps this with ``D_1 + D_2 + delta``. So the merged
    ``alpha = alpha_1 + alpha_2 - alpha0 + (sum of the merge's deltas) / 2``, and the error is at most half
    the total delta sum, which obeys the FD bound for the concatenated stream.

    Deviation: as in :class:`FrequentDirections`, shrinks go through the buffer's Gram matrix and
    ``sketch_`` / ``alpha_`` include one last shrink to ell rows (with its ``delta / 2`` added to alpha).

    Parameters
    ----------
    ell : int >= 2, default=10
        Sketch size (rows of ``sketch_``), smaller than d.
    alpha0 : float >= 0, default=0.0
        Initial alpha: the sketch approximates ``A^T A + alpha0 I``.
    fast : bool, default=True
        Doubling-space buffer (Alg. 5) if True, exact Alg. 2 if False.

    Attributes
    ----------
    sketch_ : ndarray of shape (ell, d)
    alpha_ : float
        The regulariser alpha (>= alpha0).
    n_seen_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.sketch import FrequentDirections, RobustFrequentDirections
    >>> from streamlearn.evaluation import relative_spectral_error
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((2000, 8)) @ rng.standard_normal((8, 50)) + rng.standard_normal((2000, 50))
    >>> fd = FrequentDirections(ell=5).partial_fit(A)
    >>> rfd = RobustFrequentDirections(ell=5).partial_fit(A)
    >>> round(relative_spectral_error(A, rfd) / relative_spectral_error(A, fd), 2)  # about half
    0.5
    >>> bool(rfd.alpha_ > 0)
    True
    """

    _parameter_constraints = {"ell": _ELL, "alpha0": [Interval(float, 0, math.inf, closed="left")], "fast": ["boolean"]}
    _robust = True

    __init__ = keyword_init(ell=10, alpha0=0.0, fast=True)

    def _alpha0(self):
        return float(self.alpha0)

    def _merge_keys(self):
        return ["ell", "alpha0"]

    @property
    def alpha_(self) -> float:
        """alpha of ``B^T B + alpha I``: ``alpha0`` plus half of every delta subtracted."""
        return self._alpha()
