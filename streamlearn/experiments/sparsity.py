"""Sparsity sweep (``streamlearn experiment sparsity``): accuracy versus number of non-zero weights for the five
sparse online learners (simple truncation, truncated gradient, L1-FOBOS, L1-RDA, FTRL-Proximal).

For every learner the regularisation knob (``theta`` for truncation, ``gravity`` for TG, ``l1`` for the
others) runs over a log grid; every setting makes one pass (progressive validation: online error rate)
over the training part of a random 70/30 split and is scored on the other 30 %: test accuracy and
``nnz_weights`` (non-zero coefficients and intercept of the materialised model). Results are averaged over
``--splits`` random splits (seeds 0, 1, ...) to tame the noise of a small test set. The other parameters
are fixed per learner (``FIXED``, on top of the estimator classes' own defaults, not the command line's, so
that changing those does not move the sweep: every learner has the logistic loss), picked once on farm-ads
with no regularisation from small grids (eta0 in {0.01, 0.05, 0.1, 0.5, 1}, gamma in {0.1, 1, 3, 10, 30},
alpha in {0.01, 0.03, 0.1, 0.3, 1}) by test accuracy on split 0; the knobs k = 10 and theta = inf of
truncation/TG are not tuned.

Two claims are checked (``summary``):

* the dual-averaging claim (Xiao, JMLR 2010): at equal test accuracy (within ``--tolerance``, default 0.5 pt) RDA is at least as sparse as
  FOBOS - for every FOBOS setting, RDA has a setting at least as accurate (minus the tolerance) with no
  more non-zero weights;
* FTRL-Proximal's best accuracy is within the tolerance of the best accuracy of all five learners.
"""

import json
import math

import numpy as np

from ._markdown import report_head, table_row, write_report

HELP = (
    "sparse learners (truncation, tg, fobos, rda, ftrl): lambda sweep, test accuracy vs non-zero weights "
    "after one pass on a 70/30 split (default data: farm-ads)"
)
COLUMNS = ["learner", "param", "value", "test_accuracy", "nnz_weights", "online_error_rate", "accuracy_sd"]

#: learner -> (fixed parameters, swept parameter, grid)
FIXED = {
    "truncation": ({"eta0": 0.5, "k": 10}, "theta", np.geomspace(1e-3, 3.0, 15)),
    "tg": ({"eta0": 0.5, "k": 10, "theta": math.inf}, "gravity", np.geomspace(1e-5, 1.0, 15)),
    "fobos": ({"eta0": 0.5}, "l1", np.geomspace(1e-5, 1.0, 15)),
    "rda": ({"gamma": 1.0}, "l1", np.geomspace(1e-4, 1.0, 15)),
    "ftrl": ({"alpha": 0.1, "beta": 1.0, "l2": 1.0}, "l1", np.geomspace(1e-2, 300.0, 15)),
}


def sweep_estimator(learner, value):
    """The estimator of ``learner`` at knob ``value``: its class with ``FIXED``'s parameters (the class defaults,
    not the command line's, for the rest).

    >>> sweep_estimator("rda", 0.01)
    RDAClassifier(l1=0.01)
    """
    from ..learners import LEARNERS

    fixed, param, _ = FIXED[learner]
    return LEARNERS[learner].cls()(**fixed, **{param: value})


def add_arguments(parser):
    parser.add_argument(
        "--data", metavar="PATH", default=None, help="LIBSVM file (default: farm-ads from the shared data directory)"
    )
    parser.add_argument("--n-features", type=int, default=None, help="feature count (default: from the file)")
    parser.add_argument("--test-fraction", type=float, default=0.3, help="held-out fraction (default 0.3)")
    parser.add_argument("--splits", type=int, default=5, help="random splits averaged (default 5)")
    parser.add_argument(
        "--tolerance", type=float, default=0.005, help="accuracy tolerance of the two checks (default 0.005 = 0.5 pt)"
    )
    parser.add_argument("--learners", metavar="A,B,...", default=",".join(FIXED), help=f"subset of {','.join(FIXED)}")
    parser.add_argument(
        "--markdown", metavar="PATH", default=None, help="also write the table and the two checks as Markdown to PATH"
    )


