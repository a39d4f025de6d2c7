"""The server's model without HTTP: recovery replays the log with the same batches (bit for bit, also for the
chunk-dependent sketched Newton learners), group commit, snapshots, a damaged log."""

import json
import time
import zipfile
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from streamlearn.persist import load
from streamlearn.serve import BadRequest, ServedModel
from streamlearn.serve._wal import read_records
from tests.serve._rows import labelled_body

D = 30


_body = partial(labelled_body, n_features=D, per_row=4)


def _meta(model, tmp_path):
    path = tmp_path / "m.slm"
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json"))
    return json.dumps(meta, sort_keys=True)


# pa: behind its default MaxAbs scaler; ogd-regressor: MaxAbs and the target scaler (StreamPipeline models)
@pytest.mark.parametrize("learner", ["rfd-son", "ftrl", "tg", "pa", "ogd-regressor"])
def test_recovery_replays_the_same_batches_bit_for_bit(learner, tmp_path):
    rng = np.random.default_rng(3)
    state = tmp_path / "state"
    a = ServedModel(state, learner=learner, n_features=D, snapshot_every=0, window=200)
    for k in range(12):
        X, y, payload = a.parse(_body(rng, int(rng.integers(1, 15))), labelled=True)
        a.learn(X, y, payload).result(timeout=30)
        if k == 5:
            a.snapshot().result(timeout=30)  # half from the snapshot, half from the log
    expected = _meta(a.model, tmp_path)
    # "crash": a second server on the same folder without closing the first (nothing flushed at exit)
    b = ServedModel(state, snapshot_every=0, window=200)
    assert b.stats["n_learned"] == a.stats["n_learned"]
    assert _meta(b.model, tmp_path) == expected
    assert b.online_metrics() == a.online_metrics()  # the recent window too, as /metrics reports it
    b.close()
    a.close(snapshot=False)


def test_group_commit_learns_queued_requests_in_one_call(tmp_path):
    rng = np.random.default_rng(4)
    m = ServedModel(tmp_path / "state", learner="ftrl", n_features=D, snapshot_every=0)
    bodies = [m.parse(_body(rng, 3), labelled=True) for _ in range(20)]
    with m._cv:  # hold the queue: the 20 requests arrive while the writer is busy
        futures = [m.learn(X, y, p) for X, y, p in bodies]
    results = [f.result(timeout=30) for f in futures]
    assert [r["first"] for r in results] == list(range(0, 60, 3))
    records, _, torn = read_records(m.wal.path)
    assert len(records) < 20 and not torn and sum(r[1].count(b"\n") for r in records) == 60
    m.close()


def _ftrl_three_batches(state, rng, rows):
    """A new FTRL model served from ``state`` (no timed snapshots) that has learnt three batches of ``rows``."""
    m = ServedModel(state, learner="ftrl", n_features=D, snapshot_every=0)
    for _ in range(3):
        m.learn(*m.parse(_body(rng, rows), labelled=True)).result(timeout=30)
    return m


def test_damaged_log_before_the_last_record_refuses_to_start(tmp_path):
    state = tmp_path / "state"
    m = _ftrl_three_batches(state, np.random.default_rng(5), 4)
    m.close(snapshot=False)
    wal = m.wal.path
    data = bytearray(Path(wal).read_bytes())
    data[20] ^= 0xFF  # a flipped byte inside the first record: not a torn tail, later records exist
    Path(wal).write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupted|missing log records"):
        ServedModel(state, snapshot_every=0)


@pytest.mark.parametrize(
    "damage", ["{not json", "[]", '{"config": {}, "stats": {}}', '{"config": [], "stats": {"n_learned": 0}}', ""]
)
def test_damaged_snapshot_state_refuses_to_start_naming_the_file(tmp_path, damage):
    """A snapshot's state file that is not the JSON the server wrote (damaged, emptied, edited) is a ValueError
    naming that file (the command line's one-line error), not a traceback or a message without the file."""
    state = tmp_path / "state"
    m = _ftrl_three_batches(state, np.random.default_rng(5), 4)
    m.close()
    (snap,) = state.glob("state-*.json")
    snap.write_text(damage)
    with pytest.raises(ValueError, match=f"{snap.name}: .*damaged") as info:
        ServedModel(state, snapshot_every=0)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("replay", [True, False])
def test_a_snapshot_model_file_that_is_not_a_served_learner_refuses_to_start_naming_it(tmp_path, replay):
    """A snapshot's model file replaced by another streamlearn file (a sketch) ended the start-up with an
    AttributeError traceback while the log was replayed (or, with nothing to replay, served a model that
    cannot predict): a ValueError naming the file, the command line's one-line error."""
    from streamlearn.sketch import FrequentDirections

    state = tmp_path / "state"
    m = _ftrl_three_batches(state, np.random.default_rng(5), 4)
    m.close(snapshot=not replay)
    (snap,) = state.glob("model-*.slm")
    FrequentDirections(ell=4).partial_fit(np.eye(D)).save(str(snap))
    with pytest.raises(ValueError, match=f"{snap.name}: the snapshot's model file holds a FrequentDirections") as info:
        ServedModel(state, snapshot_every=0)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "window", [None, {"loss": ["x"], "err": []}, {"loss": [1.0]}, [1.0], {"loss": [float("nan")], "err": []}]
)
def test_snapshot_window_of_an_earlier_version_or_damaged(tmp_path, window):
    """The recent window /metrics reports is in the snapshot: a state file without it (an earlier version) starts
    with an empty window; one whose window is not lists of numbers is damaged, named."""
    state = tmp_path / "state"
    m = _ftrl_three_batches(state, np.random.default_rng(5), 4)
    m.close()
    (snap,) = state.glob("state-*.json")
    content = json.loads(snap.read_text())
    assert len(content["window"]["loss"]) == 12
    if window is None:
        del content["window"]
    else:
        content["window"] = window
    snap.write_text(json.dumps(content))
    if window is None:
        m = ServedModel(state, snapshot_every=0)
        assert m.online_metrics()["window"] == 0 and m.stats["n_learned"] == 12
        m.close()
        return
    with pytest.raises(ValueError, match=f"{snap.name}: .*damaged .*window"):
        ServedModel(state, snapshot_every=0)


