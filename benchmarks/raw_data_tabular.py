"""CSV and Parquet in: parse + hash throughput of ``iter_csv`` / ``iter_parquet`` against pandas + scikit-learn's
``FeatureHasher``, and peak memory as the file grows.

What is measured, and how it is kept fair:

* The data is the generated click log (``streamlearn.datasets.write_click_log``: 4 numeric columns with
  heavy tails, 6 categorical columns with Zipf-distributed values, a 0/1 label), written as CSV and as
  Parquet with ``--rows`` rows (the throughput size) and at every ``--sizes`` size (the memory sizes).
* Every measurement runs in a fresh subprocess that first warms up on a 1,000-row file (numba kernels
  loaded from their cache, pyarrow / pandas / scikit-learn imported), then reads the whole file, turns it
  into hashed sparse chunks of ``--chunk-size`` rows and their labels, and drops them:
  - ``iter_csv`` / ``iter_parquet`` (``label="clicked"``, ``bits=18``);
  - the peer: ``pandas.read_csv(path, chunksize=CHUNK)``, the label column popped, then
    ``FeatureHasher(n_features=2**18, input_type="dict", alternate_sign=False).transform(
    chunk.to_dict("records"))`` -- the same rows, the same features (numbers as values, strings as
    ``column=value``) and the same number of buckets;
  - for Parquet a second peer: ``ParquetFile.iter_batches(CHUNK)`` -> ``to_pandas()`` -> the same
    ``FeatureHasher``.
  Wall and CPU seconds (``time.process_time``: pyarrow's reader threads count) are the child's own; runs of
  the modes alternate and each figure is the best of ``--repeats``. The row counts of every mode must
  agree (checked before writing results); the stored non-zeros are recorded and differ only by hash
  collisions (the two hash functions differ, so their collisions do too).
* Memory: peak RSS (``VmHWM``) of ``iter_csv`` / ``iter_parquet`` children at each size; "flat" means the
  peak at the largest size is within ``10 %`` of the peak at the smallest one. The RSS after imports and
  warm-up is reported beside it.

Writes ``benchmarks/results/raw_data_tabular.json`` (every raw figure) and ``raw_data_tabular.md``.
``python benchmarks/raw_data_tabular.py --help`` for the options; ``--quick`` is a 1-minute smoke run.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import command

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
BITS = 18


# ---------------------------------------------------------------------------------------------------
# child: one reading run
def _status_mb(key):
    """The ``key`` line (``VmHWM``, ``VmRSS``) of /proc/self/status in MB; None without it."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _peak_rss_mb():
    peak = _status_mb("VmHWM")
    if peak is None:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return peak


def _rss_mb():
    rss = _status_mb("VmRSS")
    return float("nan") if rss is None else rss


def _run_mode(mode, path, chunk):
    """(rows, nnz) after reading ``path`` with ``mode``."""
    rows = nnz = 0
    if mode in ("iter_csv", "iter_parquet"):
        from streamlearn.datasets import iter_csv, iter_parquet

        reader = (iter_csv if mode == "iter_csv" else iter_parquet)(path, label="clicked", bits=BITS, chunk_size=chunk)
        for X, _y in reader:
            rows += X.shape[0]
            nnz += X.nnz
        return rows, nnz
    from sklearn.feature_extraction import FeatureHasher

    hasher = FeatureHasher(n_features=1 << BITS, input_type="dict", alternate_sign=False)
    if mode == "pandas_csv":
        import pandas as pd

        frames = pd.read_csv(path, chunksize=chunk)
    else:  # pandas_parquet
        import pyarrow.parquet as pq

        frames = (b.to_pandas() for b in pq.ParquetFile(path).iter_batches(batch_size=chunk))
    for df in frames:
        y = df.pop("clicked").to_numpy()
        X = hasher.transform(df.to_dict("records"))
        rows += X.shape[0]
        nnz += X.nnz
        del y
    return rows, nnz


def child(mode, path, warm_path, chunk):
    _run_mode(mode, warm_path, chunk)
    rss_warm = _rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    rows, nnz = _run_mode(mode, path, chunk)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        json.dumps(
            {
                "mode": mode,
                "rows": rows,
                "nnz": nnz,
                "wall_s": wall,
                "cpu_s": cpu,
                "rss_after_warmup_mb": rss_warm,
                "peak_rss_mb": _peak_rss_mb(),
            }
        )
    )


