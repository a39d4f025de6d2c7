"""How each learner family's state is read on the workers and combined on the client (type dispatch).

The estimators are not changed for distribution: each adapter knows which fitted attributes of its
family hold the model and how to combine the models of one round. ``combine(start, models, weights)``
gets the model broadcast at the start of the round (None in the first round), the partitions' models
after their local passes and the number of examples each one learnt from; it returns the mixed model.

Every family: the counter ``t_`` (examples learnt from, which drives the step-size schedules) becomes
the start's plus every partition's increment, i.e. the number of examples the mixed model has seen.
"""

import copy

import numpy as np

from .._kernels import sparse_l1 as _sparse_kernels
from ..linear_model._first_order import _FirstOrderLinear
from ..linear_model._sparse import _FTRL, _RDA, _Truncated
from ..second_order._son import AdaGrad, SketchedOnlineNewton

__all__ = ["ADAPTERS", "adapter_for"]


def _wavg(arrays, weights):
    out = np.zeros_like(np.asarray(arrays[0], dtype=np.float64))
    for a, w in zip(arrays, weights):
        out += w * np.asarray(a, dtype=np.float64)
    return out


def _t(start, models):
    t0 = start.t_ if start is not None else 0
    return int(t0 + sum(m.t_ - t0 for m in models))


class _Adapter:
    #: one line for the docs: what is averaged
    averaged = ""

    def check(self, learner):
        """Raise if this learner's settings cannot be mixed."""

    def finish_local(self, est):
        """Run on the worker after the local passes (e.g. apply lazy updates)."""

    def combine(self, start, models, weights):
        raise NotImplementedError


class FirstOrderAdapter(_Adapter):
    averaged = ("``coef_`` and ``intercept_`` (weighted by examples); Perceptron's radius ``radius_`` is the "
                "largest over the partitions (it bounds every row norm)")

    def combine(self, start, models, weights):
        out = copy.deepcopy(models[0])
        out.coef_ = _wavg([m.coef_ for m in models], weights)
        out.intercept_ = _wavg([m.intercept_ for m in models], weights)
        if hasattr(out, "radius_"):
            out.radius_ = max(m.radius_ for m in models)
        out.t_ = _t(start, models)
        return out


class TruncatedAdapter(_Adapter):
    averaged = ("the weights after every pending truncation is applied on the worker (the lazy marks are "
                "flushed, so the averaged numbers are the models' actual weights); the marks and the "
                "cumulative penalty restart equal, at the weighted mean penalty (only their differences matter)")

    def finish_local(self, est):
        rule, theta, _, _ = est._truncation()
        _sparse_kernels.truncated_flush(est._state, est._state_penalty, theta, rule)

    def combine(self, start, models, weights):
        out = copy.deepcopy(models[0])
        K = out._state.shape[1] - 1
        penalty = float(sum(w * m._state_penalty for m, w in zip(models, weights)))
        state = np.empty_like(out._state)
        state[:, :K] = _wavg([m._state[:, :K] for m in models], weights)
        state[:, K] = penalty
        out._state = state
        out._state_penalty = penalty
        out.t_ = _t(start, models)
        return out


class RDAAdapter(_Adapter):
    averaged = ("the mean gradients ``G_k / t_k`` of the partitions, averaged by examples and multiplied by the "
                "total ``t_`` (examples seen): RDA thresholds this mean gradient against ``l1``, and ``sqrt(t)`` "
                "is the step scale of one learner that saw every example. (Adding the partitions' increments "
                "of ``G`` instead, which RDA's additive state suggests, mixed worse: the increments are "
                "gradients at the partitions' diverging models, all counted at full weight.)")

    def combine(self, start, models, weights):
        out = copy.deepcopy(models[0])
        t = _t(start, models)
        out._state = _wavg([m._state / max(m.t_, 1) for m in models], weights) * t
        out.t_ = t
        return out


class FTRLAdapter(_Adapter):
    averaged = ("``z`` and ``n`` (the sum of squared gradients; stored as sqrt(n)), both weighted by "
                "examples: ``w = -(z - sgn(z) l1) / ((beta + sqrt(n)) / alpha + l2)`` then stays on the scale "
                "of one partition's model, and a coordinate whose averaged ``|z|`` is within ``l1`` is an exact "
                "zero, as in the single-machine model (summing the increments instead would put ``z`` and "
                "``sqrt(n)`` on different scales and inflate ``w`` by about the square root of the number of "
                "partitions)")

    def combine(self, start, models, weights):
        out = copy.deepcopy(models[0])
        state = np.empty_like(out._state)
        state[..., 0] = _wavg([m._state[..., 0] for m in models], weights)
        state[..., 1] = np.sqrt(_wavg([m._state[..., 1] ** 2 for m in models], weights))
        out._state = state
        out.t_ = _t(start, models)
        return out


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
            est._state_s = est._state_s * f ** 2
        if hasattr(est, "_state_buf"):
            est._state_buf = est._state_buf * f
        est.scale_ = common.copy()
        return est

    return (None if start is None else convert(start)), [convert(m) for m in models]


