"""Pure-Python twin of streamlearn._kernels.svmlight plus the whole-file rules of load_svmlight.

Line splitting, comment stripping and tokenising follow scikit-learn's ``_load_svmlight_file`` (bytes
``split``); numbers use Python's ``float()``/``int()`` behind a regex of the accepted syntax. Errors are
returned, not raised, as ``("error", line, kind)`` with ``kind`` one of ``NAIVE_ERROR_WORDS``' keys.
"""

import math
import re

import numpy as np

__all__ = ["NAIVE_ERROR_WORDS", "naive_load_svmlight"]

_FLOAT = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NONFINITE = re.compile(rb"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_INDEX_LIMIT = 1 << 62

#: error kind -> words the reader's message must contain
NAIVE_ERROR_WORDS = {
    "label": "is not a number",
    "multilabel": "multilabel line",
    "feature": "malformed feature",
    "value": "the value after ':' is not a number",
    "nonfinite": "non-finite value",
    "negative": "negative feature index",
    "zero": "feature index 0",
    "duplicate": "duplicate feature index",
    "unsorted": "unsorted feature index",
    "beyond": "beyond n_features",
    "big": "too large",
    "qid": "malformed query id",
    "empty": "no data lines",
}


def _number(tok):
    """(value, kind-or-None) for a label or value token."""
    if _NONFINITE.fullmatch(tok):
        return None, "nonfinite"
    if not _FLOAT.fullmatch(tok):
        return None, "bad"
    v = float(tok)
    if not math.isfinite(v):
        return None, "nonfinite"
    return v, None


def naive_load_svmlight(raw, zero_based="auto", n_features=None):
    """Return ``(data, indices, indptr, y, n_features)`` or ``("error", line, kind)`` for bytes ``raw``."""
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    check_zero = zero_based is False
    data, indices, indptr, y = [], [], [0], []
    edge_line = 0
    for lineno, line in enumerate(lines, 1):
        toks = line.split(b"#", 1)[0].split()
        if not toks:
            continue
        v, bad = _number(toks[0])
        if bad == "bad":
            numbers = b"," in toks[0] and all(_number(t)[1] != "bad" for t in toks[0].split(b","))
            return "error", lineno, ("multilabel" if numbers else "label")
        if bad:
            return "error", lineno, bad
        y.append(v)
        feats = toks[1:]
        if feats and feats[0].startswith(b"qid:"):
            if not re.fullmatch(rb"[+-]?[0-9]+", feats[0][4:]):
                return "error", lineno, "qid"
            feats = feats[1:]
        prev = -1
        for t in feats:
            if re.match(rb"-[0-9]", t):
                return "error", lineno, "negative"
            m = re.fullmatch(rb"\+?([0-9]+):(.*)", t, re.DOTALL)
            if not m:
                return "error", lineno, "feature"
            idx = int(m.group(1))
            if idx > _INDEX_LIMIT:
                return "error", lineno, "big"
            val, bad = _number(m.group(2))
            if bad == "bad":
                return "error", lineno, "value"
            if bad:
                return "error", lineno, bad
            if check_zero and idx == 0:
                return "error", lineno, "zero"
            if idx <= prev:
                return "error", lineno, ("duplicate" if idx == prev else "unsorted")
            if n_features is not None:
                limit = n_features if zero_based == "auto" else n_features - (0 if zero_based is False else 1)
                if idx > limit:
                    return "error", lineno, "beyond"
                if zero_based == "auto" and idx == n_features and not edge_line:
                    edge_line = lineno
            data.append(val)
            indices.append(idx)
            prev = idx
        indptr.append(len(data))
    if not y:
        return "error", len(lines), "empty"
    indices = np.array(indices, dtype=np.int64)
    one_based = zero_based is False or (zero_based == "auto" and len(indices) > 0 and indices.min() > 0)
    if one_based:
        indices -= 1
    elif zero_based == "auto" and edge_line:
        return "error", edge_line, "beyond"
    if n_features is None:
        n_features = int(indices.max()) + 1 if len(indices) else 1
    return (
        np.array(data, dtype=np.float64),
        indices,
        np.array(indptr, dtype=np.int64),
        np.array(y, dtype=np.float64),
        n_features,
    )
