"""An update that would make the served model not finite (a huge feature value, a step size that blows up) is
refused with a 422 naming the learner, and the model, the log and a restart are as if it had never been sent;
``/predict`` never answers 200 with NaN (null) scores."""

import asyncio
import json
import zipfile

import numpy as np
import pytest

from streamlearn.serve import ServedModel
from streamlearn.serve._core import BadRequest
from streamlearn.serve._wal import WriteAheadLog, read_records

httpx = pytest.importorskip("httpx")

from tests.serve._http import predictions_together_and_alone  # noqa: E402

D = 10
GOOD = [b"1 1:1 2:0.5\n-1 3:1\n", b"-1 1:0.25 4:2\n", b"1 2:1 5:-1\n"]


def _served(path, learner, **kw):
    return ServedModel(path, learner=learner, n_features=D, snapshot_every=0, scale="none", **kw)


def _meta(model, path):
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        return json.dumps(json.loads(zf.read("meta.json")), sort_keys=True)


# a step size that blows up on large (valid) values: the second row's score is not finite (the kernel's bad
# row), after the first row's update (FTRL's first row is below 1e144: a gradient times a value beyond 2**480
# is itself refused)
@pytest.mark.parametrize(
    "learner, params, bad",
    [
        ("ftrl", {"alpha": 1e200, "l2": 0.0}, b"1 1:1e100\n-1 1:1e150\n"),
        ("ogd", {"eta0": 1e200}, b"1 7:1e100 8:1e100\n-1 7:1e100\n"),
    ],
)
def test_a_diverging_update_is_refused_and_leaves_no_trace(tmp_path, learner, params, bad):
    from streamlearn.serve import create_app

    m = _served(tmp_path / "state", learner, params=params)
    app = create_app(m)

    async def run():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            first = [await c.post("/learn", content=b) for b in GOOD[:2]]
            refused = await c.post("/learn", content=bad)
            pred = await c.post("/predict", content=b"1:1 2:1\n3:1\n")
            after = await c.post("/learn", content=GOOD[2])
            return first, refused, pred, after

    first, refused, pred, after = asyncio.run(run())
    assert [r.status_code for r in first] == [200, 200]
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert "diverged" in error and "Nothing was learned" in error and "\n" not in error
    assert error.startswith("example 2 of this request: ") and "the score of this example" in error, error
    assert pred.status_code == 200 and all(np.isfinite(pred.json()["scores"]))
    assert after.status_code == 200 and after.json()["first"] == 3 and m.health()["status"] == "ok"
    # the same model as a server that never saw the refused request, in memory, in the log and after a restart
    alone = _served(tmp_path / "alone", learner, params=params)
    for body in GOOD:
        alone.learn_text(body).result(timeout=30)
    expected = _meta(alone.model, tmp_path / "a.slm")
    assert _meta(m.model, tmp_path / "m.slm") == expected
    logged = b"".join(p for path in sorted((tmp_path / "state").glob("wal-*.log")) for _, p in read_records(path)[0])
    assert bad not in logged
    again = ServedModel(tmp_path / "state", snapshot_every=0)  # without closing the first: a crash
    assert _meta(again.model, tmp_path / "r.slm") == expected and again.stats["n_learned"] == 4
    again.close(snapshot=False)
    m.close(snapshot=False)
    alone.close()


def test_a_diverging_request_in_a_group_is_refused_alone(tmp_path):
    """Queued together, the diverging request is refused and the others are learned, as one by one."""
    bodies = [GOOD[0], b"1 7:1e100\n1 7:1e100\n", GOOD[1], GOOD[2]]
    group = _served(tmp_path / "g", "ogd", params={"eta0": 1e200})
    with group._cv:  # hold the writer: the requests form one group
        futures = [group.learn_text(b) for b in bodies]
    assert isinstance(futures[1].exception(timeout=30), BadRequest) and futures[1].exception().status == 422
    assert [f.result(timeout=30)["first"] for f in futures[:1] + futures[2:]] == [0, 2, 3]
    alone = _served(tmp_path / "a", "ogd", params={"eta0": 1e200})
    for body in GOOD:
        alone.learn_text(body).result(timeout=30)
    assert _meta(group.model, tmp_path / "g.slm") == _meta(alone.model, tmp_path / "a.slm")
    group.close()
    alone.close()


