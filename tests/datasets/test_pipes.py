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
