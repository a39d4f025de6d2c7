"""Vowpal Wabbit text files: streamed, parsed and hashed into ``2**bits`` columns in constant memory.

Each line ``label [importance] ['tag] |ns[:weight] feature[:value] ... |ns2 ...`` becomes one CSR row
whose columns are the hashed buckets VW computes for the same ``-b``: 32-bit MurmurHash3 of the feature
name seeded by the hash of its namespace, the constant feature, and ``-q``/``--cubic`` interactions
combined as VW combines them. Parsing and hashing run in a numba kernel over raw bytes
(:mod:`streamlearn._kernels.vw_text`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from .._kernels import vw_text as _k
from ._svmlight import (
    _DECOMPRESSION_ERRORS,
    _LineError,
    _float_dtype,
    _Source,
    decompression_reason,
    first_bytes_reason,
    read_block,
    shown_token,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from numpy.typing import DTypeLike

    from .._typing import FloatArray, SvmlightSource

__all__ = ["VwFormatError", "iter_vw", "load_vw", "parse_interactions"]

_DEFAULT_BLOCK = 4 << 20
_FIRST_ROWS = 1 << 16  # rows allocated up front for a chunk; more as they come
LABEL_CONVENTIONS = {
    "regression": _k.LABEL_REGRESSION,
    "pm1": _k.LABEL_PM1,
    "01": _k.LABEL_01,
    "multiclass": _k.LABEL_MULTICLASS,
}

_REASONS = {
    _k.E_LABEL: "bad label {tok!r}: expected {expect}",
    _k.E_IMPORTANCE: "bad importance weight {tok!r}: expected a finite number >= 0 after the label",
    _k.E_TOO_MANY: ("too many fields before the first '|' ({tok!r}): expected label [importance [initial]] ['tag]"),
    _k.E_NOVALUE: "feature {tok!r} has ':' without a value",
    _k.E_VALUE: "bad feature value in {tok!r}: expected name:number",
    _k.E_NONFINITE: (
        "non-finite value in {tok!r}: NaN and infinity are not allowed (Vowpal Wabbit reads a value starting "
        "with inf or nan as one)"
    ),
    _k.E_DIGITLESS: (
        "value in {tok!r} has no digit but Vowpal Wabbit reads it as the number 0 and drops the feature; "
        "expected a number (a text value can be written name=value)"
    ),
    _k.E_NS_WEIGHT: "bad namespace weight in {tok!r}: expected |namespace:number",
    _k.E_NS_NAME: "stray '|' in {tok!r}: a namespace name or a space must follow '|'",
    _k.E_NO_LABEL: "no label (training needs one; the line starts {tok!r})",
    _k.E_INITIAL: "bad initial prediction {tok!r}: expected a number after the importance weight",
}
_EXPECT = {
    "regression": "a number",
    "pm1": "-1 or 1 (binary labels: the pm1 label convention)",
    "01": "0 or 1 (binary labels: the 01 label convention)",
    "multiclass": "a class number 1..k, written as an integer",
}


class VwFormatError(_LineError, ValueError):
    """A malformed line in a VW text file: ``str(err)`` is ``"<file>:<line>: <reason>"``.

    >>> import io
    >>> from streamlearn.datasets import VwFormatError, load_vw
    >>> try:
    ...     load_vw(io.BytesIO(b"1 |a x\\nabc |a y\\n"))
    ... except VwFormatError as err:
    ...     print(err.line, err.reason.split(":")[0])
    2 bad label 'abc'
    """

    _where = "{source}:{line}"


def parse_interactions(quadratic=(), cubic=()):
    """Interaction terms as an ``(n, 3)`` int array of namespace bytes (``-1`` for ``:``) and lengths.

    >>> terms, lens, wild = parse_interactions(["ua"], ["uaa"])
    >>> terms.tolist(), lens.tolist(), wild
    ([[117, 97, 0], [97, 97, 117]], [2, 3], False)
    """
    rows, lens = [], []
    for spec, k in [(q, 2) for q in quadratic] + [(c, 3) for c in cubic]:
        b = spec.encode("utf-8") if isinstance(spec, str) else bytes(spec)
        if len(b) != k:
            flag = "-q" if k == 2 else "--cubic"
            raise ValueError(
                f"{flag} {spec!r}: expected {k} namespace characters (':' for any namespace); "
                f"a namespace is named by its first character."
            )
        rows.append([(-1 if c == 58 else c) for c in b] + [0] * (3 - k))
        lens.append(k)
    terms = np.array(rows, dtype=np.int64).reshape(-1, 3)
    lens = np.array(lens, dtype=np.int64)
    wild = bool((terms[:, :3] == -1).any()) if len(rows) else False
    if len(rows) and not wild:
        terms, lens = _k.canonical_terms(terms, lens)
    return terms, lens, wild


def _keep_array(ignore, keep):
    ignore = list(ignore or ())
    keep = list(keep or ())
    if ignore and keep:
        raise ValueError("ignore and keep cannot be used together (VW's --ignore and --keep).")
    arr = np.ones(257, dtype=np.uint8)
    for ns in ignore + keep:
        if not isinstance(ns, str) or not ns:
            raise ValueError(f"namespaces to ignore/keep are named by their first character; got {ns!r}.")
    if keep:
        arr[:] = 0
        for ns in keep:
            arr[ns.encode("utf-8")[0]] = 1
    for ns in ignore:
        arr[ns.encode("utf-8")[0]] = 0
    return arr


class _VwParser:
    def __init__(
        self,
        name,
        bits,
        label_convention,
        n_classes,
        require_label,
        ignore,
        keep,
        constant,
        quadratic,
        cubic,
        block_size,
        dtype=np.float64,
    ):
        if not isinstance(bits, (int, np.integer)) or isinstance(bits, bool) or not 1 <= bits <= 32:
            raise ValueError(f"bits must be an integer between 1 and 32; got {bits!r}.")
        if label_convention not in LABEL_CONVENTIONS:
            raise ValueError(f"label_convention must be one of {sorted(LABEL_CONVENTIONS)}; got {label_convention!r}.")
        self.name = name
        self.bits = int(bits)
        self.mask = (1 << self.bits) - 1
        self.label_convention = label_convention
        self.label_mode = LABEL_CONVENTIONS[label_convention]
        self.n_classes = int(n_classes or 0)
        self.require_label = bool(require_label)
        self.keep = _keep_array(ignore, keep)
        self.constant = bool(constant)
        self.terms, self.lens, self.wild = parse_interactions(quadratic, cubic)
        self.block_size = int(block_size)
        self.dtype = _float_dtype(dtype)
        self.index_dtype = np.int32 if self.bits <= 31 else np.int64
        self.scratch = 1024
        self._alloc_scratch(self.scratch)
        self.nnz_per_row = 64

    def _alloc_scratch(self, n):
        self.s_idx = np.empty(n, np.uint64)
        self.s_val = np.empty(n, np.float64)
        self.s_ns = np.empty(n, np.uint8)
        self.s_idx2 = np.empty(n, np.uint64)
        self.s_val2 = np.empty(n, np.float64)
        self.o_idx = np.empty(n, np.uint64)
        self.o_val = np.empty(n, np.float64)

    def _new_chunk(self, rows):
        self.data = np.empty(max(rows * self.nnz_per_row, 16), np.float64)
        self.indices = np.empty(self.data.shape[0], self.index_dtype)
        self.indptr = np.zeros(rows + 1, np.int64)
        self.y = np.empty(rows, np.float64)
        self.w = np.empty(rows, np.float64)
        self.row_line = np.empty(rows, np.int64)
        self.tag_s = np.empty(rows, np.int64)
        self.tag_e = np.empty(rows, np.int64)
        self.tags = []

    def _grow_rows(self, rows):
        """Lengthen the row arrays of the current chunk to ``rows`` rows, keeping the rows parsed so far."""
        n = len(self.y)
        self.indptr = np.concatenate([self.indptr, np.zeros(rows - n, np.int64)])
        for name in ("y", "w", "row_line", "tag_s", "tag_e"):
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, np.empty(rows - n, old.dtype)]))

    def _raise(self, buf, state, end):
        self._rows(state)  # an overflow on an earlier line of the chunk is the first error
        code = int(state[_k.S_ERR_CODE])
        s, e = int(state[_k.S_ERR_POS]), int(state[_k.S_ERR_END])
        raw = bytes(buf[s : min(e, s + 61)])
        if code == _k.E_NO_LABEL:  # the line itself (the kernel marks the text before its first '|', often empty)
            raw = bytes(buf[s : min(end, s + 61)]).split(b"\n", 1)[0].rstrip(b"\r")
        tok = shown_token(raw)
        reason = _REASONS[code].format(tok=tok, expect=_EXPECT[self.label_convention])
        if code == _k.E_TOO_MANY and self.label_mode == _k.LABEL_MULTICLASS:
            reason = reason.replace("[importance [initial]]", "[importance] (a class has no initial prediction)")
        raise VwFormatError(self.name, int(state[_k.S_ERR_LINE]), reason)

    def _collect_tags(self, buf, rows_before, rows_after):
        ts = self.tag_s[rows_before:rows_after]
        te = self.tag_e[rows_before:rows_after]
        if (ts >= 0).any():
            raw = buf.tobytes() if hasattr(buf, "tobytes") else bytes(buf)
            self.tags.extend(raw[s:e].decode("utf-8", "replace") if s >= 0 else "" for s, e in zip(ts, te))
        else:
            self.tags.extend([""] * (rows_after - rows_before))

    def _rows(self, state):
        """The chunk's rows parsed so far, with values of ``self.dtype``; ``VwFormatError`` naming the first line
        whose crossed features (or values hashed to one bucket) overflow, or with float32 a value too large for
        it."""
        from .._validation import hashed_overflow, narrow_to_float32

        rows, nnz = int(state[_k.S_ROWS]), int(state[_k.S_NNZ])
        X = sp.csr_matrix((self.data[:nnz], self.indices[:nnz], self.indptr[: rows + 1]), shape=(rows, 1 << self.bits))
        narrowed = narrow_to_float32(X.data) if self.dtype == np.float32 else None
        overflow = hashed_overflow(X, narrowed)
        if overflow is not None:
            raise VwFormatError(self.name, int(self.row_line[overflow[0]]), overflow[1])
        if narrowed is not None:
            X.data = narrowed
        return X

    def _finish(self, state):
        X = self._rows(state)
        rows = X.shape[0]
        X.has_canonical_format = True  # sorted, duplicates summed by the kernel
        tags = self.tags if any(self.tags) else None
        self.chunk_lines = self.row_line[:rows]
        return X, self.y[:rows].copy(), self.w[:rows].copy(), tags

    def chunks(self, stream, chunk_rows):
        buf = np.empty(self.block_size, np.uint8)
        filled = 0
        eof = False
        line = 0
        # a chunk's arrays start at most _FIRST_ROWS rows long and grow up to chunk_rows, so a huge chunk_size
        # costs only the rows the file has
        rows_cap = min(chunk_rows, _FIRST_ROWS)
        self._new_chunk(rows_cap)
        state = np.zeros(_k.STATE_LEN, np.int64)
        yielded_any = False
        while True:
            if not eof:
                if filled == buf.shape[0]:
                    nb = np.empty(2 * buf.shape[0], np.uint8)
                    nb[:filled] = buf[:filled]
                    buf = nb
                try:
                    n = read_block(stream, memoryview(buf)[filled:])
                except _DECOMPRESSION_ERRORS as exc:
                    raise VwFormatError(self.name, line + 1, decompression_reason(stream, exc)) from None
                if n == 0:
                    eof = True
                filled += n
            if line == 0 and not yielded_any:
                bad = first_bytes_reason(bytes(buf[: min(filled, 1 << 16)]), eof or filled == buf.shape[0], eof)
                if bad is not None:
                    raise VwFormatError(self.name, 1, bad)
            state[_k.S_POS] = 0
            state[_k.S_LINE] = line
            while True:
                rows_before = int(state[_k.S_ROWS])
                st = _k.vw_parse(
                    buf=buf,
                    end=filled,
                    final=eof,
                    max_rows=len(self.y),
                    mask=self.mask,
                    label_mode=self.label_mode,
                    n_classes=self.n_classes,
                    require_label=self.require_label,
                    keep_ns=self.keep,
                    constant=self.constant,
                    terms=self.terms,
                    term_lens=self.lens,
                    has_wildcard=self.wild,
                    data=self.data,
                    indices=self.indices,
                    indptr=self.indptr,
                    y=self.y,
                    w=self.w,
                    row_line=self.row_line,
                    tag_s=self.tag_s,
                    tag_e=self.tag_e,
                    s_idx=self.s_idx,
                    s_val=self.s_val,
                    s_ns=self.s_ns,
                    s_idx2=self.s_idx2,
                    s_val2=self.s_val2,
                    o_idx=self.o_idx,
                    o_val=self.o_val,
                    state=state,
                )
                self._collect_tags(buf, rows_before, int(state[_k.S_ROWS]))
                if st == _k.ST_ERROR:
                    self._raise(buf, state, filled)
                if st == _k.ST_NEED_SCRATCH:
                    self.scratch = max(2 * self.scratch, int(state[_k.S_AUX]) + 16)
                    self._alloc_scratch(self.scratch)
                    continue
                if st == _k.ST_NEED_SPACE:
                    rows = max(int(state[_k.S_ROWS]), 1)
                    self.nnz_per_row = max(self.nnz_per_row, int(np.ceil(int(state[_k.S_NNZ]) / rows)) + 1)
                    grow = max(2 * self.data.shape[0], int(state[_k.S_NNZ]) + int(state[_k.S_AUX]) + 16)
                    self.data = np.resize(self.data, grow)
                    self.indices = np.resize(self.indices, grow)
                    continue
                if st == _k.ST_ROWS_FULL and len(self.y) < chunk_rows:
                    self._grow_rows(min(2 * len(self.y), chunk_rows))
                    rows_cap = len(self.y)  # the next chunks start at the size this one reached
                    continue
                if st == _k.ST_ROWS_FULL:
                    yield self._finish(state)
                    yielded_any = True
                    self._new_chunk(rows_cap)
                    state[_k.S_ROWS] = 0
                    state[_k.S_NNZ] = 0
                    continue
                break
            pos = int(state[_k.S_POS])
            line = int(state[_k.S_LINE])
            if st == _k.ST_DONE:
                break
            # keep the incomplete last line
            buf[: filled - pos] = buf[pos:filled]
            filled -= pos
        if state[_k.S_ROWS] > 0 or not yielded_any:
            yield self._finish(state)


def iter_vw(
    source: SvmlightSource,
    chunk_size: int = 10_000,
    bits: int = 18,
    *,
    label_convention: str = "pm1",
    quadratic: Sequence[str] = (),
    cubic: Sequence[str] = (),
    ignore: Sequence[str] = (),
    keep: Sequence[str] = (),
    constant: bool = False,
    n_classes: int | None = None,
    require_label: bool = False,
    dtype: DTypeLike = np.float64,
    block_size: int = _DEFAULT_BLOCK,
) -> Iterator[tuple[Any, FloatArray, FloatArray, list[str] | None]]:
    """Stream a Vowpal Wabbit text file as ``(X, y, sample_weight, tags)`` chunks, in constant memory.

    Every feature lands in the column VW uses for it with the same ``-b bits``: the MurmurHash3 of its
    name seeded by its namespace's hash, masked to ``bits`` bits. Interactions are generated per row.

    Parameters
    ----------
    source : str, os.PathLike or binary file object
        VW text; gzip, bz2 and xz compression are recognised by their magic bytes.
    chunk_size : int >= 1, default=10_000
        Rows per chunk (blank lines do not count).
    bits : int in [1, 32], default=18
        ``X`` has ``2**bits`` columns (VW's ``-b``).
    label_convention : {"pm1", "01", "regression", "multiclass"}, default="pm1"
        Binary labels -1/+1, binary 0/1, any real number, or classes ``1..k`` (VW's ``--oaa k``).
    quadratic, cubic : sequences of str
        Namespace pairs / triples to cross, by first character (VW's ``-q ua``, ``--cubic uaa``);
        ``":"`` stands for every namespace of the row named by a printable ASCII character (as in VW).
    ignore, keep : sequences of str
        Drop these namespaces / keep only these (VW's ``--ignore``, ``--keep``), by first character.
    constant : bool, default=False
        Add VW's constant feature (column ``11650396 & (2**bits - 1)``). Learners with an intercept do
        not need it.
    n_classes : int or None
        Multiclass: the largest class allowed (``None``: any class >= 1).
    require_label : bool, default=False
        A line without a label is an error (training); otherwise its ``y`` is NaN (prediction).
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Type of ``X.data``; ``y`` and ``sample_weight`` are always float64. With float32, a value too
        large for it (above 3.4e38 in size, crosses included) raises :class:`VwFormatError`.
    block_size : int
        Bytes read per read call (a longer line grows the buffer).

    Yields
    ------
    X : scipy.sparse.csr_matrix of shape (n_rows, 2**bits), sorted indices, duplicates summed
    y : ndarray (n_rows,), float64 (NaN where a line has no label)
    sample_weight : ndarray (n_rows,), float64 (the importance weights, 1 by default)
    tags : list of str, or None when no line of the chunk has a tag

    Raises
    ------
    VwFormatError
        A ``ValueError`` ``"<file>:<line>: <reason>"`` for a malformed line (bad label or importance
        weight, ``:`` without a value, a bad namespace weight, a stray ``|``).

    Examples
    --------
    >>> import io
    >>> data = b"1 2 'first |user age:31 country=FR |ad id=991\\n-1 |user age:20 |ad id=7\\n"
    >>> X, y, w, tags = next(iter_vw(io.BytesIO(data), bits=18, quadratic=["ua"]))
    >>> X.shape, y.tolist(), w.tolist(), tags
    ((2, 262144), [1.0, -1.0], [2.0, 1.0], ['first', ''])
    >>> X[0].nnz  # age, country, id and the two user x ad crosses
    5
    """
    if not isinstance(chunk_size, (int, np.integer)) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1; got {chunk_size!r}.")
    src = _Source(source)
    parser = _VwParser(
        src.name,
        bits=bits,
        label_convention=label_convention,
        n_classes=n_classes,
        require_label=require_label,
        ignore=ignore,
        keep=keep,
        constant=constant,
        quadratic=quadratic,
        cubic=cubic,
        block_size=block_size,
        dtype=dtype,
    )
    return _gen(src, parser, int(chunk_size))


def _gen(src, parser, chunk_size):
    with src.opened() as stream:
        yield from parser.chunks(stream, chunk_size)


def load_vw(
    source: SvmlightSource, bits: int = 18, **kwargs: Any
) -> tuple[Any, FloatArray, FloatArray, list[str] | None]:
    """Read a whole VW text file: ``(X, y, sample_weight, tags)`` (see :func:`iter_vw` for the options).

    >>> import io
    >>> X, y, w, tags = load_vw(io.BytesIO(b"1 |a x y\\n0 |a x\\n"), bits=10, label_convention="01")
    >>> X.shape, y.tolist(), tags
    ((2, 1024), [1.0, 0.0], None)
    """
    parts = list(iter_vw(source, chunk_size=1 << 20, bits=bits, **kwargs))
    X = sp.vstack([p[0] for p in parts], format="csr")
    tags = None
    if any(p[3] is not None for p in parts):
        tags = [t for p in parts for t in (p[3] if p[3] is not None else [""] * p[0].shape[0])]
    return X, np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]), tags
