"""``streamlearn predict MODEL DATA [-o OUT]``: one prediction per line."""

import os
import sys

import numpy as np

from ..persist import load
from ._common import check_input_file
from ._tabular import TABLE_FORMATS, guarded_iter, spec_reader


def add_parser(sub):
    p = sub.add_parser("predict", help="predict with a saved model, one line per example of DATA",
                       description="Write one prediction per example (label, or the decision value with "
                       "--scores) to OUT or standard output.")
    p.add_argument("model", metavar="MODEL", help="model file written by 'streamlearn train -o'")
    p.add_argument("data", metavar="DATA", help="LIBSVM/svmlight file to predict")
    p.add_argument("-o", "--output", metavar="OUT", help="output file (default: standard output)")
    p.add_argument("--scores", action="store_true", help="write decision values instead of labels")
    p.add_argument("--chunk-size", type=int, default=10_000, help="rows per chunk (default 10000)")
    p.add_argument("--format", choices=("libsvm", "csv", "parquet"), default=None,
                   help="format of DATA (default: the extension, else the model's training format)")
    p.set_defaults(func=run)


def run(args):
    from ..datasets import iter_svmlight

    check_input_file(args.model, "model file")
    check_input_file(args.data)
    model = load(args.model)
    n_features = int(model.n_features_in_)
    spec = getattr(model, "input_spec_", None)
    if isinstance(spec, dict) and spec.get("format") in TABLE_FORMATS:
        return _predict_table(args, model, spec)
    out = open(args.output, "w") if args.output else sys.stdout
    try:
        for X, _ in iter_svmlight(args.data, chunk_size=args.chunk_size, n_features=n_features):
            if X.shape[0] == 0:
                continue
            if args.scores:
                values = model._decision_function(X)
                np.savetxt(out, np.atleast_2d(values.T).T, fmt="%.10g")
            else:
                out.write("\n".join(_label_text(v) for v in model.predict(X)) + "\n")
    finally:
        if args.output:
            out.close()
    return 0


def _predict_table(args, model, spec):
    """CSV/Parquet through the model's input spec; OUT is written to a temporary file renamed at the end, so a
    bad row leaves no half-written OUT."""
    reader = spec_reader(spec, args.data, args.chunk_size, fmt=args.format)
    tmp = None
    if args.output:
        tmp = f"{args.output}.tmp-{os.getpid()}"
        out = open(tmp, "w")
    else:
        out = sys.stdout
    try:
        for chunk in guarded_iter(reader):
            X = chunk[0]
            if X.shape[0] == 0:
                continue
            if args.scores:
                np.savetxt(out, np.atleast_2d(model._decision_function(X).T).T, fmt="%.10g")
            else:
                out.write("\n".join(_label_text(v) for v in model.predict(X)) + "\n")
    except BaseException:
        if tmp is not None:
            out.close()
            os.unlink(tmp)
        raise
    if tmp is not None:
        out.close()
        os.replace(tmp, args.output)
    return 0


def _label_text(value):
    """Labels as written in LIBSVM files: -1 and 1, not -1.0 and 1.0."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
