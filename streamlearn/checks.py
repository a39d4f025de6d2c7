"""Online-learning conformance checks, run for every streamlearn learner next to scikit-learn's checks.

``yield_checks(estimator)`` yields ``check(estimator)`` callables; each raises ``AssertionError`` with a
message saying what broke. They state the online contract of :mod:`streamlearn.base`:

* ``check_partial_fit_equals_fit``: one ``partial_fit`` == ``fit(max_iter=1, shuffle=False)``;
* ``check_chunking_invariance``: row by row == one chunk == chunks of 7 rows;
* ``check_dense_equals_sparse``: dense input == CSR input;
* ``check_scores_are_pre_update``: ``partial_fit_scores`` returns the scores of the model before each
  example's own update;
* ``check_state_not_reallocated``: a second ``partial_fit`` updates the state arrays in place;
* ``check_save_load_round_trip``: a loaded model predicts the same and keeps learning the same;
* ``check_random_state_determinism``: same ``random_state`` -> identical model;
* ``check_feature_count_fixed``: a change in the number of features raises ``ValueError``;
* ``check_zero_row_is_no_op``: for margin learners (``_zero_row_no_op = True``) an all-zero row without
  intercept changes nothing;
* ``check_progressive_loss_is_known``: ``_progressive_loss`` names a loss of :mod:`streamlearn.losses`;
* ``check_non_finite_params_refused``: ``inf``, ``-inf`` and ``nan`` in a float parameter are refused by
  ``fit`` and ``partial_fit`` with the one-line parameter message, unless the parameter's range takes the
  value (``theta=inf`` of truncated gradient): then the model learns and predicts finite values;
* ``check_bad_input_values_refused``: NaN or infinity in ``X`` (dense or CSR), ``y`` or ``sample_weight``, and
  a feature value or a sample weight of 2**500 or more in size, is a one-line ``ValueError`` that leaves the model exactly as it was;
* ``check_overflowing_scores_refused``: a score that overflows (features near the largest float) is a one-line
  ``ValueError`` from ``predict``, ``decision_function`` and ``predict_proba``, never a NaN or infinite output;
* ``check_values_under_the_bound_learnt_or_diverge``: feature values just under 2**500 (1e50 to 3e149) are
  learnt, the model and its scores finite, or stop ``partial_fit`` with a one-line divergence
  (``FloatingPointError``) or ``ValueError``: no other exception, no numpy warning, no silently non-finite state.

>>> from streamlearn.linear_model import PassiveAggressiveClassifier
>>> for check in yield_checks(PassiveAggressiveClassifier()):
...     check(PassiveAggressiveClassifier())
"""

import os
import tempfile
import warnings
from typing import Any
from collections.abc import Callable, Iterator

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone, is_classifier

from .losses import LOSSES

__all__ = [
    "yield_checks",
    "check_partial_fit_equals_fit",
    "check_chunking_invariance",
    "check_dense_equals_sparse",
    "check_scores_are_pre_update",
    "check_state_not_reallocated",
    "check_save_load_round_trip",
    "check_random_state_determinism",
    "check_feature_count_fixed",
    "check_zero_row_is_no_op",
    "check_progressive_loss_is_known",
    "check_non_finite_params_refused",
    "check_bad_input_values_refused",
    "check_overflowing_scores_refused",
    "check_values_under_the_bound_learnt_or_diverge",
]


def _data(estimator, n=120, d=9, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)
    X[5] = 0.0  # an empty row
    w = rng.normal(size=d)
    if is_classifier(estimator):
        y = np.where(X @ w + 0.1 * rng.normal(size=n) > 0, 1, -1)
        return sp.csr_matrix(X), y, {"classes": [-1, 1]}
    return sp.csr_matrix(X), X @ w + 0.1 * rng.normal(size=n), {}


def _is_estimator(value):
    return hasattr(value, "get_params") and not isinstance(value, type)


def _state_arrays(est):
    """Every ndarray attribute (public or private), and those of the fitted estimators ``est`` holds (a
    pipeline's ``scaler_`` and ``learner_``, named ``scaler_.<name>``)."""
    out = {k: v for k, v in vars(est).items() if isinstance(v, np.ndarray)}
    for name, sub in vars(est).items():
        if name.endswith("_") and _is_estimator(sub):
            out.update({f"{name}.{k}": v for k, v in _state_arrays(sub).items()})
    return out


