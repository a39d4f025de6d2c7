"""RFD paper (Luo, Chen, Zhang, Li, Zhang, JMLR 2019) Table 2 / Table 3: second-order online learners, one pass, best alpha0.

Protocol (Sec. 6, Algorithms §1.1): random 70/30 split of the data (the split's draw is not stated in
the paper: a uniform permutation seeded by ``--seed + split``), one pass over the 70 % in the permuted
order, squared loss, C = 1, eta_t = 1/t, alpha0 on {1e-3, ..., 1e6} for every method (RFD0: alpha0 = 0,
untuned), sketch sizes (5, 10, 20) when d < 1000 (a9a) else (20, 30, 50) (farm-ads), FULL-ON when
d <= FULL_ON_MAX_FEATURES, and the slab projection of Alg. 6 / App. A as printed (``--slab current``: the
updated point is projected onto the slab of the example just learned; Sec. 6 says the experiments ran the
fast algorithm, Alg. 5/6; ``--slab next`` is Alg. 3's reading, the estimators' default). Each row:
best-alpha0 test accuracy averaged over the splits (the best alpha0 is chosen on the mean over splits;
``test_accuracy_best_per_split`` is the mean over splits of each split's best alpha0, i.e. the paper's
statistic computed on every split and averaged), the paper's figure, seconds per example at that alpha0
(Table 3's "average iteration cost"), and the accuracy at every alpha0 (``accuracy_by_alpha0``, ``alpha0_spread``:
max - min over the grid, the robustness figure; ``alpha0_spread_le_1e4``: the same over alpha0 <= 1e4;
``diverged_alpha0``: grid points where a split's pass diverged: their accuracy is NaN and the best alpha0
and the spreads leave them out).
``online_error_rate`` is the online (progressive validation) error rate of the pass at the best alpha0, in %
(``--curves PNG`` plots it against the examples seen on the first split, Figures 5-11 analogues).
``final_alpha`` is the alpha of ``H = B^T B + alpha I`` after the pass at the best alpha0 (for RFD0: the
regulariser RFD grew on its own, sum(delta) / 2). Since alpha >= alpha0 for every sketched method (RFD only
adds to it), every step is at most ``|g| / alpha0``: once alpha0 is well above what RFD grows on its own,
RFD-SON behaves like FD-SON with a huge regulariser and all methods freeze near w = 0 (docs/readme).
BLAS is limited to one thread during the runs (small eigendecompositions are much slower threaded on a
busy machine).

    streamlearn experiment rfd-table2 --data a9a --splits 5 --json --plot table2.png
"""

import os
import time

import numpy as np

from ._options import comma_numbers, known_names, positive_int

HELP = "RFD paper Table 2/3: AdaGrad, FULL-ON and sketched online Newton (FD/PFD/RP/Oja/RFD/RFD0), best alpha0"
COLUMNS = [
    "method",
    "ell",
    "best_alpha0",
    "test_accuracy",
    "test_accuracy_best_per_split",
    "paper_accuracy",
    "online_error_rate",
    "alpha0_spread",
    "alpha0_spread_le_1e4",
    "final_alpha",
    "seconds_per_example",
    "paper_seconds",
]

ALPHA_GRID = [10.0**k for k in range(-3, 7)]

# Table 2 (accuracy %) and Table 3 (iteration cost), Algorithms §1.1; key (method, sketch index 0-2)
_PAPER = {
    "a9a": {
        "acc": {
            ("adagrad", None): 83.4783,
            ("full-on", None): 83.8264,
            "fd": [83.6524, 83.6728, 83.6728],
            "pfd": [83.6728, 83.7138, 83.6626],
            "rp": [83.4374, 83.9492, 83.7650],
            "oja": [83.6831, 83.6319, 83.5091],
            "rfd": [83.6319, 83.6831, 83.9390],
            "rfd0": [83.2429, 83.2634, 83.2736],
        },
        "sec": {
            ("adagrad", None): 9.8279e-05,
            ("full-on", None): 2.3141e-04,
            "fd": [2.8552e-04, 2.7276e-04, 3.4899e-04],
            "pfd": [2.6090e-04, 2.8206e-04, 3.2096e-04],
            "rp": [1.3597e-04, 2.7308e-04, 3.3307e-04],
            "oja": [1.5500e-04, 1.6719e-04, 1.6631e-04],
            "rfd": [2.8549e-04, 3.1813e-04, 3.3405e-04],
            "rfd0": [2.7466e-04, 1.9542e-04, 2.3561e-04],
        },
    },
    "farm-ads": {
        "acc": {
            ("adagrad", None): 89.3805,
            ("full-on", None): None,
            "fd": [89.7023, 89.9437, 89.9437],
            "pfd": [90.0241, 89.8632, 90.0241],
            "rp": [88.8174, 89.7023, 89.4610],
            "oja": [89.0587, 89.1392, 89.1392],
            "rfd": [89.7828, 89.8632, 90.3459],
            "rfd0": [87.6911, 88.8174, 88.8978],
        },
        "sec": {
            ("adagrad", None): 3.1976e-04,
            ("full-on", None): None,
            "fd": [1.6387e-03, 3.2000e-03, 5.1365e-03],
            "pfd": [2.4524e-02, 3.2372e-02, 5.4829e-02],
            "rp": [7.3933e-04, 3.2000e-03, 5.1365e-03],
            "oja": [1.3061e-03, 2.8887e-03, 4.4386e-03],
            "rfd": [2.0484e-03, 3.8129e-03, 5.2458e-03],
            "rfd0": [2.0843e-03, 3.7857e-03, 5.5628e-03],
        },
    },
}
_SKETCH_METHODS = ["fd", "pfd", "rp", "oja", "rfd", "rfd0"]


