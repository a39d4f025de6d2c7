"""The zoo benchmark: every registered learner with its CLI defaults on every zoo data set, raw.

Per data set: one seeded shuffle of the rows, the first 70 % for training (one pass, ``partial_fit`` over the
whole training part), the last 30 % for testing; test accuracy (classification) or RMSE (regression).
Beside the learners, on the same rows in the same order:

* the majority-class rate (regression: the RMSE of predicting the training mean);
* Vowpal Wabbit with its defaults (one pass; ``--oaa K`` for K > 2 classes; binary labels -1/+1 and VW's
  default squared loss, as VW users run it; the sign of the prediction is the class), when the
  ``vowpalwabbit`` package is installed;
* a tuned batch ceiling: ``StandardScaler`` + ``LogisticRegressionCV`` (classification) or ``RidgeCV``
  (regression), a ceiling, not a peer (many passes, scaled with the whole training part, tuned by
  cross-validation).

``rescale=True`` adds, per classification data set, RFD0-SON's spread (max - min test accuracy) over
column rescalings: every column multiplied by a random factor ``10**U(-3, 3)``, several draws.
"""

import time

import numpy as np

from ._options import positive_int

HELP = (
    "every learner with its CLI defaults on the raw data-set zoo (one pass, 70/30), against Vowpal "
    "Wabbit's defaults and a tuned batch ceiling"
)
COLUMNS = ["dataset", "task", "learner", "score", "gap_to_vw", "majority", "vw", "ceiling", "seconds", "note"]

#: learners skipped on wide data: their per-example cost is quadratic or worse in the number of features
_WIDE_LIMIT = {
    "cw": 4096,
    "full-on": 4096,
    "ccfm-ogd": 200,
    "ccfm-ogd-regressor": 200,
    "occfm": 200,
    "occfm-regressor": 200,
}
QUICK_DATASETS = ("breast-cancer", "iris")
RESCALE_LEARNER = "rfd0-son"


def add_arguments(parser):
    parser.add_argument(
        "--datasets",
        metavar="A,B,...",
        default=None,
        help="comma-separated zoo data sets (default: every one loadable here)",
    )
    parser.add_argument(
        "--learners",
        metavar="A,B,...",
        default=None,
        help="comma-separated learner names (default: every one-pass learner for the task)",
    )
    parser.add_argument("--random-state", type=int, default=0, help="seed of the row shuffle (default 0)")
    parser.add_argument(
        "--quick", action="store_true", help=f"only {' and '.join(QUICK_DATASETS)}, 2 rescaling draws (a smoke run)"
    )
    parser.add_argument(
        "--rescale",
        type=int,
        default=5,
        metavar="DRAWS",
        help=f"{RESCALE_LEARNER}'s spread over DRAWS random column rescalings per "
        "classification data set (0: skip; default 5)",
    )
    parser.add_argument(
        "--scale",
        choices=["default", "none", "maxabs", "standard"],
        default="default",
        help="put every learner behind this streaming scaler (streamlearn.preprocessing; the "
        "command line's --scale); default: each learner's own default, as the command line without --scale "
        "(the data are raw, as shipped)",
    )
    parser.add_argument(
        "--shuffles",
        type=positive_int,
        default=1,
        metavar="K",
        help="also run K-1 further shuffles (seeds --random-state + 1, ...; no ceiling, no rescaling) and report "
        "how often each learner is under VW's defaults and under the majority-class rate (default 1)",
    )
    parser.add_argument("--no-vw", action="store_true", help="skip Vowpal Wabbit")
    parser.add_argument("--no-ceiling", action="store_true", help="skip the tuned batch ceiling")


