"""A file without examples, in each of the three formats: ``predict`` writes no prediction (exit 0, an empty -o
file), while ``train``, ``evaluate`` and ``train --test`` stop with one line naming the file (no model written)."""

import pytest

from streamlearn.cli.main import main
from tests.cli._subprocess import cli, one_line_error

pytest.importorskip("pyarrow")

TRAIN = {
    "libsvm": ("d.svm", "1 1:1 2:2\n-1 1:3\n1 2:1\n-1 1:2 2:1\n", []),
    "vw": ("d.vw", "1 |a x:1 y:2\n-1 |a x:3\n1 |a y:1\n-1 |a x:2 y:1\n", []),
    "csv": ("d.csv", "label,x,y\n1,1,2\n-1,3,0\n1,0,1\n-1,2,1\n", ["--label", "label"]),
}
#: files without examples: empty, blank lines (and LIBSVM comments), a CSV header without rows
EMPTY = {
    "libsvm": {"e.svm": "", "blank.svm": "\n  \n", "comments.svm": "# no data\n\n# here\n"},
    "vw": {"e.vw": "", "blank.vw": "\n  \n\r\n"},
    "csv": {"e.csv": "", "blank.csv": "\n\n", "header.csv": "label,x,y\n"},
}
CASES = [(fmt, name) for fmt in EMPTY for name in EMPTY[fmt]]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("empty")
    out = {}
    for fmt, (name, text, opts) in TRAIN.items():
        (d / name).write_text(text)
        out[fmt] = (d / f"{fmt}.slm", d / name, opts)
        assert main(["train", str(d / name), "-l", "pa", *opts, "-o", str(out[fmt][0]), "--quiet"]) == 0
    return out


@pytest.mark.parametrize("fmt,name", CASES)
def test_predict_on_a_file_without_examples_writes_nothing(fmt, name, models, tmp_path, capsys):
    model = models[fmt][0]
    empty = tmp_path / name
    empty.write_text(EMPTY[fmt][name])
    capsys.readouterr()
    assert main(["predict", str(model), str(empty)]) == 0
    assert capsys.readouterr() == ("", "")
    out = tmp_path / "p.txt"
    out.write_text("older predictions\n")
    assert main(["predict", str(model), str(empty), "-o", str(out), "--scores"]) == 0
    assert out.read_bytes() == b""  # replaced: written empty


@pytest.mark.parametrize("fmt,text", [("libsvm", b""), ("libsvm", b"# c\n"), ("vw", b""), ("csv", b"\n")])
def test_predict_on_an_empty_stdin_writes_nothing(fmt, text, models):
    res = cli("predict", str(models[fmt][0]), "-", input=text)
    assert (res.returncode, res.stdout, res.stderr) == (0, b"", b"")


@pytest.mark.parametrize("fmt,name", CASES)
def test_learning_or_scoring_a_file_without_examples_is_an_error_naming_it(fmt, name, models, tmp_path, capsys):
    model, data, opts = models[fmt]
    empty = tmp_path / name
    empty.write_text(EMPTY[fmt][name])
    out = tmp_path / "m.slm"
    for argv in (
        ["train", str(data), "-l", "pa", *opts, "--test", str(empty), "-o", str(out)],
        ["train", str(empty), "-l", "pa", *opts, "-o", str(out)],
        ["evaluate", str(empty), "-l", "pa", *opts],
        ["evaluate", str(empty), "-i", str(model)],
    ):
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert one_line_error(err) and str(empty) in err and "no data lines" in err, (argv, err)
        assert not out.exists()


@pytest.mark.parametrize("text", [b"", b"\n  \n\r\n"])
def test_an_empty_stdin_whose_format_is_not_given_is_no_data_lines(text, models, tmp_path):
    """Standard input that ends without a line (``streamlearn train - < /dev/null``) said "cannot tell the
    format of <stdin> from its first lines", as if the lines were there in an unknown format."""
    out = tmp_path / "m.slm"
    out.write_bytes(b"older model")
    for argv in (["train", "-", "-l", "pa", "-o", str(out)], ["evaluate", "-", "-l", "pa"], ["sketch", "-"]):
        res = cli(*argv, input=text)
        assert res.returncode == 2 and one_line_error(res.stderr), (argv, res.stderr)
        assert b"<stdin>: no data lines: the stream is empty" in res.stderr, (argv, res.stderr)
    assert out.read_bytes() == b"older model"
