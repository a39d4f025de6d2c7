import bz2
import gzip
import io
import lzma
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn.datasets import iter_vw, load_vw
from streamlearn.datasets._vw import VwFormatError
from tests import naive_vw
from tests.conftest import decompressible
from tests.datasets.vw_corpus import CORPUS, OPTION_SETS, vw_audit_buckets

DATA = ("\n".join(CORPUS) + "\n").encode("utf-8")


def _rows(X):
    return [dict(zip(X[i].indices.tolist(), X[i].data.tolist())) for i in range(X.shape[0])]


def _same(got, want):
    assert set(got) == set(want)
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("bits", [18, 24])
@pytest.mark.parametrize("kw,_", OPTION_SETS, ids=[o or "plain" for _, o in OPTION_SETS])
def test_buckets_match_naive_twin(bits, kw, _):
    X, *_ = load_vw(io.BytesIO(DATA), bits=bits, label_convention="regression", constant=True, **kw)
    assert X.shape == (len(CORPUS), 1 << bits)
    for line, got in zip(CORPUS, _rows(X)):
        _same(got, naive_vw.row_buckets(line.encode(), bits, constant=True, **kw))


@pytest.mark.parametrize("bits", [18, 24])
def test_buckets_match_vowpalwabbit(bits):
    pytest.importorskip("vowpalwabbit.pyvw", reason="vowpalwabbit is not installed")
    lines = CORPUS + _random_lines(np.random.default_rng(bits), 100)
    data = ("\n".join(lines) + "\n").encode()
    for kw, options in OPTION_SETS:
        want = vw_audit_buckets(lines, bits, options)
        X, *_ = load_vw(io.BytesIO(data), bits=bits, label_convention="regression", constant=True, **kw)
        assert len(want) == X.shape[0]
        for line, got, ref in zip(lines, _rows(X), want):
            # VW sums float32 values: duplicates that cancel may leave a residue of ~1e-7
            ref = {k: v for k, v in ref.items() if abs(v) > 1e-5}
            got = {k: v for k, v in got.items() if abs(v) > 1e-5}
            assert set(got) == set(ref), (options, line)
            for k in ref:  # VW keeps float32 values and prints them rounded
                assert got[k] == pytest.approx(ref[k], rel=1e-4), (options, line)


# values at the edge of VW's float parser: read as text (hashed with the name), or refused where VW reads them
# as a number (inf, nan, or 0 for a value with no digit, which drops the feature)
EDGE_VALUES = ["in", "-abc", "+e", "ex", "n/a", "e|b", "-|b", "+.", "na", "e5x", "info", "-nan", "-", ".", "e", "-.e-3"]


def test_values_vowpalwabbit_reads_as_numbers_are_refused(tmp_path):
    pytest.importorskip("vowpalwabbit.pyvw", reason="vowpalwabbit is not installed")
    lines = [f"1 |a w x:{v} y" for v in EDGE_VALUES]
    want = vw_audit_buckets(lines, 18, "")
    refused = []
    for line, ref in zip(lines, want):
        path = tmp_path / "edge.vw"
        path.write_text(line + "\n")
        try:
            X, *_ = load_vw(path, label_convention="regression", constant=True)
        except VwFormatError as err:
            assert str(err).startswith(f"{path}:1: ")
            refused.append(line)
            # VW did not hash the value as text: no feature in a bucket of its own besides w, y, the constant
            assert len(ref) < 4, line
            continue
        assert _rows(X)[0] == pytest.approx(ref), line
    assert len(refused) == 6


def test_labels_weights_tags_match_naive_twin():
    _, y, w, tags = load_vw(io.BytesIO(DATA), label_convention="regression")
    for i, line in enumerate(CORPUS):
        label, weight, tag, _ = naive_vw.parse_line(line.encode())
        assert (np.isnan(y[i]) and label is None) or y[i] == label
        assert w[i] == weight
        assert tags[i] == (tag or b"").decode()
    assert tags[1] == "tag1" and tags[2] == "tag2" and w[1] == 2.0 and w[2] == 0.5


