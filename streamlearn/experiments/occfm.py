"""Online factorization machines (``streamlearn experiment occfm``): vanilla FM, CCFM by projected OGD, OCCFM
(exact and scalable) and river's FM on one stream; the claim of Lin et al. (WWW 2018) is that OCCFM is more accurate.

Data: ``--data ml-100k`` (default: MovieLens 100K, ``u1.base`` as the stream in timestamp order, scored on
``u1.test``; one-hot user + item, optionally ``--attributes``), ``--data farm-ads`` (classification,
d = 54,877) or a LIBSVM file (classification when the labels are two values among {-1, 0, +1}, regression
otherwise; scored on ``--test`` or on a seeded random 20 % held out). Every learner makes ONE pass over the
same stream (progressive validation: online RMSE or error rate, each example scored before it is learnt) and
the final model is scored on the test part (RMSE or accuracy; for regression also the RMSE of predictions
clipped to the training targets' range, the same treatment for every learner).

Grids (small, documented; every row is reported and the best test score per learner is marked ``best``;
picking the best on the test part is an oracle choice that favours every learner alike):

* ``fm`` (ours, AdaGrad): ``eta0`` in {0.05, 0.1, 0.2} x ``n_factors`` in {4, 10};
* ``river-fm`` (river.facto FMRegressor/FMClassifier, SGD for weights and latents, intercept rate = the same):
  ``lr`` in {0.01, 0.05}, ``n_factors`` = 10, seed 0. Dicts are built before timing;
* ``occfm-scalable``: ``delta`` in {10, 50, 200} x ``eta`` in {eta*, 10 eta*, 100 eta*} with eta* the step of the OCG
  regret analysis (:func:`streamlearn.facto.occfm_eta`: ``D / (2 G T^{3/4})``, ``D = 2 delta``,
  ``G = L/2 * max ||xhat||^2`` with ``L = 2 (y_max - y_min)`` for the squared loss, assuming predictions in the
  target range, and ``L = 1`` for the logistic loss; ``T`` = stream length; eta* is a worst-case choice, hence
  the larger multiples), rank = ell = 10;
* ``occfm-exact`` and ``ccfm-ogd`` (delta = 50; OCCFM's eta*, OGD's ``eta0 = D / G``): dense (d+1)^2 state,
  run on the stream until ``--budget`` seconds are used (they are O(d^2) and O(d^3) per example); their row
  says how many examples they saw (``n_train``) and their time per example is what the paper's efficiency
  claim compares; models larger than 4 GiB are refused and reported as such.
* classification only: the linear learners ``ogd``, ``pa1``, ``ftrl`` with their registry defaults.
* ``ccfm-batch-fw`` (not run by default; regression only): the ceiling of the CCFM *model* on the same data,
  not an online learner: batch Frank-Wolfe on the mean squared loss over the whole stream, ``--batch-fw-iters``
  full passes (default 1000), each with one linear step (``scipy.sparse.linalg.eigsh`` on the sparse gradient)
  and the exact line search of the quadratic, ``delta`` = ``--batch-fw-delta`` (default 300). It tells the
  model's capacity apart from what one online conditional-gradient pass extracts.

Options to reproduce the wider searches reported in the README: ``--occfm-deltas`` and ``--occfm-eta-factors``
(comma lists replacing the grid above), ``--occfm-eta-abs`` (absolute eta values instead of multiples of eta*),
``--occfm-steps invsqrt,fw`` (the paper's ``gamma_t = 1/sqrt(t)`` and the classic Frank-Wolfe ``2/t``),
``--occfm-rank`` (rank = ell, default 10), ``--occfm-center`` (regression: scalable OCCFM learns the
targets minus the mean of the training stream, an oracle offset added back to its predictions, so the
trace-norm budget is not spent on the global bias; RMSE is computed on the same scale as for the others)
and ``--order shuffled`` (MovieLens: a seeded random order of
``u1.base`` instead of timestamp order; every learner sees the same stream).

``--json`` rows: ``learner``, ``params``, ``n_train``, ``test_rmse`` or ``test_accuracy``, ``online_rmse`` or
``online_error_rate``, ``seconds``, ``us_per_example``, ``nan_predictions``, ``best``. The summary (printed,
and in ``--markdown``) states whether OCCFM's best test score beats the best of ``fm`` and of ``river-fm``,
and the peak memory (RSS) of the process.
"""

