"""Peak memory of ``streamlearn train -`` reading ever longer streams from a pipe: it must stay flat.

a9a (decompressed from the shared data, or the bundled copy) is written again and again into the standard
input of ``python -m streamlearn train - --learner pa1 --quiet`` by this process (a pipe: no file, no seek,
no second read) until the stream holds ``--sizes-mb`` megabytes (default 64, 256 and 1100: the last one is
above 1 GB). For each length the child's peak resident set size is read from ``wait4``'s ``ru_maxrss``
(Linux: the child's high-water mark, which includes the interpreter, numpy, scipy, scikit-learn and numba),
with the wall time and the rows trained. The figure that matters is the ratio of each peak to the shortest
stream's peak, measured in the same run.

The same for the raw formats: a synthetic click log (``write_click_log``, ``--click-rows`` rows, default
100,000) as VW text and as CSV (its header once, then the rows again and again), trained by ``ftrl -b 18 -q ua``
from the pipe, for streams of 1x, 4x and 16x those rows.

Also checks once per format that the model trained from the pipe equals the model trained from the file
(a9a with pa1: same arrays; click logs with ftrl: same model file members).

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


LEARNERS = {
    "libsvm": ["--learner", "pa1"],
    "vw": ["--format", "vw", "--learner", "ftrl", "-b", "18", "-q", "ua"],
    "csv": ["--format", "csv", "--learner", "ftrl", "-b", "18", "-q", "ua", "--label", "clicked"],
}


def _click_text(fmt, n_rows, tmp):
    """A click log of ``n_rows`` as ``(header, body)`` bytes (the header is empty for VW text)."""
    sys.path.insert(0, str(ROOT))
    from streamlearn.datasets import write_click_log

    path = Path(tmp) / f"clicks.{fmt}"
    write_click_log(path, n_rows, seed=1)
    data = path.read_bytes()
    if fmt == "csv":
        header, _, body = data.partition(b"\n")
        return header + b"\n", body
    return b"", data


def _feed_all(pipe, header, text, total):
    try:
        pipe.write(header)
    except BrokenPipeError:
        return 0
    return len(header) + _feed(pipe, text, total - len(header))


def run_one(text, total_bytes, fmt="libsvm", header=b""):
    """Train from a pipe fed with ``header`` then ``text`` again and again up to ``total_bytes``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "streamlearn", "train", "-", *LEARNERS[fmt], "--json"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    written = []
    feeder = threading.Thread(target=lambda: written.append(_feed_all(proc.stdin, header, text, total_bytes)))
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
        "format": fmt,
        "stream_bytes": written[0],
        "stream_mb": written[0] / 1e6,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "seconds": seconds,
        "n_train": report["n_train"],
        "n_features": report["n_features"],
        "examples_per_second": report["n_train"] / seconds,
        "command": " ".join(cmd[1:]),
    }


def same_model_check(text, tmp, fmt="libsvm", header=b""):
    """Model from the pipe == model from the file (a9a with pa1: same arrays; click logs: same members)."""
    import zipfile

    import numpy as np

    sys.path.insert(0, str(ROOT))
    from streamlearn.persist import load

    plain = Path(tmp) / f"data.{fmt}"
    plain.write_bytes(header + text)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    base = [sys.executable, "-m", "streamlearn", "train"]
    opts = LEARNERS[fmt] if fmt == "libsvm" else LEARNERS[fmt][2:]  # the file path: no --format
    subprocess.run([*base, str(plain), *opts, "--quiet", "-o", f"{tmp}/file.slm"], env=env, check=True)
    subprocess.run([*base, "-", *opts, "--quiet", "-o", f"{tmp}/pipe.slm"], env=env, check=True, input=header + text)
    if fmt != "libsvm":
        members = []
        for name in ("file", "pipe"):
            with zipfile.ZipFile(f"{tmp}/{name}.slm") as z:
                members.append([(i.filename, z.read(i)) for i in z.infolist()])
        return members[0] == members[1]
    a, b = load(f"{tmp}/file.slm"), load(f"{tmp}/pipe.slm")
    return bool(np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sizes-mb", type=float, nargs="+", default=[64, 256, 1100], help="stream lengths in MB (default 64 256 1100)"
    )
    ap.add_argument(
        "--click-rows", type=int, default=100_000, help="rows of the click log fed 1x, 4x, 16x (default 100000)"
    )
    args = ap.parse_args()
    text, source = _a9a_text()
    rows = []
    same = {}

    def show(row):
        print(
            f"{row['format']:7s}{row['stream_mb']:8.0f} MB  peak RSS {row['peak_rss_mb']:7.1f} MB  "
            f"{row['seconds']:6.1f} s  {row['n_train']} rows",
            flush=True,
        )

    for mb in args.sizes_mb:
        rows.append(run_one(text, int(mb * 1e6)))
        show(rows[-1])
    with tempfile.TemporaryDirectory() as tmp:
        same["libsvm"] = same_model_check(text, tmp)
    for fmt in ("vw", "csv"):
        with tempfile.TemporaryDirectory() as tmp:
            header, body = _click_text(fmt, args.click_rows, tmp)
            same[fmt] = same_model_check(body, tmp, fmt, header)
        for times in (1, 4, 16):
            rows.append(run_one(body, len(header) + times * len(body), fmt, header))
            show(rows[-1])
    for row in rows:
        first = next(r for r in rows if r["format"] == row["format"])
        row["rss_ratio_to_shortest"] = row["peak_rss_mb"] / first["peak_rss_mb"]
    load = os.getloadavg()[0]
    result = {
        "benchmark": "stream_rss",
        "source": os.path.basename(source),
        "a9a_bytes": len(text),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "load_average_1min": load,
        "pipe_model_equals_file_model": same,
        "click_rows": args.click_rows,
        "runs": rows,
        "command": "python benchmarks/stream_rss.py " + " ".join(sys.argv[1:]),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "stream_rss.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "# Peak memory of `streamlearn train -` over a pipe, by stream length",
        "",
        (
            f"Command: `{result['command'].strip()}` (LIBSVM: a9a repeated into the pipe, learner pa1; VW text and "
            f"CSV: a click log of {args.click_rows} rows repeated, the CSV header once, learner ftrl -b 18 -q ua; "
            f"1-minute load "
            f"average {load:.2f} on {os.cpu_count()} cores). Peak RSS is the child's `ru_maxrss` (interpreter and "
            "libraries included)."
        ),
        "",
        "| format | stream (MB) | rows | peak RSS (MB) | ratio to the shortest | seconds | examples/s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['format']} | {r['stream_mb']:.0f} | {r['n_train']} | {r['peak_rss_mb']:.1f} | "
            f"{r['rss_ratio_to_shortest']:.3f} | {r['seconds']:.1f} | {r['examples_per_second']:.0f} |"
        )
    lines += [
        "",
        "Model trained from the pipe equal to the model trained from the file: "
        + ", ".join(f"{k} {v}" for k, v in same.items())
        + ".",
    ]
    (RESULTS / "stream_rss.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
