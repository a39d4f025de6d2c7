"""CSV and Parquet input for ``train`` and ``evaluate``: the table options and the readers.

The format follows the extension (``.csv``, ``.tsv``, ``.csv.gz``, ``.parquet``, ``.pq``) or ``--format
csv|parquet``. Table options: ``--label COL``, ``--weight COL``, ``--ignore-column COL``, ``--categorical
COL``, ``--namespace NS=COL,COL``; the hashing options ``-b``, ``-q``, ``--cubic``, ``--ignore NS`` and
``--keep NS`` apply as to VW text, a column's namespace being its name (or ``NS``). The first file's reader
fixes the column kinds; its :class:`~streamlearn.datasets._spec.InputSpec` goes into the saved model, and
``predict`` and ``--test`` read through it, matching columns by name.
"""

from ._common import CLIError
from ._data import check_data
from ._input import input_format

TABLE_FORMATS = ("csv", "parquet")


def add_tabular_options(p):
    """The table options of ``train`` / ``evaluate`` (after ``add_input_options``)."""
    g = p.add_argument_group("CSV and Parquet input")
    g.add_argument("--label", metavar="COL", help="the label column (CSV/Parquet)")
    g.add_argument("--weight", metavar="COL", help="a column of importance weights >= 0 (CSV/Parquet)")
    g.add_argument(
        "--ignore-column",
        action="append",
        default=[],
        metavar="COL",
        help="a column that is not a feature (CSV/Parquet; repeatable)",
    )
    g.add_argument(
        "--categorical",
        action="append",
        default=[],
        metavar="COL",
        help="hash this numeric column as COL=value indicators (CSV/Parquet; repeatable)",
    )
    g.add_argument(
        "--namespace",
        action="append",
        default=[],
        metavar="NS=COL,COL",
        help="hash these columns in namespace NS, which -q/--ignore/--keep name by its first "
        "character (CSV/Parquet; default: one namespace per column, named after it; repeatable)",
    )
    g.add_argument(
        "--delimiter",
        metavar="CHAR",
        help="the character between a CSV file's fields: ';', '|', '\\t' for a tab (default ',', a tab for .tsv "
        "files); the model reads its test and prediction files with it",
    )
    g.add_argument(
        "--decimal",
        metavar="CHAR",
        help="the decimal mark of a CSV file's numbers: ',' for 3,5 (with --delimiter ';'; default '.'); the "
        "model reads its test and prediction files with it",
    )


def _table_options_used(args):
    return [
        name
        for name, on in (
            ("--label", args.label),
            ("--weight", args.weight),
            ("--ignore-column", args.ignore_column),
            ("--categorical", args.categorical),
            ("--namespace", args.namespace),
            ("--delimiter", args.delimiter),
            ("--decimal", args.decimal),
        )
        if on
    ]


def tab_escape(value):
    """``--delimiter`` / ``--decimal`` as given, a tab for ``\\t`` or ``tab`` (hard to type in a shell)."""
    return "\t" if value in ("\\t", "tab") else value


def _character(args, option):
    """The one character of ``--delimiter`` / ``--decimal`` (``\\t`` or ``tab``: a tab), else None; a one-line
    error for another value."""
    from ..datasets._tabular import check_delimiter

    value = tab_escape(getattr(args, option.lstrip("-")))
    if value is None:
        return None
    try:
        return check_delimiter(value, option)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def is_table_run(args, paths):
    """True when the data files are CSV/Parquet; table options on other formats are an error."""
    formats = {input_format(args, p) in TABLE_FORMATS for p in paths}
    if formats == {False}:
        used = _table_options_used(args)
        if used:
            raise CLIError(
                f"{', '.join(used)} {'applies' if len(used) == 1 else 'apply'} to CSV and Parquet files (.csv, .csv.gz, "
                ".parquet, or --format csv|parquet)."
            )
        return False
    if len(formats) > 1:
        raise CLIError("the DATA and TEST files must all be tables (CSV/Parquet) or all be in another format.")
    return True


def _namespaces(values):
    out = {}
    for item in values:
        ns, sep, cols = item.partition("=")
        names = [c for c in cols.split(",") if c]
        if not sep or not ns or not names:
            raise CLIError(f"--namespace expects NS=COL[,COL...]; got {item!r}.")
        out.setdefault(ns, []).extend(names)
    return out


def table_streams(args, paths):
    """``(openers, spec)``: one zero-argument opener per path (the first file fixes the column kinds; the
    others are read through its spec) and the spec to store in the model."""
    from ..datasets._tabular import TabularReader, require_pyarrow

    for path in paths:
        check_data(path)
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    if getattr(args, "n_features", None) is not None:
        raise CLIError(
            "--n-features is the width of LIBSVM data; CSV/Parquet features are hashed into 2**B columns: use -b B."
        )
    if getattr(args, "labels", "auto") != "auto" or getattr(args, "constant", False):
        raise CLIError(
            "--labels and --constant apply to VW text; a table's labels are read as they are "
            "(the learner's intercept replaces the constant feature)."
        )
    if args.label is None:
        raise CLIError("CSV/Parquet training data needs --label COL (the column to predict).")
    bits = 18 if args.bits is None else args.bits
    delimiter, decimal = _character(args, "--delimiter"), _character(args, "--decimal")
    formats = {input_format(args, p) for p in paths}
    if (delimiter or decimal) and formats != {"csv"}:
        raise CLIError(
            f"{'--delimiter' if delimiter else '--decimal'} applies to CSV files; "
            f"{', '.join(p for p in paths if input_format(args, p) != 'csv')} is Parquet."
        )
    try:
        require_pyarrow()
        first = TabularReader(
            paths[0],
            input_format(args, paths[0]),
            label=args.label,
            weight=args.weight,
            ignore=args.ignore_column,
            bits=bits,
            chunk_size=args.chunk_size,
            categorical=args.categorical,
            namespaces=_namespaces(args.namespace),
            quadratic=args.quadratic,
            cubic=args.cubic,
            ignore_namespaces=args.ignore,
            keep_namespaces=args.keep,
            delimiter=delimiter,
            decimal=decimal,
        )
        readers = [first] + [
            TabularReader(p, input_format(args, p), spec=first.spec, chunk_size=args.chunk_size) for p in paths[1:]
        ]
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    return [(lambda r=r: iter(r)) for r in readers], first.spec
