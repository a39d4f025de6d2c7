"""DictHasher: the readers' buckets for dict rows, DataFrames and Arrow tables; learn_one / predict_one."""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn.preprocessing import DictHasher
from tests.naive_tabular import naive_matrix

ROWS = [
    {"age": 31, "country": "FR", "premium": True, "price": 1.5, "zip": 75001},
    {"age": None, "country": "DE", "premium": False, "price": 0.0, "zip": 10115},
    {"age": 45, "country": None, "premium": True, "price": 2.25, "zip": None},
    {"age": 0, "country": "FR", "premium": None, "price": -3.0, "zip": 75001, "new": "x"},
]


def _same(A, B):
    A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    assert A.shape == B.shape and (A != B).nnz == 0


@pytest.mark.parametrize("bits", [5, 18])
def test_dict_rows_equal_the_twin(bits):
    X = DictHasher(bits=bits).transform(ROWS)
    assert X.has_sorted_indices
    _same(X, naive_matrix(ROWS, bits))
    ns = {"geo": ["country", "zip"]}
    _same(
        DictHasher(bits=bits, categorical=["zip"], namespaces=ns).transform(ROWS),
        naive_matrix(ROWS, bits, namespaces=ns, categorical=("zip",)),
    )
    _same(DictHasher(bits=bits).transform_one(ROWS[0]), naive_matrix(ROWS[:1], bits))
    assert (
        DictHasher(bits=bits, ignore=["age"]).transform(ROWS).nnz
        == naive_matrix([{k: v for k, v in r.items() if k != "age"} for r in ROWS], bits).nnz
    )


def test_a_categorical_zero_is_a_category_as_the_readers_hash_it(tmp_path):
    # before: the dict rows skipped a numeric 0 before looking whether its key is categorical, so zip 0 or class
    # id 0 was no feature, where the twin, the DataFrame path and iter_csv hash "zip=0"
    rows = [{"zip": 0, "n": 0}, {"zip": 75001, "n": 2}, {"zip": 0, "n": 0.0}]
    hasher = DictHasher(bits=12, categorical=["zip"])
    X = hasher.transform(rows)
    assert X.getnnz(axis=1).tolist() == [1, 2, 1]  # "zip=0"; n = 0 stays no feature
    _same(hasher.transform([{"zip": 0.0}, {"zip": -0.0}]), hasher.transform([{"zip": 0}, {"zip": 0}]))
    _same(X, naive_matrix(rows, 12, categorical=("zip",)))
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from streamlearn.datasets import iter_csv

    _same(X, hasher.transform(pd.DataFrame({"zip": [0, 75001, 0], "n": [0, 2, 0]})))
    path = tmp_path / "z.csv"
    path.write_text("y,zip,n\n1,0,0\n0,75001,2\n1,0,0\n")
    ((Xc, _),) = list(iter_csv(path, label="y", bits=12, categorical=["zip"]))
    _same(X, Xc)


