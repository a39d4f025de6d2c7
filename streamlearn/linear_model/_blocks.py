"""On-disk blocks of a CSR data set for block minimization: written once while streaming, read one at a time.

A block file is ``MAGIC``, zlib-compressed segments written as they are encoded (level 1: decompression
speed is what every outer iteration pays, at every block read), a JSON footer describing them, and the
footer's length (8 bytes, little-endian). The segments:

* ``row_nnz``: non-zeros per row (uint8/16/32, the narrowest that holds the block's longest row);
* ``indices``: the column indices delta-encoded over the whole block (each index minus the previous one,
  the first kept), in the narrowest signed type that holds any difference of two indices below
  ``n_features`` (int8 for a9a's 123 features, int16 up to 32,767, else int32/int64). Sorted rows give small
  positive gaps that compress well; decoding is one ``cumsum``;
* ``data``: omitted when every value is 1.0 (binary features), else the narrowest unsigned integer type
  when all values are small non-negative integers (term counts), else float64;
* ``y`` the same way, and ``sample_weight`` likewise (omitted when all 1.0).

zlib's own Adler-32 check and the recorded sizes detect corrupted segments.

Memory: rows are copied into pre-allocated block buffers as chunks arrive (no list of pieces to
concatenate); segments are encoded, compressed and written in slices of ``_SLICE`` entries; reading streams
the file through the decompressor into the final arrays (the int32/int64 delta segment is inflated in
place into the index array). Writing or reading a block of B bytes needs about B plus a few MB.
"""

import json
import os
import shutil
import struct
import tempfile
import zlib

import numpy as np
import scipy.sparse as sp

__all__ = ["BlockStore"]

MAGIC = b"SLBLOCK3"
_LEVEL = 1
_SLICE = 1 << 18  # entries encoded / bytes read per step
_OUT_MAX = 1 << 22


def _unsigned_for(hi):
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        if hi <= np.iinfo(dt).max:
            return np.dtype(dt)
    raise AssertionError(hi)


def _delta_dtype(n_features):
    for dt in (np.int8, np.int16, np.int32, np.int64):
        if n_features - 1 <= np.iinfo(dt).max:
            return np.dtype(dt)
    raise AssertionError(n_features)


def _value_dtype(arr):
    """float64, or the narrowest unsigned type if every value is a small non-negative integer."""
    lo, hi = np.inf, -np.inf
    for a in range(0, arr.shape[0], _SLICE):
        part = arr[a : a + _SLICE]
        if not np.array_equal(part, np.floor(part)):
            return np.dtype(np.float64)
        lo, hi = min(lo, part.min()), max(hi, part.max())
    if lo < 0 or hi > np.iinfo(np.uint32).max:
        return np.dtype(np.float64)
    return _unsigned_for(hi)


def _all_ones(arr):
    return all(bool(np.all(arr[a : a + _SLICE] == 1.0)) for a in range(0, arr.shape[0], _SLICE))


class _Segment:
    """A zlib stream fed slice by slice and written to the open block file as it goes."""

    def __init__(self, f, name, dtype, n):
        self.meta = {"name": name, "dtype": np.dtype(dtype).str, "n": int(n), "nbytes": 0}
        self._f = f
        self._z = zlib.compressobj(_LEVEL)

    def _write(self, blob):
        self._f.write(blob)
        self.meta["nbytes"] += len(blob)

    def feed(self, arr):
        self._write(self._z.compress(memoryview(np.ascontiguousarray(arr)).cast("B")))

    def finish(self):
        self._write(self._z.flush())
        return self.meta


def _encode(f, name, arr, dtype):
    seg = _Segment(f, name, dtype, arr.shape[0])
    for a in range(0, arr.shape[0], _SLICE):
        seg.feed(arr[a : a + _SLICE].astype(dtype, copy=False))
    return seg.finish()