def test_predict_never_answers_non_finite_scores(tmp_path):
    m = _served(tmp_path / "state", "ogd")
    m.learn_text(GOOD[0]).result(timeout=30)
    m.model.coef_[0, 0] = 1e200  # finite weights, and an input beyond their range
    X, _, _ = m.parse(b"3:1\n1:1e150\n", labelled=False)
    with pytest.raises(BadRequest, match=r"^example 2: its score is not finite") as info:
        m.predict(X)
    assert info.value.status == 422
    m.model.coef_[0, 2] = np.nan  # a model holding NaN (no update can make one now)
    with pytest.raises(BadRequest, match=r"the model cannot predict: its coef_ holds NaN") as info:
        m.predict(m.parse(b"1:1\n3:1\n", labelled=False)[0])
    assert info.value.status == 500
    m.close(snapshot=False)


def test_a_diverging_record_of_an_earlier_version_is_dropped_on_restart(tmp_path):
    """An earlier server logged a batch before learning it; when it diverged, nothing was acknowledged and
    learning stopped. A restart puts the model back as before that last record, drops it, and learns again."""
    state = tmp_path / "state"
    m = _served(state, "ogd", params={"eta0": 1e200})
    for body in GOOD[:2]:
        m.learn_text(body).result(timeout=30)
    expected = _meta(m.model, tmp_path / "m.slm")
    m.close(snapshot=False)
    (log,) = state.glob("wal-*.log")
    size = log.stat().st_size
    wal = WriteAheadLog(str(log))
    wal.append(3, b"1 7:1e100\n1 7:1e100\n")
    wal.close()
    back = ServedModel(state, snapshot_every=0)
    assert back.failed is None and back.stats["n_learned"] == 3
    assert _meta(back.model, tmp_path / "b.slm") == expected and log.stat().st_size == size
    assert back.learn_text(GOOD[2]).result(timeout=30)["first"] == 3
    back.close()


def test_a_model_file_holding_nan_is_not_served(tmp_path):
    m = _served(tmp_path / "state", "ogd")
    m.learn_text(GOOD[0]).result(timeout=30)
    m.model.coef_[0, 1] = np.inf
    m.model.save(tmp_path / "inf.slm")
    m.close(snapshot=False)
    with pytest.raises(ValueError, match=r"inf\.slm: the model's coef_ holds NaN or infinity"):
        ServedModel(tmp_path / "other", model=str(tmp_path / "inf.slm"), snapshot_every=0)


def _arrays(obj, prefix=""):
    params = obj.get_params(deep=False)
    for key, value in vars(obj).items():
        if key in params:
            continue
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            yield prefix + key, value
        elif hasattr(value, "get_params") and hasattr(value, "__dict__"):
            yield from _arrays(value, f"{prefix}{key}.")


def _row_local_learners():
    from streamlearn.learners import LEARNERS, make_learner, scaled_learner
    from streamlearn.serve._core import row_local

    out = []
    for name, spec in LEARNERS.items():
        if spec.batch:
            continue
        for average in (False, True):
            params = {"average": True} if average else {}
            try:
                model = scaled_learner(name, make_learner(name, params))
            except (TypeError, ValueError):  # no "average" parameter, or a fixed one
                continue
            if row_local(model):
                out.append(pytest.param(model, spec.task, id=f"{name}{'-averaged' if average else ''}"))
    return out


