"""Ctrl-C at random moments: what ``streamlearn train`` and ``streamlearn predict`` do when SIGINT arrives anywhere
in their run.

Each run starts ``python -m streamlearn train LOG -l ftrl -q ua --chunk-size 500 -o OUT`` on a generated click
log in VW text, or ``python -m streamlearn predict MODEL LOG -o OUT`` with a model trained on it (an older
``OUT`` in place), sends one SIGINT after a random delay (uniform between ``--min-delay`` and ``--max-delay``
seconds: Python's start-up, the imports, loading the compiled kernels, parsing, learning or predicting, writing),
and classifies the outcome:

* *stopped*: exit code 130, standard error exactly one line ``streamlearn: error: interrupted; OUT left
  unchanged`` (or ``interrupted``), ``OUT`` as it was and no other file beside it;
* *completed*: the run ended before the signal (exit 0, a whole new output);
* *before streamlearn*: the signal came while Python itself was starting or importing the package, before any
  code of the command ran (ended by the signal or by Python's own KeyboardInterrupt, whose traceback shows no
  frame of streamlearn beyond the package's ``__init__``): not the command's to handle, no file touched;
* *failed*: anything else (another exit code, a crash, a traceback from the package, a changed or extra file).

``--jobs`` runs go at a time, and ``--load N`` keeps N busy processes running beside them (a loaded machine
widens the windows in which a signal lands inside a library). Writes ``benchmarks/results/interrupts.{json,md}``.

Run: ``.venv/bin/python benchmarks/interrupts.py`` (about 2 minutes; ``--runs``, ``--command``, ``--min-delay``,
``--max-delay``, ``--jobs``, ``--load``).
"""

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _results import load_averages, run_info, write_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_BUSY = "import time\nt = time.time()\nwhile time.time() - t < {seconds}:\n    sum(i * i for i in range(10000))\n"
_OLD = b"an older output\n"


def _classify(proc, err, out, folder):
    text = err.decode(errors="replace")
    lines = text.splitlines()
    files = sorted(p.name for p in folder.iterdir())
    untouched = out.read_bytes() == _OLD and files == [out.name]
    if proc.returncode == 0 and out.read_bytes() != _OLD and files == [out.name]:
        return "completed"
    clean = [f"streamlearn: error: interrupted; {out} left unchanged", "streamlearn: error: interrupted"]
    if proc.returncode == 130 and len(lines) == 1 and lines[0] in clean:
        return "stopped" if untouched else "failed"
    by_python = proc.returncode == -signal.SIGINT or (proc.returncode in (1, 130) and "KeyboardInterrupt" in text)
    if by_python and untouched and "streamlearn: error" not in text and not _ran_streamlearn(text):
        return "before streamlearn"
    return "failed"


#: the modules Python runs to import the package before any code of the command: its ``__init__`` and what that
#: imports (``python -m streamlearn`` and the ``streamlearn`` script alike import the package first)
_PACKAGE_START = tuple(os.sep + os.path.join("streamlearn", m) for m in ("__init__.py", "_lazy.py", "_version.py"))


def _ran_streamlearn(text):
    """Whether a traceback shows a frame of streamlearn's own code beyond the package's import."""
    files = re.findall(r'File "([^"]+)"', text)
    return any((os.sep + "streamlearn" + os.sep) in f and not f.endswith(_PACKAGE_START) for f in files)


