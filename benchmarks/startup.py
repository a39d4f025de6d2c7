"""Wall time of ``streamlearn train`` on the bundled a9a, with an empty and with a warm numba cache.

Targets: <= 20 s with an empty cache, <= 3 s with a warm one. Each run is a fresh process
(``python -m streamlearn train <a9a.xz> --learner pa1 --test <a9a.t.xz> --quiet``); the empty cache is a
fresh NUMBA_CACHE_DIR. Also reported: the bare interpreter start + ``import sklearn`` time, the floor
that no streamlearn change can lower. Run: ``.venv/bin/python benchmarks/startup.py``.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def _time(cmd, env):
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    from streamlearn.datasets import bundled_path

    train, test = str(bundled_path("a9a.xz")), str(bundled_path("a9a.t.xz"))
    cmd = [sys.executable, "-m", "streamlearn", "train", train, "--learner", "pa1", "--test", test, "--quiet"]
    floor_cmd = [sys.executable, "-c", "import sklearn.base, scipy.sparse, numba"]
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        cold = _time(cmd, env)
        warm = sorted(_time(cmd, env) for _ in range(5))
        floor = sorted(_time(floor_cmd, env) for _ in range(5))
    load = os.getloadavg()[0]
    rows.append({"what": "streamlearn train a9a (empty numba cache)", "seconds": cold, "target_seconds": 20})
    rows.append({"what": "streamlearn train a9a (warm cache, median of 5)", "seconds": warm[2], "target_seconds": 3})
    rows.append({"what": "python -c 'import sklearn.base, scipy.sparse, numba' (median of 5)",
                 "seconds": floor[2], "target_seconds": None})
    RESULTS.mkdir(exist_ok=True)
    out = {"command": " ".join(["python benchmarks/startup.py"]), "load_average_1min": load, "rows": rows}
    (RESULTS / "startup.json").write_text(json.dumps(out, indent=1))
    lines = ["# streamlearn train start-up time", "", "Command: `.venv/bin/python benchmarks/startup.py` "
             f"(1-minute load average during the run: {load:.2f} on 2 cores)", "",
             "| what | seconds | target |", "|---|---|---|"]
    lines += [f"| {r['what']} | {r['seconds']:.2f} | {r['target_seconds'] or '-'} |" for r in rows]
    (RESULTS / "startup.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