def test_state_dir_that_is_a_file_is_named(tmp_path):
    path = tmp_path / "state"
    path.write_text("x")
    with pytest.raises(ValueError, match="state.*is not a folder"):
        ServedModel(path, learner="ftrl", n_features=D, snapshot_every=0)
    with pytest.raises(ValueError, match="state directory .*inside.*: cannot create it"):
        ServedModel(path / "inside", learner="ftrl", n_features=D, snapshot_every=0)  # under a file


def test_snapshot_files_and_served_model_file(tmp_path):
    rng = np.random.default_rng(6)
    state = tmp_path / "state"
    m = ServedModel(state, learner="ogd", n_features=D, snapshot_every=0)
    m.learn(*m.parse(_body(rng, 7), labelled=True)).result(timeout=30)
    data, n = m.model_bytes()
    assert n == 7
    m.close()
    # snapshot 1 at start (0 examples), snapshot 2 at close (7 examples); the log restarts at example 7
    assert sorted(p.name for p in state.iterdir()) == ["model-2.slm", "state-2.json", "wal-7.log"]
    saved = load(state / "model-2.slm")
    (tmp_path / "got.slm").write_bytes(data)
    np.testing.assert_array_equal(load(tmp_path / "got.slm").coef_, saved.coef_)


def test_the_served_model_file_is_made_in_memory_when_the_disk_is_full(tmp_path, monkeypatch):
    """GET /model makes the model file in memory: a copy can be taken when the state folder cannot be written
    (it was written to a temporary file there, and a full or read-only disk made the request fail)."""
    import errno
    import tempfile

    rng = np.random.default_rng(8)
    m = ServedModel(tmp_path / "state", learner="ftrl", n_features=D, snapshot_every=0)
    m.learn(*m.parse(_body(rng, 9), labelled=True)).result(timeout=30)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "mkstemp", full)
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", full)
    data, n = m.model_bytes()
    monkeypatch.undo()
    assert n == 9
    (tmp_path / "got.slm").write_bytes(data)
    np.testing.assert_array_equal(load(tmp_path / "got.slm").coef_, m.model.coef_)
    m.close()


def test_crash_between_the_two_snapshot_files_keeps_the_previous_snapshot(tmp_path):
    state = tmp_path / "state"
    m = _ftrl_three_batches(state, np.random.default_rng(7), 5)
    expected = _meta(m.model, tmp_path)
    m.close(snapshot=False)
    (state / "state-2.json").write_text((state / "state-1.json").read_text())  # model-2.slm never written
    back = ServedModel(state, snapshot_every=0)
    assert back.stats["n_learned"] == 15 and _meta(back.model, tmp_path) == expected
    back.close()


def test_bad_parameter_or_learner_is_refused_before_anything_is_written(tmp_path):
    state = tmp_path / "state"
    with pytest.raises(ValueError, match="alpha"):
        ServedModel(state, learner="ftrl", params={"alpha": "x"}, n_features=D)
    with pytest.raises(ValueError, match="cannot be served"):
        ServedModel(state, learner="dcd-svm", n_features=D)
    assert not state.exists()


def test_a_start_that_fails_removes_the_state_folders_it_created(tmp_path, capsys):
    from streamlearn.cli.main import main

    pytest.importorskip("uvicorn")
    bad = tmp_path / "bad.slm"
    bad.write_text("not a model\n")
    argv = ["serve", str(bad), "--state-dir", str(tmp_path / "new" / "state"), "--port", "0"]
    assert main(argv) == 2
    assert "bad.slm: not a streamlearn model file" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
    kept = tmp_path / "kept"  # a folder that existed stays, with what it held
    kept.mkdir()
    (kept / "notes.txt").write_text("mine\n")
    with pytest.raises(ValueError, match="not a streamlearn model file"):
        ServedModel(kept / "state", model=bad, snapshot_every=0)
    assert [p.name for p in kept.iterdir()] == ["notes.txt"]
    with pytest.raises(ValueError, match="not a streamlearn model file"):
        ServedModel(kept, model=bad, snapshot_every=0)
    assert [p.name for p in kept.iterdir()] == ["notes.txt"]


def test_index_0_on_a_one_based_server_advises_what_a_client_can_do(tmp_path):
    from streamlearn.serve import BadRequest

    m = ServedModel(tmp_path / "state", learner="ftrl", n_features=D, snapshot_every=0)
    with pytest.raises(BadRequest, match=r"line 2: feature index 0 in '0:1', but this server reads one-based") as e:
        m.parse(b"1 1:1\n-1 0:1 2:1\n", labelled=True)
    assert "zero_based=True" not in str(e.value) and "send indices from 1" in str(e.value)
    m.close()
    zero = ServedModel(tmp_path / "zero", learner="ftrl", n_features=D, zero_based=True, snapshot_every=0)
    assert zero.parse(b"-1 0:1 2:1\n", labelled=True)[0].shape == (1, D)
    zero.close()


