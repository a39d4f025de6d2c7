"""Peak memory of ``streamlearn train -`` reading ever longer streams from a pipe: it must stay flat.

a9a (decompressed from the shared data, or the bundled copy) is written again and again into the standard
input of ``python -m streamlearn train - --learner pa1 --quiet`` by this process (a pipe: no file, no seek,
no second read) until the stream holds ``--sizes-mb`` megabytes (default 64, 256 and 1100: the last one is
above 1 GB). For each length the child's peak resident set size is read from ``wait4``'s ``ru_maxrss``
(Linux: the child's high-water mark, which includes the interpreter, numpy, scipy, scikit-learn and numba),
with the wall time and the rows trained. The figure that matters is the ratio of each peak to the shortest
stream's peak, measured in the same run.

Also checks once that the model trained from the pipe equals the model trained from the file (a9a, pa1).

Writes ``benchmarks/results/stream_rss.json`` and ``stream_rss.md``. Command: ``python benchmarks/stream_rss.py``.
"""

import argparse
import contextlib
import json
import lzma
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"


def _a9a_text():
    shared = os.environ.get("STREAMLEARN_SHARED_DATA", "/work/shared/data")
    path = Path(shared) / "a9a" / "a9a.xz"
    if not path.exists():
        sys.path.insert(0, str(ROOT))
        from streamlearn.datasets import bundled_path

        path = Path(bundled_path("a9a.xz"))
    with lzma.open(path) as f:
        return f.read(), str(path)


def _feed(pipe, text, total):
    written = 0
    try:
        while written < total:
            pipe.write(text)
            written += len(text)
    except BrokenPipeError:
        pass
    finally:
        with contextlib.suppress(BrokenPipeError):
            pipe.close()
    return written


def run_one(text, total_bytes, extra=()):
    """Train from a pipe fed with ``total_bytes`` of repeated a9a; returns the measurements."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "streamlearn", "train", "-", "--learner", "pa1", "--json", *extra]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    written = []
    feeder = threading.Thread(target=lambda: written.append(_feed(proc.stdin, text, total_bytes)))
    feeder.start()
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    feeder.join()
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {err.decode()[-500:]}")
    report = json.loads(out)
    return {
        "stream_bytes": written[0],
        "stream_mb": written[0] / 1e6,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "seconds": seconds,
        "n_train": report["n_train"],
        "n_features": report["n_features"],
        "examples_per_second": report["n_train"] / seconds,
        "command": " ".join(cmd[1:]),
    }


def same_model_check(text, tmp):
    """Model from the pipe == model from the file (a9a, pa1)."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from streamlearn.persist import load

    plain = Path(tmp) / "a9a"
    plain.write_bytes(text)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    base = [sys.executable, "-m", "streamlearn", "train"]
    subprocess.run([*base, str(plain), "-l", "pa1", "--quiet", "-o", f"{tmp}/file.slm"], env=env, check=True)
    subprocess.run([*base, "-", "-l", "pa1", "--quiet", "-o", f"{tmp}/pipe.slm"], env=env, check=True, input=text)
    a, b = load(f"{tmp}/file.slm"), load(f"{tmp}/pipe.slm")
    return bool(np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sizes-mb", type=float, nargs="+", default=[64, 256, 1100], help="stream lengths in MB (default 64 256 1100)"
    )
    args = ap.parse_args()
    text, source = _a9a_text()
    rows = []
    for mb in args.sizes_mb:
        row = run_one(text, int(mb * 1e6))
        rows.append(row)
        print(
            f"{row['stream_mb']:8.0f} MB  peak RSS {row['peak_rss_mb']:7.1f} MB  {row['seconds']:6.1f} s  "
            f"{row['n_train']} rows",
            flush=True,
        )
    with tempfile.TemporaryDirectory() as tmp:
        same = same_model_check(text, tmp)
    base = rows[0]["peak_rss_mb"]
    for row in rows:
        row["rss_ratio_to_shortest"] = row["peak_rss_mb"] / base
    load = os.getloadavg()[0]
    result = {
        "benchmark": "stream_rss",
        "source": os.path.basename(source),
        "a9a_bytes": len(text),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "load_average_1min": load,
        "pipe_model_equals_file_model": same,
        "runs": rows,
        "command": "python benchmarks/stream_rss.py " + " ".join(sys.argv[1:]),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "stream_rss.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "# Peak memory of `streamlearn train -` over a pipe, by stream length",
        "",
        (
            f"Command: `{result['command'].strip()}` (a9a repeated into the pipe; learner pa1; 1-minute load "
            f"average {load:.2f} on {os.cpu_count()} cores). Peak RSS is the child's `ru_maxrss` (interpreter and "
            "libraries included)."
        ),
        "",
        "| stream (MB) | rows | peak RSS (MB) | ratio to the shortest | seconds | examples/s |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['stream_mb']:.0f} | {r['n_train']} | {r['peak_rss_mb']:.1f} | "
            f"{r['rss_ratio_to_shortest']:.3f} | {r['seconds']:.1f} | {r['examples_per_second']:.0f} |"
        )
    lines += ["", f"Model trained from the pipe equal to the model trained from the file (a9a, pa1): {same}."]
    (RESULTS / "stream_rss.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
