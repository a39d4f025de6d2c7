"""Telling the format of a stream or a file by its first lines."""

import pytest

from streamlearn.datasets._pipes import sniff_format


@pytest.mark.parametrize(
    "head, fmt",
    [
        (b"1 1:1 2:0.5\n-1 3:1\n", "libsvm"),
        (b"1 1:1 2:0.5 # from run a|b\n", "libsvm"),  # a "|" in a LIBSVM comment is not a VW namespace
        (b"# a|b\n-1 1:1\n", "libsvm"),
        (b"1 |a x y:2\n", "vw"),
        (b"1 'tag|a x\n", "vw"),
        (b"1 1:1 |a x\n", "vw"),
        (b"1\n-1 |a x\n", "vw"),
        (b"y,a\n1,2\n", "csv"),
        (b"1\n-1\n", None),
    ],
)
def test_first_lines_tell_the_format(head, fmt):
    assert sniff_format(head) == fmt


def test_a_zstd_head_tells_the_format_of_its_text_even_cut_short():
    """zstd bytes read ahead from a pipe are decompressed to tell the format (the CSV reader decompresses zstd); a
    head cut short gives the blocks that are whole, an empty text rather than pyarrow's "Truncated compressed
    stream" when none is, and damaged bytes give what comes before the damage."""
    pa = pytest.importorskip("pyarrow")
    from streamlearn.datasets._pipes import compression, decompressed_head

    text = b"y,a,b\n" + b"".join(b"%d,%d.5,w%d\n" % (i % 2, i, i % 97) for i in range(40000))
    data = pa.compress(text, codec="zstd", asbytes=True)
    assert compression(data) == "zstd"
    assert decompressed_head(data) == text[: 1 << 20]
    assert sniff_format(decompressed_head(data)) == "csv"
    for cut in (4, 100, len(data) // 2):
        head = decompressed_head(data[:cut])
        assert text.startswith(head) and len(head) < len(text)
    assert decompressed_head(data[:100]) == b""
    damaged = data[:20] + bytes(40) + data[60:]
    assert text.startswith(decompressed_head(damaged))
