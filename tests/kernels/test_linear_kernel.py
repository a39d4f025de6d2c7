"""streamlearn._kernels.linear against its NumPy twin (tests/naive_linear.py) on adversarial inputs."""

import itertools
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels import linear as k
from streamlearn.losses import loss_code
from tests.kernels.inputs import csr, matrix, signs_and_weights, stream
from tests.naive import naive_linear_epoch

RULES = {"gradient": k.RULE_GRADIENT, "pa": k.RULE_PA, "pa1": k.RULE_PA1, "pa2": k.RULE_PA2}
SCHEDULES = {"constant": k.SCHEDULE_CONSTANT, "invsqrt": k.SCHEDULE_INVSQRT}


def _cases():
    yield from [
        ("gradient", "logistic"),
        ("gradient", "hinge"),
        ("gradient", "squared"),
        ("gradient", "perceptron"),
        ("pa", "hinge"),
        ("pa1", "hinge"),
        ("pa2", "hinge"),
        ("pa1", "epsilon_insensitive"),
        ("pa2", "epsilon_insensitive"),
        ("gradient", "epsilon_insensitive"),
    ]


@pytest.mark.parametrize("rule,loss", list(_cases()))
@pytest.mark.parametrize("kind", ["dense", "sparse", "empty_rows", "single_nonzero"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_kernel_matches_naive_twin(rule, loss, kind, index_dtype):
    rng = np.random.default_rng(zlib.crc32(f"{rule}-{loss}-{kind}".encode()))
    X = matrix(kind, rng, 60, 25)
    regression = loss == "epsilon_insensitive"
    n_out = 1 if regression else 3
    targets, sw = signs_and_weights(rng, X.shape[0], n_out)
    if regression:
        targets = (X @ rng.normal(size=X.shape[1]) + 0.1 * rng.normal(size=X.shape[0])).reshape(-1, 1)
    Xc = csr(X, index_dtype)
    for schedule, intercept_sq in itertools.product(SCHEDULES, [0.0, 1.0, 4.0]):
        coef0 = rng.normal(size=(n_out, X.shape[1])) * 0.1
        b0 = rng.normal(size=n_out) * 0.1
        coef, b = coef0.copy(), b0.copy()
        out = np.empty((X.shape[0], n_out))
        t, bad = k.linear_epoch(
            **stream(Xc, targets, sw),
            coef=coef,
            intercept=b,
            intercept_sq=intercept_sq,
            rule=RULES[rule],
            loss=loss_code(loss),
            loss_param=0.1,
            schedule=SCHEDULES[schedule],
            eta0=0.05,
            C=0.7,
            t=3,
            out_scores=out,
        )
        W, bn, tn, scores = naive_linear_epoch(
            X, targets, sw, coef0, b0, intercept_sq, rule, loss, 0.1, schedule, 0.05, 0.7, 3
        )
        assert bad == -1
        assert t == tn == 3 + np.count_nonzero(sw)
        np.testing.assert_allclose(out, scores, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(coef, W, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(b, bn, rtol=1e-10, atol=1e-12)


def test_kernel_reports_first_non_finite_score():
    # rows 0-2 are finite (w = 2e200 after row 2); row 3 scores 2e200 * 1e200 = inf: reported as 3
    X = sp.csr_matrix(np.array([[1.0], [1.0], [1e200], [1e200], [1.0]]))
    coef = np.zeros((1, 1))
    out = np.zeros((5, 1))
    targets = np.ones((5, 1))
    t, bad = k.linear_epoch(
        **stream(X, targets, np.ones(5)),
        coef=coef,
        intercept=np.zeros(1),
        intercept_sq=0.0,
        rule=k.RULE_GRADIENT,
        loss=loss_code("squared"),
        loss_param=0.0,
        schedule=k.SCHEDULE_CONSTANT,
        eta0=1.0,
        C=1.0,
        t=0,
        out_scores=out,
    )
    assert bad == 3
    assert np.all(np.isfinite(out[:3])) and not np.isfinite(out[3, 0])


def test_scores_kernel():
    rng = np.random.default_rng(1)
    X = sp.random(30, 12, density=0.3, format="csr", random_state=np.random.RandomState(1))
    coef = rng.normal(size=(2, 12))
    b = rng.normal(size=2)
    out = np.empty((30, 2))
    k.linear_scores(X.indptr, X.indices, X.data, coef, b, out)
    np.testing.assert_allclose(out, X @ coef.T + b, rtol=1e-12)
