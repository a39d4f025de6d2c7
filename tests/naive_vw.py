"""Plain-Python twin of the VW text kernel (streamlearn._kernels.vw_text): one line -> {bucket: value}."""

import math

from tests.naive_hashing import combine2, combine3, hash_string

CONSTANT = 11650396


def _is_number(s):
    try:
        float(s)
    except ValueError:
        return False
    return s.strip().lower() not in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity", "+infinity")


def parse_line(line: bytes):
    """(label or None, weight, tag or None, [(namespace byte, index, value), ...]) of one VW line."""
    line = line.rstrip(b"\r")
    if line.startswith(b"\xef\xbb\xbf"):
        line = line[3:]
    bar = line.find(b"|")
    head = line if bar < 0 else line[:bar]
    if b"\t" in head:
        head = head[head.index(b"\t") + 1 :]
    words = [w for w in head.split(b" ") if w]
    tag = None
    if words and (head.endswith(words[-1]) or words[-1].startswith(b"'")):
        tag = words.pop()
        if tag.startswith(b"'"):
            tag = tag[1:]
    label = float(words[0]) if words else None
    weight = float(words[1]) if len(words) > 1 else 1.0
    feats = []
    if bar < 0:
        return label, weight, tag, feats
    rest = line[bar:]
    i, n = 0, len(rest)
    while i < n and rest[i : i + 1] == b"|":
        i += 1
        if i >= n or rest[i : i + 1] in (b" ", b"\t", b"\r", b"|"):
            ns, ch, nsw = 32, 0, 1.0
        else:
            j = i
            while j < n and rest[j : j + 1] not in (b" ", b"\t", b"\r", b"|", b":"):
                j += 1
            name = rest[i:j]
            ns, ch, nsw = name[0], hash_string(name, 0), 1.0
            if rest[j : j + 1] == b":":
                k = j + 1
                while k < n and rest[k : k + 1] not in (b" ", b"\t", b"\r", b"|"):
                    k += 1
                nsw = float(rest[j + 1 : k])
                j = k
            i = j
        anon = 0
        while i < n and rest[i : i + 1] in (b" ", b"\t", b"\r"):
            i += 1
            if i >= n or rest[i : i + 1] in (b" ", b"\t", b"\r", b"|"):
                continue
            j = i
            while j < n and rest[j : j + 1] not in (b" ", b"\t", b"\r", b"|", b":"):
                j += 1
            name = rest[i:j]
            if rest[j : j + 1] != b":":
                idx, v = hash_string(name, ch), nsw
                i = j
            else:
                k = j + 1
                while k < n and rest[k : k + 1] not in (b" ", b"\t", b"\r", b"|"):
                    k += 1
                val = rest[j + 1 : k]
                if _is_number(val.decode("latin-1")):
                    v = nsw * float(val)
                    if name:
                        idx = hash_string(name, ch)
                    else:
                        idx = ch + anon
                        anon += 1
                    i = k
                else:  # name:string; the string runs to the next whitespace (a '|' in it is kept, as in VW)
                    k = j + 1
                    while k < n and rest[k : k + 1] not in (b" ", b"\t", b"\r"):
                        k += 1
                    idx, v = hash_string(rest[j + 1 : k], hash_string(name, ch)), 1.0
                    i = k
            if v != 0.0:
                feats.append((ns, idx, v))
    return label, weight, tag, feats


def canonical(terms):
    """VW's interaction list: sort a term with a repeated namespace, sort the list, drop repeated multisets."""
    fixed = [tuple(sorted(t)) if len(set(t)) < len(t) else tuple(t) for t in terms]
    fixed.sort(key=lambda t: (len(t), t))
    seen, out = set(), []
    for t in fixed:
        if tuple(sorted(t)) not in seen:
            seen.add(tuple(sorted(t)))
            out.append(t)
    return out


def row_buckets(line: bytes, bits, quadratic=(), cubic=(), ignore=(), keep=(), constant=False):
    """{bucket: summed value} of one line, as VW hashes it with -b bits."""
    _, _, _, feats = parse_line(line)
    ig = {s.encode()[0] for s in ignore}
    kp = {s.encode()[0] for s in keep}
    feats = [f for f in feats if f[0] not in ig and (not kp or f[0] in kp)]
    if constant:
        feats.append((128, CONSTANT, 1.0))
    mask = (1 << bits) - 1
    by_ns = {}
    for ns, idx, v in feats:
        by_ns.setdefault(ns, []).append((idx, v))
    present = sorted(ns for ns in by_ns if 32 <= ns <= 126)  # VW's wildcard: printable ASCII namespaces
    terms = []
    for spec in list(quadratic) + list(cubic):
        b = spec.encode()
        options = [present if c == ord(":") else [c] for c in b]
        if len(b) == 2:
            terms += [(x, y) for x in options[0] for y in options[1]]
        else:
            terms += [(x, y, z) for x in options[0] for y in options[1] for z in options[2]]
    out = {}

    def add(i, v):
        out[i & mask] = out.get(i & mask, 0.0) + v

    for _, idx, v in feats:
        add(idx, v)
    for t in canonical(terms):
        lists = [by_ns.get(c, []) for c in t]
        if len(t) == 2:
            for i, (ia, va) in enumerate(lists[0]):
                for ib, vb in lists[1][(i if t[0] == t[1] else 0) :]:
                    add(combine2(ia, ib), va * vb)
        else:
            for i, (ia, va) in enumerate(lists[0]):
                start_j = i if t[0] == t[1] else 0
                for j in range(start_j, len(lists[1])):
                    ib, vb = lists[1][j]
                    for ic, vc in lists[2][(j if t[1] == t[2] else 0) :]:
                        add(combine3(ia, ib, ic), va * vb * vc)
    return {k: v for k, v in out.items() if v != 0.0 and math.isfinite(v)}
