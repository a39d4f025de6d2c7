"""``streamlearn`` command: ``train``, ``evaluate``, ``predict``, ``learners``, ``demo``, ``experiment``
and the subcommands listed in ``SUBCOMMAND_MODULES``.

Each subcommand module defines ``add_parser(subparsers)`` (which sets ``func`` with ``set_defaults``)
and a handler ``run(args) -> int``. User errors print ``streamlearn: error: ...`` and exit with 2.
"""

import argparse
import importlib
import os
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
    "streamlearn.cli.serve_cmd",
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
    """The ``streamlearn`` command: run :func:`main`, then end the process without tearing the interpreter down.

    Interpreter teardown (freeing the tens of thousands of objects of numpy, scipy, sklearn and numba one by
    one) took 0.6-1.2 s of wall time per process on the shared 2-core machine (benchmarks/sparse_speed.py,
    the script's "exit" stage); the operating system reclaims the memory at once.
    Everything that teardown would do for us is done first: ``atexit`` handlers run and the standard
    streams are flushed; if another thread is still alive, the normal exit (which joins it) is used. Output
    files are closed by the commands themselves (``with`` blocks) before ``main`` returns.
    """
    code = main()
    import atexit
    import threading

    if threading.active_count() > 1:  # a worker thread still runs (e.g. a Dask client): the normal exit joins it
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # e.g. `streamlearn predict ... | head`: as the normal exit would, drop the output
        pass
    except (OSError, ValueError):  # stdout closed or broken: report it through the normal exit
        sys.exit(code if code else 1)
    os._exit(code)