def test_request_parsed_before_a_swap_that_no_longer_fits_gets_409(tmp_path):
    from streamlearn.learners import make_learner
    from streamlearn.serve import BadRequest

    rng = np.random.default_rng(8)
    m = ServedModel(tmp_path / "state", learner="ftrl", n_features=D, snapshot_every=0)
    X, y, payload = m.parse(_body(rng, 3), labelled=True)  # parsed for width D
    wider = make_learner("pa1")
    Xw, yw, _ = m.parse(_body(rng, 5), labelled=True)
    import scipy.sparse as sp

    wider.partial_fit(sp.hstack([Xw, sp.csr_matrix((5, 10))]).tocsr(), yw, classes=[-1.0, 1.0])
    wider.save(tmp_path / "wider.slm")
    assert m.swap(str(tmp_path / "wider.slm")).result(timeout=30)["n_features"] == D + 10
    with pytest.raises(BadRequest, match="replaced") as exc:
        m.learn(X, y, payload).result(timeout=30)
    assert exc.value.status == 409
    assert m.failed is None and m.health()["learner"] == "pa1"
    m.close()


def test_auth_all_protects_every_endpoint(tmp_path):
    import asyncio

    httpx = pytest.importorskip("httpx")
    from streamlearn.serve import create_app

    m = ServedModel(tmp_path / "state", learner="ogd", n_features=D, snapshot_every=0)
    app = create_app(m, token="t0k", auth_all=True)

    async def statuses():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            out = [(await c.get(p)).status_code for p in ("/health", "/metrics")]
            out.append((await c.post("/predict", content=b"1:1\n")).status_code)
            out.append((await c.get("/health", headers={"Authorization": "Bearer t0k"})).status_code)
            return out

    assert asyncio.run(statuses()) == [401, 401, 401, 200]
    m.close()


def test_log_record_after_a_short_write_is_whole(tmp_path, monkeypatch):
    """A write that stores only part of a record (header and payload in one writev) is completed in order."""
    from streamlearn.serve import _wal

    real = _wal.os.writev
    monkeypatch.setattr(_wal, "_writev", lambda fd, parts: real(fd, [bytes(parts[0])[:5]]))
    path = tmp_path / "wal-0.log"
    log = _wal.WriteAheadLog(str(path))
    log.append(0, b"1 1:0.5\n")
    log.append(1, b"-1 2:1\n-1 3:1\n")
    log.close()
    assert read_records(str(path)) == ([(0, b"1 1:0.5\n"), (1, b"-1 2:1\n-1 3:1\n")], path.stat().st_size, False)


def test_a_new_learner_gets_the_command_lines_default_scalers(tmp_path):
    """``--learner pa`` serves what ``streamlearn train -l pa`` trains: pa behind its default MaxAbs scaler
    (``streamlearn learners``), with the same scores batch after batch; ``scale="none"`` serves pa alone."""
    from streamlearn.learners import make_learner, scaled_learner

    rng = np.random.default_rng(11)
    bodies = [_body(rng, int(rng.integers(1, 15))) for _ in range(6)]
    served = ServedModel(tmp_path / "a", learner="pa", n_features=D, snapshot_every=0)
    bare = ServedModel(tmp_path / "b", learner="pa", scale="none", n_features=D, snapshot_every=0)
    reference = scaled_learner("pa", make_learner("pa"))
    assert (
        type(served.model).__name__ == "StreamPipeline" and type(bare.model).__name__ == "PassiveAggressiveClassifier"
    )
    for body in bodies:
        X, y, payload = served.parse(body, labelled=True)
        got = served.learn(X, y, payload).result(timeout=30)
        bare.learn(X, y, payload).result(timeout=30)
        expected = reference.partial_fit_scores(X, y, classes=[-1.0, 1.0])
        np.testing.assert_array_equal(got["scores"], expected)
    X, _, _ = served.parse(bodies[0], labelled=False)
    np.testing.assert_array_equal(served.predict(X)["scores"], reference.decision_function(X))
    assert served.health()["learner"] == "pa"
    served.close()
    bare.close()


def test_a_model_file_with_its_scaler_is_served_as_trained(tmp_path):
    """A model file that ``streamlearn train`` wrote with the learner's default scaler (a StreamPipeline)
    is served, and predicts as the file does."""
    from streamlearn.cli.main import main

    rng = np.random.default_rng(12)
    data = tmp_path / "d.svm"
    data.write_bytes(b"".join(_body(rng, 20) for _ in range(5)))
    model = tmp_path / "m.slm"
    assert main(["train", str(data), "-l", "pa", "-o", str(model), "--quiet"]) == 0
    m = ServedModel(tmp_path / "state", model=str(model), snapshot_every=0)
    assert m.config["learner"] == "pa" and m.config["n_features"] == load(model).n_features_in_
    X, _, _ = m.parse(data.read_bytes(), labelled=False)
    np.testing.assert_array_equal(m.predict(X)["scores"], load(model).decision_function(X))
    m.close()


def test_target_scaler_only_for_squared_loss_regressors(tmp_path):
    with pytest.raises(ValueError, match="squared-loss regressor"):
        ServedModel(tmp_path / "s", learner="pa", target_scale="standard", n_features=D)
    assert not (tmp_path / "s").exists()


