"""Online scalers and the stream pipeline: kernel twins, no look-ahead, chunking, persistence, checks."""

import os
import re
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn import load
from streamlearn.evaluation import progressive_validation
from streamlearn.linear_model import NAGClassifier, OGDClassifier, OGDRegressor
from streamlearn.preprocessing import MaxAbsScaler, StandardScaler, make_stream_pipeline
from tests.naive_scaling import naive_maxabs_stream, naive_standard_stream


def _data(kind, seed=0, n=80, d=7):
    rng = np.random.default_rng(zlib.crc32(f"{kind}{seed}".encode()))
    X = rng.normal(size=(n, d)) * np.logspace(-3, 4, d) + np.linspace(0, 1e5, d)  # far-from-0 columns
    if kind == "sparse":
        X[rng.random(X.shape) < 0.6] = 0.0
        X[:, 0] = 0.0  # a column never seen
        X[7] = 0.0
    return X


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_kernels_match_twins_for_any_chunking(kind, chunk):
    X = _data(kind)
    Xin = sp.csr_matrix(X) if kind == "sparse" else X
    for scaler, want in [
        (MaxAbsScaler(), naive_maxabs_stream(X)),
        (StandardScaler(), naive_standard_stream(X, center=kind == "dense")),
        (StandardScaler(with_mean=False), naive_standard_stream(X, center=False)),
        (StandardScaler(with_std=False), naive_standard_stream(X, center=kind == "dense", with_std=False)),
    ]:
        parts = [scaler.partial_fit_transform(Xin[i : i + chunk]) for i in range(0, X.shape[0], chunk)]
        got = sp.vstack(parts).toarray() if kind == "sparse" else np.vstack(parts)
        np.testing.assert_allclose(
            got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max(), err_msg=f"{scaler} chunk={chunk}"
        )
        if kind == "sparse":
            assert all(sp.issparse(p) for p in parts)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_statistics_match_numpy(kind):
    X = _data(kind)
    Xin = sp.csr_matrix(X) if kind == "sparse" else X
    sc = StandardScaler().partial_fit(Xin[:30]).partial_fit(Xin[30:])
    np.testing.assert_allclose(sc.mean_, X.mean(axis=0), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(sc.var_, X.var(axis=0), rtol=1e-9, atol=1e-6)
    assert sc.n_samples_seen_ == X.shape[0]
    ma = MaxAbsScaler().partial_fit(Xin)
    np.testing.assert_array_equal(ma.max_abs_, np.abs(X).max(axis=0))
    # transform uses the current statistics and changes nothing
    before = sc.mean_.copy()
    out = sc.transform(Xin)
    out = out.toarray() if sp.issparse(out) else out
    want = (X - X.mean(axis=0)) if kind == "dense" else X
    np.testing.assert_allclose(out, want / sc.scale_, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(sc.mean_, before)


def test_a_row_never_sees_itself_or_later_rows():
    X = _data("dense")
    for scaler in (MaxAbsScaler(), StandardScaler()):
        a = scaler.__class__().partial_fit_transform(X)
        X2 = X.copy()
        X2[40:] *= 1e6  # change the future
        b = scaler.__class__().partial_fit_transform(X2)
        np.testing.assert_array_equal(a[:40], b[:40])


def test_feature_count_is_fixed_and_errors_name_the_input():
    sc = StandardScaler().partial_fit(np.ones((3, 4)))
    with pytest.raises(ValueError, match="features"):
        sc.partial_fit_transform(np.ones((3, 5)))
    with pytest.raises(ValueError, match="NaN"):
        StandardScaler().partial_fit(np.array([[np.nan, 1.0]]))


def test_pipeline_is_chunk_invariant_and_progressive_validation_matches_manual_loop():
    X = _data("dense")
    y = np.where(X[:, 3] / 1e4 + X[:, 5] / 1e6 > np.median(X[:, 3] / 1e4 + X[:, 5] / 1e6), 1, -1)
    pipe = make_stream_pipeline(StandardScaler(), OGDClassifier())
    whole = pipe.__class__(**pipe.get_params(deep=False)).partial_fit_scores(X, y, classes=[-1, 1])
    sc, clf, manual = StandardScaler(), OGDClassifier(), []
    for i in range(X.shape[0]):  # the definition: scale row i by rows < i, score, learn
        xi = sc.partial_fit_transform(X[i : i + 1])
        manual.append(clf.partial_fit_scores(xi, y[i : i + 1], classes=[-1, 1])[0])
    np.testing.assert_allclose(whole, manual, rtol=1e-12)
    res = progressive_validation(
        make_stream_pipeline(StandardScaler(), OGDClassifier()), (X, y), classes=[-1, 1], chunk_size=9
    )
    assert res.n_examples == X.shape[0]
    np.testing.assert_allclose(res.online_error_rate, np.mean(np.where(np.array(manual) >= 0, 1, -1) != y))


def test_pipeline_save_load_round_trip(tmp_path):
    X = _data("sparse")
    y = (X[:, 2] > 0).astype(int)
    pipe = make_stream_pipeline(MaxAbsScaler(), NAGClassifier()).partial_fit(X[:50], y[:50], classes=[0, 1])
    path = os.path.join(tmp_path, "pipe.slm")
    pipe.save(path)
    back = load(path)
    np.testing.assert_array_equal(back.predict_proba(X), pipe.predict_proba(X))
    np.testing.assert_array_equal(back.scaler_.max_abs_, pipe.scaler_.max_abs_)
    assert back.get_params()["learner__eta0"] == pipe.learner.eta0
    back.partial_fit(X[50:], y[50:])
    pipe.partial_fit(X[50:], y[50:])
    np.testing.assert_array_equal(back.decision_function(X), pipe.decision_function(X))


def test_pipeline_refused_chunk_leaves_the_scaler_unchanged():
    X = _data("dense")
    pipe = make_stream_pipeline(StandardScaler(), OGDRegressor()).partial_fit(X[:20], np.ones(20))
    before = pipe.scaler_.mean_.copy(), pipe.scaler_.n_samples_seen_
    with pytest.raises(ValueError):
        pipe.partial_fit(X[20:30], np.ones(9))  # 10 rows, 9 targets
    np.testing.assert_array_equal(pipe.scaler_.mean_, before[0])
    assert pipe.scaler_.n_samples_seen_ == before[1]


def test_pipeline_predict_proba_only_when_the_learner_has_it():
    assert hasattr(make_stream_pipeline(MaxAbsScaler(), NAGClassifier()), "predict_proba")
    assert not hasattr(make_stream_pipeline(MaxAbsScaler(), NAGClassifier(loss="hinge")), "predict_proba")


@pytest.mark.parametrize("scaler", [MaxAbsScaler(), StandardScaler()], ids=["maxabs", "standard"])
def test_scalers_name_their_output_columns_as_sklearn_transformers_do(scaler):
    # get_feature_names_out and set_output(transform="pandas"), which scikit-learn's ColumnTransformer and
    # Pipeline.set_output rely on (one output column per input column, same name)
    pd = pytest.importorskip("pandas")
    from sklearn.base import clone
    from sklearn.compose import ColumnTransformer

    df = pd.DataFrame({"price": [1.0, -4.0, 2.0], "qty": [10.0, 0.0, 30.0], "shop": ["a", "b", "a"]})
    fitted = clone(scaler).fit(df[["price", "qty"]])
    assert list(fitted.get_feature_names_out()) == ["price", "qty"]
    assert list(clone(scaler).fit(df[["price", "qty"]].to_numpy()).get_feature_names_out()) == ["x0", "x1"]
    out = clone(scaler).set_output(transform="pandas").fit(df[["price", "qty"]]).transform(df[["price", "qty"]])
    assert list(out.columns) == ["price", "qty"]
    np.testing.assert_array_equal(out.to_numpy(), fitted.transform(df[["price", "qty"]]))
    ct = ColumnTransformer([("num", clone(scaler), ["price", "qty"])]).fit(df)
    assert list(ct.get_feature_names_out()) == ["num__price", "num__qty"]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "scaler", [MaxAbsScaler(), StandardScaler(), StandardScaler(with_mean=False)], ids=["maxabs", "standard", "std"]
)
def test_pipeline_rows_of_weight_zero_change_nothing(scaler, sparse):
    # an example of weight 0 is scored and changes nothing: not the learner and not the scaler's statistics
    # (the command line's --scale runs this pipeline on VW importance weights)
    from sklearn.base import clone

    rng = np.random.default_rng(5)
    X = rng.standard_normal((80, 4)) * [1.0, 10.0, 0.1, 100.0]
    X[rng.random(X.shape) < 0.3] = 0.0
    y = np.where(X[:, 0] + X[:, 1] / 10 > 0, 1, -1)
    w = np.ones(80)
    w[::4] = 0.0
    X[::4] *= 1000.0  # huge rows of weight 0: a maximum or a moment taken from them shows
    keep = w > 0
    Xin = sp.csr_matrix(X) if sparse else X
    pipe = make_stream_pipeline(clone(scaler), OGDClassifier())
    ref = make_stream_pipeline(clone(scaler), OGDClassifier())
    scores = np.concatenate(
        [
            pipe.partial_fit_scores(Xin[i : i + 30], y[i : i + 30], classes=[-1, 1], sample_weight=w[i : i + 30])
            for i in (0, 30, 60)
        ]
    )
    ref_scores = ref.partial_fit_scores(Xin[keep], y[keep], classes=[-1, 1])
    np.testing.assert_allclose(scores[keep], ref_scores, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(pipe.learner_.coef_, ref.learner_.coef_)
    assert pipe.scaler_.n_samples_seen_ == ref.scaler_.n_samples_seen_ == keep.sum()
    np.testing.assert_array_equal(pipe.scaler_.scale_, ref.scaler_.scale_)
    # the score of a weight-0 row is the prediction of the pipeline at that point of the stream
    first = make_stream_pipeline(clone(scaler), OGDClassifier()).partial_fit(Xin[1:4], y[1:4], classes=[-1, 1])
    np.testing.assert_allclose(scores[4], first.decision_function(Xin[4:5])[0], rtol=1e-12)


def test_pipeline_fit_leaves_rows_of_weight_zero_out_of_the_statistics():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    w = np.ones(40)
    w[::5] = 0.0
    X[::5] *= 1000.0
    keep = w > 0
    for scaler in (MaxAbsScaler(), StandardScaler()):
        pipe = make_stream_pipeline(scaler, OGDClassifier(shuffle=False)).fit(X, y, sample_weight=w)
        ref = make_stream_pipeline(scaler, OGDClassifier(shuffle=False)).fit(X[keep], y[keep])
        np.testing.assert_array_equal(pipe.scaler_.scale_, ref.scaler_.scale_)
        np.testing.assert_allclose(pipe.decision_function(X), ref.decision_function(X), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("sparse", [False, True])
def test_values_whose_squares_overflow_are_refused_by_the_standard_scaler_only(sparse):
    X = np.array([[1.0, 2.0], [3.0, -1e200], [2.0, 1.0]])
    Xin = sp.csr_matrix(X) if sparse else X
    with pytest.raises(
        ValueError, match=r"^Input X has the value -1e\+200 \(row 1, column 1\); expected values below 2\*\*500"
    ):
        StandardScaler().partial_fit_transform(Xin)
    scaler = StandardScaler().partial_fit(X[[0, 2]])
    state = {k: v.copy() for k, v in vars(scaler).items() if isinstance(v, np.ndarray)}
    with pytest.raises(ValueError, match="below 2\\*\\*500"):
        scaler.partial_fit(Xin)
    for k, v in state.items():
        np.testing.assert_array_equal(getattr(scaler, k), v)
    assert np.isfinite(scaler.var_).all()
    # the max-abs scaler only compares sizes: it takes such values, and scales them into [-1, 1]
    out = MaxAbsScaler().fit(Xin).transform(Xin)
    assert np.isfinite(out.toarray() if sparse else out).all()


def test_a_value_that_overflows_once_scaled_is_one_line_and_changes_nothing():
    """Finite input far beyond its column's scale: never a silent infinity, a numpy warning, or an error that
    blames the input for holding infinity; the scaler forgets the refused chunk, called directly or in a
    pipeline."""
    import warnings

    from streamlearn.learners import make_learner, scaled_learner

    m = scaled_learner("pa", make_learner("pa", {}), "maxabs")
    m.partial_fit(np.array([[1e-5, 1.0], [2e-5, -1.0], [1e-5, 1.0]]), [1, -1, 1], classes=[-1, 1])
    before = {k: v.copy() for k, v in vars(m.scaler_).items() if isinstance(v, np.ndarray)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for call in (
            lambda: m.predict(np.array([[1e308, 1.0]])),
            lambda: m.partial_fit(np.array([[1e-5, 1.0], [1e308, 1.0]]), [1, -1]),
            lambda: m.scaler_.transform(sp.csr_matrix(np.array([[0.0, 1.0], [1e308, 0.0]]))),
            lambda: m.scaler_.partial_fit_transform(np.array([[1e-5, 3.0], [1e308, 1.0]])),  # no silent inf
            lambda: m.scaler_.partial_fit_transform(sp.csr_matrix(np.array([[0.0, 5.0], [1e308, 0.0]]))),
        ):
            with pytest.raises(
                ValueError, match=r"^MaxAbsScaler: the value in row [01], column 0 overflows once divided"
            ):
                call()
    assert all(np.array_equal(before[k], getattr(m.scaler_, k)) for k in before)


def test_a_row_is_scaled_the_same_dense_or_sparse(tmp_path):
    # before: dense rows were centred and the same rows as CSR were not, so a pipeline trained on dense rows
    # scored CSR ones (or the reverse) on shifted features: accuracy 0.975 on dense rows, 0.465 on the same as CSR
    X = _data("dense")
    y = (X[:, 3] > np.median(X[:, 3])).astype(int)
    message = "X is sparse, but this StandardScaler centres its rows (with_mean=True, first fitted on dense rows)"
    dense_first = StandardScaler().partial_fit(X[:30])
    for call in (dense_first.transform, dense_first.partial_fit, dense_first.partial_fit_transform):
        with pytest.raises(ValueError, match=re.escape(message)):
            call(sp.csr_matrix(X))
    assert dense_first.n_samples_seen_ == 30
    pipe = make_stream_pipeline(StandardScaler(), OGDClassifier()).partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match=re.escape(message)):
        pipe.predict(sp.csr_matrix(X))
    # first fitted on sparse rows: no row is centred, dense ones included, in the stream and in transform
    sparse_first = StandardScaler().partial_fit(sp.csr_matrix(X[:30]))
    np.testing.assert_array_equal(sparse_first.transform(X), sparse_first.transform(sp.csr_matrix(X)).toarray())
    stream = StandardScaler()
    mixed = [stream.partial_fit_transform(sp.csr_matrix(X[:30])).toarray(), stream.partial_fit_transform(X[30:])]
    np.testing.assert_allclose(np.vstack(mixed), naive_standard_stream(X, center=False), rtol=1e-9, atol=1e-9)
    path = os.path.join(tmp_path, "scaler.slm")
    sparse_first.save(path)
    np.testing.assert_array_equal(load(path).transform(X), sparse_first.transform(X))
    pipe = make_stream_pipeline(StandardScaler(), OGDClassifier()).partial_fit(sp.csr_matrix(X), y, classes=[0, 1])
    np.testing.assert_array_equal(pipe.decision_function(X), pipe.decision_function(sp.csr_matrix(X)))
    # with_mean=False centres nothing: either container, whichever came first
    plain = StandardScaler(with_mean=False).partial_fit(X[:30])
    np.testing.assert_array_equal(plain.transform(X), plain.transform(sp.csr_matrix(X)).toarray())
    # a scaler saved before the first container was recorded centres dense rows and takes sparse ones, as it did
    del dense_first._state_sparse
    assert sp.issparse(dense_first.transform(sp.csr_matrix(X)))
    np.testing.assert_allclose(dense_first.transform(X), (X - dense_first.mean_) / dense_first.scale_, rtol=1e-12)


def test_pipeline_parameters_set_between_partial_fits_take_effect_as_a_learners_do():
    # before: the fitted copies kept the parameters of the first partial_fit, so set_params changed nothing
    # until fit: a new learner__eta0 was silently ignored, and so was scaler=None
    X = _data("dense")
    y = (X[:, 3] > np.median(X[:, 3])).astype(int)
    pipe = make_stream_pipeline(MaxAbsScaler(), OGDClassifier()).partial_fit(X[:40], y[:40], classes=[0, 1])
    bare = OGDClassifier().partial_fit(MaxAbsScaler().partial_fit_transform(X[:40]), y[:40], classes=[0, 1])
    pipe.set_params(learner__eta0=5.0)
    bare.set_params(eta0=5.0)
    scaler = MaxAbsScaler().partial_fit(X[:40])
    pipe.partial_fit(X[40:], y[40:])
    bare.partial_fit(scaler.partial_fit_transform(X[40:]), y[40:])
    assert pipe.learner_.eta0 == 5.0
    np.testing.assert_array_equal(pipe.decision_function(X), bare.decision_function(scaler.transform(X)))
    # a setting the learner cannot change while learning is refused by it, as for the learner alone
    pipe.set_params(learner__normalized=True)
    with pytest.raises(ValueError, match="normalized=True differs from the setting this OGDClassifier was trained"):
        pipe.partial_fit(X[:5], y[:5])
    # a step of another kind, added or removed, is refused until fit starts again
    for change, message in (
        ({"scaler": None}, "scaler=None is not the scaler this StreamPipeline learnt with (a MaxAbsScaler)"),
        ({"scaler": StandardScaler()}, "scaler=a StandardScaler is not the scaler this StreamPipeline learnt with"),
        ({"learner": NAGClassifier()}, "learner=a NAGClassifier is not the learner this StreamPipeline learnt with"),
    ):
        pipe = make_stream_pipeline(MaxAbsScaler(), OGDClassifier()).partial_fit(X[:40], y[:40], classes=[0, 1])
        pipe.set_params(**change)
        with pytest.raises(ValueError, match=re.escape(message)):
            pipe.partial_fit(X[40:], y[40:])
        pipe.fit(X, y)  # starts again with it