class AdaGradAdapter(_Adapter):
    averaged = "``coef_`` (the pending point) and the squared-gradient accumulators ``s``, weighted by examples"

    def combine(self, start, models, weights):
        start, models = _common_scale(start, models)
        out = copy.deepcopy(models[0])
        out.coef_ = _wavg([m.coef_ for m in models], weights)
        out.intercept_ = _wavg([m.intercept_ for m in models], weights)
        out._state_s = _wavg([m._state_s for m in models], weights)
        out.t_ = _t(start, models)
        return out


class SONAdapter(_Adapter):
    averaged = ("``coef_`` (the pending point), weighted by examples; the sketches are merged, not averaged: "
                "``B^T B`` of the mixed model is the start's plus every partition's increment "
                "``B_k^T B_k - B_0^T B_0`` (so the shared starting sketch counts once), computed in the span of "
                "all the rows and shrunk back to ell - 1 rows as FD does; RFD's alpha is the start's plus every "
                "partition's increase plus half the merge's shrink (the RFD merge rule)")

    _SUPPORTED = ("fd", "pfd", "rfd")

    def check(self, learner):
        if learner.sketch not in self._SUPPORTED:
            raise TypeError(f"fit_mixing supports SketchedOnlineNewton with sketch in {list(self._SUPPORTED)} (the "
                            f"mergeable frequent-directions sketches); got sketch={learner.sketch!r}.")

    def combine(self, start, models, weights):
        start, models = _common_scale(start, models)
        out = copy.deepcopy(models[0])
        out.coef_ = _wavg([m.coef_ for m in models], weights)
        out.intercept_ = _wavg([m.intercept_ for m in models], weights)
        out.t_ = _t(start, models)
        ell = int(out.ell)
        alpha0 = float(out.alpha0)
        for k in range(out.coef_.shape[0]):
            rows0 = _rows(start, k)
            a0 = start._state_alpha[k] if start is not None else alpha0
            rows, delta = _merge_increments(rows0, [_rows(m, k) for m in models], ell - 1)
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


def _rows(est, k):
    if est is None:
        return np.zeros((0, 0))
    r = int(est._state_n_rows[k])
    rows = est._state_buf[k, :r] * est._state_sc[k, :r, None]
    return rows[np.any(rows != 0.0, axis=1)]


def _merge_increments(rows0, parts, keep):
    """Rows ``B`` (at most ``keep``) with ``B^T B`` = the FD shrink of ``R0^T R0 + sum_j (R_j^T R_j - R0^T R0)``.

    Works in an orthonormal basis Q of the span of all rows (d x m, m <= the total number of rows): the
    target is ``Q S Q^T`` with S small and symmetric; its eigenvalues are clipped at 0 (the increments can
    be indefinite where a partition's shrinks removed part of the start), and the ``keep`` largest are
    reduced by the next one (``delta``, returned), as one FD shrink does.
    """
    blocks = [b for b in [rows0, *parts] if b.size]
    if not blocks:
        return np.zeros((0, 0)), 0.0
    Y = np.vstack(blocks)
    Q, _ = np.linalg.qr(Y.T)  # d x m
    S = np.zeros((Q.shape[1], Q.shape[1]))
    for R in parts:
        if R.size:
            C = R @ Q
            S += C.T @ C
    if rows0.size:
        C0 = rows0 @ Q
        S -= (len(parts) - 1) * (C0.T @ C0)
    lam, V = np.linalg.eigh(0.5 * (S + S.T))
    lam, V = lam[::-1].clip(min=0.0), V[:, ::-1]
    delta = float(lam[keep]) if lam.shape[0] > keep else 0.0
    top = (lam[:keep] - delta).clip(min=0.0)
    n = int(np.count_nonzero(top > 0.0))
    rows = (np.sqrt(top[:n])[:, None] * (Q @ V[:, :n]).T)
    return rows, delta


#: type -> adapter; looked up along the learner's MRO
ADAPTERS = {
    _FirstOrderLinear: FirstOrderAdapter(),
    _Truncated: TruncatedAdapter(),
    _RDA: RDAAdapter(),
    _FTRL: FTRLAdapter(),
    AdaGrad: AdaGradAdapter(),
    SketchedOnlineNewton: SONAdapter(),
}


def supported_learners():
    """Names of the public learners :func:`fit_mixing` can average, sorted.

    >>> from streamlearn.distributed import supported_learners
    >>> "FTRLProximalClassifier" in supported_learners()
    True
    """
    from .. import linear_model, second_order

    names = []
    for mod in (linear_model, second_order):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if isinstance(obj, type) and _lookup(obj) is not None:
                names.append(name)
    return sorted(names)


def _lookup(cls):
    for base in cls.__mro__:
        if base in ADAPTERS:
            return ADAPTERS[base]
    return None


def adapter_for(learner):
    adapter = _lookup(type(learner))
    if adapter is None:
        raise TypeError(f"fit_mixing cannot average a {type(learner).__name__}: supported learners are "
                        f"{', '.join(supported_learners())}.")
    adapter.check(learner)
    return adapter
