"""Parameter ranges (streamlearn._validation.Interval): an open end refuses infinity, NaN is in no range; the
boundary normalisation of the inputs (streamlearn._validation)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn._validation import Interval
from streamlearn.evaluation import iter_array_chunks
from streamlearn.learners import LEARNERS, make_learner
from streamlearn.linear_model import OGDClassifier, OGDRegressor
from streamlearn.preprocessing import MaxAbsScaler, StandardScaler
from streamlearn.second_order import SketchedOnlineNewton

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize(
    "interval,value,expected",
    [
        (Interval(float, 0, None, closed="left"), INF, False),  # [0.0, inf): open at infinity
        (Interval(float, 0, None, closed="both"), INF, False),  # a None end is open whatever 'closed' says
        (Interval(float, 0, None, closed="neither"), 1e308, True),
        (Interval(float, None, 0, closed="right"), -INF, False),
        (Interval(float, None, None, closed="both"), INF, False),
        (Interval(float, None, None, closed="both"), -INF, False),
        (Interval(float, None, None, closed="both"), 0.0, True),
        (Interval(float, 0, math.inf, closed="both"), INF, True),  # [0.0, inf] names infinity as a bound
        (Interval(float, 0, math.inf, closed="left"), INF, False),
        (Interval(float, 0, math.inf, closed="both"), NAN, False),
        (Interval(float, None, None, closed="neither"), NAN, False),
        (Interval(float, 0, 1, closed="both"), NAN, False),
        (Interval(int, 1, None, closed="left"), 2**63 - 1, True),
        (Interval(int, 1, None, closed="left"), 2**63, False),  # the kernels count in int64
        (Interval(int, 1, None, closed="left"), 10**400, False),
    ],
)
def test_interval_ends(interval, value, expected):
    assert interval.is_satisfied_by(value) is expected


@pytest.mark.parametrize(
    "interval,text",
    [
        (Interval(float, 0, None, closed="left"), "a float in the range [0.0, inf)"),
        (Interval(float, 0, math.inf, closed="both"), "a float in the range [0.0, inf]"),
        (Interval(float, None, 1, closed="both"), "a float in the range (-inf, 1.0]"),
    ],
)
def test_interval_message_matches_what_it_takes(interval, text):
    assert str(interval) == text


@pytest.mark.parametrize("make", ["FMClassifier", "OjaSketch", "RandomProjectionSketch", "check_rng"])
def test_a_negative_random_state_is_refused_naming_the_parameter(make):
    """numpy takes non-negative seeds only; -1 got through the checks and failed inside numpy with its bare
    'expected non-negative integer' (streamlearn train -l fm -p random_state=-1)."""
    import numpy as np

    from streamlearn._validation import check_rng
    from streamlearn.facto import FMClassifier
    from streamlearn.sketch import OjaSketch, RandomProjectionSketch

    X, y = np.eye(6), np.array([0, 1] * 3)
    if make == "check_rng":
        with pytest.raises(ValueError, match=r"random_state must be a non-negative int.*got -1"):
            check_rng(-1)
        return
    cls = {"FMClassifier": FMClassifier, "OjaSketch": OjaSketch, "RandomProjectionSketch": RandomProjectionSketch}[make]
    est = cls(random_state=-1) if make == "FMClassifier" else cls(ell=2, random_state=-1)
    with pytest.raises(ValueError, match=rf"The 'random_state' parameter of {make} must be a non-negative int"):
        est.fit(X, y) if make == "FMClassifier" else est.partial_fit(X)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("dtype", [">i4", ">i8", "<u8", "<u4", "<i2"])
def test_index_arrays_of_any_integer_dtype_are_learnt_as_int32_ones(fmt, dtype):
    # index arrays assigned by hand (big-endian, unsigned, narrow): the same model as scipy's own int32 arrays,
    # never a numba typing error or scipy's "unsupported data types in input"
    rng = np.random.default_rng(0)
    X = sp.random(30, 6, density=0.5, format=fmt, random_state=0)
    y = rng.integers(0, 2, 30)
    odd = X.copy()
    odd.indices, odd.indptr = X.indices.astype(dtype), X.indptr.astype(dtype)
    ref = OGDClassifier(shuffle=False).fit(X, y)
    clf = OGDClassifier(shuffle=False).fit(odd, y)
    np.testing.assert_array_equal(clf.coef_, ref.coef_)
    np.testing.assert_array_equal(clf.decision_function(odd), ref.decision_function(X))


@pytest.mark.parametrize("which", ["indices", "indptr"])
def test_index_arrays_that_are_not_integers_are_refused_in_one_line(which):
    X = sp.random(10, 4, density=0.5, format="csr", random_state=0)
    setattr(X, which, getattr(X, which).astype(np.float64))
    with pytest.raises(
        ValueError, match=rf"^X is a malformed CSR matrix: its {which} must be integers; got dtype float64\.$"
    ):
        OGDClassifier().fit(X, np.arange(10) % 2)


def _one_line(exc_info):
    message = str(exc_info.value)
    assert "\n" not in message.strip(), message
    return message


_ALL = sorted(LEARNERS)


@pytest.mark.parametrize("name", _ALL)
def test_x_of_other_than_two_dimensions_is_refused_in_one_line(name):
    # before: scikit-learn's "Expected 2D array, got 1D array instead:\narray=[...]\nReshape ..." (the array printed)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 8)
    with pytest.raises(ValueError) as exc_info:
        make_learner(name).fit(rng.normal(size=8), y)
    assert _one_line(exc_info) == (
        "Expected a 2-D X (n_samples, n_features); got a 1-D array of shape (8,). Reshape your data: X.reshape(-1, 1) "
        "if it has one feature, X.reshape(1, -1) if it is one example."
    )
    with pytest.raises(ValueError, match=r"^Expected a 2-D X \(n_samples, n_features\); got a scalar\.$"):
        make_learner(name).fit(np.float64(1.0), y[:1])
    fitted = make_learner(name).fit(rng.normal(size=(8, 3)), y)
    with pytest.raises(ValueError, match=r"got a 1-D array of shape \(3,\)"):
        fitted.predict(np.ones(3))


@pytest.mark.parametrize("name", _ALL)
def test_complex_values_are_refused_in_one_line(name):
    # before: scikit-learn's "Complex data not supported\n[[...]]" (the whole matrix printed); complex weights were
    # cast to their real parts with a ComplexWarning and learnt
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(8, 3)), rng.integers(0, 2, 8).astype(np.float64)
    for bad in (X.astype(complex), sp.csr_matrix(X.astype(complex))):
        with pytest.raises(ValueError) as exc_info:
            make_learner(name).fit(bad, y)
        assert _one_line(exc_info) == "Complex data not supported: X has complex values; expected real numbers."
    with pytest.raises(ValueError) as exc_info:
        make_learner(name).fit(X, y, sample_weight=np.ones(8, dtype=complex))
    assert _one_line(exc_info) == (
        "sample_weight has complex values (dtype complex128); expected real, non-negative weights."
    )


@pytest.mark.parametrize("name", _ALL)
def test_text_and_objects_in_x_are_refused_in_one_line_naming_the_cell(name):
    # before: NumPy's "could not convert string to float: 'x'", or a TypeError "float() argument must be a string
    # or a real number, not 'NAType'", naming neither X nor the place
    pd = pytest.importorskip("pandas")
    y = np.array([0, 1, 0, 1])
    hint = "; expected numbers (text and categories become features through streamlearn.preprocessing.DictHasher)."
    not_a_number = "float() argument must be a string or a real number, not"
    for X, error, where in (
        (np.array([["1", "2"], ["3", "4"], ["5", "x"], ["7", "8"]]), ValueError, "'x' (row 2, column 1)"),
        (
            pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": pd.Categorical(["u", "v", "u", "v"])}),
            ValueError,
            "'u' (row 0, column 'b')",
        ),
        # neither text nor a number: Python's TypeError, with its words
        (
            [[1.0, 2.0], [3.0, None], [5.0, 6.0], [7.0, 1j]],
            TypeError,
            f"1j (row 3, column 1): {not_a_number} 'complex'",
        ),
        (
            np.array([[1.0, 2.0], [3.0, None], [5.0, 6.0], [7.0, {}]], dtype=object),
            TypeError,
            f"{{}} (row 3, column 1): {not_a_number} 'dict'",
        ),
        (
            pd.DataFrame({"a": np.array([1.0, pd.NA, 2.0, 3.0], dtype=object)}),
            TypeError,
            f"<NA> (row 1, column 'a'): {not_a_number} 'NAType'",
        ),
    ):
        with pytest.raises(error) as exc_info:
            make_learner(name).fit(X, y)
        assert _one_line(exc_info) == f"X holds {where}{hint}"
    # numbers written as text are numbers, as before
    make_learner(name).fit(np.array([["1", "2"], ["3", "4.5"], ["5", "6"], ["7", "-8"]]), y)


def test_complex_targets_and_weights_that_are_not_numbers_are_refused_in_one_line():
    X = np.random.default_rng(0).normal(size=(8, 3))
    with pytest.raises(ValueError) as exc_info:
        OGDRegressor().fit(X, np.ones(8, dtype=complex))
    assert _one_line(exc_info).startswith("Complex data not supported: y has complex values (dtype complex128)")
    with pytest.raises(ValueError, match=r"^sample_weight must hold numbers \(one weight per example\); got dtype <U3"):
        OGDRegressor().fit(X, np.ones(8), sample_weight=["abc"] * 8)


def test_scalers_and_the_chunker_refuse_the_same_inputs_in_one_line():
    X = np.random.default_rng(0).normal(size=(8, 3))
    text = np.array([[1.0, "x"]] * 8, dtype=object)
    for scaler in (MaxAbsScaler(), StandardScaler()):
        with pytest.raises(ValueError, match=r"^X holds 'x' \(row 0, column 1\); expected numbers"):
            scaler.fit(text)
    for scaler in (MaxAbsScaler(), StandardScaler()):
        with pytest.raises(ValueError, match=r"^Expected a 2-D X \(n_samples, n_features\); got a 1-D array"):
            scaler.partial_fit_transform(X[:, 0])
        with pytest.raises(ValueError, match="^Complex data not supported: X has complex values"):
            scaler.fit(X.astype(complex))
    with pytest.raises(ValueError, match=r"^sample_weight has complex values"):
        next(iter_array_chunks(X, np.ones(8), np.ones(8, dtype=complex)))


@pytest.mark.parametrize("name", _ALL)
def test_feature_names_other_than_those_of_fit_are_refused_in_one_line(name):
    # before: scikit-learn's message listing the names one per line ("Feature names unseen at fit time:\n- w\n...")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(10, 3)), columns=["a", "b", "c"])
    est = make_learner(name).fit(df, rng.integers(0, 2, 10))
    expected = "; expected the same names in the same order: ['a', 'b', 'c']."
    with pytest.raises(ValueError) as exc_info:
        est.predict(df[["c", "b", "a"]])
    assert _one_line(exc_info) == (
        f"The feature names of X differ from those {type(est).__name__} was fitted with (the same names in another "
        f"order){expected}"
    )
    with pytest.raises(ValueError) as exc_info:
        est.predict(df.set_axis(["a", "b", "z"], axis=1))
    assert _one_line(exc_info).endswith(f"(unseen at fit time: ['z']; seen at fit time, now missing: ['c']){expected}")
    assert est.predict(df).shape == (10,)  # the names of fit, in their order


def test_a_scaler_refuses_feature_names_other_than_those_of_fit_in_one_line():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(np.eye(3), columns=["a", "b", "c"])
    with pytest.raises(ValueError) as exc_info:
        MaxAbsScaler().fit(df).transform(df[["b", "a", "c"]])
    assert _one_line(exc_info).startswith("The feature names of X differ from those MaxAbsScaler was fitted with")


@pytest.mark.parametrize("name", sorted(n for n in LEARNERS if LEARNERS[n].task == "regression"))
def test_regression_targets_that_are_not_numbers_are_refused_in_one_line_naming_y(name):
    # before: "could not convert string to float: np.str_('a')" from the conversion of the targets
    X = np.random.default_rng(0).normal(size=(6, 2))
    for y in (np.array(["a", "b"] * 3), ["a", "b"] * 3, np.array(["a", "b"] * 3, dtype=object)):
        with pytest.raises(ValueError) as exc_info:
            make_learner(name).fit(X, y)
        assert _one_line(exc_info).startswith("y must hold numbers (regression targets); got dtype ")
    ref = make_learner(name, {"random_state": 0}).fit(X, np.arange(6.0))
    np.testing.assert_array_equal(
        make_learner(name, {"random_state": 0}).fit(X, [str(v) for v in range(6)]).predict(X), ref.predict(X)
    )


def test_dense_to_csr_is_scipys_conversion():
    """The boundary's dense-to-CSR conversion (two compiled passes: counts, then columns and values) gives scipy's
    matrix: same rows, columns, values (NaN kept, zeros and negative zeros dropped) and index dtype, for C and
    Fortran order, strided views and empty shapes."""
    from streamlearn._validation import dense_to_csr

    rng = np.random.default_rng(1)
    for shape in [(1, 1), (1, 20), (50, 7), (0, 3), (3, 0), (200, 300)]:
        A = rng.normal(size=shape)
        A[A < 0.3] = 0.0
        if A.size:
            A.flat[0], A.flat[-1] = NAN, -0.0
        for B in (A, np.asfortranarray(A), A[::2, ::3]):  # (a strided view: numba's layout 'A')
            got, want = dense_to_csr(B), sp.csr_matrix(B)
            assert got.shape == want.shape and got.indices.dtype == want.indices.dtype
            np.testing.assert_array_equal(got.indptr, want.indptr)
            np.testing.assert_array_equal(got.indices, want.indices)
            np.testing.assert_array_equal(got.data, want.data)


@pytest.mark.parametrize("layout", ["scipy", "unknown"])
def test_csr_from_arrays_is_scipys_constructor(layout, monkeypatch):
    """The constructor without checks gives scipy's matrix over the same arrays (not copied): shape, values, the sorted
    and canonical flags worked out when asked (unsorted and duplicate indices included), arithmetic, row slicing,
    copies and pickling; with an instance layout it does not know, scipy's constructor itself."""
    import pickle

    from streamlearn import _validation

    if layout == "unknown":
        monkeypatch.setattr(_validation, "_CSR_STATE", None)
    cases = [
        ([2.0, -1.0, 3.0], [4, 1, 7], [0, 2, 2, 3], (3, 9)),  # row 0 unsorted, row 1 empty
        ([1.0, 1.0], [2, 2], [0, 2], (1, 5)),  # a duplicate
        ([0.5], [0], [0, 1], (1, 1)),
        ([], [], [0, 0], (1, 4)),
        ([], [], [0], (0, 6)),
    ]
    for index in (np.int32, np.int64):
        for data, indices, indptr, shape in cases:
            arrays = (np.array(data, dtype=np.float64), np.array(indices, dtype=index), np.array(indptr, dtype=index))
            got, want = _validation.csr_from_arrays(*arrays, shape), sp.csr_matrix(arrays, shape=shape)
            assert type(got) is type(want) and got.shape == want.shape == shape and got.format == "csr"
            if layout == "scipy":  # the index arrays themselves (scipy narrows int64 ones when the shape allows)
                assert all(a is b for a, b in zip((got.data, got.indices, got.indptr), arrays, strict=True))
            assert got.has_sorted_indices == want.has_sorted_indices
            assert got.has_canonical_format == want.has_canonical_format
            np.testing.assert_array_equal(got.toarray(), want.toarray())
            v = np.arange(shape[1], dtype=np.float64)
            np.testing.assert_array_equal(got @ v, want @ v)
            np.testing.assert_array_equal((got * 2.0 + want).toarray(), 3.0 * want.toarray())
            np.testing.assert_array_equal(got[-1:].toarray() if shape[0] else got.toarray(), want[-1:].toarray())
            for other in (got.copy(), pickle.loads(pickle.dumps(got))):
                assert other.shape == shape
                np.testing.assert_array_equal(other.toarray(), want.toarray())


