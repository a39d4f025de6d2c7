"""``streamlearn predict MODEL DATA [-o OUT]``: one prediction per line."""

import sys

import numpy as np

from ..persist import load
from ._common import CLIError, check_input_file
from ._data import check_data, model_reader, output


def add_parser(sub):
    p = sub.add_parser("predict", help="predict with a saved model, one line per example of DATA",
                       description="Write one prediction per example (label, or the decision value with "
                       "--scores) to OUT or standard output. DATA is read under the model's input contract "
                       "(its index base and width); values of features beyond the width are ignored and "
                       "counted on standard error.")
    p.add_argument("model", metavar="MODEL", help="model file written by 'streamlearn train -o'")
    p.add_argument("data", metavar="DATA", help="LIBSVM/svmlight file to predict ('-' is standard input)")
    p.add_argument("-o", "--output", metavar="OUT", help="output file (default: standard output); replaced "
                   "only once every prediction is written")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--scores", action="store_true", help="write decision values instead of labels")
    g.add_argument("--proba", action="store_true",
                   help="write probabilities (models with predict_proba, e.g. logistic loss): P(classes_[1]) "
                        "for two classes, one column per class otherwise")
    p.add_argument("--chunk-size", type=int, default=10_000, help="rows per chunk (default 10000)")
    p.set_defaults(func=run)


def run(args):
    check_input_file(args.model, "model file")
    check_data(args.data)
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    out = output(args.output, [args.model, args.data], "output")  # checked before the model is read
    model = load(args.model)
    if not (hasattr(model, "_decision_function") and hasattr(model, "n_features_in_")):
        raise CLIError(f"model file {args.model!r} holds a {type(model).__name__}, which does not predict (a "
                       "sketch, or a model never trained); give a model written by 'streamlearn train -o'.")
    if args.proba and not hasattr(model, "predict_proba"):
        raise CLIError(f"--proba: the model in {args.model} ({type(model).__name__}, loss "
                       f"{getattr(model, 'loss', None)!r}) defines no probabilities; use --scores.")
    mode = "proba" if args.proba else "scores" if args.scores else "labels"
    reader = model_reader(model, args.data, args.chunk_size)
    if out is None:
        _write(model, reader, sys.stdout, mode)
    else:
        with out.open("w") as f:
            _write(model, reader, f, mode)
    if reader.ignored:
        print(f"streamlearn: note: {reader.ignored} feature values of {reader.name} at or beyond the model's "
              f"width ({int(model.n_features_in_)}) were ignored.", file=sys.stderr)
    return 0


def _write(model, reader, out, mode):
    for X, _ in reader:
        if X.shape[0] == 0:
            continue
        if mode == "proba":
            proba = model.predict_proba(X)
            np.savetxt(out, proba[:, 1:] if proba.shape[1] == 2 else proba, fmt="%.10g")
        elif mode == "scores":
            values = model._decision_function(X)
            np.savetxt(out, np.atleast_2d(values.T).T, fmt="%.10g")
        else:
            out.write("\n".join(_label_text(v) for v in model.predict(X)) + "\n")


def _label_text(value):
    """Labels as written in LIBSVM files: -1 and 1, not -1.0 and 1.0."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
