"""Model files: round trip, and a clear error for every kind of bad file; nothing is unpickled."""

import io
import json
import zipfile
import zlib

import numpy as np
import pytest

from streamlearn import load
from streamlearn.facto import OCCFMClassifier
from streamlearn.linear_model import (
    OGDClassifier,
    OGDRegressor,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    PegasosClassifier,
    Perceptron,
)
from streamlearn.persist import FORMAT_VERSION, ModelFileError
from tests.conftest import small_problem

X, y_clf, y_reg = small_problem(80, 6, tilt=0.3)


@pytest.mark.parametrize(
    "est",
    [
        OGDClassifier(),
        Perceptron(),
        PassiveAggressiveClassifier(variant="pa2"),
        OGDRegressor(),
        PassiveAggressiveRegressor(),
    ],
    ids=repr,
)
def test_round_trip_gives_identical_predictions_and_keeps_learning(est, tmp_path):
    y = y_reg if "Regressor" in type(est).__name__ else y_clf
    est.fit(X, y)
    path = tmp_path / "m.slm"
    est.save(path)
    back = load(path)
    assert type(back) is type(est) and back.get_params() == est.get_params()
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    # the loaded model continues exactly where the original stands
    est.partial_fit(X[:10], y[:10])
    back.partial_fit(X[:10], y[:10])
    np.testing.assert_array_equal(back.coef_, est.coef_)
    assert back.t_ == est.t_


def test_save_into_a_file_object_writes_the_same_entries(saved, tmp_path):
    """save into a binary file object (io.BytesIO) writes the model file's entries there, nothing on disk."""
    from streamlearn.persist import save

    est = load(saved)
    buf = io.BytesIO()
    save(est, buf)
    with zipfile.ZipFile(buf) as got, zipfile.ZipFile(saved) as ref:
        assert got.namelist() == ref.namelist()
        assert all(got.read(n) == ref.read(n) for n in ref.namelist())
    (tmp_path / "copy.slm").write_bytes(buf.getvalue())
    np.testing.assert_array_equal(load(tmp_path / "copy.slm").predict(X), est.predict(X))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.slm", "pa.slm"]


def _rewrite(path, edit):
    with zipfile.ZipFile(path) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    edit(entries)
    with zipfile.ZipFile(path, "w") as zf:
        for n, raw in entries.items():
            zf.writestr(n, raw)


