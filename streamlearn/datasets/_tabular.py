"""CSV and Parquet in, hashed sparse chunks out: ``iter_csv`` and ``iter_parquet`` (through pyarrow).

A table is read as a stream of Arrow record batches (``pyarrow.csv.open_csv``'s streaming reader on one
thread, ``pyarrow.parquet.ParquetFile.iter_batches``), so memory is one batch plus one chunk whatever the
file size. Text columns are read dictionary-encoded, so each distinct value of a batch is hashed once.
Every feature column is hashed into ``2 ** bits`` buckets by the numba kernels of
``streamlearn._kernels.tabular``, straight from the Arrow buffers:

* a **numeric** column ``age`` is the feature ``age`` with the cell as its value;
* a **text**, **categorical** or **boolean** column ``country`` is the indicator ``country=FR`` (value 1);
  booleans read as ``true`` / ``false``;
* a missing cell (empty, ``NA``, null, NaN) and a numeric 0 are no feature at all.

Each column is hashed in its own namespace, named after the column (or in the namespace of its group,
``namespaces={"user": ["age", "country"]}``), with 32-bit MurmurHash3 exactly as Vowpal Wabbit hashes the
feature ``country=FR`` in namespace ``country``. Columns are matched by name: a model reads a file whose
columns come in another order, and a value never seen in training is just another bucket.

The column kinds found in the training file are remembered in the reader's :attr:`TabularReader.spec`
(``options["columns"]``); a reader built from that spec reads every later file with the same kinds, so a
text value in a numeric column is an error naming the file, the line and the column.
"""

from __future__ import annotations

import io
import os
import re
import traceback
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ._pipes import _COMPRESSED_SUFFIXES, _DECOMPRESSION_ERRORS, file_object_name, require_binary
from ._spec import InputSpec

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .._typing import PathLike

__all__ = ["TabularFormatError", "TabularReader", "iter_csv", "iter_parquet", "require_pyarrow"]

NUMERIC, TEXT, BOOLEAN = "numeric", "text", "boolean"
_KINDS = (NUMERIC, TEXT, BOOLEAN)
_CSV_BLOCK = 1 << 20
_MAX_HEADER = 64 << 20  # the longest header line the reader looks for (bytes)
_RELEASE_WAIT = 5.0  # seconds a stopped read of a pipe waits at most for pyarrow to let go of it
_READ_ERRORS = _DECOMPRESSION_ERRORS


class TabularFormatError(ValueError):
    """A CSV or Parquet file that cannot be read as the reader expects.

    The message is one line naming the file, the line (CSV, 1-based, the header is line 1) or row
    (Parquet, 1-based), the column when there is one, and what was wrong.

    Attributes
    ----------
    source : str
    line : int or None
    column : str or None
    reason : str

    Examples
    --------
    >>> import os, tempfile
    >>> from streamlearn.datasets import TabularFormatError, iter_csv
    >>> path = os.path.join(tempfile.mkdtemp(), "w.csv"); _ = open(path, "w").write("y,w,a\\n1,1,2\\n1,-1,3\\n")
    >>> try:
    ...     list(iter_csv(path, label="y", weight="w"))
    ... except TabularFormatError as err:
    ...     print(err.line, err.column, err.reason)
    3 w weight -1.0 is not a finite number >= 0.
    """

    def __init__(self, source, line, column, reason, unit="line"):
        self.source, self.line, self.column, self.reason, self.unit = source, line, column, reason, unit
        where = str(source)
        if line is not None:
            where += f", {unit} {line}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {reason}")

    def __reduce__(self):
        return type(self), (self.source, self.line, self.column, self.reason, self.unit)


def require_pyarrow():
    """Import pyarrow or raise a one-line ``ImportError`` saying how to install it."""
    try:
        import pyarrow
    except ImportError:
        raise ImportError(
            "reading CSV and Parquet needs pyarrow, which is not installed: "
            "pip install 'streamlearn[arrow]' (or pip install pyarrow)."
        ) from None
    import pyarrow

    return pyarrow


# ---------------------------------------------------------------------------------------------------
# column kinds


def arrow_kind(typ):
    """The feature kind of an Arrow type (``"numeric"``, ``"text"``, ``"boolean"``), None for types that
    cannot be a feature (lists, structs, ...)."""
    import pyarrow.types as pt

    if pt.is_dictionary(typ):
        typ = typ.value_type
    if pt.is_integer(typ) or pt.is_floating(typ) or pt.is_decimal(typ):
        return NUMERIC
    if pt.is_boolean(typ):
        return BOOLEAN
    if (
        pt.is_string(typ)
        or pt.is_large_string(typ)
        or pt.is_binary(typ)
        or pt.is_large_binary(typ)
        or pt.is_null(typ)
        or pt.is_temporal(typ)
        or getattr(pt, "is_string_view", lambda t: False)(typ)
    ):
        return TEXT
    return None


class _Plan:
    """Which columns are features, their kinds and namespaces, the label / weight columns and the
    interactions."""

    def __init__(
        self,
        names,
        kinds,
        label,
        weight,
        namespaces,
        bits,
        quadratic=(),
        cubic=(),
        ignore_namespaces=(),
        keep_namespaces=(),
    ):
        from ..preprocessing._hashing import name_hash, namespace_hash
        from ._vw import _keep_array, parse_interactions

        keep = _keep_array(ignore_namespaces, keep_namespaces)
        names = [c for c in names if keep[_ns_byte(namespaces.get(c, c))]]
        if not names:
            raise ValueError("no feature column is left after ignore_namespaces / keep_namespaces.")
        self.terms, self.term_lens, self.wild = parse_interactions(quadratic, cubic)
        self.names = list(names)
        self.kinds = dict(kinds)
        self.label = label
        self.weight = weight
        self.namespace_of = {c: namespaces.get(c, c) for c in self.names}
        self.bits = int(bits)
        self.mask = np.uint64((1 << self.bits) - 1)
        self.seeds = {c: namespace_hash(self.namespace_of[c]) for c in self.names}
        # numeric columns: one hash per column, computed once
        self.numeric_hash = {c: name_hash(c, self.seeds[c]) for c in self.names if self.kinds[c] == NUMERIC}
        self.prefix = {c: np.frombuffer((c + "=").encode("utf-8"), dtype=np.uint8) for c in self.names}
        self.col_ns = np.array([_ns_byte(self.namespace_of[c]) for c in self.names], dtype=np.int64)
        self.row_bound = self._row_bound()

    def _row_bound(self):
        """Most features a row can have: its columns plus every interaction over full namespaces."""
        from .._kernels.vw_text import _expand_wildcards

        n = len(self.names)
        if not len(self.terms):
            return n
        size = np.bincount(self.col_ns, minlength=256)
        present = np.flatnonzero(size[:256]).astype(np.int64)
        terms, lens = _expand_wildcards(
            self.terms, self.term_lens, np.concatenate([present, np.zeros(256 - len(present), np.int64)]), len(present)
        )
        bound = n
        for t, k in zip(terms, lens):
            bound += int(np.prod([size[t[a]] for a in range(k)]))
        return bound


def _ns_byte(name):
    """The byte that names a namespace for interactions, --ignore and --keep: its first; for a column without
    a name, VW's default namespace ' ' (as DictHasher does for the key '')."""
    return name.encode("utf-8")[0] if name else 32


def _namespace_map(namespaces):
    """``{"user": ["age", "country"]}`` -> ``{"age": "user", "country": "user"}``; a column in two groups is
    an error."""
    out = {}
    for ns, cols in (namespaces or {}).items():
        if isinstance(cols, str):
            cols = [cols]
        if not isinstance(ns, str) or not ns:
            raise ValueError(f"namespaces: a namespace name must be a non-empty string; got {ns!r}.")
        for c in cols:
            if c in out and out[c] != ns:
                raise ValueError(f"namespaces: column {c!r} is in two namespaces, {out[c]!r} and {ns!r}.")
            out[c] = ns
    return out


def _groups_from_map(mapping):
    groups = {}
    for c, ns in mapping.items():
        groups.setdefault(ns, []).append(c)
    return groups


# ---------------------------------------------------------------------------------------------------
# hashing one record batch


