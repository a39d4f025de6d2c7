"""``streamlearn serve [MODEL | --learner NAME -p k=v] --state-dir DIR``: serve a model that keeps learning."""

import math
import re
import sys

from .._signals import interrupts_handled
from ._common import CLIError, add_param_option, add_scale_options, check_input_file, parse_params


def add_parser(sub):
    p = sub.add_parser(
        "serve",
        help="HTTP server that predicts and keeps learning (write-ahead log, snapshots)",
        description="Serve MODEL (or a new --learner) over HTTP: POST /predict, POST /learn, GET "
        "/health, GET /metrics, GET|POST /model. Every acknowledged /learn is in the fsynced "
        "write-ahead log of --state-dir; a restarted server continues the same model. When "
        "--state-dir already holds a model, that model is continued and MODEL/--learner are "
        "not used (--n-features, --classes and --zero-based must then be the model's).",
    )
    p.add_argument("model", metavar="MODEL", nargs="?", help="model file to start from (streamlearn train -o)")
    p.add_argument("--learner", "-l", metavar="NAME", help="start a new model of this learner instead")
    add_scale_options(p)
    add_param_option(p)
    p.add_argument("--state-dir", required=True, metavar="DIR", help="snapshots and write-ahead log (created)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: a free port chosen by the system)")
    p.add_argument(
        "--port-file",
        metavar="F",
        help="write the bound port to F (replaced atomically once the socket listens; with --port 0)",
    )
    p.add_argument(
        "--snapshot-every",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="seconds between snapshots, which also truncate the log (default 60; 0: only at exit)",
    )
    p.add_argument(
        "--token-file",
        metavar="F",
        help="file holding a bearer token; /learn and /model then require 'Authorization: Bearer <token>'",
    )
    p.add_argument("--auth-all", action="store_true", help="with --token-file: every endpoint requires the token")
    p.add_argument(
        "--n-features",
        type=int,
        default=None,
        metavar="N",
        help="width of a new --learner model (default 262144, at most 2**28); LIBSVM ids beyond it are refused",
    )
    p.add_argument(
        "--zero-based",
        choices=("true", "false"),
        default=None,
        help="LIBSVM index base of a model without an input specification (default false)",
    )
    p.add_argument(
        "--classes", default=None, metavar="A,B,...", help="classes of a new --learner classifier (default -1,1)"
    )
    if hasattr(p, "_negative_number_matcher"):  # '--classes -1,1' is a value, not an unknown option '-1,1'
        p._negative_number_matcher = re.compile(r"^-\.?\d[\d.eE+\-,]*$")
    p.add_argument(
        "--shutdown-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="at SIGTERM/SIGINT, seconds to let requests in progress finish before they are dropped and the "
        "last snapshot is taken (default 10)",
    )
    p.add_argument("--max-body-mb", type=float, default=16.0, help="largest request body in MiB (default 16)")
    p.add_argument("--max-lines", type=int, default=100_000, help="most examples per request (default 100000)")
    p.set_defaults(func=run)