def test_same_rows_through_iter_csv_dataframe_and_dicts(tmp_path):
    """The readers and the transformer agree bucket for bucket on the click log."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from streamlearn.datasets import iter_csv, write_click_log

    path = tmp_path / "c.csv"
    write_click_log(path, 2000, seed=3)
    chunks = list(
        iter_csv(
            path,
            label="clicked",
            bits=20,
            chunk_size=500,
            categorical=["position"],
            namespaces={"u": ["age", "sessions"]},
        )
    )
    X_csv = sp.vstack([c[0] for c in chunks], format="csr")
    df = pd.read_csv(path).drop(columns=["clicked"])
    hasher = DictHasher(bits=20, categorical=["position"], namespaces={"u": ["age", "sessions"]})
    X_df = sp.vstack([hasher.transform(df.iloc[i : i + 700]) for i in range(0, len(df), 700)], format="csr")
    X_dicts = hasher.transform(df.to_dict("records"))
    _same(X_csv, X_df)
    _same(X_csv, X_dicts)
    # without the options, they disagree (the check can fail)
    assert (DictHasher(bits=20).transform(df) != X_csv).nnz > 0


@pytest.mark.parametrize("quadratic, cubic", [(("ua",), ()), (("uu", ":a"), ("uaa",))])
def test_interactions_equal_the_readers(tmp_path, quadratic, cubic):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from streamlearn.datasets import iter_csv, write_click_log
    from streamlearn.datasets._clicklog import CLICK_LOG_NAMESPACES

    path = tmp_path / "c.csv"
    write_click_log(path, 300, seed=5)
    ns = {k: list(v) for k, v in CLICK_LOG_NAMESPACES.items()}
    X_csv = sp.vstack(
        [
            c[0]
            for c in iter_csv(
                path, label="clicked", bits=18, namespaces=ns, quadratic=quadratic, cubic=cubic, ignore_namespaces=["p"]
            )
        ],
        format="csr",
    )
    df = pd.read_csv(path).drop(columns=["clicked"])
    hasher = DictHasher(bits=18, namespaces=ns, quadratic=quadratic, cubic=cubic, ignore_namespaces=["p"])
    _same(X_csv, hasher.transform(df.to_dict("records")))
    _same(X_csv, hasher.transform(df))
    assert X_csv.nnz > 300 * 30


def test_dataframe_with_missing_values_and_booleans():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(ROWS)
    _same(DictHasher(bits=16).transform(df), naive_matrix(ROWS, 16))


def test_pandas_missing_values_in_dict_rows_are_no_feature():
    # rows read from a DataFrame (itertuples, iloc) hash as the DataFrame does: pandas' missing values (pd.NA of
    # the nullable dtypes, NaT) are no feature, as None and NaN are
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {
            "n": pd.array([3, None], dtype="Int64"),
            "b": pd.array([None, True], dtype="boolean"),
            "s": pd.array(["x", None], dtype="string"),
        }
    )
    hasher = DictHasher(bits=12)
    rows = [dict(zip(df.columns, values)) for values in df.itertuples(index=False)]
    assert rows[1]["n"] is pd.NA
    _same(hasher.transform(rows), hasher.transform(df))
    _same(hasher.transform([{"a": 1.5, "t": pd.NaT}]), hasher.transform([{"a": 1.5}]))


def test_bad_rows_are_one_line_errors():
    with pytest.raises(TypeError, match="row 1, key 'a': a feature value must be a number, a string"):
        DictHasher().transform([{"a": 1}, {"a": [1, 2]}])
    with pytest.raises(ValueError, match="row 0, key 'a': value inf is not finite"):
        DictHasher().transform([{"a": float("inf")}])
    # an integer beyond the float range is not finite either (was OverflowError: int too large to convert to float)
    with pytest.raises(
        ValueError, match="row 1, key 'big': value is an int of about 401 digits, beyond the float range"
    ):
        DictHasher().transform([{"a": 1}, {"big": 10**400}])
    with pytest.raises(ValueError, match="row 0, key 'big': value is an int of about 5001 digits"):
        DictHasher().transform([{"big": -(10**5000)}])
    with pytest.raises(TypeError, match="for one row use transform_one"):
        DictHasher().transform({"a": 1})
    # not a sequence at all (was Python's "'NoneType' object is not iterable")
    for X in (None, 3.5):
        with pytest.raises(TypeError) as err:
            DictHasher().transform(X)
        assert str(err.value) == (
            "DictHasher.transform takes a sequence of dict rows, a pandas DataFrame or a pyarrow Table; "
            f"got {type(X).__name__}."
        )
    with pytest.raises(ValueError, match="bits must be an integer between 1 and 32"):
        DictHasher(bits=40).transform([{"a": 1}])
    # containers of the wrong type are one error naming the parameter (were AttributeError / TypeError tracebacks)
    with pytest.raises(ValueError, match=r"namespaces must be a dict \{namespace: \[key, ...\]\} or None; got list"):
        DictHasher(namespaces=[("u", ["a"])]).transform([{"a": 1}])
    with pytest.raises(ValueError, match="categorical takes a list of strings; got NoneType None"):
        DictHasher(categorical=None).transform([{"a": 1}])
    with pytest.raises(ValueError, match="keep_namespaces takes a list of strings; got int 3"):
        DictHasher(keep_namespaces=3).fit()


def test_overflowing_crossed_or_summed_features_are_one_line_errors_not_infinities():
    # finite features whose product (quadratic / cubic) or bucket sum is beyond the float range gave inf silently
    message = r"row 1: hashed column \d+ is inf: the product of crossed features \(quadratic/cubic\) or the sum"
    rows = [{"a": 1.0, "b": 2.0}, {"a": 1e200, "b": 1e200}]
    with pytest.raises(ValueError, match=message):
        DictHasher(bits=10, quadratic=["::"]).transform(rows)
    with pytest.raises(ValueError, match=message):
        DictHasher(bits=10, cubic=["aaa"]).transform([{"a": 2.0}, {"a": 1e110}])
    with pytest.raises(ValueError, match=message):
        DictHasher(bits=1).transform([{"a": 1.0}, {f"k{i}": 1.7e308 for i in range(8)}])
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    with pytest.raises(ValueError, match=message):
        DictHasher(bits=10, quadratic=["::"]).transform(pd.DataFrame(rows))
    assert np.isfinite(DictHasher(bits=10, quadratic=["::"]).transform(rows[:1]).data).all()


def test_dataframe_values_the_table_path_refuses_are_one_line_errors_or_read_as_dict_rows():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    hasher = DictHasher(bits=12)
    # was the readers' internal _BatchError: (1, 'x', 'value inf is not finite.')
    with pytest.raises(ValueError) as err:
        hasher.transform(pd.DataFrame({"x": [1.0, float("inf")]}))
    assert str(err.value) == "row 1, column 'x': value inf is not finite."
    # was pyarrow's ArrowNotImplementedError (complex128) and OverflowError (an int beyond 64 bits)
    with pytest.raises(TypeError, match="row 0, key 'x': complex values are not features"):
        hasher.transform(pd.DataFrame({"x": [1 + 2j, 2.0]}))
    for column in (
        np.array([10**20, 1], dtype=object),
        np.array([2**60 + 1, 1], dtype=np.int64),  # was _BatchError: Integer value ... not in range
        np.array([2**63 + 5, 1], dtype=np.uint64),
    ):
        df = pd.DataFrame({"x": column})
        _same(hasher.transform(df), hasher.transform(df.to_dict("records")))


def test_learn_one_predict_one_match_partial_fit_on_hashed_rows(tmp_path):
    from streamlearn.linear_model import FTRLProximalClassifier

    rng = np.random.default_rng(0)
    rows = [{"x": float(rng.normal()), "c": str(rng.integers(5))} for _ in range(300)]
    y = np.array([int(r["x"] + (r["c"] == "3") > 0) for r in rows])
    one = FTRLProximalClassifier()
    for r, t in zip(rows, y):
        one.learn_one(r, t)
    chunk = FTRLProximalClassifier().partial_fit(DictHasher(bits=18).transform(rows), y, classes=[0, 1])
    assert np.allclose(one.coef_, chunk.coef_)
    assert one.input_spec_["bits"] == 18
    preds = [one.predict_one(r) for r in rows]
    assert np.mean(np.array(preds) == y) > 0.8
    # the saved model hashes dicts the same way after loading
    path = tmp_path / "m.slm"
    one.save(path)
    again = FTRLProximalClassifier.load(path)
    assert [again.predict_one(r) for r in rows[:20]] == preds[:20]
    # a hasher with other bits on the first call sets the width
    narrow = FTRLProximalClassifier().learn_one(rows[0], y[0], hasher=DictHasher(bits=10))
    assert narrow.n_features_in_ == 1024 and narrow.predict_one({"c": "never seen"}) in (0, 1)


def test_learn_one_records_every_hashing_option_and_refuses_another_hasher(tmp_path):
    import pickle

    from streamlearn import load
    from streamlearn.linear_model import FTRLProximalClassifier

    hasher = DictHasher(bits=12, namespaces={"geo": "country"}, ignore=["id"], quadratic=["ga"])
    rng = np.random.default_rng(1)
    rows = [{"id": float(i + 1), "country": str(rng.choice(["FR", "DE"])), "a": float(rng.normal())} for i in range(60)]
    y = np.array([int((r["country"] == "FR") + r["a"] > 0.5) for r in rows])
    one = FTRLProximalClassifier()
    for r, t in zip(rows[:30], y[:30]):
        one.learn_one(r, t, hasher=hasher)
    # a copy and a loaded model go on as the model does: the spec lost the ignored column (id became a
    # feature after loading) and took the group given as one column name for {column: namespace}
    copied = pickle.loads(pickle.dumps(one))
    one.save(tmp_path / "m.slm")
    loaded = load(tmp_path / "m.slm")
    for r, t in zip(rows[30:], y[30:]):
        for model in (one, copied, loaded):
            model.learn_one(r, t)
    ref = FTRLProximalClassifier().partial_fit(hasher.transform(rows), y, classes=[0, 1])
    np.testing.assert_allclose(one.coef_, ref.coef_)
    np.testing.assert_array_equal(copied.coef_, one.coef_)
    np.testing.assert_array_equal(loaded.coef_, one.coef_)
    # another hasher on a later call is refused (it was ignored: the rows were hashed with the first one's options)
    with pytest.raises(ValueError) as err:
        loaded.learn_one(rows[0], y[0], hasher=DictHasher(bits=12, quadratic=["ga"]))
    assert str(err.value) == (
        "hasher= hashes dict rows with bits=12, quadratic=['ga']; this FTRLProximalClassifier learnt them with "
        "bits=12, namespaces={'geo': ['country']}, ignore=['id'], quadratic=['ga'] (its input_spec_): pass that "
        "hasher, or none."
    )
    same = DictHasher(bits=12, namespaces={"geo": ["country"]}, ignore=("id",), quadratic=("ga",))
    loaded.learn_one(rows[0], y[0], hasher=same)
    # a model trained on hashed rows takes the hasher of its first learn_one whole (its options but the
    # width were dropped: here the quadratic terms)
    chunk = FTRLProximalClassifier().partial_fit(hasher.transform(rows[:30]), y[:30], classes=[0, 1])
    for r, t in zip(rows[30:], y[30:]):
        chunk.learn_one(r, t, hasher=hasher)
    np.testing.assert_allclose(chunk.coef_, ref.coef_)


def test_learn_one_regressor_and_classes():
    from streamlearn.linear_model import FTRLProximalClassifier, OGDRegressor

    reg = OGDRegressor()
    for v in range(50):
        reg.learn_one({"v": v / 50}, 2.0 * v / 50)
    assert isinstance(float(reg.predict_one({"v": 0.5})), float)
    with pytest.raises(ValueError, match="needs classes= on its first call"):
        FTRLProximalClassifier().learn_one({"a": 1}, "spam")
    clf = FTRLProximalClassifier().learn_one({"a": 1}, "spam", classes=["ham", "spam"])
    assert clf.predict_one({"a": 1}) in ("ham", "spam")


def test_learn_one_weights_that_are_not_numbers_are_refused_naming_sample_weight():
    # before: NumPy's "could not convert string to float: 'x'"
    from streamlearn.linear_model import FTRLProximalClassifier

    with pytest.raises(ValueError, match=r"^sample_weight must hold numbers \(one weight per example\); got dtype <U1"):
        FTRLProximalClassifier().learn_one({"a": 1.0}, 1, sample_weight="x")
    assert FTRLProximalClassifier().learn_one({"a": 1.0}, 1, sample_weight=2).t_ == 1


def test_learn_one_on_a_plus_minus_one_stream_whose_first_label_is_plus_one():
    # labels -1/+1 need no classes= ; a first label 1 does not tell 0/1 from -1/+1, and both put 1 at +1,
    # so a -1 before any 0 means -1/+1 (it was "y contains labels [-1] that are not in classes_=[0, 1]")
    from streamlearn.linear_model import FTRLProximalClassifier

    rows = [{"a": 1.0, "c": "x"}, {"a": -1.0, "c": "y"}, {"a": 2.0}, {"a": -0.5, "c": "y"}]
    labels = [1, -1, 1, -1]
    one = FTRLProximalClassifier()
    for r, t in zip(rows, labels):
        one.learn_one(r, t)
    ref = FTRLProximalClassifier().partial_fit(DictHasher().transform(rows), labels, classes=[-1, 1])
    assert list(one.classes_) == [-1, 1]
    np.testing.assert_array_equal(one.coef_, ref.coef_)
    assert [one.predict_one(r) for r in rows] == list(ref.predict(DictHasher().transform(rows)))
    # 0/1 streams are unchanged, and a -1 after a 0 is still refused
    zero_one = FTRLProximalClassifier().learn_one(rows[0], 1).learn_one(rows[1], 0)
    assert list(zero_one.classes_) == [0, 1]
    with pytest.raises(ValueError, match=r"labels \[-1\] that are not in classes_=\[0, 1\]"):
        zero_one.learn_one(rows[2], -1)


def test_predict_one_before_learning_is_not_fitted():
    # it was an AttributeError ('coef_'), and the estimator then looked fitted to check_is_fitted
    from sklearn.exceptions import NotFittedError

    from streamlearn.linear_model import FTRLProximalClassifier, OGDRegressor

    for est in (FTRLProximalClassifier(), OGDRegressor()):
        with pytest.raises(NotFittedError, match="is not fitted yet"):
            est.predict_one({"a": 1.0})
        assert not hasattr(est, "input_spec_")
        with pytest.raises(NotFittedError):
            est.predict(np.ones((1, 3)))


@pytest.mark.parametrize("pipeline", [False, True])
def test_learn_one_keeps_0_1_once_other_training_saw_a_zero(pipeline):
    from streamlearn.linear_model import FTRLProximalClassifier
    from streamlearn.preprocessing import MaxAbsScaler, make_stream_pipeline

    def model():
        return make_stream_pipeline(MaxAbsScaler(), FTRLProximalClassifier()) if pipeline else FTRLProximalClassifier()

    clf = model().learn_one({"a": 1.0}, 1)
    clf.partial_fit(DictHasher().transform([{"a": -1.0}]), [0])  # a 0 learnt outside learn_one
    with pytest.raises(ValueError, match=r"labels \[-1\] that are not in classes_=\[0, 1\]"):
        clf.learn_one({"a": 2.0}, -1)
    refit = model().learn_one({"a": 1.0}, 1)
    refit.fit(DictHasher().transform([{"a": -1.0}, {"a": 1.0}]), [0, 1])
    with pytest.raises(ValueError, match=r"labels \[-1\] that are not in classes_=\[0, 1\]"):
        refit.learn_one({"a": 2.0}, -1)
    booleans = FTRLProximalClassifier().learn_one({"a": 1.0}, True)
    with pytest.raises(ValueError, match="not in classes_"):
        booleans.learn_one({"a": 2.0}, -1)


def test_python_and_numpy_numbers_hash_alike_on_every_call():
    """Python floats and ints take a shorter path than NumPy scalars (and other numbers): both give the twin's
    buckets, on the first call and on later ones (which reuse each column's hash), with a namespace kept or
    dropped, a column ignored or categorical."""
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(60):
        row = {f"n{k}": float(rng.normal()) if k % 2 else int(rng.integers(-3, 4)) for k in range(8)}
        row.update({"flag": bool(rng.integers(2)), "city": str(rng.choice(["a", "b"])), "gone": None, "nan": np.nan})
        rows.append(row)

    def numpy_scalar(v):
        return np.float64(v) if type(v) is float else np.int64(v) if type(v) is int else v

    as_numpy = [{k: numpy_scalar(v) for k, v in r.items()} for r in rows]
    _same(DictHasher(bits=18).transform(rows), naive_matrix(rows, 18))
    ns = {"even": ["n0", "n2", "n4", "n6"]}
    for options in (
        {},
        {"namespaces": ns, "keep_namespaces": ["e"]},
        {"namespaces": ns, "ignore_namespaces": ["e"]},
        {"ignore": ["n1"], "categorical": ["n3"]},
    ):
        plain, numpy_ = DictHasher(bits=18, **options), DictHasher(bits=18, **options)
        for part in (slice(0, 30), slice(30, 60), slice(0, 1)):  # the later calls reuse the columns' hashes
            _same(plain.transform(rows[part]), numpy_.transform(as_numpy[part]))
    even = [{k: v for k, v in r.items() if k in ns["even"]} for r in rows]
    odd = [{k: v for k, v in r.items() if k not in ns["even"]} for r in rows]
    for keep, expected in ((dict(keep_namespaces=["e"]), even), (dict(ignore_namespaces=["e"]), odd)):
        hasher = DictHasher(bits=18, namespaces=ns, **keep)
        for part in (slice(0, 30), slice(30, 60)):
            _same(hasher.transform(rows[part]), naive_matrix(expected[part], 18, namespaces=ns))


@pytest.mark.parametrize(
    "value",
    [
        0,
        0.0,
        -0.0,
        float("nan"),
        True,
        False,
        np.float64(2.5),
        1.5e308,
        -(2**1023),
        "text",
        None,
        np.float64("nan"),
        np.float32("nan"),
        np.float32(0.1),
        np.float16(-2.5),
        np.int8(-3),
        np.uint64(2**64 - 1),
        np.True_,
        np.float64(0.0),
        2**70,
    ],
)
def test_a_known_numeric_column_hashes_any_later_value_as_a_fresh_hasher(value):
    """Later rows of a numeric column take a shorter path (its hash is known): a value that is not a finite
    Python number goes the whole way, so the buckets are those of a hasher that never saw the column."""
    warm = DictHasher(bits=12)
    warm.transform([{"a": 1.0, "b": 3}])
    row = [{"a": value, "b": value, "c": 2.0}]
    X, Y = warm.transform(row), DictHasher(bits=12).transform(row)
    _same(X, Y)
    assert X.nnz == Y.nnz  # (no explicit zero either)


@pytest.mark.parametrize(
    "value, message",
    [
        (float("inf"), "row 0, key 'a': value inf is not finite"),
        (np.float64("inf"), "row 0, key 'a': value inf is not finite"),
        (np.float32("-inf"), "row 0, key 'a': value -inf is not finite"),
        (10**400, "row 0, key 'a': value is an int of about"),
        (__import__("decimal").Decimal("sNaN"), r"row 0, key 'a': value Decimal\('sNaN'\) is not a float \("),
    ],
)
def test_a_known_numeric_column_refuses_a_later_value_beyond_the_float_range(value, message):
    hasher = DictHasher(bits=12)
    hasher.transform([{"a": 1.0}])
    with pytest.raises(ValueError, match=message):
        hasher.transform([{"a": value}])


def _same_arrays(X, Y):
    """Equal CSR matrices, array for array (index dtype, no explicit zeros, same order)."""
    assert X.shape == Y.shape and X.indices.dtype == Y.indices.dtype and X.indptr.dtype == Y.indptr.dtype
    for a, b in ((X.indptr, Y.indptr), (X.indices, Y.indices), (X.data, Y.data)):
        np.testing.assert_array_equal(a, b, strict=True)
    assert X.has_canonical_format and Y.has_canonical_format


def _outcome(hasher, row):
    """What ``transform_one`` gives: the matrix, or the error's type and message."""
    try:
        return hasher.transform_one(row)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)