def _load(args):
    from ..datasets import load_farm_ads, load_svmlight

    if args.data is None:
        return load_farm_ads(), "farm-ads"
    return load_svmlight(args.data, n_features=args.n_features), str(args.data)


def run(args):
    from ..evaluation import progressive_validation

    names = [n.strip() for n in args.learners.split(",") if n.strip()]  # the options before the data are read
    if not names:
        raise ValueError(f"--learners: no learner in {args.learners!r}; expected some of {', '.join(FIXED)}.")
    for n in names:
        if n not in FIXED:
            raise ValueError(f"--learners: unknown learner {n!r}; expected some of {', '.join(FIXED)}.")
    if not 0.0 < args.test_fraction < 1.0 or args.splits < 1:
        raise ValueError(
            f"--test-fraction must be in (0, 1) and --splits >= 1; got {args.test_fraction}, {args.splits}."
        )
    if not args.tolerance >= 0:
        raise ValueError(f"--tolerance must be a number >= 0; got {args.tolerance}.")
    if args.n_features is not None and args.n_features < 1:
        raise ValueError(f"--n-features must be >= 1; got {args.n_features}.")
    (X, y), name = _load(args)
    classes = np.unique(y)
    splits = []
    for seed in range(args.splits):
        perm = np.random.default_rng(seed).permutation(X.shape[0])
        n_train = int(round((1.0 - args.test_fraction) * X.shape[0]))
        splits.append((perm[:n_train], perm[n_train:]))
    rows = []
    for learner in names:
        fixed, param, grid = FIXED[learner]
        for value in grid:
            acc, nnz, err = [], [], []
            for tr, te in splits:
                est = sweep_estimator(learner, float(value))
                result = progressive_validation(est, (X[tr], y[tr]), classes=classes)
                acc.append(float(est.score(X[te], y[te])))
                nnz.append(est.nnz_weights)
                err.append(result.online_error_rate)
            rows.append(
                {
                    "learner": learner,
                    "param": param,
                    "value": float(value),
                    "test_accuracy": float(np.mean(acc)),
                    "nnz_weights": float(np.mean(nnz)),
                    "online_error_rate": float(np.mean(err)),
                    "accuracy_sd": float(np.std(acc)),
                    "data": name,
                    "splits": args.splits,
                    "fixed": dict(fixed),
                }
            )
    args._summary = summary(rows, args.tolerance)
    if not getattr(args, "quiet", False) and not getattr(args, "json", False):
        for line in args._summary["lines"]:
            print(line)
    if args.markdown:
        _write_markdown(rows, args._summary, args.markdown, name, args)
    return rows