def _model_arrays(est):
    """Fitted state: ``_state_arrays`` plus ``coef_``/``intercept_`` (and a held learner's)."""
    out = _state_arrays(est)
    for prefix, sub in [("", est)] + [
        (f"{n}.", v) for n, v in vars(est).items() if n.endswith("_") and _is_estimator(v)
    ]:
        for k in ("coef_", "intercept_"):
            if hasattr(sub, k):
                out[prefix + k] = np.asarray(getattr(sub, k))
    return out


def _state_bytes(est):
    """Every ndarray attribute of ``est`` (and of the estimators it holds) as bytes, and its scalar attributes:
    equal only when the state is the same bit for bit."""
    out = {k: (v.dtype.str, v.shape, v.tobytes()) for k, v in _model_arrays(est).items()}
    for prefix, sub in [("", est)] + [
        (f"{n}.", v) for n, v in vars(est).items() if n.endswith("_") and _is_estimator(v)
    ]:
        for k, v in vars(sub).items():
            if isinstance(v, (bool, int, float, str, np.number)):
                out[prefix + k] = repr(v)
    return out


def _assert_same_model(a, b, what, rtol=1e-10, atol=1e-12):
    sa, sb = _model_arrays(a), _model_arrays(b)
    assert sa.keys() == sb.keys(), f"{what}: state attributes differ: {sorted(sa)} vs {sorted(sb)}"
    for key in sa:
        if sa[key].dtype.kind in "fc":
            np.testing.assert_allclose(
                sa[key], sb[key], rtol=rtol, atol=atol, err_msg=f"{what}: attribute {key} differs"
            )
        else:
            np.testing.assert_array_equal(sa[key], sb[key], err_msg=f"{what}: attribute {key} differs")


def _predict(est, X):
    return est._decision_function(X) if hasattr(est, "_decision_function") else est.predict(X)


def _check(check: Callable[[Any], None]) -> Callable[[Any], None]:
    """A conformance check: its docstring (one line, what it asserts) gets the sections every check shares,
    what it raises and an example running it on a learner that passes."""
    check.__doc__ = f"""{check.__doc__}

    Raises ``AssertionError`` saying what broke.

    Examples
    --------
    >>> from streamlearn.checks import {check.__name__}
    >>> from streamlearn.linear_model import PassiveAggressiveClassifier
    >>> {check.__name__}(PassiveAggressiveClassifier())
    """
    return check


@_check
def check_partial_fit_equals_fit(estimator: Any) -> None:
    """One ``partial_fit`` pass equals ``fit(max_iter=1, shuffle=False)``."""
    if "max_iter" not in estimator.get_params() or "shuffle" not in estimator.get_params():
        return
    X, y, kw = _data(estimator)
    a = clone(estimator).partial_fit(X, y, **kw)
    b = clone(estimator).set_params(max_iter=1, shuffle=False).fit(X, y)
    _assert_same_model(a, b, "one partial_fit vs fit(max_iter=1, shuffle=False)")


@_check
def check_chunking_invariance(estimator: Any) -> None:
    """Learning row by row, in one chunk and in chunks of 7 rows gives the same model."""
    X, y, kw = _data(estimator)
    # a learner may fix something from its first batch (the Perceptron's radius R): such learners name
    # the parameters that pin it in ``_chunking_params``
    estimator = clone(estimator).set_params(**getattr(estimator, "_chunking_params", {}))
    whole = clone(estimator).partial_fit(X, y, **kw)
    for size in (1, 7):
        est = clone(estimator)
        for start in range(0, X.shape[0], size):
            est.partial_fit(X[start : start + size], y[start : start + size], **kw)
        _assert_same_model(whole, est, f"one chunk vs chunks of {size} rows")


@_check
def check_dense_equals_sparse(estimator: Any) -> None:
    """Dense input and CSR input give the same model."""
    X, y, kw = _data(estimator)
    a = clone(estimator).partial_fit(X, y, **kw)
    b = clone(estimator).partial_fit(X.toarray(), y, **kw)
    _assert_same_model(a, b, "CSR vs dense input")
    np.testing.assert_allclose(
        _predict(a, X.toarray()),
        _predict(a, X),
        rtol=1e-12,
        atol=1e-12,
        err_msg="predictions on dense vs CSR input differ",
    )


@_check
def check_scores_are_pre_update(estimator: Any) -> None:
    """``partial_fit_scores`` returns the scores of the model before each example's own update."""
    X, y, kw = _data(estimator, n=40)
    est = clone(estimator).partial_fit(X[:1], y[:1], **kw)
    expected = []
    for i in range(1, X.shape[0]):
        expected.append(_predict(est, X[i : i + 1])[0])
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    got = clone(estimator).partial_fit(X[:1], y[:1], **kw).partial_fit_scores(X[1:], y[1:])
    # a learner whose in-kernel (lazy) weights and materialised weights round differently names its tolerance
    np.testing.assert_allclose(
        got,
        expected,
        rtol=getattr(estimator, "_score_rtol", 1e-10),
        atol=1e-12,
        err_msg="partial_fit_scores are not the pre-update scores",
    )


