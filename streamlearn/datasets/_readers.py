"""One entry point for every input format: ``open_stream(path, spec, chunk_size)``.

The command line and the model server read data through :func:`open_stream` with the model's
:class:`~streamlearn.datasets._spec.InputSpec`, so a test file is read exactly as the training file was.

>>> detect_format("clicks.vw.gz"), detect_format("a9a.t"), detect_format("log.parquet")
('vw', 'libsvm', 'parquet')
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ._spec import InputSpec

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .._typing import PathLike

from ._pipes import _COMPRESSED_SUFFIXES

__all__ = ["READERS", "detect_format", "open_stream"]

_COMPRESSED = _COMPRESSED_SUFFIXES  # (zstd: CSV only; the other readers refuse it)
_EXTENSIONS = {".vw": "vw", ".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def detect_format(path) -> str:
    """The format a file name says (``.vw``, ``.vw.gz``, ``.csv``, ``.parquet``, ...); LIBSVM otherwise."""
    name = os.path.basename(os.fspath(path)).lower()
    for suffix in _COMPRESSED:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return _EXTENSIONS.get(os.path.splitext(name)[1], "libsvm")


def _vw(path, spec: InputSpec, chunk_size, *, require_label, with_tags):
    from ._pipes import is_stream_path, take_pipe

    pipe = take_pipe(path) if is_stream_path(path) else None  # read once, named <stdin> or its path
    try:
        yield from _vw_chunks(pipe or path, spec, chunk_size, require_label=require_label, with_tags=with_tags)
    finally:
        if pipe is not None:
            pipe.close()


def _vw_options(spec: InputSpec, require_label):
    """The keyword arguments of :func:`~streamlearn.datasets.iter_vw` that read VW text as ``spec`` says."""
    opts = spec.options or {}
    return {
        "bits": int(spec.bits if spec.bits is not None else 18),
        "label_convention": spec.label_convention or "pm1",
        "quadratic": [t for t in spec.interactions if len(t) == 2],
        "cubic": [t for t in spec.interactions if len(t) == 3],
        "ignore": spec.ignore,
        "keep": spec.keep,
        "constant": bool(opts.get("constant", False)),
        "n_classes": opts.get("n_classes"),
        "require_label": require_label,
    }


def _vw_chunks(path, spec: InputSpec, chunk_size, *, require_label, with_tags):
    from ._vw import iter_vw

    for chunk in iter_vw(path, chunk_size=chunk_size, **_vw_options(spec, require_label)):
        X, y, w, tags = chunk
        yield (X, y, w, tags) if with_tags else (X, y, w)


def _libsvm(path, spec: InputSpec, chunk_size, *, require_label, with_tags):
    from ._svmlight import iter_svmlight

    zb = "auto" if spec.zero_based is None else spec.zero_based
    for X, y in iter_svmlight(path, chunk_size=chunk_size, n_features=spec.n_features, zero_based=zb):
        yield (X, y, None, None) if with_tags else (X, y)


def _table(path, spec: InputSpec, chunk_size, *, require_label, with_tags):
    from ._pipes import is_stream_path
    from ._tabular import TabularReader

    # a model trained on Parquet reads CSV too (columns by name), and back; a pipe is CSV (Parquet needs a file)
    fmt = "csv" if is_stream_path(path) else detect_format(path)
    reader = TabularReader(
        path,
        fmt if fmt in ("csv", "parquet") else spec.format,
        spec=spec,
        chunk_size=chunk_size,
        label_required=require_label,
    )
    for X, y, *w in reader:
        w = w[0] if w else None
        yield (X, y, w, None) if with_tags else (X, y, w)


def _file_format(path, spec: InputSpec) -> str:
    """The format ``path`` is read in under ``spec``: a table's own kind (CSV or Parquet, by its name), else
    the spec's."""
    own = detect_format(path)
    return own if spec.format in ("csv", "parquet") and own in ("csv", "parquet") else spec.format


