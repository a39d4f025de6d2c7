"""Arithmetic shared by the estimators' parameter-mixing hooks (``mix`` and ``finish_local_passes``).

Iterative parameter mixing (:func:`streamlearn.distributed.fit_mixing`) trains copies of one model on
several partitions and combines them after every round. Each estimator family that supports it defines
the class method ``mix(start, models, weights)`` (the model broadcast at the start of the round, or
None in the first round; the partitions' models; their example weights summing to 1) and the method
``finish_local_passes()`` (run on each partition's model before they are mixed). These helpers hold the
arithmetic the families share.

>>> import numpy as np
>>> weighted_average([np.ones(2), 3 * np.ones(2)], [0.5, 0.5])
array([2., 2.])
"""

import numpy as np

__all__ = ["MixableMixin", "weighted_average", "mixed_count", "merge_sketch_increments"]


class MixableMixin:
    """The parameter-mixing hook's defaults for an estimator family that defines ``mix``: every setting can
    be mixed, and the state needs no flushing on the worker. Families override what differs."""

    #: one line for the docs: what is averaged
    mixing_description = ""

    def check_mixable(self) -> None:
        """Raise TypeError if these settings cannot be combined by parameter mixing (by default they all can)."""

    def finish_local_passes(self) -> None:
        """Run on each partition's model before the models are mixed (by default nothing to flush: the state is
        explicit)."""


def weighted_average(arrays, weights):
    """``sum_k weights[k] * arrays[k]`` in float64."""
    out = np.zeros_like(np.asarray(arrays[0], dtype=np.float64))
    for a, w in zip(arrays, weights):
        out += w * np.asarray(a, dtype=np.float64)
    return out


def mixed_count(start, models):
    """Examples the mixed model has seen: the start's ``t_`` plus every partition's increment."""
    t0 = start.t_ if start is not None else 0
    return int(t0 + sum(m.t_ - t0 for m in models))


def merge_sketch_increments(rows0, parts, keep):
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
    rows = np.sqrt(top[:n])[:, None] * (Q @ V[:, :n]).T
    return rows, delta
