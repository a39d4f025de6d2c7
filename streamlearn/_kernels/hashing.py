"""Feature hashing as Vowpal Wabbit computes it (numba, plain arrays in and out).

* ``murmur3_32(buf, start, end, seed)``: 32-bit MurmurHash3 (x86_32 variant, Austin Appleby) of the bytes
  ``buf[start:end]``.
* ``hash_string(buf, start, end, seed)``: VW's string hash. Leading and trailing bytes up to 0x20 (spaces,
  control bytes such as a vertical tab ending a feature name) are dropped; a string made
  only of ASCII digits hashes to its integer value plus ``seed`` (so ``|a 17`` is bucket ``17 + hash(a)``);
  any other string is ``murmur3_32`` of its bytes with ``seed``. All arithmetic is on uint64 and wraps.
* A namespace ``|user`` is hashed with ``hash_string(b"user", 0)``; that value is the seed of the features
  that follow it. The default namespace (``|`` followed by a space) hashes to 0.
* The constant (bias) feature has the fixed index ``CONSTANT_HASH`` (11650396).
* Interactions combine the (unmasked) indices of their members with the FNV prime 16777619:
  ``pair(i, j) = (i * FNV) ^ j`` and ``triple(i, j, k) = (((i * FNV) ^ j) * FNV) ^ k`` (uint64, wrapping).
* The bucket of any of these is ``index & (2**bits - 1)``. Multiplication and xor modulo ``2**64`` make the
  low ``bits`` bits depend only on the low ``bits`` bits of the operands, so masking early or late gives
  the same bucket.
"""

import numpy as np

from ._numba import njit_inline, njit_kernel

CONSTANT_HASH = 11650396  # VW's index of the constant feature (namespace 128)
FNV_PRIME = 16777619  # multiplier of VW's interaction hashing
DEFAULT_NAMESPACE_HASH = 0  # the namespace written as a bare '|'

_M32 = np.uint64(0xFFFFFFFF)
_FNV64 = np.uint64(FNV_PRIME)


@njit_inline
def _rotl32(x, r):
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & _M32


@njit_inline
def _mix_k(k):
    k = (k * np.uint64(0xCC9E2D51)) & _M32
    k = _rotl32(k, 15)
    return (k * np.uint64(0x1B873593)) & _M32


@njit_inline
def murmur3_32(buf, start, end, seed):
    """MurmurHash3 x86_32 of ``buf[start:end]`` (uint8 array) with a 32-bit seed; returns it as a uint64.

    32-bit arithmetic is done in uint64 with explicit masks (numba compiles this to plain integer code).

    >>> import numpy as np
    >>> int(murmur3_32(np.frombuffer(b"hello", np.uint8), 0, 5, 0))
    613153351
    """
    h = np.uint64(seed) & _M32
    n = end - start
    p = start
    for _ in range(n >> 2):
        k = (
            np.uint64(buf[p])
            | (np.uint64(buf[p + 1]) << np.uint64(8))
            | (np.uint64(buf[p + 2]) << np.uint64(16))
            | (np.uint64(buf[p + 3]) << np.uint64(24))
        )
        h ^= _mix_k(k)
        h = _rotl32(h, 13)
        h = (h * np.uint64(5) + np.uint64(0xE6546B64)) & _M32
        p += 4
    tail = n & 3
    if tail > 0:
        k = np.uint64(0)
        if tail == 3:
            k ^= np.uint64(buf[p + 2]) << np.uint64(16)
        if tail >= 2:
            k ^= np.uint64(buf[p + 1]) << np.uint64(8)
        k ^= np.uint64(buf[p])
        h ^= _mix_k(k)
    h ^= np.uint64(n)
    h ^= h >> np.uint64(16)
    h = (h * np.uint64(0x85EBCA6B)) & _M32
    h ^= h >> np.uint64(13)
    h = (h * np.uint64(0xC2B2AE35)) & _M32
    h ^= h >> np.uint64(16)
    return h