def add_arguments(parser):
    parser.add_argument(
        "--data",
        required=True,
        metavar="PATH",
        help="svmlight file, or 'a9a' (bundled training file) or 'farm-ads' (shared data dir)",
    )
    parser.add_argument("--splits", type=positive_int, default=5, help="random 70/30 splits (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first split (default 0)")
    parser.add_argument(
        "--ells", default=None, metavar="A,B,C", help="sketch sizes (default 5,10,20 when d < 1000, else 20,30,50)"
    )
    parser.add_argument(
        "--methods",
        default=None,
        metavar="M,...",
        help="subset of adagrad,full-on,fd,pfd,rp,oja,rfd,rfd0 (default: all)",
    )
    parser.add_argument("--alphas", default=None, metavar="A,B,...", help="alpha0 grid (default 1e-3..1e6)")
    parser.add_argument(
        "--file-order",
        action="store_true",
        help="one split: the first 70 %% of the rows in file order for training, the rest for test "
        "(Sec. 6 does not say the split is random); --splits is ignored",
    )
    parser.add_argument(
        "--curves",
        default=None,
        metavar="PNG",
        help="online error rate vs examples seen on the first split (Figures 5-11 analogues): "
        "one panel per method and sketch size, alpha0 in {1e-2, 1, 1e2, 1e4} and the best "
        "one, beside RFD0-SON (dashed)",
    )
    parser.add_argument(
        "--slab",
        choices=["current", "next"],
        default="current",
        help="slab of the projection: 'current' (Alg. 6 / App. A as printed, the fast algorithm "
        "of the paper's experiments; default) or 'next' (Alg. 3, the estimators' default)",
    )


def _load(spec):
    from ..datasets import load_a9a, load_farm_ads, load_svmlight

    if spec == "a9a":
        X, y, _, _ = load_a9a()
        return X, y, "a9a"
    if spec == "farm-ads":
        X, y = load_farm_ads()
        return X, y, "farm-ads"
    X, y = load_svmlight(spec)
    name = "farm-ads" if "farm" in str(spec) else ("a9a" if "a9a" in str(spec) else str(spec))
    return X, y, name


def _make(method, ell, alpha0, slab):
    from ..second_order import AdaGrad, OnlineNewtonStep, SketchedOnlineNewton

    # the published algorithms on the files as given: no scale safeguard (pinned, whatever the defaults)
    if method == "adagrad":
        return AdaGrad(alpha0=alpha0, slab=slab, safeguard="paper")
    if method == "full-on":
        return OnlineNewtonStep(alpha0=alpha0, slab=slab, safeguard="paper")
    if method == "rfd0":
        return SketchedOnlineNewton(sketch="rfd", ell=ell, alpha0=0.0, slab=slab, safeguard="paper")
    return SketchedOnlineNewton(sketch=method, ell=ell, alpha0=alpha0, slab=slab, safeguard="paper")


def _check_options(args):
    """``(ells or None, alphas, methods)`` from the options; ValueError naming the option for a bad value."""

    if getattr(args, "seed", 0) < 0:
        raise ValueError(f"--seed must be >= 0; got {args.seed}.")
    ells = comma_numbers("--ells", args.ells, int, "integers")
    if ells is not None and min(ells) < 1:
        raise ValueError(f"--ells: every sketch size must be >= 1; got {ells}.")
    alphas = comma_numbers("--alphas", args.alphas)
    if alphas is not None and not all(a >= 0 and np.isfinite(a) for a in alphas):
        raise ValueError(f"--alphas: every alpha0 must be a finite number >= 0; got {alphas}.")
    known = ["adagrad", "full-on"] + _SKETCH_METHODS
    methods = known_names("--methods", args.methods, known, "method") if args.methods else list(known)
    return ells, alphas or ALPHA_GRID, methods