def run(args):
    from ..datasets import ZooUnavailable, load_zoo, zoo_names

    from ..learners import LEARNERS

    for learner in _split(args.learners) or []:  # before any data set is read
        if learner not in LEARNERS:
            raise ValueError(f"--learners: unknown learner {learner!r}; run 'streamlearn learners' for the list.")
        if LEARNERS[learner].batch:  # fit_score makes one partial_fit pass, which a batch learner has not
            raise ValueError(
                f"--learners: {learner} is a batch learner; the zoo runs one-pass (online) learners (its tuned batch "
                "ceiling is the batch reference)."
            )
    if args.rescale < 0:
        raise ValueError(f"--rescale must be >= 0 (0: skip); got {args.rescale}.")
    if args.random_state < 0:
        raise ValueError(f"--random-state must be >= 0; got {args.random_state}.")
    names = _split(args.datasets) or (list(QUICK_DATASETS) if args.quick else zoo_names())
    draws = min(args.rescale, 2) if args.quick else args.rescale
    rows = []
    args._skipped = {}
    for name in names:
        try:
            X, y, task = load_zoo(name)
        except ZooUnavailable as exc:
            args._skipped[name] = str(exc)
            _say(args, f"{name}: skipped ({exc})")
            continue
        for k in range(getattr(args, "shuffles", 1)):
            for row in run_dataset(
                name,
                X,
                y,
                task,
                learners=_split(args.learners),
                random_state=args.random_state + k,
                vw=not args.no_vw,
                ceiling=not args.no_ceiling and k == 0,
                rescale_draws=draws if k == 0 else 0,
                scale=getattr(args, "scale", "default"),
                log=lambda msg: _say(args, msg),
            ):
                rows.append(dict(row, shuffle=k))
    return rows


def first_shuffle(rows):
    """The rows of the first shuffle (``--random-state``), which every single-run table shows."""
    return [r for r in rows if r.get("shuffle", 0) == 0]


def _split(text):
    return [s.strip() for s in text.split(",") if s.strip()] if text else None


def _say(args, msg):
    if getattr(args, "progress", False) or getattr(args, "verbose_log", False):
        import sys

        print(msg, file=sys.stderr, flush=True)


def split_shuffled(X, y, random_state=0, train_fraction=0.7):
    """One seeded shuffle, then the first ``train_fraction`` of the rows for training, the rest for testing.

    >>> import numpy as np
    >>> X_tr, y_tr, X_te, y_te = split_shuffled(np.arange(20.0).reshape(10, 2), np.arange(10))
    >>> X_tr.shape, X_te.shape, sorted(np.r_[y_tr, y_te]) == list(range(10))
    ((7, 2), (3, 2), True)
    """
    perm = np.random.default_rng(random_state).permutation(y.shape[0])
    n_train = round(train_fraction * y.shape[0])
    tr, te = perm[:n_train], perm[n_train:]
    return X[tr], y[tr], X[te], y[te]


def zoo_learners(task):
    """Registered one-pass learners for ``task`` ("binary", "multiclass" or "regression"), registry order."""
    from ..learners import LEARNERS

    want = "regression" if task == "regression" else "classification"
    return [n for n, s in LEARNERS.items() if s.task == want and not s.batch]


def fit_score(name, X_train, y_train, X_test, y_test, task, params=None, scale="default"):
    """Fit learner ``name`` (CLI defaults, ``params`` on top; behind the streaming scaler ``scale``, by default
    the learner's own, as the command line) in one pass; test accuracy or RMSE."""
    from ..learners import make_learner, scaled_learner

    learner = scaled_learner(name, make_learner(name, params), None if scale == "default" else scale)
    if task == "regression":
        learner.partial_fit(X_train, y_train)
        return _rmse(y_test, learner.predict(X_test))
    learner.partial_fit(X_train, y_train, classes=np.unique(np.r_[y_train, y_test]))
    return float(np.mean(learner.predict(X_test) == y_test))


def _rmse(y, pred):
    pred = np.asarray(pred, dtype=np.float64)
    if not np.all(np.isfinite(pred)):
        return float("inf")
    return float(np.sqrt(np.mean((y - pred) ** 2)))