def _random_lines(rng, n):
    names = ["a", "b", "x1", "42", "007", "caf\u00e9", "k=v", "", "zz"]
    out = []
    for _ in range(n):
        parts = [rng.choice(["1", "-1", "0.5", "1 2", "-1 0.25 'tg", "3 1 0.1"])]
        for _ in range(rng.integers(0, 4)):
            ns = rng.choice(["", "u", "user", "a", "ad:0.5", "b", "u:2"])
            feats = []
            for _ in range(rng.integers(0, 5)):
                nm = rng.choice(names)
                kind = rng.integers(0, 4)
                if kind == 0 and nm:
                    feats.append(nm)
                elif kind == 1:
                    feats.append(f"{nm}:{rng.normal():.3g}")
                elif kind == 2 and nm:
                    feats.append(f"{nm}:{rng.choice(['red', 'x', 'q1'])}")
                else:
                    feats.append(f"{nm}:{rng.integers(-3, 4)}")
            parts.append("|" + ns + " " + " ".join(feats))
        out.append(rng.choice([" ", ""]).join(parts))
    return out


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"quadratic": ["::"]},
        {"quadratic": ["ua", "u:"], "cubic": ["uab", "::a"]},
        {"quadratic": ["ab"], "ignore": ["b"]},
    ],
)
def test_random_lines_match_naive_twin(kw):
    lines = _random_lines(np.random.default_rng(7), 300)
    X, *_ = load_vw(
        io.BytesIO(("\n".join(lines) + "\n").encode()), bits=20, label_convention="regression", constant=True, **kw
    )
    for line, got in zip(lines, _rows(X)):
        _same(got, naive_vw.row_buckets(line.encode(), 20, constant=True, **kw))
    # canonical CSR (sorted indices, no duplicates), as the estimators expect, checked by scipy itself
    fresh = sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)
    assert fresh.has_canonical_format and (X.data != 0).all()


def test_chunks_blocks_and_compression_do_not_change_rows(tmp_path):
    whole = load_vw(io.BytesIO(DATA), label_convention="regression", quadratic=["ua"])
    for chunk_size, block in [(1, 16), (3, 40), (7, 1 << 20)]:
        parts = list(
            iter_vw(
                io.BytesIO(DATA),
                chunk_size=chunk_size,
                block_size=block,
                label_convention="regression",
                quadratic=["ua"],
            )
        )
        assert [p[0].shape[0] for p in parts[:-1]] == [chunk_size] * (len(parts) - 1)
        X = sp.vstack([p[0] for p in parts], format="csr")
        assert (whole[0] != X).nnz == 0
        assert np.array_equal(np.concatenate([p[1] for p in parts]), whole[1], equal_nan=True)
    for suffix, opener in [(".vw.gz", gzip.open), (".vw.bz2", bz2.open), (".vw.xz", lzma.open)]:
        path = tmp_path / ("f" + suffix)
        with opener(path, "wb") as f:
            f.write(DATA.replace(b"\n", b"\r\n"))  # CRLF too
        X, _, _, tags = load_vw(path, label_convention="regression", quadratic=["ua"])
        assert (whole[0] != X).nnz == 0 and tags == whole[3]


@pytest.mark.parametrize("chunk_size", [2, 5, 7, 2**62])
def test_huge_chunk_size_allocates_only_the_rows_read(monkeypatch, chunk_size):
    """A chunk's arrays start small and grow up to chunk_size (2**62 rows used to fail inside numpy,
    e.g. 'Maximum allowed dimension exceeded'); rows, labels, weights and tags are the same either way."""
    import streamlearn.datasets._vw as vw_mod

    whole = load_vw(io.BytesIO(DATA), label_convention="regression", quadratic=["ua"])
    monkeypatch.setattr(vw_mod, "_FIRST_ROWS", 3)  # growth inside a chunk, on a small file
    parts = list(iter_vw(io.BytesIO(DATA), chunk_size=chunk_size, label_convention="regression", quadratic=["ua"]))
    n = whole[0].shape[0]
    assert [p[0].shape[0] for p in parts] == [min(chunk_size, n - k * chunk_size) for k in range(len(parts))]
    assert (sp.vstack([p[0] for p in parts], format="csr") != whole[0]).nnz == 0
    assert np.array_equal(np.concatenate([p[1] for p in parts]), whole[1], equal_nan=True)
    assert np.array_equal(np.concatenate([p[2] for p in parts]), whole[2])
    assert [t for p in parts for t in (p[3] or [""] * p[0].shape[0])] == (whole[3] or [""] * n)


