"""Text table and plot of a progressive-validation result (not public: use the result's methods)."""

from pathlib import Path

import numpy as np


def _fmt_value(v, width):
    """A label or prediction in ``width`` characters: integers as integers, floats to 4 decimals."""
    if isinstance(v, (bool, np.bool_)):
        s = str(v)
    elif isinstance(v, (int, np.integer)):
        s = str(int(v))
    elif isinstance(v, (float, np.floating)):
        s = f"{v:.0f}" if float(v).is_integer() and abs(v) < 1e9 else f"{v:.4f}"
    else:
        s = str(v)
    return s if len(s) <= width else s[: width - 1] + "~"


def _average(v):
    """An average to 6 decimals, or ``n.a.`` (as Vowpal Wabbit prints it) when it is over a weight of 0 (NaN)."""
    return "n.a." if v != v else f"{v:.6f}"


def format_table(result):
    classification = result.task == "classification"
    metric, since = ("error_rate", "since_last_error_rate") if classification else ("rmse", "since_last_rmse")
    # (header line 1, header line 2, width, key or callable)
    cols = [
        ("average", "loss", 10, lambda r: _average(r["average_loss"])),
        ("since", "last", 10, lambda r: _average(r["since_last_loss"])),
        ("online", "error" if classification else "rmse", 10, lambda r: _average(r[metric])),
        ("since", "last", 10, lambda r: _average(r[since])),
        ("example", "counter", 14, lambda r: f"{r['n_examples']:d}"),
        ("example", "weight", 14, lambda r: f"{r['sum_weights']:.1f}"),
        ("current", "label", 9, lambda r: _fmt_value(r["label"], 9)),
        ("current", "predict", 9, lambda r: _fmt_value(r["prediction"], 9)),
    ]

    def line(cells):
        return " ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(cells)).rstrip()

    out = [line([(c[0], c[2]) for c in cols]), line([(c[1], c[2]) for c in cols])]
    out += [line([(c[3](r), c[2]) for c in cols]) for r in result.checkpoints]
    out += [
        "",
        "finished run",
        f"learner = {result.learner}",
        f"number of examples = {result.n_examples}",
        f"weighted example sum = {result.sum_weights:g}",
        f"average loss ({result.loss}) = {_average(result.average_loss)}",
    ]
    if classification:
        out.append(f"online error rate = {_average(result.online_error_rate)} ({result.n_mistakes} mistakes)")
    else:
        out.append(f"online rmse = {_average(result.online_rmse)}")
    constant = getattr(result, "best_constant", None)
    if constant is not None:
        value = _fmt_value(constant, 40)
        if classification:
            out.append(f"best constant = {value} (error rate {result.best_constant_error_rate:.6f})")
        else:
            out.append(f"best constant = {value} (rmse {result.best_constant_rmse:.6f})")
    if result.nnz_weights is not None:
        out.append(f"non-zero weights = {result.nnz_weights}")
    out.append(f"total seconds = {result.seconds:.3f} ({result.examples_per_second:,.0f} examples/s)")
    return "\n".join(out)


def plot(result, path_or_ax, *, logx=False):
    classification = result.task == "classification"
    key = "error_rate" if classification else "rmse"
    ylabel = "online error rate" if classification else "online RMSE"
    if hasattr(path_or_ax, "plot") and hasattr(path_or_ax, "set_xlabel"):
        ax, fig, path = path_or_ax, None, None
    else:
        if not isinstance(path_or_ax, (str, Path)):
            raise TypeError(f"path_or_ax must be a file path or a matplotlib Axes; got {type(path_or_ax).__name__}.")
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        path = Path(path_or_ax)
        fig = Figure(figsize=(6.4, 4.0))
        FigureCanvasAgg(fig)  # Agg canvas: no display, no pyplot global state
        ax = fig.add_subplot()
    n = np.asarray(result.curve["n_examples"])
    ax.plot(n, np.asarray(result.curve[key]), label=f"{result.learner} ({result.loss})")
    pts = [r for r in result.checkpoints]
    ax.plot([r["n_examples"] for r in pts], [r[key] for r in pts], "o", ms=3, color=ax.lines[-1].get_color())
    ax.set_xlabel("examples seen")
    ax.set_ylabel(ylabel)
    if logx:
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    if fig is None:
        return ax
    ax.set_title(
        f"Progressive validation: {ylabel} = "
        f"{getattr(result, result.metric_name):.4f} after {result.n_examples:,} examples",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path
