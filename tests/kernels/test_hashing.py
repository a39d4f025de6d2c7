import numpy as np
import pytest

from streamlearn._kernels import hashing as K
from tests import naive_hashing as N

WORDS = [
    b"",
    b"a",
    b"ab",
    b"abc",
    b"abcd",
    b"abcde",
    b"country=FR",
    b"123",
    b"0042",
    b" 17",
    b"12a",
    b"99999999999999999999999",
    "caf\u00e9=\u00fc".encode(),
    b"x y",
    b"-3",
    b"1.5",
    b"a\x0b",  # bytes up to 0x20 end a name only at ' ', '\t' or '\r': VW trims the others from both ends
    b"\x01 17 \x0c",
    b"\x00",
]


@pytest.mark.parametrize("seed", [0, 1, 7, 1646279392, 2**32 - 1])
def test_murmur_and_hash_string_match_naive(seed):
    for w in WORDS:
        buf = np.frombuffer(b"##" + w + b"##", dtype=np.uint8)
        assert int(K.murmur3_32(buf, 2, 2 + len(w), seed)) == N.murmur3_32(w, seed), w
        assert int(K.hash_string(buf, 2, 2 + len(w), seed)) == N.hash_string(w, seed), w


def test_murmur_matches_mmh3():
    mmh3 = pytest.importorskip("mmh3")
    rng = np.random.default_rng(0)
    for n in range(40):
        w = rng.integers(0, 256, n, dtype=np.uint8)
        for seed in (0, 12345):
            assert int(K.murmur3_32(w, 0, n, seed)) == mmh3.hash(w.tobytes(), seed, signed=False)


def test_combine_matches_naive():
    rng = np.random.default_rng(1)
    for a, b, c in rng.integers(0, 2**63, (50, 3), dtype=np.uint64):
        assert int(K.combine2(a, b)) == N.combine2(int(a), int(b))
        assert int(K.combine3(a, b, c)) == N.combine3(int(a), int(b), int(c))


def test_hash_rules_match_vowpalwabbit():
    pyvw = pytest.importorskip("vowpalwabbit.pyvw", reason="vowpalwabbit is not installed")
    ws = pyvw.Workspace("--quiet -b 24")
    for ns in [b"u", b"user", b"a", b"123", b"x"]:
        buf = np.frombuffer(ns, np.uint8)
        assert int(K.hash_string(buf, 0, len(ns), 0)) == ws.hash_space(ns.decode())
        seed = ws.hash_space(ns.decode())
        for w in WORDS[1:]:
            if not w.decode().isascii():
                continue
            b = np.frombuffer(w, np.uint8)
            got = int(K.hash_string(b, 0, len(w), seed)) & (2**24 - 1)
            assert got == ws.hash_feature(w.decode(), seed), w


@pytest.mark.parametrize("n", [0, 1, 2, 7, 35, 64])
def test_rank_sort_of_a_rows_keys_matches_numpy_sort(n):
    from streamlearn._kernels.vw_text import _rank_sort

    rng = np.random.default_rng(n)
    buckets = rng.integers(0, 1 << 6, size=n).astype(np.uint64)  # repeated buckets, as collisions give
    keys = (buckets << np.uint64(32)) | np.arange(n, dtype=np.uint64)  # distinct: the entry's position
    out = np.zeros(n + 3, np.uint64)
    assert np.array_equal(_rank_sort(keys, out, n), np.sort(keys))