import math
import resource
import time

import numpy as np

from ._markdown import report_head, table_row, write_report
from ._options import comma_numbers, known_names, positive_int

HELP = (
    "online FMs on MovieLens-100K (or farm-ads / a LIBSVM file): fm, ccfm-ogd, occfm exact and scalable, "
    "river's FM; online RMSE/error curves, test RMSE/accuracy, time per example"
)
COLUMNS = [
    "learner",
    "params",
    "n_train",
    "test_rmse",
    "test_rmse_clipped",
    "test_accuracy",
    "online_rmse",
    "online_error_rate",
    "us_per_example",
    "nan_predictions",
    "best",
]

FM_GRID = [{"eta0": e, "n_factors": k} for e in (0.05, 0.1, 0.2) for k in (4, 10)]
RIVER_GRID = [{"lr": lr, "n_factors": 10} for lr in (0.01, 0.05)]
OCCFM_DELTAS = (10.0, 50.0, 200.0)
OCCFM_ETA_FACTORS = (1.0, 10.0, 100.0)
DENSE_DELTA = 50.0
LINEAR = ("ogd", "pa1", "ftrl")


#: the learners of --learners, in the order of the report
LEARNER_NAMES = ("fm", "river-fm", "occfm-scalable", "occfm-exact", "ccfm-ogd", "linear", "ccfm-batch-fw")


def add_arguments(parser):
    parser.add_argument("--data", default="ml-100k", help="ml-100k (default), farm-ads, or a LIBSVM file")
    parser.add_argument("--test", metavar="PATH", default=None, help="LIBSVM test file (default: 20%% held out)")
    parser.add_argument("--split", default="u1", help="MovieLens split (u1..u5, ua, ub; default u1)")
    parser.add_argument("--attributes", action="store_true", help="MovieLens: add user/item attributes")
    parser.add_argument(
        "--order",
        choices=("timestamp", "shuffled"),
        default="timestamp",
        help="MovieLens stream order: timestamp (default) or a seeded random permutation",
    )
    parser.add_argument("--occfm-deltas", default=None, help="comma list of OCCFM deltas (default 10,50,200)")
    parser.add_argument("--occfm-eta-factors", default=None, help="comma list of multiples of eta* (default 1,10,100)")
    parser.add_argument("--occfm-eta-abs", default=None, help="comma list of absolute etas (replaces the factors)")
    parser.add_argument("--occfm-steps", default="invsqrt", help="comma list of step schedules: invsqrt, fw")
    parser.add_argument(
        "--occfm-center",
        action="store_true",
        help="regression: OCCFM learns y - mean(y_stream) (tests the global-bias hypothesis)",
    )
    parser.add_argument("--occfm-rank", type=positive_int, default=10, help="rank = ell of scalable OCCFM (default 10)")
    parser.add_argument(
        "--batch-fw-iters", type=positive_int, default=1000, help="passes of ccfm-batch-fw (default 1000)"
    )
    parser.add_argument("--batch-fw-delta", type=float, default=300.0, help="delta of ccfm-batch-fw (default 300)")
    parser.add_argument(
        "--budget",
        type=float,
        default=60.0,
        help="seconds allowed to occfm-exact and ccfm-ogd (default 60; 0 = a full pass)",
    )
    parser.add_argument("--max-rows", type=positive_int, default=None, help="use only the first N stream rows")
    parser.add_argument(
        "--learners",
        default="fm,river-fm,occfm-scalable,occfm-exact,ccfm-ogd,linear",
        help=f"subset of {','.join(LEARNER_NAMES)}",
    )
    parser.add_argument("--quick", action="store_true", help="one setting per grid (smoke runs)")
    parser.add_argument("--markdown", metavar="PATH", default=None, help="also write the table as Markdown")


