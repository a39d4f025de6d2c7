"""The main job (``make run`` / ``streamlearn demo``): every registered classification learner, one pass
over the bundled a9a with progressive validation, then test accuracy on a9a.t, timing and a PNG of the
online error curves.

Each learner is first warmed up by the same calls on a few rows (progressive validation, then scoring)
so that µs/example measures learning, not numba's compilation (or cache load); the warm-up model is
thrown away.
"""

import time

HELP = "every learner, one pass over the bundled a9a, scored on a9a.t (the main job of 'make run')"
WARM_UP_ROWS = 64
COLUMNS = ["learner", "online_error_rate", "average_loss", "test_accuracy", "us_per_example", "nnz_weights"]


def add_arguments(parser):
    parser.add_argument("--learners", metavar="A,B,...", default=None,
                        help="comma-separated learner names (default: every demo learner)")


def run(args):
    from sklearn.base import clone

    from ...datasets import load_a9a
    from ...learners import LEARNERS, make_learner
    from .. import progressive_validation

    X, y, X_test, y_test = load_a9a()
    names = args.learners.split(",") if args.learners else [n for n, s in LEARNERS.items() if s.demo]
    rows = []
    args._curves = {}
    for name in names:
        learner = make_learner(name.strip())
        # warm-up on the same code path (progressive validation, then scoring) over a few rows, so that
        # us_per_example measures learning, not numba compiling or loading the kernels
        warm = clone(learner)
        progressive_validation(warm, (X[:WARM_UP_ROWS], y[:WARM_UP_ROWS]), classes=[-1, 1])
        warm.score(X_test[:WARM_UP_ROWS], y_test[:WARM_UP_ROWS])
        t0 = time.perf_counter()
        result = progressive_validation(learner, (X, y), classes=[-1, 1], progress=args.progress)
        seconds = time.perf_counter() - t0
        rows.append({"learner": name, "online_error_rate": result.online_error_rate,
                     "average_loss": result.average_loss, "test_accuracy": float(learner.score(X_test, y_test)),
                     "us_per_example": 1e6 * seconds / result.n_examples, "nnz_weights": learner.nnz_weights,
                     "loss": result.loss})
        args._curves[name] = result
    return rows


def plot(rows, path, args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = getattr(args, "_curves", {})
    fig, ax = plt.subplots(figsize=(12, 6))
    colors = plt.get_cmap("tab20").colors
    styles = ["-", "--", ":"]
    for i, (name, result) in enumerate(curves.items()):
        curve = result.curve
        ax.plot(curve["n_examples"], curve["error_rate"], color=colors[i % 20], linestyle=styles[(i // 20) % 3],
                linewidth=1.2, label=f"{name} ({result.online_error_rate:.3f})")
    ax.set_xscale("log")
    ax.set_xlabel("examples seen (a9a, one pass)")
    ax.set_ylabel("online (progressive) error rate")
    ax.set_ylim(0.1, 0.5)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1 if len(curves) <= 18 else 2,
              title="learner (final online error)", title_fontsize=8)
    ax.set_title("streamlearn demo: progressive validation on a9a")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