def run(args):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _run(args)


def split_indices(n, split, seed=0):
    """``(train, test)`` row indices of the ``split``-th 70/30 split of ``n`` rows (the rows of the uniform
    permutation seeded by ``seed + split``: the first ``round(0.7 n)`` train, in that order; the rest test).

    >>> tr, te = split_indices(10, 0)
    >>> len(tr), len(te), sorted([*tr, *te]) == list(range(10))
    (7, 3, True)
    """
    perm = np.random.default_rng(seed + split).permutation(n)
    n_train = int(round(0.7 * n))
    return perm[:n_train], perm[n_train:]


def _run(args):
    from ..second_order import FULL_ON_MAX_FEATURES

    ells, alphas, methods = _check_options(args)  # before the data are read
    X, y, name = _load(args.data)
    labels = np.unique(y)
    if set(labels.tolist()) not in ({-1.0, 1.0}, {0.0, 1.0}):
        shown = ", ".join(f"{v:g}" for v in labels[:10]) + (", ..." if labels.shape[0] > 10 else "")
        raise ValueError(
            f"--data {name}: rfd-table2 is a binary classification experiment (labels -1/+1 or 0/1, as a9a and "
            f"farm-ads); the file has {labels.shape[0]} distinct label{'s' if labels.shape[0] != 1 else ''} ({shown})."
        )
    y = np.where(y > 0, 1, -1)
    d = X.shape[1]
    ells = ells or ([5, 10, 20] if d < 1000 else [20, 30, 50])
    if d > FULL_ON_MAX_FEATURES and "full-on" in methods:
        methods.remove("full-on")
    paper = _PAPER.get(name)
    configs = []
    for m in methods:
        if m in ("adagrad", "full-on"):
            configs.append((m, None, alphas))
        else:
            for ell in ells:
                configs.append((m, ell, [0.0] if m == "rfd0" else alphas))
    acc = {(m, ell, a): [] for m, ell, grid in configs for a in grid}
    sec = {(m, ell, a): [] for m, ell, grid in configs for a in grid}
    fin = {(m, ell, a): [] for m, ell, grid in configs for a in grid}
    online = {(m, ell, a): [] for m, ell, grid in configs for a in grid}
    curves = {}
    file_order = getattr(args, "file_order", False)  # run() may get a Namespace built without these options
    n_splits = 1 if file_order else args.splits
    for split in range(n_splits):
        if file_order:
            n_tr = int(round(0.7 * X.shape[0]))
            tr, te = np.arange(n_tr), np.arange(n_tr, X.shape[0])
        else:
            tr, te = split_indices(X.shape[0], split, args.seed)
        n_train = len(tr)
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
        for m, ell, grid in configs:
            for a in grid:
                est = _make(m, ell, a, args.slab)
                est.partial_fit(Xtr[:2], ytr[:2], classes=[-1, 1])  # compile / load the cache outside timing
                est = _make(m, ell, a, args.slab)
                t0 = time.perf_counter()
                try:
                    scores = est.partial_fit_scores(Xtr, ytr, classes=[-1, 1])
                except FloatingPointError:  # diverged (tiny alpha0): no model, recorded as NaN
                    acc[(m, ell, a)].append(float("nan"))
                    online[(m, ell, a)].append(float("nan"))
                    continue
                sec[(m, ell, a)].append((time.perf_counter() - t0) / n_train)
                mistakes = np.cumsum(est.scores_to_labels(scores) != ytr)  # progressive validation's count
                online[(m, ell, a)].append(100.0 * mistakes[-1] / n_train)
                if split == 0:
                    at = np.unique(np.geomspace(1, n_train, 200).astype(int))
                    curves[(m, ell, a)] = (at, 100.0 * mistakes[at - 1] / at)
                acc[(m, ell, a)].append(100.0 * float(est.score(Xte, yte)))
                if hasattr(est, "alpha_"):
                    fin[(m, ell, a)].append(float(est.alpha_[0]))
    rows = []
    for m, ell, grid in configs:
        means = {a: float(np.mean(acc[(m, ell, a)])) for a in grid}  # NaN when a split diverged
        diverged = [a for a in grid if not np.isfinite(means[a])]
        finite = [a for a in grid if np.isfinite(means[a])] or grid
        best = max(finite, key=lambda a: means[a])
        pa, ps = _paper_figures(paper, name, m, ell)
        per_split_best = np.nanmax(np.array([acc[(m, ell, a)] for a in finite]), axis=0)
        rows.append(
            {
                "method": m,
                "ell": ell,
                "best_alpha0": best,
                "test_accuracy": means[best],
                "test_accuracy_std": float(np.std(acc[(m, ell, best)])),
                "test_accuracy_best_per_split": float(np.mean(per_split_best)),
                "accuracy_by_split": [float(v) for v in acc[(m, ell, best)]],
                "paper_accuracy": pa,
                "online_error_rate": float(np.mean(online[(m, ell, best)])),
                "online_error_by_alpha0": {f"{a:g}": float(np.mean(online[(m, ell, a)])) for a in grid},
                "alpha0_spread": _spread([means[a] for a in finite]),
                "alpha0_spread_le_1e4": _spread([means[a] for a in finite if a <= 1e4]),
                "diverged_alpha0": diverged,
                "final_alpha": float(np.mean(fin[(m, ell, best)])) if fin[(m, ell, best)] else None,
                "seconds_per_example": float(np.mean(sec[(m, ell, best)])) if sec[(m, ell, best)] else None,
                "paper_seconds": ps,
                "accuracy_by_alpha0": {f"{a:g}": means[a] for a in grid},
                "data": name,
                "splits": n_splits,
                "n_train": n_train,
                "n_features": d,
                "slab": args.slab,
                "split_order": "file" if file_order else "random",
            }
        )
    if getattr(args, "curves", None):  # written aside, then renamed (the command line checked it before the run)
        out = getattr(args, "curves_output", None)
        if out is None:
            from .._atomic import Output

            out = Output(args.curves, what="curves figure")
        suffix = getattr(out, "suffix", None) or os.path.splitext(args.curves)[1] or ".png"
        with out.path_for_writing(suffix=suffix) as tmp:
            plot_curves(rows, curves, tmp)
    return rows