def _inflate_into(f, meta, out, path):
    """Stream segment ``meta`` from the open file ``f`` into the pre-allocated array ``out``."""
    mv = memoryview(out).cast("B")
    if mv.nbytes != meta["n"] * np.dtype(meta["dtype"]).itemsize:
        raise OSError(f"{path}: block segment {meta['name']!r} has the wrong size.")
    d = zlib.decompressobj()
    pos, left = 0, meta["nbytes"]
    try:
        while left:
            data = f.read(min(_SLICE, left))
            if not data:
                raise OSError("truncated file")
            left -= len(data)
            while data:
                chunk = d.decompress(data, _OUT_MAX)
                mv[pos : pos + len(chunk)] = chunk
                pos += len(chunk)
                data = d.unconsumed_tail
        chunk = d.flush()
        mv[pos : pos + len(chunk)] = chunk
        pos += len(chunk)
    except (zlib.error, ValueError, OSError) as exc:
        raise OSError(f"{path}: block segment {meta['name']!r} is corrupted ({exc}).") from None
    if pos != mv.nbytes or not d.eof:
        raise OSError(f"{path}: block segment {meta['name']!r} is corrupted (size mismatch).")


class BlockStore:
    """Blocks of at most ``budget_bytes`` (in-memory CSR size) in a fresh directory under ``parent``.

    ``add(X, y, sw)`` appends rows (cutting blocks at row boundaries), ``close()`` writes the last block,
    ``load(j)`` returns block ``j`` as ``(X, y, sw)``, ``cleanup()`` deletes the directory. ``blocks`` lists
    ``(path, n_rows, first_row)``.
    """

    def __init__(self, n_features, budget_bytes, parent=None):
        self.n_features = int(n_features)
        self.budget = max(int(budget_bytes), 1)
        self.index_dtype = np.dtype(np.int32 if self.n_features <= np.iinfo(np.int32).max else np.int64)
        self._per_nnz = self.index_dtype.itemsize + 8
        self._per_row = 24  # row pointer + label + weight
        self.directory = tempfile.mkdtemp(prefix="streamlearn-blocks-", dir=parent)
        self.blocks = []
        self.n_rows = 0
        self.nnz = 0
        self.compressed_bytes = 0
        # block buffers: np.empty pages are only backed by memory once written, so the row buffers may be
        # sized for the worst case (all rows empty) at no cost
        cap_nnz = max(self.budget // self._per_nnz, 1)
        cap_rows = max(self.budget // self._per_row, 1)
        self._indices = np.empty(cap_nnz, dtype=self.index_dtype)
        self._data = np.empty(cap_nnz, dtype=np.float64)
        self._row_nnz = np.empty(cap_rows, dtype=np.int64)
        self._y = np.empty(cap_rows, dtype=np.float64)
        self._sw = np.empty(cap_rows, dtype=np.float64)
        self._rows = 0
        self._fill = 0

    # -- writing -----------------------------------------------------------------------------------
    def add(self, X, y, sw):
        """Append the rows of CSR ``X`` with labels ``y`` and weights ``sw``."""
        indptr = X.indptr
        n = X.shape[0]
        row_bytes = np.cumsum(np.diff(indptr).astype(np.int64) * self._per_nnz + self._per_row) if n else None
        start = 0
        while start < n:
            base = row_bytes[start - 1] if start else 0
            used = self._fill * self._per_nnz + self._rows * self._per_row
            stop = min(int(np.searchsorted(row_bytes, base + self.budget - used, side="right")), n)
            if stop <= start:
                if self._rows:
                    self._flush()
                    continue
                # a single row larger than the budget: a block of its own, written from the chunk itself
                a, b = indptr[start], indptr[start + 1]
                self._write(
                    np.array([b - a]),
                    X.indices[a:b],
                    X.data[a:b],
                    np.asarray(y[start : start + 1], float),
                    np.asarray(sw[start : start + 1], float),
                )
                start += 1
                continue
            a, b = int(indptr[start]), int(indptr[stop])
            k = stop - start
            self._indices[self._fill : self._fill + b - a] = X.indices[a:b]
            self._data[self._fill : self._fill + b - a] = X.data[a:b]
            self._row_nnz[self._rows : self._rows + k] = np.diff(indptr[start : stop + 1])
            self._y[self._rows : self._rows + k] = y[start:stop]
            self._sw[self._rows : self._rows + k] = sw[start:stop]
            self._fill += b - a
            self._rows += k
            start = stop
            if self._fill * self._per_nnz + self._rows * self._per_row >= self.budget:
                self._flush()

    def close(self):
        """Write the last, partial block and free the write buffers."""
        if self._rows:
            self._flush()
        self._indices = self._data = self._row_nnz = self._y = self._sw = None

    def _flush(self):
        self._write(
            self._row_nnz[: self._rows],
            self._indices[: self._fill],
            self._data[: self._fill],
            self._y[: self._rows],
            self._sw[: self._rows],
        )
        self._rows = self._fill = 0

    def _write(self, row_nnz, indices, data, y, sw):
        n, nnz = int(row_nnz.shape[0]), int(indices.shape[0])
        path = os.path.join(self.directory, f"block-{len(self.blocks):06d}.slb")
        with open(path, "wb") as f:
            f.write(MAGIC)
            segments = [_encode(f, "row_nnz", row_nnz, _unsigned_for(int(row_nnz.max()) if n else 0))]
            # global deltas, slice by slice (each slice needs the last index of the previous one)
            seg = _Segment(f, "indices", _delta_dtype(self.n_features), nnz)
            prev = 0
            for a in range(0, nnz, _SLICE):
                part = indices[a : a + _SLICE].astype(np.int64)
                delta = np.diff(part, prepend=prev)
                prev = part[-1]
                seg.feed(delta.astype(seg.meta["dtype"], copy=False))
            segments.append(seg.finish())
            if not _all_ones(data):
                segments.append(_encode(f, "data", data, _value_dtype(data)))
            segments.append(_encode(f, "y", y, _value_dtype(y)))
            if not _all_ones(sw):
                segments.append(_encode(f, "sample_weight", sw, _value_dtype(sw)))
            footer = json.dumps({"n_rows": n, "n_features": self.n_features, "nnz": nnz, "segments": segments}).encode()
            f.write(footer + struct.pack("<Q", len(footer)))
        self.blocks.append((path, n, self.n_rows))
        self.n_rows += n
        self.nnz += nnz
        self.compressed_bytes += os.path.getsize(path)

    # -- reading -----------------------------------------------------------------------------------
    def load(self, j):
        """Block ``j`` as ``(X, y, sample_weight)`` (CSR float64 with ``index_dtype`` indices)."""
        path = self.blocks[j][0]
        with open(path, "rb") as f:
            try:
                if f.read(len(MAGIC)) != MAGIC:
                    raise ValueError("bad magic")
                f.seek(-8, os.SEEK_END)
                (size,) = struct.unpack("<Q", f.read(8))
                f.seek(-8 - size, os.SEEK_END)
                header = json.loads(f.read(size))
                f.seek(len(MAGIC))
            except (ValueError, OSError, struct.error) as exc:
                raise OSError(f"{path}: not a readable streamlearn block file ({exc}).") from None
            n, nnz = header["n_rows"], header["nnz"]
            arrays = {}
            for meta in header["segments"]:
                if meta["name"] == "indices" and np.dtype(meta["dtype"]) == self.index_dtype:
                    out = np.empty(nnz, dtype=self.index_dtype)  # inflated in place, decoded in place
                else:
                    out = np.empty(meta["n"], dtype=np.dtype(meta["dtype"]))
                _inflate_into(f, meta, out, path)
                arrays[meta["name"]] = out
        row_nnz = arrays.pop("row_nnz")
        indptr = np.zeros(n + 1, dtype=self.index_dtype if nnz <= np.iinfo(self.index_dtype).max else np.int64)
        np.cumsum(row_nnz, out=indptr[1:], dtype=indptr.dtype)
        deltas = arrays.pop("indices")
        if deltas.dtype == self.index_dtype:  # partial sums are the indices themselves: no overflow
            indices = np.cumsum(deltas, dtype=self.index_dtype, out=deltas)
        else:
            indices = np.cumsum(deltas, dtype=self.index_dtype)
        del deltas
        if nnz and (indices.min() < 0 or indices.max() >= header["n_features"]):  # never hand bad indices on
            raise OSError(f"{path}: block indices out of range [0, {header['n_features']}): the file is corrupted.")
        data = arrays.pop("data").astype(np.float64, copy=False) if "data" in arrays else np.ones(nnz)
        X = sp.csr_matrix((data, indices, indptr), shape=(n, header["n_features"]), copy=False)
        y = arrays.pop("y").astype(np.float64, copy=False)
        sw = arrays.pop("sample_weight").astype(np.float64, copy=False) if "sample_weight" in arrays else np.ones(n)
        return X, y, sw

    def cleanup(self):
        """Delete the block directory and the buffers (idempotent)."""
        shutil.rmtree(self.directory, ignore_errors=True)
        self.blocks = []
        self._indices = self._data = self._row_nnz = self._y = self._sw = None
