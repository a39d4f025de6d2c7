"""``streamlearn predict MODEL DATA [-o OUT]``: one prediction per line."""

import os
import sys

import numpy as np

from ..persist import load
from ._common import CLIError, check_input_file


def add_parser(sub):
    p = sub.add_parser("predict", help="predict with a saved model, one line per example of DATA",
                       description="Write one prediction per example (label, or the decision value with "
                       "--scores) to OUT or standard output.")
    p.add_argument("model", metavar="MODEL", help="model file written by 'streamlearn train -o'")
    p.add_argument("data", metavar="DATA", help="file to predict, in the model's input format (LIBSVM, VW "
                   "text, or a CSV/Parquet table with the training columns, matched by name; a VW example's "
                   "tag follows its prediction)")
    p.add_argument("-o", "--output", metavar="OUT", help="output file (default: standard output)")
    p.add_argument("--scores", action="store_true", help="write decision values instead of labels")
    p.add_argument("--chunk-size", type=int, default=10_000, help="rows per chunk (default 10000)")
    p.set_defaults(func=run)


def _chunks(args, model):
    """``(X, tags or None)`` chunks of DATA, read as the model's input specification says."""
    from ..datasets import iter_svmlight
    from ..datasets._readers import detect_format, open_stream
    from ..datasets._spec import InputSpec

    spec = getattr(model, "input_spec_", None)
    if spec is not None and spec.get("format", "libsvm") != "libsvm":
        for X, _, _, tags in open_stream(args.data, InputSpec.from_dict(spec), args.chunk_size, with_tags=True):
            yield X, tags
        return
    if detect_format(args.data) != "libsvm":
        raise CLIError(f"{args.model} was trained on LIBSVM data; {args.data!r} is "
                       f"{detect_format(args.data)} (train the model on that format to predict it).")
    for X, _ in iter_svmlight(args.data, chunk_size=args.chunk_size, n_features=int(model.n_features_in_)):
        yield X, None


def run(args):
    check_input_file(args.model, "model file")
    check_input_file(args.data)
    model = load(args.model)
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    # OUT is written to a temporary file renamed at the end: a bad row leaves no half-written OUT
    tmp = f"{args.output}.tmp-{os.getpid()}" if args.output else None
    out = open(tmp, "w") if tmp else sys.stdout
    done = False
    try:
        for X, tags in _chunks(args, model):
            if X.shape[0] == 0:
                continue
            if args.scores:
                values = model._decision_function(X)
                if tags is None:
                    np.savetxt(out, np.atleast_2d(values.T).T, fmt="%.10g")
                else:
                    rows = np.atleast_2d(values.T).T
                    out.write("\n".join(_tagged(" ".join(f"{v:.10g}" for v in r), t) for r, t in zip(rows, tags))
                              + "\n")
            else:
                labels = [_label_text(v) for v in model.predict(X)]
                if tags is not None:
                    labels = [_tagged(v, t) for v, t in zip(labels, tags)]
                out.write("\n".join(labels) + "\n")
        done = True
    finally:
        if tmp:
            out.close()
            if done:
                os.replace(tmp, args.output)
            else:
                os.unlink(tmp)
    return 0


def _tagged(text, tag):
    """VW's prediction line: the prediction, then the example's tag if it has one."""
    return f"{text} {tag}" if tag else text


def _label_text(value):
    """Labels as written in LIBSVM files: -1 and 1, not -1.0 and 1.0."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