@_check
def check_state_not_reallocated(estimator: Any) -> None:
    """A second ``partial_fit`` updates the state arrays in place."""
    X, y, kw = _data(estimator)
    est = clone(estimator).partial_fit(X[:60], y[:60], **kw)
    before = {k: v for k, v in _state_arrays(est).items() if v.size > 1}
    est.partial_fit(X[60:], y[60:])
    after = _state_arrays(est)
    for key, arr in before.items():
        assert after.get(key) is arr, f"partial_fit reallocated the state array {key}"


@_check
def check_save_load_round_trip(estimator: Any) -> None:
    """A saved and loaded model predicts the same and keeps learning the same."""
    from .persist import load

    X, y, kw = _data(estimator)
    est = clone(estimator).partial_fit(X[:60], y[:60], **kw)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.slm")
        est.save(path)
        back = load(path)
    assert type(back) is type(estimator), "load returned another class"
    np.testing.assert_array_equal(_predict(back, X), _predict(est, X), err_msg="loaded model predicts differently")
    est.partial_fit(X[60:], y[60:])
    back.partial_fit(X[60:], y[60:])
    _assert_same_model(est, back, "continued training after save/load", rtol=0, atol=0)


@_check
def check_random_state_determinism(estimator: Any) -> None:
    """The same ``random_state`` gives an identical model."""
    if "random_state" not in estimator.get_params():
        return
    X, y, _ = _data(estimator)
    a = clone(estimator).set_params(random_state=0).fit(X, y)
    b = clone(estimator).set_params(random_state=0).fit(X, y)
    _assert_same_model(a, b, "two fits with random_state=0", rtol=0, atol=0)


@_check
def check_feature_count_fixed(estimator: Any) -> None:
    """A change in the number of features raises ``ValueError``."""
    X, y, kw = _data(estimator)
    est = clone(estimator).partial_fit(X, y, **kw)
    try:
        est.partial_fit(X[:, :-1], y)
    except ValueError as exc:
        assert "features" in str(exc), f"the error does not talk about features: {exc}"
    else:
        raise AssertionError("partial_fit accepted a different number of features")


@_check
def check_zero_row_is_no_op(estimator: Any) -> None:
    """For margin learners an all-zero row without intercept changes nothing."""
    if not getattr(estimator, "_zero_row_no_op", False):
        return
    X, y, kw = _data(estimator)
    est = clone(estimator).set_params(fit_intercept=False).partial_fit(X[:30], y[:30], **kw)
    before = {k: v.copy() for k, v in _model_arrays(est).items() if k != "t_"}
    est.partial_fit(sp.csr_matrix((1, X.shape[1])), y[:1])
    for key, arr in before.items():
        np.testing.assert_array_equal(getattr(est, key), arr, err_msg=f"an all-zero row changed {key}")


@_check
def check_progressive_loss_is_known(estimator: Any) -> None:
    """``_progressive_loss`` names a loss of :mod:`streamlearn.losses`."""
    assert estimator._progressive_loss in LOSSES, f"_progressive_loss {estimator._progressive_loss!r} unknown"


def _float_params(estimator, prefix=""):
    """``(set_params name, parameter name, constraint alternatives)`` of every float parameter of ``estimator``
    and of the estimators it holds (a pipeline's ``learner__eta0``)."""
    out = []
    for name, alternatives in getattr(estimator, "_parameter_constraints", {}).items():
        if any(getattr(c, "type_", None) is float for c in alternatives):
            out.append((prefix + name, name, alternatives))
    for name, value in estimator.get_params(deep=False).items():
        if _is_estimator(value):
            out.extend(_float_params(value, f"{prefix}{name}__"))
    return out


def _learn(est, X, y, kw, how):
    if how == "fit":
        return est.fit(X, y)
    return est.partial_fit(X, y, **kw)


def _range_takes(alternatives, value):
    """Whether a parameter's range, as its message states it, takes the non-finite ``value``: ``inf`` only a
    range written ``..., inf]``, ``-inf`` only one written ``[-inf, ...``, NaN none. Read from the description,
    not from ``is_satisfied_by``, so that a range which lets more in than it says is caught."""
    if value != value:
        return False
    texts = [str(c) for c in alternatives if getattr(c, "type_", None) is float]
    return any(t.endswith("inf]") if value > 0 else "[-inf," in t for t in texts)


