"""Ctrl-C at random moments: what ``streamlearn train`` does when SIGINT arrives anywhere in its run.

Each run starts ``python -m streamlearn train LOG -l ftrl -q ua --chunk-size 500 -o OUT`` on a generated click
log in VW text (an older ``OUT`` in place), sends one SIGINT after a random delay (uniform between 0 and
``--max-delay`` seconds: Python's start-up, the imports, loading the compiled kernels, parsing and learning),
and classifies the outcome:

* *stopped*: exit code 130, standard error exactly one line ``streamlearn: error: interrupted; OUT left
  unchanged`` (or ``interrupted``), ``OUT`` as it was and no other file beside it;
* *completed*: the run ended before the signal (exit 0, a whole new model);
* *before streamlearn*: the signal came while Python itself was starting (nothing of streamlearn's on standard
  error, or a traceback with no frame of the package): not the command's to handle, no file touched;
* *failed*: anything else (another exit code, a traceback from the package, a crash, a changed or extra file).

``--load N`` keeps N busy processes running beside the runs (a loaded machine widens the windows in which a
signal lands inside a library). Writes ``benchmarks/results/interrupts.{json,md}``.

Run: ``.venv/bin/python benchmarks/interrupts.py`` (about 2 minutes; ``--runs``, ``--max-delay``, ``--load``).
"""

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import load_averages, run_info, write_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_BUSY = "import time\nt = time.time()\nwhile time.time() - t < {seconds}:\n    sum(i * i for i in range(10000))\n"


def _classify(proc, err, out, folder, old):
    text = err.decode(errors="replace")
    lines = text.splitlines()
    files = sorted(p.name for p in folder.iterdir())
    if proc.returncode == 0 and out.read_bytes() != old and files == [out.name]:
        return "completed"
    clean = [f"streamlearn: error: interrupted; {out} left unchanged", "streamlearn: error: interrupted"]
    if proc.returncode == 130 and len(lines) == 1 and lines[0] in clean and out.read_bytes() == old:
        return "stopped" if files == [out.name] else "failed"
    ours = "streamlearn: error" in text or (os.sep + "streamlearn" + os.sep) in text
    if not ours and out.read_bytes() == old and files == [out.name]:
        return "before streamlearn"
    return "failed"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=120)
    ap.add_argument("--max-delay", type=float, default=0.6, help="latest moment of the signal, in seconds")
    ap.add_argument("--rows", type=int, default=300_000, help="rows of the click log (a run takes about a second)")
    ap.add_argument("--load", type=int, default=1, help="busy processes beside the runs")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from streamlearn.datasets import write_click_log

    rng = random.Random(args.seed)
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed package runs
    outcomes, failures, runs = {}, [], []
    with tempfile.TemporaryDirectory(prefix="interrupts_") as tmp:
        tmp = Path(tmp)
        log = tmp / "clicks.vw"
        write_click_log(log, args.rows, seed=args.seed)
        cmd = [sys.executable, "-m", "streamlearn", "train", str(log), "-l", "ftrl", "-q", "ua", "--chunk-size", "500"]
        warm = tmp / "warm"
        warm.mkdir()
        subprocess.run([*cmd, "-o", str(warm / "m.slm"), "--quiet"], env=env, check=True)  # fills the caches
        busy = [subprocess.Popen([sys.executable, "-c", _BUSY.format(seconds=3 * args.runs)]) for _ in range(args.load)]
        t0 = time.time()
        try:
            for i in range(args.runs):
                folder = tmp / f"run{i}"
                folder.mkdir()
                out = folder / "OUT"
                old = b"an older model\n"
                out.write_bytes(old)
                delay = rng.uniform(0.0, args.max_delay)
                proc = subprocess.Popen(
                    [*cmd, "-o", str(out)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
                )
                time.sleep(delay)
                proc.send_signal(signal.SIGINT)
                _, err = proc.communicate(timeout=120)
                kind = _classify(proc, err, out, folder, old)
                outcomes[kind] = outcomes.get(kind, 0) + 1
                runs.append({"delay": delay, "returncode": proc.returncode, "outcome": kind})
                if kind == "failed":
                    failures.append(
                        {"delay": round(delay, 3), "returncode": proc.returncode, "stderr": err.decode()[-1500:]}
                    )
                print(f"{i + 1:4d}/{args.runs} {delay:.3f} s: {kind} (exit {proc.returncode})", flush=True)
        finally:
            for b in busy:
                b.kill()
                b.wait()
    seconds = time.time() - t0
    command = " ".join(["python benchmarks/interrupts.py", *(sys.argv[1:] if argv is None else argv)])
    data = {
        **run_info(command),
        "runs": args.runs,
        "max_delay": args.max_delay,
        "rows": args.rows,
        "load": args.load,
        "seconds": seconds,
        "outcomes": outcomes,
        "failures": failures,
        "all": runs,
    }
    starts = [r["delay"] for r in runs if r["outcome"] == "stopped"]
    lines = [
        "# Ctrl-C at random moments",
        "",
        f"Command: `{command}` ({args.runs} runs of `python -m streamlearn train` on a {args.rows:,}-row "
        f"click log, one SIGINT each after a random delay of 0 to {args.max_delay} s, {args.load} busy process(es) "
        f"beside them; load averages at the end {load_averages()}; {seconds:.0f} s).",
        "",
        "| outcome | runs |",
        "|---|---:|",
        *(f"| {k} | {outcomes.get(k, 0)} |" for k in ("stopped", "completed", "before streamlearn", "failed")),
        "",
        "*stopped*: exit 130, one line `streamlearn: error: interrupted; OUT left unchanged`, the older OUT intact "
        "and nothing else in its folder; *completed*: the run ended before the signal; *before streamlearn*: the "
        "signal came while Python itself was starting (nothing of streamlearn's on standard error, no file "
        "touched); *failed*: anything else.",
    ]
    if starts:
        lines += ["", f"Signals that stopped the command arrived between {min(starts):.3f} s and {max(starts):.3f} s."]
    for f in failures:
        lines += ["", f"Failed after {f['delay']} s (exit {f['returncode']}):", "", "```", f["stderr"].rstrip(), "```"]
    write_results("interrupts", data, lines)
    print("\n".join(lines))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
