"""The main job (``make run`` / ``streamlearn demo``): every registered classification learner, one pass
over the bundled a9a with progressive validation, then test accuracy on a9a.t, timing and a PNG of the
online error curves.

Each learner is first warmed up by the same calls on a few rows (progressive validation, then scoring)
so that µs/example measures learning, not numba's compilation (or cache load); the warm-up model is
thrown away.

``streamlearn demo --write-data DIR`` writes the bundled files as plain LIBSVM text (``DIR/a9a`` and
``DIR/a9a.t``) instead, for the command-line quickstart.
"""

import time
from pathlib import Path

HELP = "every learner, one pass over the bundled a9a, scored on a9a.t (the main job of 'make run')"
WARM_UP_ROWS = 64
COLUMNS = ["learner", "online_error_rate", "average_loss", "test_accuracy", "us_per_example", "nnz_weights"]


def add_arguments(parser):
    parser.add_argument(
        "--learners",
        metavar="A,B,...",
        default=None,
        help="comma-separated learner names (default: every demo learner)",
    )
    parser.add_argument("--markdown", metavar="PATH", default=None, help="also write the table as Markdown")
    parser.add_argument(
        "--write-data",
        metavar="DIR",
        default=None,
        help="write the bundled a9a training and test files to DIR/a9a and DIR/a9a.t (LIBSVM "
        "text) and stop; existing files are never overwritten",
    )


def write_data(directory) -> list[Path]:
    """Write the bundled a9a files as plain LIBSVM text to ``directory/a9a`` and ``directory/a9a.t``.

    Refuses (``ValueError``) when either file exists; each file is written whole or not at all.
    Returns the two paths.
    """
    import lzma
    import os
    import shutil

    from ..datasets import bundled_path

    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"--write-data: {directory} is not a directory")
    targets = {"a9a.xz": directory / "a9a", "a9a.t.xz": directory / "a9a.t"}
    for target in targets.values():
        if target.exists():
            raise ValueError(f"--write-data: {target} exists; remove it or choose another directory")
    directory.mkdir(parents=True, exist_ok=True)
    for name, target in targets.items():
        tmp = target.with_name(target.name + ".part")
        with lzma.open(bundled_path(name)) as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(tmp, target)
    return list(targets.values())


def run(args):
    from sklearn.base import clone

    from ..datasets import load_a9a
    from ..learners import LEARNERS, make_learner, scaled_learner
    from ..evaluation import progressive_validation

    if getattr(args, "write_data", None):
        paths = write_data(args.write_data)
        return [{"file": str(p), "bytes": p.stat().st_size} for p in paths]
    X, y, X_test, y_test = load_a9a()
    names = args.learners.split(",") if args.learners else [n for n, s in LEARNERS.items() if s.demo]
    rows = []
    args._curves = {}
    for name in names:
        learner = scaled_learner(name.strip(), make_learner(name.strip()))  # as 'streamlearn train' runs it
        # warm-up on the same code path (progressive validation, then scoring) over a few rows, so that
        # us_per_example measures learning, not numba compiling or loading the kernels
        warm = clone(learner)
        progressive_validation(warm, (X[:WARM_UP_ROWS], y[:WARM_UP_ROWS]), classes=[-1, 1])
        warm.score(X_test[:WARM_UP_ROWS], y_test[:WARM_UP_ROWS])
        t0 = time.perf_counter()
        result = progressive_validation(learner, (X, y), classes=[-1, 1], progress=args.progress)
        seconds = time.perf_counter() - t0
        rows.append(
            {
                "learner": name,
                "online_error_rate": result.online_error_rate,
                "average_loss": result.average_loss,
                "test_accuracy": float(learner.score(X_test, y_test)),
                "us_per_example": 1e6 * seconds / result.n_examples,
                "nnz_weights": learner.nnz_weights,
                "loss": result.loss,
            }
        )
        args._curves[name] = result
    if getattr(args, "markdown", None):
        _write_markdown(rows, args.markdown)
    return rows


def _write_markdown(rows, path):
    lines = [
        "# Every learner, one pass over a9a",
        "",
        "Command: `streamlearn demo` (default parameters; one pass over the bundled a9a with progressive "
        "validation, then the test accuracy on a9a.t). Times are per example on the machine that ran it.",
        "",
        "| learner | online error | test accuracy | µs/example | non-zero weights |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['learner']}` | {r['online_error_rate']:.4f} | {r['test_accuracy']:.4f} | "
            f"{r['us_per_example']:.2f} | {r['nnz_weights']} |"
        )
    Path(path).write_text("\n".join(lines) + "\n")


#: Panels of the demo figure: learner name -> family (learners not listed go by their subpackage).
FAMILIES = {
    "first order": ["perceptron", "perceptron-nobias", "pa", "pa1", "pa2", "ogd", "ogd-hinge", "ogd-squared"],
    "scale-free (normalized adaptive)": ["nag", "nag-hinge"],
    "sparse (L1)": ["truncation", "tg", "fobos", "rda", "ftrl"],
    "confidence-weighted, Pegasos": ["cw", "cw-diag", "arow", "scw1", "scw2", "pegasos"],
    "second order": ["adagrad", "full-on", "fd-son", "pfd-son", "rp-son", "oja-son", "rfd-son", "rfd0-son"],
    "factorization machines": ["fm", "ccfm-ogd", "occfm"],
}


def _family(name):
    for family, members in FAMILIES.items():
        if name in members:
            return family
    from ..learners import LEARNERS

    spec = LEARNERS.get(name)
    package = spec.target.split(":")[0].split(".")[1] if spec else ""
    return {"second_order": "second order", "facto": "factorization machines"}.get(package, "other")


def plot(rows, path, args):
    """One panel per family of learners, each curve labelled with its final online error; the error axis
    of every panel spans all of its curves from the 100th example on (earlier points are noise)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = getattr(args, "_curves", {})
    groups = {}
    for name, result in curves.items():
        groups.setdefault(_family(name), []).append((name, result))
    if not groups:
        return
    ncols = min(3, len(groups))
    nrows = -(-len(groups) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.9 * nrows), squeeze=False)
    colors = plt.get_cmap("tab10").colors
    start = 100
    for ax, (family, members) in zip(axes.flat, groups.items()):
        top, bottom, last = 0.0, 1.0, start + 1
        for i, (name, result) in enumerate(members):
            n, err = result.curve["n_examples"], result.curve["error_rate"]
            keep = n >= start
            if keep.any():
                top, bottom = max(top, float(err[keep].max())), min(bottom, float(err[keep].min()))
                last = max(last, int(n[-1]))
            ax.plot(
                n,
                err,
                color=colors[i % 10],
                linestyle="-" if i < 10 else "--",
                linewidth=1.3,
                label=f"{name} ({result.online_error_rate:.3f})",
            )
        ax.set_xscale("log")
        ax.set_xlim(start, last)
        pad = 0.05 * max(top - bottom, 0.01)
        ax.set_ylim(max(0.0, bottom - pad), min(1.0, top + pad))
        ax.set_title(family, fontsize=10)
        ax.set_xlabel("examples seen (a9a, one pass)", fontsize=8)
        ax.set_ylabel("online error rate", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="best", title="final online error", title_fontsize=7)
    for ax in list(axes.flat)[len(groups) :]:
        ax.set_visible(False)
    fig.suptitle("streamlearn demo: progressive validation on a9a, by family of learners", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
