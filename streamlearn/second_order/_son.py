"""Second-order online classifiers: AdaGrad, full online Newton step, sketched online Newton step.

Algorithms §6.1-6.4 (Luo et al., JMLR 2019: Alg. 3, Alg. 6, App. A). With ``slab="next"`` (the default,
Alg. 3) all three keep ``coef_`` = the pending unprojected point u; the projection onto
``{w : |w.x| <= C}`` happens when the next example arrives, before it is predicted, so
``partial_fit_scores`` returns ``clip(u.x, -C, C)`` (the projected point's exact score) and
``decision_function`` returns the same ``clip(coef_ . x, -C, C)``. With ``slab="current"`` (Alg. 6 and
App. A as printed) the updated point is projected onto the slab of the example just learned, ``coef_`` is
that projected point and scores are the plain ``coef_ . x``. No intercept (the paper's model is ``w.x``; add
a constant feature if one is wanted).
"""

import copy
from typing import Any

import numpy as np

from .._kernels import son as _k
from .._kernels import son_lazy as _kl
from .._kernels.scale import maxabs_augment
from .._validation import Interval, Options, check_rng
from .._params import keyword_init
from .._typing import FloatArray
from ..base import BaseOnlineLinear, OnlineClassifierMixin
from ..losses import loss_code
from .._mixing import MixableMixin, merge_sketch_increments, mixed_count, weighted_average
from .._validation import chunk_args, csr_args, csr_from_arrays

__all__ = ["AdaGrad", "OnlineNewtonStep", "SketchedOnlineNewton", "FULL_ON_MAX_FEATURES"]

#: OnlineNewtonStep keeps a d x d matrix per output and spends O(d^2) per example: refused above this d.
FULL_ON_MAX_FEATURES = 4096

_PASS_PARAMS = {
    "max_iter": [Interval(int, 1, None, closed="left")],
    "shuffle": ["boolean"],
    "random_state": ["random_state"],
}
#: the parameters of every second-order learner, and of the two Newton steps (full and sketched)
_SECOND_ORDER_PARAMS = {
    "C": [Interval(float, 0, None, closed="neither")],
    "loss": [Options("squared", "logistic", "hinge")],
    "slab": [Options("next", "current")],
    "safeguard": [Options("paper", "maxabs")],
    **_PASS_PARAMS,
}
#: the defaults of the parameters that end every second-order learner's list
_SECOND_ORDER_DEFAULTS = {"slab": "next", "safeguard": "paper", "max_iter": 1, "shuffle": True, "random_state": None}
_NEWTON_DEFAULTS = {"eta": 1.0, "mu": None, "C": 1.0, "loss": "squared"}
_NEWTON_PARAMS = {
    "eta": [Interval(float, 0, None, closed="left")],
    "mu": [Interval(float, 0, None, closed="left"), None],
    **_SECOND_ORDER_PARAMS,
}

_SAFEGUARD_DOC = """safeguard : {"paper", "maxabs"}, default="paper"
        ``"paper"``: the algorithm as published, on the raw features, no intercept. ``"maxabs"``: each
        example's features are divided by their running maximum absolute value (the largest seen so far,
        this example's included, examples of weight 0 left out; ``scale_`` holds it) and a constant feature 1 is appended (the intercept).
        Why: only the full-matrix step is invariant to the units of the columns. A sketch keeps the
        directions of largest gradient energy in raw units and RFD's alpha is grown from the energy the
        sketch discards, so the columns with small units fall outside the sketch and are learned through
        alpha only (hardly at all), or, in RFD0's alpha = 0 phase, by pseudo-inverse steps of length
        ``|g| / |x_perp|`` set by one example; which columns those are changes when a column is rescaled.
        A skewed class balance needs an intercept, which the published model lacks, and a constant column
        added in raw units is one of those small columns. Measured (one pass, 70/30, raw zoo data): RFD0-SON
        with ``"paper"`` over 5 random column rescalings by 1e-3..1e3 gave 59.6-94.2 % on breast cancer,
        41.3-97.8 % on shuttle (93 % one class) and 45.3-84.9 % on wine; with ``"maxabs"`` 93.0, 99.6 and
        79.2 % for every rescaling. With ``"maxabs"`` the learner is invariant to multiplying any column
        by a positive factor (up to rounding), at O(nnz) extra work per example; ``coef_`` then has
        ``n_features + 1`` columns: the weights of ``x_j / scale_[j]`` and, last, the intercept.
        The ``streamlearn`` command line uses ``"maxabs"``; the paper reproductions pin ``"paper"``."""

