"""``csv_quote_scan`` (where a CSV text's quoted values are) against its plain-Python twin and Python's ``csv``."""

import csv
import io

import numpy as np
import pytest

from streamlearn._kernels.tabular import csv_quote_scan, new_quote_state
from tests.naive_tabular import naive_inside_quotes

ALPHABET = [b"a", b"1", b",", b"\t", b'"', b'""', b"\n", b"\r\n", b"\r", b" ", b"\xef\xbb\xbf", b"\xef"]


def _scan(text, delimiter, cuts):
    state = new_quote_state(delimiter)
    raw = np.frombuffer(text, np.uint8)
    inside = np.empty(len(raw), np.uint8)
    ends = False
    for a, b in zip([0, *cuts], [*cuts, len(raw)]):  # in blocks, the state carried from one to the next
        ends = csv_quote_scan(raw[a:b], state, inside[a:b])
    return inside.astype(bool).tolist(), bool(ends)


@pytest.mark.parametrize("delimiter", [",", "\t"])
def test_quote_scan_matches_the_twin_in_any_blocks(delimiter):
    rng = np.random.default_rng(7)
    for _ in range(3000):
        text = b"".join(ALPHABET[k] for k in rng.integers(0, len(ALPHABET), rng.integers(0, 25)))
        cuts = sorted(rng.integers(0, len(text) + 1, rng.integers(0, 4)).tolist())
        assert _scan(text, delimiter, cuts) == naive_inside_quotes(text, delimiter), text


def test_the_records_are_pythons_csv_records():
    """A line feed outside quotes ends a record: the records are those of Python's csv module, literal quotes in
    unquoted values (12" pizza) included."""
    rows = [["a", '12" pizza', "x"], ['say "hi"', "b,c", "multi\nline"], ["", '"', 'ends"']]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    text = out.getvalue().encode()
    inside, ends = _scan(text, ",", [])
    ends_at = [i for i, c in enumerate(text) if c == 10 and not inside[i]]
    records = [text[a + 1 : b] for a, b in zip([-1, *ends_at], ends_at)]
    assert [next(csv.reader([r.decode()])) for r in records] == rows and not ends
    assert _scan(b'a,"never closed\n1,2\n', ",", [])[1] and not _scan(b'a,b"c\n', ",", [])[1]
