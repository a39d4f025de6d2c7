"""``streamlearn predict MODEL DATA [-o OUT]``: one prediction per line."""

import sys

import numpy as np

from .._signals import raise_if_interrupted
from ..persist import load
from ._common import CLIError, check_input_file, refuse_non_finite
from ._data import check_data, example_error, model_reader, model_spec, output


def add_parser(sub):
    p = sub.add_parser(
        "predict",
        help="predict with a saved model, one line per example of DATA",
        description="Write one prediction per example (label, or the decision value with "
        "--scores) to OUT or standard output. DATA is read under the model's input contract "
        "(its index base and width); values of features beyond the width are ignored and "
        "counted on standard error.",
    )
    p.add_argument("model", metavar="MODEL", help="model file written by 'streamlearn train -o'")
    p.add_argument(
        "data",
        metavar="DATA",
        help="file to predict, in the model's input format (LIBSVM, VW "
        "text, or a CSV/Parquet table with the training columns, matched by name; a VW example's "
        "tag follows its prediction; '-' is standard input)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="output file (default: standard output); replaced only once every prediction is written",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--scores", action="store_true", help="write decision values instead of labels")
    g.add_argument(
        "--proba",
        action="store_true",
        help="write probabilities (models with predict_proba, e.g. logistic loss): P(classes_[1]) "
        "for two classes, one column per class otherwise",
    )
    p.add_argument("--chunk-size", type=int, default=10_000, help="rows per chunk (default 10000)")
    g = p.add_argument_group("CSV input")
    g.add_argument(
        "--delimiter",
        metavar="CHAR",
        help="read DATA with this field delimiter (';', '|', '\\t' for a tab) instead of the one the model was "
        "trained with (CSV models; columns are still matched by name)",
    )
    g.add_argument(
        "--decimal",
        metavar="CHAR",
        help="read DATA's numbers with this decimal mark (',' for 3,5) instead of the model's (CSV models)",
    )
    p.set_defaults(func=run)


def _reader(args, model):
    """``(chunks of (X, tags or None), LIBSVM reader or None)``: DATA read as the model's input spec says."""
    from ..datasets._readers import open_stream
    from ._input import refuse_other_format, table_spec
    from ._resume import input_spec

    spec = input_spec(model)
    fmt = spec.get("format", "libsvm")
    reads = f"the model in {args.model} reads {fmt} input (input_spec_)"
    refuse_other_format(args.data, fmt, reads, "DATA in the model's format")
    spec = _read_as(args, spec, fmt)
    if fmt != "libsvm":
        chunks = open_stream(args.data, table_spec(spec, args.model, False), args.chunk_size, with_tags=True)
        return ((X, tags) for X, _, _, tags in chunks), None
    reader = model_reader(model, args.data, args.chunk_size, allow_empty=True)  # no rows: no predictions
    return ((X, None) for X, _ in reader), reader


def _read_as(args, spec, fmt):
    """The model's input specification with ``--delimiter`` / ``--decimal`` in place of its own (a CSV model's);
    a one-line error for another format or a value that is not one character."""
    from ._tabular import _character

    given = {name: _character(args, "--" + name) for name in ("delimiter", "decimal")}
    given = {name: value for name, value in given.items() if value is not None}
    if not given:
        return spec
    if fmt != "csv":
        raise CLIError(
            f"--{next(iter(given))} applies to a model that reads CSV files; the model in {args.model} reads {fmt} "
            "input (input_spec_)."
        )
    options = {**(spec.get("options") or {}), **given}
    if len(given) == 1 and options.get("delimiter") == options.get("decimal"):
        name, value = next(iter(given.items()))
        other = "decimal mark" if name == "delimiter" else "delimiter"
        raise CLIError(
            f"--{name} {value!r} is the {other} the model in {args.model} reads its CSV files with (input_spec_); "
            f"give --{'decimal' if name == 'delimiter' else 'delimiter'} too."
        )
    return {**spec, "options": options}


def run(args):
    check_input_file(args.model, "model file")
    check_data(args.data)
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    if args.output == "-":  # predictions are text: '-' is standard output, the default
        args.output = None
    out = output(args.output, [args.model, args.data], "output")  # checked before the model is read
    model = load(args.model)
    refuse_non_finite(model, args.model)
    if not (hasattr(model, "_decision_function") and hasattr(model, "n_features_in_")):
        raise CLIError(
            f"model file {args.model!r} holds a {type(model).__name__}, which does not predict (a "
            "sketch, or a model never trained); give a model written by 'streamlearn train -o'."
        )
    if args.proba and not hasattr(model, "predict_proba"):
        inner = getattr(model, "learner_", model)  # the learner of a pipeline (scaler + learner)
        loss = getattr(inner, "loss", None)
        what = type(inner).__name__ + ("" if loss is None else f", loss {loss!r}")
        raise CLIError(f"--proba: the model in {args.model} ({what}) defines no probabilities; use --scores.")
    mode = "proba" if args.proba else "scores" if args.scores else "labels"
    chunks, reader = _reader(args, model)
    try:
        if out is None:
            _write(model, chunks, sys.stdout, mode)
        else:
            with out.open("w") as f:
                _write(model, chunks, f, mode)
    except ValueError as exc:
        if getattr(exc, "example", None) is None:
            raise
        raise example_error(args.data, model_spec(model), exc.example, exc) from None
    if reader is not None and reader.ignored:
        print(
            f"streamlearn: note: {reader.ignored} feature values of {reader.name} at or beyond the model's "
            f"width ({int(model.n_features_in_)}) were ignored.",
            file=sys.stderr,
        )
    return 0


def _write(model, chunks, out, mode):
    """The predictions of every chunk, a line each; a row the model refuses (a value too large) is a
    ``ValueError`` with its place in the stream (``example``, from 0)."""
    seen = 0
    for X, tags in chunks:
        raise_if_interrupted()  # a Ctrl-C that a library discarded stops the run at the next chunk
        if X.shape[0] == 0:
            continue
        try:
            lines = _lines(model, X, mode)
        except ValueError as exc:
            if getattr(exc, "row", None) is not None:
                exc.example = seen + exc.row
            raise
        seen += X.shape[0]
        if tags is not None:
            lines = [_tagged(text, tag) for text, tag in zip(lines, tags)]
        out.write("\n".join(lines) + "\n")


def _lines(model, X, mode):
    if mode == "labels":
        return [_label_text(v) for v in model.predict(X)]
    values = model.predict_proba(X) if mode == "proba" else np.atleast_2d(model._decision_function(X).T).T
    if mode == "proba" and values.shape[1] == 2:
        values = values[:, 1:]
    return [" ".join(f"{v:.10g}" for v in row) for row in values]


def _tagged(text, tag):
    """VW's prediction line: the prediction, then the example's tag if it has one."""
    return f"{text} {tag}" if tag else text


def _label_text(value):
    """Labels as written in LIBSVM files: -1 and 1, not -1.0 and 1.0."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
