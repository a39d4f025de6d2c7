"""TargetStandardScaler and the stream pipeline's target scaling: kernel twin, no look-ahead, chunking,
weights, mapping back, equivariance, persistence, refusals, and the command line."""

import json

import numpy as np
import pytest

from streamlearn import load
from streamlearn.cli.main import main
from streamlearn.datasets import load_svmlight
from streamlearn.learners import make_learner
from streamlearn.linear_model import NAGRegressor, OGDClassifier, OGDRegressor, PassiveAggressiveRegressor
from streamlearn.preprocessing import MaxAbsScaler, StreamPipeline, TargetStandardScaler, make_stream_pipeline
from tests.naive_scaling import naive_target_stream


def _targets(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return 5e3 + 300.0 * rng.normal(size=n), rng.choice([0.0, 0.5, 1.0, 3.0], size=n)


@pytest.mark.parametrize("chunk", [1, 7, 1000])
@pytest.mark.parametrize("weighted", [False, True])
def test_kernel_matches_twin_for_any_chunking(chunk, weighted):
    y, w = _targets()
    w = w if weighted else None
    ts = TargetStandardScaler()
    parts = [
        ts.partial_fit_transform(y[i : i + chunk], None if w is None else w[i : i + chunk])
        for i in range(0, y.shape[0], chunk)
    ]
    got = [np.concatenate(p) for p in zip(*parts)]
    for g, want, name in zip(got, naive_target_stream(y, w), ("t", "shift", "scale")):
        np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-9, err_msg=name)
    whole = TargetStandardScaler().partial_fit_transform(y, w)
    for g, h in zip(got, whole):  # the chunking changes nothing, to the bit
        np.testing.assert_array_equal(g, h)
    np.testing.assert_allclose(ts.mean_, np.average(y, weights=w), rtol=1e-12)
    np.testing.assert_allclose(ts.scale_, np.sqrt(np.average((y - ts.mean_) ** 2, weights=w)), rtol=1e-9)


def test_a_target_never_sees_itself_or_later_targets():
    y, _ = _targets(50)
    t, shift, scale = TargetStandardScaler().partial_fit_transform(y)
    changed = y.copy()
    changed[20:] = -1e9
    t2, shift2, scale2 = TargetStandardScaler().partial_fit_transform(changed)
    np.testing.assert_array_equal(shift[:21], shift2[:21])
    np.testing.assert_array_equal(scale[:21], scale2[:21])
    np.testing.assert_array_equal(t[:20], t2[:20])
    assert t[0] == t[1] == 0.0 and scale[1] == 0.0  # no spread before two targets


def test_weight_zero_adds_nothing_and_weight_two_counts_twice():
    y, _ = _targets(30)
    a = TargetStandardScaler().partial_fit(y, np.r_[np.ones(29), 0.0])
    b = TargetStandardScaler().partial_fit(y[:29])
    assert (a.mean_, a.scale_, a.n_samples_seen_) == (b.mean_, b.scale_, b.n_samples_seen_)
    c = TargetStandardScaler().partial_fit(y, np.r_[2.0, np.ones(29)])
    d = TargetStandardScaler().partial_fit(np.r_[y[0], y])
    np.testing.assert_allclose([c.mean_, c.scale_], [d.mean_, d.scale_], rtol=1e-12)


def test_bad_targets_are_refused_with_one_line():
    ts = TargetStandardScaler()
    for bad, words in [
        (None, "requires y"),
        (np.array([1.0, np.nan]), "NaN or infinity at index 1"),
        (np.ones((3, 2)), "one-dimensional"),
        (np.array(["a", "b"]), "must hold numbers"),
    ]:
        with pytest.raises(ValueError, match=words):
            ts.partial_fit(bad)
    with pytest.raises(ValueError, match="sample_weight must hold 2 finite values >= 0"):
        ts.partial_fit([1.0, 2.0], [1.0, -1.0])
    assert not hasattr(ts, "mean_")


