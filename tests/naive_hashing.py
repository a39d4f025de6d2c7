"""Plain-Python twins of streamlearn._kernels.hashing (VW's feature hashing)."""

M64 = (1 << 64) - 1
FNV = 16777619


def murmur3_32(data: bytes, seed: int) -> int:
    c1, c2, m32 = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed & m32

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & m32

    n = len(data)
    for i in range(0, n - n % 4, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = rotl((k * c1) & m32, 15) * c2 & m32
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & m32
    tail = data[n - n % 4 :]
    k = 0
    for j, b in enumerate(tail):
        k |= b << (8 * j)
    if tail:
        k = rotl((k * c1) & m32, 15) * c2 & m32
        h ^= k
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & m32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & m32
    return h ^ (h >> 16)


def hash_string(s: bytes, seed: int) -> int:
    s = s.strip(bytes(range(33)))
    if all(48 <= c <= 57 for c in s):
        return (int(s or b"0") + seed) & M64
    return murmur3_32(s, seed)


def combine2(i, j):
    return ((i * FNV) & M64) ^ j


def combine3(i, j, k):
    return ((combine2(i, j) * FNV) & M64) ^ k