def _planned(hasher, keys):
    """``hasher`` after two rows with these keys in this order: the third takes the planned shortcut."""
    for _ in range(2):
        hasher.transform_one({k: 1.0 for k in keys})
    assert hasher._rows[tuple(keys)]  # (the shortcut is what the caller tests)
    return hasher


@pytest.mark.parametrize(
    "value",
    [
        0,
        0.0,
        -0.0,
        1,
        -2.5,
        5e-324,
        1.5e308,
        -(2**1023),
        2**70,
        10**400,
        float("nan"),
        float("inf"),
        -float("inf"),
        True,
        "text",
        b"bytes",
        None,
        np.float64(2.5),
        np.float64(0.0),
        np.float64("nan"),
        np.float64("inf"),
        np.float32(0.1),
        np.float16(-2.5),
        np.int8(-3),
        np.int64(-(2**63)),
        np.uint64(2**64 - 1),
        np.True_,
        1 + 2j,
        [1.0],
    ],
)
def test_transform_one_of_a_planned_key_order_equals_a_fresh_hasher(value):
    """A row whose key order came before takes a planned shortcut: its matrix (arrays, dtypes, zeros left out)
    or its error is that of a hasher that never saw a row, whatever the value."""
    row = {"a": value, "b": 2.0, "c": value, "d": -1}
    fresh, planned = _outcome(DictHasher(bits=12), row), _outcome(_planned(DictHasher(bits=12), "abcd"), row)
    if isinstance(fresh, tuple):
        assert planned == fresh
    else:
        _same_arrays(planned, fresh)


