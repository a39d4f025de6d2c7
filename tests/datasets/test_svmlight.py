"""streamlearn.datasets LIBSVM reader: equality with scikit-learn, chunking, compression, errors."""

import bz2
import gzip
import io
import lzma
import pickle
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.datasets
from sklearn.datasets import load_svmlight_file

import streamlearn.datasets._svmlight as svm_mod
from streamlearn.datasets import (
    SvmlightFormatError,
    bundled_path,
    iter_svmlight,
    load_a9a,
    load_farm_ads,
    load_svmlight,
    shared_data_path,
)
from tests.conftest import SHARED_DATA, NonSeekable, decompressible
from tests.naive import NAIVE_ERROR_WORDS, naive_load_svmlight

SK_DATA = Path(sklearn.datasets.__file__).parent / "tests" / "data"
needs_sk_data = pytest.mark.skipif(
    not (SK_DATA / "svmlight_classification.txt").is_file(),
    reason=f"scikit-learn's svmlight test files are not installed in {SK_DATA}",
)
SHARED = SHARED_DATA


# ---------------------------------------------------------------------------------------------------
# helpers


def assert_same(got, ref):
    """(X, y) pairs are identical: shape, indptr, indices, data bits, y bits."""
    (X, y), (Xr, yr) = got, ref
    assert X.shape == Xr.shape
    np.testing.assert_array_equal(X.indptr, Xr.indptr)
    np.testing.assert_array_equal(X.indices, Xr.indices)
    assert X.data.dtype == Xr.data.dtype
    np.testing.assert_array_equal(X.data.view(f"u{X.data.itemsize}"), Xr.data.view(f"u{Xr.data.itemsize}"))
    np.testing.assert_array_equal(np.asarray(y).view(np.uint64), np.asarray(yr).view(np.uint64))


def stack(chunks):
    chunks = list(chunks)
    return sp.vstack([X for X, _ in chunks], format="csr"), np.concatenate([y for _, y in chunks])


_VALUES = [
    b"1",
    b"0",
    b"-0.0",
    b"2.5",
    b".5",
    b"5.",
    b"1E-5",
    b"+3e+02",
    b"-1.25e-3",
    b"007.50",
    b"123456789012345678901234",
    b"0.30000000000000004441",
    b"4.9e-324",
    b"2.2250738585072011e-308",
    b"1e-400",
    b"1.7976931348623157e308",
    b"9007199254740993",
    b"0.1000000000000000055511151231257827",
]


def random_svmlight(rng, n_rows, n_features, *, one_based=False, final_newline=True):
    """Bytes of a valid file with every syntax variation both readers accept."""
    seps = [b" ", b"\t", b"  ", b" \t ", b"\x0b", b"\x0c"]
    lines = []
    for _ in range(n_rows):
        r = rng.random()
        if r < 0.04:
            lines.append(rng.choice([b"", b"   ", b"\t\r"]))
            continue
        if r < 0.07:
            lines.append(b"# comment: 1:2 \xc2\xbd")
            continue
        label = rng.choice([b"1", b"-1", b"+1", b"0.5", b"2e0", repr(float(rng.normal())).encode()])
        k = int(rng.integers(0, min(n_features, 12) + 1))
        idx = np.sort(rng.choice(n_features, size=k, replace=False)) + int(one_based)
        toks = [label]
        if rng.random() < 0.05:
            toks.append(b"qid:%d" % rng.integers(0, 99))
        for i in idx:
            q = rng.random()
            if q < 0.5:
                val = repr(float(rng.normal() * 10.0 ** rng.integers(-5, 6))).encode()
            elif q < 0.65:
                val = b"%.3g" % rng.normal()
            else:
                val = _VALUES[int(rng.integers(len(_VALUES)))]
            si = b"%d" % i
            if rng.random() < 0.03:
                si = b"+" + si
            elif rng.random() < 0.03:
                si = b"00" + si
            toks.append(si + b":" + val)
        line = b"".join(t + seps[int(rng.integers(len(seps)))] for t in toks[:-1]) + toks[-1]
        if rng.random() < 0.1:
            line += b" # trailing comment #"
        if rng.random() < 0.1:
            line += b" \r"
        lines.append(line)
    out = b"\n".join(lines)
    return out + b"\n" if final_newline else out