def _check_options(args):
    """The learners asked for and the OCCFM grids ``(deltas, eta factors, absolute etas, step schedules)``;
    ValueError naming the option for a value out of range."""
    wanted = known_names("--learners", args.learners, LEARNER_NAMES, "learner")
    if not wanted:
        raise ValueError(f"--learners: no learner in {args.learners!r}; expected some of {', '.join(LEARNER_NAMES)}.")
    budget = getattr(args, "budget", 0.0)
    if not budget >= 0:
        raise ValueError(f"--budget must be >= 0 seconds (0: a full pass); got {budget}.")
    delta = getattr(args, "batch_fw_delta", 300.0)
    # the trace-norm radius of ccfm-batch-fw: inf and NaN stopped in ARPACK, and <= 0 silently gave the zero model
    if not 0 < delta < float("inf"):
        raise ValueError(f"--batch-fw-delta must be a float in the range (0.0, inf); got {delta}.")

    def floats(option, default):
        values = comma_numbers(option, getattr(args, option.lstrip("-").replace("-", "_"), None))
        return default if values is None else tuple(values)

    steps = [s.strip() for s in (getattr(args, "occfm_steps", None) or "invsqrt").split(",") if s.strip()]
    for step in steps:
        if step not in ("invsqrt", "fw"):
            raise ValueError(f"--occfm-steps: unknown step schedule {step!r}; expected invsqrt or fw.")
    grids = (
        floats("--occfm-deltas", OCCFM_DELTAS),
        floats("--occfm-eta-factors", OCCFM_ETA_FACTORS),
        floats("--occfm-eta-abs", None),
        steps,
    )
    return set(wanted), grids


# ----------------------------------------------------------------------------------------------------------
def _load(args):
    from ..datasets import load_farm_ads, load_movielens, load_svmlight

    if args.data in ("ml-100k", "movielens"):
        X, y, Xt, yt = load_movielens(split=args.split, attributes=args.attributes)
        order = getattr(args, "order", "timestamp")
        if order == "shuffled":
            perm = np.random.default_rng(0).permutation(X.shape[0])
            X, y = X[perm], y[perm]
        name = (
            f"MovieLens-100K {args.split} ({'timestamp order' if order == 'timestamp' else 'seeded random order'}"
            f"{', attributes' if args.attributes else ''})"
        )
        task = "regression"
    else:
        if args.data == "farm-ads":
            X, y = load_farm_ads()
            name = "farm-ads"
        else:
            X, y = load_svmlight(args.data)
            name = str(args.data)
        labels = np.unique(y)
        task = "classification" if len(labels) == 2 and set(labels.tolist()) <= {-1.0, 0.0, 1.0} else "regression"
        if args.test:
            Xt, yt = load_svmlight(args.test, n_features=X.shape[1])
        else:
            perm = np.random.default_rng(0).permutation(X.shape[0])
            cut = int(round(0.8 * X.shape[0]))
            X, y, Xt, yt = X[perm[:cut]], y[perm[:cut]], X[perm[cut:]], y[perm[cut:]]
            name += " (seeded 80/20 split)"
    if args.max_rows:
        X, y = X[: args.max_rows], y[: args.max_rows]
    return task, X, y, Xt, yt, name


def _grad_bound(task, X, y):
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() + 1.0
    lmax = 2.0 * float(y.max() - y.min()) if task == "regression" else 1.0
    return lmax * 0.5 * float(sq.max())


def _metrics(task, scores, y, learner=None):
    scores = np.asarray(scores, dtype=np.float64)
    nan = int(np.count_nonzero(~np.isfinite(scores)))
    if task == "regression":
        return float(np.sqrt(np.mean((scores - y) ** 2))), nan
    pred = learner.scores_to_labels(scores) if learner is not None else np.where(scores >= 0, 1.0, -1.0)
    return float(np.mean(pred == y)), nan


def _curve(task, scores, y, points=200):
    n = len(y)
    idx = np.unique(np.geomspace(1, n, min(points, n)).astype(int))  # even on the plot's log axis
    if task == "regression":
        cum = np.cumsum((scores - y) ** 2)
        return idx, np.sqrt(cum[idx - 1] / idx)
    cum = np.cumsum(np.where(scores >= 0, 1.0, -1.0) != y)
    return idx, cum[idx - 1] / idx


