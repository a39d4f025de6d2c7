"""The row loop every NumPy twin of a streaming kernel walks: dense rows, one at a time, with the step count."""

import numpy as np

__all__ = ["dense", "scored_outputs", "weighted_rows"]


def dense(X):
    """X as a dense float array (a scipy sparse matrix is expanded)."""
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=float)


def weighted_rows(X, sample_weight, t):
    """``(i, x, s, t)`` for every row ``x = X[i]`` (dense) with its weight ``s = sample_weight[i]``; ``t`` counts the
    examples of non-zero weight so far, this one included (a zero weight does not advance it).

    ``for i, x, s, t in weighted_rows(X, sample_weight, t)`` leaves ``t`` at the count after the last row."""
    for i, x in enumerate(dense(X)):
        s = sample_weight[i]
        if s != 0:
            t += 1
        yield i, x, s, t


def scored_outputs(X, sample_weight, t, n_out, score, scores):
    """The pass in the kernels' order: every output ``k`` of every row ``x = X[i]`` is scored ``z = score(x, k)``
    before its update, and ``scores[i, k] = z``; yields ``(i, x, s, t, k, z)`` for the outputs of the rows of
    non-zero weight ``s`` (``t`` as in :func:`weighted_rows`). The caller updates the model in place before the
    next output is scored."""
    for i, x, s, ti in weighted_rows(X, sample_weight, t):
        for k in range(n_out):
            z = score(x, k)
            scores[i, k] = z
            if s != 0:
                yield i, x, s, ti, k, z