def test_an_array_entry_larger_than_its_shape_is_refused_before_it_is_read(saved, monkeypatch):
    """An entry that decompresses to far more than its array's dtype and shape hold (a small file that expands
    to gigabytes: an uploaded model on a server) is refused from the archive's directory, before it is read."""
    with zipfile.ZipFile(saved) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    name = next(n for n in entries if n.startswith("arrays/"))
    entries[name] = entries[name] + bytes(64 << 20)  # 64 MiB of zeros: deflated to about 64 KiB
    with zipfile.ZipFile(saved, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, raw in entries.items():
            zf.writestr(n, raw)
    assert saved.stat().st_size < 1 << 20
    read = zipfile.ZipFile.read

    def guarded(self, n, *args):
        assert n != name, "the oversized entry was read"
        return read(self, n, *args)

    monkeypatch.setattr(zipfile.ZipFile, "read", guarded)
    with pytest.raises(ModelFileError, match=r"decompresses to \d+ bytes, more than its dtype and shape"):
        load(saved)
    monkeypatch.undo()
    name = "meta.json"  # the same for the metadata, at 64 MiB
    entries[name] = entries[name] + b" " * (65 << 20)
    with zipfile.ZipFile(saved, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, raw in entries.items():
            zf.writestr(n, raw)
    monkeypatch.setattr(zipfile.ZipFile, "read", guarded)
    with pytest.raises(ModelFileError, match=r"meta.json decompresses to \d+ bytes, more than a model's metadata"):
        load(saved)


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "pa.slm"
    PassiveAggressiveClassifier().fit(X, y_clf).save(path)
    return path


def test_corrupted_array_is_detected(saved):
    def flip(entries):
        raw = bytearray(entries["arrays/coef_.npy"])
        raw[-3] ^= 0xFF
        entries["arrays/coef_.npy"] = bytes(raw)

    _rewrite(saved, flip)
    with pytest.raises(ModelFileError, match="checksum mismatch for array 'coef_'"):
        load(saved)


def test_wrong_version_is_detected(saved):
    def bump(entries):
        meta = json.loads(entries["meta.json"])
        meta["format_version"] = FORMAT_VERSION + 1
        entries["meta.json"] = json.dumps(meta)

    _rewrite(saved, bump)
    with pytest.raises(ModelFileError, match=f"model format version {FORMAT_VERSION + 1}"):
        load(saved)


def test_unknown_class_is_refused(saved):
    def other(entries):
        meta = json.loads(entries["meta.json"])
        meta["class"] = "os.system"
        entries["meta.json"] = json.dumps(meta)

    _rewrite(saved, other)
    with pytest.raises(ModelFileError, match="unknown class 'os.system'"):
        load(saved)


def test_pickled_object_array_is_never_loaded(saved):
    def smuggle(entries):
        buf = io.BytesIO()
        np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        entries["arrays/coef_.npy"] = buf.getvalue()
        meta = json.loads(entries["meta.json"])
        import hashlib

        meta["arrays"]["coef_"]["sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
        entries["meta.json"] = json.dumps(meta)

    _rewrite(saved, smuggle)
    with pytest.raises(ModelFileError, match="array 'coef_' is unreadable"):
        load(saved)


def test_not_a_model_file(tmp_path):
    bad = tmp_path / "x.slm"
    bad.write_text("hello")
    with pytest.raises(ModelFileError, match="not a streamlearn model file"):
        load(bad)
    with pytest.raises(FileNotFoundError, match="no such model file"):
        load(tmp_path / "missing.slm")
    z = tmp_path / "z.slm"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("other.txt", "x")
    with pytest.raises(ModelFileError, match="no meta.json"):
        load(z)


@pytest.mark.parametrize("path", [3, None, ["m.slm"]])
def test_a_model_path_of_the_wrong_type_is_named(tmp_path, path):
    """load(3) and save(None) raised os.fspath's 'expected str, bytes or os.PathLike object, not int', which does
    not say which argument."""
    want = f"path of the model file must be a str or os.PathLike; got {type(path).__name__}."
    with pytest.raises(TypeError) as err:
        load(path)
    assert str(err.value) == want
    model = OGDClassifier().partial_fit([[1.0, 0.0], [0.0, 1.0]], [0, 1], classes=[0, 1])
    with pytest.raises(TypeError) as err:
        model.save(path)
    assert str(err.value) == want


def test_load_through_the_wrong_class_is_refused(saved):
    with pytest.raises(ModelFileError, match="holds a PassiveAggressiveClassifier, not a Perceptron"):
        Perceptron.load(saved)


def test_failed_save_leaves_nothing_behind(tmp_path):
    est = PassiveAggressiveClassifier().fit(X, y_clf)
    est.unsaveable_ = object()
    path = tmp_path / "m.slm"
    with pytest.raises(TypeError, match="Cannot save attribute 'unsaveable_'"):
        est.save(path)
    assert list(tmp_path.iterdir()) == []


def test_incompressible_arrays_are_stored_compressible_ones_deflated(tmp_path):
    import streamlearn.persist as persist

    est = PassiveAggressiveClassifier().fit(X, y_clf)
    n = persist._PROBE_ABOVE // 8 + 10  # above the probe size, far below the always-stored size
    est.coef_ = np.random.default_rng(1).normal(size=(1, n))  # trained weights: mantissas look random
    est.n_features_in_ = n  # the width the arrays have (loading checks it)
    est.mostly_zero_ = np.zeros(n)
    est.mostly_zero_[::1000] = 1.5
    # NAG-like per-feature state: a column of scales (1.0) beside random sums; deflate takes about a third off
    est.half_random_ = np.column_stack([np.ones(n // 2), np.random.default_rng(2).exponential(size=n // 2)])
    ratio = len(zlib.compress(est.half_random_.tobytes(), 1)) / est.half_random_.nbytes
    assert 0.5 < ratio < 0.8
    path = tmp_path / "m.slm"
    persist.save(est, path)
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("arrays/coef_.npy").compress_type == zipfile.ZIP_STORED
        assert zf.getinfo("arrays/half_random_.npy").compress_type == zipfile.ZIP_STORED
        assert zf.getinfo("arrays/mostly_zero_.npy").compress_type == zipfile.ZIP_DEFLATED
    back = load(path)
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.half_random_, est.half_random_)
    np.testing.assert_array_equal(back.mostly_zero_, est.mostly_zero_)


def test_large_arrays_round_trip_stored_uncompressed(tmp_path):
    import streamlearn.persist as persist

    est = PassiveAggressiveClassifier().fit(X, y_clf)
    est.coef_ = np.random.default_rng(1).normal(size=(1, (persist._STORE_ABOVE // 8) + 10))
    est.n_features_in_ = est.coef_.shape[1]
    path = tmp_path / "big.slm"
    persist.save(est, path)
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("arrays/coef_.npy").compress_type == zipfile.ZIP_STORED
        assert zf.getinfo("meta.json").compress_type == zipfile.ZIP_DEFLATED
    np.testing.assert_array_equal(load(path).coef_, est.coef_)


def test_meta_json_nested_too_deep_is_a_model_file_error(tmp_path):
    """A meta.json nested deeper than the JSON parser goes (not a model streamlearn wrote) is the one-line
    ModelFileError of any other damaged meta.json, not a RecursionError."""
    for text in ("[" * 100_000 + "]" * 100_000, '{"format": "streamlearn-model", "params": ' + "[" * 100_000):
        path = tmp_path / "deep.slm"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("meta.json", text)
        with pytest.raises(ModelFileError, match="meta.json is corrupted"):
            load(path)


def _pipeline_file(tmp_path):
    """A trained regressor behind both scalers (nested objects), with an input specification."""
    from streamlearn.datasets import InputSpec
    from streamlearn.learners import make_learner, scaled_learner

    model = scaled_learner("ogd-regressor", make_learner("ogd-regressor"), "maxabs", "standard")
    model.partial_fit(X, y_reg)
    model.input_spec_ = InputSpec(format="libsvm", zero_based=False, n_features=X.shape[1]).to_dict()
    path = tmp_path / "m.slm"
    model.save(path)
    return path


_DELETE = object()
_LEARNER = ("attributes", "learner_", "$object")


@pytest.mark.parametrize(
    "where, value, expected",
    [
        (("class",), "streamlearn.learners.OGD", "unknown class 'streamlearn.learners.OGD'"),
        (("params",), [], "field 'params': expected a mapping, got []"),
        (("attributes",), _DELETE, "field 'attributes': expected a mapping, got nothing"),
        ((*_LEARNER, "params", "eta0"), "abc", "field 'attributes.learner_.$object.params.eta0': expected a float"),
        ((*_LEARNER, "params", "eta0"), 0, "field 'attributes.learner_.$object.params.eta0': expected a float"),
        ((*_LEARNER, "params", "loss"), None, "field 'attributes.learner_.$object.params.loss': expected one of"),
        ((*_LEARNER, "params", "speed"), 1, "field 'attributes.learner_.$object.params.speed': OGDRegressor has no"),
        ((*_LEARNER, "attributes", "t_"), "12", "field 'attributes.learner_.$object.attributes.t_': expected an int"),
        ((*_LEARNER, "attributes", "t_"), _DELETE, "field 'attributes.learner_.$object.attributes.t_' is missing"),
        ((*_LEARNER, "attributes", "t_"), 10**30, "attributes.t_': expected an integer from 0 to 2**63 - 1"),
        ((*_LEARNER, "params", "max_iter"), 10**30, "params.max_iter': expected an int in the range [1, inf)"),
        ((*_LEARNER, "attributes", "n_features_in_"), 7, "'attributes.learner_.$object.attributes.n_features_in_': 7"),
        ((*_LEARNER, "arrays", "coef_"), _DELETE, "field 'attributes.learner_.$object.arrays.coef_': expected the"),
        ((*_LEARNER, "arrays", "coef_"), [], "field 'attributes.learner_.$object.arrays.coef_': expected a mapping"),
        (("attributes", "learner_"), "ogd", "field 'attributes.learner_': expected a streamlearn online learner"),
        (("params", "scaler"), {"a": 1}, "field 'params.scaler': expected a streamlearn streaming scaler or null"),
        (("attributes", "target_scaler_"), _DELETE, "field 'attributes.target_scaler_' is missing"),
        (("attributes", "target_scaler_", "$object", "attributes", "mean_"), "0", "mean_': expected a number"),
        (("attributes", "input_spec_", "zero_based"), "no", "input_spec_.zero_based': expected true, false or null"),
        (("attributes", "input_spec_", "ignore"), {}, "input_spec_.ignore': expected a list of strings, got {}"),
        (("attributes", "input_spec_", "options"), [], "input_spec_.options': expected a mapping, got []"),
        (("attributes", "input_spec_", "colour"), 1, "input_spec_.colour': unknown key"),
        (("attributes", "input_spec_", "format"), "vw", "input_spec_.bits': expected an integer from 1 to 32 (a vw"),
    ],
    ids=lambda v: ".".join(v) if isinstance(v, tuple) else None,
)
def test_a_hand_edited_meta_json_names_the_field(tmp_path, where, value, expected):
    """A meta.json edited by hand (a wrong type, a missing key, an unknown name, a parameter its class refuses,
    a width that does not fit the arrays) is a one-line ModelFileError naming the file and the field at load time,
    not a failure later in whatever uses the model."""
    path = _pipeline_file(tmp_path)

    def edit(entries):
        meta = json.loads(entries["meta.json"])
        node = meta
        for key in where[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[where[-1]]
        else:
            node[where[-1]] = value
        entries["meta.json"] = json.dumps(meta)

    _rewrite(path, edit)
    with pytest.raises(ModelFileError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and expected in message and "\n" not in message


@pytest.mark.parametrize(
    "make, key",
    [
        (lambda: PegasosClassifier().partial_fit(X, y_clf, classes=np.unique(y_clf)), "_state_round"),
        (lambda: Perceptron().partial_fit(X, y_clf, classes=np.unique(y_clf)), "radius_"),
        (lambda: OCCFMClassifier().partial_fit(X, y_clf, classes=np.unique(y_clf)), "mode_"),
    ],
    ids=["pegasos", "perceptron", "occfm"],
)
def test_a_fitted_attribute_removed_from_meta_json_is_named(tmp_path, make, key):
    """Without it the model failed with an AttributeError in predict or train -i."""
    path = tmp_path / "m.slm"
    make().save(path)

    def remove(entries):
        meta = json.loads(entries["meta.json"])
        del meta["attributes"][key]
        entries["meta.json"] = json.dumps(meta)

    _rewrite(path, remove)
    with pytest.raises(ModelFileError, match=rf"meta.json field 'attributes.{key}' is missing"):
        load(path)


def test_a_perceptron_radius_beyond_1e154_diverges_instead_of_overflowing():
    """A radius edited to 1e200: the intercept's scale (its square) is infinite, a divergence, not an
    OverflowError traceback."""
    est = Perceptron().partial_fit(X, y_clf, classes=np.unique(y_clf))
    est.radius_ = 1e200
    with pytest.raises(FloatingPointError, match="Perceptron diverged"):
        est.partial_fit(X, y_clf)
