"""CSV and Parquet input for ``train``, ``evaluate`` and ``predict``: options, format detection, readers.

``--format csv|parquet`` (by default from the extension: ``.csv``, ``.csv.gz``, ``.csv.bz2``, ``.parquet``,
``.pq``), ``--label COL``, ``--weight COL``, ``--ignore-column COL``, ``--categorical COL``, ``--namespace
NS=COL,COL`` and ``--bits B``. The reader's input specification is stored in the model
(``input_spec_``); ``predict`` and ``train --test`` read later files through it, matching columns by name.
"""

import os

from ._common import CLIError

TABLE_FORMATS = ("csv", "parquet")
_SUFFIXES = {".csv": "csv", ".csv.gz": "csv", ".csv.bz2": "csv", ".tsv": None, ".parquet": "parquet",
             ".pq": "parquet"}


def add_tabular_options(p):
    """The table options of ``train`` / ``evaluate`` (``--bits`` and ``--format`` only when not there yet)."""
    g = p.add_argument_group("CSV and Parquet input")
    if "--format" not in p._option_string_actions:
        g.add_argument("--format", choices=("libsvm", "csv", "parquet"), default=None,
                       help="input format (default: from the extension; .csv, .csv.gz, .parquet, else LIBSVM)")
    if "--bits" not in p._option_string_actions:
        g.add_argument("-b", "--bits", type=int, default=None, metavar="B",
                       help="hash bits of CSV/Parquet features: 2**B columns (default 18)")
    g.add_argument("--label", metavar="COL", help="CSV/Parquet: the label column")
    g.add_argument("--weight", metavar="COL", help="CSV/Parquet: a column of importance weights (>= 0)")
    g.add_argument("--ignore-column", action="append", default=[], metavar="COL",
                   help="CSV/Parquet: a column that is not a feature (repeatable)")
    g.add_argument("--categorical", action="append", default=[], metavar="COL",
                   help="CSV/Parquet: hash this numeric column as COL=value indicators (repeatable)")
    g.add_argument("--namespace", action="append", default=[], metavar="NS=COL,COL",
                   help="CSV/Parquet: hash these columns in namespace NS (default: one namespace per column; "
                        "repeatable)")


def table_format(path, fmt=None):
    """``"csv"`` / ``"parquet"`` for a table file (``fmt`` or the extension), else None."""
    if fmt is not None:
        return fmt if fmt in TABLE_FORMATS else None
    name = os.fspath(path).lower()
    for suffix, found in _SUFFIXES.items():
        if name.endswith(suffix):
            return found
    return None


def is_table_run(args, paths):
    formats = {table_format(p, getattr(args, "format", None)) for p in paths}
    if formats == {None}:
        if args.label or args.weight or args.ignore_column or args.categorical or args.namespace:
            raise CLIError("--label, --weight, --ignore-column, --categorical and --namespace apply to CSV and "
                           "Parquet files (.csv, .csv.gz, .parquet, or --format csv|parquet).")
        return False
    if None in formats:
        raise CLIError("the DATA and TEST files must all be tables (CSV/Parquet) or all be LIBSVM files.")
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


def _reader_error(exc):
    """A CLIError from a reader's ValueError / ImportError (one line)."""
    return CLIError(str(exc).strip().splitlines()[0])


def table_streams(args, paths):
    """``(openers, spec)``: one zero-argument opener per path (the first file fixes the column kinds; the
    others are read through its spec) and the spec to store in the model."""
    from ._common import check_input_file

    for path in paths:
        check_input_file(path)
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    if getattr(args, "n_features", None) is not None:
        raise CLIError("--n-features is the width of LIBSVM data; CSV/Parquet features are hashed into 2**B "
                       "columns: use --bits B.")
    if args.label is None:
        raise CLIError("CSV/Parquet training data needs --label COL (the column to predict).")
    bits = 18 if args.bits is None else args.bits
    try:
        from ..datasets._tabular import TabularReader, require_pyarrow

        require_pyarrow()
        first = TabularReader(paths[0], table_format(paths[0], args.format), label=args.label,
                              weight=args.weight, ignore=args.ignore_column, bits=bits,
                              chunk_size=args.chunk_size, categorical=args.categorical,
                              namespaces=_namespaces(args.namespace))
        readers = [first] + [TabularReader(p, table_format(p, args.format), spec=first.spec,
                                           chunk_size=args.chunk_size) for p in paths[1:]]
    except (ValueError, ImportError) as exc:
        raise _reader_error(exc) from None
    return [_guarded(r) for r in readers], first.spec


def spec_reader(spec, path, chunk_size, fmt=None, label_required=False):
    """A reader of ``path`` built from a model's ``input_spec_`` (columns matched by name)."""
    from ..datasets._tabular import TabularReader

    try:
        return TabularReader(path, table_format(path, fmt) or spec["format"], spec=spec, chunk_size=chunk_size,
                             label_required=label_required)
    except (ValueError, ImportError) as exc:
        raise _reader_error(exc) from None


def _guarded(reader):
    """An opener whose chunks are ``(X, y)`` and whose read errors are CLIErrors."""
    def opener():
        return guarded_iter(reader)

    return opener


def guarded_iter(reader):
    from ..datasets._tabular import TabularFormatError

    try:
        for chunk in reader:
            yield chunk
    except TabularFormatError as exc:
        raise CLIError(str(exc)) from None