_SLAB_DOC = """slab : {"next", "current"}, default="next"
        Which example's slab ``|w.x| <= C`` the projection uses. ``"next"`` (Alg. 3, as in SON): the
        pending point is projected onto the slab of the example about to be predicted, so each prediction
        comes from a point of that example's slab (the setting of the regret bounds). ``"current"`` (Alg. 6
        line 17 and App. A as printed, the fast algorithm the paper's experiments ran): the updated point is
        projected onto the slab of the example just learned, with the post-update matrix, and the next
        example is scored by that point unclipped, which bounds each step along x_t. ``streamlearn
        experiment rfd-table2`` uses ``"current"`` by default to reproduce Table 2. For RFD0-SON
        (``alpha0=0``) on sparse text, ``"current"`` is the stable reading: on farm-ads (5 splits, m = 20 /
        30 / 50) 89.1 / 89.3 / 89.0 % against 86.8 / 69.9 / 60.6 % with ``"next"``, whose pseudo-inverse
        steps along new directions are unbounded (``tools/rfd0_slab.py``). The other way round,
        ``"current"`` leaves the next score unclipped, so with a small alpha0 the squared loss' gradients are
        unbounded and FD/RP-SON can diverge (a9a: FD at alpha0 <= 0.1, RP at alpha0 <= 1)."""


def _common_scale(start, models):
    """Second-order learners with ``safeguard="maxabs"`` learn on ``x / scale_`` with each partition's own
    running maxima: re-express every model (copies) on the common ``scale_`` (the maxima over all of them)
    before mixing. Column j of a model with maximum ``m_j`` and common ``c_j`` has factor ``f_j = m_j / c_j``:
    weights ``w / f`` (the same scores), gradient rows ``g f`` and AdaGrad's sums ``s f^2``; the sketch's alpha
    is kept (exact when the partitions' maxima agree)."""
    if not hasattr(models[0], "scale_"):
        return start, models
    common = np.max([m.scale_ for m in models] + ([start.scale_] if start is not None else []), axis=0)
    f = np.ones(common.shape[0] + 1)  # the constant feature (last column) keeps factor 1

    def convert(est):
        est = copy.deepcopy(est)
        f[:-1] = np.divide(est.scale_, common, out=np.zeros_like(common), where=common > 0)
        est.coef_ = np.divide(est.coef_, f, out=np.zeros_like(est.coef_), where=f > 0)
        if hasattr(est, "_state_s"):
            est._state_s = est._state_s * f**2
        if hasattr(est, "_state_buf"):
            est._state_buf = est._state_buf * f
        est.scale_ = common.copy()
        return est

    return (None if start is None else convert(start)), [convert(m) for m in models]


def _mix_weights(start, models, weights):
    """The first step of mixing second-order models: ``(start, models)`` on their common scale and a copy of the
    first model with ``coef_``/``intercept_`` averaged by ``weights`` and ``t_`` counting every example."""
    start, models = _common_scale(start, models)
    out = copy.deepcopy(models[0])
    out.coef_ = weighted_average([m.coef_ for m in models], weights)
    out.intercept_ = weighted_average([m.intercept_ for m in models], weights)
    out.t_ = mixed_count(start, models)
    return start, models, out


