"""``--scheduler ADDRESS|local:N`` for ``streamlearn train`` and ``streamlearn sketch``: the plumbing between
the command line and :mod:`streamlearn.distributed` (which does the work on a Dask cluster).

Dask is imported only when ``--scheduler`` is given: importing the command line never imports it.
"""

import contextlib
import glob
import os

from ._common import CLIError, check_input_file

DASK_HINT = "pip install 'streamlearn[dask]'"


def add_scheduler_option(parser, what):
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS|local:N",
        default=None,
        help=f"{what} on a Dask cluster: a scheduler address (e.g. tcp://10.0.0.5:8786) or local:N for a "
        "LocalCluster of N single-threaded worker processes on this machine; each DATA file (or glob match) "
        f"is one partition. Needs Dask ({DASK_HINT}).",
    )


def distributed_module():
    """``streamlearn.distributed``, or a CLIError naming the install command when Dask is missing."""
    try:
        from .. import distributed
    except ImportError as exc:
        msg = str(exc)
        if DASK_HINT not in msg:
            msg = f"--scheduler needs Dask's distributed scheduler: {DASK_HINT} (import failed: {msg})"
        raise CLIError(msg) from exc
    return distributed


def single_file(args, command):
    """The one DATA file of a run without ``--scheduler`` (exactly the behaviour before --scheduler existed)."""
    if len(args.data) != 1:
        raise CLIError(
            f"'streamlearn {command}' reads one DATA file without --scheduler; got {len(args.data)} "
            f"({', '.join(map(repr, args.data))}). Several files or a glob are the partitions of "
            "a --scheduler ADDRESS|local:N run."
        )
    return args.data[0]


def expand_data(patterns):
    """DATA arguments -> list of files, in the order given. An argument that names no existing file but holds
    ``*``, ``?`` or ``[`` is a glob pattern (quoted, so that the shell left it alone): its matching files,
    sorted. Every file is checked to exist, and to be named once."""
    paths = []
    for pattern in patterns:
        if os.path.exists(pattern) or not glob.has_magic(pattern):
            paths.append(check_input_file(pattern))
            continue
        matches = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
        if not matches:
            raise CLIError(f"DATA pattern {pattern!r} matches no file.")
        paths += matches
    seen = {}
    for path in paths:  # the same file twice (given and matched, or through a link) would be learnt twice
        real = os.path.realpath(path)
        if real in seen:
            raise CLIError(f"DATA names {seen[real]!r} twice; each file is one partition, read once.")
        seen[real] = path
    return paths


@contextlib.contextmanager
def connected(dist, scheduler):
    """``dist.connect(scheduler)``; a scheduler that cannot be reached becomes a CLIError. Errors raised
    inside the ``with`` body pass through unchanged."""
    from ..distributed._client import check_scheduler

    try:
        check_scheduler(scheduler, "--scheduler")  # named as the user gave it, before any work
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    stack = contextlib.ExitStack()
    try:
        # local:N: connect silences the workers' own log records (a task's error with its traceback, printed by
        # the worker process); the error reaches this process and is reported once, in one line
        client = stack.enter_context(dist.connect(scheduler))
    except OSError as exc:  # includes TimeoutError
        raise CLIError(f"could not connect to the Dask scheduler {scheduler!r}: {exc}") from exc
    import logging

    # the client's own log records (a lost scheduler, with tracebacks) stay quiet too: the error is reported once,
    # in one line, by the command
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with stack:
            if not client.nthreads():
                _wait_for_a_worker(client, scheduler)
            yield client
    finally:
        logging.disable(previous)


def _wait_for_a_worker(client, scheduler):
    """A scheduler without workers would queue the tasks for ever, silently: wait for one to join within Dask's
    connect timeout (``distributed.comm.timeouts.connect``, 30 s by default), else a CLIError naming it."""
    import dask.config
    from dask.utils import parse_timedelta

    timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds")
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise CLIError(
            f"the Dask scheduler {scheduler!r} has no worker: none joined within {timeout:g} s "
            f"(distributed.comm.timeouts.connect); start workers with `dask worker {client.scheduler.address}`."
        ) from None


def n_workers(client):
    """Workers connected to the scheduler now."""
    return len(client.nthreads())
