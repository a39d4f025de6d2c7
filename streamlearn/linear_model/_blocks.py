"""On-disk blocks of a CSR data set for block minimization: written once while streaming, read one at a time.

A block file is ``MAGIC``, an 8-byte little-endian header length, a JSON header, then zlib-compressed
segments (level 1: decompression speed is what an outer iteration pays for, at every block read):

* ``row_nnz``: non-zeros per row;
* ``jumps`` and ``deltas``: the column indices, delta-encoded. Within a row (indices sorted) the gaps are
  positive and small, so they are stored in the narrowest unsigned type that holds the block's largest gap
  (uint8 for a9a's 123 features); ``jumps`` holds, for each non-empty row, its first index minus the last
  index of the previous row (signed). Decoding is one ``cumsum``. Rows with unsorted indices fall back to
  signed deltas of the index type;
* ``data``: omitted when every value is 1.0 (binary features), else stored as the narrowest unsigned
  integer type when all values are small non-negative integers (term counts), else float64;
* ``y`` and ``sample_weight`` the same way (weights omitted when all 1.0).

zlib's own Adler-32 check and the recorded sizes detect corrupted segments. Decompression is streamed into
pre-allocated arrays, so reading a block needs its compressed bytes plus the block itself.
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

MAGIC = b"SLBLOCK1"
_LEVEL = 1
_SLICE = 1 << 20
_OUT_MAX = 1 << 22


def _deflate(arr):
    arr = np.ascontiguousarray(arr)
    return zlib.compress(memoryview(arr).cast("B"), _LEVEL), {"dtype": arr.dtype.str, "n": int(arr.shape[0])}


def _narrow_unsigned(arr):
    """``arr`` in the narrowest unsigned integer type that holds it, or None if it is not all small
    non-negative integers (at most 2**32 - 1)."""
    if arr.size == 0:
        return arr.astype(np.uint8)
    lo, hi = arr.min(), arr.max()
    if lo < 0 or hi > np.iinfo(np.uint32).max:
        return None
    for dt in (np.uint8, np.uint16, np.uint32):
        if hi <= np.iinfo(dt).max:
            out = arr.astype(dt)
            return out if arr.dtype.kind in "iu" or np.array_equal(out, arr) else None
    return None


def _inflate(comp, meta, path, name):
    out = np.empty(meta["n"], dtype=np.dtype(meta["dtype"]))
    mv = memoryview(out).cast("B")
    d = zlib.decompressobj()
    pos = 0
    try:
        for s in range(0, len(comp), _SLICE):
            data = comp[s:s + _SLICE]
            while data:
                chunk = d.decompress(data, _OUT_MAX)
                mv[pos:pos + len(chunk)] = chunk
                pos += len(chunk)
                data = d.unconsumed_tail
        chunk = d.flush()
        mv[pos:pos + len(chunk)] = chunk
        pos += len(chunk)
    except (zlib.error, ValueError) as exc:
        raise OSError(f"{path}: block segment {name!r} is corrupted ({exc}).") from None
    if pos != mv.nbytes or not d.eof:
        raise OSError(f"{path}: block segment {name!r} is corrupted (size mismatch).")
    return out


class BlockStore:
    """Blocks of at most ``budget_bytes`` (in-memory CSR size) in a fresh directory under ``parent``.

    ``add(X, y, sw)`` appends rows (cutting blocks at row boundaries), ``close()`` writes the last block,
    ``load(j)`` returns block ``j`` as ``(X, y, sw)``, ``cleanup()`` deletes the directory. ``blocks`` lists
    ``(path, n_rows, first_row)``.
    """

    def __init__(self, n_features, budget_bytes, parent=None):
        self.n_features = int(n_features)
        self.budget = max(int(budget_bytes), 1)
        self.index_dtype = np.int32 if self.n_features <= np.iinfo(np.int32).max else np.int64
        self.directory = tempfile.mkdtemp(prefix="streamlearn-blocks-", dir=parent)
        self.blocks = []
        self.n_rows = 0
        self.nnz = 0
        self.compressed_bytes = 0
        self._pending = []
        self._pending_bytes = 0

    # -- writing -----------------------------------------------------------------------------------
    def _row_bytes(self, X):
        per_nnz = np.dtype(self.index_dtype).itemsize + 8
        return np.diff(X.indptr).astype(np.int64) * per_nnz + 24  # indptr + y + sample weight

    def add(self, X, y, sw):
        """Append the rows of CSR ``X`` with labels ``y`` and weights ``sw``."""
        n = X.shape[0]
        start = 0
        row_bytes = np.cumsum(self._row_bytes(X)) if n else np.zeros(0, np.int64)
        while start < n:
            base = row_bytes[start - 1] if start else 0
            room = self.budget - self._pending_bytes
            stop = int(np.searchsorted(row_bytes, base + room, side="right"))
            if stop <= start:
                if self._pending:
                    self._flush()
                    continue
                stop = start + 1  # one row larger than the budget: a block of its own
            stop = min(stop, n)
            self._pending.append((X[start:stop], np.asarray(y[start:stop], dtype=np.float64),
                                  np.asarray(sw[start:stop], dtype=np.float64)))
            self._pending_bytes += int(row_bytes[stop - 1] - base)
            start = stop
            if self._pending_bytes >= self.budget:
                self._flush()

    def close(self):
        """Write the last, partial block."""
        if self._pending:
            self._flush()

    def _flush(self):
        parts, self._pending, self._pending_bytes = self._pending, [], 0
        row_nnz = np.concatenate([np.diff(X.indptr) for X, _, _ in parts]).astype(self.index_dtype)
        indices = np.concatenate([X.indices for X, _, _ in parts]).astype(self.index_dtype, copy=False)
        data = np.concatenate([X.data for X, _, _ in parts])
        y = np.concatenate([p[1] for p in parts])
        sw = np.concatenate([p[2] for p in parts])
        del parts
        header = {"n_rows": int(y.shape[0]), "n_features": self.n_features, "nnz": int(data.shape[0]),
                  "segments": []}
        segments = [("row_nnz", _narrow_unsigned(row_nnz))]
        if indices.size:
            indices[1:] = np.diff(indices)  # in place: diff is computed before the assignment
        starts = np.cumsum(row_nnz, dtype=np.int64)[:-1][row_nnz[1:] > 0] if row_nnz.size else row_nnz
        starts = np.concatenate([[0], starts]) if row_nnz.size and row_nnz[0] > 0 else starts
        inner = np.ones(indices.shape[0], dtype=bool)
        inner[starts] = False
        deltas = _narrow_unsigned(indices[inner])
        if deltas is None:  # unsorted rows: signed deltas throughout
            segments.append(("indices", indices))
        else:
            segments += [("jumps", indices[starts]), ("deltas", deltas)]
        del inner, deltas, starts
        for name, arr, skip_if_ones in (("data", data, True), ("y", y, False), ("sample_weight", sw, True)):
            if skip_if_ones and bool(np.all(arr == 1.0)):
                continue
            small = _narrow_unsigned(arr)
            segments.append((name, arr if small is None else small))
        blobs = []
        for name, arr in segments:
            blob, meta = _deflate(arr)
            meta.update(name=name, nbytes=len(blob))
            header["segments"].append(meta)
            blobs.append(blob)
        del segments, row_nnz, indices, data, sw
        path = os.path.join(self.directory, f"block-{len(self.blocks):06d}.slb")
        head = json.dumps(header).encode()
        with open(path, "wb") as f:
            f.write(MAGIC + struct.pack("<Q", len(head)) + head)
            for blob in blobs:
                f.write(blob)
        self.blocks.append((path, header["n_rows"], self.n_rows))
        self.n_rows += header["n_rows"]
        self.nnz += header["nnz"]
        self.compressed_bytes += os.path.getsize(path)

    # -- reading -----------------------------------------------------------------------------------
    def load(self, j):
        """Block ``j`` as ``(X, y, sample_weight)`` (CSR float64 with ``index_dtype`` indices)."""
        path = self.blocks[j][0]
        with open(path, "rb") as f:
            magic = f.read(len(MAGIC))
            if magic != MAGIC:
                raise OSError(f"{path}: not a streamlearn block file.")
            (size,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(size))
            arrays = {}
            for meta in header["segments"]:
                comp = f.read(meta["nbytes"])
                arrays[meta["name"]] = _inflate(comp, meta, path, meta["name"])
                del comp
        n, nnz = header["n_rows"], header["nnz"]
        row_nnz = arrays.pop("row_nnz")
        indptr = np.zeros(n + 1, dtype=self.index_dtype if nnz <= np.iinfo(self.index_dtype).max else np.int64)
        np.cumsum(row_nnz, out=indptr[1:], dtype=indptr.dtype)
        if "indices" in arrays:
            indices = arrays.pop("indices")
        else:
            indices = np.empty(nnz, dtype=self.index_dtype)
            inner = np.ones(nnz, dtype=bool)
            inner[indptr[:-1][row_nnz > 0]] = False
            indices[inner] = arrays.pop("deltas")
            indices[~inner] = arrays.pop("jumps")
            del inner
        np.cumsum(indices, out=indices)
        data = arrays.pop("data").astype(np.float64, copy=False) if "data" in arrays else np.ones(nnz)
        X = sp.csr_matrix((data, indices, indptr), shape=(n, header["n_features"]), copy=False)
        y = arrays.pop("y").astype(np.float64, copy=False)
        sw = arrays.pop("sample_weight").astype(np.float64, copy=False) if "sample_weight" in arrays else np.ones(n)
        return X, y, sw

    def cleanup(self):
        """Delete the block directory (idempotent)."""
        shutil.rmtree(self.directory, ignore_errors=True)
        self.blocks = []