def _trial(cmd, folder, delay, env):
    """One run of ``cmd`` writing ``folder/OUT``, interrupted after ``delay`` seconds: its outcome and details."""
    folder.mkdir()
    out = folder / "OUT"
    out.write_bytes(_OLD)
    proc = subprocess.Popen([*cmd, "-o", str(out)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    return _classify(proc, err, out, folder), proc.returncode, err, sorted(p.name for p in folder.iterdir())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=120, help="runs of each command")
    ap.add_argument("--command", choices=["train", "predict", "both"], default="both")
    ap.add_argument("--min-delay", type=float, default=0.0, help="earliest moment of the signal, in seconds")
    ap.add_argument("--max-delay", type=float, default=0.6, help="latest moment of the signal, in seconds")
    ap.add_argument("--rows", type=int, default=300_000, help="rows of the click log (a run takes about a second)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at a time")
    ap.add_argument("--load", type=int, default=1, help="busy processes beside the runs")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # started in the background by a shell, which ignores Ctrl-C there: the runs would inherit it and ignore
        # the signal; with a handler here, they start with the default again
        signal.signal(signal.SIGINT, signal.default_int_handler)
    from streamlearn.datasets import write_click_log

    rng = random.Random(args.seed)
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed package runs
    commands = ["train", "predict"] if args.command == "both" else [args.command]
    outcomes = {c: {} for c in commands}
    failures, runs = [], []
    with tempfile.TemporaryDirectory(prefix="interrupts_") as tmp:
        tmp = Path(tmp)
        log = tmp / "clicks.vw"
        write_click_log(log, args.rows, seed=args.seed)
        model = tmp / "model.slm"
        train = [
            sys.executable,
            "-m",
            "streamlearn",
            "train",
            str(log),
            "-l",
            "ftrl",
            "-q",
            "ua",
            "--chunk-size",
            "500",
        ]
        cmds = {"train": train, "predict": [sys.executable, "-m", "streamlearn", "predict", str(model), str(log)]}
        subprocess.run([*train, "-o", str(model), "--quiet"], env=env, check=True)  # fills the caches
        subprocess.run([*cmds["predict"], "-o", str(tmp / "warm.txt")], env=env, check=True)
        trials = [(c, i, rng.uniform(args.min_delay, args.max_delay)) for i in range(args.runs) for c in commands]
        busy = [
            subprocess.Popen([sys.executable, "-c", _BUSY.format(seconds=3 * len(trials))]) for _ in range(args.load)
        ]
        t0 = time.time()
        try:
            with ThreadPoolExecutor(max_workers=args.jobs) as pool:
                results = pool.map(lambda t: _trial(cmds[t[0]], tmp / f"{t[0]}{t[1]}", t[2], env), trials)
                for k, ((command, _, delay), (kind, code, err, files)) in enumerate(zip(trials, results)):
                    outcomes[command][kind] = outcomes[command].get(kind, 0) + 1
                    runs.append({"command": command, "delay": delay, "returncode": code, "outcome": kind})
                    if kind == "failed":
                        failures.append(
                            {
                                "command": command,
                                "delay": round(delay, 3),
                                "returncode": code,
                                "files": files,
                                "stderr": err.decode(errors="replace")[-1500:],
                            }
                        )
                    print(f"{k + 1:5d}/{len(trials)} {command} {delay:.3f} s: {kind} (exit {code})", flush=True)
        finally:
            for b in busy:
                b.kill()
                b.wait()
    seconds = time.time() - t0
    command = " ".join(["python benchmarks/interrupts.py", *(sys.argv[1:] if argv is None else argv)])
    data = {
        **run_info(command),
        "runs": args.runs,
        "commands": commands,
        "min_delay": args.min_delay,
        "max_delay": args.max_delay,
        "rows": args.rows,
        "jobs": args.jobs,
        "load": args.load,
        "seconds": seconds,
        "outcomes": outcomes,
        "failures": failures,
        "all": runs,
    }
    kinds = ("stopped", "completed", "before streamlearn", "failed")
    lines = [
        "# Ctrl-C at random moments",
        "",
        f"Command: `{command}` ({args.runs} runs of each of {', '.join(f'`streamlearn {c}`' for c in commands)} "
        f"on a {args.rows:,}-row click log, one SIGINT each after a random delay of {args.min_delay} to "
        f"{args.max_delay} s, {args.jobs} run(s) at a time and {args.load} busy process(es) beside them; load "
        f"averages at the end {load_averages()}; {seconds:.0f} s).",
        "",
        f"| outcome | {' | '.join(commands)} |",
        "|---|" + "---:|" * len(commands),
        *(f"| {k} | {' | '.join(str(outcomes[c].get(k, 0)) for c in commands)} |" for k in kinds),
        "",
        "*stopped*: exit 130, one line `streamlearn: error: interrupted; OUT left unchanged`, the older OUT intact "
        "and nothing else in its folder; *completed*: the run ended before the signal; *before streamlearn*: the "
        "signal came while Python itself was starting or importing the package, before any code of the command (ended "
        "by the signal or Python's own KeyboardInterrupt, no file touched); *failed*: anything else (a crash, another "
        "exit code, a changed or extra file).",
    ]
    for c in commands:
        starts = [r["delay"] for r in runs if r["outcome"] == "stopped" and r["command"] == c]
        if starts:
            lines += ["", f"Signals that stopped `{c}` arrived between {min(starts):.3f} s and {max(starts):.3f} s."]
    for f in failures:
        lines += [
            "",
            f"`{f['command']}` failed after {f['delay']} s (exit {f['returncode']}, files {f['files']}):",
            "",
            "```",
            f["stderr"].rstrip() or "(nothing on standard error)",
            "```",
        ]
    write_results("interrupts", data, lines)
    print("\n".join(lines))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