def example_line(path: PathLike, spec: InputSpec, example: int) -> int | None:
    """Where example ``example`` (0-based) of the file ``path`` read as ``spec`` is: the 1-based line where it
    starts (LIBSVM, VW text, CSV) or its 1-based row (Parquet); None for a pipe (it cannot be read again) or
    when the file holds fewer examples. The file is read again up to that example, so call it on an error
    path, not per example.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "t.svm")
    >>> _ = open(p, "w").write("1 1:1\\n\\n# a comment\\n-1 2:1\\n")
    >>> example_line(p, InputSpec(format="libsvm"), 1)
    4
    """
    if path == "-" or not os.path.isfile(path) or example < 0:  # a pipe, or nothing to read again
        return None
    fmt = _file_format(path, spec)
    if fmt == "parquet":
        return example + 1
    if fmt == "csv":
        from ._tabular import record_line

        return record_line(path, example + 2)  # the header is record 1
    from .._kernels.svmlight import _INDEX_LIMIT
    from ._svmlight import _DEFAULT_BLOCK, _Parser, _Source
    from ._vw import _gen, _VwParser

    src = _Source(path)
    if fmt == "vw":
        parser: Any = _VwParser(src.name, block_size=_DEFAULT_BLOCK, **_vw_options(spec, False))
    else:  # LIBSVM: every index is accepted (the file was read before)
        parser = _Parser(src.name, shift=0, max_index=_INDEX_LIMIT, index_dtype=np.int64)
    before = 0
    for _ in _gen(src, parser, 1 << 16):
        lines = parser.chunk_lines
        if example < before + len(lines):
            return int(lines[example - before])
        before += len(lines)
    return None


def example_place(path: PathLike, spec: InputSpec, example: int) -> str | None:
    """:func:`example_line` written as the reader of the format names a place in its errors: ``file, line N``
    (LIBSVM, CSV), ``file:N`` (VW text, as Vowpal Wabbit does) or ``file, row N`` (Parquet); None when
    :func:`example_line` is None or the file cannot be read again.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "t.vw")
    >>> _ = open(p, "w").write("1 |a x\\n\\n-1 |a y\\n")
    >>> example_place(p, InputSpec(format="vw"), 1) == p + ":3"
    True
    """
    try:
        line = example_line(path, spec, example)
    except (OSError, ValueError):  # the file changed or went away since it was read
        return None
    if line is None:
        return None
    fmt = _file_format(path, spec)
    if fmt == "vw":
        return f"{path}:{line}"
    return f"{path}, {'row' if fmt == 'parquet' else 'line'} {line}"


def example_message(path: PathLike | None, spec: InputSpec, example: int, reason: str, name: str) -> str:
    """``"PLACE: REASON"`` with :func:`example_place` of the 0-based ``example`` of the file ``path``, or
    ``"NAME: example N: REASON"`` when it has no place (a pipe, no file, a file not found again).

    >>> example_message(None, InputSpec(format="libsvm"), 4, "a feature value is NaN", "<stdin>")
    '<stdin>: example 5: a feature value is NaN'
    """
    place = None if path is None else example_place(path, spec, example)
    return f"{place}: {reason}" if place else f"{name}: example {example + 1}: {reason}"


#: format -> reader ``(path, spec, chunk_size, *, require_label, with_tags) -> iterator of chunks``.
#: Chunks are ``(X, y)`` or ``(X, y, sample_weight)``; with ``with_tags=True`` always
#: ``(X, y, sample_weight or None, tags or None)``.
READERS = {"vw": _vw, "libsvm": _libsvm, "csv": _table, "parquet": _table}


def open_stream(
    path: PathLike, spec: InputSpec, chunk_size: int = 10_000, *, require_label: bool = False, with_tags: bool = False
) -> Iterator[tuple[Any, ...]]:
    """Chunks of ``path`` read as ``spec`` says (see :data:`READERS` for the chunk layout).

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "t.vw")
    >>> _ = open(p, "w").write("1 2 |a x\\n-1 |a y\\n")
    >>> X, y, w = next(open_stream(p, InputSpec(format="vw", bits=10)))
    >>> X.shape, w.tolist()
    ((2, 1024), [2.0, 1.0])
    """
    if not isinstance(spec, InputSpec):
        hint = "; for a dict use InputSpec.from_dict(...)" if isinstance(spec, dict) else ""
        raise TypeError(
            f"spec must be an InputSpec, e.g. InputSpec(format='libsvm'); got {type(spec).__name__} {spec!r:.60}{hint}."
        )
    if spec.format not in READERS:
        raise ValueError(
            f"reading {spec.format!r} files is not available in this version of streamlearn; "
            f"it reads {', '.join(sorted(READERS))}."
        )
    return READERS[spec.format](path, spec, chunk_size, require_label=require_label, with_tags=with_tags)