@pytest.mark.parametrize(
    "y,w",
    [
        ([1.0, 2.0, 1e200], None),  # its squared deviation overflows
        ([1.0, 2.0, 1e300, 3.0], None),
        ([1.0, -1.7e308, 1.7e308], None),  # y - mean overflows
        ([1.0, 2.0, 3.0], [1.0, 1e308, 1e308]),  # the total weight overflows
    ],
)
def test_targets_whose_statistics_overflow_are_refused_and_change_nothing(y, w):
    ts = TargetStandardScaler().partial_fit(np.array([4.0, 5.0, 7.0]))
    before = (ts._state_stats.copy(), ts.mean_, ts.scale_, ts.n_samples_seen_)
    with pytest.raises(ValueError, match=r"^y\[\d\] = .* is too large to standardise[^\n]*$"):
        ts.partial_fit_transform(np.array(y), None if w is None else np.array(w))
    np.testing.assert_array_equal(ts._state_stats, before[0])
    assert (ts.mean_, ts.scale_, ts.n_samples_seen_) == before[1:]
    assert np.isfinite(ts.inverse_transform([1.0])).all()
    # behind a pipeline: the chunk is refused, never scored inf, and the pipeline predicts as before
    X = np.random.default_rng(0).normal(size=(len(y), 2))
    pipe = make_stream_pipeline(None, OGDRegressor(), TargetStandardScaler()).partial_fit(X, np.arange(len(y)) * 1.0)
    predicted = pipe.predict(X)
    with pytest.raises(ValueError, match="too large to standardise"):
        pipe.partial_fit_scores(X, np.array(y), sample_weight=None if w is None else np.array(w))
    np.testing.assert_array_equal(pipe.predict(X), predicted)


