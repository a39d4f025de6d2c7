"""The result files of a benchmark: ``benchmarks/results/STEM.json`` and ``STEM.md`` side by side."""

import json
import os
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