@_check
def check_non_finite_params_refused(estimator: Any) -> None:
    """``inf``, ``-inf`` and ``nan`` in a float parameter are refused with the one-line parameter message."""
    X, y, kw = _data(estimator, n=30)
    hows = ["fit", "partial_fit"] if hasattr(estimator, "partial_fit") else ["fit"]
    for key, name, alternatives in _float_params(estimator):
        for bad in (float("inf"), float("-inf"), float("nan")):
            for how in hows:
                est = clone(estimator).set_params(**{key: bad})
                if _range_takes(alternatives, bad):  # a value the range takes must work
                    _learn(est, X, y, kw, how)
                    assert np.all(np.isfinite(np.asarray(_predict(est, X), dtype=float))), (
                        f"{how} with {key}={bad!r} (in the parameter's range) predicts non-finite values"
                    )
                    continue
                try:
                    _learn(est, X, y, kw, how)
                except ValueError as exc:
                    msg = str(exc)
                    assert "\n" not in msg.strip(), f"{how} with {key}={bad!r}: the message is not one line: {msg!r}"
                    assert repr(name) in msg and "must be" in msg and f"Got {bad!r}" in msg, (
                        f"{how} with {key}={bad!r}: the message does not name the parameter, its range and the "
                        f"value: {msg!r}"
                    )
                except Exception as exc:
                    raise AssertionError(f"{how} with {key}={bad!r} raised {type(exc).__name__}: {exc}") from exc
                else:
                    raise AssertionError(f"{how} accepted {key}={bad!r}")


def _scaled_first(est):
    """Whether ``est`` is a pipeline that hands its learner the rows scaled by their largest values."""
    return type(getattr(est, "scaler_", None)).__name__ == "MaxAbsScaler"


@_check
def check_bad_input_values_refused(estimator: Any) -> None:
    """NaN or infinity in ``X`` (dense or CSR), ``y`` or ``sample_weight``, and a feature value or a weight of 2**500
    or more in size (its square overflows), is a one-line ``ValueError`` and the model is left bit for bit as it was (a
    learner behind a max-abs scaler may take such a value, scaled: then its model and scores stay finite)."""
    X, y, kw = _data(estimator)
    est = clone(estimator).partial_fit(X[:60], y[:60], **kw)
    before = _state_bytes(est)
    predicted = _predict(est, X)
    Xd = X[60:70].toarray()
    cases: list[tuple[str, Any, Any, Any, bool]] = []  # (what, X, y, sample_weight, a finite value of X)
    for bad in (np.nan, np.inf, -np.inf, 1e200, -(2.0**500)):
        finite = bool(np.isfinite(bad))
        dense = Xd.copy()
        dense[3, 2] = bad
        cases.append((f"X (dense) holding {bad}", dense, y[60:70], None, finite))
        csr = X[60:70].copy()
        csr.data[-1] = bad
        cases.append((f"X (CSR) holding {bad}", csr, y[60:70], None, finite))
        weights = np.ones(10)
        weights[4] = abs(bad) * 1e100 if finite else bad  # beyond 2**500 too
        cases.append((f"sample_weight holding {weights[4]}", Xd, y[60:70], weights, False))
        if finite:
            continue
        if not is_classifier(estimator):
            target = y[60:70].astype(np.float64)
            target[5] = bad
            cases.append((f"y holding {bad}", Xd, target, None, False))
    for what, Xb, yb, sw, finite in cases:
        try:
            scores = est.partial_fit_scores(Xb, yb, sample_weight=sw)
        except ValueError as exc:
            assert "\n" not in str(exc), f"{what}: the error runs over several lines: {exc!r}"
            refused = True
        except FloatingPointError:  # a divergence: allowed below as learning
            scores, refused = None, False
        else:
            refused = False
        if not refused:
            # a learner behind a max-abs scaler takes huge values (scaled into [-1, 1]), may learn from them or
            # diverge on them (FloatingPointError): its scores and its model stay finite
            assert finite and _scaled_first(est), f"partial_fit accepted {what}"
            assert scores is None or np.all(np.isfinite(scores)), f"{what}: non-finite scores {scores}"
            broken = [k for k, v in _model_arrays(est).items() if v.dtype.kind == "f" and not np.all(np.isfinite(v))]
            assert not broken, f"{what}: the model is not finite: {broken}"
            est = clone(estimator).partial_fit(X[:60], y[:60], **kw)
            continue
        after = _state_bytes(est)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        assert not changed, f"{what}: the refused call changed {changed}"
        np.testing.assert_array_equal(_predict(est, X), predicted, err_msg=f"{what}: predictions changed")
    fresh = clone(estimator)  # a first call refused on its weights allocates no model
    weights = np.ones(10)
    weights[2] = np.nan
    try:
        fresh.partial_fit(Xd, y[60:70], sample_weight=weights, **kw)
    except ValueError:
        started = {"t_", "learner_.t_"} & _state_bytes(fresh).keys()
        assert not started, "a first call refused on its sample weights started a model"
    else:
        raise AssertionError("a first partial_fit accepted a NaN sample weight")


