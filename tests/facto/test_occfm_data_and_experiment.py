"""load_movielens (a fake ml-100k directory, and the shared copy when present) and the occfm experiment."""

import json
import lzma

import numpy as np
import pytest

from streamlearn.cli.main import main
from streamlearn.datasets import load_movielens, write_svmlight_stream  # noqa: F401
from streamlearn.experiments import occfm as exp
from tests.conftest import SHARED_DATA

SHARED = SHARED_DATA
ML100K = SHARED / "movielens-100k" / "ml-100k"


def _fake_ml100k(tmp_path):
    d = tmp_path / "ml-100k"
    d.mkdir()
    # user, item, rating, timestamp (file order is by user; timestamps are not)
    (d / "u1.base").write_text("1\t5\t4\t300\n1\t7\t2\t100\n2\t5\t5\t200\n943\t1682\t1\t50\n")
    with lzma.open(d / "u1.test.xz", "wt") as f:  # compressed files are read too
        f.write("2\t7\t3\t10\n")
    (d / "u.user").write_text("1|24|M|technician|85711\n2|53|F|other|94043\n943|17|M|student|77841\n")
    genres = ["0"] * 19
    item = lambda i, g: f"{i}|Film {i} (1995)|01-Jan-1995||http://x|" + "|".join(g)  # noqa: E731
    g5, g7 = list(genres), list(genres)
    g5[1] = g5[4] = "1"
    g7[8] = "1"
    (d / "u.item").write_text("\n".join([item(5, g5), item(7, g7), item(1682, genres)]) + "\n", encoding="latin-1")
    return d


def test_load_movielens_on_a_fake_directory(tmp_path):
    d = _fake_ml100k(tmp_path)
    X, y, Xt, yt = load_movielens(d)
    assert X.shape == (4, 2625) and Xt.shape == (1, 2625)
    np.testing.assert_array_equal(y, [1.0, 2.0, 5.0, 4.0])  # timestamp order: 50, 100, 200, 300
    assert X[0].indices.tolist() == [942, 943 + 1681]  # user 943, item 1682
    assert X[3].indices.tolist() == [0, 943 + 4]  # user 1, item 5
    assert np.all(X.data == 1.0) and np.all(np.diff(X.indptr) == 2)
    Xf, yf, _, _ = load_movielens(d, order="file")
    np.testing.assert_array_equal(yf, [4.0, 2.0, 5.0, 1.0])
    Xa, _, _, _ = load_movielens(d, attributes=True)
    assert Xa.shape == (4, 2625 + 7 + 2 + 21 + 19)
    row = Xa[3].indices.tolist()  # user 1 (24, M, technician), item 5
    base = 2625
    assert row == [0, 947, base + 1, base + 7, base + 9 + 19, base + 30 + 1, base + 30 + 4]


def test_load_movielens_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        load_movielens(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="u1.base"):
        load_movielens(tmp_path)
    with pytest.raises(ValueError, match="split must be one of"):
        load_movielens(tmp_path, split="u9")
    d = _fake_ml100k(tmp_path)
    (d / "u1.base").write_text("1\t1700\t4\t300\n")
    with pytest.raises(ValueError, match=r"item ids must be in \[1, 1682\]"):
        load_movielens(d)


@pytest.mark.skipif(not (ML100K / "u1.base.xz").exists(), reason=f"MovieLens 100K not found in {ML100K}")
def test_load_movielens_shared_copy():
    X, y, Xt, yt = load_movielens(ML100K, split="u1")
    assert X.shape == (80000, 2625) and Xt.shape == (20000, 2625)
    assert np.all(np.diff(X.indptr) == 2) and set(np.unique(y)) == {1.0, 2.0, 3.0, 4.0, 5.0}
    assert abs(y.mean() - 3.52835) < 1e-9  # awk mean of column 3 of u1.base