class _SecondOrder(OnlineClassifierMixin, BaseOnlineLinear):
    _diverge_hint = "alpha0"

    def _safe(self):
        return getattr(self, "safeguard", "paper") == "maxabs"

    def _allocate(self, n_features, n_outputs, X):
        if self._safe():
            self.scale_ = np.zeros(n_features)
            n_features += 1  # the constant feature
        self._allocate_state(n_features, n_outputs, X)

    def _allocate_state(self, n_features, n_outputs, X):
        BaseOnlineLinear._allocate(self, n_features, n_outputs, X)

    def _augment(self, X, update, sw=None):
        """``[x / scale, 1]`` rows (CSR); ``update``: running maxima updated row by row (training) by the rows
        of weight ``sw != 0`` (a row of weight 0 is scaled as a prediction is)."""
        if not self.scale_.flags.writeable:  # e.g. loaded from a read-only memory map
            self.scale_ = self.scale_.copy()
        sw = np.ones(X.shape[0]) if sw is None else np.ascontiguousarray(sw, dtype=np.float64)
        indptr, indices, data = maxabs_augment(X.indptr, X.indices, X.data, self.scale_, bool(update), sw)
        shape = (X.shape[0], X.shape[1] + 1)
        # int32 index arrays when they fit, as scipy's constructor makes them (its checks read the index arrays)
        index = np.int32 if max(shape[1], data.shape[0]) < np.iinfo(np.int32).max else np.int64
        return csr_from_arrays(data, indices.astype(index, copy=False), indptr.astype(index, copy=False), shape)

    def _kernel_pass(self, X, targets, sw, out):
        if not self._safe():
            self._raw_pass(X, targets, sw, out)
            return
        before = self.scale_.copy()
        try:
            self._raw_pass(self._augment(X, update=True, sw=sw), targets, sw, out)
        except FloatingPointError as exc:
            row = getattr(exc, "row", None)
            if row is not None:  # an example refused: the scales are those of the examples before it
                self.scale_ = before
                self._augment(X[:row], update=True, sw=None if sw is None else sw[:row])
            raise

    def _decision_function(self, X):
        # the online prediction: the pending u projected onto |w.x| <= C with x itself scores clip(u.x, -C, C)
        from .. import _validation

        if self._safe():
            from .._estimator import check_is_fitted

            check_is_fitted(self)
            X = self._augment(_validation.check_X(self, X, reset=False), update=False)
            scores = np.asarray(X @ self._coef_2d().T)
            scores = scores[:, 0] if scores.shape[1] == 1 else scores
        else:
            scores = super()._decision_function(X)
        if getattr(self, "project", True) and not self._slab_is_current():
            scores = np.clip(scores, -float(self.C), float(self.C))
        return _validation.finite_scores(self, scores)

    def _mu(self):
        if self.mu is not None:
            return float(self.mu)
        try:
            return 1.0 / (8.0 * float(self.C) ** 2)
        except OverflowError:  # C beyond 1e154: the square is beyond the float range, its inverse 0
            return 0.0

    def _slab_is_current(self):
        return getattr(self, "slab", "next") == "current"


