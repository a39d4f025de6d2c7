"""Input-format options shared by ``train`` and ``evaluate``: ``--format``, ``-b``, ``-q``, ``--cubic``,
``--ignore``, ``--keep``, ``--labels``, ``--constant``; and the :class:`InputSpec` they describe."""

from ..datasets._readers import detect_format
from ..datasets._spec import FORMATS, InputSpec
from ._common import CLIError

LABELS = ("auto", "pm1", "01", "regression", "multiclass")


def add_input_options(p):
    g = p.add_argument_group("input format (hashed formats: VW text)")
    g.add_argument(
        "--format",
        choices=("auto",) + FORMATS,
        default="auto",
        help="data format (default auto: .vw/.vw.gz/.vw.xz/.vw.bz2 are VW text, .csv/.tsv CSV, .parquet Parquet, "
        "other names LIBSVM; a pipe ('-', /dev/stdin, a FIFO) is told by its first lines)",
    )
    g.add_argument(
        "-b",
        "--bits",
        type=int,
        default=None,
        metavar="BITS",
        help="hash features into 2**BITS columns (VW's -b; default 18)",
    )
    g.add_argument(
        "-q",
        "--quadratic",
        action="append",
        default=[],
        metavar="AB",
        help="cross namespaces A and B, named by first character (VW's -q; ':' is any namespace; repeatable)",
    )
    g.add_argument(
        "--cubic", action="append", default=[], metavar="ABC", help="cross three namespaces (VW's --cubic; repeatable)"
    )
    g.add_argument(
        "--ignore", action="append", default=[], metavar="NS", help="drop namespace NS (first character; repeatable)"
    )
    g.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="NS",
        help="keep only these namespaces (first character; repeatable)",
    )
    g.add_argument(
        "--labels",
        choices=LABELS,
        default="auto",
        help="label convention of VW text: pm1 (-1/+1), 01, regression, multiclass (1..k); default: "
        "pm1 for classifiers, regression for regressors",
    )
    g.add_argument(
        "--constant",
        action="store_true",
        help="add VW's constant feature as a hashed column (learners with an intercept need not)",
    )


def input_format(args, path):
    """``--format``, else the format the file's name says; a pipe without a telling name (``-``,
    ``/dev/stdin``) is told by its first lines, which are kept for the reader, and so is ``/dev/stdin``
    redirected from a file (a regular file, read from its start)."""
    from ..datasets._pipes import (
        decompressed_head,
        device_path,
        file_head_format,
        is_stream_path,
        named_format,
        peek_pipe,
        pipe_name,
        stream_format,
    )
    from ..datasets._svmlight import archive_text, wide_text

    fmt = getattr(args, "format", "auto") or "auto"
    if not is_stream_path(path):
        if fmt == "auto" and device_path(path) and named_format(path) is None:
            fmt = file_head_format(path) or "auto"
        return detect_format(path) if fmt == "auto" else fmt
    if fmt == "auto":
        fmt = stream_format(path)
        if fmt is None and peek_pipe(path).blank():
            raise CLIError(f"{pipe_name(path)}: no data lines: the stream is empty.")
        head = decompressed_head(peek_pipe(path).kept())
        wide = (wide_text(head) if fmt is None else None) or (
            archive_text(head) if fmt != "parquet" else None  # (zstd bytes may look like LIBSVM)
        )
        if wide is not None:
            raise CLIError(f"{pipe_name(path)}, line 1: {wide}")
        if fmt is None:
            raise CLIError(
                f"cannot tell the format of {pipe_name(path)} from its first lines (not VW text, LIBSVM or "
                "CSV with a header); pass --format vw|libsvm|csv."
            )
    if fmt == "parquet":
        raise CLIError(
            f"{pipe_name(path)}: Parquet cannot be read from a pipe (its footer, at the end of the file, is "
            "read first); give the file's path instead."
        )
    return fmt