def _run_ours(task, make, X, y, Xt, yt, budget):
    """One pass of a streamlearn learner (chunks of 500 rows when a budget applies); returns a row + curve."""
    classes = np.unique(y) if task == "classification" else None
    kw = {"classes": classes} if classes is not None else {}
    warm = make()
    warm.partial_fit(X[:8], y[:8], **kw)  # compile / load the numba cache, thrown away
    est = make()
    scores, seconds, n = [], 0.0, 0
    step = X.shape[0] if not budget else 1
    first = True
    while n < X.shape[0]:
        t0 = time.perf_counter()
        s = est.partial_fit_scores(X[n : n + step], y[n : n + step], **(kw if first else {}))
        dt = time.perf_counter() - t0
        seconds += dt
        first = False
        scores.append(np.asarray(s))
        n += len(s)
        if budget:
            if seconds > budget:
                break
            # next chunk: at most double, and no longer than the budget left at the last chunk's pace
            step = int(max(1, min(2 * step, 1000, (budget - seconds) / max(dt / len(s), 1e-9))))
    scores = np.concatenate(scores)
    if task == "classification":
        signed = np.where(y[:n] == classes[1], 1.0, -1.0)
        online = float(np.mean(np.where(scores >= 0, 1.0, -1.0) != signed))
        test, nan_test = _metrics(task, est.decision_function(Xt), yt, est)
        curve = _curve(task, scores, signed)
    else:
        online = float(np.sqrt(np.mean((scores - y[:n]) ** 2)))
        pred = est.predict(Xt)
        test, nan_test = _metrics(task, pred, yt)
        curve = _curve(task, scores, y[:n])
    row = {
        "n_train": n,
        "test": test,
        "online": online,
        "seconds": seconds,
        "us_per_example": 1e6 * seconds / n,
        "nan_predictions": int(np.count_nonzero(~np.isfinite(scores))) + nan_test,
    }
    if task == "regression":
        lo, hi = float(y.min()), float(y.max())
        row["test_rmse_clipped"] = float(np.sqrt(np.mean((np.clip(pred, lo, hi) - yt) ** 2)))
    diag = getattr(est, "diagnostics", None)
    if diag is not None:
        d = dict(diag())
        if d.get("trace_norm") is None:
            d.pop("trace_norm", None)
        if n >= 1:
            d["lmo_matvecs_per_example"] = d.get("lmo_matvecs", 0.0) / n
        row["diagnostics"] = d
    return row, curve


def _rows_to_dicts(X):
    X = X.tocsr()
    return [
        dict(zip(X.indices[X.indptr[i] : X.indptr[i + 1]].tolist(), X.data[X.indptr[i] : X.indptr[i + 1]].tolist()))
        for i in range(X.shape[0])
    ]


def _run_river(task, cfg, dX, y, dXt, yt):
    from river import facto, optim

    lr = cfg["lr"]
    common = dict(
        n_factors=cfg["n_factors"],
        weight_optimizer=optim.SGD(lr),
        latent_optimizer=optim.SGD(lr),
        intercept_lr=lr,
        seed=0,
    )
    model = facto.FMRegressor(**common) if task == "regression" else facto.FMClassifier(**common)
    scores = np.empty(len(y))
    t0 = time.perf_counter()
    if task == "regression":
        for i, (x, yi) in enumerate(zip(dX, y)):
            scores[i] = model.predict_one(x)
            model.learn_one(x, float(yi))
    else:
        top = np.unique(y)[-1]  # the positive class, as the learners' classes_[1] (labels -1/1, 0/1 or -1/0)
        for i, (x, yi) in enumerate(zip(dX, y)):
            scores[i] = model.predict_proba_one(x).get(True, 0.5) - 0.5
            model.learn_one(x, bool(yi == top))
    seconds = time.perf_counter() - t0
    if task == "regression":
        pred = np.array([model.predict_one(x) for x in dXt], dtype=np.float64)
        online = float(np.sqrt(np.mean((scores - y) ** 2)))
        curve = _curve(task, scores, y)
        lo, hi = float(y.min()), float(y.max())
        clipped = float(np.sqrt(np.mean((np.clip(pred, lo, hi) - yt) ** 2)))
    else:
        pred = np.array([model.predict_proba_one(x).get(True, 0.5) - 0.5 for x in dXt], dtype=np.float64)
        signed = np.where(y == top, 1.0, -1.0)
        online = float(np.mean(np.where(scores >= 0, 1.0, -1.0) != signed))
        curve = _curve(task, scores, signed)
    test, nan_test = _metrics(task, pred, yt if task == "regression" else np.where(yt == top, 1.0, -1.0))
    row = {
        "n_train": len(y),
        "test": test,
        "online": online,
        "seconds": seconds,
        "us_per_example": 1e6 * seconds / len(y),
        "nan_predictions": int(np.count_nonzero(~np.isfinite(scores))) + nan_test,
    }
    if task == "regression":
        row["test_rmse_clipped"] = clipped
    return row, curve


