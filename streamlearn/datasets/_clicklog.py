"""A synthetic click log: raw, mixed-type rows as an ad server would log them.

Each row is one ad impression. User columns: ``age`` (integer, 16-90), ``sessions`` (Pareto, heavy
tail), ``country`` and ``device`` (Zipf-distributed categories), ``user`` (Zipf over 100,000 ids). Ad
columns: ``ad`` (Zipf over 50,000 ids), ``advertiser``, ``category`` (Zipf), ``price`` (log-normal, heavy
tail), ``position`` (1-8). The label ``clicked`` (0/1) is drawn from a hidden logistic model with main
effects for every column and pairwise user x ad effects (``country x category``, ``device x position``,
``age band x category``), so crossing the two groups (VW's ``-q ua``) helps a linear learner.

Rows are generated in blocks of ``_BLOCK_ROWS``; block ``b`` draws from ``SeedSequence(seed,
spawn_key=(1, b))``. The hidden model is drawn from ``model_seed`` alone, so logs with different ``seed``
(a training and a test log) follow the same model. A row depends neither on how the log is written (VW
text, CSV, Parquet) nor on its length: a shorter log is a prefix of a longer one, and the writers stream
block by block in constant memory.

>>> log = make_click_log(5, seed=0)
>>> sorted(log)[:4]
['ad', 'advertiser', 'age', 'category']
>>> len(log["clicked"])
5
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .._typing import PathLike

__all__ = ["CLICK_LOG_COLUMNS", "CLICK_LOG_NAMESPACES", "iter_click_log", "make_click_log", "write_click_log"]

_BLOCK_ROWS = 65536

#: namespace -> columns, in the order the VW writer emits them ("u": user, "a": ad)
CLICK_LOG_NAMESPACES = {
    "u": ("age", "sessions", "country", "device", "user"),
    "a": ("ad", "advertiser", "category", "price", "position"),
}
_NUMERIC = ("age", "sessions", "price", "position")
#: every column, label first
CLICK_LOG_COLUMNS = ("clicked",) + CLICK_LOG_NAMESPACES["u"] + CLICK_LOG_NAMESPACES["a"]

_COUNTRIES = (
    "US",
    "IN",
    "BR",
    "GB",
    "DE",
    "FR",
    "JP",
    "MX",
    "ID",
    "TR",
    "IT",
    "ES",
    "CA",
    "PL",
    "NG",
    "KR",
    "AU",
    "NL",
    "AR",
    "SE",
    "CO",
    "EG",
    "PH",
    "VN",
    "ZA",
    "CH",
    "BE",
    "PT",
    "CL",
    "NO",
)
_DEVICES = ("mobile", "desktop", "tablet", "tv", "console")
# vocabulary sizes and Zipf exponents of the categorical columns
_CATS = {
    "country": (len(_COUNTRIES), 1.1),
    "device": (len(_DEVICES), 1.3),
    "user": (100_000, 1.05),
    "ad": (50_000, 1.1),
    "advertiser": (2_000, 1.0),
    "category": (40, 0.9),
}


def _vocab(name):
    n = _CATS[name][0]
    if name == "country":
        return np.array(_COUNTRIES, dtype=object)
    if name == "device":
        return np.array(_DEVICES, dtype=object)
    prefix = {"user": "u", "ad": "a", "advertiser": "v", "category": "c"}[name]
    return np.array([f"{prefix}{k}" for k in range(n)], dtype=object)


def _zipf_cdf(n, s):
    p = 1.0 / np.arange(1, n + 1) ** s
    c = np.cumsum(p)
    return c / c[-1]


class _Model:
    """The hidden logistic model (fixed by the seed)."""

    def __init__(self, seed):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))
        self.perm = {k: rng.permutation(n) for k, (n, _) in _CATS.items()}  # which id is popular
        self.main = {k: rng.normal(0.0, 0.6 if n < 100 else 0.35, n) for k, (n, _) in _CATS.items()}
        self.country_category = rng.normal(0.0, 0.8, (_CATS["country"][0], _CATS["category"][0]))
        self.device_position = rng.normal(0.0, 0.5, (_CATS["device"][0], 8))
        self.ageband_category = rng.normal(0.0, 0.6, (4, _CATS["category"][0]))
        self.bias = -2.0
        self.cdf = {k: _zipf_cdf(n, s) for k, (n, s) in _CATS.items()}


def _block(model, seed, b, n):
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, b)))
    codes = {}
    for k in _CATS:
        r = np.minimum(np.searchsorted(model.cdf[k], rng.random(n), side="right"), _CATS[k][0] - 1)
        codes[k] = model.perm[k][r]
    age = np.clip(np.round(rng.gamma(6.0, 6.0, n) + 12), 16, 90).astype(np.int64)
    sessions = np.round(rng.pareto(2.0, n) * 2.0 + 1.0, 2)
    price = np.round(np.exp(rng.normal(-0.5, 0.9, n)), 3)
    position = np.minimum(rng.geometric(0.35, n), 8).astype(np.int64)
    band = np.digitize(age, [25, 40, 60])
    z = (
        model.bias
        + sum(model.main[k][codes[k]] for k in _CATS)
        + model.country_category[codes["country"], codes["category"]]
        + model.device_position[codes["device"], position - 1]
        + model.ageband_category[band, codes["category"]]
        - 0.25 * (position - 1)
        + 0.3 * np.log1p(sessions)
        - 0.2 * np.log(price)
        - 0.01 * (age - 40)
    )
    clicked = (rng.random(n) < 1.0 / (1.0 + np.exp(-z))).astype(np.int64)
    out = {"clicked": clicked, "age": age, "sessions": sessions, "price": price, "position": position}
    for k in _CATS:
        out[k] = _vocab_cache(k)[codes[k]]
    return {c: out[c] for c in CLICK_LOG_COLUMNS}


_VOCABS: dict = {}


def _vocab_cache(name):
    if name not in _VOCABS:
        _VOCABS[name] = _vocab(name)
    return _VOCABS[name]


def iter_click_log(
    n_rows: int, seed: int = 0, block_rows: int = _BLOCK_ROWS, model_seed: int = 0
) -> Iterator[dict[str, np.ndarray]]:
    """Yield the click log of :func:`make_click_log` as consecutive ``dict`` blocks of at most ``block_rows``.

    Examples
    --------
    >>> [len(b["clicked"]) for b in iter_click_log(10, seed=1, block_rows=4)]
    [4, 4, 2]
    """
    n_rows, block_rows = int(n_rows), int(block_rows)
    if n_rows < 0:
        raise ValueError(f"n_rows must be >= 0; got {n_rows}.")
    if block_rows < 1:
        raise ValueError(f"block_rows must be >= 1; got {block_rows}.")
    model = _Model(model_seed)
    pending = {c: v[:0] for c, v in _block(model, seed, 0, 0).items()}
    produced = 0
    b = 0
    while produced < n_rows:
        want = min(block_rows, n_rows - produced)
        while len(pending["clicked"]) < want:
            n = min(_BLOCK_ROWS, n_rows - b * _BLOCK_ROWS)
            new = _block(model, seed, b, _BLOCK_ROWS)
            pending = {k: np.concatenate([pending[k], new[k][:n]]) for k in pending}
            b += 1
        yield {k: v[:want] for k, v in pending.items()}
        pending = {k: v[want:] for k, v in pending.items()}
        produced += want


def make_click_log(n_rows: int, seed: int = 0, model_seed: int = 0) -> dict:
    """A click log of ``n_rows`` impressions as a ``dict`` of NumPy columns (strings as object arrays).

    ``clicked`` is the 0/1 label; see the module docstring for the columns. The same ``seed`` gives the
    same rows (and a prefix of a longer log); ``model_seed`` fixes the hidden model that draws the clicks.

    Examples
    --------
    >>> log = make_click_log(3, seed=0)
    >>> log["clicked"].dtype.kind, log["country"].dtype.kind
    ('i', 'O')
    >>> bool((make_click_log(10, 0)["user"][:3] == log["user"]).all())
    True
    """
    blocks = list(iter_click_log(n_rows, seed, model_seed=model_seed))
    if not blocks:
        return {
            c: np.empty(0, dtype=np.int64 if c in _NUMERIC or c == "clicked" else object) for c in CLICK_LOG_COLUMNS
        }
    return {c: np.concatenate([bl[c] for bl in blocks]) for c in CLICK_LOG_COLUMNS}


def _fmt_num(col, a):
    if a.dtype.kind in "iu":
        return a.astype(str).astype(object)
    return np.array([repr(float(v)) for v in a], dtype=object)


def vw_lines(block: dict, label: str = "pm1") -> list:
    """VW text lines (without newline) of one block: ``label |u age:31 ... |a ad=a12 ...``.

    Numeric columns are written ``name:value``, categorical ones ``name=value`` (value 1).

    >>> vw_lines(make_click_log(1, seed=0))[0].split("|")[1].split()[1]
    'age:51'
    """
    y = block["clicked"]
    if label == "pm1":
        lab = np.where(y > 0, "1", "-1").astype(object)
    elif label == "01":
        lab = np.where(y > 0, "1", "0").astype(object)
    else:
        raise ValueError(f"label must be 'pm1' or '01'; got {label!r}.")
    line = lab
    for ns, cols in CLICK_LOG_NAMESPACES.items():
        line = line + f" |{ns}"
        for c in cols:
            if c in _NUMERIC:
                line = line + f" {c}:" + _fmt_num(c, block[c])
            else:
                line = line + f" {c}=" + block[c]
    return list(line)


def _open_text(path: Path):
    s = str(path)
    if s.endswith(".gz"):
        return gzip.open(path, "wt", encoding="utf-8", compresslevel=1)
    if s.endswith(".bz2"):
        return bz2.open(path, "wt", encoding="utf-8")
    if s.endswith(".xz"):
        return lzma.open(path, "wt", encoding="utf-8")
    return open(path, "w", encoding="utf-8")


def write_click_log(
    path: PathLike, n_rows: int, seed: int = 0, format: str | None = None, label: str = "pm1", model_seed: int = 0
) -> None:
    """Write the click log of :func:`make_click_log` to ``path`` as VW text, CSV or Parquet.

    ``format`` is ``"vw"``, ``"csv"`` or ``"parquet"``; by default it follows the extension (``.vw``,
    ``.vw.gz``, ``.csv``, ``.parquet``). VW labels are -1/+1 (``label="pm1"``) or 0/1 (``"01"``); CSV and
    Parquet keep the 0/1 ``clicked`` column. Streams block by block (constant memory); the file is written
    to a temporary name and renamed at the end, so an interrupted write leaves no partial file.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> write_click_log(os.path.join(d, "c.vw"), 2, seed=0)
    >>> open(os.path.join(d, "c.vw")).read().count("|u ")
    2
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(
            f"path={str(path)!r} of write_click_log is a directory; expected the name of a file to write."
        )
    name = path.name.lower()
    if format is None:
        stem = name[: -len(name.rsplit(".", 1)[-1]) - 1] if name.endswith((".gz", ".bz2", ".xz")) else name
        format = stem.rsplit(".", 1)[-1] if "." in stem else ""
    if format not in ("vw", "csv", "parquet"):
        raise ValueError(f"cannot tell the click log format of {str(path)!r}: pass format='vw', 'csv' or 'parquet'.")
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        if format == "vw":
            with _open_text(tmp) as f:
                for block in iter_click_log(n_rows, seed, model_seed=model_seed):
                    lines = vw_lines(block, label)
                    if lines:
                        f.write("\n".join(lines))
                        f.write("\n")
        else:
            import pyarrow as pa

            writer = None
            schema = pa.schema(
                [
                    (
                        c,
                        pa.int64()
                        if c in ("clicked", "age", "position")
                        else pa.float64()
                        if c in _NUMERIC
                        else pa.string(),
                    )
                    for c in CLICK_LOG_COLUMNS
                ]
            )
            if format == "csv":
                import pyarrow.csv as pacsv

                sink = pa.CompressedOutputStream(str(tmp), "gzip") if name.endswith(".gz") else str(tmp)
                writer = pacsv.CSVWriter(sink, schema)
            else:
                import pyarrow.parquet as pq

                writer = pq.ParquetWriter(str(tmp), schema)
            try:
                for block in iter_click_log(n_rows, seed, model_seed=model_seed):
                    writer.write_table(pa.table({c: block[c] for c in CLICK_LOG_COLUMNS}, schema=schema))
            finally:
                writer.close()
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