@pytest.mark.parametrize("make", [lambda: OGDClassifier(), lambda: MaxAbsScaler(), lambda: StandardScaler()])
def test_float_arrays_skip_sklearns_checks_with_the_same_outcome(make, monkeypatch):
    """A 2-D float64/float32 NumPy array takes the boundary's own checks, not scikit-learn's validate_data (most
    of a one-row partial_fit's time): the model, the refusals and their messages are those of the full path (a
    list of rows)."""
    import sklearn.utils.validation as skv

    from streamlearn.preprocessing import _scalers

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    X[X < 0] = 0.0
    y = (X[:, 0] > 0.5).astype(int)

    def fit(est, X, y):
        if isinstance(est, OGDClassifier):
            return est.partial_fit(X, y, classes=[0, 1])
        return est.partial_fit(X)

    full = fit(make(), X.tolist(), y)
    bad = X.copy()
    bad[3, 2] = NAN
    with pytest.raises(ValueError) as slow_nan:
        fit(make(), bad.tolist(), y)
    with pytest.raises(ValueError) as slow_width:
        fit(fit(make(), X.tolist(), y), X[:, :4].tolist(), y)

    def refuse(*args, **kwargs):
        raise AssertionError("scikit-learn's validate_data was called for a float NumPy array")

    monkeypatch.setattr(skv, "validate_data", refuse)
    monkeypatch.setattr(_scalers, "validate_data", refuse)
    for dense in (X, np.asfortranarray(X), X.astype(np.float32)):
        fast = fit(make(), dense, y)
        for key, value in vars(full).items():
            if isinstance(value, np.ndarray) and dense.dtype == np.float64:
                np.testing.assert_array_equal(vars(fast)[key], value, err_msg=key)
        assert fast.n_features_in_ == 5
    with pytest.raises(ValueError) as fast_nan:
        fit(make(), bad, y)
    assert str(fast_nan.value) == str(slow_nan.value)
    with pytest.raises(ValueError) as fast_width:
        fit(fit(make(), X, y), X[:, :4], y)
    assert str(fast_width.value) == str(slow_width.value)