class AdaGrad(MixableMixin, _SecondOrder):
    """Diagonal AdaGrad (Duchi, Hazan, Singer 2011) with the RFD paper's slab projection.

    Per example (Algorithms §6.2): project u onto ``|w.x| <= C`` in the ``diag(h)`` norm, predict
    ``w.x``, then ``s += g^2``, ``h = alpha0 + sqrt(s)``, ``u = w - eta g / h``. Cost O(nnz) per example.

    Parameters
    ----------
    alpha0 : float >= 0, default=1.0
        Duchi et al.'s delta added to ``sqrt(s)`` (the RFD paper tunes it on {1e-3, ..., 1e6}); with 0, a
        coordinate that has not been seen keeps weight 0.
    eta : float > 0, default=1.0
        Step size (the paper does not state it for ADAGRAD).
    C : float > 0, default=1.0
        Slab radius of the projection.
    loss : {"squared", "logistic", "hinge"}, default="squared"
        Loss on the score with labels -1/+1 (squared: ``(z - y)^2``, the paper's setting).
    project : bool, default=True
        Project onto the slab (the paper does not say whether its ADAGRAD does).
    {slab}
    {safeguard}
    max_iter : int >= 1, default=1
        Passes made by ``fit``.
    shuffle : bool, default=True
        Shuffle before each pass of ``fit``.
    random_state : int, Generator or None, default=None
        Seed of the shuffling.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.second_order import AdaGrad
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = AdaGrad(alpha0=1.0).partial_fit(X, y, classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.3f}")
    0.829
    """

    _parameter_constraints = {
        "alpha0": [Interval(float, 0, None, closed="left")],
        "eta": [Interval(float, 0, None, closed="neither")],
        "project": ["boolean"],
        **_SECOND_ORDER_PARAMS,
    }

    __init__ = keyword_init(alpha0=1.0, eta=1.0, C=1.0, loss="squared", project=True, **_SECOND_ORDER_DEFAULTS)

    def _allocate_state(self, n_features, n_outputs, X):
        super()._allocate_state(n_features, n_outputs, X)
        self._state_s = np.zeros((n_outputs, n_features))

    def _raw_pass(self, X, targets, sw, out):
        bad = _k.adagrad_epoch(
            **csr_args(X),
            targets=targets,
            sw=sw,
            w=self.coef_,
            s=self._state_s,
            alpha0=float(self.alpha0),
            eta=float(self.eta),
            C=float(self.C),
            loss=loss_code(self.loss),
            project=bool(self.project),
            slab_current=self._slab_is_current(),
            out=out,
        )
        self.t_ += int(np.count_nonzero(sw))  # examples of weight 0 change nothing
        if bad >= 0:
            self._raise_diverged(bad, "eta")

    # parameter mixing (streamlearn.distributed.fit_mixing)
    mixing_description = (
        "``coef_`` (the pending point) and the squared-gradient accumulators ``s``, weighted by examples"
    )

    @classmethod
    def mix(cls, start: Any, models: list[Any], weights: FloatArray) -> Any:
        """The mixed model of one round (see ``mixing_description``)."""
        start, models, out = _mix_weights(start, models, weights)
        out._state_s = weighted_average([m._state_s for m in models], weights)
        return out


class OnlineNewtonStep(_SecondOrder):
    """FULL-ON: the online Newton step with the full d x d matrix (Algorithms §6.3).

    ``H_t = alpha0 I + sum_s (mu + eta_s) g_s g_s^T`` with ``eta_s = eta / s``; ``P = H^{-1}`` kept by
    Sherman-Morrison, ``u = w - P g``, projection onto ``|w.x_{t+1}| <= C`` in the H-norm before predicting
    ``x_{t+1}``. O(d^2) time and memory per example and output: refused when ``n_features`` exceeds
    ``FULL_ON_MAX_FEATURES`` (4096; use :class:`SketchedOnlineNewton`).

    Parameters
    ----------
    alpha0 : float > 0, default=1.0
        Initial ``H = alpha0 I``.
    eta : float >= 0, default=1.0
        ``eta_t = eta / t`` (the paper's experiments: 1/t).
    mu : float >= 0 or None, default=None
        Exp-concavity constant; None means ``1 / (8 C^2)`` (the squared loss' value, used for every loss).
    C : float > 0, default=1.0
        Slab radius.
    loss : {"squared", "logistic", "hinge"}, default="squared"
        Loss on the score with labels -1/+1.
    {slab}
    {safeguard}
    max_iter, shuffle, random_state
        As in :class:`AdaGrad`.

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.second_order import OnlineNewtonStep
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = OnlineNewtonStep(alpha0=10.0).partial_fit(X[:5000], y[:5000], classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.3f}")
    0.835
    """

    _start_params = ("alpha0",)  # H = alpha0 I at the start
    _parameter_constraints = {
        "alpha0": [Interval(float, 0, None, closed="neither")],
        **_NEWTON_PARAMS,
    }

    __init__ = keyword_init(alpha0=1.0, **_NEWTON_DEFAULTS, **_SECOND_ORDER_DEFAULTS)

    def _allocate_state(self, n_features, n_outputs, X):
        if n_features > FULL_ON_MAX_FEATURES + self._safe():
            raise ValueError(  # X's features (the safeguard's constant feature is not counted)
                f"OnlineNewtonStep keeps a n_features x n_features matrix: n_features={n_features - self._safe()} "
                f"exceeds the limit FULL_ON_MAX_FEATURES={FULL_ON_MAX_FEATURES}; use SketchedOnlineNewton instead."
            )
        super()._allocate_state(n_features, n_outputs, X)
        eye = np.eye(n_features) / float(self.alpha0)
        self._state_P = np.repeat(eye[None], n_outputs, axis=0)

    def _raw_pass(self, X, targets, sw, out):
        t, bad = _k.full_on_epoch(
            **csr_args(X),
            targets=targets,
            sw=sw,
            w=self.coef_,
            P=self._state_P,
            t=self.t_,
            mu=self._mu(),
            eta=float(self.eta),
            C=float(self.C),
            loss=loss_code(self.loss),
            slab_current=self._slab_is_current(),
            out=out,
        )
        self.t_ = int(t)
        if bad >= 0:
            self._raise_diverged(bad, "eta")