@pytest.fixture(scope="module")
def random_files(tmp_path_factory):
    """A few valid files: (path, bytes, one_based)."""
    d = tmp_path_factory.mktemp("svm")
    rng = np.random.default_rng(0)
    out = []
    for k, (n_rows, n_feat, one_based, nl) in enumerate(
        [(300, 40, False, True), (500, 2000, True, False), (60, 5, True, True), (400, 300, False, False)]
    ):
        raw = random_svmlight(rng, n_rows, n_feat, one_based=one_based, final_newline=nl)
        if not one_based and b" 0:" not in raw and b"\t0:" not in raw:
            raw = b"1 0:1\n" + raw  # make sure 'auto' sees a zero-based file
        p = d / f"f{k}.svm"
        p.write_bytes(raw)
        out.append((p, raw, one_based))
    return out


# ---------------------------------------------------------------------------------------------------
# equality with scikit-learn


@needs_sk_data
@pytest.mark.parametrize("zero_based", ["auto", True, False])
@pytest.mark.parametrize("n_features", [None, 22])
def test_sklearn_classification_file(zero_based, n_features):
    path = SK_DATA / "svmlight_classification.txt"
    got = load_svmlight(path, n_features=n_features, zero_based=zero_based)
    ref = load_svmlight_file(str(path), n_features=n_features, zero_based=zero_based)
    assert_same(got, ref)
    assert got[0].indices.dtype == np.int32
    assert 0.0 in got[0].data  # '2.0 3:0 # explicit zeros' is kept, as scikit-learn does
    assert_same(
        stack(iter_svmlight(path, chunk_size=2, n_features=n_features, zero_based=zero_based, block_size=16)), ref
    )


@needs_sk_data
@pytest.mark.parametrize(
    "name, line, words",
    [
        ("svmlight_invalid.txt", 1, "the label 'python' is not a number"),
        ("svmlight_invalid_order.txt", 1, "unsorted feature index in '2:-5.2' (after index 5)"),
        ("svmlight_multilabel.txt", 2, "multilabel line (label '1,0')"),
    ],
)
def test_sklearn_invalid_files(name, line, words):
    path = SK_DATA / name
    with pytest.raises(ValueError):
        load_svmlight_file(str(path))  # scikit-learn rejects them too
    with pytest.raises(SvmlightFormatError) as e:
        load_svmlight(path)
    assert e.value.line == line
    assert str(e.value).startswith(f"{path}, line {line}: ")
    assert words in str(e.value)


def _float32_overflow_lines(raw):
    """The lines (from 1) of LIBSVM text ``raw`` with a feature value that rounds to infinity in float32."""
    return [
        number
        for number, line in enumerate(raw.split(b"\n"), 1)
        if any(
            not tok.startswith(b"qid:") and abs(float(tok.split(b":")[1])) >= 2.0**128 - 2.0**103
            for tok in line.split(b"#")[0].split()[1:]
        )
    ]


def test_random_files_equal_sklearn(random_files):
    for path, _raw, one_based in random_files:
        for zb in ["auto", one_based is False]:
            ref = load_svmlight_file(str(path), zero_based=zb)
            assert_same(load_svmlight(path, zero_based=zb), ref)
        big = _float32_overflow_lines(_raw)
        if big:  # scikit-learn hands over an infinity
            with pytest.raises(SvmlightFormatError, match="too large for float32") as e:
                load_svmlight(path, dtype=np.float32)
            assert e.value.line == big[0]
        fits = path.with_suffix(".float32.svm")  # without those lines
        fits.write_bytes(b"\n".join(t for i, t in enumerate(_raw.split(b"\n"), 1) if i not in big))
        assert_same(load_svmlight(fits, dtype=np.float32), load_svmlight_file(str(fits), dtype=np.float32))
        n = ref[0].shape[1] + 7
        assert_same(load_svmlight(path, n_features=n), load_svmlight_file(str(path), n_features=n))


def test_hard_tokens_resolved_in_small_batches(random_files, monkeypatch):
    """Values the kernel hands back to float() (>19 digits, subnormals): the table refills correctly."""
    path, raw, _ = random_files[1]
    monkeypatch.setattr(svm_mod, "_HARD_ROWS", 2)
    assert_same(load_svmlight(path, block_size=64), load_svmlight_file(str(path)))


def test_bundled_a9a_equals_sklearn():
    X, y, Xt, yt = load_a9a()
    assert X.shape == (32561, 123) and Xt.shape == (16281, 123)
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert X.indices.dtype == np.int32
    for got, name in [((X, y), "a9a.xz"), ((Xt, yt), "a9a.t.xz")]:
        with lzma.open(bundled_path(name)) as f:
            ref = load_svmlight_file(f, n_features=123)
        assert_same(got, ref)


