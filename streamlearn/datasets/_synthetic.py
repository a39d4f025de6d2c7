"""Synthetic sparse classification streams with Zipf feature frequencies, and a fast LIBSVM writer.

The generator imitates a bag-of-words (or hashed-feature) stream: feature frequencies follow a Zipf law,
so a few features occur in almost every row and most are rare, and labels come from a hidden sparse
linear model, so a linear learner can learn them.

Generation is vectorised per block of ``_BLOCK_ROWS`` rows, and block ``b`` draws from its own random
stream ``SeedSequence(seed, spawn_key=(1, b))`` (the last block is drawn whole, then cut). A row therefore
depends neither on how the stream is cut into chunks nor on its length: :func:`write_svmlight_stream`
with any ``chunk_size`` writes exactly the matrix that :func:`make_sparse_classification` returns for the
same arguments, and a shorter stream is a prefix of a longer one.
"""

import functools
import numbers
import os
import secrets
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import DTypeLike
import scipy.sparse as sp

from .._typing import FloatArray, PathLike, RandomStateLike
from .._validation import Interval, Options

__all__ = ["make_sparse_classification", "write_svmlight_stream"]

#: rows per independent random block (fixed: changing it changes every generated data set)
_BLOCK_ROWS = 4096
_INT32_MAX = np.iinfo(np.int32).max


# ---------------------------------------------------------------------------------------------------
# parameter checks (messages in scikit-learn's format, as everywhere in streamlearn)
def _check_param(func, name, value, *constraints):
    def ok(c):
        if c is None:
            return value is None
        if c == "boolean":
            return isinstance(value, (bool, np.bool_))
        if c == "random_state":
            return (
                value is None
                or isinstance(value, (numbers.Integral, np.random.Generator))
                and not (isinstance(value, (bool, np.bool_)) or isinstance(value, numbers.Integral) and value < 0)
            )
        return c.is_satisfied_by(value)

    if any(ok(c) for c in constraints):
        return
    names = {
        None: "None",
        "boolean": "an instance of 'bool'",
        "random_state": "a non-negative int, a numpy Generator or None",
    }
    described = [names[c] if c is None or isinstance(c, str) else str(c) for c in constraints]
    expected = described[0] if len(described) == 1 else ", ".join(described[:-1]) + " or " + described[-1]
    raise ValueError(f"The {name!r} parameter of {func} must be {expected}. Got {value!r} instead.")


def _validate(func, n_samples, n_features, nnz_per_row, zipf_a, noise, binary, random_state):
    _check_param(func, "n_samples", n_samples, Interval(int, 0, None, closed="left"))
    _check_param(func, "n_features", n_features, Interval(int, 2, 2**40, closed="both"))
    _check_param(func, "nnz_per_row", nnz_per_row, Interval(float, 1, None, closed="left"))
    _check_param(func, "zipf_a", zipf_a, Interval(float, 0, 3, closed="both"))
    _check_param(func, "noise", noise, Interval(float, 0, None, closed="left"))
    _check_param(func, "binary", binary, "boolean")
    _check_param(func, "random_state", random_state, "random_state")
    if nnz_per_row > n_features / 2:
        raise ValueError(
            f"nnz_per_row={nnz_per_row!r} is more than half of n_features={n_features!r}: this generator makes "
            "sparse rows; expected nnz_per_row <= n_features / 2."
        )
    need, have = _BYTES_PER_FEATURE * n_features, _physical_memory()
    if have is not None and need > have:
        raise MemoryError(
            f"n_features={n_features} needs about {need / 2**30:.1f} GiB for {func}'s hidden model (a weight, a rank "
            f"and a probability per feature), more than this machine's {have / 2**30:.1f} GiB; choose fewer features."
        )


#: bytes the hidden model (_Model) holds per feature, its temporaries included
_BYTES_PER_FEATURE = 40