def refuse_other_format(path, fmt, reads, give, role=""):
    """A :class:`CLIError` when ``path`` says it is in another format than ``fmt`` (:func:`other_format`):
    "READS, and ROLE PATH is FOUND; give GIVE." (``reads``: who reads ``fmt``, ``give``: what to give)."""
    found = other_format(path, fmt)
    if found is not None:
        from ..datasets._pipes import pipe_name

        raise CLIError(f"{reads}, and {role}{pipe_name(path)} is {found}; give {give}.")


def table_spec(spec, model_path, labelled):
    """The model's hashed input specification ``spec`` as an :class:`InputSpec`, after checking that a CSV or
    Parquet one can read files: a model that learned dict rows (``learn_one``) knows no table columns, and
    continuing a model needs its label column."""
    fmt = spec.get("format")
    if fmt in ("csv", "parquet"):
        if not (spec.get("options") or {}).get("columns"):
            raise CLIError(
                f"{model_path}: the model's input specification (input_spec_) has no table columns (a model that "
                f"learned dict rows with learn_one); it cannot read {fmt} files."
            )
        if labelled and not spec.get("label_column"):
            raise CLIError(
                f"{model_path}: the model's input specification (input_spec_) names no label column; it cannot "
                f"learn from {fmt} files."
            )
    return InputSpec.from_dict(spec)


def other_format(path, fmt):
    """How the regular file ``path`` says it is in another format than ``fmt`` ("libsvm by its name",
    "csv by its first lines"; CSV and Parquet count as one), or None: its name's extension, else its first
    lines when the name says nothing (``data.txt``). A pipe is told by its name or its first lines, read ahead
    and kept for the reader."""
    from ..datasets._pipes import decompressed_head, is_stream_path, named_format, sniff_format, stream_format

    def differs(found):
        return found is not None and found != fmt and {found, fmt} != {"csv", "parquet"}

    if is_stream_path(path):
        found = stream_format(path)
        how = "name" if named_format(path) is not None else "first lines"
        return f"{found} by its {how}" if differs(found) else None

    named = named_format(path)
    if named is not None:
        return f"{named} by its name" if differs(named) else None
    try:
        with open(path, "rb") as f:
            head = f.read(64 << 10)
    except OSError:
        return None  # the reader says why
    sniffed = sniff_format(decompressed_head(head))
    return f"{sniffed} by its first lines" if differs(sniffed) else None


def hashed_spec(args, path, task):
    """The :class:`InputSpec` of a hashed-format run (VW text) from the options."""
    fmt = input_format(args, path)
    bits = 18 if args.bits is None else args.bits
    if not 1 <= bits <= 32:
        raise CLIError(f"-b/--bits must be between 1 and 32; got {bits}.")
    for q in args.quadratic:
        if len(q) != 2:
            raise CLIError(f"-q {q!r}: expected two namespace characters, e.g. -q ua (':' for any namespace).")
    for c in args.cubic:
        if len(c) != 3:
            raise CLIError(f"--cubic {c!r}: expected three namespace characters, e.g. --cubic uaa.")
    if args.ignore and args.keep:
        raise CLIError("--ignore and --keep cannot be used together.")
    labels = args.labels
    if labels == "auto":
        labels = "regression" if task == "regression" else "pm1"
    options = {"constant": True} if args.constant else {}
    return InputSpec(
        format=fmt,
        bits=bits,
        label_convention=labels,
        interactions=list(args.quadratic) + list(args.cubic),
        ignore=list(args.ignore),
        keep=list(args.keep),
        options=options,
    )


def check_libsvm_args(args):
    """Hashing options make no sense for LIBSVM files: say so instead of ignoring them."""
    used = [
        name
        for name, on in (
            ("-b", args.bits is not None),
            ("-q", args.quadratic),
            ("--cubic", args.cubic),
            ("--ignore", args.ignore),
            ("--keep", args.keep),
            ("--constant", args.constant),
            ("--labels", args.labels != "auto"),
        )
        if on
    ]
    if used:
        raise CLIError(
            f"{', '.join(used)} {'applies' if len(used) == 1 else 'apply'} to hashed formats (VW text); the data is "
            "read as LIBSVM "
            f"(pass --format vw, or name the file .vw)."
        )