def test_transform_one_of_random_rows_equals_a_fresh_hasher():
    """Rows of 30 keys in one order (Python and NumPy numbers, zeros, a key left out now and then, another
    order), every call against a hasher that never saw a row; with 31 bits the indices are int64."""
    rng = np.random.default_rng(3)
    keys = [f"k{i}" for i in range(30)]
    for bits in (18, 31):
        hasher = DictHasher(bits=bits)
        for i in range(300):
            values = rng.normal(size=30) * 10.0 ** rng.integers(-5, 6, size=30)
            values[rng.random(30) < 0.2] = 0.0
            row = {
                k: (np.float64(v) if j % 3 == 0 else int(v) if j % 3 == 1 else float(v))
                for j, (k, v) in enumerate(zip(keys, values))
            }
            if i % 50 == 7:
                row.pop("k4")
            if i % 70 == 9:
                row = dict(reversed(list(row.items())))
            _same_arrays(hasher.transform_one(row), DictHasher(bits=bits).transform_one(row))
        assert hasher._rows[tuple(keys)]  # (the other two orders have plans too)


@pytest.mark.parametrize(
    "options",
    [
        {"bits": 1},  # keys sharing a bucket: summed, no shortcut
        {"bits": 12, "quadratic": ["::"]},  # interactions: no shortcut
        {"bits": 12, "categorical": ["b"]},
        {"bits": 12, "ignore": ["b"]},
        {"bits": 12, "namespaces": {"n": ["a", "b"]}, "ignore_namespaces": ["n"]},
        {"bits": 12, "namespaces": {"n": ["a", "b"]}, "keep_namespaces": ["n"]},
    ],
)
def test_transform_one_takes_no_shortcut_that_would_change_the_buckets(options):
    rows = [{"a": 1.5, "b": 2.0, "c": -3.0, "d": 4.0, "e": 0.5}, {"a": 2.5, "b": 7.0, "c": 1.0, "d": 0.0, "e": 9.0}]
    hasher = DictHasher(**options)
    for row in rows * 3:
        _same_arrays(hasher.transform_one(row), DictHasher(**options).transform_one(row))
    assert not any(hasher._rows.values())