def _svmlight(path, X, y):
    with open(path, "w") as f:
        for xi, yi in zip(X, y):
            f.write(f"{yi:g} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(xi) if v) + "\n")


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_occfm_experiment_runs_and_reports(tmp_path, capsys, task):
    rng = np.random.default_rng(0)
    X = (rng.random((300, 12)) < 0.3).astype(float)
    y = 2.0 + X[:, 0] * X[:, 1] - X[:, 2] + 0.1 * rng.normal(size=300)
    if task == "classification":
        y = np.where(y > np.median(y), 1, -1)
    data = tmp_path / "d.svm"
    _svmlight(data, X, y)
    md, png = tmp_path / "t.md", tmp_path / "c.png"
    learners = "fm,occfm-scalable,occfm-exact,ccfm-ogd" + (",linear" if task == "classification" else "")
    assert (
        main(
            [
                "experiment",
                "occfm",
                "--data",
                str(data),
                "--quick",
                "--budget",
                "0.5",
                "--learners",
                learners,
                "--json",
                "--markdown",
                str(md),
                "--plot",
                str(png),
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    metric, online = ("test_rmse", "online_rmse") if task == "regression" else ("test_accuracy", "online_error_rate")
    names = {r["learner"] for r in rows}
    assert {"fm", "occfm-scalable", "occfm-exact", "ccfm-ogd"} <= names
    for r in rows:
        assert {
            "learner",
            "params",
            "n_train",
            metric,
            online,
            "seconds",
            "us_per_example",
            "nan_predictions",
            "best",
        } <= set(r), r
        assert r["nan_predictions"] == 0 and np.isfinite(r[metric])
    assert all(r["n_train"] == 240 for r in rows if r["learner"] in ("fm", "occfm-scalable"))
    assert "OCCFM" in md.read_text() and png.read_bytes()[:4] == b"\x89PNG"


def test_summary_compares_best_rows():
    rows = [
        {"learner": "fm", "test_rmse": 1.0, "best": True, "n_train": 10, "us_per_example": 1.0},
        {"learner": "occfm-scalable", "test_rmse": 0.9, "best": True, "n_train": 10, "us_per_example": 5.0},
        {"learner": "occfm-exact", "test_rmse": 0.5, "best": True, "n_train": 3, "us_per_example": 50.0},
    ]
    out = exp.summary(rows, regression=True)
    # occfm-exact saw only 3 of 10 examples: it does not count for the claim
    assert out["occfm_vs_fm"] == {"holds": True, "occfm": 0.9, "fm": 1.0}
    rows[1]["test_rmse"] = 1.1
    assert exp.summary(rows, regression=True)["occfm_vs_fm"]["holds"] is False


def test_batch_frank_wolfe_ceiling_fits_a_model_inside_the_ball():
    # y = 1/2 xhat^T C* xhat with ||C*||_tr = 3 <= delta: many batch passes drive the training RMSE towards 0,
    # far below the constant predictor; the test rows are scored with the same model
    rng = np.random.default_rng(1)
    X = (rng.random((400, 8)) < 0.4).astype(float)
    q1, q2 = rng.normal(size=9), rng.normal(size=9)
    C = 2.0 * np.outer(q1, q1) / (q1 @ q1) - np.outer(q2, q2) / (q2 @ q2)
    Xh = np.hstack([X, np.ones((400, 1))])
    y = 0.5 * np.einsum("ij,jk,ik->i", Xh, C, Xh)
    import scipy.sparse as sp

    row, _ = exp._run_batch_fw(sp.csr_matrix(X[:300]), y[:300], sp.csr_matrix(X[300:]), y[300:], 4.0, 300)
    assert row["online"] < 0.1 * y[:300].std() and row["test"] < 0.1 * y[300:].std(), row
    assert row["nan_predictions"] == 0


def test_occfm_experiment_options(tmp_path, capsys):
    rng = np.random.default_rng(2)
    X = (rng.random((200, 10)) < 0.3).astype(float)
    y = 1.0 + X[:, 0] - X[:, 1] * X[:, 2]
    data = tmp_path / "d.svm"
    _svmlight(data, X, y)
    experiment = ["experiment", "occfm", "--data", str(data), "--occfm-eta-abs", "0.1", "--json"]
    options = ["--occfm-deltas", "5,7", "--occfm-steps", "invsqrt,fw", "--occfm-rank", "3", "--batch-fw-iters", "5"]
    assert main([*experiment, "--learners", "occfm-scalable,ccfm-batch-fw", *options]) == 0
    rows = json.loads(capsys.readouterr().out)
    occ = [r["params"] for r in rows if r["learner"] == "occfm-scalable"]
    assert [(p["delta"], p["eta"], p.get("step_schedule", "invsqrt"), p["rank"]) for p in occ] == [
        (5.0, 0.1, "invsqrt", 3),
        (7.0, 0.1, "invsqrt", 3),
        (5.0, 0.1, "fw", 3),
        (7.0, 0.1, "fw", 3),
    ]
    rmse = [r["test_rmse"] for r in rows if r["learner"] == "occfm-scalable"]
    assert main([*experiment, "--learners", "occfm-scalable", "--occfm-deltas", "5", "--occfm-center"]) == 0
    (c,) = json.loads(capsys.readouterr().out)
    train = np.random.default_rng(0).permutation(200)[:160]  # the seeded 80/20 split
    assert c["params"]["center"] == pytest.approx(y[train].mean(), abs=1e-4) and c["test_rmse"] != rmse[0]
    fw = [r for r in rows if r["learner"] == "ccfm-batch-fw"]
    assert len(fw) == 1 and fw[0]["params"] == {"delta": 300.0, "passes": 5} and np.isfinite(fw[0]["test_rmse"])