@pytest.mark.parametrize("rel, n_features", [("a9a/a9a.xz", 123), ("farm-ads/farm-ads-vect.xz", 54877)])
def test_shared_data_equals_sklearn(rel, n_features):
    path = SHARED / rel
    if not path.is_file():
        pytest.skip(f"shared data file {path} absent (set STREAMLEARN_SHARED_DATA)")
    with lzma.open(path) as f:
        ref = load_svmlight_file(f)
    got = load_svmlight(path)
    assert_same(got, ref)
    assert got[0].shape[1] == n_features
    assert_same(stack(iter_svmlight(path, chunk_size=1000, n_features=n_features, zero_based=False)), ref)
    if rel.startswith("farm"):
        assert_same(load_farm_ads(), ref)


# ---------------------------------------------------------------------------------------------------
# chunking


@pytest.mark.parametrize("chunk_size", [1, 7, 64, 100_000])
@pytest.mark.parametrize("block_size", [16, 37, 1 << 20])
def test_chunked_equals_whole(random_files, chunk_size, block_size):
    for path, _raw, one_based in random_files[:2]:
        whole = load_svmlight(path)
        chunks = list(iter_svmlight(path, chunk_size=chunk_size, block_size=block_size))
        sizes = [len(y) for _, y in chunks]
        assert all(s == chunk_size for s in sizes[:-1]) and 0 < sizes[-1] <= chunk_size
        assert {X.shape[1] for X, _ in chunks} == {whole[0].shape[1]}
        assert_same(stack(chunks), whole)
        # one pass with both given: same chunks
        explicit = iter_svmlight(
            path, chunk_size=chunk_size, block_size=block_size, n_features=whole[0].shape[1], zero_based=not one_based
        )
        assert_same(stack(explicit), whole)


@pytest.mark.parametrize("chunk_size", [2, 5, 6, 50, 2**62])
def test_huge_chunk_size_allocates_only_the_rows_read(monkeypatch, chunk_size):
    """A chunk's row arrays start small and grow up to chunk_size (2**62 rows used to fail inside numpy, e.g.
    'array is too big'); the chunks are the same either way."""
    data = b"".join(b"%d %d:%d\n" % (1 - 2 * (i % 2), i % 9 + 1, i + 1) for i in range(50))
    whole = load_svmlight(io.BytesIO(data))
    monkeypatch.setattr(svm_mod, "_FIRST_ROWS", 3)  # growth inside a chunk, on a small file
    for explicit in [{}, {"n_features": 9, "zero_based": False}]:
        chunks = list(iter_svmlight(io.BytesIO(data), chunk_size=chunk_size, **explicit))
        assert [len(y) for _, y in chunks] == [min(chunk_size, 50 - k * chunk_size) for k in range(len(chunks))]
        assert_same(stack(chunks), whole)


def test_auto_decided_on_whole_file_not_first_chunk(tmp_path):
    """Index 0 only in the last line: every chunk must be read zero-based, as load_svmlight does."""
    p = tmp_path / "late_zero.svm"
    p.write_bytes(b"".join(b"1 %d:1\n" % (i + 1) for i in range(50)) + b"-1 0:2\n")
    whole = load_svmlight(p)
    assert_same(whole, load_svmlight_file(str(p)))
    assert whole[0].shape[1] == 51 and whole[0][0, 1] == 1.0
    assert_same(stack(iter_svmlight(p, chunk_size=4, block_size=16)), whole)


def test_zero_based_auto_with_n_features(tmp_path):
    one = tmp_path / "one.svm"
    one.write_bytes(b"1 1:1 5:2\n-1 3:1\n")  # one-based: 5 is column 4, fits n_features=5
    assert_same(load_svmlight(one, n_features=5), load_svmlight_file(str(one), n_features=5))
    assert_same(stack(iter_svmlight(one, n_features=5)), load_svmlight(one, n_features=5))
    zero = tmp_path / "zero.svm"
    zero.write_bytes(b"1 0:1\n-1 5:1\n")  # zero-based: column 5 does not fit n_features=5
    for call in (lambda: load_svmlight(zero, n_features=5), lambda: list(iter_svmlight(zero, n_features=5))):
        with pytest.raises(SvmlightFormatError, match=r"zero.svm, line 2: feature index 5 is beyond n_features=5"):
            call()


