"""Progressive validation: agreement with per-example loops, chunking invariance, checkpoints, losses."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin, clone

from streamlearn.datasets import load_a9a
from streamlearn.evaluation import iter_array_chunks, iter_progressive_validation, progressive_validation
from streamlearn.linear_model import (
    OGDClassifier,
    OGDRegressor,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    Perceptron,
)
from streamlearn.losses import loss_value

VOLATILE = {"seconds"}  # the only checkpoint field allowed to differ between identical runs


@pytest.fixture(scope="module")
def a9a():
    X, y, _, _ = load_a9a()
    return X, y


def _tiny_classification(n=60, d=4, k=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(size=(n, d)) < 0.3] = 0.0  # some sparsity, and all-zero rows now and then
    W = rng.normal(size=(k, d))
    y = np.argmax(X @ W.T + 0.5 * rng.normal(size=(n, k)), axis=1) if k > 2 else np.where(X @ W[0] > 0, 1, -1)
    if k > 2:
        y = np.array(["a", "b", "c", "d", "e"][:k])[y]
    return X, y


def _tiny_regression(n=60, d=4, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) + 1.0


def _targets(classes, y):
    """-1/+1 targets written independently of streamlearn.evaluation (one-vs-rest matrix when K > 2)."""
    if len(classes) == 2:
        return np.array([1.0 if v == classes[1] else -1.0 for v in y])
    return np.array([[1.0 if v == c else -1.0 for c in classes] for v in y])


def _strip(rows):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


# --------------------------------------------------------------------------------------------------------
# agreement with per-example loops
TINY_LEARNERS = [
    (OGDClassifier(loss="logistic", eta0=0.3), "clf", 2),
    (OGDClassifier(loss="hinge"), "clf", 2),
    (Perceptron(radius=3.0), "clf", 2),
    (PassiveAggressiveClassifier(C=0.5), "clf", 2),
    (OGDClassifier(loss="logistic"), "clf", 3),
    (PassiveAggressiveClassifier(variant="pa2"), "clf", 4),
    (OGDRegressor(eta0=0.05), "reg", 0),
    (OGDRegressor(loss="epsilon_insensitive", epsilon=0.4, eta0=0.05), "reg", 0),
    (PassiveAggressiveRegressor(epsilon=0.2), "reg", 0),
]


@pytest.mark.parametrize("learner, task, k", TINY_LEARNERS, ids=lambda v: repr(v)[:40] if hasattr(v, "fit") else "")
def test_matches_independent_per_example_loop(learner, task, k):
    """The manual river-style loop: score with decision_function BEFORE partial_fit, one example at a time."""
    X, y = _tiny_classification(k=k) if task == "clf" else _tiny_regression()
    classes = np.unique(y) if task == "clf" else None
    loss = learner._progressive_loss
    param = getattr(learner, "epsilon", 0.0) if loss == "epsilon_insensitive" else 0.0
    manual = clone(learner)
    n_out = 1 if task == "reg" or k == 2 else k
    rows, mistakes, total_loss, sq, last = [], 0, 0.0, 0.0, (0, 0.0)
    for i in range(X.shape[0]):
        # the model BEFORE this example; every streamlearn learner starts from w = 0, b = 0
        score = manual.decision_function if task == "clf" else manual.predict
        z = np.asarray(score(X[i : i + 1])).reshape(-1) if i else np.zeros(n_out)
        if task == "clf":
            label = (classes[1] if z[0] >= 0 else classes[0]) if n_out == 1 else classes[np.argmax(z)]
            mistakes += int(label != y[i])
            t = _targets(classes, y[i : i + 1])[0]
            total_loss += float(np.mean(loss_value(loss, t, z[0] if n_out == 1 else z, param)))
        else:
            total_loss += float(loss_value(loss, y[i], z[0], param))
            sq += float((z[0] - y[i]) ** 2)
        manual.partial_fit(X[i : i + 1], y[i : i + 1], **({"classes": classes} if task == "clf" else {}))
        n = i + 1
        if n & (n - 1) == 0 or n == X.shape[0]:
            rows.append((n, total_loss / n, (total_loss - last[1]) / (n - last[0]), mistakes, sq))
            last = (n, total_loss)

    pv = clone(learner)
    res = progressive_validation(pv, (X, y), classes=classes, chunk_size=7)
    got = [
        (
            r["n_examples"],
            r["average_loss"],
            r["since_last_loss"],
            r.get("n_mistakes", 0),
            r["rmse"] ** 2 * r["n_examples"] if task == "reg" else 0.0,
        )
        for r in res.checkpoints
    ]
    want = [(r[0], r[1], r[2], r[3] if task == "clf" else 0, r[4] if task == "reg" else 0.0) for r in rows]
    assert [g[0] for g in got] == [w[0] for w in want]
    np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float), rtol=1e-10, atol=1e-12)
    if task == "clf":
        assert res.online_error_rate == mistakes / X.shape[0] and res.online_rmse is None
    else:
        assert res.online_rmse == pytest.approx(math.sqrt(sq / X.shape[0]), rel=1e-10)
        assert res.online_error_rate is None
    assert res.average_loss == pytest.approx(total_loss / X.shape[0], rel=1e-10)
    # the learner that ran progressive validation ends where the manual one does
    np.testing.assert_allclose(pv.coef_, manual.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(pv.intercept_, manual.intercept_, rtol=1e-12, atol=1e-14)


def test_matches_plain_loop_on_a9a(a9a):
    """On the full a9a: every checkpoint equals a plain Python loop over the pre-update scores."""
    X, y = a9a
    scores = OGDClassifier().partial_fit_scores(X, y, classes=[-1, 1])
    rows = list(iter_progressive_validation(OGDClassifier(), (X, y), classes=[-1, 1], chunk_size=4096))
    total, mistakes, k, last = 0.0, 0, 0, (0, 0.0, 0)
    for i in range(X.shape[0]):
        m = y[i] * scores[i]
        total += math.log1p(math.exp(-m)) if m >= 0 else -m + math.log1p(math.exp(m))
        mistakes += (1.0 if scores[i] >= 0 else -1.0) != y[i]
        n = i + 1
        if n == rows[k]["n_examples"]:
            r = rows[k]
            assert r["n_mistakes"] == mistakes and r["error_rate"] == mistakes / n
            assert r["since_last_error_rate"] == (mistakes - last[2]) / (n - last[0])
            assert r["average_loss"] == pytest.approx(total / n, rel=1e-12)
            assert r["since_last_loss"] == pytest.approx((total - last[1]) / (n - last[0]), rel=1e-9)
            assert r["label"] == y[i] and r["prediction"] == (1 if scores[i] >= 0 else -1)
            last, k = (n, total, mistakes), k + 1
    assert k == len(rows) == 16 and rows[-1]["n_examples"] == 32561


# --------------------------------------------------------------------------------------------------------
# chunking invariance
def test_chunking_invariance_bitwise(a9a):
    X, y = a9a
    X, y = X[:1200], y[:1200]
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=1200)
    results = []
    for size in (1, 7, 1000, 1200):
        stream = iter_array_chunks(X, y, w, chunk_size=size)
        results.append(
            progressive_validation(PassiveAggressiveClassifier(C=0.1), stream, classes=[-1, 1], curve_points=50)
        )
    base = results[0]
    for res in results[1:]:
        assert _strip(res.checkpoints) == _strip(base.checkpoints)
        for key in base.curve:
            np.testing.assert_array_equal(res.curve[key], base.curve[key])
        assert (res.average_loss, res.online_error_rate, res.sum_weights) == (
            base.average_loss,
            base.online_error_rate,
            base.sum_weights,
        )
    assert base.sum_weights == pytest.approx(w.sum(), rel=1e-12)
    assert [r["n_examples"] for r in base.checkpoints][-2:] == [1024, 1200]


def test_chunking_invariance_full_a9a_and_stream_forms(a9a):
    X, y = a9a
    ref = progressive_validation(OGDClassifier(), (X, y), classes=[-1, 1], chunk_size=X.shape[0])
    chunks = list(iter_array_chunks(X, y, chunk_size=1000))
    chunks.insert(3, (X[:0], y[:0]))  # an empty chunk in the middle is skipped
    dense_chunks = [(c[0].toarray(), c[1]) for c in iter_array_chunks(X, y, chunk_size=7001)]
    forms = [(X, y), [X, y], chunks, iter(chunks), dense_chunks]
    for stream in forms:
        res = progressive_validation(OGDClassifier(), stream, classes=[-1, 1], chunk_size=97)
        assert _strip(res.checkpoints) == _strip(ref.checkpoints)
        assert res.cumulative_loss == ref.cumulative_loss


# --------------------------------------------------------------------------------------------------------
# checkpoints
@pytest.mark.parametrize(
    "n, checkpoints, expected",
    [
        (100, "doubling", [1, 2, 4, 8, 16, 32, 64, 100]),
        (64, "doubling", [1, 2, 4, 8, 16, 32, 64]),
        (1, "doubling", [1]),
        (100, 25, [25, 50, 75, 100]),
        (100, 30, [30, 60, 90, 100]),
        (100, [50, 3, 1000, 3], [3, 50, 100]),
        (100, None, [100]),
    ],
)
def test_checkpoint_counts(n, checkpoints, expected):
    X, y = _tiny_classification(n=n)
    if n == 1:
        X, y = X[:1], np.array([1])
    for chunk_size in (1, 4, 9, 1000):  # checkpoints inside chunks and on chunk boundaries
        counts = [
            r["n_examples"]
            for r in iter_progressive_validation(
                Perceptron(), (X, y), classes=[-1, 1], checkpoints=checkpoints, chunk_size=chunk_size
            )
        ]
        assert counts == expected, chunk_size


def test_since_last_telescopes_and_regression_fields():
    X, y = _tiny_regression(n=1000)
    rows = list(iter_progressive_validation(OGDRegressor(eta0=0.02), (X, y), chunk_size=33))
    prev_n, total, sq = 0, 0.0, 0.0
    for r in rows:
        dn = r["n_examples"] - prev_n
        total += r["since_last_loss"] * dn
        sq += r["since_last_rmse"] ** 2 * dn
        assert r["cumulative_loss"] == pytest.approx(total, rel=1e-9)
        assert r["rmse"] == pytest.approx(math.sqrt(sq / r["n_examples"]), rel=1e-9)
        assert "error_rate" not in r and "n_mistakes" not in r
        prev_n = r["n_examples"]


# --------------------------------------------------------------------------------------------------------
# the loss is streamlearn.losses' loss of the learner
@pytest.mark.parametrize("learner, task, k", TINY_LEARNERS, ids=lambda v: repr(v)[:40] if hasattr(v, "fit") else "")
def test_loss_is_the_learners_loss(learner, task, k):
    X, y = _tiny_classification(n=300, k=k) if task == "clf" else _tiny_regression(n=300)
    classes = np.unique(y) if task == "clf" else None
    scores = clone(learner).partial_fit_scores(X, y, **({"classes": classes} if task == "clf" else {}))
    target = _targets(classes, y) if task == "clf" else y
    param = learner.epsilon if learner._progressive_loss == "epsilon_insensitive" else 0.0
    per_example = loss_value(learner._progressive_loss, target, scores, param)
    if per_example.ndim == 2:  # K > 2: the mean of the K one-vs-rest losses
        per_example = per_example.mean(axis=1)
    res = progressive_validation(clone(learner), (X, y), classes=classes)
    assert res.loss == learner._progressive_loss
    assert res.average_loss == pytest.approx(per_example.mean(), rel=1e-12)
    if param:  # the epsilon of the learner is used, not 0
        assert res.average_loss < loss_value(res.loss, target, scores, 0.0).mean() - 1e-3


# --------------------------------------------------------------------------------------------------------
# curve, table, plot, progress
def test_curve_is_bounded_even_spaced_and_exact(a9a):
    X, y = a9a
    scores = PassiveAggressiveClassifier().partial_fit_scores(X, y, classes=[-1, 1])
    cum_err = np.cumsum(np.where(scores >= 0, 1, -1) != y)
    res = progressive_validation(
        PassiveAggressiveClassifier(), iter_array_chunks(X, y, chunk_size=100), classes=[-1, 1], curve_points=64
    )
    n = res.curve["n_examples"]
    assert 32 <= n.shape[0] <= 65 and n[-1] == X.shape[0]
    assert np.unique(np.diff(n[:-1])).shape[0] == 1  # evenly spaced before the final point
    np.testing.assert_array_equal(res.curve["error_rate"], cum_err[n - 1] / n)
    assert res.curve["average_loss"][-1] == res.average_loss


def test_format_table_and_plot(tmp_path, a9a):
    X, y = a9a
    res = progressive_validation(OGDClassifier(), (X[:5000], y[:5000]), classes=[-1, 1])
    lines = res.format_table().splitlines()
    assert lines[0].split()[:3] == ["average", "since", "online"]
    body = lines[2 : 2 + len(res.checkpoints)]
    assert [int(line.split()[4]) for line in body] == [r["n_examples"] for r in res.checkpoints]
    assert len({len(line) for line in body}) <= 2  # aligned columns
    assert f"online error rate = {res.online_error_rate:.6f}" in res.format_table()
    path = res.plot(tmp_path / "sub" / "curve.png")
    assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 5000
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    assert res.plot(ax, logx=True) is ax
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), res.curve["error_rate"])
    with pytest.raises(TypeError, match="path_or_ax"):
        res.plot(3)
    d = res.to_dict()
    import json

    assert json.loads(json.dumps(d))["n_examples"] == 5000


def test_progress_bar_does_not_change_results(a9a):
    X, y = a9a
    a = progressive_validation(OGDClassifier(), (X[:3000], y[:3000]), classes=[-1, 1], progress=True, chunk_size=500)
    b = progressive_validation(OGDClassifier(), (X[:3000], y[:3000]), classes=[-1, 1])
    assert _strip(a.checkpoints) == _strip(b.checkpoints)
    assert a.examples_per_second > 0 and a.seconds > 0


# --------------------------------------------------------------------------------------------------------
# generic contract (no special-casing of learner classes) and errors
class RunningMeanRegressor(RegressorMixin, BaseEstimator):
    """A learner outside streamlearn.linear_model: predicts the mean of the targets seen so far."""

    _progressive_loss = "squared"

    def partial_fit_scores(self, X, y, classes=None, sample_weight=None):
        y = np.asarray(y, dtype=float)
        s, n = getattr(self, "sum_", 0.0), getattr(self, "n_", 0)
        seen = np.concatenate(([s], s + np.cumsum(y)))[:-1]
        counts = n + np.arange(y.shape[0])
        self.sum_, self.n_ = s + y.sum(), n + y.shape[0]
        return np.divide(seen, counts, out=np.zeros_like(seen), where=counts > 0)

    def scores_to_labels(self, scores):
        return scores

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        self.partial_fit_scores(X, y)
        return self


def test_any_learner_with_the_contract():
    y = np.array([2.0, 4.0, 6.0, 8.0])
    res = progressive_validation(RunningMeanRegressor(), (np.zeros((4, 1)), y), chunk_size=3)
    # pre-update predictions 0, 2, 3, 4 -> squared errors 4, 4, 9, 16
    assert res.cumulative_loss == 33.0 and res.online_rmse == pytest.approx(math.sqrt(33 / 4))
    with pytest.raises(FloatingPointError, match="not finite at example 1"):
        progressive_validation(RunningMeanRegressor(), (np.zeros((3, 1)), np.array([1e300, 1.0, 1.0])))


def test_errors():
    X, y = _tiny_classification(n=20)
    with pytest.raises(TypeError, match="online-learner contract.*lacks partial_fit_scores"):
        progressive_validation(BaseEstimator(), (X, y))
    with pytest.raises(ValueError, match="chunk 1 of the stream must be a tuple"):
        progressive_validation(Perceptron(), [(X, y), (X, y, None, 1)])
    with pytest.raises(ValueError, match="no examples"):
        progressive_validation(Perceptron(), [], classes=[-1, 1])
    with pytest.raises(ValueError, match="first chunk of the stream holds only the labels \\[1\\]"):
        progressive_validation(Perceptron(), [(X[:1], np.array([1])), (X, y)])
    with pytest.raises(ValueError, match="checkpoints must be"):
        iter_progressive_validation(Perceptron(), (X, y), checkpoints="linear")
    with pytest.raises(ValueError, match="checkpoints must be example counts >= 1"):
        iter_progressive_validation(Perceptron(), (X, y), checkpoints=[0, 5])
    with pytest.raises(ValueError, match="chunk_size must be an int"):
        iter_progressive_validation(Perceptron(), (X, y), chunk_size=0)
    with pytest.raises(ValueError, match="curve_points"):
        progressive_validation(Perceptron(), (X, y), curve_points=1)
    with pytest.raises(ValueError, match="y of chunk 0 has 3 entries but X of chunk 0 has 20 rows"):
        progressive_validation(Perceptron(), [(X, y[:3])], classes=[-1, 1])
    with pytest.raises(TypeError, match="stream must be an iterable"):
        progressive_validation(Perceptron(), 5)
    with pytest.raises(ValueError, match=r"labels \[7\]"):  # a label first seen after the classes were fixed
        progressive_validation(Perceptron(), [(X, y), (X[:2], np.array([7, 1]))])


def test_sparse_int64_indices_and_weights(a9a):
    X, y = a9a
    X = X[:2000].copy()
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    w = np.zeros(2000)
    w[::2] = 1.0
    learner = OGDClassifier()
    res = progressive_validation(learner, (X, y[:2000], w), classes=[-1, 1], chunk_size=300)
    ref = progressive_validation(OGDClassifier(), (sp.csr_matrix(X.toarray()), y[:2000], w), classes=[-1, 1])
    assert _strip(res.checkpoints) == _strip(ref.checkpoints)
    # the weights reach the learner: same model as one weighted partial_fit
    direct = OGDClassifier().partial_fit(X, y[:2000], classes=[-1, 1], sample_weight=w)
    np.testing.assert_array_equal(learner.coef_, direct.coef_)
    assert not np.array_equal(direct.coef_, OGDClassifier().partial_fit(X, y[:2000], classes=[-1, 1]).coef_)
    assert res.sum_weights == 1000.0 and res.n_examples == 2000  # n_examples counts the rows of weight 0 too


def test_averages_are_weighted_by_the_sample_weights():
    # losses and mistakes count with their importance weights (as in Vowpal Wabbit): an example of weight 0
    # changes neither the learner nor the averages, so half the rows at weight 0 give the figures of the
    # other half alone
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 4))
    y = np.where(X @ [1.0, -1.0, 0.5, 0.0] + 0.5 * rng.standard_normal(200) > 0, 1, -1)
    w = np.tile([1.0, 0.0], 100)
    weighted = progressive_validation(OGDClassifier(), (X, y, w), classes=[-1, 1], chunk_size=7)
    alone = progressive_validation(OGDClassifier(), (X[::2], y[::2]), classes=[-1, 1])
    assert weighted.n_examples == 200 and weighted.sum_weights == 100.0
    assert weighted.average_loss == pytest.approx(alone.average_loss, rel=1e-12)
    assert weighted.online_error_rate == pytest.approx(alone.online_error_rate, rel=1e-12)
    assert weighted.n_mistakes == alone.n_mistakes


@pytest.mark.parametrize("learner", [OGDClassifier(), OGDRegressor()], ids=["classifier", "regressor"])
def test_a_stream_of_weight_zero_is_an_error_not_nan(learner):
    # weighted averages over a total weight of 0 are undefined: one error, not NaN figures
    X = np.random.default_rng(0).standard_normal((30, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(ValueError, match="all 30 examples of the stream have sample weight 0"):
        progressive_validation(clone(learner), [(X[:10], y[:10], np.zeros(10)), (X[10:], y[10:], np.zeros(20))])


@pytest.mark.parametrize("bad", ["width", "label"])
def test_a_refused_chunk_is_named_by_its_place_in_the_stream(bad):
    """A chunk the learner refuses as a whole (another width, a label outside classes) is named with the
    examples it holds: the message was the learner's alone, with no place in a stream of thousands of chunks."""
    rng = np.random.default_rng(3)

    def stream():
        for k in range(5):
            X, y = rng.random((10, 6 if bad == "width" and k == 3 else 5)), rng.integers(0, 2, 10)
            if bad == "label" and k == 3:
                y[4] = 7
            yield X, y

    with pytest.raises(ValueError, match=r"^chunk 3 of the stream \(examples 30 to 39, counted from 0\): ") as err:
        progressive_validation(OGDClassifier(), stream(), classes=[0, 1])
    assert ("features" if bad == "width" else "not in classes") in str(err.value)
