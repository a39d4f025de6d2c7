"""Start-up, teardown and cold-compile times of the ``streamlearn`` command, as ratios to ``import numba``.

Measured in one run, each command a fresh process:

* ``streamlearn --version``, ``--help``, ``learners`` (warm, median of 7): target <= 0.3 s; they import no
  numba, scipy or scikit-learn.
* ``python -c "import numba"`` (median of 7): the peer every time is divided by; and, as the floor of any
  command that learns, the bare interpreter and the imports of numpy, scipy.sparse and numba (median of 7).
* teardown: ``streamlearn train a9a -l pa1`` through ``entry_point`` (normal exit after ``gc.freeze()``)
  against the same ``main()`` ended by a plain ``sys.exit`` (teardown with full garbage collections) and by
  ``os._exit`` (no teardown at all), medians of 5, warm numba cache.
* cold demo: ``streamlearn demo --quiet`` with an empty ``NUMBA_CACHE_DIR``; the time numba spends
  compiling in the demo's process (sum of its top-level ``numba:compile`` events, wall and CPU time), the
  number of specialisations it compiled, the CPU time of the warm-up workers the demo forks (one per extra
  CPU: they compile the other learners' kernels into the cache) and the wall time; then the same demo with
  the now warm cache. The first-run wait is the cold wall time minus the warm one: what a user waits for
  compilation on the first ``make run``. ``--baseline SRC`` also runs the cold demo
  with the package from another source tree (e.g. a checkout of the previous version) in the same run.
  ``tools/compile_profile.py`` splits that compile time by jitted function.

Writes ``benchmarks/results/startup.md`` and ``startup.json``. Run:
``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/startup.py [--baseline SRC] [--skip-demo]``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import timed_env

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

# runs the demo in-process and prints numba's compile time (top-level compile events) as JSON
_COLD_DEMO = r"""
import json, resource, sys, time
from numba.core import event
depth, starts, total, cpu, n = [0], [], [0.0], [0.0], [0]
class Rec(event.Listener):
    def on_start(self, ev):
        depth[0] += 1; starts.append((time.perf_counter(), time.process_time())); n[0] += 1
    def on_end(self, ev):
        depth[0] -= 1; t, c = starts.pop()
        if depth[0] == 0: total[0] += time.perf_counter() - t; cpu[0] += time.process_time() - c
event.register("numba:compile", Rec())
t0, c0 = time.perf_counter(), time.process_time()
from streamlearn.cli.main import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["demo", "--quiet", "--json"] + sys.argv[1:])
import streamlearn
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"workers_cpu_seconds": kids.ru_utime + kids.ru_stime,
                  "source": streamlearn.__file__, "code": code, "compile_seconds": total[0], "compile_cpu_seconds": cpu[0],
                  "specialisations": n[0],
                  "wall_seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}))
