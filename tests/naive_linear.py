"""NumPy twins of streamlearn._kernels.linear (first-order learners), written from Algorithms §2.1-2.3."""

import numpy as np

from streamlearn.losses import loss_dloss, loss_value
from tests.naive_rows import scored_outputs

__all__ = ["naive_linear_epoch", "naive_csr_check"]


def naive_linear_epoch(
    X, targets, sample_weight, coef, intercept, intercept_sq, rule, loss, loss_param, schedule, eta0, C, t
):
    """Row-by-row dense reference: returns (coef, intercept, t, scores) without touching the inputs."""
    W = np.array(coef, dtype=float, copy=True)
    b = np.array(intercept, dtype=float, copy=True)
    scores = np.zeros((X.shape[0], W.shape[0]))
    for i, x, s, ti, k, z in scored_outputs(X, sample_weight, t, W.shape[0], lambda x, k: W[k] @ x + b[k], scores):
        y = targets[i, k]
        if rule == "gradient":
            eta = eta0 / np.sqrt(ti) if schedule == "invsqrt" else eta0
            step = -eta * float(loss_dloss(loss, y, z, loss_param)) * s
        else:
            sq = intercept_sq + x @ x
            lt = float(loss_value(loss, y, z, loss_param))
            if lt <= 0 or sq <= 0:
                continue
            tau = {"pa": lt / sq, "pa1": min(C, lt / sq), "pa2": lt / (sq + 1 / (2 * C))}[rule]
            direction = -np.sign(float(loss_dloss(loss, y, z, loss_param)))
            step = tau * direction * s
        W[k] += step * x
        b[k] += step * intercept_sq
    return W, b, t + np.count_nonzero(sample_weight), scores


def naive_csr_check(indptr, indices, data, n_cols, limit=np.inf):
    """Twin of ``csr_check``: (indptr decreases, an index outside [0, n_cols), a value not below ``limit`` in size
    (NaN included)) as 0/1; ``limit`` is a power of two."""
    nnz = int(indptr[-1])
    idx = np.asarray(indices[:nnz], dtype=np.int64)
    return (
        int(np.any(np.diff(indptr) < 0)),
        int(np.any((idx < 0) | (idx >= n_cols))),
        int(not np.all(np.abs(data[:nnz]) < limit)),
    )