def test_cli_scale_options_start_a_new_learner_only(tmp_path, capsys):
    from streamlearn.cli.main import main

    pytest.importorskip("uvicorn")
    model = tmp_path / "m.slm"
    model.write_bytes(b"not read: the options are checked first")
    argv = ["serve", str(model), "--state-dir", str(tmp_path / "state"), "--scale", "none"]
    assert main(argv) == 2
    assert "--scale and --scale-target apply to a new --learner" in capsys.readouterr().err
    assert not (tmp_path / "state").exists()


def test_width_classes_and_base_that_contradict_the_model_file_are_refused(tmp_path):
    """``n_features`` / ``classes`` / ``zero_based`` (``--n-features``, ``--classes``, ``--zero-based``) given
    with a trained model file must agree with it: a different value is an error naming both (it was ignored,
    and the server ran with the model's values), before anything is written; the same values are accepted."""
    from streamlearn.cli.main import main

    rng = np.random.default_rng(13)
    data = tmp_path / "d.svm"
    data.write_bytes(b"".join(_body(rng, 20) for _ in range(3)))
    model = tmp_path / "m.slm"
    assert main(["train", str(data), "-l", "ftrl", "-o", str(model), "--quiet"]) == 0
    width = int(load(model).n_features_in_)
    for kw, words in (
        ({"n_features": width + 7}, f"n_features={width + 7}"),
        ({"classes": [0.0, 1.0]}, "classes=[0.0, 1.0]"),
        ({"zero_based": True}, "zero_based=True"),
    ):
        state = tmp_path / f"state-{words.split('=')[0]}"
        with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
            ServedModel(state, model=str(model), snapshot_every=0, **kw)
        assert not state.exists()
    m = ServedModel(
        tmp_path / "same", model=str(model), n_features=width, classes=[-1, 1], zero_based=False, snapshot_every=0
    )
    assert m.config["n_features"] == width
    m.close()


@pytest.mark.parametrize(
    "learner, classes", [("ftrl", None), ("ftrl", [1, 2, 3]), ("pa", None), ("ftrl-regressor", None)]
)
def test_predictions_before_the_first_update_have_the_shape_of_later_ones(tmp_path, learner, classes):
    """A new server answers /predict with the same keys and shapes before and after it learns: one score per
    class for a multi-class model and ``proba`` (uniform) for a model with probabilities (the untrained answer
    had one bare score per example and no ``proba``)."""
    kw = {} if classes is None else {"classes": classes}
    m = ServedModel(tmp_path / "state", learner=learner, n_features=D, snapshot_every=0, **kw)
    X, _, _ = m.parse(b"1:1 2:0.5\n3:1\n", labelled=False)
    before = m.predict(X)
    labels = {None: b"1 1:1\n-1 2:1\n", (1, 2, 3): b"1 1:1\n2 2:1\n3 3:1\n"}[
        None if classes is None else tuple(classes)
    ]
    m.learn(*m.parse(labels, labelled=True)).result(timeout=30)
    after = m.predict(X)
    assert set(before) == set(after)
    for key in after:
        assert np.shape(before[key]) == np.shape(after[key]), key
    if "proba" in before:
        assert np.allclose(np.sum(np.atleast_2d(before["proba"]), axis=-1), 1.0) or np.allclose(before["proba"], 0.5)
    m.close()


def _failing_save(monkeypatch):
    """Make the snapshots' model file writes fail with a full disk until the returned switch is turned off."""
    import errno

    from streamlearn.serve import _core

    real = _core.save
    on = [True]

    def save(model, path):
        if on[0]:
            raise OSError(errno.ENOSPC, "No space left on device", path)
        real(model, path)

    monkeypatch.setattr(_core, "save", save)
    return on


def test_a_failed_periodic_snapshot_does_not_stop_learning(tmp_path, monkeypatch):
    """A timed snapshot that fails (full disk) is logged and retried later; the writer keeps learning and
    answering (it died, and every later /learn waited forever), and the log still restores every example."""
    rng = np.random.default_rng(21)
    state = tmp_path / "state"
    logged = []
    m = ServedModel(state, learner="ftrl", n_features=D, snapshot_every=0.01, log=logged.append)
    on = _failing_save(monkeypatch)
    for _ in range(5):
        m.learn(*m.parse(_body(rng, 4), labelled=True)).result(timeout=30)
        time.sleep(0.02)  # a timed snapshot is due before the next batch
    assert m.stats["n_learned"] == 20 and m.failed is None
    assert any("snapshot" in msg and "No space left" in msg for msg in logged)
    expected = _meta(m.model, tmp_path)
    on[0] = False
    m.close(snapshot=False)
    back = ServedModel(state, snapshot_every=0)
    assert back.stats["n_learned"] == 20 and _meta(back.model, tmp_path) == expected
    back.close()


