"""Request bodies and served models shared by the serve tests."""

import numpy as np

from streamlearn.serve import ServedModel


def labelled_body(rng, n, n_features, per_row=3):
    """``n`` labelled LIBSVM lines as one request body: ``per_row`` distinct 1-based ids up to ``n_features`` per
    line, values rounded to 3 digits, the label the sign of their sum."""
    rows = []
    for _ in range(n):
        ids = np.sort(rng.choice(np.arange(1, n_features + 1), size=per_row, replace=False))
        vals = np.round(rng.normal(size=per_row), 3)
        rows.append(f"{1 if vals.sum() > 0 else -1} " + " ".join(f"{i}:{v:g}" for i, v in zip(ids, vals)))
    return ("\n".join(rows) + "\n").encode()


def served_ftrl(state, n_features, **kw):
    """An FTRL server on ``state`` without timed snapshots."""
    return ServedModel(state, learner="ftrl", n_features=n_features, snapshot_every=0, **kw)