def _physical_memory():
    """The machine's memory in bytes (None where the system does not tell)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _entropy(random_state):
    """An integer seed from which every random stream of the data set is derived."""
    if random_state is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63))
    return int(random_state)


def _rng(entropy, *key):
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=key)))


# ---------------------------------------------------------------------------------------------------
# the frequency law and the hidden model
def _inverse_cdf(u, n_features, a):
    """0-based frequency rank for uniforms ``u``: a truncated power law ``x^-a`` on ``[1, d + 1)``, floored.

    This continuous version of Zipf's law has a closed-form inverse, so sampling costs O(1) per draw
    without a d-sized table; rank r (0-based) has probability ``F(r + 2) - F(r + 1)``.
    """
    if abs(a - 1.0) < 1e-9:
        x = np.exp(u * np.log(n_features + 1.0))
    else:
        e = 1.0 - a
        x = np.power(1.0 + u * ((n_features + 1.0) ** e - 1.0), 1.0 / e)
    r = x.astype(np.int64) - 1
    np.clip(r, 0, n_features - 1, out=r)  # guards rounding at both ends
    return r


def _rank_probabilities(n_features, a):
    x = np.arange(1, n_features + 2, dtype=np.float64)
    if abs(a - 1.0) < 1e-9:
        cdf = np.log(x) / np.log(n_features + 1.0)
    else:
        e = 1.0 - a
        cdf = (x**e - 1.0) / ((n_features + 1.0) ** e - 1.0)
    p = np.diff(cdf)
    return np.clip(p, 0.0, None)


@functools.lru_cache(maxsize=8)
def _draws_per_row(n_features, a, nnz_per_row):
    """Mean number of draws ``m`` per row so that the expected number of *distinct* features is nnz_per_row.

    A row makes ``1 + Poisson(m - 1)`` draws; feature r is then absent with probability
    ``(1 - p_r) exp(-(m - 1) p_r)``. The expected distinct count E(m) is increasing and concave, so Newton's
    method started at ``m = nnz_per_row`` (where E(m) <= m) converges from below.
    """
    p = _rank_probabilities(n_features, a)
    m = float(nnz_per_row)
    for _ in range(100):
        absent = (1.0 - p) * np.exp(-(m - 1.0) * p)
        gap = nnz_per_row - (n_features - absent.sum())
        slope = float((absent * p).sum())
        if gap <= 1e-9 * nnz_per_row or slope <= 0.0:
            break
        m += gap / slope
        if m > 50.0 * nnz_per_row + 1000.0:
            raise ValueError(
                f"zipf_a={a!r} concentrates the features too much to reach nnz_per_row={nnz_per_row!r} distinct "
                f"features per row out of n_features={n_features!r}; lower zipf_a or nnz_per_row."
            )
    return m


class _Model:
    """Everything shared by all blocks of one data set (drawn from the stream ``spawn_key=(0,)``)."""

    def __init__(self, n_features, nnz_per_row, zipf_a, noise, binary, entropy):
        self.n_features = n_features
        self.a = float(zipf_a)
        self.noise = float(noise)
        self.binary = bool(binary)
        self.entropy = entropy
        self.m = _draws_per_row(n_features, self.a, float(nnz_per_row))
        rng = _rng(entropy, 0)
        idx_dtype = np.int32 if n_features <= _INT32_MAX else np.int64
        #: feature id of each frequency rank: ids are scattered, as with hashed features
        self.rank_to_id = rng.permutation(n_features).astype(idx_dtype)
        #: hidden weights, by feature id
        self.w = rng.standard_normal(n_features)
        # centre the score (balanced classes) and scale the label noise to the score's spread
        p = _rank_probabilities(n_features, self.a)
        w_rank = self.w[self.rank_to_id]
        if self.binary:
            q = 1.0 - (1.0 - p) * np.exp(-(self.m - 1.0) * p)  # P(feature present)
            mean, var = q, q * (1.0 - q)
        else:
            mean = var = self.m * p  # counts: about Poisson(m p)
        self.bias = -float(mean @ w_rank)
        self.score_sd = float(np.sqrt(var @ (w_rank * w_rank)))

    def block(self, b, n_rows):
        """The first ``n_rows`` rows of block ``b``: ``(indptr, indices, counts, y)``, indices sorted and
        unique per row; ``counts`` (times each feature was drawn) is None when ``binary``.

        The whole block is always drawn, then cut, so a row never depends on ``n_samples``.
        """
        rows = self._full_block(b)
        return rows if n_rows == _BLOCK_ROWS else _split(rows, n_rows)[0]

    def _full_block(self, b):
        n_rows = _BLOCK_ROWS
        d = self.n_features
        rng = _rng(self.entropy, 1, b)
        draws = 1 + rng.poisson(self.m - 1.0, n_rows)
        ranks = _inverse_cdf(rng.random(int(draws.sum())), d, self.a)
        ids = self.rank_to_id[ranks]
        # sort each row's draws: a padded (rows, max draws) matrix sorted along axis 1 is ~10x faster than
        # one global sort of (row, id) keys; the padding (the largest id value) sorts to the end
        width = int(draws.max())
        P = np.full((n_rows, width), np.iinfo(ids.dtype).max, dtype=ids.dtype)
        keep = np.arange(width) < draws[:, None]
        P[keep] = ids
        P.sort(axis=1)
        drawn = keep.copy()
        keep[:, 1:] &= P[:, 1:] != P[:, :-1]  # drop repeated draws of a feature
        cols = P[keep]
        nnz = keep.sum(axis=1)
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(nnz, out=indptr[1:])
        rows = np.repeat(np.arange(n_rows), nnz)
        if self.binary:
            counts = None
        else:  # a feature's count = length of its run of equal draws
            starts = np.flatnonzero(keep[drawn])
            counts = np.diff(starts, append=ids.shape[0])
        wx = self.w[cols] if self.binary else counts * self.w[cols]
        score = np.bincount(rows, weights=wx, minlength=n_rows) + self.bias
        score += self.noise * self.score_sd * rng.standard_normal(n_rows)
        y = np.where(score >= 0.0, 1.0, -1.0)
        return indptr, cols, counts, y


def _iter_rows(model, n_samples, chunk_size):
    """Yield ``(indptr, indices, counts, y)`` for consecutive chunks of ``chunk_size`` rows.

    Blocks that straddle a chunk boundary are generated once and split (a loop per block, not per row).
    """
    pending = []  # list of (indptr, indices, counts, y) not yet emitted, in row order
    n_pending = 0
    n_blocks = -(-n_samples // _BLOCK_ROWS)
    for b in range(n_blocks):
        n_rows = min(_BLOCK_ROWS, n_samples - b * _BLOCK_ROWS)
        pending.append(model.block(b, n_rows))
        n_pending += n_rows
        while n_pending >= chunk_size or (b == n_blocks - 1 and n_pending > 0):
            take = min(chunk_size, n_pending)
            chunk, pending = _split(_concat(pending), take)
            n_pending -= take
            yield chunk


def _concat(parts):
    if len(parts) == 1:
        return parts[0]
    indptrs, offset = [np.zeros(1, dtype=np.int64)], 0
    for ip, *_ in parts:
        indptrs.append(ip[1:] + offset)
        offset += int(ip[-1])
    counts = None if parts[0][2] is None else np.concatenate([p[2] for p in parts])
    return (
        np.concatenate(indptrs),
        np.concatenate([p[1] for p in parts]),
        counts,
        np.concatenate([p[3] for p in parts]),
    )


def _split(rows, k):
    indptr, ind, cnt, y = rows
    nz = int(indptr[k])
    head = (indptr[: k + 1], ind[:nz], None if cnt is None else cnt[:nz], y[:k])
    rest = [] if k == y.shape[0] else [(indptr[k:] - nz, ind[nz:], None if cnt is None else cnt[nz:], y[k:])]
    return head, rest


# ---------------------------------------------------------------------------------------------------
def make_sparse_classification(
    n_samples: int,
    n_features: int,
    *,
    nnz_per_row: int = 100,
    zipf_a: float = 1.1,
    noise: float = 0.1,
    binary: bool = True,
    random_state: RandomStateLike = None,
    dtype: DTypeLike = np.float64,
) -> tuple[Any, FloatArray]:
    """Generate a sparse binary classification data set with Zipf-distributed feature frequencies.

    Each row makes ``1 + Poisson(m - 1)`` draws of a feature from a power law over frequency ranks
    (``P(rank r) ~ r^-zipf_a``, continuous truncated version so that sampling is O(1) per draw), with
    ``m`` solved so that a row has ``nnz_per_row`` *distinct* features on average. Frequency ranks are
    mapped to feature ids by a random permutation (as with hashed features). A value is 1 (``binary``)
    or the number of times its feature was drawn (a term count).

    Labels come from a hidden linear model with i.i.d. standard-normal weights ``w`` on all features:
    ``y = sign(w . x + b + noise * sd * e)``, ``e ~ N(0, 1)``, where ``b`` centres the score (balanced
    classes) and ``sd`` is the standard deviation of ``w . x``, so ``noise`` is a noise-to-signal ratio
    (0 = linearly separable). Frequent features are learnt quickly, rare ones hardly at all, as in text.

    The generation is vectorised per block of 4,096 rows (no Python loop per row): 200,000 x 1,000,000
    with 100 non-zeros per row takes a few seconds. Rows do not depend on how the stream is chunked nor
    on ``n_samples`` (a shorter stream is a prefix of a longer one), so :func:`write_svmlight_stream` with
    the same arguments writes this exact matrix.

    Parameters
    ----------
    n_samples : int >= 0
        Number of rows.
    n_features : int in [2, 2**40]
        Number of features (columns). The hidden model holds about 40 bytes per feature, so the machine's memory
        bounds it first (a ``MemoryError`` says so before anything is allocated).
    nnz_per_row : float in [1, n_features / 2], default=100
        Expected number of non-zeros (distinct features) per row.
    zipf_a : float in [0, 3], default=1.1
        Exponent of the frequency law: 0 is uniform, 1 is Zipf's law of words, larger is more skewed.
        Very skewed laws cannot reach many distinct features per row (a ``ValueError`` says so).
    noise : float >= 0, default=0.1
        Standard deviation of the label noise relative to that of the score ``w . x``.
    binary : bool, default=True
        Values 1 (True) or term counts (False).
    random_state : int >= 0, numpy Generator or None, default=None
        Seed. None draws a fresh one; a Generator is used once to draw a seed.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        dtype of ``X.data``.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Sorted, unique column indices in every row; int32 indices and indptr when they fit, else int64.
    y : ndarray of shape (n_samples,), float64
        Labels in {-1.0, +1.0}.

    Examples
    --------
    >>> from streamlearn.datasets import make_sparse_classification
    >>> from streamlearn.linear_model import OGDClassifier
    >>> X, y = make_sparse_classification(20_000, 1_000, nnz_per_row=20, random_state=0)
    >>> X.shape, X.indices.dtype.name, round(X.nnz / X.shape[0])
    ((20000, 1000), 'int32', 20)
    >>> clf = OGDClassifier().partial_fit(X[:15_000], y[:15_000], classes=[-1, 1])
    >>> print(f"{clf.score(X[15_000:], y[15_000:]):.2f}")
    0.8...
    """
    func = "make_sparse_classification"
    _validate(func, n_samples, n_features, nnz_per_row, zipf_a, noise, binary, random_state)
    _check_param(func, "dtype", np.dtype(dtype).type if _is_dtype(dtype) else dtype, Options(np.float64, np.float32))
    model = _Model(int(n_features), float(nnz_per_row), zipf_a, noise, binary, _entropy(random_state))
    chunks = list(_iter_rows(model, int(n_samples), max(int(n_samples), 1)))
    if chunks:
        indptr, indices, counts, y = chunks[0]
    else:
        indptr, indices, counts, y = np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    idx_dtype = np.int32 if max(int(n_features), int(indptr[-1])) <= _INT32_MAX else np.int64
    data = np.ones(indices.shape[0], dtype=dtype) if binary else counts.astype(dtype)
    X = sp.csr_matrix(
        (data, indices.astype(idx_dtype, copy=False), indptr.astype(idx_dtype, copy=False)),
        shape=(int(n_samples), int(n_features)),
        copy=False,
    )
    X.has_sorted_indices = True  # true by construction (sorted keys, duplicates merged): skip scipy's check
    X.has_canonical_format = True
    return X, y


def _is_dtype(dtype):
    try:
        np.dtype(dtype)
    except TypeError:
        return False
    return True


# ---------------------------------------------------------------------------------------------------
# LIBSVM text, built with array operations (no Python loop per row or per value)
def _put_digits(M, col_end, v):
    """Write the decimal digits of non-negative ints v into uint8 matrix M, right-aligned so the last digit
    is in column ``col_end - 1``; columns left of the leading digit are left as they are. Returns the number
    of columns used."""
    q = v.astype(np.uint32 if v.size == 0 or int(v.max()) < 2**32 else np.uint64)
    k = 0
    while True:
        nxt = q // 10  # division by a scalar: numpy uses a fast multiply-shift
        digit = (q - nxt * 10).astype(np.uint8)
        digit += 48
        if k > 0:
            digit *= q > 0  # no leading zeros: 0 bytes are dropped later
        M[:, col_end - 1 - k] = digit
        k += 1
        if not nxt.any():
            return k
        q = nxt


def _n_digits(v):
    return 1 if v.size == 0 else len(str(int(v.max())))


def _svmlight_bytes(indptr, indices, values, y):
    """LIBSVM lines ``label idx:val ...\\n`` (1-based idx) for one chunk, as bytes.

    ``values`` (None: all 1) must be non-negative integers, ``y`` integers. Every label and every
    `` idx:val`` pair is one row ("token") of a uint8 matrix, in text order, laid out as::

        [' ' or '\\n'] ['-' of a label] [digits of idx or |label|] [':' digits of the value]

    with padding bytes 0 wherever a token is shorter than the widest one. Dropping the zero bytes of the
    flattened matrix gives the text (a label token starts with the newline that ends the previous line).
    """
    n = y.shape[0]
    if n == 0:
        return b""
    nnz = indices.shape[0]
    labels = np.asarray(y, dtype=np.int64)
    lab_pos = np.asarray(indptr[:-1], dtype=np.int64) + np.arange(n)
    is_pair = np.ones(n + nnz, dtype=bool)
    is_pair[lab_pos] = False
    number = np.empty(n + nnz, dtype=np.int64)
    number[lab_pos] = np.abs(labels)
    number[is_pair] = indices
    number[is_pair] += 1  # 1-based
    w_num = _n_digits(number)
    if values is not None:
        vals = np.asarray(values, dtype=np.int64)
        w_val = _n_digits(vals)
    else:
        w_val = 1
    W = 2 + w_num + 1 + w_val
    M = np.zeros((n + nnz, W), dtype=np.uint8)
    col = np.full(n + nnz, ord(" "), dtype=np.uint8)
    col[lab_pos] = ord("\n")
    M[:, 0] = col
    col[:] = 0
    col[lab_pos[labels < 0]] = ord("-")
    M[:, 1] = col
    _put_digits(M, 2 + w_num, number)
    M[:, 2 + w_num] = is_pair * np.uint8(ord(":"))
    if values is None:
        M[:, W - 1] = is_pair * np.uint8(ord("1"))
    else:
        val_tok = np.zeros((nnz, w_val), dtype=np.uint8)
        _put_digits(val_tok, w_val, vals)
        M[is_pair, W - w_val :] = val_tok
    flat = M.ravel()
    text = flat[flat != 0]
    return text[1:].tobytes() + b"\n"


def write_svmlight_stream(
    path: PathLike,
    n_samples: int,
    n_features: int,
    *,
    nnz_per_row: int = 100,
    zipf_a: float = 1.1,
    noise: float = 0.1,
    binary: bool = True,
    random_state: RandomStateLike = None,
    chunk_size: int = 20_000,
) -> int:
    """Write the stream of :func:`make_sparse_classification` to a LIBSVM/svmlight text file, chunk by chunk.

    Lines are ``label idx:value ...`` with labels ``1``/``-1``, 1-based ascending indices and integer
    values (``1`` when ``binary``), the most compact exact form. Memory stays bounded by one chunk
    (about 100 bytes per non-zero), so files of many GB can be written; text is built with array
    operations (tens of MB/s on one core). The file is written under a temporary name in the same
    directory and renamed at the end, so an interrupted call leaves no half-written ``path``.

    Reading the file back with ``sklearn.datasets.load_svmlight_file(path, n_features=n_features)`` gives
    exactly ``make_sparse_classification`` with the same arguments (data as float64).

    Parameters
    ----------
    path : str or os.PathLike
        Output file (overwritten). Its directory must exist.
    n_samples, n_features, nnz_per_row, zipf_a, noise, binary, random_state
        As in :func:`make_sparse_classification`. Pass an int ``random_state`` to make the file reproducible.
    chunk_size : int >= 1, default=20000
        Rows generated and written at a time; it bounds memory and does not change the content.

    Returns
    -------
    n_bytes : int
        Size of the written file.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn.datasets import load_svmlight_file
    >>> from streamlearn.datasets import make_sparse_classification, write_svmlight_stream
    >>> path = os.path.join(tempfile.mkdtemp(), "stream.svm")
    >>> n_bytes = write_svmlight_stream(path, 1000, 50, nnz_per_row=5, random_state=0, chunk_size=300)
    >>> X, y = load_svmlight_file(path, n_features=50)
    >>> X0, y0 = make_sparse_classification(1000, 50, nnz_per_row=5, random_state=0)
    >>> (X != X0).nnz, bool((y == y0).all()), n_bytes == os.path.getsize(path)
    (0, True, True)
    """
    func = "write_svmlight_stream"
    _validate(func, n_samples, n_features, nnz_per_row, zipf_a, noise, binary, random_state)
    _check_param(func, "chunk_size", chunk_size, Interval(int, 1, None, closed="left"))
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path of {func} must be a str or os.PathLike; got {type(path).__name__}.")
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"the directory of path={str(path)!r} does not exist; create it first.")
    if path.is_dir():
        raise IsADirectoryError(f"path={str(path)!r} of {func} is a directory; expected the name of a file to write.")
    model = _Model(int(n_features), float(nnz_per_row), zipf_a, noise, binary, _entropy(random_state))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.part")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies, as for open()
    n_bytes = 0
    try:
        with os.fdopen(fd, "wb") as f:
            for indptr, indices, counts, y in _iter_rows(model, int(n_samples), int(chunk_size)):
                buf = _svmlight_bytes(indptr, indices, None if binary else counts, y)
                f.write(buf)
                n_bytes += len(buf)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return n_bytes