def test_a_model_upload_whose_snapshot_fails_leaves_the_running_model(tmp_path, monkeypatch):
    """POST /model whose snapshot fails: the upload is refused and the running model stays in place, so what
    is learned next is learned by the model the log will be replayed onto (the new model was kept in memory
    while the log stayed the old model's: a restart then replayed those examples onto the old one)."""
    rng = np.random.default_rng(22)
    state = tmp_path / "state"
    m = ServedModel(state, learner="ftrl", n_features=D, snapshot_every=0)
    m.learn(*m.parse(_body(rng, 6), labelled=True)).result(timeout=30)
    other = tmp_path / "pa.slm"
    X, y, _ = m.parse(_body(rng, 10), labelled=True)
    from streamlearn.learners import make_learner

    make_learner("pa1").partial_fit(X, y, classes=[-1, 1]).save(other)
    on = _failing_save(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        m.swap(str(other)).result(timeout=30)
    on[0] = False
    assert m.config["learner"] == "ftrl" and type(m.model).__name__ == "FTRLProximalClassifier"
    m.learn(*m.parse(_body(rng, 5), labelled=True)).result(timeout=30)
    expected = _meta(m.model, tmp_path)
    m.close(snapshot=False)
    back = ServedModel(state, snapshot_every=0)
    assert back.stats["n_learned"] == 11 and back.config["learner"] == "ftrl"
    assert _meta(back.model, tmp_path) == expected
    back.close()


def test_classes_for_a_regressor_are_refused(tmp_path):
    """``--classes`` with a new regressor: an error before anything is written (it was ignored)."""
    state = tmp_path / "state"
    with pytest.raises(ValueError, match="classes.*ftrl-regressor"):
        ServedModel(state, learner="ftrl-regressor", n_features=D, classes=[0, 1], snapshot_every=0)
    assert not state.exists()


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"classes": [1]}, r"classes=\[1\] \(--classes\) needs at least 2 distinct classes"),
        ({"classes": [1.0, 1.0]}, r"classes=\[1.0, 1.0\] \(--classes\) needs at least 2 distinct classes"),
        ({"classes": [-1, 1, -1]}, r"classes=\[-1, 1, -1\] \(--classes\) names -1 twice"),
        ({"classes": [float("nan"), 1.0]}, r"classes=\[nan, 1.0\] \(--classes\) must be finite numbers; got nan"),
        ({"classes": [1.0, float("inf")]}, r"\(--classes\) must be finite numbers; got inf"),
        ({"n_features": 0}, r"n_features \(--n-features\) must be between 1 and 268435456 \(2\*\*28\); got 0"),
        ({"n_features": 10**12}, r"between 1 and 268435456 \(2\*\*28\); got 1000000000000"),
    ],
)
def test_a_new_servers_classes_and_width_are_checked_before_it_serves(tmp_path, kw, words):
    """``--classes 1`` or ``1,1`` started a server that refused every other label and predicted 1 for all, and
    ``--classes nan,1`` (or ``inf,1``, ``1e400,1``) one that refused every update as a divergence of classes_;
    ``--n-features 999999999999`` started one whose first /learn failed it for good (MemoryError: 7.28 TiB) and
    whose /predict was an internal error. All are errors before anything is written."""
    state = tmp_path / "state"
    with pytest.raises(ValueError, match=words):
        ServedModel(state, learner="pa1", snapshot_every=0, **kw)
    assert not state.exists()


def test_the_model_file_of_a_zero_based_server_predicts_as_the_server(tmp_path, capsys):
    """GET /model of a server reading zero-based lines carries that input contract (input_spec_): ``streamlearn
    predict`` with the file reads a data file as the server read it, also when the file has no index 0 (the
    file had no contract, and predict guessed one-based from such a file: every column shifted by one)."""
    from streamlearn.cli.main import main

    m = ServedModel(tmp_path / "state", learner="ogd", n_features=D, zero_based=True, snapshot_every=0)
    m.learn(*m.parse(b"1 0:1 3:0.5\n-1 2:1 5:1\n1 0:0.5 7:1\n-1 4:1 8:1\n1 2:0.5 3:1\n", labelled=True)).result(
        timeout=30
    )
    data, _ = m.model_bytes()
    path = tmp_path / "now.slm"
    path.write_bytes(data)
    lines = tmp_path / "no-zero.svm"
    lines.write_bytes(b"1 2:1 3:0.5\n-1 4:1 7:2\n")  # no index 0: nothing tells the base
    X, _, _ = m.parse(lines.read_bytes(), labelled=False)
    expected = m.predict(X)["scores"]
    assert len(set(expected)) == 2  # the examples score differently: a shifted reading would show
    m.close()
    capsys.readouterr()
    assert main(["predict", str(path), str(lines), "--scores"]) == 0
    got = [float(v) for v in capsys.readouterr().out.split()]
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    spec = load(path).input_spec_
    assert spec["format"] == "libsvm" and spec["zero_based"] is True and spec["n_features"] == D


def test_a_continued_model_refuses_a_width_classes_or_base_that_contradicts_it(tmp_path):
    """Restarted on its state folder with another --n-features, --classes or --zero-based, the server said only
    that the model given was not used and read lines as before; now such an option is an error naming it, the
    same value (or none) continues the model, and the folder is left as it was."""
    state = tmp_path / "state"
    a = ServedModel(state, learner="ogd", n_features=D, snapshot_every=0)
    a.learn(*a.parse(b"1 1:1\n-1 2:1\n", labelled=True)).result(timeout=30)
    a.close()
    before = sorted((f.name, f.read_bytes()) for f in state.iterdir())
    for given, option in (
        ({"n_features": D + 1}, "--n-features"),
        ({"classes": [0.0, 1.0]}, "--classes"),
        ({"zero_based": True}, "--zero-based"),
    ):
        with pytest.raises(ValueError, match=f"continues a model with .*\\({option}\\) contradicts it") as err:
            ServedModel(state, learner="ogd", snapshot_every=0, **given)
        assert "\n" not in str(err.value)
    assert sorted((f.name, f.read_bytes()) for f in state.iterdir()) == before
    b = ServedModel(state, learner="ogd", n_features=D, classes=[-1, 1], zero_based=False, snapshot_every=0)
    assert b.stats["n_learned"] == 2
    b.close()