def _regression(n=300, d=5, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, 800.0 + X @ (100.0 * rng.normal(size=d)) + 10.0 * rng.normal(size=n)


def test_pipeline_scores_are_the_learners_scores_mapped_back():
    X, y = _regression()
    pipe = make_stream_pipeline(None, NAGRegressor(), TargetStandardScaler())
    scores = pipe.partial_fit_scores(X, y)
    t, shift, scale = TargetStandardScaler().partial_fit_transform(y)
    inner = NAGRegressor()
    np.testing.assert_array_equal(scores, shift + scale * inner.partial_fit_scores(X, t))
    np.testing.assert_array_equal(
        pipe.predict(X), pipe.target_scaler_.mean_ + pipe.target_scaler_.scale_ * inner.predict(X)
    )
    # and the standardised learner is far better than the raw one on targets around 800
    raw = NAGRegressor().partial_fit(X, y)
    assert np.mean((pipe.predict(X) - y) ** 2) < 0.1 * np.mean((raw.predict(X) - y) ** 2)


def test_pipeline_is_equivariant_in_the_target_units():
    """Targets a y + b give predictions a p + b (the learner sees the same standardised targets)."""
    X, y = _regression()
    p = make_stream_pipeline(MaxAbsScaler(), OGDRegressor(eta0=0.1), TargetStandardScaler())
    q = make_stream_pipeline(MaxAbsScaler(), OGDRegressor(eta0=0.1), TargetStandardScaler())
    sp_, sq = p.partial_fit_scores(X, y), q.partial_fit_scores(X, 1e-3 * y - 7.0)
    assert sp_[0] == sq[0] == 0.0  # before any target: nothing known, the score is 0 in any units
    np.testing.assert_allclose(sq[1:], 1e-3 * sp_[1:] - 7.0, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(q.predict(X), 1e-3 * p.predict(X) - 7.0, rtol=1e-9, atol=1e-9)


def test_pipeline_save_load_and_refused_chunk(tmp_path):
    X, y = _regression()
    pipe = make_stream_pipeline(MaxAbsScaler(), OGDRegressor(eta0=0.1), TargetStandardScaler()).partial_fit(X, y)
    pipe.save(tmp_path / "m.slm")
    back = load(tmp_path / "m.slm")
    np.testing.assert_array_equal(back.predict(X), pipe.predict(X))
    state = (pipe.target_scaler_.mean_, pipe.target_scaler_._state_stats.copy())
    with pytest.raises(ValueError):
        pipe.partial_fit(X[:10], y[:9])  # the learner refuses: the target scaler forgets the chunk too
    assert pipe.target_scaler_.mean_ == state[0]
    np.testing.assert_array_equal(pipe.target_scaler_._state_stats, state[1])


def test_pipeline_refuses_target_scaling_where_it_is_wrong():
    X, y = _regression()
    with pytest.raises(TypeError, match="applies to regressors"):
        make_stream_pipeline(None, OGDClassifier(), TargetStandardScaler()).partial_fit(X, y > 800, classes=[0, 1])
    with pytest.raises(TypeError, match="squared-loss learner"):
        make_stream_pipeline(None, PassiveAggressiveRegressor(), TargetStandardScaler()).partial_fit(X, y)


@pytest.fixture()
def raw_regression(tmp_path):
    X, y = _regression(600)
    lines = [f"{v:.17g} " + " ".join(f"{j + 1}:{x:.17g}" for j, x in enumerate(row)) for row, v in zip(X, y)]
    (tmp_path / "train.svm").write_text("\n".join(lines[:400]) + "\n")
    (tmp_path / "test.svm").write_text("\n".join(lines[400:]) + "\n")
    return tmp_path / "train.svm", tmp_path / "test.svm", y[400:]


def test_cli_regressors_standardise_the_target_by_default(raw_regression, tmp_path, capsys):
    train, test, y_test = raw_regression
    model = tmp_path / "m.slm"
    assert main(["train", str(train), "-l", "ogd-regressor", "--test", str(test), "-o", str(model), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    back = load(model)
    assert isinstance(back, StreamPipeline) and isinstance(back.target_scaler_, TargetStandardScaler)
    # the library pipeline on the same rows, and predict in the target's units
    X, y = load_svmlight(str(train), n_features=5)
    Xt, _ = load_svmlight(str(test), n_features=5)
    pipe = make_stream_pipeline(MaxAbsScaler(), make_learner("ogd-regressor"), TargetStandardScaler()).partial_fit(X, y)
    np.testing.assert_allclose(back.predict(Xt), pipe.predict(Xt), rtol=1e-12)
    preds = tmp_path / "p.txt"
    assert main(["predict", str(model), str(test), "-o", str(preds)]) == 0
    got = np.array(preds.read_text().split(), dtype=float)
    np.testing.assert_allclose(got, pipe.predict(Xt), rtol=1e-12)
    assert out["test_rmse"] == pytest.approx(np.sqrt(np.mean((got - y_test) ** 2)))
    assert main(["train", str(train), "-l", "ogd-regressor", "--scale-target", "none", "-o", str(model)]) == 0
    assert load(model).target_scaler_ is None


def test_cli_scale_target_is_refused_for_classifiers_and_other_losses(raw_regression, capsys):
    train = str(raw_regression[0])
    assert main(["train", train, "-l", "ogd", "--scale-target", "standard"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamlearn: error: --scale-target applies to regressors") and err.count("\n") == 1
    assert main(["train", train, "-l", "pa-regressor", "--scale-target", "standard"]) == 2
    assert "needs a squared-loss regressor" in capsys.readouterr().err


def test_registry_regressors_behind_the_target_scaler():
    pipe = make_learner("ogd-regressor")
    assert isinstance(pipe, OGDRegressor)  # make_learner gives the learner; the command line wraps it


@pytest.mark.parametrize(
    "scores, shown",
    [
        (None, "None"),
        ("a", "'a'"),
        ([1j], "[1j]"),
        (np.array([1.0, None], dtype=object), "array([1.0, None], dtype=object)"),
    ],
)
def test_inverse_transform_refuses_scores_that_are_not_real_numbers(scores, shown):
    """None became NaN without a word, a complex array lost its imaginary part, text raised numpy's 'could not
    convert string to float'."""
    ts = TargetStandardScaler().fit([1.0, 2.0, 3.0])
    with pytest.raises(ValueError) as err:
        ts.inverse_transform(scores)
    assert str(err.value) == f"scores must hold real numbers (a learner's standardised predictions); got {shown}."
    want = ts.mean_ + ts.scale_ * np.array([1.0, 2.0])
    for ok in ([1, 2], np.array([1.0, 2.0], dtype=object), np.array([1.0, 2.0], dtype=np.float32)):
        assert np.array_equal(ts.inverse_transform(ok), want)
