"""``streamlearn`` command: ``train``, ``evaluate``, ``predict``, ``learners``, ``demo``, ``experiment``
and the subcommands listed in ``SUBCOMMAND_MODULES``.

Each subcommand module defines ``add_parser(subparsers)`` (which sets ``func`` with ``set_defaults``)
and a handler ``run(args) -> int``. User errors print ``streamlearn: error: ...`` and exit with 2.
"""

import argparse
import importlib
import sys

from .._version import __version__
from ..persist import ModelFileError
from ._common import CLIError

SUBCOMMAND_MODULES = (
    "streamlearn.cli.train_cmd",
    "streamlearn.cli.predict_cmd",
    "streamlearn.cli.learners_cmd",
    "streamlearn.cli.experiment_cmd",
    "streamlearn.cli.sketch_cmd",
)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="streamlearn", description="Online (streaming) machine learning: train, evaluate and sketch "
        "on LIBSVM/svmlight streams.")
    parser.add_argument("--version", action="version", version=f"streamlearn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return parser


def main(argv=None):
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (CLIError, ValueError, FileNotFoundError, ModelFileError, FloatingPointError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"streamlearn: error: {msg}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `streamlearn predict ... | head`
        return 0


def entry_point():
    sys.exit(main())