@pytest.mark.parametrize("to", [np.asarray, sp.csr_matrix])
def test_missing_y_is_named_for_every_input(to):
    """y=None with a float array or CSR matrix (the boundary's fast path) is scikit-learn's one-line refusal, not an
    AttributeError from reading y's dtype."""
    X = to(np.eye(3))
    with pytest.raises(ValueError, match="requires y to be passed, but the target y is None"):
        OGDClassifier().partial_fit(X, None, classes=[0, 1])


@pytest.mark.parametrize(
    "make, name, bad",
    [
        (lambda: OGDClassifier(), "eta0", -1.0),
        (lambda: OGDClassifier(), "fit_intercept", 1),  # equal to True, but not a boolean
        (lambda: OGDClassifier(), "max_iter", 2.0),  # equal to 2, but not an integer
        (lambda: SketchedOnlineNewton(sketch="rp", ell=4), "sketch", "fd2"),
        (lambda: OGDClassifier(), "eta0", np.array([0.1, 0.2])),  # (not compared with the remembered values)
    ],
)
def test_a_parameter_changed_after_valid_calls_is_checked_again(tmp_path, make, name, bad):
    """validate_params remembers the values it found valid (a one-row partial_fit spent more time checking them
    than learning): a value set afterwards, directly or by set_params, even one equal to the valid one in another
    type, is checked again; and what is remembered is not saved in the model file."""
    from streamlearn import persist

    X, y = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1, -1])
    est = make()
    est.partial_fit(X, y, classes=[-1, 1])
    est.partial_fit(X, y)  # (remembered)
    good = getattr(est, name)
    if name == "max_iter":
        est.set_params(max_iter=2)
        est.partial_fit(X, y)
    persist.save(est, tmp_path / "m.slm")  # nothing of the remembered values in the file
    persist.load(tmp_path / "m.slm").partial_fit(X, y)
    setattr(est, name, bad)
    with pytest.raises(ValueError, match=f"The '{name}' parameter of {type(est).__name__} must be"):
        est.partial_fit(X, y)
    setattr(est, name, good)
    est.partial_fit(X, y)