def test_a_log_left_without_its_snapshot_is_refused_not_continued(tmp_path):
    """A state folder whose snapshots were removed but whose log was kept: starting "fresh" there is an error
    naming the log (the new model's records were appended to the old log, and after a crash the restart replayed
    the old examples and skipped the acknowledged new ones). An empty log (a first start that crashed before
    its snapshot) is no obstacle."""
    state = tmp_path / "state"
    a = ServedModel(state, learner="ftrl", n_features=D, snapshot_every=0)
    a.learn(*a.parse(b"1 1:1\n-1 2:1\n1 3:1\n", labelled=True)).result(timeout=30)
    a.close(snapshot=False)
    for f in state.iterdir():
        if not f.name.startswith("wal-"):
            f.unlink()
    with pytest.raises(ValueError, match="wal-0.log.*no complete snapshot"):
        ServedModel(state, learner="ftrl", n_features=D, snapshot_every=0)
    (state / "wal-0.log").write_bytes(b"")
    b = ServedModel(state, learner="ftrl", n_features=D, snapshot_every=0)
    b.learn(*b.parse(b"-1 5:1\n", labelled=True)).result(timeout=30)
    b.close(snapshot=False)
    c = ServedModel(state, snapshot_every=0)
    assert c.stats["n_learned"] == 1
    c.close()


def test_snapshot_interval_beyond_the_timer_range_or_not_a_number(tmp_path):
    """``--snapshot-every 1e20`` (longer than a timed wait can be): the writer learns and answers (its wait
    overflowed and the thread died, every /learn then waited forever); NaN or infinity is refused up front."""
    m = ServedModel(tmp_path / "state", learner="ftrl", n_features=D, snapshot_every=1e20)
    out = m.learn(*m.parse(b"1 1:1\n", labelled=True)).result(timeout=30)
    assert out["learned"] == 1
    m.close()
    for bad in (float("nan"), float("inf"), -1.0):
        with pytest.raises(ValueError, match="snapshot_every"):
            ServedModel(tmp_path / f"s{bad}", learner="ftrl", n_features=D, snapshot_every=bad)


