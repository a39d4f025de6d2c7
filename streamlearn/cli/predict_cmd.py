"""``streamlearn predict MODEL DATA [-o OUT]``: one prediction per line."""

import sys

import numpy as np

from ..persist import load
from ._common import CLIError, check_input_file
from ._resume import libsvm_reader_args


def add_parser(sub):
    p = sub.add_parser("predict", help="predict with a saved model, one line per example of DATA",
                       description="Write one prediction per example (label, or the decision value with "
                       "--scores) to OUT or standard output.")
    p.add_argument("model", metavar="MODEL", help="model file written by 'streamlearn train -o'")
    p.add_argument("data", metavar="DATA", help="LIBSVM/svmlight file to predict")
    p.add_argument("-o", "--output", metavar="OUT", help="output file (default: standard output)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--scores", action="store_true", help="write decision values instead of labels")
    g.add_argument("--proba", action="store_true",
                   help="write probabilities (models with predict_proba, e.g. logistic loss): P(classes_[1]) "
                        "for two classes, one column per class otherwise")
    p.add_argument("--chunk-size", type=int, default=10_000, help="rows per chunk (default 10000)")
    p.set_defaults(func=run)


def run(args):
    from ..datasets import iter_svmlight

    check_input_file(args.model, "model file")
    check_input_file(args.data)
    model = load(args.model)
    if args.proba and not hasattr(model, "predict_proba"):
        raise CLIError(f"--proba: the model in {args.model} ({type(model).__name__}, loss "
                       f"{getattr(model, 'loss', None)!r}) defines no probabilities; use --scores.")
    if not hasattr(model, "n_features_in_"):
        raise CLIError(f"{args.model}: the model was never trained (no n_features_in_).")
    n_features, zero_based = libsvm_reader_args(model)
    out = open(args.output, "w") if args.output else sys.stdout
    try:
        for X, _ in iter_svmlight(args.data, chunk_size=args.chunk_size, n_features=n_features,
                                  zero_based=zero_based):
            if X.shape[0] == 0:
                continue
            if args.proba:
                proba = model.predict_proba(X)
                np.savetxt(out, proba[:, 1:] if proba.shape[1] == 2 else proba, fmt="%.10g")
            elif args.scores:
                values = model._decision_function(X)
                np.savetxt(out, np.atleast_2d(values.T).T, fmt="%.10g")
            else:
                out.write("\n".join(_label_text(v) for v in model.predict(X)) + "\n")
    finally:
        if args.output:
            out.close()
    return 0


def _label_text(value):
    """Labels as written in LIBSVM files: -1 and 1, not -1.0 and 1.0."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