def test_transform_one_plans_are_dropped_with_a_new_option_and_never_shared_with_the_caller():
    hasher = _planned(DictHasher(bits=12), "abc")
    row = {"a": 1.0, "b": 2.0, "c": 3.0}
    X = hasher.transform_one(row)
    X.indices[:] = 0  # a caller writing into its matrix does not change the next one
    X.data[:] = 7.0
    _same_arrays(hasher.transform_one(row), DictHasher(bits=12).transform_one(row))
    hasher.categorical = ["a"]
    _same_arrays(hasher.transform_one(row), DictHasher(bits=12, categorical=["a"]).transform_one(row))
    hasher.set_params(categorical=[], bits=14)
    _same_arrays(hasher.transform_one(row), DictHasher(bits=14).transform_one(row))


def test_transform_one_keeps_a_bounded_number_of_plans(monkeypatch):
    """A stream whose rows hold ever new key sets plans a bounded number of them and remembers a bounded
    number of key tuples."""
    import streamlearn.preprocessing._hashing as hashing

    monkeypatch.setattr(hashing, "_ROWS_SEEN", 8)
    monkeypatch.setattr(hashing, "_ROWS_PLANNED", 3)
    hasher = DictHasher(bits=12)
    for i in range(40):
        row = {f"k{i}": 1.0, f"j{i}": 2.0}
        for _ in range(3):
            _same_arrays(hasher.transform_one(row), DictHasher(bits=12).transform_one(row))
    assert len(hasher._rows) == 3 and len(hasher._seen) == 8