@pytest.mark.parametrize(
    "option",
    [
        ["--max-body-mb", "inf"],
        ["--max-body-mb", "nan"],
        ["--snapshot-every", "inf"],
        ["--max-lines", "0"],
        ["--shutdown-timeout", "inf"],
        ["--shutdown-timeout", "-1"],
    ],
)
def test_serve_limits_that_are_not_finite_are_one_line_errors(tmp_path, capsys, option):
    """``streamlearn serve --max-body-mb inf`` (a traceback) or ``nan`` (an error naming no option): the one-line
    error of the other bad limits, before the state folder is created."""
    from streamlearn.cli.main import main

    state = tmp_path / "state"
    assert main(["serve", "--learner", "ftrl", "--state-dir", str(state), "--port", "0", *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamlearn: error: ") and option[0] in err and err.count("\n") == 1, err
    assert not state.exists()


def test_a_second_server_on_the_same_state_directory_is_refused(tmp_path):
    """Two servers on one state folder (two processes) appended their records to the same log, each counting
    its own examples: at the next start one server's acknowledged examples were skipped as already learned.
    The second is refused with a one-line error naming the folder; once the first stops, the folder serves."""
    import os
    import select
    import subprocess
    import sys

    state = tmp_path / "state"
    code = (
        "import sys; from streamlearn.serve import ServedModel; "
        "m = ServedModel(sys.argv[1], learner='ftrl', n_features=4, snapshot_every=0); "
        "m.learn_text(b'1 1:1\\n').result(timeout=60); print('ready', flush=True); sys.stdin.read(); m.close()"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    first = subprocess.Popen(
        [sys.executable, "-c", code, str(state)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    try:
        assert select.select([first.stdout], [], [], 120)[0] and first.stdout.readline() == b"ready\n"
        with pytest.raises(ValueError, match=r"state directory .*state is in use by another 'streamlearn serve'"):
            ServedModel(state, snapshot_every=0)
        with pytest.raises(ValueError, match="in use by another"):  # with a model or learner too
            ServedModel(state, learner="ftrl", n_features=4, snapshot_every=0)
    finally:
        first.stdin.close()
        first.wait(timeout=60)
    m = ServedModel(state, snapshot_every=0)
    assert m.stats["n_learned"] == 1
    m.close()
    m.close()  # closing twice is harmless
    again = ServedModel(state, snapshot_every=0)  # released by close
    again.close()


@pytest.mark.parametrize("record", [0, 1])
def test_a_damaged_record_length_inside_the_log_refuses_to_start(tmp_path, record):
    """A wrong byte in the length of a record followed by others (the length now runs past the end of the file)
    was taken for a torn last record: the start dropped it and every record after it, all acknowledged, and cut
    the log there. It is damage: a one-line error naming the log, which is left as it was."""
    state = tmp_path / "state"
    m = _ftrl_three_batches(state, np.random.default_rng(5), 4)
    m.close(snapshot=False)
    wal = Path(m.wal.path)
    records, good, torn = read_records(wal)
    assert len(records) == 3 and not torn
    start = sum(16 + len(p) for _, p in records[:record])
    data = bytearray(wal.read_bytes())
    data[start + 11] ^= 0x40  # the length's high byte: 2**30 bytes more than the file holds
    wal.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=rf"wal-0.log: the record at byte {start} is damaged .*corrupted") as info:
        ServedModel(state, snapshot_every=0)
    assert "\n" not in str(info.value) and wal.read_bytes() == bytes(data)


def test_zeros_after_the_last_record_are_a_torn_tail(tmp_path):
    """Zeros after the last whole record (a file that a crash extended before its data reached the disk) hold no
    record: dropped as a torn tail, every record before them replayed (it was refused as a corrupted log)."""
    state = tmp_path / "state"
    m = _ftrl_three_batches(state, np.random.default_rng(5), 4)
    m.close(snapshot=False)
    wal = Path(m.wal.path)
    size = wal.stat().st_size
    with open(wal, "ab") as f:
        f.write(bytes(4096))
    back = ServedModel(state, snapshot_every=0)
    assert back.stats["n_learned"] == 12 and wal.stat().st_size == size
    back.close()


@pytest.mark.parametrize("classes", ["-1,1", "-1,0,1", "-2.5,3", "-1e3,1"])
def test_negative_classes_are_a_value_of_the_classes_option(classes):
    """``streamlearn serve --learner ftrl --classes -1,1`` (the default, as the help shows it) was refused: the
    command line took '-1,1' for an unknown option ("argument --classes: expected one argument")."""
    from streamlearn.cli.main import build_parser

    args = build_parser().parse_args(["serve", "--learner", "ftrl", "--state-dir", "s", "--classes", classes])
    assert args.classes == classes and args.learner == "ftrl"
    with pytest.raises(SystemExit):  # an unknown option is still one
        build_parser().parse_args(["serve", "--learner", "ftrl", "--state-dir", "s", "-x"])


def test_temporary_files_left_by_a_crash_are_removed_at_start(tmp_path):
    """A kill in the middle of a snapshot, a model upload or download left its temporary files in the state
    folder (as large as the model), and no start removed them: a server restarted after each crash filled the
    disk. The next start removes them, and only them."""
    state = tmp_path / "state"
    m = _ftrl_three_batches(state, np.random.default_rng(5), 4)
    m.close(snapshot=False)
    left = [".tmp-model-k2j4h1.slm", ".tmp-x8d7a2.slm", ".tmp-3kd9s", ".upload-a1b2.slm", ".get-c3d4.slm"]
    for name in left:
        (state / name).write_bytes(b"half a model")
    (state / "notes.txt").write_text("mine")
    before = {p.name for p in state.iterdir()} - set(left)
    back = ServedModel(state, snapshot_every=0)
    assert {p.name for p in state.iterdir()} == before and back.stats["n_learned"] == 12
    back.close()


def test_an_infinite_online_loss_is_reported_and_restarts(tmp_path):
    """A regression target of 1e200 is learned (the model stays finite), and its squared error overflows: the
    online loss is infinite. /metrics wrote it as ``inf``, which the Prometheus text format does not read (a
    scrape failed), and the next snapshot held it in its window, which the start then called damaged: the
    server did not restart. Now /metrics writes ``+Inf`` and the snapshot reads back."""
    httpx = pytest.importorskip("httpx")
    import asyncio

    from streamlearn.serve import create_app

    state = tmp_path / "state"
    m = ServedModel(state, learner="ftrl-regressor", n_features=D, snapshot_every=0)
    assert m.learn_text(b"1e200 1:1\n").result(timeout=30)["learned"] == 1

    async def scrape():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(m)), base_url="http://t") as c:
            return (await c.get("/metrics")).text

    text = asyncio.run(scrape())
    assert (
        'streamlearn_online_loss{scope="all"} +Inf' in text and 'streamlearn_online_rmse{scope="window"} +Inf' in text
    )
    assert " inf" not in text
    before = m.online_metrics()
    m.close()
    back = ServedModel(state, snapshot_every=0)
    assert back.stats["n_learned"] == 1 and back.online_metrics() == before
    back.close()


def test_a_log_line_that_cannot_be_written_does_not_stop_the_writer(tmp_path, monkeypatch):
    """The server's log lines go to standard error; when it is a closed pipe (``serve ... 2>&1 | tee log`` and
    tee died), writing one raises BrokenPipeError. Raised in the writer thread (a timed snapshot that failed,
    logged), it ended the thread: every later /learn waited for ever. A log line that cannot be written is
    dropped, and the writer goes on."""
    rng = np.random.default_rng(21)

    def closed_pipe(msg):
        raise BrokenPipeError(32, "Broken pipe")

    m = ServedModel(tmp_path / "state", learner="ftrl", n_features=D, snapshot_every=0.01, log=closed_pipe)
    _failing_save(monkeypatch)
    for _ in range(3):
        m.learn(*m.parse(_body(rng, 4), labelled=True)).result(timeout=30)
        time.sleep(0.02)  # a timed snapshot is due (and fails, and is logged) before the next batch
    assert m.stats["n_learned"] == 12 and m.failed is None
    m.close(snapshot=False)


def test_an_unforeseen_error_of_the_writer_stops_learning_instead_of_hanging(tmp_path, monkeypatch):
    """An exception that the writer thread did not expect (here from the online statistics, after the update)
    ended the thread: the request waited for ever, and so did every later /learn. It now stops learning as a
    learner failure does: 503 to the request and to the next ones, and predictions go on."""
    m = ServedModel(tmp_path / "state", learner="ftrl", n_features=D, snapshot_every=0)

    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(m, "_account", broken)
    err = m.learn_text(b"1 1:1\n").exception(timeout=30)
    assert err.status == 503 and str(err) == "the learner stopped after an error: RuntimeError: boom"
    assert m.health()["status"] == "failed" and "labels" in m.predict(m.parse(b"1:1\n", labelled=False)[0])
    with pytest.raises(BadRequest, match="stopped after an error") as info:
        m.learn_text(b"1 1:1\n")
    assert info.value.status == 503
    m.close()


def test_a_cancelled_future_does_not_stop_the_log_sync_threads(tmp_path):
    """``learn`` and ``learn_text`` return a concurrent Future, which its caller may cancel while it waits in the
    queue. Answering a cancelled future raised InvalidStateError in the log-sync thread and ended it: after two
    such requests no thread was left to fsync the log, and every later request waited for ever. A cancelled
    snapshot or model upload (POST /model cancels its own when the server stops) stopped learning."""
    m = ServedModel(tmp_path / "state", learner="ftrl", n_features=D, snapshot_every=0)
    for _ in range(3):
        with m._cv:  # the request waits in the queue, and its caller gives up
            assert m.learn_text(b"1 1:1\n").cancel()
        assert m.learn_text(b"-1 2:1\n").result(timeout=30)["learned"] == 1
    assert all(t.is_alive() for t in m._syncers)
    m.close()
    m = ServedModel(tmp_path / "other", learner="ftrl", n_features=D, snapshot_every=0)
    with m._cv:  # a snapshot or a model upload whose caller gave up: learning goes on
        assert m.snapshot().cancel()
    assert m.learn_text(b"-1 2:1\n").result(timeout=30)["learned"] == 1 and m.failed is None
    m.close()


def test_lines_ended_by_a_carriage_return_alone_are_named_as_such(tmp_path):
    """A body whose lines end with '\\r' alone (old Mac line ends) is one line to the reader, its examples run
    together: the error named a 'negative feature index' (the next line's label -1). It now says how the body
    ends its lines and what to send; a CRLF body is read as before."""
    m = ServedModel(tmp_path / "state", learner="ftrl", n_features=D, snapshot_every=0)
    err = m.learn_text(b"1 3:1\r-1 4:1\r").exception(timeout=30)
    assert str(err) == (
        "line 1: negative feature index in '-1': indices must be >= 0 (the body ends its lines with a carriage "
        "return alone: end them with \\n or \\r\\n)"
    )
    assert m.learn_text(b"1 3:1\r\n-1 4:1\r\n").result(timeout=30)["learned"] == 2
    assert "carriage" not in str(m.learn_text(b"1 3:1\r\n-1 x:1\r\n").exception(timeout=30))
    m.close()


def _zero_based_model(tmp_path, rng):
    """A model of the same width as the served one, trained on zero-based rows (its file says so)."""
    from streamlearn.cli._data import attach_spec
    from streamlearn.learners import make_learner

    model = make_learner("ftrl")
    X = rng.normal(size=(50, D))
    model.partial_fit(X, np.where(X[:, 1] - X[:, 2] > 0, 1, -1), classes=[-1, 1])
    attach_spec(model, True)
    path = tmp_path / "zero-based.slm"
    model.save(path)
    return path


def test_rows_parsed_before_the_model_was_replaced_are_never_scored_by_the_new_one(tmp_path):
    """/predict parses a request under the model's settings (index base, width), then scores it under the lock.
    A POST /model in between that changes the index base made the new model score columns shifted by one: a
    wrong answer, silently. The scores now come from rows parsed under the settings of the model that scores
    them."""
    from streamlearn.serve._core import ModelReplaced

    rng = np.random.default_rng(5)
    m = ServedModel(tmp_path / "state", learner="ftrl", n_features=D, snapshot_every=0)
    m.learn(*m.parse(_body(rng, 40), labelled=True)).result(timeout=30)
    new = _zero_based_model(tmp_path, rng)
    body = b"1:2 3:-1 7:0.5\n"
    old = m.config
    X = m.parse_many([body], labelled=False, config=old)[0]
    m.swap(str(new)).result(timeout=30)
    assert m.config["zero_based"] is True
    with pytest.raises(ModelReplaced):
        m.predict(X, old)
    with pytest.raises(ModelReplaced):
        m.try_predict(X, old)
    want = m.predict(m.parse(body, labelled=False)[0])
    m.close()

    # the app: a POST /model lands between the parse and the scores of a /predict batch
    httpx = pytest.importorskip("httpx")
    import asyncio

    from streamlearn.serve import create_app

    m = ServedModel(tmp_path / "state2", learner="ftrl", n_features=D, snapshot_every=0)
    m.learn(*m.parse(_body(np.random.default_rng(5), 40), labelled=True)).result(timeout=30)
    parse_many = m.parse_many
    swapped = []

    def parse_then_swap(*args, **kwargs):
        out = parse_many(*args, **kwargs)
        if not swapped:
            swapped.append(m.swap(str(new)).result(timeout=30))
        return out

    m.parse_many = parse_then_swap

    async def ask():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(m)), base_url="http://t") as c:
            return await c.post("/predict", content=body)

    r = asyncio.run(ask())
    m.close()
    assert swapped and r.status_code == 200, r.text
    assert r.json() == want
