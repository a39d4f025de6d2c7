"""streamlearn._kernels.cw (CW, AROW, SCW-I/II; full and diagonal) against its NumPy twin (tests/naive_margin.py)."""

import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import ndtri

from streamlearn._kernels import cw as k
from tests.kernel_inputs import KINDS, adversarial, chunk_args, csr
from tests.naive import naive_cw_epoch, naive_cw_step

RULES = {
    "cw": k.RULE_CW,
    "cw_variance": k.RULE_CW_VARIANCE,
    "arow": k.RULE_AROW,
    "scw1": k.RULE_SCW1,
    "scw2": k.RULE_SCW2,
}


def _run_kernel(Xc, targets, sw, rule, phi, C, r, bias, full, a, mu=None):
    """One epoch from ``mu`` (zeros by default), a zero intercept and ``sigma = a I``."""
    K, d = targets.shape[1], Xc.shape[1]
    mu = np.zeros((K, d)) if mu is None else mu
    b, out = np.zeros(K), np.zeros((Xc.shape[0], K))
    args = dict(
        **chunk_args(Xc, targets, sw),
        coef=mu,
        intercept=b,
        bias_value=bias,
        rule=rule,
        phi=phi,
        C=C,
        r=r,
        t=0,
        out_scores=out,
    )
    if full:
        sigma = np.repeat(np.eye(d + 1)[None] * a, K, axis=0)
        t, bad = k.cw_epoch(sigma=sigma, **args)
    else:
        sigma, sigma_b = np.full((K, d), a), np.full(K, a)
        t, bad = k.cw_epoch(sigma=sigma, sigma_b=sigma_b, **args)
        sigma = np.hstack([sigma, sigma_b[:, None]])
    return mu, b, sigma, t, bad, out


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("full", [True, False], ids=["full", "diag"])
def test_kernel_matches_naive_twin(rule, kind, full):
    rng = np.random.default_rng(zlib.crc32(f"{rule}-{kind}-{full}".encode()))
    X = adversarial(kind, rng, 40, 12)
    K = 2
    targets = np.where(rng.random((X.shape[0], K)) < 0.5, -1.0, 1.0)
    sw = rng.choice([0.0, 0.5, 1.0, 2.0], size=X.shape[0])
    for index_dtype, bias, eta, C, r, a in [(np.int32, 2.5, 0.8, 0.5, 2.0, 1.0), (np.int64, 0.0, 0.95, 4.0, 0.1, 0.3)]:
        Xc = csr(X, index_dtype)
        phi = float(ndtri(eta))
        mu, b, sigma, t, bad, out = _run_kernel(Xc, targets, sw, RULES[rule], phi, C, r, bias, full, a)
        sigma0 = np.repeat(np.eye(X.shape[1] + 1)[None] * a, K, 0) if full else np.full((K, X.shape[1] + 1), a)
        mu2, b2, sigma2, t2, out2 = naive_cw_epoch(
            X, targets, sw, np.zeros((K, X.shape[1])), np.zeros(K), sigma0, rule, phi, C, r, bias, full, 0
        )
        assert bad == -1 and t == t2 == np.count_nonzero(sw)
        scale = max(1.0, np.abs(mu2).max())
        np.testing.assert_allclose(out, out2, rtol=1e-8, atol=1e-10 * scale * 1e3)
        np.testing.assert_allclose(mu, mu2, rtol=1e-8, atol=1e-10 * scale)
        np.testing.assert_allclose(b, b2, rtol=1e-8, atol=1e-10 * scale)
        np.testing.assert_allclose(sigma, sigma2, rtol=1e-8, atol=1e-12)
        assert np.any(sigma < a), "no update happened: the fixture does not exercise the rule"


def test_step_rules_match_their_closed_forms():
    """The kernel's step function against the twin, over margins on both sides of the constraint."""
    phi = float(ndtri(0.9))
    for rule, code in RULES.items():
        for m in (-3.0, -0.5, 0.0, 0.3, 0.99, 5.0):
            for v in (1e-6, 0.2, 1.0, 30.0):
                got = k.cw_step(code, m, v, phi, 0.7, 1.5)
                want = naive_cw_step(rule, m, v, phi=phi, C=0.7, r=1.5)
                # rtol 1e-8: the twin's textbook sqrt(u) loses ~1e-9 to cancellation at v = 1e-6
                np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-300, err_msg=f"{rule} m={m} v={v}")


def test_sqrt_u_has_no_cancellation():
    """u = (sqrt(a^2 + 4v) - a)^2 / 4 rounds to 0 in the textbook form when a^2 >> v (a division by zero
    followed); the kernel's form stays accurate: sqrt(u) ~ v / a."""
    alpha, v, phi = 1e12, 1e-3, 1.2
    a = alpha * v * phi
    assert np.sqrt(a * a + 4 * v) - a == 0.0  # the textbook form breaks down here
    np.testing.assert_allclose(k._cw_sqrt_u(alpha, v, phi), v / a, rtol=1e-12)
    assert np.isfinite(k.cw_step(k.RULE_CW, -1e9, 1e-3, phi, 1.0, 1.0)[1])


def test_scw2_is_not_libol_typo():
    """LIBOL's SCW2 writes v*2 and phi*2 for v^2 and phi^2 (Algorithms §2.6); ours uses the squares."""
    phi, m, v, C = float(ndtri(0.8)), 0.2, 3.0, 1.0
    n = v + 1 / (2 * C)
    libol_gamma = phi * np.sqrt(phi**4 * m**2 * v * 2 + 4 * n * v * phi**2 * (n + v * phi * 2))
    libol = max(0.0, (-(2 * m * n + phi**2 * m * v) + libol_gamma) / (2 * (n**2 + n * v * phi**2)))
    alpha, _ = k.cw_step(k.RULE_SCW2, m, v, phi, C, 1.0)
    assert abs(alpha - libol) > 1e-3 * alpha
    # the paper's closed form is the minimiser of its objective: KKT of SCW-II's 1-d problem holds
    want, _ = naive_cw_step("scw2", m, v, phi=phi, C=C)
    np.testing.assert_allclose(alpha, want, rtol=1e-12)


def test_divergence_is_reported_not_silent():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [np.inf, 1.0]]))
    # the estimator layer rejects inf in X; the kernel itself stops at the first non-finite score
    targets, sw, mu = np.ones((2, 1)), np.ones(2), np.ones((1, 2))
    *_, bad, _ = _run_kernel(X, targets, sw, k.RULE_AROW, phi=0.0, C=1.0, r=1.0, bias=1.0, full=False, a=1.0, mu=mu)
    assert bad == 1