@pytest.mark.parametrize(
    "labels, shown",
    [(["yes"] * 3, "got 1 class: {yes}."), ([2.0, 2.0], "got 1 class: {2}."), ([], "got 0 classes: {}.")],
)
def test_fewer_than_two_classes_are_named_as_labels(labels, shown):
    """The refusal names the classes as messages show labels, not as a NumPy array's repr."""
    from streamlearn.linear_model import DualCoordinateDescentSVC

    for est in (OGDClassifier(), DualCoordinateDescentSVC()):
        with pytest.raises(ValueError) as info:
            if labels:
                est.fit(np.ones((len(labels), 2)), np.array(labels))
            else:
                est._set_classes([]) if isinstance(est, DualCoordinateDescentSVC) else est.partial_fit(
                    np.ones((1, 2)), [1], classes=np.array([], dtype=float)
                )
        assert str(info.value) == f"{type(est).__name__} needs at least 2 classes; {shown}"


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("shape", [(1,), (3,), (1, 1), (2, 3)])
def test_a_score_that_is_not_finite_is_a_one_line_error_naming_its_example(bad, shape):
    """finite_scores: one score (a one-row predict, checked without NumPy's sweep) or many, 1-D or one column per
    class; the error names the first example whose score is not finite."""
    from streamlearn._validation import finite_scores

    clf = OGDClassifier()
    scores = np.ones(shape)
    assert finite_scores(clf, scores) is scores
    scores.flat[-1] = bad
    row = shape[0] - 1
    with pytest.raises(ValueError, match=rf"^OGDClassifier cannot score example {row} of X: its score is {bad}"):
        finite_scores(clf, scores)


def test_a_one_row_predict_whose_score_overflows_is_a_one_line_error():
    clf = OGDClassifier().fit(np.eye(2), [0, 1])
    clf.coef_[:] = 1e300
    for X in (sp.csr_matrix([[1e10, 1e10]]), np.array([[1e10, 1e10]])):
        with pytest.raises(ValueError, match="^OGDClassifier cannot score example 0 of X: its score is inf"):
            clf.predict(X)
