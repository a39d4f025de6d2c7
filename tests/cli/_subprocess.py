"""The command-line tool in a subprocess, and the shape of its one-line errors (shared by the CLI tests)."""

import os
import signal
import subprocess
import sys
import time

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


def _waits_on_pipe(pid):
    """True once a thread of the process blocks reading a pipe (all the data sent so far was read)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                wchan = f.read()
            if "pipe_read" in wchan or "pipe_wait" in wchan:
                return True
        except OSError:
            pass
    return False


def assert_ctrl_c_on_open_pipe_leaves_output(data, options, folder):
    """``train - OPTIONS -o folder/m.slm`` over an existing ``m.slm``, fed ``data`` on a pipe left open (the run
    waits for more rows), then Ctrl-C: exit 130, the one line ``interrupted; OUT left unchanged``, the old file
    and nothing else in ``folder``."""
    out = folder / "m.slm"
    out.write_bytes(b"old model")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlearn", "train", "-", *options, "-o", str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    proc.stdin.write(data)
    proc.stdin.flush()
    deadline = time.time() + 60  # wait until the rows were read and the run waits for more (output pending)
    while time.time() < deadline and proc.poll() is None and not _waits_on_pipe(proc.pid):
        time.sleep(0.2)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.decode() == f"streamlearn: error: interrupted; {out} left unchanged\n"
    assert out.read_bytes() == b"old model" and sorted(p.name for p in folder.iterdir()) == ["m.slm"]