def _run_batch_fw(X, y, Xt, yt, delta, iters):
    """Batch Frank-Wolfe on ``mean (1/2 xhat^T C xhat - y)^2`` over ``||C||_tr <= delta`` (C_0 = 0), exact line
    search; C is never formed: train and test predictions are updated per atom. Returns a row and the curve of
    the training RMSE per pass (the "online" column holds the final training RMSE)."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import eigsh

    Xh = sp.hstack([X, np.ones((X.shape[0], 1))]).tocsr()
    Xth = sp.hstack([Xt, np.ones((Xt.shape[0], 1))]).tocsr()
    n = Xh.shape[0]
    pred, tpred = np.zeros(n), np.zeros(Xth.shape[0])
    t0 = time.perf_counter()
    train = np.empty(iters)
    for it in range(iters):
        r = pred - y
        G = (Xh.T @ sp.diags(r / n) @ Xh).tocsr()  # gradient of the mean loss: mean r_i xhat xhat^T
        lam, q = eigsh(-G, k=1, which="LM", tol=1e-8, v0=np.ones(Xh.shape[1]))
        sgn, q = (1.0 if lam[0] > 0 else -1.0), q[:, 0]
        d = 0.5 * delta * sgn * (Xh @ q) ** 2 - pred  # direction atom - C, on the training predictions
        a = min(1.0, max(0.0, -float(r @ d) / max(float(d @ d), 1e-300)))
        pred += a * d
        tpred = (1.0 - a) * tpred + a * 0.5 * delta * sgn * (Xth @ q) ** 2
        train[it] = np.sqrt(np.mean((pred - y) ** 2))
    seconds = time.perf_counter() - t0
    test = float(np.sqrt(np.mean((tpred - yt) ** 2)))
    lo, hi = float(y.min()), float(y.max())
    row = {
        "n_train": n,
        "test": test,
        "online": float(train[-1]),
        "seconds": seconds,
        "us_per_example": 1e6 * seconds / (n * iters),
        "nan_predictions": int(np.count_nonzero(~np.isfinite(tpred))),
        "test_rmse_clipped": float(np.sqrt(np.mean((np.clip(tpred, lo, hi) - yt) ** 2))),
    }
    return row, None


# ----------------------------------------------------------------------------------------------------------
def run(args):
    from ..facto import (
        CCFMOnlineGradientClassifier,
        CCFMOnlineGradientRegressor,
        FMClassifier,
        FMRegressor,
        OCCFMClassifier,
        OCCFMRegressor,
        occfm_eta,
    )
    from ..learners import make_learner

    wanted, grids = _check_options(args)  # before the data are read
    task, X, y, Xt, yt, name = _load(args)
    reg = task == "regression"
    G = _grad_bound(task, X, y)
    T = X.shape[0]
    rows, curves = [], {}
    quiet = getattr(args, "quiet", False) or getattr(args, "json", False)

    def add(learner, params, fn):
        try:
            row, curve = fn()
        except (ValueError, MemoryError) as exc:
            row, curve = (
                {
                    "n_train": 0,
                    "test": None,
                    "online": None,
                    "seconds": 0.0,
                    "us_per_example": None,
                    "nan_predictions": 0,
                    "error": str(exc),
                },
                None,
            )
        row = {"learner": learner, "params": params, **row}
        rows.append(row)
        if curve is not None:
            curves[(learner, str(params))] = curve
        if not quiet:
            print(
                f"  {learner:15s} {params} -> test {row['test']} online {row['online']} "
                f"({row['seconds']:.1f} s, n={row['n_train']})",
                flush=True,
            )

    grid = (lambda g: g[:1]) if args.quick else (lambda g: g)
    if "fm" in wanted:
        for cfg in grid(FM_GRID):
            cls = FMRegressor if reg else FMClassifier
            add("fm", cfg, lambda cfg=cfg, cls=cls: _run_ours(task, lambda: cls(**cfg), X, y, Xt, yt, 0))
    if "river-fm" in wanted:
        try:
            import river  # noqa: F401
        except ImportError:
            rows.append(
                {
                    "learner": "river-fm",
                    "params": {},
                    "error": "river is not installed (pip install -e '.[benchmark]')",
                    "n_train": 0,
                    "test": None,
                }
            )
        else:
            dX, dXt = _rows_to_dicts(X), _rows_to_dicts(Xt)
            for cfg in grid(RIVER_GRID):
                add("river-fm", cfg, lambda cfg=cfg: _run_river(task, cfg, dX, y, dXt, yt))
    if "occfm-scalable" in wanted:
        cls = OCCFMRegressor if reg else OCCFMClassifier
        deltas, factors, etas_abs, steps = grids
        rank = int(getattr(args, "occfm_rank", 10) or 10)
        mu = float(y.mean()) if reg and getattr(args, "occfm_center", False) else 0.0
        for step in grid(steps):
            for delta in grid(list(deltas)):
                etas = etas_abs if etas_abs else [f * occfm_eta(delta, G, T) for f in factors]
                for eta in grid(list(etas)):
                    cfg = {"delta": delta, "eta": eta, "rank": rank, "ell": rank}
                    if step != "invsqrt":
                        cfg["step_schedule"] = step
                    params = dict(cfg, center=round(mu, 4)) if mu else cfg
                    # RMSE of (prediction + mu) against y equals RMSE of prediction against y - mu
                    add(
                        "occfm-scalable",
                        params,
                        lambda cfg=cfg: _run_ours(task, lambda: cls(mode="scalable", **cfg), X, y - mu, Xt, yt - mu, 0),
                    )
    if "occfm-exact" in wanted:
        cls = OCCFMRegressor if reg else OCCFMClassifier
        cfg = {"delta": DENSE_DELTA, "eta": occfm_eta(DENSE_DELTA, G, T)}
        add("occfm-exact", cfg, lambda: _run_ours(task, lambda: cls(mode="exact", **cfg), X, y, Xt, yt, args.budget))
    if "ccfm-ogd" in wanted:
        cls = CCFMOnlineGradientRegressor if reg else CCFMOnlineGradientClassifier
        cfg = {"delta": DENSE_DELTA, "eta0": 2.0 * DENSE_DELTA / G}
        add("ccfm-ogd", cfg, lambda: _run_ours(task, lambda: cls(**cfg), X, y, Xt, yt, args.budget))
    if "ccfm-batch-fw" in wanted and reg:
        cfg = {"delta": float(args.batch_fw_delta), "passes": int(args.batch_fw_iters)}
        add("ccfm-batch-fw", cfg, lambda: _run_batch_fw(X, y, Xt, yt, cfg["delta"], cfg["passes"]))
    if "linear" in wanted and not reg:
        for lname in LINEAR:
            add(lname, {}, lambda lname=lname: _run_ours(task, lambda: make_learner(lname), X, y, Xt, yt, 0))

    metric = "test_rmse" if reg else "test_accuracy"
    online = "online_rmse" if reg else "online_error_rate"
    for r in rows:
        r[metric] = r.pop("test", None)
        r[online] = r.pop("online", None)
        r["data"] = name
    best = {}
    for r in rows:
        v = r.get(metric)
        if v is None or not math.isfinite(v):
            continue
        if r["learner"] not in best or (v < best[r["learner"]][metric] if reg else v > best[r["learner"]][metric]):
            best[r["learner"]] = r
    for r in rows:
        r["best"] = best.get(r["learner"]) is r
    args._curves = {
        k: v for k, v in curves.items() if any(r["best"] and (r["learner"], str(r["params"])) == k for r in rows)
    }
    args._summary = summary(rows, reg)
    args._data_name = name
    if not quiet:
        for line in args._summary["lines"]:
            print(line)
    if args.markdown:
        _write_markdown(rows, args._summary, args.markdown, name, reg, args)
    return rows


def summary(rows, regression):
    """Did OCCFM's best test score beat the best of ``fm`` and of ``river-fm``? Plus the peak memory."""
    metric = "test_rmse" if regression else "test_accuracy"
    best = {r["learner"]: r for r in rows if r.get("best")}
    lines, out = [], {}
    occ = [
        best[n]
        for n in ("occfm-scalable", "occfm-exact")
        if n in best and best[n]["n_train"] == max(r["n_train"] for r in rows)
    ]
    if occ:
        top = min(occ, key=lambda r: r[metric]) if regression else max(occ, key=lambda r: r[metric])
        for other in ("fm", "river-fm"):
            if other in best:
                a, b = top[metric], best[other][metric]
                holds = a < b if regression else a > b
                out[f"occfm_vs_{other}"] = {"holds": bool(holds), "occfm": a, other: b}
                lines.append(
                    f"OCCFM ({top['learner']}) best {metric} {a:.4f} vs {other} best {b:.4f} -> "
                    f"{'HOLDS' if holds else 'FAILS'}"
                )
    if "ccfm-batch-fw" in best:
        b = best["ccfm-batch-fw"]
        out["ccfm_batch_fw"] = b[metric]
        lines.append(
            f"CCFM model ceiling (batch Frank-Wolfe, {b['params']['passes']} passes, delta "
            f"{b['params']['delta']:g}; not online): {metric} {b[metric]:.4f}"
        )
    nan = sum(r.get("nan_predictions") or 0 for r in rows)
    out["nan_predictions"] = nan
    lines.append(f"non-finite predictions over all runs: {nan}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux
    out["peak_rss_mb"] = peak
    lines.append(f"peak memory (RSS) of the process: {peak:.0f} MB")
    dense = {n: best[n] for n in ("occfm-exact", "ccfm-ogd") if n in best}
    if "occfm-scalable" in best:
        dense["occfm-scalable"] = best["occfm-scalable"]
    if dense:
        lines.append(
            "time per example: "
            + ", ".join(f"{n} {r['us_per_example']:.0f} us (n={r['n_train']})" for n, r in dense.items())
        )
    out["lines"] = lines
    return out


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict):
        return ", ".join(f"{k}={_fmt(x)}" for k, x in v.items())
    return str(v)