def test_a_pipeline_learns_and_predicts_dict_rows_as_hashed_chunks(tmp_path):
    from sklearn.exceptions import NotFittedError

    from streamlearn import load
    from streamlearn.linear_model import OGDRegressor, Perceptron
    from streamlearn.preprocessing import MaxAbsScaler, StandardScaler, TargetStandardScaler, make_stream_pipeline

    rng = np.random.default_rng(2)
    rows = [
        {"x": float(rng.normal()) * 100, "n": int(rng.integers(0, 9)), "c": str(rng.integers(4))} for _ in range(200)
    ]
    y = np.array([int(r["x"] / 100 + (r["c"] == "1") > 0.2) for r in rows])
    X = DictHasher().transform(rows)
    one = make_stream_pipeline(MaxAbsScaler(), Perceptron(radius=1.0))
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        one.predict_one(rows[0])
    assert not hasattr(one, "input_spec_")
    for r, t in zip(rows, y):
        one.learn_one(r, t)
    chunk = make_stream_pipeline(MaxAbsScaler(), Perceptron(radius=1.0)).partial_fit(X, y, classes=[0, 1])
    np.testing.assert_allclose(one.learner_.coef_, chunk.learner_.coef_)
    np.testing.assert_array_equal(one.scaler_.max_abs_, chunk.scaler_.max_abs_)
    assert [one.predict_one(r) for r in rows] == list(chunk.predict(X))
    one.save(tmp_path / "p.slm")
    assert [load(tmp_path / "p.slm").predict_one(r) for r in rows[:30]] == list(chunk.predict(X[:30]))
    # a first label 1 then -1: a -1/+1 stream, as for a learner
    signs = 2 * y - 1
    signs[0] = 1
    pm = make_stream_pipeline(MaxAbsScaler(), Perceptron(radius=1.0))
    for r, t in zip(rows, signs):
        pm.learn_one(r, t)
    ref = make_stream_pipeline(MaxAbsScaler(), Perceptron(radius=1.0)).partial_fit(X, signs, classes=[-1, 1])
    assert list(pm.classes_) == [-1, 1]
    np.testing.assert_allclose(pm.learner_.coef_, ref.learner_.coef_)
    # a regressor behind a target scaler: predictions in the target's units
    target = np.array([r["x"] + 10.0 * r["n"] for r in rows])
    reg = make_stream_pipeline(StandardScaler(), OGDRegressor(), TargetStandardScaler())
    for r, t in zip(rows, target):
        reg.learn_one(r, t)
    ref = make_stream_pipeline(StandardScaler(), OGDRegressor(), TargetStandardScaler()).partial_fit(X, target)
    np.testing.assert_allclose([reg.predict_one(r) for r in rows], ref.predict(X))


