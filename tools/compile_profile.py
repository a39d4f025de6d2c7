"""Where the cold demo's numba compile time goes: seconds per jitted function, from numba's event API.

Runs ``streamlearn demo --quiet --jobs 1`` (every demo learner, one pass over the bundled a9a; ``--learners``
for a subset; one process, so that it compiles everything) in a fresh process with an empty
``NUMBA_CACHE_DIR`` and listens to the ``numba:compile`` events, as ``benchmarks/startup.py`` does. For every jitted function it reports

* ``top``: the CPU seconds of its top-level compilations (called from Python; includes compiling the
  functions it calls that were not compiled yet), the sum of which is ``startup.py``'s compile time;
* ``self``: the seconds of all its compilations (top-level or nested, i.e. compiled while typing a caller)
  minus those of the nested compilations they triggered;
* ``LLVM``: the part of ``self`` spent in LLVM (optimising the function's module, with the already compiled
  functions it calls linked in, and generating machine code);
* the number of specialisations (one per distinct argument-type signature) and their signatures (``-v``).

``--baseline SRC`` profiles the package in another source tree in the same run (side by side).

Writes ``tools/results/compile_profile.{json,md}``. Run from the repository root:
``OPENBLAS_NUM_THREADS=1 python tools/compile_profile.py [--learners a,b] [--baseline SRC] [-v]``.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "tools" / "results"

# runs the demo in-process and prints one JSON record per numba:compile event
_PROFILE = r"""
import contextlib, io, json, sys, time
from numba.core import event
stack, records = [], []
class Rec(event.Listener):
    def on_start(self, ev):
        stack.append([time.perf_counter(), time.process_time(), 0.0, 0.0, 0.0])
    def on_end(self, ev):
        t0, c0, nested, nested_cpu, llvm = stack.pop()
        dt = time.perf_counter() - t0
        dc = time.process_time() - c0
        if stack:
            stack[-1][2] += dt
            stack[-1][3] += dc
        disp = ev.data["dispatcher"]
        fn = getattr(disp, "py_func", None)
        name = f"{fn.__module__}.{fn.__qualname__}" if fn is not None else repr(disp)
        records.append({"name": name, "args": str(ev.data["args"]), "seconds": dt, "self_seconds": dt - nested,
                    "cpu": dc, "self_cpu": dc - nested_cpu, "llvm": llvm,
                        "top": not stack})
class Llvm(event.Listener):  # time in LLVM (optimisation, machine code), charged to the innermost compile
    def on_start(self, ev):
        llvm_start[0] = time.process_time()
    def on_end(self, ev):
        if stack:
            stack[-1][4] += time.process_time() - llvm_start[0]
llvm_start = [0.0]
event.register("numba:compile", Rec())
event.register("numba:llvm_lock", Llvm())
from streamlearn.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["demo", "--quiet", "--json"] + sys.argv[1:])
print(json.dumps({"code": code, "records": records}))
"""


def profile(src, learners):
    """Per-function compile seconds of a cold demo with the package in ``src``."""
    extra = ["--learners", learners] if learners else []
    demo = Path(src) / "streamlearn" / "experiments" / "demo.py"
    if demo.exists() and "--jobs" in demo.read_text():
        extra += ["--jobs", "1"]  # every compilation in the profiled process (no warm-up workers)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_CACHE_DIR=cache, PYTHONPATH=str(src))
        res = subprocess.run(
            [sys.executable, "-c", _PROFILE, *extra], env=env, check=True, capture_output=True, text=True, cwd=src
        )
    records = json.loads(res.stdout.strip().splitlines()[-1])["records"]
    funcs = {}
    for r in records:
        f = funcs.setdefault(
            r["name"],
            {
                "top": 0.0,
                "self": 0.0,
                "top_wall": 0.0,
                "self_wall": 0.0,
                "llvm": 0.0,
                "n": 0,
                "n_top": 0,
                "signatures": [],
            },
        )
        f["self"] += r["self_cpu"]
        f["self_wall"] += r["self_seconds"]
        f["llvm"] += r["llvm"]
        f["n"] += 1
        f["signatures"].append(r["args"])
        if r["top"]:
            f["top"] += r["cpu"]
            f["top_wall"] += r["seconds"]
            f["n_top"] += 1
    total = sum(f["top"] for f in funcs.values())
    wall = sum(f["top_wall"] for f in funcs.values())
    return {
        "source": str(src),
        "total_seconds": total,
        "total_wall_seconds": wall,
        "specialisations": len(records),
        "functions": funcs,
    }


def _short(name):
    return name.removeprefix("streamlearn.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learners", default=None, help="demo learners (default: all of them)")
    ap.add_argument("--baseline", metavar="SRC", help="also profile the package in SRC")
    ap.add_argument("--top", type=int, default=40, help="rows of the table (default 40)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every signature")
    args = ap.parse_args()
    runs = [("this tree", profile(ROOT, args.learners))]
    if args.baseline:
        runs.append(("baseline", profile(Path(args.baseline).resolve(), args.learners)))
    names = sorted(
        {n for _, p in runs for n in p["functions"]},
        key=lambda n: -max(p["functions"].get(n, {}).get("self", 0.0) for _, p in runs),
    )
    head = "| function | " + " | ".join(f"{label}: self s | of which LLVM | top s | specs" for label, _ in runs) + " |"
    lines = [
        "# Cold demo: numba compile seconds per jitted function",
        "",
        "Command: `OPENBLAS_NUM_THREADS=1 python tools/compile_profile.py"
        + (f" --learners {args.learners}" if args.learners else "")
        + (f" --baseline {args.baseline}" if args.baseline else "")
        + "` (CPU seconds of the process: less sensitive than wall time to the load of a shared machine).",
        "",
        "; ".join(
            f"{label}: {p['total_seconds']:.1f} s top-level ({p['total_wall_seconds']:.1f} s wall), "
            f"{p['specialisations']} specialisations"
            for label, p in runs
        ),
        "",
        head,
        "|---|" + "---|---|---|---|" * len(runs),
    ]
    for n in names[: args.top]:
        cells = []
        for _, p in runs:
            f = p["functions"].get(n)
            cells.append(f"{f['self']:.2f} | {f['llvm']:.2f} | {f['top']:.2f} | {f['n']}" if f else "- | - | - | -")
        lines.append(f"| {_short(n)} | " + " | ".join(cells) + " |")
    if args.verbose:
        for label, p in runs:
            lines += ["", f"## Signatures ({label})", ""]
            for n in names:
                f = p["functions"].get(n)
                for s in f["signatures"] if f else ():
                    lines.append(f"- {_short(n)}{s}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compile_profile.json").write_text(
        json.dumps({"learners": args.learners, "runs": dict(runs)}, indent=1) + "\n"
    )
    (RESULTS / "compile_profile.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