def run_dataset(
    name,
    X,
    y,
    task,
    *,
    learners=None,
    random_state=0,
    vw=True,
    ceiling=True,
    rescale_draws=0,
    scale="default",
    log=None,
):
    """All rows of one data set: every learner, plus the majority / VW / ceiling references."""
    log = log or (lambda msg: None)
    X_train, y_train, X_test, y_test = split_shuffled(X, y, random_state)
    classes = np.unique(np.r_[y_train, y_test])
    if task == "regression":
        majority = _rmse(y_test, np.full(y_test.shape, y_train.mean()))
    else:
        values, counts = np.unique(y_train, return_counts=True)
        majority = float(np.mean(y_test == values[np.argmax(counts)]))
    vw_score = vw_defaults(X_train, y_train, X_test, y_test, task, classes) if vw else None
    ceil = batch_ceiling(X_train, y_train, X_test, y_test, task) if ceiling else None
    import scipy.sparse as sp

    base = {
        "dataset": name,
        "task": task,
        "n_train": int(y_train.shape[0]),
        "n_test": int(y_test.shape[0]),
        "n_features": int(X.shape[1]),
        "sparse": bool(sp.issparse(X)),
        "majority": majority,
        "vw": vw_score,
        "ceiling": ceil,
    }
    log(f"{name}: majority {majority:.4f}  vw {vw_score}  ceiling {ceil}")
    from ..learners import LEARNERS

    learner_task = "regression" if task == "regression" else "classification"
    rows = []
    for learner in learners or zoo_learners(task):
        row = dict(base, learner=learner, score=None, gap_to_vw=None, seconds=None, note="")
        limit = _WIDE_LIMIT.get(learner)
        if LEARNERS[learner].task != learner_task:  # a regressor's predictions would be scored as labels
            row["note"] = f"skipped: a {LEARNERS[learner].task} learner on a {task} data set"
        elif limit is not None and X.shape[1] > limit:
            row["note"] = f"skipped: more than {limit} features"
        else:
            t0 = time.perf_counter()
            try:
                row["score"] = fit_score(learner, X_train, y_train, X_test, y_test, task, scale=scale)
            except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
                row["note"] = f"failed: {str(exc).splitlines()[0][:120]}"
            row["seconds"] = time.perf_counter() - t0
        if row["score"] is not None and vw_score is not None:
            sign = -1.0 if task == "regression" else 100.0  # accuracy: points; RMSE: lower is better
            row["gap_to_vw"] = sign * (row["score"] - vw_score)
        log(f"  {learner:22s} {row['score']}  {row['note']}")
        rows.append(row)
    if rescale_draws and task != "regression":
        scores = rescaled_scores(
            RESCALE_LEARNER, X_train, y_train, X_test, y_test, task, rescale_draws, random_state, scale=scale
        )
        for row in rows:
            if row["learner"] == RESCALE_LEARNER:
                row["rescale_scores"] = scores
                row["rescale_spread"] = 100.0 * (max(scores) - min(scores))
        log(f"  {RESCALE_LEARNER} over {rescale_draws} column rescalings: {np.round(scores, 4).tolist()}")
    return rows


def rescale_columns(X, factors):
    """``X`` with column j multiplied by ``factors[j]`` (dense or CSR)."""
    import scipy.sparse as sp

    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.data = X.data * factors[X.indices]
        return X
    return X * factors


def rescaled_scores(learner, X_train, y_train, X_test, y_test, task, draws, random_state=0, scale="default"):
    """Test scores of ``learner`` after multiplying every column by ``10**U(-3, 3)`` (``draws`` draws).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 3)); y = (X[:, 0] > 0).astype(int)
    >>> s = rescaled_scores("ogd", X[:140], y[:140], X[140:], y[140:], "binary", 2)
    >>> len(s), all(0 <= v <= 1 for v in s)
    (2, True)
    """
    rng = np.random.default_rng(1000 + random_state)
    out = []
    for _ in range(draws):
        factors = 10.0 ** rng.uniform(-3, 3, X_train.shape[1])
        try:
            out.append(
                fit_score(
                    learner,
                    rescale_columns(X_train, factors),
                    y_train,
                    rescale_columns(X_test, factors),
                    y_test,
                    task,
                    scale=scale,
                )
            )
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            out.append(0.0)
    return out