def summary(rows, tolerance=0.005):
    """The two checks of the module docstring on sweep ``rows``; returns a dict with ``rda_vs_fobos``,
    ``ftrl_vs_best`` (each with ``holds``) and printable ``lines``."""
    by = {}
    for r in rows:
        by.setdefault(r["learner"], []).append(r)
    out = {"tolerance": tolerance, "lines": []}
    if "rda" in by and "fobos" in by:
        pairs = []
        for f in by["fobos"]:
            ok = [r for r in by["rda"] if r["test_accuracy"] >= f["test_accuracy"] - tolerance]
            best = min(ok, key=lambda r: r["nnz_weights"]) if ok else None
            pairs.append(
                {
                    "fobos_l1": f["value"],
                    "fobos_accuracy": f["test_accuracy"],
                    "fobos_nnz": f["nnz_weights"],
                    "rda_l1": best and best["value"],
                    "rda_accuracy": best and best["test_accuracy"],
                    "rda_nnz": best and best["nnz_weights"],
                    "holds": bool(best is not None and best["nnz_weights"] <= f["nnz_weights"]),
                }
            )
        n_ok = sum(p["holds"] for p in pairs)
        out["rda_vs_fobos"] = {"holds": n_ok == len(pairs), "n_holds": n_ok, "n": len(pairs), "pairs": pairs}
        out["lines"].append(
            f"RDA at least as sparse as FOBOS at equal accuracy (+-{100 * tolerance:.1f} pt): "
            f"{n_ok}/{len(pairs)} FOBOS settings -> {'HOLDS' if n_ok == len(pairs) else 'FAILS'}"
        )
    best = {n: max(rs, key=lambda r: r["test_accuracy"]) for n, rs in by.items()}
    if "ftrl" in best:
        top = max(best.values(), key=lambda r: r["test_accuracy"])
        gap = top["test_accuracy"] - best["ftrl"]["test_accuracy"]
        out["ftrl_vs_best"] = {
            "holds": gap <= tolerance,
            "gap": gap,
            "best_learner": top["learner"],
            "best": {
                n: {"value": r["value"], "test_accuracy": r["test_accuracy"], "nnz_weights": r["nnz_weights"]}
                for n, r in best.items()
            },
        }
        out["lines"].append(
            f"FTRL best accuracy {best['ftrl']['test_accuracy']:.4f} vs best of all "
            f"{top['test_accuracy']:.4f} ({top['learner']}): gap {100 * gap:.2f} pt -> "
            f"{'HOLDS' if gap <= tolerance else 'FAILS'}"
        )
    return out


def _write_markdown(rows, summ, path, name, args):
    intro = [
        f"One pass over {100 * (1 - args.test_fraction):.0f} % of the rows (progressive validation), test on the "
        f"other {100 * args.test_fraction:.0f} %; mean over {args.splits} random splits (seeds 0..{args.splits - 1}). "
        "`nnz_weights` counts the non-zero coefficients and intercept of the materialised model.",
        "Fixed parameters: " + "; ".join(f"{n}: {json.dumps(FIXED[n][0])}" for n in FIXED),
    ]
    lines = report_head(f"Sparsity sweep on {name}", intro, summ["lines"], COLUMNS)
    for r in rows:
        cells = [
            r["learner"],
            r["param"],
            f"{r['value']:.3g}",
            f"{r['test_accuracy']:.4f}",
            f"{r['nnz_weights']:.1f}",
            f"{r['online_error_rate']:.4f}",
            f"{r['accuracy_sd']:.4f}",
        ]
        lines.append(table_row(cells))
    if "rda_vs_fobos" in summ:
        lines += [
            "",
            "## RDA vs FOBOS, setting by setting",
            "",
            "| FOBOS l1 | FOBOS acc | FOBOS nnz | sparsest RDA l1 with acc >= FOBOS acc - tol | RDA acc | RDA nnz | holds |",
            "|---|---|---|---|---|---|---|",
        ]
        for p in summ["rda_vs_fobos"]["pairs"]:
            rda = (
                f"{p['rda_l1']:.3g} | {p['rda_accuracy']:.4f} | {p['rda_nnz']:.1f}"
                if p["rda_l1"] is not None
                else "- | - | -"
            )
            lines.append(
                f"| {p['fobos_l1']:.3g} | {p['fobos_accuracy']:.4f} | {p['fobos_nnz']:.1f} | {rda} | "
                f"{'yes' if p['holds'] else 'no'} |"
            )
    write_report(path, lines)


def plot(rows, path, args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    by = {}
    for r in rows:
        by.setdefault(r["learner"], []).append(r)
    for learner, rs in by.items():
        rs = sorted(rs, key=lambda r: r["nnz_weights"])
        ax.plot(
            [r["nnz_weights"] for r in rs],
            [r["test_accuracy"] for r in rs],
            marker="o",
            ms=3,
            label=f"{learner} ({rs[0]['param']})",
        )
    ax.set_xscale("log")
    ax.set_xlabel("non-zero weights after one pass (log)")
    ax.set_ylabel("test accuracy")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    data = rows[0].get("data", "") if rows else ""
    ax.set_title(f"sparsity sweep, one pass, {data}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
