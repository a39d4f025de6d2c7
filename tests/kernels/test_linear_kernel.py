"""streamlearn._kernels.linear against its NumPy twin (tests/naive_linear.py) on adversarial inputs."""

import itertools
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._kernels import linear as k
from streamlearn.losses import loss_code
from tests.kernel_inputs import adversarial, chunk_args, csr
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
    X = adversarial(kind, rng, 60, 25)
    regression = loss == "epsilon_insensitive"
    n_out = 1 if regression else 3
    if regression:
        targets = (X @ rng.normal(size=X.shape[1]) + 0.1 * rng.normal(size=X.shape[0])).reshape(-1, 1)
    else:
        targets = np.where(rng.random((X.shape[0], n_out)) < 0.5, -1.0, 1.0)
    sw = rng.choice([0.0, 0.5, 1.0, 2.0], size=X.shape[0])
    Xc = csr(X, index_dtype)
    for schedule, intercept_sq in itertools.product(SCHEDULES, [0.0, 1.0, 4.0]):
        coef0 = rng.normal(size=(n_out, X.shape[1])) * 0.1
        b0 = rng.normal(size=n_out) * 0.1
        coef, b = coef0.copy(), b0.copy()
        out = np.empty((X.shape[0], n_out))
        t, bad = k.linear_epoch(
            **chunk_args(Xc, targets, sw),
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
        **chunk_args(X, targets, np.ones(5)),
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


def _four_partial_sums(terms):
    """``(s0 + s1) + (s2 + s3)``, ``s_j`` the left-to-right sum of the terms at positions j mod 4 of the whole
    blocks of four, the terms after the last whole block added to ``s0``."""
    s = [0.0, 0.0, 0.0, 0.0]
    whole = len(terms) - len(terms) % 4
    for p, v in enumerate(terms):
        s[p % 4 if p < whole else 0] += v
    return (s[0] + s[1]) + (s[2] + s[3])


def test_row_sums_are_the_four_partial_sums_bit_for_bit():
    """linear_scores (csr_row_dot) and csr_row_dot_sq sum a row's terms in four partial sums, the same sums to
    the last bit; terms of magnitudes 1e-8 to 1e8, so that another order rounds differently."""
    rng = np.random.default_rng(7)
    d = 16
    lengths = np.tile(np.arange(12), 5)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.concatenate([np.sort(rng.choice(d, n, replace=False)) for n in lengths])
    data = rng.normal(size=indptr[-1]) * 10.0 ** rng.integers(-8, 9, indptr[-1])
    w = rng.normal(size=(1, d)) * 10.0 ** rng.integers(-8, 9, (1, d))
    out = np.empty((lengths.size, 1))
    k.linear_scores(indptr, indices, data, w, np.zeros(1), out)
    for i in range(lengths.size):
        st, en = indptr[i], indptr[i + 1]
        want = _four_partial_sums(w[0, indices[st:en]] * data[st:en])
        dot, sq = k.csr_row_dot_sq(w, 0, indices, data, st, en)
        assert out[i, 0] == want and dot == want, i
        assert sq == _four_partial_sums(data[st:en] ** 2), i


def test_dense_scores_are_the_csr_scores_bit_for_bit():
    """dense_linear_scores gathers each row's non-zeros in column order and sums them as linear_scores sums the CSR
    matrix of those non-zeros (terms of magnitudes 1e-8 to 1e8, so that another order rounds differently); a NaN,
    an infinity or a value of the limit's size or more stops it (False) wherever it is."""
    from streamlearn._validation import MAX_FEATURE_VALUE, dense_to_csr

    rng = np.random.default_rng(3)
    for n, d, k_out in [(40, 13, 1), (7, 1, 3), (5, 30, 2)]:
        A = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-8, 9, (n, d)) * (rng.random((n, d)) < 0.6)
        A[0] = 0.0  # an empty row
        if d > 1:
            A[1, 0] = -0.0
        coef = rng.normal(size=(k_out, d)) * 10.0 ** rng.integers(-8, 9, (k_out, d))
        b = rng.normal(size=k_out)
        got, want = np.empty((n, k_out)), np.empty((n, k_out))
        assert k.dense_linear_scores(A, coef, b, got, MAX_FEATURE_VALUE)
        X = dense_to_csr(A)
        k.linear_scores(X.indptr, X.indices, X.data, coef, b, want)
        np.testing.assert_array_equal(got, want)
        for bad in (np.nan, np.inf, -np.inf, MAX_FEATURE_VALUE, -MAX_FEATURE_VALUE):
            B = A.copy()
            B[n - 1, d - 1] = bad
            assert not k.dense_linear_scores(B, coef, b, np.empty((n, k_out)), MAX_FEATURE_VALUE)
        B = A.copy()
        B[n - 1, d - 1] = np.nextafter(MAX_FEATURE_VALUE, 0.0)  # under the limit: scored
        assert k.dense_linear_scores(B, coef, b, np.empty((n, k_out)), MAX_FEATURE_VALUE)
