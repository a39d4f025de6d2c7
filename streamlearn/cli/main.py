"""``streamlearn`` command: ``train``, ``evaluate``, ``predict``, ``learners``, ``demo``, ``experiment``
and the subcommands listed in ``SUBCOMMAND_MODULES``.

Each subcommand module defines ``add_parser(subparsers)`` (which sets ``func`` with ``set_defaults``)
and a handler ``run(args) -> int``. User errors print ``streamlearn: error: ...`` and exit with 2.
"""

import argparse
import gc
import importlib
import os
import signal
import sys

from .._errors import ModelFileError
from .._signals import Terminated, handle_interrupts, interrupts_held, raise_if_interrupted, raised_again
from .._version import __version__
from ._common import CLIError

SUBCOMMAND_MODULES = (
    "streamlearn.cli.train_cmd",
    "streamlearn.cli.predict_cmd",
    "streamlearn.cli.learners_cmd",
    "streamlearn.cli.experiment_cmd",
    "streamlearn.cli.sketch_cmd",
    "streamlearn.cli.serve_cmd",
)

#: command -> (module whose ``add_parser`` defines it, its line in ``streamlearn --help``). The modules are
#: imported only when their command runs, so ``--version`` and ``--help`` import no numba, scipy or
#: scikit-learn; a test checks these lines against the modules' own.
COMMANDS = {
    "train": (
        "streamlearn.cli.train_cmd",
        (
            "train a learner on a data file (progressive validation on the "
            "first pass), score it on a test file or held-out rows, optionally "
            "save it"
        ),
    ),
    "evaluate": (
        "streamlearn.cli.train_cmd",
        (
            "progressive validation of a learner on a data file: VW-style "
            "table of average loss and online error at doubling example "
            "counts"
        ),
    ),
    "predict": ("streamlearn.cli.predict_cmd", "predict with a saved model, one line per example of DATA"),
    "learners": ("streamlearn.cli.learners_cmd", "list the learners with their parameters and defaults"),
    "experiment": ("streamlearn.cli.experiment_cmd", "run a named experiment (paper reproductions, sweeps)"),
    "demo": (
        "streamlearn.cli.experiment_cmd",
        "the main job: every learner, one pass over the bundled a9a, scored on a9a.t (same as 'experiment demo')",
    ),
    "sketch": (
        "streamlearn.cli.sketch_cmd",
        "sketch the rows of a LIBSVM file (FD, PFD, CFD, RFD, RP, Oja); "
        "report the relative spectral error of A^T A and the speed",
    ),
    "serve": ("streamlearn.cli.serve_cmd", "HTTP server that predicts and keeps learning (write-ahead log, snapshots)"),
}


#: command modules that import no numpy (``streamlearn learners`` reads a static table)
LIGHT_MODULES = ("streamlearn.cli.learners_cmd",)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, as every other error of the command (argparse prints its
    usage block first): ``streamlearn: error: MESSAGE (see 'streamlearn train --help').``, exit code 2. The
    subcommands' parsers are of this class too (argparse makes them of their parent's)."""

    def error(self, message):
        self.exit(2, f"streamlearn: error: {message} (see '{self.prog} --help').\n")


class _LazySubParsers(argparse._SubParsersAction):
    """Subcommand parsers built when their command is chosen: a placeholder (name and help line) until then."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._modules = {}  # command -> module still to import

    def add_lazy(self, name, module, help):
        self._modules[name] = module
        self.add_parser(name, help=help, add_help=False)

    def load(self, name):
        """Replace the placeholders of ``name``'s module by the parsers the module builds, in place."""
        module = self._modules.get(name)
        if module is None:
            return
        names = [n for n, m in self._modules.items() if m == module]
        order = list(self._name_parser_map)
        pseudo = {a.dest: i for i, a in enumerate(self._choices_actions)}
        for n in names:
            del self._modules[n]
            del self._name_parser_map[n]
        kept = [a for a in self._choices_actions if a.dest not in names]
        self._choices_actions[:] = kept
        if module not in LIGHT_MODULES:
            from ._deferred import before_numeric_command

            before_numeric_command()
        with interrupts_held():  # a Ctrl-C inside an extension module's import can turn into its ImportError
            commands = importlib.import_module(module)
        commands.add_parser(self)
        parsers = dict(self._name_parser_map)  # the same dict object is the action's `choices`: refill it
        self._name_parser_map.clear()
        self._name_parser_map.update((n, parsers[n]) for n in order + [n for n in parsers if n not in order])
        self._choices_actions.sort(key=lambda a: pseudo.get(a.dest, len(pseudo)))

    def load_all(self):
        for name in list(self._modules):
            self.load(name)

    def __call__(self, parser, namespace, values, option_string=None):
        self.load(values[0])
        super().__call__(parser, namespace, values, option_string)