CURVE_ALPHAS = [1e-2, 1.0, 1e2, 1e4]


def plot_curves(rows, curves, path):
    """Online error rate (%) vs examples seen on the first split: one panel per (method, sketch size) with the
    alpha0 in ``CURVE_ALPHAS`` and the best one, and RFD0-SON at that size dashed (the paper's Figures 5-11:
    RFD0 against FULL-ON and against each SON method over alpha0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    best = {(r["method"], r["ell"]): r["best_alpha0"] for r in rows}
    ells = sorted({r["ell"] for r in rows if r["ell"] is not None})
    panels = [(m, e) for m, e in best if m != "rfd0"]
    ncol = max(len(ells), 1)
    nrow = len({m for m, _ in panels})
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 2.8 * nrow), squeeze=False)
    methods = list(dict.fromkeys(m for m, _ in panels))
    for i, m in enumerate(methods):
        for j in range(ncol):
            ell = None if m in ("adagrad", "full-on") else ells[j]
            ax = axes[i][j]
            if (m, ell) not in best or (ell is None and j > 0):
                ax.axis("off")
                continue
            shown = [a for a in CURVE_ALPHAS if (m, ell, a) in curves]
            if best[(m, ell)] not in shown and (m, ell, best[(m, ell)]) in curves:
                shown.append(best[(m, ell)])
            for a in shown:
                at, err = curves[(m, ell, a)]
                ax.plot(at, err, lw=1, label=f"alpha0={a:g}" + (" (best)" if a == best[(m, ell)] else ""))
            ref = ell if ell is not None else (ells[len(ells) // 2] if ells else None)
            if ("rfd0", ref, 0.0) in curves:
                at, err = curves[("rfd0", ref, 0.0)]
                ax.plot(at, err, "k--", lw=1.2, label=f"RFD0 m={ref}")
            ax.set_xscale("log")
            ax.set_ylim(0, 60)
            ax.set_title(m + ("" if ell is None else f" m={ell}"), fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6)
            if j == 0:
                ax.set_ylabel("online error (%)", fontsize=8)
            if i == nrow - 1:
                ax.set_xlabel("examples", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _paper_figures(paper, name, method, ell):
    """Table 2 accuracy and Table 3 seconds for (method, ell); ell must be one of the paper's sketch sizes."""
    if paper is None:
        return None, None
    if ell is None:
        return paper["acc"].get((method, None)), paper["sec"].get((method, None))
    sizes = [5, 10, 20] if name == "a9a" else [20, 30, 50]
    if ell not in sizes:
        return None, None
    return paper["acc"][method][sizes.index(ell)], paper["sec"][method][sizes.index(ell)]


def _spread(values):
    return float(max(values) - min(values)) if values else None


def plot(rows, path, args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for r in rows:
        grid = r["accuracy_by_alpha0"]
        if len(grid) < 2:
            continue
        a = [float(k) for k in grid]
        err = [100.0 - v for v in grid.values()]
        label = r["method"] + ("" if r["ell"] is None else f" m={r['ell']}")
        ax.plot(a, err, marker="o", ms=3, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("alpha0")
    ax.set_ylabel("test error rate (%)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(f"test error vs alpha0 ({rows[0]['data'] if rows else ''}, one pass, squared loss)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