def _text_buffers(arr):
    """``(offsets, data, valid)`` numpy views of a string/binary Arrow array (any slice offset)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = arr.type
    if not (
        pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    ):
        arr = arr.cast(pa.large_string() if pa.types.is_large_binary(t) else pa.string())
        t = arr.type
    odt = np.int64 if (pa.types.is_large_string(t) or pa.types.is_large_binary(t)) else np.int32
    bufs = arr.buffers()
    n = len(arr)
    offsets = np.frombuffer(bufs[1], dtype=odt)[arr.offset : arr.offset + n + 1] if n else np.zeros(1, odt)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(1, np.uint8)
    if arr.null_count:
        valid = pc.is_valid(arr).to_numpy(zero_copy_only=False)
    else:
        valid = np.ones(n, dtype=np.bool_)
    return offsets, data, valid


def _hash_text(arr, prefix, seed, out_hash, out_value):
    """Hash a text column (plain, or dictionary-encoded: then only the dictionary is hashed)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .._kernels.tabular import hash_text_column

    if pa.types.is_dictionary(arr.type):
        if len(arr.dictionary) == 0:  # every value of the batch is missing: no feature
            out_hash[:] = 0
            out_value[:] = 0.0
            return
        if len(arr.dictionary) <= len(arr):
            dic = arr.dictionary
            offsets, data, valid = _text_buffers(dic)
            dh = np.zeros(len(dic), dtype=np.uint64)
            dv = np.zeros(len(dic), dtype=np.float64)
            hash_text_column(
                offsets=offsets, data=data, valid=valid, prefix=prefix, seed=seed, out_hash=dh, out_value=dv
            )
            idx = arr.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.intp, copy=False)
            out_hash[:] = dh[idx]
            out_value[:] = dv[idx]
            if arr.null_count:
                out_value[~pc.is_valid(arr).to_numpy(zero_copy_only=False)] = 0.0
            return
        arr = arr.dictionary_decode()
    offsets, data, valid = _text_buffers(arr)
    hash_text_column(
        offsets=offsets, data=data, valid=valid, prefix=prefix, seed=seed, out_hash=out_hash, out_value=out_value
    )


def _boolean_as_text(arr):
    import pyarrow as pa

    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr.cast(pa.string())  # "true" / "false"


class _BatchError(Exception):
    def __init__(self, row, column, reason):
        self.row, self.column, self.reason = row, column, reason