def build_parser(lazy=True):
    """The ``streamlearn`` argument parser; ``lazy=False`` builds every subcommand's parser up front."""
    parser = _Parser(
        prog="streamlearn",
        description="Online (streaming) machine learning: train, evaluate, predict and serve on LIBSVM, VW text, "
        "CSV and Parquet streams.",
    )
    parser.add_argument("--version", action="version", version=f"streamlearn {__version__}")
    parser.register("action", "lazy_parsers", _LazySubParsers)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", action="lazy_parsers")
    sub.required = True
    for name, (module, help_line) in COMMANDS.items():
        sub.add_lazy(name, module, help_line)
    if not lazy:
        sub.load_all()
    return parser


#: the exit code of a command stopped by SIGTERM (128 + 15, as a shell reports a process that SIGTERM ended)
TERMINATED = 143


def main(argv=None):
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code.

    Every failure is one line on standard error, ``streamlearn: error: ...``: exit 2 for a user error or an
    output that cannot be written (full disk, closed pipe), 130 for Ctrl-C (naming the outputs left unchanged, and
    those that hold a checkpoint written before it), 143 for a SIGTERM that :func:`entry_point` turned into a
    :class:`~streamlearn._signals.Terminated` (the same line, "terminated").
    """
    default_hook = sys.unraisablehook
    hook = _interrupt_again_hook(default_hook)
    pending = ()
    remove_temporaries = None
    try:  # from the first import on: a Ctrl-C at any point is the one line
        sys.unraisablehook = hook  # (first: one raised in a callback of the import system is not printed)
        from .._atomic import _PENDING as pending
        from .._atomic import remove_temporaries

        pending.clear()
        return _run(argv)
    except KeyboardInterrupt as exc:
        hook.interrupted = True
        terminated = isinstance(exc, Terminated)
        _error("; ".join(["terminated" if terminated else "interrupted", *_interrupted_outputs(pending)]))
        return TERMINATED if terminated else 130
    except (CLIError, ValueError, FileNotFoundError, ModelFileError, FloatingPointError, KeyError) as exc:
        if isinstance(exc, FileNotFoundError) and exc.errno is not None:  # the system's, not one of our messages
            return _os_error(exc)
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        _error(msg)
        return 2
    except OSError as exc:  # ENOSPC, EPIPE, EIO, EACCES... while reading or writing
        return _os_error(exc)
    except MemoryError as exc:  # numpy says what it could not allocate ("Unable to allocate 32.0 GiB for ...")
        asked = f" ({str(exc).rstrip('.')})" if str(exc) else ""
        _error(f"out of memory{asked}; use a smaller --chunk-size, --n-features, or -b for hashed formats.")
        return 2
    finally:
        hook.ended = True  # a re-delivery still pending must not interrupt what runs after the command
        if hook.interrupted:
            import gc

            gc.collect()  # what the interrupt left half-built goes now, under the hook that keeps it quiet
            if remove_temporaries is not None:  # and the temporary files of a writer it stopped between statements
                remove_temporaries()
        sys.unraisablehook = default_hook


def _interrupted_outputs(pending):
    """What a Ctrl-C leaves at the file outputs not written yet: ``"A, B left unchanged"``, then ``"C holds ..."``
    for each output rewritten before the end (a checkpoint)."""
    files = [o for o in pending if not o.through]
    kept = [o.name for o in files if o.holds is None]
    return ([f"{', '.join(kept)} left unchanged"] if kept else []) + [
        f"{o.name} holds {o.holds}" for o in files if o.holds is not None
    ]


def _run(argv):
    """Parse ``argv`` and run the command; a Ctrl-C that Python wrapped in another exception (a KeyboardInterrupt
    inside a class body's ``__set_name__`` becomes a RuntimeError) is raised as the KeyboardInterrupt it is."""
    try:
        args = build_parser().parse_args(argv)  # inside: a Ctrl-C while the subcommands import is one line too
        for dest in ("model", "data"):
            # argparse gives a single positional that is the operand '--' after a first '--' as [] (predict m --
            # --); it is the file named '--', as several positionals (train -- --) and newer Pythons have it
            if getattr(args, dest, None) == []:
                setattr(args, dest, "--")
        from ._deferred import before_numeric_run

        if before_numeric_run():
            from ._allocator import tune_allocator

            tune_allocator()  # chunks reuse the pages of the chunks before them
        code = int(args.func(args) or 0)
        raise_if_interrupted()  # a Ctrl-C that a library discarded: the command does not end as if none had come
        sys.stdout.flush()  # a full device or closed pipe on standard output is reported here
        return code
    except Exception as exc:
        interrupt = _from_interrupt(exc)
        if interrupt is not None:
            raise type(interrupt)() from exc
        raise


def _os_error(exc):
    """``FILE: REASON.`` for an OSError (standard output when it names no file); exit code 2."""
    if exc.filename is None:
        _silence_stdout()
    where = exc.filename if exc.filename is not None else "standard output"
    what = "broken pipe: the reader closed it early" if isinstance(exc, BrokenPipeError) else exc.strerror
    _error(f"{where}: {what or exc}.")
    return 2


def _from_interrupt(exc):
    """The KeyboardInterrupt (Ctrl-C, or a :class:`Terminated`) in the chain of causes of ``exc``; None if none."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _interrupt_again_hook(default):
    """An ``sys.unraisablehook`` for a Ctrl-C that Python cannot raise where it arrived.

    A KeyboardInterrupt raised inside a callback from C (a library's callback; the kernels compile and load with
    Ctrl-C held back, as numba's compiler calls back into Python) is "ignored": Python prints it with a
    traceback and goes on. This hook prints nothing and
    interrupts the main thread again a moment later, so that the command stops with its one-line message.
    Once the command has been interrupted (``hook.interrupted``), it also keeps quiet about the errors of
    objects that the interrupt left half-built as they are freed (a library's ``__del__`` that expects an
    attribute its ``__init__`` did not get to set): the command has said "interrupted" and stops. A
    re-delivery is dropped when the command has stopped or ended in the meantime.
    """

    import threading

    lock = threading.Lock()

    def hook(info):
        if info.exc_type is not None and issubclass(info.exc_type, KeyboardInterrupt):
            with lock:  # one Ctrl-C can be reported several times (once per callback it crossed): one re-delivery
                if hook.redelivery:
                    return
                hook.redelivery = True
            # a SIGTERM (Terminated) is delivered again as SIGTERM, a Ctrl-C as SIGINT
            hook.signum = signal.SIGTERM if issubclass(info.exc_type, Terminated) else signal.SIGINT
            hook.raised_again = raised_again()
            threading.Timer(0.02, again).start()
            return
        if hook.interrupted:
            return
        default(info)

    def again():
        import _thread

        # not when the command already stopped (or finished) by itself, nor when a check raised the interrupt
        # again meanwhile: a second one would cut the clean-up that the first started (joining the threads)
        if not (hook.interrupted or hook.ended or raised_again() != hook.raised_again):
            _thread.interrupt_main(hook.signum)

    hook.interrupted = False
    hook.ended = False
    hook.redelivery = False
    hook.signum = signal.SIGINT
    hook.raised_again = 0
    return hook


def _forget_caught_interrupt():
    """The command caught the Ctrl-C and stops with 130: make CPython forget that it once saw it escape.

    CPython notes a KeyboardInterrupt that escapes code run from a string (``exec("...")``, which
    ``dataclasses`` runs for every class it builds, and ``scipy.sparse`` while it imports) in a process-wide
    flag, even when the interrupt is caught further up; run as ``python -m streamlearn``, the process then ends
    by SIGINT at exit instead of with its exit code. Running code from a string starts by clearing that flag,
    and a run that completes leaves it clear: one empty ``exec`` does it, on every CPython version.
    """
    exec("", {})


def _error(msg):
    print(f"streamlearn: error: {msg}", file=sys.stderr)


def _silence_stdout():
    """Standard output failed: drop what is still buffered so that the exit does not fail a second time."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):  # not a real file (captured in tests)
        pass


def entry_point():
    """The ``streamlearn`` command: run :func:`main` and exit normally with its code.

    Before exiting, every object alive is moved out of the garbage collector's reach (:func:`gc.freeze`):
    interpreter teardown otherwise runs full collections over the hundreds of thousands of objects that
    numpy, scipy, scikit-learn and numba create at import, about a second of wall time per command
    (``benchmarks/startup.py``, "exit" rows). Teardown itself still runs as usual: ``atexit`` handlers,
    flushing the standard streams, joining threads, clearing the modules; what the collector would have freed,
    the operating system reclaims with the process.

    A SIGTERM is handled as a Ctrl-C is (:class:`~streamlearn._signals.Terminated`): the outputs are left as they
    were and their temporary files removed, one line says "terminated", and the process then ends by SIGTERM, as
    it would have without the handler (what a service manager expects of a stopped program).
    """
    started = False
    try:
        handle_interrupts()
        with interrupts_held():  # (raised after it: in a callback of the import system it would be printed)
            from ._deferred import activate

            activate()  # start-up imports of our dependencies that the commands rarely use, loaded on first use
        started = True
        code = main()
    except KeyboardInterrupt as exc:  # before the command started, or re-delivered just as it ended
        terminated = isinstance(exc, Terminated)
        if not started:
            _error("terminated" if terminated else "interrupted")
        code = TERMINATED if terminated else 130
    if code in (130, TERMINATED):
        _forget_caught_interrupt()
    # the command is over and its outputs are written: a Ctrl-C now (or an interrupt the command scheduled just
    # before it ended) must not turn into a KeyboardInterrupt during teardown, which would end the process by
    # SIGINT instead of with ``code``; one already pending is raised at the latest by these calls (a SIGTERM
    # from now on ends the process at once, as by default)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except KeyboardInterrupt as exc:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if isinstance(exc, Terminated):
            code = TERMINATED
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # `streamlearn predict ... | head`: the reader has gone; drop the rest quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # stdout full or closed: not a success (exit's own flush reports it)
        code = code or 1
    if code == TERMINATED:
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGTERM)
    gc.freeze()
    sys.exit(code)