def test_a_batch_svm_predicts_dict_rows_as_hashed_rows():
    from sklearn.exceptions import NotFittedError

    from streamlearn.linear_model import BlockMinimizationSVC, DualCoordinateDescentSVC

    rng = np.random.default_rng(4)
    rows = [{"x": float(rng.normal()), "c": str(rng.integers(3))} for _ in range(120)]
    y = np.array([int(r["x"] + (r["c"] == "2") > 0.3) for r in rows])
    X = DictHasher(bits=12).transform(rows)
    for cls in (DualCoordinateDescentSVC, BlockMinimizationSVC):
        with pytest.raises(NotFittedError, match="is not fitted yet"):
            cls().predict_one(rows[0])
        svm = cls().fit(X, y)
        assert not hasattr(svm, "learn_one")
        assert [svm.predict_one(r) for r in rows] == list(svm.predict(X))  # (12 bits: the width it was fitted on)
        assert svm.input_spec_["bits"] == 12


def test_predict_proba_one_is_predict_proba_of_the_hashed_row_by_label():
    from sklearn.exceptions import NotFittedError

    from streamlearn.linear_model import DualCoordinateDescentSVC, FTRLProximalClassifier, OGDClassifier, Perceptron
    from streamlearn.preprocessing import MaxAbsScaler, make_stream_pipeline

    rng = np.random.default_rng(6)
    rows = [{"x": float(rng.normal()), "c": str(rng.integers(3))} for _ in range(150)]
    binary = np.array([int(r["x"] + (r["c"] == "2") > 0.3) for r in rows])
    three = np.array(["a", "b", "c"])[[int(r["c"]) for r in rows]]
    X = DictHasher().transform(rows)
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        FTRLProximalClassifier().predict_proba_one(rows[0])
    for model, y in (
        (FTRLProximalClassifier(), binary),
        (OGDClassifier(), three),
        (make_stream_pipeline(MaxAbsScaler(), OGDClassifier()), three),
    ):
        for r, t in zip(rows, y):
            model.learn_one(r, t, classes=np.unique(y))
        expected = model.predict_proba(X)
        for i in (0, 7, 149):
            got = model.predict_proba_one(rows[i])
            assert list(got) == list(model.classes_) and all(type(k) is type(model.classes_[0].item()) for k in got)
            np.testing.assert_array_equal(list(got.values()), expected[i])
            assert all(type(v) is float for v in got.values())
    # no probabilities, no predict_proba_one
    for model in (Perceptron(), OGDClassifier(loss="hinge"), make_stream_pipeline(MaxAbsScaler(), Perceptron())):
        model.partial_fit(X, binary, classes=[0, 1])
        assert not hasattr(model, "predict_proba_one")
    assert not hasattr(DualCoordinateDescentSVC().fit(X, binary), "predict_proba_one")