@pytest.mark.parametrize("model, task", _row_local_learners())
def test_row_local_learners_change_their_arrays_at_the_batch_features_only(model, task):
    """What lets the server check only the batch's slices of a large array for NaN or infinity (``row_local``):
    a second batch on other features leaves every array as it was elsewhere along the feature axis (an averaged
    learner's ``coef_`` is the running weights minus the sum over ``t_`` there)."""
    import scipy.sparse as sp

    d, rng = 700, np.random.default_rng(0)

    def batch(lo, hi, n):
        ids = np.concatenate([np.sort(rng.choice(np.arange(lo, hi), 4, replace=False)) for _ in range(n)])
        X = sp.csr_matrix((rng.normal(size=4 * n), ids, np.arange(n + 1) * 4), shape=(n, d))
        return X, np.where(rng.random(n) < 0.5, 1.0, -1.0)

    classes = [-1.0, 1.0] if task == "classification" else None
    model.partial_fit_scores(*batch(0, 600, 40), classes=classes)
    before = {key: value.copy() for key, value in _arrays(model)}
    X, y = batch(600, 650, 5)
    model.partial_fit_scores(X, y, classes=classes)
    off = np.setdiff1d(np.arange(d), X.indices)  # not slot d: the intercept (always checked)
    learner = getattr(model, "learner_", model)
    checked = 0
    for key, value in _arrays(model):
        axes = [a for a, n in enumerate(value.shape) if n in (d, d + 1)]
        assert len(axes) <= 1 and value.shape == before[key].shape, key
        if not axes:
            continue
        keep = off[off < value.shape[axes[0]]]
        now, was = np.take(value, keep, axis=axes[0]), np.take(before[key], keep, axis=axes[0])
        if key.endswith("coef_") and getattr(learner, "average", False) and not key.endswith("running_coef_"):
            running = np.take(learner.running_coef_ - learner.average_sum_ / learner.t_, keep, axis=axes[0])
            assert np.array_equal(now, running), key
        else:
            assert np.array_equal(now, was), key
        checked += 1
    assert checked >= 1


def test_concurrent_predictions_fail_alone_when_an_example_overflows(tmp_path):
    """Predictions answered together: a request with an example whose score overflows gets its 422 naming its own
    example, and the others their scores, as alone."""
    from streamlearn.serve import create_app

    m = _served(tmp_path / "state", "ogd")
    m.learn_text(GOOD[0]).result(timeout=30)
    m.model.coef_[0, 0] = 1e200  # finite weights; 1e150 times it is not
    app = create_app(m)
    bodies = [b"1:1 2:1\n", b"3:1\n1:1e150\n", b"2:0.5\n", b"# no example\n"]

    together, alone = predictions_together_and_alone(app, bodies)
    assert [r.status_code for r in together] == [r.status_code for r in alone] == [200, 422, 200, 400]
    assert [r.json() for r in together] == [r.json() for r in alone]
    assert together[1].json()["error"].startswith("example 2: its score is not finite")
    m.close(snapshot=False)


def test_a_feature_value_the_learners_do_not_take_is_a_bad_request_naming_the_example(tmp_path):
    m = _served(tmp_path / "state", "ftrl")
    m.learn_text(GOOD[0]).result(timeout=30)
    for labelled, body in ((True, b"1 2:1\n-1 1:1e300\n"), (False, b"2:1\n1:-4e150\n")):
        with pytest.raises(
            BadRequest,
            match=r"^example 2: a feature value of -?[14]e\+(300|150) is too large: expected values below 2\*\*500",
        ) as info:
            m.parse(body, labelled=labelled)
        assert info.value.status == 400
    before = _meta(m.model, tmp_path / "b.slm")
    refused = m.learn_text(b"1 1:1e300\n").exception(timeout=30)
    assert isinstance(refused, BadRequest) and refused.status == 400 and m.failed is None
    assert _meta(m.model, tmp_path / "a.slm") == before
    assert m.learn_text(GOOD[1]).result(timeout=30)["first"] == 2
    m.close(snapshot=False)
