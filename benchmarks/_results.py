"""The result files of a benchmark: ``benchmarks/results/STEM.json`` and ``STEM.md`` side by side, and the facts
a result records (command, machine, load, CPU time of the child processes)."""

import json
import os
import platform
import resource
import shlex
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def run_info(command):
    """The head of a result: the command, the 1-minute load average now and the Python version."""
    return {"command": command, "load_average_1min": os.getloadavg()[0], "python": sys.version.split()[0]}


def write_results(stem, data, lines):
    """``data`` as ``STEM.json`` (indented) and the report ``lines`` as ``STEM.md``, in benchmarks/results."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(data, indent=1))
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")


def load_averages():
    """The 1-, 5- and 15-minute load averages now, as one string."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine():
    """The processor, the number of logical CPUs and the load averages now, as one line."""
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs (load average {load_averages()})"
    )


def children_cpu():
    """CPU seconds (user + system) used so far by the child processes that have ended."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_env(**extra):
    """The environment of a timed subprocess: this one's plus ``extra``, with Python's bytecode cache on. An
    installed package has its modules compiled to ``.pyc`` files; under ``PYTHONDONTWRITEBYTECODE`` (set on
    some build machines) a source checkout would compile every module from source at every start instead."""
    env = dict(os.environ, **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def command(script, argv=None):
    """How the run was started: ``python benchmarks/SCRIPT`` and its arguments (``argv`` when ``main`` was called
    with them, else the command line's)."""
    args = sys.argv[1:] if argv is None else argv
    return f"python benchmarks/{script}" + (" " + shlex.join(args) if args else "")