#: lazy sparse kernels (son_lazy.py): sparse rows kept between materialisations, and the weight of the lazy
#: form's extra work against one materialisation (ski-rental rule)
_LAZY_MAX_SPARSE_ROWS = 4096
_LAZY_MAT_FACTOR = 10.0
#: the lazy kernels copy the sketch's rows transposed for a chunk (and back) when it holds at least this many
#: non-zeros per feature; a smaller chunk reads them in place (one-row calls over 2^18 features: O(ell d)
#: instead of O(ell^2 d) for the FD family, no copies for RP and Oja)
_LAZY_TRANSPOSE_NNZ = 0.02

_SKETCHES = {"fd": _k.SKETCH_FD, "pfd": _k.SKETCH_PFD, "rfd": _k.SKETCH_RFD, "rp": _k.SKETCH_RP, "oja": _k.SKETCH_OJA}


class SketchedOnlineNewton(MixableMixin, _SecondOrder):
    """Sketched online Newton step (SON; RFD paper Alg. 3 / Alg. 6) over FD, PFD, RFD, RP or Oja sketches.

    Per example (Algorithms §6.4): project the pending u onto ``|w.x_t| <= C`` in the H-norm, predict
    ``w.x_t``, feed the row ``sqrt(mu + eta_t) g`` to the sketch (``eta_t = eta / t``), then
    ``u = w - H^{-1} g`` with ``H = B^T B + alpha I`` by Woodbury (O(ell d + ell^3), never d x d).
    alpha is ``alpha0`` for FD, PFD, RP and Oja and grows by ``delta / 2`` per shrink for RFD. FD/PFD/RFD
    use the doubling buffer (2 ell rows, shrink to ell - 1, Alg. 6's ell zero rows at the start).
    RFD with ``alpha0 = 0`` (RFD0-SON) runs its alpha = 0 phase with the pseudo-inverse of ``B^T B``.

    Cost: FD, PFD, RFD and Oja run a lazy sparse form (``_kernels/son_lazy.py``) whose per-example work is
    O(ell nnz + ell^2) plus amortised materialisations of the dense sketch rows (BLAS-3, when the lazy form
    has cost more than one materialisation; Oja's factor V = F Z also every 512 rows and when F loses
    conditioning); a ``partial_fit`` call ends with the dense sketch written back, O(ell^2 d), or O(ell d) when
    the call holds few non-zeros per feature and, for the FD family, no shrink, for Oja a single learnt row (most
    one-row calls over many features). RP keeps ``w = v + S^T c`` with S updated in place by its sparse rows,
    O(ell nnz + ell^3), and O(ell d) at the end of a call. A call with few non-zeros per feature reads the sketch's rows in place; a
    larger one copies them transposed for its duration.
    The dense O(ell d) kernel (``_kernels/son.py``) stays as the reference; both compute the same iterates
    (to rounding).
    Every step moves u by at most ``|g| / alpha0`` (alpha >= alpha0 for every sketch), so an alpha0 far above
    the regulariser RFD grows on its own leaves the model near 0 after one pass (``alpha_`` shows it).

    Deviation from App. A: in the alpha = 0 phase the projection uses the H-seminorm minimiser
    ``w2* = u - tau / |x_perp|^2 x_perp`` (zero H-cost) instead of the printed ``w2`` (feasible but not
    the minimiser), and the printed ``w1`` when x lies in the row space of B (Algorithms §6.4).
    Numerics (not a change of the algorithm): when x is close to B's row space the projection's
    denominator ``x.x - (Bx)^T (BB^T + alpha I)^{-1} Bx`` loses its digits, so it is computed as
    ``|x_perp|^2 + alpha z.Bx`` (z = ``(G (G + alpha I))^+ Bx``, ``|x_perp|^2`` taken as 0 below 1e-9 x.x,
    and exactly 0 with ``slab="current"`` when x's row was just appended); without this, RFD0 on farm-ads
    (m = 50) ended at 47.7 % or 90.2 % depending on 1e-14 perturbations of the data. When the
    denominator is still not positive and finite, the Euclidean projection is used (feasible and finite). An
    example with a zero gradient (e.g. a clipped score equal to the label) adds no row to the buffer, while
    Alg. 6 appends the zero row and so counts it towards the 2 ell rows that trigger a shrink; H is the same,
    only the shrink times differ (for RFD0 on farm-ads the literal counting is not better:
    ``tools/rfd0_alpha0_audit.py``).

    Parameters
    ----------
    sketch : {"rfd", "fd", "pfd", "rp", "oja"}, default="rfd"
        The sketch of the gradient rows.
    ell : int >= 1, default=10
        Sketch size m of the paper (the FD family keeps at most 2 ell rows; RP and Oja ell rows).
    alpha0 : float >= 0, default=1.0
        Regulariser ``H_0 = alpha0 I``; 0 is allowed only for ``sketch="rfd"`` (RFD0-SON).
    eta : float >= 0, default=1.0
        ``eta_t = eta / t`` (the paper: 1/t).
    mu : float >= 0 or None, default=None
        Exp-concavity constant; None means ``1 / (8 C^2)``.
    C : float > 0, default=1.0
        Slab radius.
    loss : {"squared", "logistic", "hinge"}, default="squared"
        Loss on the score with labels -1/+1.
    beta : float in (0, 1], default=0.2
        PFD's fraction of shrunk directions (``sketch="pfd"`` only; the paper's PFD-SON uses 0.2).
    {slab}
    {safeguard}
    oja_learning_rate : float > 0, default=2.0
        Oja's step ``min(c / t, 1)`` (``sketch="oja"`` only; VW's default c).
    max_iter, shuffle : as in :class:`AdaGrad`.
    random_state : int, Generator or None, default=None
        Seed of the shuffling, of RP's hashed projection and of Oja's initial orthonormal rows (None: the
        sketch uses seed 0, so that results do not depend on how the stream is chunked).

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> from streamlearn.second_order import SketchedOnlineNewton
    >>> X, y, X_test, y_test = load_a9a()
    >>> clf = SketchedOnlineNewton(sketch="rfd", ell=5, alpha0=10.0)
    >>> clf = clf.partial_fit(X[:5000], y[:5000], classes=[-1, 1])
    >>> print(f"{clf.score(X_test, y_test):.3f}")
    0.840
    """

    sketch: str  # the parameter, set by __init__ (typed here for the methods that read it)

    _start_params = ("sketch", "alpha0")  # the sketch's kind and the initial regulariser
    _parameter_constraints = {
        "sketch": [Options(*_SKETCHES)],
        "ell": [Interval(int, 1, None, closed="left")],
        "alpha0": [Interval(float, 0, None, closed="left")],
        "beta": [Interval(float, 0, 1, closed="right")],
        "oja_learning_rate": [Interval(float, 0, None, closed="neither")],
        **_NEWTON_PARAMS,
    }

    __init__ = keyword_init(
        sketch="rfd", ell=10, alpha0=1.0, **_NEWTON_DEFAULTS, beta=0.2, oja_learning_rate=2.0, **_SECOND_ORDER_DEFAULTS
    )

    def _allocate_state(self, n_features, n_outputs, X):
        if self.alpha0 == 0 and self.sketch != "rfd":
            raise ValueError(
                f"alpha0=0 needs sketch='rfd' (RFD0-SON): with sketch={self.sketch!r} alpha stays "
                "0 and H = B^T B is singular; use alpha0 > 0."
            )
        super()._allocate_state(n_features, n_outputs, X)
        ell = int(self.ell)
        fd_family = self.sketch in ("fd", "pfd", "rfd")
        cap = 2 * ell if fd_family else ell
        K = n_outputs
        self._state_buf = np.zeros((K, cap, n_features))
        self._state_gram = np.zeros((K, cap, cap))
        self._state_sc = np.ones((K, cap)) if self.sketch != "oja" else np.zeros((K, cap))
        self._state_aux = np.zeros((K, cap))
        self._state_n_rows = np.full(K, ell, dtype=np.int64)
        self._state_alpha = np.full(K, float(self.alpha0))
        # None -> a fixed seed: the sketch (RP's hash, Oja's initial rows) is reproducible and the same
        # however the stream is chunked
        rng = check_rng(0 if self.random_state is None else self.random_state)
        self._state_seed = np.array([rng.integers(0, 2**63 - 1)], dtype=np.uint64)
        if self.sketch == "oja":
            r = min(ell, n_features)  # V needs orthonormal rows: at most n_features of them
            self._state_n_rows[:] = r
            for k in range(K):
                q, _ = np.linalg.qr(rng.standard_normal((n_features, r)))
                self._state_buf[k, :r] = q.T
                self._state_gram[k, :r, :r] = np.eye(r)

    @property
    def _score_rtol(self):
        # RFD0 (alpha = 0 phase, pseudo-inverse) with the safeguard's constant feature: the lazy kernel's
        # in-loop weights and the materialised coef_ agree to ~2e-6 relative on the online checks' data (the
        # dense kernel exactly; 2e-8 absolute on one of 39 scores); rounding amplified by the pseudo-inverse,
        # not a different model
        return 1e-5 if float(self.alpha0) == 0 and self.safeguard == "maxabs" else 1e-10

    @property
    def alpha_(self) -> FloatArray:
        """Current alpha of ``H = B^T B + alpha I`` (one per output)."""
        return self._state_alpha.copy()

    def _raw_pass(self, X, targets, sw, out):
        ell = int(self.ell)
        cap = 2 * ell if self.sketch in ("fd", "pfd", "rfd") else ell
        if self._state_buf.shape[1] != cap:  # the sketch was allocated for another ell or sketch family
            raise ValueError(
                f"sketch={self.sketch!r}, ell={ell} differs from the setting this {type(self).__name__} was "
                f"trained with (a sketch buffer of {self._state_buf.shape[1]} rows); call fit to start again."
            )
        beta = float(self.beta) if self.sketch == "pfd" else 1.0
        keep = ell - 1
        n_shrink = int(min(max(np.floor(beta * (keep + 1) + 1e-9) - 1, 0), keep))
        try:
            t, bad, nm = self._run_kernel(X, targets, sw, out, keep, n_shrink)
        except ValueError as exc:  # LAPACK refusing a Gram matrix that overflowed to inf / NaN
            if "infs or NaNs" not in str(exc):
                raise
            self._raise_diverged(None, "alpha0", verb="Raise")
        self._state_n_mat = getattr(self, "_state_n_mat", 0) + int(nm)  # materialisations (benchmark diagnostics)
        self.t_ = int(t)
        if bad >= 0:
            self._raise_diverged(bad, "alpha0", verb="Raise")

    def _kernel_args(self, X, targets, sw, out, keep, n_shrink):
        """The arguments every SON kernel takes: the chunk, the state, the Newton step's and the sketch's settings."""
        state = _k.SonState(
            w=self.coef_,
            buf=self._state_buf,
            gram=self._state_gram,
            sc=self._state_sc,
            aux=self._state_aux,
            n_rows=self._state_n_rows,
            alpha=self._state_alpha,
        )
        step = _k.SonStep(
            loss=loss_code(self.loss),
            C=float(self.C),
            mu=self._mu(),
            eta=float(self.eta),
            slab_current=self._slab_is_current(),
        )
        sketch = _k.SonSketch(
            kind=_SKETCHES[self.sketch],
            keep=keep,
            n_shrink=n_shrink,
            seed=self._state_seed[0],
            rp_dist=0,
            oja_c=float(self.oja_learning_rate),
        )
        return dict(**chunk_args(X, targets, sw), state=state, t=self.t_, step=step, sketch=sketch, out=out)

    def _run_kernel(self, X, targets, sw, out, keep, n_shrink):
        if not getattr(self, "_lazy_kernel", True):
            t, bad = self._dense_pass(X, targets, sw, out, keep, n_shrink)
            return t, bad, 0
        args = self._kernel_args(X, targets, sw, out, keep, n_shrink)
        args["transposed"] = bool(args["indptr"][-1] - args["indptr"][0] >= _LAZY_TRANSPOSE_NNZ * X.shape[1])
        if self.sketch == "oja":
            return _kl.son_oja_lazy(**args, max_cond=_kl.OJA_FACTOR_COND)
        if self.sketch == "rp":
            return _kl.son_rp_lazy(**args)
        return _kl.son_fd_lazy(**args, max_sp=_LAZY_MAX_SPARSE_ROWS, mat_factor=_LAZY_MAT_FACTOR)

    def _dense_pass(self, X, targets, sw, out, keep, n_shrink):
        return _k.son_epoch(**self._kernel_args(X, targets, sw, out, keep, n_shrink))

    # parameter mixing (streamlearn.distributed.fit_mixing)
    mixing_description = (
        "``coef_`` (the pending point), weighted by examples; the sketches are merged, not "
        "averaged: ``B^T B`` of the mixed model is the start's plus every partition's increment "
        "``B_k^T B_k - B_0^T B_0`` (so the shared starting sketch counts once), computed in the "
        "span of all the rows and shrunk back to ell - 1 rows as FD does; RFD's alpha is the "
        "start's plus every partition's increase plus half the merge's shrink (the RFD merge rule)"
    )
    _MIXABLE_SKETCHES = ("fd", "pfd", "rfd")

    def check_mixable(self) -> None:
        """Raise TypeError unless the sketch is mergeable (the frequent-directions family)."""
        if self.sketch not in self._MIXABLE_SKETCHES:
            raise TypeError(
                f"fit_mixing supports SketchedOnlineNewton with sketch in {list(self._MIXABLE_SKETCHES)} "
                f"(the mergeable frequent-directions sketches); got sketch={self.sketch!r}."
            )

    def _sketch_rows(self, k):
        r = int(self._state_n_rows[k])
        rows = self._state_buf[k, :r] * self._state_sc[k, :r, None]
        return rows[np.any(rows != 0.0, axis=1)]

    @classmethod
    def mix(cls, start: Any, models: list[Any], weights: FloatArray) -> Any:
        """The mixed model of one round (see ``mixing_description``)."""
        start, models, out = _mix_weights(start, models, weights)
        ell = int(out.ell)
        alpha0 = float(out.alpha0)
        for k in range(out.coef_.shape[0]):
            rows0 = start._sketch_rows(k) if start is not None else np.zeros((0, 0))
            a0 = start._state_alpha[k] if start is not None else alpha0
            rows, delta = merge_sketch_increments(rows0, [m._sketch_rows(k) for m in models], ell - 1)
            out._state_buf[k] = 0.0
            out._state_gram[k] = 0.0
            r = rows.shape[0]
            out._state_buf[k, :r] = rows
            out._state_gram[k, :r, :r] = rows @ rows.T
            out._state_sc[k] = 1.0
            out._state_n_rows[k] = r
            if out.sketch == "rfd":
                out._state_alpha[k] = a0 + sum(m._state_alpha[k] - a0 for m in models) + 0.5 * delta
            else:
                out._state_alpha[k] = a0
        return out


for _cls in (AdaGrad, OnlineNewtonStep, SketchedOnlineNewton):
    _cls.__doc__ = (_cls.__doc__ or "").replace("{slab}", _SLAB_DOC).replace("{safeguard}", _SAFEGUARD_DOC)
