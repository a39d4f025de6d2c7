"""No NaN or inf from the second-order learners on hard inputs (issue 4: ill-conditioned, badly scaled,
duplicated and all-zero rows)."""

import numpy as np
import pytest

from streamlearn.learners import make_learner

NAMES = ["adagrad", "full-on", "fd-son", "pfd-son", "rp-son", "oja-son", "rfd-son", "rfd0-son"]


def _base(n=150, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) > 0, 1, -1)
    return X, y


def _ill_conditioned():
    X, y = _base()
    u, _, vt = np.linalg.svd(X, full_matrices=False)
    s = np.logspace(0, -6, X.shape[1])  # condition number 1e6
    return u @ np.diag(s) @ vt * np.sqrt(X.shape[0]), y


def _scaled(f):
    def make():
        X, y = _base()
        return X * f, y
    return make


def _duplicated():
    X, y = _base(n=30)
    return np.repeat(X, 5, axis=0), np.repeat(y, 5)


def _zero_rows():
    X, y = _base()
    X[::3] = 0.0
    X[:5] = 0.0
    return X, y


CASES = {"cond1e6": _ill_conditioned, "scale1e-6": _scaled(1e-6), "scale1e6": _scaled(1e6),
         "duplicated": _duplicated, "zero_rows": _zero_rows}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", NAMES)
def test_finite_on_hard_inputs(name, case):
    X, y = CASES[case]()
    params = {"ell": "3"} if name.endswith("-son") else {}
    est = make_learner(name, params)
    scores = est.partial_fit_scores(X, y, classes=[-1, 1])
    assert np.all(np.isfinite(scores)), f"{name} on {case}: non-finite pre-update score"
    assert np.all(np.isfinite(est.coef_)), f"{name} on {case}: non-finite weights"
    assert np.all(np.abs(scores) <= est.C * (1 + 1e-12) + 1e-12) or not getattr(est, "project", True)
    assert np.all(np.isfinite(est.decision_function(X)))