def test_blank_lines_bom_and_missing_final_newline():
    X, y, *_ = load_vw(io.BytesIO(b"\xef\xbb\xbf1 |a x\n\n   \n\t\n-1 |a y"), bits=10)
    assert y.tolist() == [1.0, -1.0]
    ref, *_ = load_vw(io.BytesIO(b"1 |a x\n-1 |a y\n"), bits=10)
    assert (ref != X).nnz == 0


def test_wide_row_grows_scratch():
    line = "1 |a " + " ".join(f"f{i}" for i in range(400)) + " |b " + " ".join(f"g{i}" for i in range(50))
    X, *_ = load_vw(io.BytesIO((line + "\n-1 |a x\n").encode()), bits=24, quadratic=["aa", "ab"])
    _same(_rows(X)[0], naive_vw.row_buckets(line.encode(), 24, quadratic=["aa", "ab"]))
    assert X[0].nnz > 400 * 401 // 2


@pytest.mark.parametrize(
    "line,convention,message",
    [
        ("abc |a x", "pm1", "bad label 'abc'"),
        ("0 |a x", "pm1", "expected -1 or 1"),
        ("-1 |a x", "01", "expected 0 or 1"),
        ("1.5 |a x", "multiclass", "class number"),
        ("0 |a x", "multiclass", "class number"),
        ("2.0 |a x", "multiclass", r"bad label '2\.0': expected a class number 1\.\.k, written as an integer"),
        ("2e0 |a x", "multiclass", "written as an integer"),
        ("2 1 0.5 |a x", "multiclass", r"\('0\.5'\): expected label \[importance\] \(a class has no initial"),
        ("1 abc |a x", "pm1", "bad importance weight 'abc'"),
        ("1 -2 |a x", "pm1", "bad importance weight '-2'"),
        ("1 inf |a x", "pm1", "bad importance weight"),
        ("1 2 x 'tag |a x", "pm1", "bad initial prediction 'x'"),
        ("1 2 3 4 'tag |a x", "pm1", "too many fields"),
        ("1 |a x: y", "pm1", "':' without a value"),
        ("1 |a x:", "pm1", "':' without a value"),
        ("1 |a x:1e", "pm1", "bad feature value"),
        ("1 |a x:1.5.5", "pm1", "bad feature value"),
        ("1 |a x:nan", "pm1", "non-finite"),
        ("1 |a x:-inf", "pm1", "non-finite"),
        ("1 |a x:+NaN", "pm1", "non-finite"),
        ("1 |a x:-Infinity", "pm1", "non-finite"),
        ("1 |a x:info y", "pm1", r"non-finite value in 'x:info'.*reads a value starting with inf or nan as one"),
        ("1 |a x:NaNo", "pm1", "non-finite"),
        ("1 |a x:e", "pm1", r"value in 'x:e' has no digit but Vowpal Wabbit reads it as the number 0"),
        ("1 |a x:-\ty", "pm1", "has no digit"),
        ("1 |a x:.E-3 y", "pm1", "has no digit"),
        ("1 |a:abc x", "pm1", "bad namespace weight"),
        ("1 |a: x", "pm1", "bad namespace weight"),
        ("1 |:2 x", "pm1", "stray '|'"),
        ("1 |a x |:", "pm1", "stray '|'"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, line, convention, message):
    path = tmp_path / "bad.vw"
    path.write_text(f"1 |a ok\n\n{line}\n-1 |a fine\n")
    with pytest.raises(VwFormatError, match=message) as info:
        load_vw(path, label_convention=convention)
    text = str(info.value)
    assert text.startswith(f"{path}:3: ") and "\n" not in text
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("chunk_size", [1, 100])
@pytest.mark.parametrize(
    "line, kw",
    [
        ("-1 |a x:1e200 |b z:1e200", {"quadratic": ["ab"]}),
        ("-1 |a x:1e110 |b z:1e110 |c w:1e110", {"cubic": ["abc"]}),
        ("-1 |a x:1e200 y:1e-10 |b z:1e200", {"quadratic": [":a"]}),
        ("-1 |a x:1e308 x:1e308", {}),  # one bucket
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_crossed_features_that_overflow_name_file_and_line(tmp_path, line, kw, chunk_size, dtype):
    """1e200 * 1e200 is beyond the float range: the line is named, not an inf handed over in X; before a bad
    line later in the same chunk."""
    path = tmp_path / "big.vw"
    path.write_text(f"1 |a x:2 |b z:3 |c w:4\n\n{line}\nabc |a x\n")
    with pytest.raises(VwFormatError) as info:
        list(iter_vw(path, chunk_size=chunk_size, dtype=dtype, **kw))
    # with float32, the first value of the line too large for it may be a feature before its crosses
    float32 = r"|has the value \S+ too large for float32 \(above 3\.4e38 in size\); .*" if dtype == np.float32 else ""
    assert re.match(
        re.escape(f"{path}:3: ") + r"hashed column \d+ (is inf: the product of crossed features \(quadratic/cubic\) "
        r"or the sum of the values hashed to one bucket overflows; expected feature values small enough to "
        r"multiply and add \(scale them down\)\.$" + float32 + ")",
        str(info.value),
    )


@pytest.mark.parametrize("chunk_size", [1, 100])
@pytest.mark.parametrize(
    "line, kw, value",
    [
        ("-1 |a x:1e39", {}, "1e+39"),
        ("-1 |a x:-3.5e38", {}, "-3.5e+38"),  # rounds to -inf in float32
        ("-1 |a x:1e20 |b z:1e20", {"quadratic": ["ab"]}, "1e+40"),
        ("-1 |a x:2e38 x:2e38", {}, "4e+38"),  # one bucket
    ],
)
def test_float32_value_too_large_names_file_and_line(tmp_path, line, kw, value, chunk_size):
    """A finite value (or cross) beyond float32's range is named with its line, not an inf handed over in X;
    before a bad line later in the same chunk; float64 reads it."""
    path = tmp_path / "big.vw"
    path.write_text(f"1 |a x:2 |b z:3\n\n{line}\nabc |a x\n")
    with pytest.raises(VwFormatError) as info:
        list(iter_vw(path, chunk_size=chunk_size, dtype=np.float32, **kw))
    assert re.match(
        re.escape(f"{path}:3: ") + r"hashed column \d+ has the value " + re.escape(value) + r" too large for "
        r"float32 \(above 3\.4e38 in size\); expected values that fit, or read with dtype=float64 \(the default\)\.$",
        str(info.value),
    )
    path.write_text(f"1 |a x:2 |b z:3\n\n{line}\n")
    X, *_ = load_vw(path, **kw)
    assert X.max() == float(value) or X.min() == float(value)


def test_float32_largest_values_fit_and_other_dtypes_are_refused():
    data = b"1 |a x:3.4028234e38 y:-3.4028235e38 |b z:1e-50\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, *_ = load_vw(io.BytesIO(data), dtype=np.float32)
    assert X.dtype == np.float32 and np.isfinite(X.data).all()
    for dtype in (np.float16, np.int64):  # float16 overflowed silently at 65504; int64 truncated the values
        with pytest.raises(ValueError, match=r"^dtype must be float32 or float64, got (float16|int64)\.$"):
            iter_vw(io.BytesIO(data), dtype=dtype)


def test_label_conventions_and_missing_labels():
    _, y, _, _ = load_vw(io.BytesIO(b"1 |a x\n0 |a y\n"), label_convention="01")
    assert y.tolist() == [1.0, 0.0]
    _, y, _, _ = load_vw(io.BytesIO(b"3 |a x\n1 2 |a y\n"), label_convention="multiclass", n_classes=3)
    assert y.tolist() == [3.0, 1.0]
    with pytest.raises(VwFormatError, match="class number"):
        load_vw(io.BytesIO(b"4 |a x\n"), label_convention="multiclass", n_classes=3)
    _, y, _, tags = load_vw(io.BytesIO(b"|a x\n'only |a y\n"))
    assert np.isnan(y).all() and tags == ["", "only"]
    with pytest.raises(VwFormatError, match=r":2: no label"):
        load_vw(io.BytesIO(b"1 |a x\n|a y\n"), require_label=True)
    # the error quotes the line (it quoted '' for a line that starts with '|'), to its end or 60 bytes
    with pytest.raises(VwFormatError, match=r":2: no label \(training needs one; the line starts '\|a y \|b z'\)$"):
        load_vw(io.BytesIO(b"1 |a x\n|a y |b z\r\n-1 |a w\n"), require_label=True)
    with pytest.raises(VwFormatError, match=r"the line starts '\|a " + "w" * 54 + r"\.\.\.'\)$"):
        load_vw(io.BytesIO(b"1 |a x\n|a " + b"w" * 100), require_label=True)


def test_multiclass_labels_match_vowpalwabbit_or_are_refused():
    """A class is read as VW's --oaa reads it (label, weight, tag) or the line is refused; '2.0', '2e0' and a
    third field (an initial prediction) were read as class 2 where VW stops at the line."""
    pyvw = pytest.importorskip("vowpalwabbit.pyvw", reason="vowpalwabbit is not installed")
    ws = pyvw.Workspace("--quiet --oaa 5")
    heads = ["3", "1 2", "5 0.5 'tg", "2.0", "3.5", "0", "6", "-1", "3 tag", "03", "+3", "2e0", "1 2 3", "2 1e-3"]
    refused = []
    for head in heads:
        line = f"{head} |a x"
        try:
            ex = ws.example(line)
            vw = (ex.get_multiclass_label(), ex.get_multiclass_weight(), ex.get_tag())
            ws.finish_example(ex)
        except RuntimeError:  # VW: malformed example
            vw = None
        try:
            _, y, w, tags = load_vw(io.BytesIO(line.encode()), label_convention="multiclass", n_classes=5)
        except VwFormatError:
            refused.append(head)
            continue
        assert vw is not None, line
        assert (y[0], (tags or [""])[0]) == (vw[0], vw[2]) and w[0] == pytest.approx(vw[1]), line
    assert refused == ["2.0", "3.5", "0", "6", "-1", "3 tag", "2e0", "1 2 3"]


def test_zstd_and_zip_files_are_named_as_such(tmp_path):
    """The readers decompress gzip, bz2 and xz: zstd or zip bytes were read as text (a garbled bad label)."""
    from streamlearn.datasets import iter_svmlight

    for name, head, what in (
        ("z.vw.zst", b"\x28\xb5\x2f\xfd", "zstd-compressed"),
        ("z.zip", b"PK\x03\x04", "a zip archive"),
    ):
        path = tmp_path / name
        path.write_bytes(head + b"\x00\x01 |a x\n")
        with pytest.raises(VwFormatError, match=f"{name}:1: the file is {what}; expected text"):
            load_vw(path)
        with pytest.raises(ValueError, match=f"{name}, line 1: the file is {what}; expected text"):
            list(iter_svmlight(path))


def test_bad_arguments():
    with pytest.raises(ValueError, match="bits"):
        iter_vw(io.BytesIO(b""), bits=40)
    with pytest.raises(ValueError, match="-q 'abc'"):
        iter_vw(io.BytesIO(b""), quadratic=["abc"])
    with pytest.raises(ValueError, match="label_convention"):
        iter_vw(io.BytesIO(b""), label_convention="binary")
    with pytest.raises(ValueError, match="ignore and keep"):
        iter_vw(io.BytesIO(b""), ignore=["a"], keep=["b"])


def test_learner_on_interactions_equals_learner_on_written_crosses():
    from streamlearn.datasets import make_click_log
    from streamlearn.datasets._clicklog import vw_lines
    from streamlearn.linear_model import FTRLProximalClassifier

    log = make_click_log(600, seed=5)
    lines = vw_lines(log)
    crossed = []
    for line in lines:  # the same crosses written out as features of a third namespace
        _, u, a = line.split("|")
        uf, af = u.split()[1:], a.split()[1:]
        names = [(f.split(":")[0], float(f.split(":")[1]) if ":" in f else 1.0) for f in uf]
        anames = [(f.split(":")[0], float(f.split(":")[1]) if ":" in f else 1.0) for f in af]
        x = " ".join(f"{n}*{m}:{v * w!r}" for n, v in names for m, w in anames)
        crossed.append(f"{line} |x {x}")
    Xq, y, _, _ = load_vw(io.BytesIO("\n".join(lines).encode()), bits=26, quadratic=["ua"])
    Xc, *_ = load_vw(io.BytesIO("\n".join(crossed).encode()), bits=26)
    assert (Xq.getnnz(axis=1) == Xc.getnnz(axis=1)).all()  # no collision in either
    preds = []
    for X in (Xq, Xc):
        clf = FTRLProximalClassifier()
        for s in range(0, 500, 100):
            clf.partial_fit(X[s : s + 100], y[s : s + 100], classes=[-1, 1])
        preds.append(clf.decision_function(X[500:]))
    np.testing.assert_allclose(preds[0], preds[1], rtol=1e-9, atol=1e-12)
    assert np.std(preds[0]) > 0


@pytest.mark.parametrize("bad", [True, 0, -1, 2.0, "10"])
def test_chunk_size_must_be_a_positive_integer_not_a_bool(bad):
    """True is an int to Python but not a chunk size (iter_svmlight refuses it too)."""
    with pytest.raises(ValueError, match=r"^chunk_size must be an integer >= 1; got "):
        iter_vw(io.BytesIO(b"1 |a x\n"), chunk_size=bad)


@pytest.mark.parametrize("block_size", [16, 4096])
def test_a_carriage_return_in_a_first_line_longer_than_the_block_is_no_mac_file(tmp_path, block_size):
    """A first line holding a '\r' and longer than a small block: the check for classic Mac OS line ends saw a
    full block without a line feed and refused the file, whose line feed came after the block."""
    path = tmp_path / "cr.vw"
    path.write_bytes(b"1 |a x:2\r y" + b" " * 5000 + b"\n-1 |a x\n")
    assert load_vw(path, block_size=block_size)[1].tolist() == [1.0, -1.0]
    bare = tmp_path / "mac.vw"  # and a file with no line feed is still refused, from a small block on
    bare.write_bytes(b"1 |a x\r" * 20)
    with pytest.raises(VwFormatError, match="carriage return alone"):
        load_vw(bare, block_size=block_size)


@pytest.mark.parametrize("block_size", [4096, 1 << 22])
def test_lines_ended_by_a_carriage_return_alone_are_an_error(tmp_path, block_size):
    """Classic Mac OS line ends ('\\r' alone): the whole file was one example, the later labels read as feature
    names ("1 |a x\\r-1 |a y\\r" trained as 1 example, silently)."""
    path = tmp_path / "mac.vw"
    path.write_bytes(b"".join(b"%d |a x%d\r" % (1 - 2 * (i % 2), i) for i in range(3000)))
    with pytest.raises(VwFormatError) as err:
        load_vw(path, block_size=block_size)
    assert str(err.value) == (
        f"{path}:1: the lines end with a carriage return alone ('\\r', classic Mac OS) and the file has no line "
        "feed; expected '\\n' or '\\r\\n' line ends: convert it, e.g. with tr '\\r' '\\n'"
    )
    one = tmp_path / "one.vw"  # one line ended by '\r': no line feed needed
    one.write_bytes(b"1 |a x\r")
    assert load_vw(one)[1].tolist() == [1.0]


def test_truncated_compressed_file_names_the_line_where_its_text_stops(tmp_path):
    """A .gz cut short is read up to the cut: the error names the line after the last whole one that
    decompresses (a read that meets the damage hands out what decompressed before it first)."""
    line = b"1 |a x:0.5 y:2 |b z\n"
    p = tmp_path / "cut.vw.gz"
    comp = gzip.compress(line * 400_000)
    p.write_bytes(comp[: int(len(comp) * 0.8)])
    good = decompressible("gzip", p.read_bytes()).count(b"\n")
    with pytest.raises(
        VwFormatError, match=r"cannot decompress the gzip data \(EOFError: .*\); the file is corrupt or truncated"
    ) as err:
        load_vw(p)
    assert err.value.line == good + 1, (err.value.line, good)