@_check
def check_overflowing_scores_refused(estimator: Any) -> None:
    """Scores that overflow (finite features near the largest float) are a one-line ``ValueError`` from
    ``predict``, ``decision_function`` and ``predict_proba``; every output returned is finite."""
    X, y, kw = _data(estimator)
    est = clone(estimator).partial_fit(X, y, **kw)
    big = np.finfo(np.float64).max
    huge = np.vstack([np.full(X.shape[1], big), np.where(np.arange(X.shape[1]) % 2, big, -big), X[:2].toarray()])
    for method in ("predict", "decision_function", "predict_proba", "_decision_function"):
        if not hasattr(est, method):
            continue
        try:
            out = np.asarray(getattr(est, method)(huge))
        except ValueError as exc:
            assert "\n" not in str(exc), f"{method}: the error runs over several lines: {exc!r}"
            continue
        if out.dtype.kind in "fc":
            assert np.all(np.isfinite(out)), f"{method} returned non-finite values {out.ravel()[:4]}"


@_check
def check_values_under_the_bound_learnt_or_diverge(estimator: Any) -> None:
    """Feature values just under 2**500 (from 1e50 to 3e149, on a third of the entries; dense and CSR) are learnt
    (the model and its scores finite) or stop ``partial_fit`` with a one-line ``FloatingPointError`` (a divergence)
    or ``ValueError``; never another exception, a numpy warning or a model left silently non-finite."""
    X, y, kw = _data(estimator, n=60, d=6, seed=1)
    rng = np.random.default_rng(1)
    for magnitude in (1e50, 1e75, 1e100, 1e120, 3e149):
        big = X.toarray()
        big[rng.random(big.shape) < 1 / 3] *= magnitude
        for what, Xb in (
            (f"dense X with values near {magnitude:g}", big),
            (f"CSR X with values near {magnitude:g}", sp.csr_matrix(big)),
        ):
            est = clone(estimator)
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                try:
                    scores = est.partial_fit_scores(Xb, y, **kw)
                    out = _predict(est, Xb[:5])
                except (FloatingPointError, ValueError) as exc:
                    assert "\n" not in str(exc), f"{what}: the error runs over several lines: {exc!r}"
                    continue
                except Exception as exc:  # any other exception is what the check reports
                    raise AssertionError(f"{what}: partial_fit raised {type(exc).__name__}: {exc}") from exc
            assert np.all(np.isfinite(scores)), f"{what}: non-finite scores {np.asarray(scores).ravel()[:4]}"
            assert np.asarray(out).dtype.kind not in "fc" or np.all(np.isfinite(out)), f"{what}: non-finite output"
            broken = [k for k, v in _model_arrays(est).items() if v.dtype.kind == "f" and not np.all(np.isfinite(v))]
            assert not broken, f"{what}: learnt without an error but the model is not finite: {broken}"


def yield_checks(estimator: Any) -> Iterator[Callable[[Any], None]]:
    """Yield the online checks that apply to ``estimator`` (see the module docstring).

    Examples
    --------
    >>> from streamlearn.checks import yield_checks
    >>> from streamlearn.linear_model import OGDClassifier
    >>> for check in yield_checks(OGDClassifier()):
    ...     check(OGDClassifier())
    """
    yield check_progressive_loss_is_known
    yield check_partial_fit_equals_fit
    yield check_chunking_invariance
    yield check_dense_equals_sparse
    yield check_scores_are_pre_update
    yield check_state_not_reallocated
    yield check_save_load_round_trip
    yield check_random_state_determinism
    yield check_feature_count_fixed
    yield check_zero_row_is_no_op
    yield check_non_finite_params_refused
    yield check_bad_input_values_refused
    yield check_overflowing_scores_refused
    yield check_values_under_the_bound_learnt_or_diverge