def _vw_lines(X):
    import scipy.sparse as sp

    if sp.issparse(X):
        X = sp.csr_matrix(X)
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            yield " ".join(f"{j}:{v:.17g}" for j, v in zip(X.indices[lo:hi], X.data[lo:hi]) if v != 0)
    else:
        for row in np.asarray(X):
            nz = np.flatnonzero(row)
            yield " ".join(f"{j}:{row[j]:.17g}" for j in nz)


def vw_defaults(X_train, y_train, X_test, y_test, task, classes):
    """Vowpal Wabbit's defaults, one pass over the training rows in order; test accuracy or RMSE.

    None when the ``vowpalwabbit`` package is not installed. Binary labels are -1/+1 (``classes[1]`` is +1)
    with VW's default squared loss; K > 2 classes run ``--oaa K``.
    """
    try:
        from vowpalwabbit import pyvw
    except ImportError:
        return None
    if task == "multiclass":
        vw = pyvw.Workspace(f"--oaa {len(classes)} --quiet")
        lab = {c: i + 1 for i, c in enumerate(classes)}

        def label(v):
            return str(lab[v])
    elif task == "binary":
        vw = pyvw.Workspace("--quiet")

        def label(v):
            return "1" if v == classes[1] else "-1"
    else:
        vw = pyvw.Workspace("--quiet")

        def label(v):
            return f"{v:.17g}"

    for yi, feats in zip(y_train, _vw_lines(X_train)):
        vw.learn(f"{label(yi)} | {feats}")
    preds = np.array([vw.predict(f"| {feats}") for feats in _vw_lines(X_test)], dtype=np.float64)
    vw.finish()
    if task == "regression":
        return _rmse(y_test, preds)
    if task == "multiclass":
        return float(np.mean(classes[preds.astype(np.intp) - 1] == y_test))
    return float(np.mean(np.where(preds >= 0, classes[1], classes[0]) == y_test))