def run(args):
    try:
        import uvicorn

        from ..serve import ServedModel, create_app
    except ImportError as exc:
        raise CLIError(
            f"streamlearn serve needs starlette and uvicorn (pip install 'streamlearn[serve]'): {exc}."
        ) from None
    if args.model is not None and args.learner is not None:
        raise CLIError("give MODEL or --learner, not both.")
    params = parse_params(args.param)
    if params and args.learner is None:
        raise CLIError("-p sets the parameters of a new --learner; a MODEL keeps those in its file.")
    if args.learner is None and (args.scale is not None or args.scale_target is not None):
        raise CLIError("--scale and --scale-target apply to a new --learner; a MODEL keeps its scalers.")
    if args.model is not None:
        check_input_file(args.model, "model file")
    if not 0 <= args.port < 65536:
        raise CLIError(f"--port must be in 0..65535 (0: a free port); got {args.port}.")
    finite = math.isfinite(args.snapshot_every) and math.isfinite(args.max_body_mb)  # NaN, inf: no limit to use
    if not finite or args.snapshot_every < 0 or args.max_body_mb <= 0 or args.max_lines < 1:
        raise CLIError(
            "--snapshot-every must be >= 0, --max-body-mb > 0 (finite numbers) and --max-lines >= 1; got "
            f"--snapshot-every {args.snapshot_every:g}, --max-body-mb {args.max_body_mb:g}, --max-lines {args.max_lines}."
        )
    if not (math.isfinite(args.shutdown_timeout) and args.shutdown_timeout >= 0):
        raise CLIError(f"--shutdown-timeout must be a finite number of seconds >= 0; got {args.shutdown_timeout:g}.")
    token = None
    if args.token_file is not None:
        try:
            with open(args.token_file) as f:
                token = f.read().strip()
        except OSError as exc:
            raise CLIError(f"--token-file {args.token_file!r}: {exc.strerror}.") from None
        if not token:
            raise CLIError(f"--token-file {args.token_file!r} is empty.")
    elif args.auth_all:
        raise CLIError("--auth-all needs --token-file.")
    classes = None
    if args.classes is not None:
        try:
            classes = [float(c) for c in args.classes.split(",")]
        except ValueError:
            raise CLIError(f"--classes expects numbers separated by commas; got {args.classes!r}.") from None
    port_file = None
    if args.port_file is not None:  # checked now, written once the model is loaded: never over an input
        from .._atomic import Output

        port_file = Output(args.port_file, inputs=(args.model, args.token_file), what="--port-file")
    sock = _listen(args.host, args.port)  # before the model: a taken port fails fast, and nothing races for it
    port = sock.getsockname()[1]
    served = ServedModel(
        args.state_dir,
        model=args.model,
        learner=args.learner,
        params=params,
        scale=args.scale,
        target_scale=args.scale_target,
        n_features=args.n_features,
        zero_based=None if args.zero_based is None else args.zero_based == "true",
        classes=classes,
        snapshot_every=args.snapshot_every,
        max_batch_lines=args.max_lines,
        log=lambda msg: print(f"streamlearn serve: {msg}", file=sys.stderr, flush=True),
    )
    if port_file is not None:
        _write_port_file(port_file, port)
    app = create_app(served, token=token, auth_all=args.auth_all, max_body_bytes=int(args.max_body_mb * (1 << 20)))
    print(
        f"streamlearn serve: {served.config['learner']} on http://{args.host}:{port} (state {served.dir}, "
        f"{served.stats['n_learned']} examples learned)",
        file=sys.stderr,
        flush=True,
    )
    # uvicorn picks httptools and uvloop when installed (pip install 'streamlearn[serve]'), h11 and asyncio
    # otherwise. No proxy-header rewriting (the server binds loopback by default and logs no client address)
    # and no Date/Server headers: less work per request.
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        server_header=False,
        date_header=False,
        # a client that stalls in the middle of its request must not keep a stopping server (and its last
        # snapshot) waiting for ever
        timeout_graceful_shutdown=args.shutdown_timeout,
    )
    import contextlib
    import logging

    logging.getLogger("uvicorn.error").addFilter(_without_cancelled_tasks)  # (after the Config set logging up)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn raises the signal that stopped it again once stopped
        uvicorn.Server(config).run(sockets=[sock])
    interrupts_handled()  # the stop they asked for is done (or reported below): the command ends as it says
    if not served.closing:  # a second Ctrl-C (or SIGTERM) while stopping: uvicorn exited without the shutdown
        print(
            "streamlearn serve: stopped at once by a second interrupt, without its last snapshot; the write-ahead "
            "log holds every update it acknowledged, and the next start replays them.",
            file=sys.stderr,
            flush=True,
        )
        return 130
    return 0


def _without_cancelled_tasks(record):
    """False for uvicorn's error reports of tasks cancelled by its exit at a second interrupt (a request in
    progress, the wait for the end of the lifespan): tracebacks of a ``CancelledError``, where nothing failed."""
    import asyncio

    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, asyncio.CancelledError):
        return False
    lines = str(record.msg).rstrip().splitlines()  # the lifespan's report is the traceback's text
    return not (len(lines) > 1 and lines[0].startswith("Traceback") and lines[-1].endswith("CancelledError"))


def _listen(host, port):
    """A listening TCP socket bound to ``host:port`` (port 0: one the system picks); a clear error when the
    address is taken or cannot be bound."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise CLIError(f"cannot listen on {host}:{port}: {exc.strerror or exc}.") from None
    sock.set_inheritable(True)
    return sock


def _write_port_file(output, port):
    """The :class:`Output` ``output`` holds the bound port once it exists: written beside it, then renamed over it."""
    try:
        with output.open("w") as f:
            f.write(f"{port}\n")
    except OSError as exc:
        raise CLIError(f"--port-file {output.name!r}: {exc.strerror}.") from None
