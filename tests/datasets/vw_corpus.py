"""A VW text corpus covering the syntax cases, and VW's own buckets for it (through its audit output)."""

import subprocess
import sys

CORPUS = [
    "1 |u age:31 country=FR |a id=991",
    "-1 2 'tag1 |user age:20.5 country=DE city |ad id=7 pos:3",
    "1 0.5 tag2|u x y z |a w",
    "-1 |u:0.5 age:30 q |a:2 id=3 r:1.5",
    "1 |u 123 00123 456:2 |a 7",
    "-1 | plain default ns |a x",
    "1 |u :3 :4 z |a :1",
    "-1 |u x:abc color:red |a y:-0.25",
    "1 |u a b c |u d |a e",
    "-1 1 0.3 'init |u k:1e2 m:.5 |a n:+2",
    "1 |u caf\u00e9=1 \u65e5\u672c |a \u00fc",
    "1\t|u x |a y",
    "-1 |u x:0 y |a z",
    "1 |u  x   y  |a   z",
    "-1 |ab x |ac y |a z",
    "1 |u x|a y",
    "1 |u x ||a y",
    "-1 'only |u x |a y",
    "1 |UPPER X |a y",
    "1 |u x |a y\r",
    "-1 |u 99999999999 0 |a 4294967296",
    "1 |u x:1e-3 y:-7 |a x:3.25e1",
    "-1 |b only_b |c only_c",
    "1 |u tab\tsep\tfeat |a\tq",
    "-1 |\u00e9t\u00e9 x |a y |\u00fc z",  # namespaces named by a non-ASCII byte: not in VW's ':' wildcard
    "1 |u\x0b a\x0b b\x01 |a x:c\x0c",  # control bytes trimmed from both ends of a name before hashing
]

# option sets for the parity test: (streamlearn keyword arguments, VW command-line options)
OPTION_SETS = [
    ({}, ""),
    ({"quadratic": ["ua"]}, "-q ua"),
    ({"quadratic": ["ua", "uu"], "cubic": ["uaa"]}, "-q ua -q uu --cubic uaa"),
    ({"quadratic": ["au", "ua"], "cubic": ["aua", "uau"]}, "-q au -q ua --cubic aua --cubic uau"),
    ({"quadratic": ["::"]}, "-q ::"),
    ({"quadratic": ["u:"], "cubic": [":ua"]}, "-q u: --cubic :ua"),
    ({"quadratic": ["ua"], "ignore": ["a"]}, "-q ua --ignore a"),
    ({"quadratic": ["ub"], "keep": ["u", "b"]}, "-q ub --keep u --keep b"),
]

_SCRIPT = r"""
import sys
from vowpalwabbit import pyvw
ws = pyvw.Workspace("--quiet --audit -b %d %s")
for line in sys.stdin.buffer.read().decode("utf-8").split("\n"):
    if not line.strip():
        continue
    ex = ws.example(line)
    ws.predict(ex)
    ws.finish_example(ex)
    sys.stdout.write("@@END\n")
    sys.stdout.flush()
"""


def vw_audit_buckets(lines, bits, options):
    """For each non-blank line, VW's ``{bucket: summed value}`` (constant included), from ``--audit``."""
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT % (bits, options)],
        input="\n".join(lines).encode(),
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "replace")
    rows, cur = [], {}
    for raw in out.split("\n"):
        if raw == "@@END":
            rows.append(cur)
            cur = {}
            continue
        if not raw.startswith("\t"):
            continue
        for item in raw.strip("\t").split("\t"):
            _, bucket, value, _ = item.rsplit(":", 3)
            b = int(bucket)
            cur[b] = cur.get(b, 0.0) + float(value)
    return rows
