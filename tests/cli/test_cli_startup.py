"""``streamlearn --version``, ``--help`` and ``learners`` start without numba, scipy or scikit-learn: the
subcommand parsers are built on first use (cli.main.COMMANDS) and ``learners`` reads a static table."""

import json
import subprocess
import sys

import pytest

from streamlearn.cli.main import COMMANDS, build_parser

HEAVY = ("numba", "scipy", "sklearn", "numpy", "matplotlib")

_PROBE = """
import contextlib, io, json, sys
from streamlearn.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "out": out.getvalue(),
                  "heavy": sorted({m.split('.')[0] for m in sys.modules} & set(HEAVY_NAMES))}))
""".replace("HEAVY_NAMES", repr(HEAVY))


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["learners"], ["learners", "--json"]], ids=" ".join)
def test_light_commands_import_no_numba_scipy_sklearn(args):
    res = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["code"] in (0, None)
    assert got["heavy"] == [], f"streamlearn {' '.join(args)} imported {got['heavy']}"
    if args == ["learners"]:
        assert "pa1" in got["out"] and "C=0.01" in got["out"]


def test_help_lines_are_the_subcommand_modules_own():
    eager = build_parser(lazy=False)
    sub = next(a for a in eager._actions if hasattr(a, "_name_parser_map"))
    own = {a.dest: a.help for a in sub._choices_actions}
    assert own == {name: help_line for name, (_, help_line) in COMMANDS.items()}
    assert list(own) == list(COMMANDS)
    assert build_parser().format_help() == eager.format_help()


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "d.svm", "-l", "pa1", "-p", "C=1", "--json"],
        ["predict", "m.slm", "d.svm", "-o", "out"],
        ["learners"],
        ["demo", "--learners", "pa1"],
        ["experiment", "demo"],
        ["sketch", "d.svm", "--ell", "3"],
        ["evaluate", "d.svm", "-l", "ogd"],
    ],
)
def test_lazy_parser_parses_as_the_eager_one(argv):
    lazy, eager = vars(build_parser().parse_args(argv)), vars(build_parser(lazy=False).parse_args(argv))
    assert lazy == eager
    assert build_parser().parse_args(argv).func is eager["func"]


def test_subcommand_help_and_errors_still_work(capsys):
    for argv in (["train", "--help"], ["nosuch"], ["train"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(argv)
    err = capsys.readouterr()
    assert "--learner" in err.out and "invalid choice: 'nosuch'" in err.err
    assert "required: DATA" in err.err or "the following arguments are required" in err.err
