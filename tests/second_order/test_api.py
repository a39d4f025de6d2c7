"""SketchedOnlineNewton / OnlineNewtonStep parameter errors, and the rfd-table2 experiment's JSON contract."""

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from streamlearn.second_order import FULL_ON_MAX_FEATURES, AdaGrad, OnlineNewtonStep, SketchedOnlineNewton


def test_full_on_refuses_large_d():
    X = np.zeros((2, FULL_ON_MAX_FEATURES + 1))
    with pytest.raises(ValueError, match="FULL_ON_MAX_FEATURES"):
        OnlineNewtonStep().partial_fit(X, [-1, 1], classes=[-1, 1])


def test_full_on_limit_names_the_features_of_x_with_the_safeguard():
    # safeguard="maxabs" appends a constant feature: the limit counts X's columns, and so does the message
    X = np.zeros((2, FULL_ON_MAX_FEATURES + 1))
    with pytest.raises(ValueError, match=f"n_features={FULL_ON_MAX_FEATURES + 1} exceeds"):
        OnlineNewtonStep(safeguard="maxabs").partial_fit(X, [-1, 1], classes=[-1, 1])


def test_alpha0_zero_needs_rfd():
    with pytest.raises(ValueError, match="alpha0=0 needs sketch='rfd'"):
        SketchedOnlineNewton(sketch="fd", alpha0=0.0).partial_fit(np.eye(2), [-1, 1], classes=[-1, 1])


def test_rfd0_alpha_grows_from_zero():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 6))
    y = np.where(X[:, 0] > 0, 1, -1)
    est = SketchedOnlineNewton(sketch="rfd", ell=3, alpha0=0.0).partial_fit(X, y, classes=[-1, 1])
    assert est.alpha_[0] > 0.0  # shrinks moved alpha off 0: the alpha = 0 phase ended
    assert est.score(X, y) > 0.9


def test_rfd_table2_json(tmp_path, cli_json):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 5))
    y = np.where(X @ [1.0, -1.0, 0.5, 0.0, 0.2] > 0, 1, -1)
    path = tmp_path / "toy.svm"
    dump_svmlight_file(X, y, str(path))
    png = tmp_path / "t2.png"

    def table2(*options):
        return cli_json("experiment", "rfd-table2", "--data", str(path), "--ells", "2", "--json", *options)

    rows = table2("--splits", "2", "--methods", "adagrad,rfd,rfd0", "--alphas", "0.1,10", "--plot", str(png))
    assert [(r["method"], r["ell"]) for r in rows] == [("adagrad", None), ("rfd", 2), ("rfd0", 2)]
    for r in rows:
        assert {"method", "ell", "best_alpha0", "test_accuracy", "paper_accuracy", "seconds_per_example"} <= set(r)
        assert r["test_accuracy"] == max(r["accuracy_by_alpha0"].values())
        assert r["test_accuracy"] > 70.0
        # each split's own best alpha0 (the paper's statistic per split) can only do better than one for all
        assert r["test_accuracy_best_per_split"] >= r["test_accuracy"]
        assert len(r["accuracy_by_split"]) == 2 and r["slab"] == "current"
        assert np.mean(r["accuracy_by_split"]) == pytest.approx(r["test_accuracy"])
    assert rows[2]["best_alpha0"] == 0.0 and rows[1]["best_alpha0"] in (0.1, 10.0)
    assert png.stat().st_size > 1000
    # --file-order: one split, the first 70 % of the file's rows for training (the paper's split is unstated)
    curves = tmp_path / "curves.png"
    rows = table2(
        "--file-order", "--methods", "fd,rfd0", "--alphas", "1,100", "--slab", "next", "--curves", str(curves)
    )
    row = rows[1]
    assert row["splits"] == 1 and row["split_order"] == "file" and row["slab"] == "next" and row["n_train"] == 84
    est = SketchedOnlineNewton(sketch="rfd", ell=2, alpha0=0.0).partial_fit(X[:84], y[:84], classes=[-1, 1])
    assert row["test_accuracy"] == pytest.approx(100.0 * est.score(X[84:], y[84:]))
    # the online error rate is progressive validation's, at the best alpha0
    from streamlearn.evaluation import progressive_validation

    pv = progressive_validation(
        SketchedOnlineNewton(sketch="rfd", ell=2, alpha0=0.0), (X[:84], y[:84]), classes=[-1, 1]
    )
    assert row["online_error_rate"] == pytest.approx(100.0 * pv.online_error_rate)
    fd = SketchedOnlineNewton(sketch="fd", ell=2, alpha0=rows[0]["best_alpha0"], slab="next")
    pv = progressive_validation(fd, (X[:84], y[:84]), classes=[-1, 1])
    assert rows[0]["online_error_rate"] == pytest.approx(100.0 * pv.online_error_rate)
    assert rows[0]["online_error_by_alpha0"][f"{rows[0]['best_alpha0']:g}"] == rows[0]["online_error_rate"]
    assert curves.stat().st_size > 1000


