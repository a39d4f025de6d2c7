"""Helpers shared by the subcommands: output options, ``-p key=value`` parsing, data streams."""

import json
import math
import os
import sys


class CLIError(Exception):
    """A user error: printed as ``streamlearn: error: ...`` with exit code 2."""


def add_output_options(parser, *, plot=True):
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no human-readable table")
    if plot:
        parser.add_argument("--plot", metavar="PNG", help="write a PNG figure to this path")


def add_param_option(parser, help="learner parameter (repeatable), e.g. -p C=0.01 -p eta0=0.5"):
    parser.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE", help=help)


def add_scale_options(parser, *, not_for=""):
    """``--scale`` and ``--scale-target`` (default: the learner's own) of the commands that start a new
    learner; ``not_for`` names where the defaults are ``none`` (e.g. ``"batch learners and --scheduler
    runs"``)."""
    scale_none = f"; none for {not_for}" if not_for else ""
    target_none = f"; none for {not_for.split(' and ')[-1]}" if not_for else ""
    parser.add_argument(
        "--scale",
        choices=("none", "maxabs", "standard"),
        default=None,
        help="streaming scaling before the learner, each row by the statistics of the rows before it "
        f"(default: the learner's own, shown by 'streamlearn learners'{scale_none}); the saved model applies "
        "it when predicting",
    )
    parser.add_argument(
        "--scale-target",
        choices=("none", "standard"),
        default=None,
        help="regressors: standardise the target online, each by the targets before it, and map predictions "
        "back (default: the learner's own, shown by 'streamlearn learners': standard for the squared-loss "
        f"regressors{target_none}); the saved model applies it when predicting",
    )


def add_libsvm_options(parser, *, n_features_help, zero_based_help):
    """``--n-features`` (default: found in the data) and ``--zero-based`` (auto, true or false) of the commands
    that read LIBSVM files, with the command's own help texts."""
    parser.add_argument("--n-features", type=int, default=None, help=n_features_help)
    parser.add_argument("--zero-based", choices=("auto", "true", "false"), default="auto", help=zero_based_help)


def parse_params(pairs):
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CLIError(f"-p expects KEY=VALUE; got {pair!r}.")
        params[key.strip()] = value.strip()
    return params


def show_progress(args):
    return not getattr(args, "quiet", False) and not getattr(args, "json", False) and sys.stderr.isatty()


def warn_if_below_constant(args, result, data):
    """One line on standard error when the pass's online error rate (RMSE) is above that of the best constant
    in hindsight: the learner did worse than always predicting one label (the mean), on ``data``."""
    if getattr(args, "quiet", False):
        return
    online, constant = result.online_error_rate, result.best_constant_error_rate
    what = "error rate", "always predicting the most frequent label"
    if online is None:
        online, constant = result.online_rmse, result.best_constant_rmse
        what = "RMSE", "always predicting the mean label"
    if online is None or constant is None or not online > constant:
        return
    if not isinstance(data, str):
        data = ", ".join(map(str, data))
    print(
        f"streamlearn: warning: the online {what[0]} on {data} ({online:.4f}) is above that of {what[1]} "
        f"({constant:.4f}): {getattr(args, 'learner', None) or 'the learner'} did worse than a constant; see "
        "'Choosing a learner' in the documentation (features without linear signal, --scale, step sizes).",
        file=sys.stderr,
    )


def print_json(obj):
    print(json.dumps(_clean(obj), indent=None, sort_keys=False))


def _clean(obj):
    # numpy is not imported at the top (fast `streamlearn --version`): if it was never imported, obj holds none
    np = sys.modules.get("numpy")
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if np is not None and isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def format_table(rows, columns=None, floatfmt="{:.4f}"):
    """Aligned text table of a list of row dicts."""
    if not rows:
        return "(no rows)"
    columns = columns or list(dict.fromkeys(k for row in rows for k in row))
    cells = [[_fmt(row.get(c, ""), floatfmt) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.rjust(w) if _numeric(v) else v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def _numeric(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def _fmt(value, floatfmt):
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
            return f"{value:.3g}"
        return floatfmt.format(value)
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def check_input_file(path, what="data file"):
    if not os.path.exists(path):
        raise CLIError(f"{what} {path!r} does not exist.")
    if os.path.isdir(path):
        expected = what if what.endswith(("model file", "sketch file")) else "LIBSVM/svmlight file"
        raise CLIError(f"{what} {path!r} is a directory, expected a {expected}.")
    return path


def refuse_non_finite(model, path):
    """A model holding NaN or infinity (one that diverged, saved through the Python API) is an error naming the
    file and the attribute: its predictions would be NaN, and learning cannot continue from it."""
    from .._validation import non_finite_state

    bad = non_finite_state(model)
    if bad is not None:
        raise CLIError(f"{path}: the model's {bad} holds NaN or infinity (it diverged); retrain it.")