def test_index_dtype_int32_and_int64(tmp_path):
    big = 3_000_000_000
    p = tmp_path / "wide.svm"
    p.write_bytes(b"1 2:1 %d:2.5\n-1 7:1\n" % big)
    X, y = load_svmlight(p, zero_based=True)  # int32 first, switched to int64 at line 1
    assert X.indices.dtype == X.indptr.dtype == np.int64
    assert X.shape == (2, big + 1) and X[0, big] == 2.5 and X[1, 7] == 1.0
    X1, _ = load_svmlight(p)  # auto: one-based
    assert X1.shape == (2, big) and X1[0, big - 1] == 2.5 and X1.indices.dtype == np.int64
    ((Xc, _),) = iter_svmlight(p, chunk_size=10, n_features=big + 1, zero_based=True)
    assert Xc.indices.dtype == np.int64 and (Xc != X).nnz == 0
    small, _ = load_svmlight(io.BytesIO(b"1 2:1\n"))
    assert small.indices.dtype == small.indptr.dtype == np.int32
    Xw, _ = load_svmlight(io.BytesIO(b"1 2:1\n"), n_features=2**31 + 5)  # wide but small indices
    assert Xw.indices.dtype == np.int64 and Xw.shape == (1, 2**31 + 5)


# ---------------------------------------------------------------------------------------------------
# compression and file objects


@pytest.mark.parametrize("kind", ["gz", "bz2", "xz"])
def test_compressed_equals_plain(random_files, tmp_path, kind):
    path, raw, _ = random_files[0]
    comp = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind](raw)
    ref = load_svmlight(path)
    named = tmp_path / f"data.{kind}"
    named.write_bytes(comp)
    misnamed = tmp_path / "data.txt"  # the magic bytes decide, not the suffix
    misnamed.write_bytes(comp)
    for src in (named, str(misnamed)):
        assert_same(load_svmlight(src), ref)
        assert_same(stack(iter_svmlight(src, chunk_size=50, block_size=100)), ref)
    with open(named, "rb") as f:
        assert_same(load_svmlight(f), ref)
        assert not f.closed
    assert_same(load_svmlight(io.BytesIO(comp)), ref)
    assert_same(
        stack(iter_svmlight(NonSeekable(comp), chunk_size=33, n_features=ref[0].shape[1], zero_based=True)), ref
    )