def test_learn_many_and_predict_many_are_learn_one_and_predict_one_on_every_row():
    """Chunks of dict rows, DataFrames and Arrow tables: the model and the predictions of the row-by-row calls,
    for a learner, a pipeline and a batch SVM (predictions only); the labels of a first chunk guessed as a
    first row's are."""
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    from sklearn.exceptions import NotFittedError

    from streamlearn.linear_model import DualCoordinateDescentSVC, FTRLProximalClassifier, OGDRegressor, Perceptron
    from streamlearn.preprocessing import MaxAbsScaler, make_stream_pipeline

    rng = np.random.default_rng(8)
    rows = [{"x": float(rng.normal()), "n": int(rng.integers(0, 5)), "c": str(rng.integers(3))} for _ in range(240)]
    y = np.array([int(r["x"] + (r["c"] == "2") > 0.3) for r in rows])
    learnt = []
    for make in (FTRLProximalClassifier, lambda: make_stream_pipeline(MaxAbsScaler(), Perceptron(radius=1.0))):
        one, many = make(), make()
        learnt.append(many)
        with pytest.raises(NotFittedError):
            many.predict_many(rows)
        for r, t in zip(rows, y):
            one.learn_one(r, t)
        for part in (slice(0, 100), slice(100, 101), slice(101, 240)):
            many.learn_many(rows[part], y[part])
        inner = getattr(many, "learner_", many)
        np.testing.assert_allclose(inner.coef_, getattr(one, "learner_", one).coef_, rtol=1e-12, atol=1e-15)
        expected = [one.predict_one(r) for r in rows]
        for chunk in (rows, pd.DataFrame(rows), pa.Table.from_pylist(rows)):
            assert list(many.predict_many(chunk)) == expected
    ftrl = learnt[0]
    np.testing.assert_array_equal(
        ftrl.predict_proba_many(pd.DataFrame(rows)), ftrl.predict_proba(DictHasher().transform(rows))
    )
    svm = DualCoordinateDescentSVC().fit(DictHasher(bits=12).transform(rows), y)
    assert list(svm.predict_many(pd.DataFrame(rows))) == [svm.predict_one(r) for r in rows]
    reg = OGDRegressor().learn_many(pd.DataFrame(rows), [r["x"] for r in rows])
    assert reg.predict_many(rows[:3]).shape == (3,)
    # labels: a first chunk of 1s, then -1s: a -1/+1 stream, as row by row; a chunk mixing -1 and 0 is refused
    pm = FTRLProximalClassifier().learn_many(rows[:5], [1] * 5).learn_many(rows[5:10], [-1, 1, -1, 1, 1])
    assert list(pm.classes_) == [-1, 1]
    mixed = FTRLProximalClassifier().learn_many(rows[:5], [1] * 5)
    with pytest.raises(ValueError, match=r"labels \[-1\] that are not in classes_=\[0, 1\]"):
        mixed.learn_many(rows[5:8], [-1, 0, 1])
    assert list(mixed.classes_) == [0, 1] and mixed.t_ == 5
    assert list(FTRLProximalClassifier().learn_many(rows[:4], [True, False, True, True]).classes_) == [False, True]
    with pytest.raises(
        ValueError,
        match=r"^FTRLProximalClassifier.learn_many needs classes= on its first call .*; got labels \{ham, spam\}\.$",
    ):
        FTRLProximalClassifier().learn_many(rows[:3], ["spam", "ham", "spam"])
    with pytest.raises(TypeError, match=r"takes a sequence of dict rows, .*; for one dict row use predict_one"):
        pm.predict_many(rows[0])
    assert FTRLProximalClassifier().learn_many(rows[:3], ["a", "b", "a"], classes=["a", "b"]).t_ == 3