# ---------------------------------------------------------------------------------------------------
# parent
def _spawn(mode, path, warm, chunk, **tags):
    """One reader run in a fresh process: its measurements, the file's size in MB and ``tags``."""
    env = dict(
        os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""), OPENBLAS_NUM_THREADS="1"
    )
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path), str(warm), str(chunk)],
        capture_output=True,
        text=True,
        env=env,
    )
    if out.returncode:
        raise RuntimeError(f"{mode} on {path} failed:\n{out.stderr}")
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "file_mb": os.path.getsize(path) / 1e6, **tags}


def _files(workdir, n, seed):
    from streamlearn.datasets import write_click_log

    csv, parquet = Path(workdir) / f"clicks_{n}.csv", Path(workdir) / f"clicks_{n}.parquet"
    for p in (csv, parquet):
        if not p.exists():
            write_click_log(p, n, seed=seed)
    return csv, parquet


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the throughput files (default 1M)")
    ap.add_argument(
        "--sizes", default="1000000,2000000,4000000", help="row counts of the memory runs (default 1M,2M,4M)"
    )
    ap.add_argument("--chunk-size", type=int, default=100_000, help="rows per chunk, every reader (100000)")
    ap.add_argument("--repeats", type=int, default=2, help="throughput runs per mode, best kept (2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default=None, help="where the files go (default: a temporary directory)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 100k rows, sizes 50k,100k,200k")
    ap.add_argument("--child", nargs=4, metavar=("MODE", "PATH", "WARM", "CHUNK"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        mode, path, warm, chunk = args.child
        return child(mode, path, warm, int(chunk))
    if args.quick:
        args.rows, args.sizes, args.repeats = 100_000, "50000,100000,200000", 1
    sizes = [int(s) for s in args.sizes.split(",")]
    tmp = tempfile.TemporaryDirectory(prefix="raw_data_tabular_")
    workdir = Path(args.workdir or tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    start = time.time()
    warm_csv, warm_pq = _files(workdir, 1000, args.seed + 1)
    csv, parquet = _files(workdir, args.rows, args.seed)

    throughput = []
    for r in range(args.repeats):
        for mode, path, warm in (
            ("iter_csv", csv, warm_csv),
            ("pandas_csv", csv, warm_csv),
            ("iter_parquet", parquet, warm_pq),
            ("pandas_parquet", parquet, warm_pq),
        ):
            res = _spawn(mode, path, warm, args.chunk_size, repeat=r)
            throughput.append(res)
            print(
                f"{mode:15s} {res['rows']:>9d} rows {res['wall_s']:7.2f} s wall {res['cpu_s']:7.2f} s cpu "
                f"peak {res['peak_rss_mb']:6.0f} MB",
                flush=True,
            )
    rows = {t["rows"] for t in throughput}
    nnz = {t["mode"]: t["nnz"] for t in throughput}
    if rows != {args.rows}:
        raise SystemExit(f"row counts differ between readers: {rows}")

    memory = []
    for n in sizes:
        c, p = _files(workdir, n, args.seed)
        for mode, path, warm in (("iter_csv", c, warm_csv), ("iter_parquet", p, warm_pq)):
            res = _spawn(mode, path, warm, args.chunk_size, size=n)
            memory.append(res)
            print(
                f"memory {mode:13s} {n:>9d} rows peak {res['peak_rss_mb']:6.0f} MB "
                f"(after warm-up {res['rss_after_warmup_mb']:.0f} MB)",
                flush=True,
            )
            path.unlink() if n != args.rows else None

    def best(mode, key="wall_s"):
        return min(t[key] for t in throughput if t["mode"] == mode)

    summary = {}
    for ours, peers in (("iter_csv", ("pandas_csv",)), ("iter_parquet", ("pandas_csv", "pandas_parquet"))):
        for peer in peers:
            summary[f"{ours}_vs_{peer}"] = {
                "speedup_wall": best(peer) / best(ours),
                "speedup_cpu": best(peer, "cpu_s") / best(ours, "cpu_s"),
            }
    flat = {}
    for mode in ("iter_csv", "iter_parquet"):
        peaks = [m["peak_rss_mb"] for m in memory if m["mode"] == mode]
        flat[mode] = {"peak_rss_mb": peaks, "growth": peaks[-1] / peaks[0] - 1.0, "flat": peaks[-1] <= 1.10 * peaks[0]}
    out = {
        "command": command("raw_data_tabular.py", argv),
        "rows": args.rows,
        "sizes": sizes,
        "chunk_size": args.chunk_size,
        "bits": BITS,
        "repeats": args.repeats,
        "nnz": nnz,
        "throughput": throughput,
        "memory": memory,
        "summary": summary,
        "memory_flat": flat,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "seconds": time.time() - start,
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "versions": _versions(),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "raw_data_tabular.json").write_text(json.dumps(out, indent=1))
    (RESULTS / "raw_data_tabular.md").write_text(_markdown(out))
    print(_markdown(out))
    tmp.cleanup()
    return 0


def _versions():
    import numba
    import pandas
    import pyarrow
    import sklearn

    return {
        "pyarrow": pyarrow.__version__,
        "pandas": pandas.__version__,
        "scikit-learn": sklearn.__version__,
        "numba": numba.__version__,
    }


def _markdown(out):
    def best(mode, key):
        return min(t[key] for t in out["throughput"] if t["mode"] == mode)

    n = out["rows"]
    lines = [
        "# CSV and Parquet: parse + hash throughput and memory",
        "",
        f"Generated click log, {n:,} rows (label + 10 columns), hashed into 2^{out['bits']} buckets, chunks of "
        f"{out['chunk_size']:,} rows; best of {out['repeats']} runs per mode, each in a fresh warmed-up "
        f"subprocess, modes alternating. {out['cpus']} CPUs shared with other jobs: compare ratios, not "
        "absolute times.",
        "",
        f"Command: `{out['command']}` ({out['date_utc']} UTC; pyarrow {out['versions']['pyarrow']}, pandas "
        f"{out['versions']['pandas']}, scikit-learn {out['versions']['scikit-learn']}).",
        "",
        "| reader | file MB | wall s | rows/s (wall) | CPU s | stored non-zeros |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    labels = {
        "iter_csv": "`iter_csv`",
        "pandas_csv": "`pandas.read_csv` + `FeatureHasher`",
        "iter_parquet": "`iter_parquet`",
        "pandas_parquet": "Parquet batches `to_pandas` + `FeatureHasher`",
    }
    for mode in ("iter_csv", "pandas_csv", "iter_parquet", "pandas_parquet"):
        mb = next(t["file_mb"] for t in out["throughput"] if t["mode"] == mode)
        w = best(mode, "wall_s")
        lines.append(
            f"| {labels[mode]} | {mb:.0f} | {w:.2f} | {n / w:,.0f} | {best(mode, 'cpu_s'):.2f} | {out['nnz'][mode]:,} |"
        )
    lines += ["", "| ours vs peer | speed-up (wall) | speed-up (CPU) |", "|---|---:|---:|"]
    for key, s in out["summary"].items():
        ours, peer = key.split("_vs_")
        lines.append(f"| {labels[ours]} vs {labels[peer]} | {s['speedup_wall']:.1f}x | {s['speedup_cpu']:.1f}x |")
    lines += [
        "",
        "Peak RSS (VmHWM) of one reading process, by file size:",
        "",
        "| reader | " + " | ".join(f"{s:,} rows" for s in out["sizes"]) + " | growth | flat (<= 10 %) |",
        "|---|" + "---:|" * len(out["sizes"]) + "---:|---|",
    ]
    for mode, f in out["memory_flat"].items():
        lines.append(
            f"| {labels[mode]} | "
            + " | ".join(f"{p:.0f} MB" for p in f["peak_rss_mb"])
            + f" | {100 * f['growth']:+.1f} % | {'yes' if f['flat'] else 'no'} |"
        )
    warm = [m["rss_after_warmup_mb"] for m in out["memory"]]
    lines += ["", f"RSS after imports and warm-up: {min(warm):.0f}-{max(warm):.0f} MB.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