@pytest.mark.parametrize("kind", ["gz", "bz2", "xz"])
def test_corrupt_or_truncated_compressed_file(tmp_path, kind):
    raw = b"".join(b"1 1:%d 3:2\n" % i for i in range(20000))
    comp = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind](raw)
    name = {"gz": "gzip", "bz2": "bz2", "xz": "xz"}[kind]
    for bad in (comp[: len(comp) // 2], comp[:10] + bytes(50) + comp[60:]):
        p = tmp_path / f"bad.{kind}"
        p.write_bytes(bad)
        with pytest.raises(
            SvmlightFormatError,
            match=rf"^{re.escape(str(p))}, line \d+: cannot decompress the "
            rf"{name} data \(.*\); the file is corrupt or truncated",
        ):
            load_svmlight(p, block_size=4096)


@pytest.mark.parametrize("kind", ["gz", "bz2", "xz"])
def test_truncated_compressed_file_names_the_line_where_its_text_stops(tmp_path, kind):
    """A compressed file cut short (an interrupted download) is read up to the cut: the error names the line
    after the last whole one that decompresses, not the start of the block (1 MiB, or the reader's 4 MiB) whose
    read failed."""
    raw = b"".join(b"1 1:%d 3:2 17:0.25\n" % i for i in range(400_000))  # 9 MB of text
    comp = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind](raw)
    p = tmp_path / f"cut.{kind}"
    p.write_bytes(comp[: int(len(comp) * 0.8)])
    good = decompressible(kind, p.read_bytes()).count(b"\n")
    with pytest.raises(SvmlightFormatError, match="cannot decompress") as exc:
        load_svmlight(p)
    assert exc.value.line == good + 1, (exc.value.line, good)


def test_plain_file_with_compression_suffix_is_read_as_plain(random_files, tmp_path):
    path, raw, _ = random_files[0]
    p = tmp_path / "plain.gz"
    p.write_bytes(raw)
    assert_same(load_svmlight(p), load_svmlight(path))


def test_file_objects(random_files):
    path, raw, one_based = random_files[0]
    ref = load_svmlight(path)
    buf = io.BytesIO(b"garbage line that is skipped by seeking\n" + raw)
    buf.seek(40)  # read from the current position, for both passes of iter_svmlight
    assert_same(stack(iter_svmlight(buf, chunk_size=64)), ref)
    assert_same(load_svmlight(NonSeekable(raw)), ref)
    with pytest.raises(ValueError, match="non-seekable stream, so it cannot be read twice: pass n_features"):
        iter_svmlight(NonSeekable(raw))
    with open(path) as text, pytest.raises(TypeError, match="binary mode"):
        load_svmlight(text)


def test_bad_arguments(random_files):
    path = random_files[0][0]
    for kwargs, msg in [
        ({"n_features": 0}, "n_features must be None or an int >= 1, got 0"),
        ({"zero_based": "yes"}, "zero_based must be True, False or 'auto', got 'yes'"),
        ({"dtype": np.int64}, "dtype must be float32 or float64, got int64"),
        ({"chunk_size": 0}, "chunk_size must be an int >= 1 (rows per chunk), got 0"),
    ]:
        with pytest.raises(ValueError, match="^" + re.escape(msg)):
            iter_svmlight(path, **kwargs)
    with pytest.raises(TypeError, match="expected a path"):
        load_svmlight(42)
    with pytest.raises(FileNotFoundError):
        load_svmlight(path.parent / "missing.svm")


# ---------------------------------------------------------------------------------------------------
# errors: message names file, line and problem; also from a later chunk


_BAD = [  # (bad line, zero_based, n_features, kind, words in the message)
    (b"abc 1:2", "auto", None, "label", "the label 'abc' is not a number"),
    (b"1,2 3:4", "auto", None, "multilabel", "multilabel line (label '1,2')"),
    # commas between words are not labels (a CSV file read as LIBSVM): it said "multilabel line"
    (b'"y","age" 3:4', "auto", None, "label", 'the label \'"y","age"\' is not a number'),
    (b"1,a 3:4", "auto", None, "label", "the label '1,a' is not a number"),
    (b"1 3:1 foo", "auto", None, "feature", "malformed feature 'foo': expected <index>:<value>"),
    (b"1 3:1 4:", "auto", None, "value", "malformed feature '4:': the value after ':' is not a number"),
    (b"1 3:1 4:0x1", "auto", None, "value", "malformed feature '4:0x1': the value after ':' is not a number"),
    (b"1 3:nan", "auto", None, "nonfinite", "non-finite value in '3:nan'"),
    (b"-inf 3:1", "auto", None, "nonfinite", "non-finite value in '-inf'"),
    (b"1 3:1e999", "auto", None, "nonfinite", "non-finite value in '3:1e999'"),
    (b"1 3:1.8e308", "auto", None, "nonfinite", "non-finite value '1.8e308': it overflows to infinity"),
    # a long token is cut to 60 characters, as in every other message (the whole 5 MB label was printed)
    (b"1" * 5000 + b" 3:1", "auto", None, "nonfinite", "non-finite value '" + "1" * 57 + "...': it overflows"),
    (b"1 -3:1", "auto", None, "negative", "negative feature index in '-3:1'"),
    (b"1 0:1", False, None, "zero", "feature index 0 in '0:1', but zero_based=False"),
    (b"1 3:1 3:2", "auto", None, "duplicate", "duplicate feature index in '3:2' (after index 3)"),
    (b"1 5:1 3:2", "auto", None, "unsorted", "unsorted feature index in '3:2' (after index 5)"),
    (b"1 3:1 31:1", True, 30, "beyond", "feature index in '31:1' is beyond n_features=30"),
    (b"1 3:1 30:1", True, 30, "beyond", "feature index in '30:1' is beyond n_features=30"),
    (b"1 3:1 31:1", False, 30, "beyond", "feature index in '31:1' is beyond n_features=30"),
    (b"1 99999999999999999999:1", "auto", None, "big", "too large"),
    (b"1 qid:x 3:1", "auto", None, "qid", "malformed query id 'qid:x'"),
]


def _good_lines(n):
    return [b"%d 1:%d.5 %d:1" % (1 - 2 * (i % 2), i, 2 + i % 20) for i in range(n)]


@pytest.mark.parametrize(
    "bad, zero_based, n_features, kind, words", _BAD, ids=[b[3] + str(i) for i, b in enumerate(_BAD)]
)
def test_error_line_and_message(tmp_path, bad, zero_based, n_features, kind, words):
    lines = _good_lines(3000)
    lines.insert(2, b"# a comment line counts as a line")
    bad_line = 2500
    lines[bad_line - 1] = bad  # the line numbered bad_line
    raw = b"\n".join(lines) + b"\n"
    p = tmp_path / "bad.svm"
    p.write_bytes(raw)
    assert naive_load_svmlight(raw, zero_based, n_features) == ("error", bad_line, kind)
    assert NAIVE_ERROR_WORDS[kind] in words
    prefix = f"{p}, line {bad_line}: "

    with pytest.raises(SvmlightFormatError) as e:
        load_svmlight(p, n_features=n_features, zero_based=zero_based, block_size=4096)
    assert (e.value.line, e.value.source) == (bad_line, str(p))
    assert str(e.value).startswith(prefix) and words in str(e.value)
    assert isinstance(e.value, ValueError)

    # streaming in one pass: earlier chunks come out (complete and valid), then the error
    if zero_based != "auto":
        got = []
        with pytest.raises(SvmlightFormatError) as e:
            for _X, y in iter_svmlight(
                p, chunk_size=100, n_features=n_features or 100, zero_based=zero_based, block_size=512
            ):
                got.append(len(y))
        assert str(e.value).startswith(prefix) and words in str(e.value)
        assert got == [100] * 24  # the bad row (2498th data row) is in the 25th chunk
    # with a first pass (n_features=None or zero_based="auto"): the error comes before any chunk
    zb = zero_based if n_features is None else "auto"
    want = naive_load_svmlight(raw, zb, n_features)
    if isinstance(want[0], str):
        assert want == ("error", bad_line, kind)
        it = None
        with pytest.raises(SvmlightFormatError) as e:
            it = iter_svmlight(p, chunk_size=100, n_features=n_features, zero_based=zb)
        assert it is None and str(e.value).startswith(prefix) and words in str(e.value)
    else:
        assert (kind, bad) == ("beyond", b"1 3:1 30:1")  # index 30 is fine one-based


_TOO_BIG_FOR_FLOAT32 = (
    "feature 7 has a value too large for float32 (above 3.4e38 in size); expected values that fit, or read with "
    "dtype=float64 (the default)."
)


# 3.5e38 rounds to infinity in float32; the long token is converted by Python's float(), not the kernel
@pytest.mark.parametrize("value", [b"1e39", b"-3.5e38", b"1.000000000000000000000000000001e39"])
def test_float32_value_too_large_names_file_and_line(tmp_path, value):
    """A finite value beyond float32's range is an error naming the file and line, not an inf in X.data."""
    lines = _good_lines(3000)
    bad_line = 2500
    lines[bad_line - 1] = b"1 3:1 7:" + value
    p = tmp_path / "big.svm"
    p.write_bytes(b"\n".join(lines) + b"\n")
    want = f"{p}, line {bad_line}: {_TOO_BIG_FOR_FLOAT32}"
    for call in (
        lambda: load_svmlight(p, dtype=np.float32),
        lambda: load_svmlight(p, zero_based=False, dtype=np.float32),
        lambda: load_svmlight(p, zero_based=True, n_features=30, dtype=np.float32, block_size=512),
        lambda: list(iter_svmlight(p, chunk_size=100, dtype=np.float32)),  # two passes
    ):
        with pytest.raises(SvmlightFormatError) as e:
            call()
        assert str(e.value) == want and e.value.line == bad_line
    got = []  # in one pass, the chunks before the bad line come out
    with pytest.raises(SvmlightFormatError) as e:
        for _X, y in iter_svmlight(p, chunk_size=100, n_features=30, zero_based=False, dtype=np.float32):
            got.append(len(y))
    assert str(e.value) == want and got == [100] * 24
    # before an error on a later line of the same chunk
    lines[bad_line] = b"1 3:x"
    p.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(SvmlightFormatError, match="^" + re.escape(want) + "$"):
        load_svmlight(p, dtype=np.float32)
    # float64 reads it
    lines[bad_line] = b"1 3:1"
    p.write_bytes(b"\n".join(lines) + b"\n")
    X, _ = load_svmlight(p)
    assert X[bad_line - 1, 6] == float(value)


def test_float32_largest_values_fit(tmp_path):
    p = tmp_path / "edge.svm"
    p.write_bytes(b"1 1:3.4028234e38 2:-3.4028235e38 3:1e-50\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, _ = load_svmlight(p, dtype=np.float32)
    assert X.dtype == np.float32 and np.isfinite(X.data).all() and X.data[-1] == 0.0


@pytest.mark.parametrize(
    "raw, line, words",
    [
        (b"", 0, "no data lines: the file is empty"),
        (b"# only a comment\n\n   \n", 3, "no data lines: all 3 lines are blank or comments"),
    ],
)
def test_empty_file(tmp_path, raw, line, words):
    p = tmp_path / "empty.svm"
    p.write_bytes(raw)
    assert naive_load_svmlight(raw) == ("error", line, "empty")
    for call in (
        lambda: load_svmlight(p),
        lambda: list(iter_svmlight(p)),
        lambda: list(iter_svmlight(p, n_features=3, zero_based=True)),
    ):
        with pytest.raises(SvmlightFormatError) as e:
            call()
        where = f"{p}, line {line}" if line else str(p)  # a file without lines: no line named (was "line 0")
        assert e.value.line == line and str(e.value) == f"{where}: {words}"


def test_error_pickles():
    e = SvmlightFormatError("f.svm", 3, "bad")
    e2 = pickle.loads(pickle.dumps(e))
    assert (str(e2), e2.line, e2.source) == ("f.svm, line 3: bad", 3, "f.svm")


# ---------------------------------------------------------------------------------------------------
# kernel vs twin on random, partly broken files


_BREAKERS = [
    b"x",
    b"1:",
    b":1",
    b"1:1:1",
    b"-2:1",
    b"nan",
    b"1:inf",
    b"3:1e400",
    b"0:1",
    b"qid:1",
    b"1,2",
    b"99999999999999999999:1",
    b"1:1_0",
    b"+-1:2",
    b"2:+.5",
    b"7:1e",
    b"1:.",
    b"0:-0",
]


@pytest.mark.parametrize("seed", range(6))
def test_kernel_matches_twin_on_random_files(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    for _trial in range(12):
        one_based = bool(rng.integers(2))
        raw = random_svmlight(
            rng,
            int(rng.integers(1, 60)),
            int(rng.integers(1, 30)),
            one_based=one_based,
            final_newline=bool(rng.integers(2)),
        )
        lines = raw.split(b"\n")
        for _ in range(int(rng.integers(0, 3))):  # splice a random token into a random line
            i = int(rng.integers(len(lines)))
            toks = lines[i].split(b" ")
            toks.insert(int(rng.integers(len(toks) + 1)), _BREAKERS[int(rng.integers(len(_BREAKERS)))])
            lines[i] = b" ".join(toks)
        raw = b"\n".join(lines)
        zb = [True, False, "auto"][int(rng.integers(3))]
        nf = None if rng.random() < 0.5 else int(rng.integers(1, 35))
        want = naive_load_svmlight(raw, zb, nf)
        bs = int(rng.integers(16, 200))
        if isinstance(want[0], str):
            _, line, kind = want
            with pytest.raises(SvmlightFormatError) as e:
                load_svmlight(io.BytesIO(raw), n_features=nf, zero_based=zb, block_size=bs)
            assert (e.value.line, NAIVE_ERROR_WORDS[kind] in e.value.reason) == (line, True), (raw, e.value)
        else:
            data, indices, indptr, y, n = want
            X, yy = load_svmlight(io.BytesIO(raw), n_features=nf, zero_based=zb, block_size=bs)
            assert X.shape == (len(y), n)
            np.testing.assert_array_equal(X.indptr, indptr)
            np.testing.assert_array_equal(X.indices, indices)
            np.testing.assert_array_equal(X.data.view(np.uint64), data.view(np.uint64))
            np.testing.assert_array_equal(yy.view(np.uint64), y.view(np.uint64))


# ---------------------------------------------------------------------------------------------------
# shared data locator


def test_shared_data_path(tmp_path, monkeypatch):
    (tmp_path / "farm-ads").mkdir()
    f = tmp_path / "farm-ads" / "x.svm"
    f.write_bytes(b"1 1:1\n")
    monkeypatch.setenv("STREAMLEARN_SHARED_DATA", str(tmp_path))
    assert shared_data_path("farm-ads/x.svm") == f
    with pytest.raises(FileNotFoundError) as e:
        shared_data_path("nope/missing.xz")
    msg = str(e.value)
    assert str(tmp_path / "nope" / "missing.xz") in msg and "$STREAMLEARN_SHARED_DATA" in msg
    monkeypatch.delenv("STREAMLEARN_SHARED_DATA")
    with pytest.raises(FileNotFoundError, match=r"shared/data/nope.xz .*relative to the repository"):
        shared_data_path("nope.xz")
    monkeypatch.setenv("STREAMLEARN_SHARED_DATA", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="farm-ads-vect.xz"):
        load_farm_ads()


def test_a_utf8_byte_order_mark_at_the_start_of_the_file_is_skipped(tmp_path):
    """Windows editors start a text file with a byte order mark: the first line is read as if it were absent
    (by the one-shot loader, the streaming reader and the pipe reader alike), as the VW and CSV readers do; a
    byte order mark anywhere else is still a malformed token."""
    from streamlearn.datasets import SvmlightFormatError, iter_svmlight, load_svmlight
    from streamlearn.datasets._stream import SvmlightStream

    path = tmp_path / "bom.svm"
    path.write_bytes(b"\xef\xbb\xbf1 1:1\n-1 2:1\n")
    X, y = load_svmlight(path)
    assert X.toarray().tolist() == [[1.0, 0.0], [0.0, 1.0]] and y.tolist() == [1.0, -1.0]
    assert [c[1].tolist() for c in iter_svmlight(path, chunk_size=1, block_size=16)] == [[1.0], [-1.0]]
    with open(path, "rb") as f:
        assert [c[1].tolist() for c in SvmlightStream(f, zero_based=False, n_features=2)] == [[1.0, -1.0]]
    path.write_bytes(b"1 1:1\n\xef\xbb\xbf-1 2:1\n")
    with pytest.raises(SvmlightFormatError, match="line 2"):
        load_svmlight(path)


def test_lines_ended_by_a_carriage_return_alone_are_named_as_such(tmp_path):
    """Classic Mac OS line ends ('\\r' alone) made the file one line, refused for its second label: "negative
    feature index in '-1'"."""
    path = tmp_path / "mac.svm"
    path.write_bytes(b"".join(b"%d 1:%d\r" % (1 - 2 * (i % 2), i + 1) for i in range(3000)))
    for block_size in (4096, 1 << 22):
        with pytest.raises(SvmlightFormatError) as err:
            load_svmlight(path, block_size=block_size)
        assert str(err.value).startswith(f"{path}, line 1: the lines end with a carriage return alone ('\\r'")


@pytest.mark.parametrize("block_size", [16, 4096])
def test_a_carriage_return_in_a_first_line_longer_than_the_block_is_no_mac_file(tmp_path, block_size):
    """A first line holding a '\r' and longer than a small block: the check for classic Mac OS line ends saw a
    full block without a line feed and refused the file, whose line feed came after the block."""
    path = tmp_path / "cr.svm"
    path.write_bytes(b"\r0 1:0 2:0 3:5 #" + b" " * 5000 + b"\n1 2:1\n")
    X, y = load_svmlight(path, block_size=block_size)
    assert y.tolist() == [0.0, 1.0] and X.toarray().tolist() == [[0.0, 0.0, 5.0], [0.0, 1.0, 0.0]]
    bare = tmp_path / "mac.svm"  # and a file with no line feed is still refused, from a small block on
    bare.write_bytes(b"1 1:1\r" * 20)
    with pytest.raises(SvmlightFormatError, match="carriage return alone"):
        load_svmlight(bare, block_size=block_size)


def test_a_token_with_bytes_that_are_not_utf8_is_quoted_once(tmp_path):
    """A malformed token holding a byte that is not UTF-8 is quoted with U+FFFD in its place, in the LIBSVM and
    VW readers alike; the LIBSVM reader showed a doubled escape ('3:1\\\\xff')."""
    from streamlearn.datasets import load_vw
    from streamlearn.datasets._vw import VwFormatError

    p = tmp_path / "bad.svm"
    p.write_bytes(b"1 3:1\xff 4:2\n")
    with pytest.raises(SvmlightFormatError) as err:
        load_svmlight(p)
    assert "malformed feature '3:1\ufffd'" in str(err.value) and "\\" not in str(err.value)
    p = tmp_path / "bad.vw"
    p.write_bytes(b"1 |a x:1\xff y\n")
    with pytest.raises(VwFormatError) as err:
        load_vw(p)
    assert "'x:1\ufffd'" in str(err.value) and "\\" not in str(err.value)