def test_rfd0_son_learner_uses_the_current_slab_by_default():
    # the named hyperparameter-free learner takes the slab reading under which RFD0 is stable on sparse text
    from streamlearn.learners import make_learner

    assert make_learner("rfd0-son").get_params()["slab"] == "current"
    assert make_learner("rfd0-son", {"slab": "next"}).get_params()["slab"] == "next"
    assert make_learner("rfd-son").get_params()["slab"] == "next"  # the estimators' default (Alg. 3)
    with pytest.raises(ValueError, match="slab"):
        SketchedOnlineNewton(slab="previous").partial_fit(np.eye(3), [1, -1, 1], classes=[-1, 1])


@pytest.mark.parametrize(
    "sketch, ell, new",
    [
        ("fd", 4, {"ell": 2}),
        ("rfd", 3, {"ell": 6}),
        ("fd", 4, {"sketch": "oja"}),
        ("rp", 4, {"sketch": "fd"}),
        ("rp", 4, {"sketch": "oja"}),  # buffers of the same size, different meanings: RP's S is not Oja's V
        ("rfd", 4, {"sketch": "fd"}),
        ("fd", 4, {"alpha0": 1.0}),  # the initial regulariser: alpha_ started at 10
    ],
)
def test_sketch_settings_changed_after_training_are_refused(sketch, ell, new):
    """``set_params(ell=...)`` or a sketch of another size after training: partial_fit refuses (it continued
    with the trained sketch while get_params named the new one, as FM's n_factors and PA's average refuse)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 6))
    y = np.where(X[:, 0] > 0, 1, -1)
    clf = SketchedOnlineNewton(sketch=sketch, ell=ell, alpha0=10.0).partial_fit(X[:15], y[:15], classes=[-1, 1])
    clf.set_params(**new)
    with pytest.raises(ValueError, match="differs from the setting this SketchedOnlineNewton was trained with"):
        clf.partial_fit(X[15:], y[15:])
    clf.set_params(sketch=sketch, ell=ell, alpha0=10.0)  # back to the trained settings: it continues
    clf.partial_fit(X[15:], y[15:])


_ZERO_WEIGHT_LEARNERS = [
    (AdaGrad, {}),
    (OnlineNewtonStep, {}),
    *((SketchedOnlineNewton, {"sketch": s, "ell": 3}) for s in ("fd", "pfd", "rfd", "oja", "rp")),
    (SketchedOnlineNewton, {"sketch": "rfd", "ell": 3, "alpha0": 0.0}),
]


@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("slab", ["next", "current"])
@pytest.mark.parametrize("safeguard", ["paper", "maxabs"])
@pytest.mark.parametrize("cls,params", _ZERO_WEIGHT_LEARNERS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_examples_of_weight_zero_change_nothing(cls, params, safeguard, slab, lazy):
    # an example of weight 0 is scored and changes nothing: not the point (no projection onto its slab), not
    # the step count t_ (steps eta / t), not the maxabs safeguard's running maxima
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 5)) * [1.0, 3.0, 0.5, 2.0, 1.0]
    y = np.where(X @ [1.0, -1.0, 0.5, 0.0, 0.2] > 0, 1, -1)
    w = np.ones(60)
    w[::3] = 0.0
    X[::3] *= 50.0  # large rows of weight 0: a projection or a running maximum taken from them shows
    keep = w > 0
    est = cls(safeguard=safeguard, slab=slab, random_state=0, **params)
    ref = cls(safeguard=safeguard, slab=slab, random_state=0, **params)
    est._lazy_kernel = ref._lazy_kernel = lazy
    scores = est.partial_fit_scores(X, y, classes=[-1, 1], sample_weight=w)
    ref_scores = ref.partial_fit_scores(X[keep], y[keep], classes=[-1, 1])
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(scores[keep], ref_scores, rtol=1e-9, atol=1e-12)
    assert est.t_ == ref.t_
    if safeguard == "maxabs":
        np.testing.assert_array_equal(est.scale_, ref.scale_)
    # the score of a weight-0 example is the prediction of the model at that point of the stream
    first = ref.__class__(**ref.get_params())
    first._lazy_kernel = lazy
    first.partial_fit(X[1:3], y[1:3], classes=[-1, 1])
    np.testing.assert_allclose(scores[3], first.decision_function(X[3:4])[0], rtol=1e-9, atol=1e-12)