def batch_ceiling(X_train, y_train, X_test, y_test, task):
    """StandardScaler + LogisticRegressionCV (classification) / RidgeCV (regression): a tuned batch ceiling."""
    import warnings

    import scipy.sparse as sp
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegressionCV, RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler(with_mean=not sp.issparse(X_train))
    if task == "regression":
        model = make_pipeline(scaler, RidgeCV(alphas=np.logspace(-3, 4, 15)))
    else:
        model = make_pipeline(scaler, LogisticRegressionCV(Cs=8, cv=3, max_iter=300, scoring="accuracy"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", FutureWarning)  # scikit-learn's announced changes of defaults
        model.fit(X_train, y_train)
    if task == "regression":
        return _rmse(y_test, model.predict(X_test))
    return float(model.score(X_test, y_test))


# ----------------------------------------------------------------------------------------------- summaries


def summary(rows):
    """Per classification learner: median and worst gap to VW (pt), sets below the majority-class rate,
    median gap to the batch ceiling (pt) and RFD0-SON's worst rescaling spread."""
    rows = first_shuffle(rows)
    out = []
    learners = list(dict.fromkeys(r["learner"] for r in rows if r["task"] != "regression"))
    for name in learners:
        rs = [r for r in rows if r["learner"] == name and r["task"] != "regression"]
        gaps = [r["gap_to_vw"] for r in rs if r["gap_to_vw"] is not None]
        ceil = [100.0 * (r["score"] - r["ceiling"]) for r in rs if r["score"] is not None and r["ceiling"] is not None]
        below = [r["dataset"] for r in rs if r["score"] is None or r["score"] < r["majority"] - 1e-12]
        ran = [r for r in rs if not r["note"].startswith("skipped")]
        out.append(
            {
                "learner": name,
                "datasets": len(ran),
                "median_gap_to_vw": float(np.median(gaps)) if gaps else None,
                "worst_gap_to_vw": float(min(gaps)) if gaps else None,
                "below_majority": len([d for d in below if any(r["dataset"] == d for r in ran)]),
                "below_majority_sets": [d for d in below if any(r["dataset"] == d for r in ran)],
                "median_gap_to_ceiling": float(np.median(ceil)) if ceil else None,
                "beats_vw_everywhere": bool(gaps) and len(gaps) == len(ran) and min(gaps) >= 0,
            }
        )
    return out


def _fmt(v, pct=True, digits=1):
    if v is None:
        return "–"
    if isinstance(v, float) and not np.isfinite(v):
        return "inf"
    return f"{100 * v:.{digits}f}" if pct else f"{v:.{digits}f}"


def _signed(v):
    return "–" if v is None else f"{v:+.1f}"


def summary_markdown(rows):
    """The per-learner summary as a Markdown table (classification)."""
    lines = [
        (
            "| learner | data sets | median gap to VW (pt) | worst gap to VW (pt) | sets below majority | "
            "median gap to ceiling (pt) |"
        ),
        "|---|---:|---:|---:|---:|---:|",
    ]
    for s in summary(rows):
        lines.append(
            f"| {s['learner']} | {s['datasets']} | {_signed(s['median_gap_to_vw'])} | "
            f"{_signed(s['worst_gap_to_vw'])} | {s['below_majority']} | "
            f"{_signed(s['median_gap_to_ceiling'])} |"
        )
    return "\n".join(lines)


def shuffles_summary(rows):
    """Per classification learner over every shuffle: runs (data set x shuffle), runs under VW's defaults and
    under the majority-class rate, and the data sets where the mean over the shuffles is under either.

    >>> rows = [{"dataset": "a", "task": "binary", "learner": "x", "score": s, "majority": 0.6, "vw": 0.7,
    ...          "gap_to_vw": 100 * (s - 0.7), "note": "", "shuffle": k} for k, s in enumerate((0.65, 0.8, 0.5))]
    >>> s = shuffles_summary(rows)[0]
    >>> s["runs"], s["under_vw"], s["under_majority"], s["mean_under_vw"], s["mean_under_majority"]
    (3, 2, 1, [('a', -5.0)], [])
    """
    out = []
    rs = [r for r in rows if r["task"] != "regression" and r["score"] is not None]
    for name in dict.fromkeys(r["learner"] for r in rs):
        mine = [r for r in rs if r["learner"] == name]
        under_vw, under_maj = [], []
        for d in dict.fromkeys(r["dataset"] for r in mine):
            at = [r for r in mine if r["dataset"] == d]
            gaps = [r["gap_to_vw"] for r in at if r["gap_to_vw"] is not None]
            if gaps and np.mean(gaps) < 0:
                under_vw.append((d, round(float(np.mean(gaps)), 2)))
            if np.mean([r["score"] for r in at]) < np.mean([r["majority"] for r in at]) - 1e-12:
                under_maj.append(d)
        out.append(
            {
                "learner": name,
                "shuffles": len({r.get("shuffle", 0) for r in mine}),
                "runs": len(mine),
                "under_vw": sum(r["gap_to_vw"] is not None and r["gap_to_vw"] < 0 for r in mine),
                "under_majority": sum(r["score"] < r["majority"] - 1e-12 for r in mine),
                "mean_under_vw": under_vw,
                "mean_under_majority": under_maj,
            }
        )
    return out


def shuffles_markdown(rows):
    """The per-learner counts over every shuffle as a Markdown table; empty for a single shuffle."""
    if len({r.get("shuffle", 0) for r in rows}) < 2:
        return ""
    lines = [
        (
            "| learner | runs | runs under VW | data sets under VW on average (mean gap, pt) | runs under majority "
            "| data sets under majority on average |"
        ),
        "|---|---:|---:|---|---:|---|",
    ]
    for s in shuffles_summary(rows):
        under = ", ".join(f"{d} ({g:+.1f})" for d, g in s["mean_under_vw"]) or "–"
        lines.append(
            f"| {s['learner']} | {s['runs']} | {s['under_vw']} | {under} | {s['under_majority']} | "
            f"{', '.join(s['mean_under_majority']) or '–'} |"
        )
    return "\n".join(lines)


def scores_markdown(rows, task_group):
    """Data sets as columns, learners as rows: test accuracy in % (classification) or RMSE (regression)."""
    rows = first_shuffle(rows)
    reg = task_group == "regression"
    rs = [r for r in rows if (r["task"] == "regression") == reg]
    if not rs:
        return ""
    sets = list(dict.fromkeys(r["dataset"] for r in rs))
    learners = list(dict.fromkeys(r["learner"] for r in rs))
    first = {d: next(r for r in rs if r["dataset"] == d) for d in sets}
    cell = (lambda v: _fmt(v, pct=False, digits=3)) if reg else (lambda v: _fmt(v))
    lines = ["| " + " | ".join(["learner"] + sets) + " |", "|---|" + "---:|" * len(sets)]
    ref = "mean of training targets" if reg else "majority class"
    for label, key in ((ref, "majority"), ("VW defaults", "vw"), ("batch ceiling (tuned)", "ceiling")):
        lines.append("| " + " | ".join([f"*{label}*"] + [cell(first[d][key]) for d in sets]) + " |")
    for name in learners:
        cells = []
        for d in sets:
            r = next((r for r in rs if r["dataset"] == d and r["learner"] == name), None)
            if r is None or r["score"] is None:
                cells.append("n/a" if r is not None and r["note"].startswith("skipped") else "fail")
                continue
            text = cell(r["score"])
            worse = r["score"] > r["majority"] if reg else r["score"] < r["majority"] - 1e-12
            cells.append(f"**{text}**" if worse else text)
        lines.append("| " + " | ".join([name] + cells) + " |")
    return "\n".join(lines)


def rescale_markdown(rows):
    rows = first_shuffle(rows)
    rs = [r for r in rows if "rescale_spread" in r]
    if not rs:
        return ""
    lines = [
        f"| data set | {RESCALE_LEARNER} unscaled (%) | accuracies over rescalings (%) | spread (pt) |",
        "|---|---:|---|---:|",
    ]
    for r in rs:
        accs = ", ".join(f"{100 * v:.1f}" for v in r["rescale_scores"])
        lines.append(f"| {r['dataset']} | {_fmt(r['score'])} | {accs} | {r['rescale_spread']:.1f} |")
    return "\n".join(lines)


def plot(rows, path, args=None):
    """Heat map of the accuracy gap to VW's defaults (pt), data sets x learners (classification)."""
    rows = first_shuffle(rows)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rs = [r for r in rows if r["task"] != "regression"]
    sets = list(dict.fromkeys(r["dataset"] for r in rs))
    learners = list(dict.fromkeys(r["learner"] for r in rs))
    grid = np.full((len(sets), len(learners)), np.nan)
    for r in rs:
        if r["gap_to_vw"] is not None:
            grid[sets.index(r["dataset"]), learners.index(r["learner"])] = r["gap_to_vw"]
    fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(learners) + 3), 0.5 * len(sets) + 2.5))
    cmap = plt.get_cmap("RdBu").with_extremes(bad="lightgrey")
    im = ax.imshow(np.clip(grid, -20, 20), cmap=cmap, vmin=-20, vmax=20, aspect="auto")
    for i in range(len(sets)):
        for j in range(len(learners)):
            if np.isfinite(grid[i, j]):
                ax.text(
                    j,
                    i,
                    f"{round(grid[i, j]):d}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if abs(grid[i, j]) > 12 else "black",
                )
    ax.set_xticks(range(len(learners)), learners, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(sets)), sets, fontsize=8)
    fig.colorbar(im, ax=ax, label="test accuracy minus VW defaults (pt, clipped at ±20)")
    ax.set_title("zoo: accuracy gap to Vowpal Wabbit's defaults (one pass, raw data, 70/30); grey: not run")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report_markdown(rows, meta, png=None):
    """The whole report: summary, classification and regression tables, RFD0-SON's rescaling spread."""
    parts = [
        "# Zoo benchmark: every learner with its CLI defaults on raw data",
        "",
        (
            f"Command: `{meta['command']}` ({meta['seconds']:.0f} s). One seeded shuffle per data set (the first "
            "one where `--shuffles` asks for more), 70 % for one pass of training, 30 % for testing. The CLI "
            "defaults include each learner's default streaming scaler (`streamlearn learners`; MaxAbs for "
            "some), as `streamlearn train` without `--scale`. VW: Vowpal Wabbit's defaults, one pass over the same "
            "rows in the same order (binary labels -1/+1 with VW's default squared loss, `--oaa K` for K "
            "classes). Ceiling: StandardScaler + LogisticRegressionCV / RidgeCV, tuned by cross-validation "
            "(a ceiling, not a peer)."
        ),
        "",
    ]
    if meta.get("scale", "default") != "default":
        parts += [
            (
                f"Every learner runs behind the streaming `{meta['scale']}` scaler (`--scale {meta['scale']}`: "
                "statistics of the rows before each row, no look-ahead); VW and the ceiling as above."
            ),
            "",
        ]
    if meta.get("skipped_datasets"):
        parts += ["Not run here: " + "; ".join(f"{k} ({v})" for k, v in meta["skipped_datasets"].items()), ""]
    parts += [
        "## Classification summary",
        "",
        (
            "Gap: test accuracy minus VW defaults' (pt); below majority: data sets where the learner's test "
            "accuracy is under the majority-class rate."
        ),
        "",
        summary_markdown(rows),
        "",
    ]
    shuffles = shuffles_markdown(rows)
    if shuffles:
        k = len({r.get("shuffle", 0) for r in rows})
        parts += [
            f"## Over {k} shuffles",
            "",
            (
                f"The same, repeated on {k} seeded shuffles of every data set (`--shuffles {k}`; the other tables "
                "show the first): a run is one learner on one data set and one shuffle; on average: the mean "
                "over the shuffles. One shuffle's gap of a few tenths of a point is within what the shuffle "
                "moves."
            ),
            "",
            shuffles,
            "",
        ]
    if png:
        parts += [f"![accuracy gap to VW]({png})", ""]
    parts += [
        "## Test accuracy (%)",
        "",
        ("Bold: below the majority-class rate; n/a: not run (too many features for a quadratic-cost learner)."),
        "",
        scores_markdown(rows, "classification"),
        "",
    ]
    reg = scores_markdown(rows, "regression")
    if reg:
        parts += ["## Regression: test RMSE", "", "Bold: worse than predicting the training mean.", "", reg, ""]
    resc = rescale_markdown(rows)
    if resc:
        parts += [
            f"## {RESCALE_LEARNER}: spread over column rescalings",
            "",
            "Every column multiplied by a random factor 10^U(-3, 3), same split and order.",
            "",
            resc,
            "",
        ]
    return "\n".join(parts)