@njit_inline
def hash_string(buf, start, end, seed):
    """VW's hash of the name ``buf[start:end]`` with ``seed`` (uint64; mask it to the number of bits).

    >>> import numpy as np
    >>> int(hash_string(np.frombuffer(b"1234", np.uint8), 0, 4, 7))
    1241
    """
    while start < end and buf[start] <= 32:  # VW drops leading and trailing whitespace / control bytes
        start += 1
    while end > start and buf[end - 1] <= 32:
        end -= 1
    s = np.uint64(seed)
    v = np.uint64(0)
    for p in range(start, end):
        c = buf[p]
        if c < 48 or c > 57:
            return murmur3_32(buf, start, end, s)
        v = v * np.uint64(10) + np.uint64(c - 48)
    return v + s


@njit_inline
def combine2(i, j):
    """Index of the pair feature (i, j) as VW's quadratic interactions compute it (uint64, wrapping)."""
    return (np.uint64(i) * _FNV64) ^ np.uint64(j)


@njit_inline
def combine3(i, j, k):
    """Index of the triple feature (i, j, k) as VW's cubic interactions compute it (uint64, wrapping)."""
    return (((np.uint64(i) * _FNV64) ^ np.uint64(j)) * _FNV64) ^ np.uint64(k)


@njit_kernel
def hash_strings(buf, starts, ends, seeds, out):
    """Vectorised :func:`hash_string`: ``out[i] = hash_string(buf, starts[i], ends[i], seeds[i])``."""
    for i in range(starts.shape[0]):
        out[i] = hash_string(buf, starts[i], ends[i], seeds[i])
    return out


@njit_inline
def cross_namespaces(terms, term_lens, starts, ends, g_idx, g_val, umask, o_idx, o_val, n_out, cap):
    """Append a row's interaction features (VW's ``-q``/``--cubic``) at ``o_idx[n_out:]``/``o_val[n_out:]``.

    The row's features are grouped by namespace: namespace ``c`` holds ``g_idx[starts[c]:ends[c]]`` and
    ``g_val[...]`` (an absent namespace has ``starts[c] == ends[c]``). Term ``t`` crosses namespaces
    ``terms[t, 0]``, ``terms[t, 1]`` (and ``terms[t, 2]`` when ``term_lens[t] == 3``) in VW's order; when
    two neighbouring members are the same namespace only the pairs ``i <= j`` are kept. Indices are combined
    with :func:`combine2`/:func:`combine3`, masked with ``umask``; values are the products. Entries are
    written only below ``cap``; the return value counts all of them (so a result above ``cap`` is the
    capacity needed). O(product of the members' sizes) per term.
    """
    for t in range(terms.shape[0]):
        a = terms[t, 0]
        b = terms[t, 1]
        a0 = starts[a]
        a1 = ends[a]
        b0 = starts[b]
        b1 = ends[b]
        if a1 == a0 or b1 == b0:
            continue
        if term_lens[t] == 2:
            for i in range(a0, a1):
                jst = b0 + (i - a0) if a == b else b0
                for j in range(jst, b1):
                    if n_out < cap:
                        o_idx[n_out] = combine2(g_idx[i], g_idx[j]) & umask
                        o_val[n_out] = g_val[i] * g_val[j]
                    n_out += 1
        else:
            cc = terms[t, 2]
            c0 = starts[cc]
            c1 = ends[cc]
            if c1 == c0:
                continue
            for i in range(a0, a1):
                jst = b0 + (i - a0) if a == b else b0
                for j in range(jst, b1):
                    kst = c0 + (j - b0) if b == cc else c0
                    for k in range(kst, c1):
                        if n_out < cap:
                            o_idx[n_out] = combine3(g_idx[i], g_idx[j], g_idx[k]) & umask
                            o_val[n_out] = g_val[i] * g_val[j] * g_val[k]
                        n_out += 1
    return n_out