def _write_markdown(rows, summ, path, name, regression, args):
    metric = "test_rmse" if regression else "test_accuracy"
    online = "online_rmse" if regression else "online_error_rate"
    cols = (
        ["learner", "params", "n_train", metric]
        + (["test_rmse_clipped"] if regression else [])
        + [online, "seconds", "us_per_example", "nan_predictions", "best"]
    )
    intro = (
        "One pass (progressive validation), then the final model on the test part. Grids and eta: see "
        "`streamlearn/experiments/occfm.py`. `best` marks each learner's best test score."
    )
    lines = report_head(f"Online factorization machines on {name}", [intro], summ["lines"], cols)
    for r in rows:
        cells = [_fmt(r.get(c)) if c != "params" else _fmt(r.get(c)) for c in cols]
        if r.get("error"):
            cells[-1] = "refused: " + r["error"][:120]
        lines.append(table_row(cells))
    write_report(path, lines)


def plot(rows, path, args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    regression = any("test_rmse" in r for r in rows)
    fig, ax = plt.subplots(figsize=(8, 5))
    for (learner, _params), (n, v) in getattr(args, "_curves", {}).items():
        ax.plot(n, v, label=learner)
    ax.set_xscale("log")
    ax.set_xlabel("examples seen (one pass)")
    ax.set_ylabel("online RMSE" if regression else "online error rate")
    if regression:
        ax.set_ylim(0.8, 4.0)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"online FMs: {getattr(args, '_data_name', '')} (best setting of each learner)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