# ------------------------------------------------------------------------------------ documentation tables

#: kinds of data of the "which learner" table: (label, test on a data set's first row)
DATA_KINDS = [
    (
        "binary, dense raw columns (mixed units)",
        lambda r: r["task"] == "binary" and not r.get("sparse") and r["majority"] < 0.9,
    ),
    ("binary, sparse (one-hot, bag of words)", lambda r: r["task"] == "binary" and r.get("sparse")),
    ("binary, skewed classes (>= 90 % one class)", lambda r: r["task"] == "binary" and r["majority"] >= 0.9),
    ("multiclass", lambda r: r["task"] == "multiclass"),
    ("regression", lambda r: r["task"] == "regression"),
]


def learner_choice_table(rows, top=3):
    """Markdown: per kind of data, the zoo sets of that kind and the learners with the best median score
    (accuracy; RMSE relative to VW's for regression) over them, with CLI defaults. A learner that does worse
    than the trivial predictor (the majority class; the training mean for regression) on one of the sets is
    ranked after every learner that never does, whatever its median.

    >>> rows = [{"dataset": "a", "task": "multiclass", "learner": n, "score": s, "majority": 0.3, "vw": 0.8,
    ...          "ceiling": 0.9, "note": ""} for n, s in (("x", 0.7), ("y", 0.85))]
    >>> print(learner_choice_table(rows).splitlines()[2])
    | multiclass | a | **y** (85.0 %, VW 80.0 %); x (70.0 %) | 90.0 % |
    >>> rows = [dict(rows[0], score=0.95), rows[1], dict(rows[0], dataset="b", score=0.29),
    ...         dict(rows[1], dataset="b", score=0.31)]  # x has the better median but is under 0.3 on b
    >>> print(learner_choice_table(rows).splitlines()[2])
    | multiclass | a, b | **y** (58.0 %, VW 80.0 %); x (62.0 %) | 90.0 % |
    """
    rows = first_shuffle(rows)
    lines = [
        (
            "| data | zoo data sets | best learners with CLI defaults (median test score) | tuned batch "
            "ceiling (median) |"
        ),
        "|---|---|---|---:|",
    ]
    for label, test in DATA_KINDS:
        sets = [
            d for d in dict.fromkeys(r["dataset"] for r in rows) if test(next(r for r in rows if r["dataset"] == d))
        ]
        if not sets:
            continue
        reg = label == "regression"
        mine = [r for r in rows if r["dataset"] in sets]
        ranked = []
        for name in dict.fromkeys(r["learner"] for r in mine):
            rs = [r for r in mine if r["learner"] == name]
            if any(r["score"] is None for r in rs) or not rs:
                continue
            trivial = [r.get("majority") for r in rs]
            under = any(t is not None and (r["score"] > t if reg else r["score"] < t) for r, t in zip(rs, trivial))
            if reg:  # RMSE relative to VW's defaults (lower is better), comparable across data sets
                rel = [r["score"] / r["vw"] if r["vw"] else float("inf") for r in rs]
                ranked.append((under, float(np.median(rel)), name, None))
            else:
                vw = [r["vw"] for r in rs if r["vw"] is not None]
                ranked.append(
                    (
                        under,
                        -float(np.median([r["score"] for r in rs])),
                        name,
                        float(np.median(vw)) if len(vw) == len(rs) else None,
                    )
                )
        ranked.sort()
        cells = []
        for i, (_, key, name, vw) in enumerate(ranked[:top]):
            if reg:
                text = f"{name} (RMSE {key:.2f} x VW's)"
            else:
                text = f"{name} ({-100 * key:.1f} %" + (f", VW {100 * vw:.1f} %)" if i == 0 and vw is not None else ")")
            cells.append(f"**{text.split(' (')[0]}** (" + text.split(" (", 1)[1] if i == 0 else text)
        ceil = [next(r for r in mine if r["dataset"] == d)["ceiling"] for d in sets]
        ceil = [c for c in ceil if c is not None]
        if reg:
            vws = [next(r for r in mine if r["dataset"] == d)["vw"] for d in sets]
            cell = (
                f"RMSE {np.median([c / v for c, v in zip(ceil, vws)]):.2f} x VW's"
                if ceil and len(ceil) == len(vws) and all(vws)
                else "–"
            )
        else:
            cell = f"{100 * np.median(ceil):.1f} %" if ceil else "–"
        lines.append(f"| {label} | {', '.join(sets)} | {'; '.join(cells)} | {cell} |")
    return "\n".join(lines)


def replace_between_markers(text, marker, table):
    r"""Put ``table`` between ``<!-- marker:start -->`` and ``<!-- marker:end -->`` in ``text``.

    >>> replace_between_markers("a\n<!-- t:start -->\nold\n<!-- t:end -->\nb", "t", "new")
    'a\n<!-- t:start -->\nnew\n<!-- t:end -->\nb'
    """
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"markers {start} ... {end} not found in the page")
    return text[: i + len(start)] + "\n" + table + "\n" + text[j:]
