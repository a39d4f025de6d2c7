"""The command-line tool in a subprocess, and the shape of its one-line errors (shared by the CLI tests)."""

import os
import subprocess
import sys

ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}


def cli(*args, **kw):
    """``python -m streamlearn ARGS`` with captured output (bytes), at most 300 s, never raising on exit codes."""
    return subprocess.run(
        [sys.executable, "-m", "streamlearn", *args], capture_output=True, timeout=300, env=ENV, check=False, **kw
    )


def one_line_error(text):
    """Whether ``text`` (str or bytes) is exactly one ``streamlearn: error: ...`` line and no traceback."""
    text = text.decode() if isinstance(text, bytes) else text
    return text.startswith("streamlearn: error: ") and text.count("\n") == 1 and "Traceback" not in text