def _numeric_values(arr, column):
    import pyarrow as pa

    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if not pa.types.is_float64(arr.type):
        try:
            # an integer beyond 2**53 rounds to the nearest float, as the same number read from a CSV file or a
            # dict row does (a checked cast refuses it)
            arr = arr.cast(pa.float64(), safe=not pa.types.is_integer(arr.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise _BatchError(None, column, f"cannot read as a number ({exc}).") from None
    values = arr.to_numpy(zero_copy_only=False)  # nulls become NaN
    if values.dtype != np.float64:
        values = values.astype(np.float64)
    bad = np.isinf(values)
    if bad.any():
        raise _BatchError(int(np.argmax(bad)), column, f"value {values[bad][0]} is not finite.")
    return values


def hash_batch(batch_columns, n_rows, plan):
    """``(hashes, values)``: ``(n_feature_columns, n_rows)`` uint64 and float64 tables of one batch.

    ``batch_columns`` maps each feature column of ``plan`` to its Arrow array (or None: column absent,
    every cell missing).
    """
    import pyarrow as pa

    n_cols = len(plan.names)
    hashes = np.zeros((n_cols, n_rows), dtype=np.uint64)
    values = np.zeros((n_cols, n_rows), dtype=np.float64)
    errors = []
    for c, name in enumerate(plan.names):
        arr = batch_columns.get(name)
        if arr is None:
            continue
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        kind = plan.kinds[name]
        if kind == NUMERIC:
            try:
                values[c] = _numeric_values(arr, name)
            except _BatchError as exc:
                errors.append(exc)
            hashes[c] = plan.numeric_hash[name]
        else:
            if kind == BOOLEAN:
                arr = _boolean_as_text(arr)
            _hash_text(arr, plan.prefix[name], plan.seeds[name], hashes[c], values[c])
    if errors:
        raise _first_error(errors)
    return hashes, values


def _first_error(errors):
    """The error of the earliest row (errors without a row last)."""
    return min(errors, key=lambda e: (e.row is None, e.row or 0))


def hashes_to_csr(hashes, values, plan):
    """CSR matrix ``(n_rows, 2 ** bits)`` of one batch's tables."""
    from .._kernels.tabular import hashed_rows_to_csr

    n_cols, n_rows = values.shape
    indptr = np.empty(n_rows + 1, dtype=np.int64)
    cap = max(plan.row_bound * n_rows, 1)
    idt = np.int32 if plan.bits < 31 else np.int64
    indices = np.empty(cap, dtype=idt)
    data = np.empty(cap, dtype=np.float64)
    nnz = hashed_rows_to_csr(
        hashes=hashes,
        values=values,
        col_ns=plan.col_ns,
        terms=plan.terms,
        term_lens=plan.term_lens,
        has_wildcard=plan.wild,
        mask=plan.mask,
        indptr=indptr,
        indices=indices,
        data=data,
    )
    if nnz < 0:  # cannot happen: row_bound bounds every row
        raise RuntimeError("hashed_rows_to_csr ran out of room.")
    if idt == np.int32:
        indptr = indptr.astype(np.int32)
    return sp.csr_matrix((data[:nnz], indices[:nnz], indptr), shape=(n_rows, 1 << plan.bits))


def hashed_rows(tables, plan):
    """:func:`hashes_to_csr` of a batch's ``(hashes, values)`` tables; ``_BatchError`` naming the first row whose
    crossed features (or values hashed to one bucket) overflow."""
    from .._validation import hashed_overflow

    X = hashes_to_csr(*tables, plan)
    overflow = hashed_overflow(X)
    if overflow is not None:
        raise _BatchError(overflow[0], None, overflow[1])
    return X


# ---------------------------------------------------------------------------------------------------
# the reader


class TabularReader:
    """An iterable of ``(X, y)`` chunks (``(X, y, sample_weight)`` when a weight column is given) read from
    a CSV or Parquet file; built by :func:`iter_csv` and :func:`iter_parquet`.

    The file is opened (and its header and column types checked) when the reader is built, so a missing
    label column is an error before anything is trained. Iterating again reads the file again.

    Attributes
    ----------
    spec : InputSpec
        The input contract: format, bits, label / weight / ignored columns, and in ``options`` the column
        kinds and namespaces. ``iter_csv(path, spec=reader.spec)`` reads another file the same way.
    columns : list of str
        The feature columns, in the training file's order.
    """

    def __init__(
        self,
        path,
        fmt,
        *,
        label=None,
        weight=None,
        ignore=(),
        bits=18,
        chunk_size=10_000,
        categorical=(),
        namespaces=None,
        quadratic=(),
        cubic=(),
        ignore_namespaces=(),
        keep_namespaces=(),
        spec=None,
        label_required=True,
        delimiter=None,
        decimal=None,
    ):
        require_pyarrow()
        if fmt not in ("csv", "parquet"):
            raise ValueError(f"format must be 'csv' or 'parquet'; got {fmt!r}.")
        if isinstance(spec, dict):
            spec = InputSpec.from_dict(spec)
        delimiter = _csv_character(delimiter, "delimiter", fmt, spec, "has none")
        decimal = _csv_character(decimal, "decimal", fmt, spec, "holds its numbers as numbers")
        if not isinstance(chunk_size, (int, np.integer)) or isinstance(chunk_size, bool) or chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive integer; got {chunk_size!r}.")
        from ._pipes import is_stream_path, take_pipe
        from ._svmlight import _seekable

        if not hasattr(path, "read") and not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str, os.PathLike or a binary file object; got {type(path).__name__}.")
        if not hasattr(path, "read") and is_stream_path(path):
            path = take_pipe(path)  # "-", /dev/stdin, a FIFO: read once
        self.path = os.fspath(path) if not hasattr(path, "read") else path
        if hasattr(self.path, "read"):
            require_binary(self.path)
        self.source = self.path if isinstance(self.path, str) else file_object_name(self.path)
        self.format = fmt
        self.chunk_size = int(chunk_size)
        self._delimiter = _path_delimiter(self.source) if delimiter is None else delimiter
        self._given_delimiter = delimiter  # (recorded in the spec; None: by the name, or a pipe's header)
        self._given_decimal, self._decimal = decimal, "." if decimal is None else decimal
        self._comma_numbers = []  # text columns that are numbers written with a decimal comma (_read_header)
        self._pipe = None  # a stream read once: its first block (the header and type inference), then the rest
        self._block = _CSV_BLOCK  # pyarrow's CSV block: the header line and about 1 MB of rows
        self._streamed = False  # a pipe's batches have been asked for (it is read once)
        self._reopen = False  # the pipe is a file's decompressed text, opened again for each pass
        self._start = None  # where a seekable file object's text starts: each pass reads it again from there
        self._passes = 0  # passes over the stream begun and not ended (a file object takes one at a time)
        if hasattr(self.path, "read") and (fmt == "csv" or not _seekable(self.path)):
            if _seekable(self.path):
                # read as a pipe (pyarrow would read the header from it, then the rows from where the header's read
                # left it; and it does not decompress a file object), opened again from its start for each pass
                self._start, self._reopen = self.path.tell(), True
                self._pipe = self._open_file_pipe()
            else:
                self._pipe = _open_pipe(self.path, self.source, fmt, self._delimiter)
            header = self._pipe.head().split(b"\n", 1)[0]
            if delimiter is None and b"\t" in header and b"," not in header:  # (a file object has no name)
                self._delimiter = "\t"
                self._pipe.quote_state = _quote_state(self._delimiter)
        elif fmt == "csv" and isinstance(self.path, str) and _compressed(self.path):
            # decompressed here, in whole blocks that do not end in '\r' (_Blocks): pyarrow tells a file's
            # compression by its name only, and decompressing itself (.gz, .bz2, .zst) it may split a quoted
            # '\r\n' across blocks
            self._reopen = True
            self._pipe = self._open_file_pipe()
        if self._decimal == self._delimiter:
            raise ValueError(
                f"decimal and delimiter must differ; both are {self._decimal!r} (delimiter=';' for decimal=',')."
            )
        self.label_required = label_required
        if spec is not None:
            kinds = (spec.options or {}).get("columns")
            if spec.format not in ("csv", "parquet") or not kinds:
                raise ValueError(
                    f"spec describes a {spec.format!r} input without table columns; a table "
                    "reader needs the spec of a CSV or Parquet reader."
                )
            label, weight = spec.label_column, spec.weight_column
            ignore, bits = tuple(spec.ignore_columns), spec.bits
            ns_map = dict((spec.options or {}).get("namespaces", {}))
            categorical = tuple((spec.options or {}).get("categorical", ()))
            quadratic = [t for t in spec.interactions if len(t) == 2]
            cubic = [t for t in spec.interactions if len(t) == 3]
            ignore_namespaces, keep_namespaces = list(spec.ignore), list(spec.keep)
        else:
            if not isinstance(bits, (int, np.integer)) or isinstance(bits, bool) or not 1 <= bits <= 32:
                raise ValueError(f"bits must be an integer between 1 and 32; got {bits!r}.")
            ignore = (ignore,) if isinstance(ignore, str) else tuple(ignore)
            categorical = (categorical,) if isinstance(categorical, str) else tuple(categorical)
            ns_map = _namespace_map(namespaces)
            kinds = None
        if label is not None and label == weight:
            raise ValueError(f"the label and weight columns must differ; both are {label!r}.")
        self._label, self._weight, self._ignore = label, weight, tuple(ignore)
        self._categorical, self._ns_map, self._bits = categorical, ns_map, int(bits)
        self._empty = False  # a CSV of nothing but white space: no header, no rows
        self._no_rows = False  # a CSV of its header line alone, without a line end
        self._names = self._read_header()
        if self._empty:
            if kinds is None:  # nothing to take the columns from
                raise TabularFormatError(
                    self.source,
                    None,
                    None,
                    "no data lines: the file is empty or blank (expected a header line naming the "
                    "columns, then the rows).",
                )
            # read under a model's contract: a file of no rows, whatever its columns would have been
            self._names = [c for c in (*kinds, label, weight) if c is not None]
        self._name_set = frozenset(self._names)  # (looked up per column: a table may have 100,000 of them)
        self._check_columns(kinds is not None)
        if kinds is None:
            kinds = self._infer_kinds()
        else:
            missing = [c for c in kinds if c not in self._name_set]
            if missing:
                raise TabularFormatError(
                    self.source,
                    1 if fmt == "csv" else None,
                    None,
                    f"no column {missing[0]!r}, a feature of the model (columns are "
                    f"matched by name; this file has {_listing(self._names, self._delimiter)}).",
                )
        for s_ in (quadratic, cubic, ignore_namespaces, keep_namespaces):
            if isinstance(s_, str):
                raise ValueError(
                    f"quadratic, cubic, ignore_namespaces and keep_namespaces take lists of strings; "
                    f"got the string {s_!r}."
                )
        self._plan = _Plan(
            list(kinds), kinds, label, weight, ns_map, self._bits, quadratic, cubic, ignore_namespaces, keep_namespaces
        )
        self.spec = InputSpec(
            format=fmt,
            bits=self._bits,
            label_column=label,
            weight_column=weight,
            ignore_columns=list(self._ignore),
            interactions=list(quadratic) + list(cubic),
            ignore=list(ignore_namespaces),
            keep=list(keep_namespaces),
            options={"columns": dict(kinds), "namespaces": dict(ns_map), "categorical": list(categorical)},
        )
        for key, value in (("delimiter", self._given_delimiter), ("decimal", self._given_decimal)):
            if value is not None:
                self.spec.options[key] = value
        self.columns = list(self._plan.names)

    # -- header and kinds ---------------------------------------------------------------------------
    def _read_header(self):
        import pyarrow as pa

        if self.format == "csv":
            from ._svmlight import archive_text, wide_text

            wide = wide_text(self._head(4)) or archive_text(self._head(4))
            if wide is not None:
                raise TabularFormatError(self.source, 1, None, wide)
            # pyarrow reads the header from the first block only: a header longer than a block ("Empty CSV file
            # or block") gets a block of its length and 1 MB more
            self._block = _CSV_BLOCK + self._header_length()
            if self._pipe is None and isinstance(self.path, str) and _crlf_across_blocks(self.path, self._block):
                self._reopen = True  # read in blocks that keep each '\r\n' whole (_Blocks)
                self._pipe = self._open_file_pipe()
        try:
            if self.format == "csv":
                import pyarrow.csv as pacsv

                def first_block_schema(decimal):
                    reader = pacsv.open_csv(
                        self.path if self._pipe is None else _first_block(self._pipe, self._block, self._delimiter),
                        read_options=pacsv.ReadOptions(block_size=self._block),
                        parse_options=_parse_options(self._delimiter),
                        convert_options=pacsv.ConvertOptions(strings_can_be_null=True, decimal_point=decimal),
                    )
                    reader.close() if hasattr(reader, "close") else None
                    return reader.schema

                self._inferred = first_block_schema(self._decimal)
                if (
                    self._delimiter != ","
                    and self._given_decimal is None
                    and any(arrow_kind(f.type) == TEXT for f in self._inferred)
                ):
                    # a file separated otherwise than by commas may write its numbers 3,5: read so, they would be
                    # text, hashed as categories, silently (a text column that is numbers under "," is named)
                    self._comma_numbers = [
                        f.name
                        for f in first_block_schema(",")
                        if arrow_kind(f.type) == NUMERIC and arrow_kind(self._inferred.field(f.name).type) == TEXT
                    ]
            else:
                import pyarrow.parquet as pq

                self._inferred = pq.ParquetFile(self.path).schema_arrow
        except (pa.ArrowInvalid, *_READ_ERRORS) as exc:
            if self.format == "csv" and "Empty CSV file" in str(exc) and self._only_blank_lines():
                self._empty = True
                return []
            header = self._header_alone() if self.format == "csv" and "Empty CSV file" in str(exc) else None
            if header is None and self.format == "csv" and "Empty CSV file or block" in str(exc):
                raise TabularFormatError(self.source, 1, None, self._no_header_reason()) from None
            if header is None:
                raise self._arrow_error(exc, None) from None
            self._inferred, self._no_rows = header, True
        try:
            names = list(self._inferred.names)
        except UnicodeDecodeError as exc:  # (pyarrow reads the names as bytes, and decodes them here)
            raise TabularFormatError(self.source, 1 if self.format == "csv" else None, None, _not_utf8(exc)) from None
        counts = Counter(names)  # (not names.count: a table may have 100,000 columns)
        dup = sorted(n for n, k in counts.items() if k > 1)
        if dup:
            raise TabularFormatError(
                self.source,
                1 if self.format == "csv" else None,
                dup[0],
                "the column name appears more than once; columns are matched by name.",
            )
        return names

    def _header_alone(self):
        """The schema of a CSV text that is its header line without a line end (pyarrow finds no column in it,
        "Empty CSV file or block"), read as the same line ended, as a file of its header and no rows; None for
        another text."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        head = self._head(self._block + 1)
        if len(head) > self._block or not head.strip() or head.endswith((b"\n", b"\r")):
            return None
        try:
            return pacsv.open_csv(
                io.BytesIO(head + b"\n"),
                read_options=pacsv.ReadOptions(block_size=self._block),
                parse_options=_parse_options(self._delimiter),
                convert_options=pacsv.ConvertOptions(strings_can_be_null=True, decimal_point=self._decimal),
            ).schema
        except pa.ArrowInvalid:
            return None

    def _no_header_reason(self):
        """Why pyarrow found no header line ("Empty CSV file or block") in a text that is not blank."""
        head = self._head(_MAX_HEADER)
        if head.count(b'"') % 2:
            return (
                "the header line does not end: a quote in it is never closed, and the rest of the file would be "
                "one column name (expected a header line naming the columns; a quote inside a quoted name is "
                'written twice, "").'
            )
        return (
            f"no end of the header line in the first {len(head):,} bytes (expected a header line naming the columns)."
        )

    def _header_length(self):
        """The bytes of the (decompressed) CSV text up to the end of its first line (a newline outside quotes);
        0 when the first block holds it, or when it is not found in the first ``_MAX_HEADER`` bytes."""
        n = _CSV_BLOCK
        while n <= _MAX_HEADER:
            head = self._head(n)
            raw = np.frombuffer(head, np.uint8)
            ends = np.flatnonzero((raw == 10) & ~_inside_quotes(raw, _quote_state(self._delimiter)))
            if len(ends) or len(head) < n:
                end = int(ends[0]) + 1 if len(ends) else len(head)
                return 0 if end < _CSV_BLOCK // 2 else end
            n *= 4
        return 0

    def _open_file_pipe(self):
        """The file's decompressed text as a pipe (pyarrow tells a CSV file's compression by its name only); a
        seekable file object's from where its text starts."""
        from ._pipes import Replay

        if self._start is not None:
            self.path.seek(self._start)
            return _open_pipe(self.path, self.source, self.format, self._delimiter)
        return _open_pipe(
            Replay(open(self.path, "rb"), self.source, owned=True), self.source, self.format, self._delimiter
        )

    def _head(self, n):
        """The first ``n`` bytes of the (decompressed) CSV text; fewer for a shorter file or one not read by path."""
        if self._pipe is not None:
            try:
                return self._pipe.head(n)[:n]
            except _READ_ERRORS:  # a corrupt compressed file: the bytes that decompress; pyarrow's reading reports it
                return self._pipe.kept()[:n]
        if not isinstance(self.path, str):
            return b""
        from ._svmlight import _Source

        with _Source(self.path, zstd=True).opened() as stream:
            try:
                return stream.read(n)
            except _READ_ERRORS:  # a corrupt compressed file: pyarrow's reading reports it
                return b""

    def _only_blank_lines(self):
        """Whether the CSV holds no byte but white space (pyarrow says "Empty CSV file", or "Empty CSV file or
        block" when its first block is blank lines, which the rest of a large file might not be)."""
        if self._pipe is not None:
            head = self._pipe.head(_CSV_BLOCK + 1)
            return len(head) <= _CSV_BLOCK and not head.strip()
        if not isinstance(self.path, str):
            return False
        from ._svmlight import _readinto, _Source

        with _Source(self.path, zstd=True).opened() as stream:
            buf = bytearray(1 << 20)
            while n := _readinto(stream, memoryview(buf)):
                if bytes(buf[:n]).strip():
                    return False
            return True

    def _check_columns(self, from_spec):
        line = 1 if self.format == "csv" else None
        for what, col in (("label", self._label), ("weight", self._weight)):
            if col is None or col in self._name_set:
                continue
            if not self.label_required:  # prediction: neither is needed
                continue
            raise TabularFormatError(
                self.source,
                line,
                None,
                f"no {what} column {col!r}; the file has {_listing(self._names, self._delimiter)}.",
            )
        if not from_spec:
            for col in self._ignore + self._categorical + tuple(self._ns_map):
                if col not in self._name_set:
                    raise TabularFormatError(
                        self.source,
                        line,
                        None,
                        f"no column {col!r}; the file has {_listing(self._names, self._delimiter)}.",
                    )

    def _infer_kinds(self):
        import pyarrow as pa

        skip = {self._label, self._weight, *self._ignore}
        self._blank_start = set()  # CSV columns without a value in the first block, read as numbers
        kinds = {}
        for name in self._names:
            if name in skip:
                continue
            typ = self._inferred.field(name).type
            kind = arrow_kind(typ)
            if kind is None:
                raise TabularFormatError(
                    self.source,
                    None,
                    name,
                    f"type {typ} is not a feature type (number, text, boolean); leave the column out with "
                    "--ignore-column (ignore= in Python).",
                )
            if self.format == "csv" and pa.types.is_null(typ):
                # no value in the first block: numbers, as pandas reads a column of empty cells (as text, a later
                # 2.5 would be the category 'a=2.5', silently; as numbers, a later 'abc' is an error naming
                # --categorical)
                kind = NUMERIC
                self._blank_start.add(name)
            if name in self._categorical:
                kind = TEXT
            elif kind == TEXT and name in self._comma_numbers:
                raise TabularFormatError(
                    self.source,
                    None,
                    name,
                    "its values are numbers written with a decimal comma (3,5), which would be read as text and "
                    "hashed as categories: give decimal=',' (the command line's --decimal ','), or name the column "
                    "in categorical (--categorical) to hash its values as text.",
                )
            kinds[name] = kind
        if not kinds:
            raise TabularFormatError(
                self.source, None, None, "no feature column left after the label, weight and ignored columns."
            )
        return kinds

    # -- streaming ----------------------------------------------------------------------------------
    def _arrow_types(self):
        import pyarrow as pa

        # text as dictionaries: each distinct value of a block is hashed once
        types = {NUMERIC: pa.float64(), TEXT: pa.dictionary(pa.int32(), pa.string()), BOOLEAN: pa.bool_()}
        out = {c: types[self._plan.kinds[c]] for c in self._plan.names}
        if self._weight is not None:
            out[self._weight] = pa.float64()
        return out

    def _batches(self, use_threads=False):
        """Arrow record batches of the needed columns."""
        import pyarrow as pa

        wanted = [c for c in self._names if c in self._plan.seeds or c in (self._label, self._weight)]
        if self.format == "csv":
            import pyarrow.csv as pacsv

            types = {c: t for c, t in self._arrow_types().items() if c in self._name_set}
            if self._label in self._name_set and self._label not in types:
                lt = self._inferred.field(self._label).type
                if arrow_kind(lt) == TEXT:
                    types[self._label] = pa.string()
                elif pa.types.is_integer(lt):  # (a later 4.5 or 2**63 is a label as well: labels are float64)
                    types[self._label] = pa.float64()
            if self._start is not None and self._passes:
                raise ValueError(
                    f"{self.source}: a file object is read by one pass at a time (both would move its position); "
                    "finish or drop the pass over it first, or give the file's path."
                )
            if self._pipe is not None and self._reopen and (self._streamed or self._pipe.closed):
                if not self._passes:  # (a pass still reading a file's text keeps its own pipe, and closes it)
                    self._pipe.close()
                self._pipe, self._streamed = self._open_file_pipe(), False
            if self._pipe is not None and (self._streamed or self._pipe.closed):
                raise ValueError(f"{self.source} is a stream and is read once; open a new reader for another pass.")
            options = {
                "read_options": pacsv.ReadOptions(block_size=self._block, use_threads=use_threads),
                "parse_options": _parse_options(self._delimiter),
                "convert_options": pacsv.ConvertOptions(
                    column_types=types, include_columns=wanted, strings_can_be_null=True, decimal_point=self._decimal
                ),
            }
            if self._pipe is None:
                yield from pacsv.open_csv(self.path, **options)
                return
            from ._pipes import Pumped

            self._streamed, pipe = True, self._pipe
            self._passes += 1
            source = Pumped(pipe, self._block)  # pyarrow's reading thread never waits in the pipe's read
            released = source.released
            # pyarrow's buffered stream copies what it reads into memory of its own: the blocks the reader
            # keeps, possibly past the end of the command on a thread of its own, hold no Python object
            # (a buffer of one block: pyarrow's reads of a block go to _Blocks as they are, copied, not gathered)
            stream = pa.BufferedInputStream(pa.PythonFile(_Blocks(source), mode="r"), buffer_size=self._block)
            reader = None
            try:
                reader = pacsv.open_csv(stream, **options)
                yield from reader
            except BaseException as exc:  # a read error comes with the frames of the reads, which hold the
                traceback.clear_frames(exc.__traceback__)  # source: pyarrow lets go of it once they drop it
                raise
            finally:  # a Ctrl-C, a bad row or the end: pyarrow's thread gets the end of the stream now, and
                self._passes -= 1
                if pipe is not self._pipe:  # another pass opened the file again meanwhile: this pipe is this pass's
                    pipe.close()
                source.close()  # the command waits until pyarrow has let go of it (milliseconds), so that no
                del source, stream, reader  # thread outside Python's calls into Python when the interpreter exits
                released.wait(_RELEASE_WAIT)
        else:
            import pyarrow.parquet as pq

            text = [
                c
                for c in self._plan.names
                if self._plan.kinds[c] == TEXT
                and c in self._name_set
                and arrow_kind(self._inferred.field(c).type) == TEXT
                and not pa.types.is_temporal(self._inferred.field(c).type)
            ]
            # pre_buffer=False: the default pre-buffering keeps column chunks of the file's row groups
            # cached as the file is read (peak memory grew ~55 MB from 1M to 4M click-log rows)
            pf = pq.ParquetFile(self.path, read_dictionary=text, pre_buffer=False)
            yield from pf.iter_batches(batch_size=max(self.chunk_size, 1024), columns=wanted, use_threads=use_threads)

    def __iter__(self):
        import pyarrow as pa

        if self._empty or self._no_rows:
            if self._pipe is not None:
                self._pipe.close()
            return
        pending = []  # (X, y, w) pieces of the next chunk
        n_pending = 0
        row0 = 0  # rows read before the current batch
        batches = self._batches()
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except (pa.ArrowInvalid, pa.ArrowTypeError, *_READ_ERRORS) as exc:
                raise self._arrow_error(exc, row0) from None
            n = batch.num_rows
            if n == 0:
                continue
            piece = self._convert(batch, row0)
            row0 += n
            last = batch
            pending.append(piece)
            n_pending += n
            while n_pending >= self.chunk_size:
                chunk, pending, n_pending = _take(pending, self.chunk_size)
                yield self._out(chunk)
        if row0 and self.format == "csv":
            self._check_closed_quotes(last, row0)
        if n_pending:
            chunk, pending, n_pending = _take(pending, n_pending)
            yield self._out(chunk)

    def _check_closed_quotes(self, batch, rows):
        """pyarrow reads a quoted value that is never closed to the end of the file, silently: the rows after it
        become one value. When a text value of the last row (``rows``: the rows read) spans lines or holds the
        delimiter, a file or pipe that ends inside a quoted value (``csv_quote_scan``): an error naming the line of
        that row (a pipe's record: it is not read again)."""
        if self._pipe is None and not isinstance(self.path, str):
            return
        marks = ("\n", "\r", self._delimiter)
        row = batch.slice(batch.num_rows - 1, 1).to_pylist()[0]  # text columns may be dictionary-encoded
        spread = [name for name, v in row.items() if isinstance(v, str) and any(m in v for m in marks)]
        if spread and (self._pipe.quotes if self._pipe is not None else _ends_in_quotes(self.path)):
            raise TabularFormatError(
                self.source,
                rows + 1 if not isinstance(self.path, str) else record_line(self.path, rows + 1),
                spread[-1],
                "the quoted value that starts on this line is never closed: the rest of the file was read into it "
                '(a quote inside a quoted value is written twice, "").',
            )

    def _out(self, chunk):
        X, y, w = chunk
        return (X, y) if self._weight is None else (X, y, w)

    def _convert(self, batch, row0):
        import pyarrow as pa

        cols = {name: batch.column(i) for i, name in enumerate(batch.schema.names)}
        n = batch.num_rows
        try:
            if self.format == "parquet":
                self._check_parquet_types(cols)
            errors, out = [], []
            for part in (
                lambda: hashed_rows(hash_batch({c: cols.get(c) for c in self._plan.names}, n, self._plan), self._plan),
                lambda: self._labels(cols.get(self._label), n),
                lambda: self._weights(cols.get(self._weight), n) if self._weight is not None else None,
            ):
                try:
                    out.append(part())
                except _BatchError as exc:  # report the earliest bad row of the batch
                    errors.append(exc)
            if errors:
                raise _first_error(errors)
            X, y, w = out
        except _BatchError as exc:
            raise self._relined(
                TabularFormatError(self.source, self._where(row0, exc.row), exc.column, exc.reason, self._unit)
            ) from None
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise TabularFormatError(self.source, None, None, _first_line(str(exc)), self._unit) from None
        return X, y, w

    @property
    def _unit(self):
        return "line" if self.format == "csv" else "row"

    def _where(self, row0, row):
        if row is None:
            return None
        return row0 + row + (2 if self.format == "csv" else 1)

    def _check_parquet_types(self, cols):
        for name in self._plan.names:
            kind = self._plan.kinds[name]
            arr = cols.get(name)
            if arr is None:
                continue
            got = arrow_kind(arr.type)
            if got is None or (kind == NUMERIC and got != NUMERIC) or (kind == BOOLEAN and got != BOOLEAN):
                raise _BatchError(
                    None,
                    name,
                    f"expected {_article(kind)} column (as in the training data); this file has type {arr.type}.",
                )

    def _labels(self, arr, n):
        import pyarrow as pa
        import pyarrow.compute as pc

        if arr is None:
            return None if self._label is None or not self.label_required else np.full(n, np.nan)
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        missing = np.zeros(n, dtype=np.bool_)
        if arr.null_count:
            missing = ~pc.is_valid(arr).to_numpy(zero_copy_only=False)
            if self.label_required:
                raise _BatchError(int(np.argmax(missing)), self._label, "the label is missing.")
            if missing.all():  # prediction: a label column left empty
                return np.full(n, np.nan)
        kind = arrow_kind(arr.type)
        if kind == TEXT:  # (prediction: a row without a label has the label '')
            return np.asarray(arr.cast(pa.string()).fill_null("").to_numpy(zero_copy_only=False), dtype=str)
        if kind not in (NUMERIC, BOOLEAN):
            raise _BatchError(None, self._label, f"type {arr.type} cannot be a label.")
        y = arr.cast(pa.float64()).to_numpy(zero_copy_only=False)  # (prediction: a row without a label: NaN)
        bad = ~np.isfinite(y) & ~missing
        if bad.any():
            raise _BatchError(int(np.argmax(bad)), self._label, f"label {y[bad][0]} is not finite.")
        return y

    def _weights(self, arr, n):
        import pyarrow as pa
        import pyarrow.compute as pc

        if arr is None:  # prediction on a file without the weight column
            return None
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        if pa.types.is_null(arr.type) and not self.label_required:  # prediction: a weight column left empty
            return np.ones(n)
        if arrow_kind(arr.type) != NUMERIC:
            raise _BatchError(None, self._weight, f"weights must be numbers; this column has type {arr.type}.")
        missing = np.zeros(n, dtype=np.bool_)
        if arr.null_count:
            missing = ~pc.is_valid(arr).to_numpy(zero_copy_only=False)
            if self.label_required:
                raise _BatchError(int(np.argmax(missing)), self._weight, "the weight is missing.")
        w = arr.cast(pa.float64()).to_numpy(zero_copy_only=False)
        if missing.any():  # prediction: a row without a weight has the default weight
            w[missing] = 1.0
        bad = ~np.isfinite(w) | (w < 0)
        if bad.any():
            raise _BatchError(int(np.argmax(bad)), self._weight, f"weight {w[bad][0]} is not a finite number >= 0.")
        return w

    # -- errors -------------------------------------------------------------------------------------
    def _header_line_fields(self):
        """The fields of the file's first line split at the delimiter (what the messages name the columns by when
        pyarrow failed before reading the header); [] when it cannot be read again."""
        try:
            if self._pipe is not None:
                head = self._pipe.head()
            elif isinstance(self.path, str):
                with open(self.path, "rb") as f:
                    head = f.read(1 << 16)
            else:
                return []
        except OSError:
            return []
        line = head.split(b"\n", 1)[0].removeprefix(b"\xef\xbb\xbf").rstrip(b"\r")
        return line.decode("utf-8", "replace").split(self._delimiter)

    def _arrow_error(self, exc, row0):
        """A one-line TabularFormatError from pyarrow's message; for CSV, the line number is found by
        re-reading the file single-threaded (pyarrow numbers rows only then)."""
        msg = str(exc)
        if isinstance(exc, _READ_ERRORS) and not msg.startswith("CSV"):  # I/O, a truncated stream
            damage = None
            if self.format == "csv" and isinstance(self.path, str):
                damage = _damaged_line(self.path)
            elif self._pipe is not None and self._pipe.decompressing:  # the lines handed out or read ahead
                line = self._pipe.lines + self._pipe.kept().count(b"\n") + 1
                damage = line, self._pipe.decompression_reason(exc)
            if damage is not None:
                return TabularFormatError(self.source, damage[0], None, damage[1])
            return TabularFormatError(
                self.source, None, None, f"cannot read the file ({_first_line(msg)}).", self._unit
            )
        if self.format == "csv" and "straddling object straddles" in msg:
            return self._long_row_error(row0)
        if self.format == "csv" and "Row #" not in msg:
            msg = self._locate(msg, row0 is not None)
        names = (
            self._names
            if hasattr(self, "_names")
            else list(getattr(self, "_inferred", None) and self._inferred.names or [])
        )
        if not names and self.format == "csv":  # the first block failed before its header was known
            names = self._header_line_fields()
        err = _csv_error(self.source, msg, names, self._delimiter)
        if err.column in getattr(self, "_blank_start", ()) and err.reason.startswith("expected a number"):
            reason = err.reason.replace(
                "(as in the training data or the file's first rows)",
                "(the column has no value in the file's first block, about 1 MB, and is read as numbers; "
                f"--categorical {err.column} (categorical= in Python) reads it as text)",
            )
            err = TabularFormatError(err.source, err.line, err.column, reason, err.unit)
        return self._relined(err)

    def _long_row_error(self, row0):
        """A row too long for pyarrow's blocks ("straddling object straddles two block boundaries": a row may span
        two blocks, not three), with the line and length of the first row longer than a block after the ``row0``
        rows read (a file; a pipe is not read again)."""
        limit = (
            f"longer than the blocks of {self._block:,} bytes the CSV reader reads (a row may span two blocks, "
            "not three)"
        )
        found = _long_record(self.path, (row0 or 0) + 2, self._block) if isinstance(self.path, str) else None
        if found is None:
            return TabularFormatError(self.source, None, None, f"a row is {limit}; shorten its values or leave it out.")
        line, size = found
        return TabularFormatError(
            self.source, line, None, f"the row is {size:,} bytes long, {limit}; shorten its values or leave it out."
        )

    def _relined(self, err):
        """``err`` with its CSV record number (the header is record 1) turned into the line of the file where
        that record starts (:func:`record_line`). A pipe or file object, read once, keeps the record number."""
        if self.format != "csv" or not isinstance(self.path, str) or not err.line or err.line <= 1:
            return err
        line = record_line(self.path, err.line)
        if line is None:
            return err
        return TabularFormatError(err.source, line, err.column, err.reason, err.unit)

    def _locate(self, msg, typed):
        """pyarrow's message again, from a single-threaded read (which numbers the rows). An error in the first
        block of a pipe (the header's, ``typed`` False) is found again in that block, which is kept."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        source = self.path
        if self._pipe is not None and not (self._reopen and typed):  # a stream cannot be read again
            if typed or self._streamed or self._pipe.closed:
                return msg
            try:
                source = _first_block(self._pipe, self._block, self._delimiter)
            except _READ_ERRORS:
                return msg
        try:
            if typed:
                for _ in self._batches(use_threads=False):
                    pass
            else:
                for _ in pacsv.open_csv(
                    source,
                    read_options=pacsv.ReadOptions(block_size=self._block, use_threads=False),
                    parse_options=_parse_options(self._delimiter),
                ):
                    pass
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            return str(exc)
        return msg


def _csv_character(value, name, fmt, spec, parquet):
    """The reader's ``delimiter`` or ``decimal`` (``name``): ``value`` when given (checked, and only for CSV; a
    Parquet file ``parquet``), else the one ``spec`` records for its training files, else None."""
    if value is not None:
        check_delimiter(value, name)
        if fmt != "csv":
            raise ValueError(f"{name} applies to CSV text; a {fmt} file {parquet} (got {value!r}).")
        return value
    return None if spec is None else (spec.options or {}).get(name)


def check_delimiter(value, name):
    """``value`` as a CSV delimiter: one character other than a quote, a line end or NUL; a ValueError naming
    ``name`` (the parameter, or the command line's option) else."""
    if not isinstance(value, str) or len(value) != 1 or value in '"\n\r\0':
        raise ValueError(
            f"{name} must be one character other than a quote or a line end (';', '|', a tab); got {value!r}."
        )
    return value


def _path_delimiter(name):
    """The delimiter of the CSV file named ``name``: a tab for a ``.tsv`` file (compressed or not), else a comma."""
    base = name.lower()
    for suffix in _COMPRESSED_SUFFIXES:
        base = base.removesuffix(suffix)
    return "\t" if base.endswith(".tsv") else ","


def _quote_state(delimiter):
    """Where a CSV text separated by ``delimiter`` stands with its quotes at its start
    (:func:`~streamlearn._kernels.tabular.new_quote_state`)."""
    from .._kernels.tabular import new_quote_state

    return new_quote_state(delimiter)


def _inside_quotes(raw, state):
    """Which bytes of ``raw`` (uint8, the next bytes of a CSV text) are inside a quoted value, carrying ``state``
    (:func:`~streamlearn._kernels.tabular.csv_quote_scan`)."""
    from .._kernels.tabular import csv_quote_scan

    inside = np.empty(raw.shape[0], dtype=np.uint8)
    csv_quote_scan(raw, state, inside)
    return inside.view(np.bool_)


def _ends_in_quotes(path):
    """Whether the (decompressed) CSV file ends inside a quoted value: one never closed."""
    from .._kernels.tabular import csv_quote_scan
    from ._svmlight import _readinto, _Source

    state = _quote_state(_path_delimiter(path))
    with _Source(path, zstd=True).opened() as stream:
        buf = bytearray(1 << 20)
        inside = np.empty(len(buf), dtype=np.uint8)
        ends_inside = False
        while n := _readinto(stream, memoryview(buf)):
            ends_inside = csv_quote_scan(np.frombuffer(buf, np.uint8, n), state, inside)
        return bool(ends_inside)


def _damaged_line(path):
    """``(line, reason)`` for a compressed file that cannot be decompressed to its end: the line (1-based)
    where the decompressed text stops and the decompressor's reason; None when the file decompresses to its
    end (the error was elsewhere)."""
    from ._svmlight import _Source, decompression_reason, read_block

    with _Source(path, zstd=True).opened() as stream:
        buf = bytearray(1 << 20)
        lines = 0
        while True:
            try:
                n = read_block(stream, memoryview(buf))
            except _READ_ERRORS as exc:
                return lines + 1, decompression_reason(stream, exc)
            if not n:
                return None
            lines += buf.count(b"\n", 0, n)


def record_line(path, record):
    """The 1-based line of the CSV file ``path`` where record ``record`` (1-based, the header is record 1)
    starts, or None when the file holds fewer records. Records and lines differ after quoted fields holding
    newlines and after empty lines (which pyarrow skips). The file is read again, in blocks of 1 MiB."""
    done = 0  # records before this block's
    for lines, _ in _csv_records(path):
        if done + len(lines) >= record:
            return int(lines[record - done - 1])
        done += len(lines)
    return None


def _long_record(path, first, limit):
    """``(line, bytes)``: the line where the first record from record ``first`` on (1-based, the header is record 1;
    empty lines are no record, as for pyarrow) of the CSV file ``path`` starts, and its length, when it is longer
    than ``limit`` bytes; None when no record is. The file is read again, in blocks of 1 MiB."""
    done = 0
    for lines, lengths in _csv_records(path):
        long = np.flatnonzero((lengths > limit) & (done + np.arange(1, len(lines) + 1) >= first))
        if len(long):
            k = int(long[0])
            return int(lines[k]), int(lengths[k])
        done += len(lines)
    return None


def _csv_records(path):
    """The records of the CSV file ``path`` (the header is the first; an empty line, ``\n`` or ``\r\n``, is no
    record, as for pyarrow; a newline inside quotes does not end one), block by block: for the records that end
    in each block of 1 MiB (the last one at the end of the file, with or without a line end), the arrays of the
    lines where they start and of their lengths in bytes (their line end included). One vectorised sweep per
    block."""
    from ._svmlight import _readinto, _Source

    with _Source(path, zstd=True).opened() as stream:
        buf = bytearray(1 << 20)
        pos = 0  # bytes before this block
        lines = 1  # the line at the start of this block
        quotes = _quote_state(_path_delimiter(path))  # where the text stands with its quotes
        start, start_line = 0, 1  # the byte and line where the open record starts
        while True:
            n = _readinto(stream, memoryview(buf))
            raw = np.frombuffer(buf, np.uint8, n)
            newlines = raw == 10
            inside = _inside_quotes(raw, quotes)
            ends = np.flatnonzero(newlines & ~inside)  # the newline ending each record of this block
            if n == 0:  # the last record, without a line end
                ends = np.array([-1], dtype=np.int64) if pos > start else np.zeros(0, np.int64)
            before = np.cumsum(newlines)  # line feeds up to and including each byte
            starts = np.concatenate([[start], pos + ends[:-1] + 1])
            lengths = pos + ends + 1 - starts
            start_lines = np.concatenate([[start_line], lines + before[ends[:-1]]]) if len(ends) else np.zeros(0)
            first_bytes = np.concatenate([[13 if start < pos else raw[0] if n else 0], raw[ends[:-1] + 1]])
            blank = (lengths == 1) | ((lengths == 2) & (first_bytes == 13))
            yield start_lines[~blank], lengths[~blank]
            if n == 0:
                return
            if len(ends):
                start, start_line = pos + int(ends[-1]) + 1, lines + int(before[ends[-1]])
            lines += int(before[-1])
            pos += n


_TO_UTF8 = "a file in another encoding can be converted, e.g. with iconv -f latin1 -t utf-8"


def _not_utf8(exc):
    """The reason a header whose column name ``exc.object`` (bytes) is not UTF-8 is refused."""
    from ._svmlight import shown_token

    return f"the column name {shown_token(exc.object)!r} is not UTF-8 text; expected UTF-8 ({_TO_UTF8})."


def _csv_error(source, msg, names, delimiter=","):
    column = None
    if m := re.search(
        r"In CSV column #(\d+): (?:Row #(\d+): )?CSV conversion error to (\w+): invalid value '(.*)'", msg
    ):
        col, row, typ, value = m.groups()
        column = names[int(col)] if int(col) < len(names) else f"#{col}"
        expected = {"double": "a number", "bool": "a boolean (true/false)"}.get(typ, typ)
        reason = f"expected {expected} (as in the training data or the file's first rows); got {value!r}."
    elif m := re.search(r"In CSV column #(\d+): (?:Row #(\d+): )?CSV conversion error to \w+: invalid UTF8 data", msg):
        col, row = m.groups()
        column = names[int(col)] if int(col) < len(names) else f"#{col}"
        reason = f"expected UTF-8 text; the value holds other bytes ({_TO_UTF8})."
    elif m := re.search(r"CSV parse error: (?:Row #(\d+): )?Expected (\d+) columns, got (\d+)", msg):
        row, want, got = m.groups()
        reason = f"expected {want} columns (as in the header), got {got}."
        if (hint := _other_separator(names, delimiter)) is not None:
            reason = f"{reason[:-1]}; the header is one column, {names[0]!r}: {hint}."
    else:
        m = re.search(r"Row #(\d+)", msg)
        row = m.group(1) if m else None
        reason = _first_line(msg)
    return TabularFormatError(source, int(row) if row else None, column, reason)


def _compressed(path):
    """Whether the CSV file ``path`` is gzip, bz2, xz or zstd compressed (told by its first bytes) or named as such
    (``.gz``, ``.bz2``, ``.zst``, ``.zstd``: pyarrow would decompress some by their name): it is then read as a
    pipe of its decompressed text."""
    from ._pipes import compression

    try:
        with open(path, "rb") as f:
            kind = compression(f.read(8))
    except OSError:  # (reported when the file is read)
        return False
    return kind is not None or os.path.splitext(path)[1].lower() in (".gz", ".bz2", ".zst", ".zstd")


def _crlf_across_blocks(path, block):
    """Whether the plain CSV file ``path`` has a '\\r' at the end of one of the blocks of ``block`` bytes that
    pyarrow reads it in and a '\\n' at the start of the next: pyarrow then drops the '\\n', silently, when the
    pair is inside a quoted value (a multi-line cell of a Windows export), and such a file is read through
    :class:`_Blocks` instead. Two bytes are read per block."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            for end in range(block, size, block):
                f.seek(end - 1)
                if f.read(2) == b"\r\n":
                    return True
    except OSError:  # (reported when the file is read)
        return False
    return False


class _Blocks(io.RawIOBase):
    """The text of ``source`` in whole reads (each fills the buffer it is given, up to the end of the text) that
    never end in '\\r': that byte is held back for the next read. pyarrow's CSV reader takes each read as a
    block and drops a '\\n' that starts a block after one ending in '\\r', even inside a quoted value (the
    '\\r\\n' of a multi-line cell); and a block shorter than the rows it holds made it stop ("straddling object
    straddles two block boundaries").

    >>> b = _Blocks(io.BytesIO(b'1,"a\\r\\nb"\\n'))
    >>> [b.read(5), b.read(5), b.read(5)]
    [b'1,"a', b'\\r\\nb"\\n', b'']
    """

    def __init__(self, source):
        self._source = source
        self._carry = b""

    def readable(self):
        return True

    def readinto(self, b):
        view = memoryview(b).cast("B")
        n = len(self._carry)
        view[:n] = self._carry
        self._carry = b""
        while n < len(view):
            k = self._source.readinto(view[n:])
            if not k:
                break
            n += k
        if n == len(view) and n > 1 and view[n - 1] == 13:
            self._carry = b"\r"
            n -= 1
        return n


def _open_pipe(f, name, fmt, delimiter):
    """A pipe as a :class:`~streamlearn.datasets._pipes.Replay` of its decompressed bytes (gzip, bz2, xz, zstd by
    their magic bytes, or by the name when too few bytes tell); Parquet is refused (it needs random access)."""
    from ._pipes import Replay
    from ._svmlight import _decompressor, _detect

    raw = f if isinstance(f, Replay) else Replay(f, name, owned=False)
    kind = _detect(raw.head(16), os.path.splitext(name)[1].lower(), zstd=True)
    pipe = raw if kind is None else Replay(_decompressor(kind, raw), name, owned=True, inner=raw)
    pipe.counting = True  # (whether it ends inside quotes, and its lines, for the errors)
    pipe.quote_state = _quote_state(delimiter)
    try:
        pipe.head()  # read ahead: the header and the delimiter
    except _READ_ERRORS as exc:
        if pipe.decompressing:  # the line where the text read ahead stops
            raise TabularFormatError(name, pipe.kept().count(b"\n") + 1, None, pipe.decompression_reason(exc)) from None
        raise TabularFormatError(name, None, None, f"cannot read the file ({_first_line(str(exc))}).") from None
    if fmt == "parquet" or pipe.head(4) == b"PAR1":
        raise TabularFormatError(
            name,
            None,
            None,
            "Parquet cannot be read from a pipe (its footer, at the end of the file, is read first); "
            "give the file's path instead.",
        )
    return pipe


def _parse_options(delimiter):
    """pyarrow's CSV options: a quoted field may hold newlines (RFC 4180; without the option, such a field
    across a block boundary stops the read)."""
    import pyarrow.csv as pacsv

    return pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True)


def _first_block(pipe, block, delimiter):
    """The complete rows of a pipe's first CSV block (``block`` bytes), not consumed: pyarrow infers the
    column types from them, exactly as from the first block of a file. The block ends at its last newline
    outside quotes; when it holds no row after the header, pyarrow reads on, a block at a time."""
    import io

    size = block
    while True:
        head = pipe.head(size)
        if len(head) < size:
            return io.BytesIO(head)
        raw = np.frombuffer(head, np.uint8)
        ends = np.flatnonzero((raw == 10) & ~_inside_quotes(raw, _quote_state(delimiter)))  # the rows' ends
        if len(ends) > 1:  # the header and a row at least
            return io.BytesIO(head[: int(ends[-1]) + 1])
        size += block


def _take(pending, n):
    """The first ``n`` rows of the pending pieces as one chunk, and what is left."""
    out, left, got = [], [], 0
    for X, y, w in pending:
        if got >= n:
            left.append((X, y, w))
            continue
        k = min(n - got, X.shape[0])
        out.append((X[:k], None if y is None else y[:k], None if w is None else w[:k]))
        if k < X.shape[0]:
            left.append((X[k:], None if y is None else y[k:], None if w is None else w[k:]))
        got += k
    X = out[0][0] if len(out) == 1 else sp.vstack([p[0] for p in out], format="csr")
    ys = [p[1] for p in out]
    y = None if ys[0] is None else (ys[0] if len(ys) == 1 else np.concatenate(ys))
    ws = [p[2] for p in out]
    w = None if ws[0] is None else (ws[0] if len(ws) == 1 else np.concatenate(ws))
    return (X, y, w), left, sum(p[0].shape[0] for p in left)


def _first_line(text):
    return text.strip().splitlines()[0] if text.strip() else text


def _listing(names, delimiter=",", k=8):
    shown = ", ".join(repr(n) for n in names[:k])
    hint = _other_separator(names, delimiter)
    if hint is not None:
        return f"one column, {shown}: {hint}"
    return f"columns {shown}" + (f" and {len(names) - k} more" if len(names) > k else "")


def _other_separator(names, delimiter=","):
    """Why a header read as one column (split at ``delimiter``) whose name holds ',', ';', '|' or a tab is most
    likely a file separated by that character, and how to read it so; None for other headers."""
    if len(names) != 1:
        return None
    for sep in (",", ";", "|", "\t"):
        if sep != delimiter and sep in str(names[0]):
            option = "\\t" if sep == "\t" else sep
            if delimiter != ",":  # (given, or a model's)
                return (
                    f"its fields look separated by {sep!r}, and it was read separated by {delimiter!r}: give "
                    f"delimiter={sep!r} (the command line's --delimiter '{option}')"
                )
            decimal = " (and decimal=',' / --decimal ',' if its numbers are written 3,5)" if sep == ";" else ""
            return (
                f"its fields look separated by {sep!r}, and CSV files are read separated by ',' (.tsv files by "
                f"tabs) unless told: give delimiter={sep!r} (the command line's --delimiter '{option}'){decimal}"
            )
    return None


def _article(kind):
    return {"numeric": "a numeric", "text": "a text", "boolean": "a boolean"}[kind]


# ---------------------------------------------------------------------------------------------------
# public entry points


def iter_csv(
    path: PathLike,
    label: str | None = None,
    weight: str | None = None,
    ignore: Sequence[str] = (),
    bits: int = 18,
    chunk_size: int = 10_000,
    *,
    categorical: Sequence[str] = (),
    namespaces: Mapping[str, Sequence[str]] | None = None,
    quadratic: Sequence[str] = (),
    cubic: Sequence[str] = (),
    ignore_namespaces: Sequence[str] = (),
    keep_namespaces: Sequence[str] = (),
    spec: InputSpec | Mapping[str, Any] | None = None,
    label_required: bool = True,
    delimiter: str | None = None,
    decimal: str | None = None,
) -> TabularReader:
    """Stream a CSV file (plain, or gzip, bz2, xz or zstd compressed: told by its first bytes) as hashed sparse
    chunks.

    Parameters
    ----------
    path : str, path-like or binary file object
        ``"-"`` (or ``/dev/stdin``, a named pipe) is standard input, read once. A file object opened in binary
        mode is read from where it stands: again from there for each pass if it can seek (an opened file, a
        ``BytesIO``), once if not (a pipe); compressed text is decompressed either way.
    label : str or None
        Name of the label column (numbers, booleans or text). None: no labels (``y`` is None).
    weight : str or None
        Name of an importance-weight column (numbers >= 0); chunks are then ``(X, y, sample_weight)``.
    ignore : sequence of str
        Columns that are not features (ids, timestamps, leaks).
    bits : int
        Hash bits: ``X`` has ``2 ** bits`` columns.
    chunk_size : int
        Rows per chunk (the last chunk may be shorter).
    categorical : sequence of str
        Numeric columns to hash as ``column=value`` indicators (ids, codes) instead of reading as values.
    namespaces : dict or None
        ``{namespace: [column, ...]}``: hash these columns in a shared namespace instead of one namespace
        per column (named after the column).
    quadratic, cubic : sequences of str
        Namespace pairs / triples to cross, by first character, as VW's ``-q ua`` / ``--cubic uaa``
        (``":"`` is any namespace): each row gets the crossed features VW gives the same row written as
        VW text with these namespaces.
    ignore_namespaces, keep_namespaces : sequences of str
        Drop the columns of these namespaces / keep only these (VW's ``--ignore`` / ``--keep``, by first
        character).
    spec : InputSpec, dict or None
        The ``spec`` of an earlier reader (a trained model's ``input_spec_``): read this file exactly as
        that one (label, weight, ignored columns, bits, column kinds, namespaces); the other options are
        then not used.
    label_required : bool
        Is a file without the label (or weight) column, or with an empty label (or weight) cell, an error?
        ``False`` for prediction: ``y`` (and the weights) are then None without the column; an empty label
        is NaN ('' in a text column) and an empty weight 1.
    delimiter : str or None
        The one character between fields (``";"``, ``"|"``, ``"\\t"``; not a quote or a line end). None: the
        ``spec``'s when it records one, else a tab for a ``.tsv`` file (or a pipe whose header holds tabs and
        no comma) and a comma for any other. A delimiter given here is recorded in the reader's ``spec``, so
        that the files read through it (a model's test and prediction files) are split the same way.
    decimal : str or None
        The decimal mark of the numbers (``","`` for ``3,5``, with ``delimiter=";"``); None: the ``spec``'s
        when it records one, else ``"."``. Recorded in the ``spec``, as the delimiter. In a file not separated
        by commas, a text column whose values are all numbers written with a decimal comma is an error naming
        it (read with the point, they would be hashed as categories): give ``decimal=","``, or name the column
        in ``categorical`` to keep it text.

    Returns
    -------
    TabularReader
        An iterable of ``(X, y)`` chunks (``(X, y, sample_weight)`` with ``weight``): ``X`` a CSR float64
        matrix of shape ``(rows, 2 ** bits)``, ``y`` a 1-D array.

    Examples
    --------
    >>> import os, tempfile
    >>> from streamlearn.datasets import iter_csv
    >>> path = os.path.join(tempfile.mkdtemp(), "clicks.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("clicked,age,country\\n1,31,FR\\n0,,DE\\n")
    >>> reader = iter_csv(path, label="clicked", bits=10)
    >>> X, y = next(iter(reader))
    >>> X.shape, y.tolist(), X.getnnz(axis=1).tolist()
    ((2, 1024), [1.0, 0.0], [2, 1])
    >>> reader.spec.options["columns"]
    {'age': 'numeric', 'country': 'text'}

    A file whose fields are separated by semicolons:

    >>> with open(path, "w") as f:
    ...     _ = f.write("clicked;price;country\\n1;3,5;FR\\n0;12,25;DE\\n")
    >>> reader = iter_csv(path, label="clicked", bits=10, delimiter=";", decimal=",")
    >>> X, y = next(iter(reader))
    >>> reader.spec.options["columns"], sorted(X.data.tolist())
    ({'price': 'numeric', 'country': 'text'}, [1.0, 1.0, 3.5, 12.25])
    """
    return TabularReader(fmt="csv", **locals())  # every parameter, by name


def iter_parquet(
    path: PathLike,
    label: str | None = None,
    weight: str | None = None,
    ignore: Sequence[str] = (),
    bits: int = 18,
    chunk_size: int = 10_000,
    *,
    categorical: Sequence[str] = (),
    namespaces: Mapping[str, Sequence[str]] | None = None,
    quadratic: Sequence[str] = (),
    cubic: Sequence[str] = (),
    ignore_namespaces: Sequence[str] = (),
    keep_namespaces: Sequence[str] = (),
    spec: InputSpec | Mapping[str, Any] | None = None,
    label_required: bool = True,
) -> TabularReader:
    """Stream a Parquet file as hashed sparse chunks, one record batch at a time.

    Same parameters and output as :func:`iter_csv`; column kinds come from the file's schema (integers and
    floats are values, strings / dictionaries / booleans / dates are hashed as ``column=value``), and a
    dictionary-encoded column is hashed once per dictionary entry instead of once per row. Error messages
    count rows from 1.

    Examples
    --------
    >>> import os, tempfile
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> from streamlearn.datasets import iter_parquet
    >>> path = os.path.join(tempfile.mkdtemp(), "clicks.parquet")
    >>> pq.write_table(pa.table({"clicked": [1, 0], "age": [31.0, None], "country": ["FR", "DE"]}), path)
    >>> X, y = next(iter(iter_parquet(path, label="clicked", bits=10)))
    >>> X.shape, y.tolist(), X.getnnz(axis=1).tolist()
    ((2, 1024), [1.0, 0.0], [2, 1])
    """
    return TabularReader(fmt="parquet", **locals())  # every parameter, by name