"""


def _time(cmd, env, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _env(src=None, **extra):
    env = timed_env(OPENBLAS_NUM_THREADS="1", **extra)
    env["PYTHONPATH"] = str(src or ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _cold_demo(src, learners):
    extra = ["--learners", learners] if learners else []
    with tempfile.TemporaryDirectory() as cache:
        env = _env(src, NUMBA_CACHE_DIR=cache)
        # cwd=src: `python -c` and `-m` put the working directory first on sys.path
        res = subprocess.run(
            [sys.executable, "-c", _COLD_DEMO, *extra], env=env, check=True, capture_output=True, text=True, cwd=src
        )
        cold = json.loads(res.stdout.strip().splitlines()[-1])
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "streamlearn", "demo", "--quiet", *extra],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            cwd=src,
        )
        cold["warm_wall_seconds"] = time.perf_counter() - t0
    return cold


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", metavar="SRC", help="also run the cold demo with the package in SRC")
    ap.add_argument("--skip-demo", action="store_true", help="skip the cold demo (minutes)")
    ap.add_argument("--learners", default=None, help="demo learners (default: all of them)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from streamlearn._cpus import available_cpus
    from streamlearn.datasets import bundled_path

    env = _env()
    sl = [sys.executable, "-m", "streamlearn"]
    rows = []
    numba_s = _time([sys.executable, "-c", "import numba"], env, 7)
    rows.append({"what": "python -c 'import numba' (the peer)", "seconds": numba_s})
    # the floor of any command that learns: the interpreter and the libraries every kernel needs
    for code, what in (
        ("pass", "python -c 'pass' (the interpreter)"),
        ("import numpy", "python -c 'import numpy'"),
        ("import numpy, scipy.sparse", "python -c 'import numpy, scipy.sparse'"),
        (
            "import numpy, scipy.sparse, numba",
            "python -c 'import numpy, scipy.sparse, numba' (the libraries every learning command needs)",
        ),
    ):
        rows.append({"what": what, "seconds": _time([sys.executable, "-c", code], env, 7)})
    for args_ in (["--version"], ["--help"], ["learners"]):
        rows.append(
            {
                "what": f"streamlearn {' '.join(args_)} (warm)",
                "seconds": _time(sl + args_, env, 7),
                "target_seconds": 0.3,
            }
        )
    a9a = str(bundled_path("a9a.xz"))
    train = ["train", a9a, "-l", "pa1", "--quiet"]
    _time(sl + train, env, 1)  # warm the numba cache
    rows.append(
        {
            "what": "streamlearn train a9a -l pa1: entry_point (gc.freeze, normal exit)",
            "seconds": _time(sl + train, env, 5),
        }
    )
    rows.append(
        {
            "what": "same, with numba's own cache load (STREAMLEARN_NUMBA_OWN_LOAD=1: its refresh before a load)",
            "seconds": _time(sl + train, {**env, "STREAMLEARN_NUMBA_OWN_LOAD": "1"}, 5),
        }
    )
    plain = f"import sys; from streamlearn.cli.main import main; sys.exit(main({train!r}))"
    rows.append(
        {
            "what": "same, main() then plain sys.exit (teardown with full collections)",
            "seconds": _time([sys.executable, "-c", plain], env, 5),
        }
    )
    skip = (
        f"import os, sys; from streamlearn.cli.main import main; c = main({train!r}); sys.stdout.flush(); os._exit(c)"
    )
    rows.append(
        {
            "what": "same, main() then os._exit (no teardown; the previous entry_point)",
            "seconds": _time([sys.executable, "-c", skip], env, 5),
        }
    )
    demos = []
    if not args.skip_demo:
        runs = [("this tree", ROOT)] + ([("baseline", Path(args.baseline).resolve())] if args.baseline else [])
        for label, src in runs:
            d = _cold_demo(src, args.learners)
            d["source"] = label
            demos.append(d)
            d.setdefault("workers_cpu_seconds", 0.0)
            d["first_run_wait_seconds"] = d["wall_seconds"] - d["warm_wall_seconds"]
            d["all_compile_cpu_seconds"] = d["compile_cpu_seconds"] + d["workers_cpu_seconds"]
            rows += [
                {
                    "what": f"cold demo ({label}): numba compile time in the demo's process, "
                    f"{d['specialisations']} specialisations",
                    "seconds": d["compile_seconds"],
                },
                {
                    "what": f"cold demo ({label}): numba compile CPU time in the demo's process",
                    "seconds": d["compile_cpu_seconds"],
                },
                {"what": f"cold demo ({label}): CPU time of its warm-up workers", "seconds": d["workers_cpu_seconds"]},
                {"what": f"cold demo ({label}): wall time, empty cache", "seconds": d["wall_seconds"]},
                {"what": f"demo ({label}): wall time, warm cache", "seconds": d["warm_wall_seconds"]},
                {
                    "what": f"first-run wait ({label}): cold minus warm wall time",
                    "seconds": d["first_run_wait_seconds"],
                },
            ]
    for r in rows:
        r["ratio_to_import_numba"] = r["seconds"] / numba_s
    load = os.getloadavg()[0]
    command = (
        "OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/startup.py"
        + (f" --baseline {args.baseline}" if args.baseline else "")
        + (f" --learners {args.learners}" if args.learners else "")
    )
    out = {"command": command, "load_average_1min": load, "rows": rows, "cold_demo": demos}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "startup.json").write_text(json.dumps(out, indent=1) + "\n")
    intro = (
        f"Command: `{command}` (1-minute load average at the end: {load:.1f} on 2 cores; every time is "
        "also given as a ratio to `python -c 'import numba'` measured in the same run)."
    )
    lines = [
        "# streamlearn start-up, teardown and cold compile",
        "",
        intro,
        "",
        "| what | seconds | / import numba | target |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['what']} | {r['seconds']:.2f} | {r['ratio_to_import_numba']:.2f} | {r.get('target_seconds') or '-'} |"
        for r in rows
    ]
    if len(demos) == 2:
        this, base = demos
        wait = this["first_run_wait_seconds"] / base["first_run_wait_seconds"]
        cpu = this["all_compile_cpu_seconds"] / base["all_compile_cpu_seconds"]
        lines += [
            "",
            f"Cold demo, this tree / baseline, on {available_cpus()} CPUs: first-run wait (cold minus warm wall time) "
            f"{wait:.2f}; compile CPU time of the demo's process plus its warm-up workers {cpu:.2f} (the work "
            "itself; the wait is shorter where the workers run on other CPUs).",
        ]
    (RESULTS / "startup.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
