"""Block minimization on a LIBSVM file larger than 2 GB: peak memory of ``streamlearn train --learner bm-svm``.

Run: ``.venv/bin/python benchmarks/bm_memory.py`` (about 15 minutes; needs ~5 GB free in the temp dir).
Writes ``benchmarks/results/bm_memory.{json,md}`` and deletes the big files afterwards (``--keep`` keeps the
data file).

1. ``write_svmlight_stream`` writes a synthetic binary bag-of-words file (default 2,432,040 rows, 10^6
   features, 100 non-zeros per row on average, Zipf frequencies: 2.17 GB) into a fresh temp directory.
2. For each ``--block-mb``, a fresh process runs
   ``python -m streamlearn train FILE --learner bm-svm --block-mb N --n-features 1000000 --zero-based false
   -p max_iter=K -o MODEL --json --quiet``: the file is streamed once through ``iter_svmlight`` (10,000-row
   chunks) into compressed blocks on disk, then K outer iterations each read every block once. Its peak
   resident memory is ``ru_maxrss`` of the child as seen by a wrapper process that runs nothing else
   (``resource.getrusage(RUSAGE_CHILDREN)``): the interpreter and its libraries included. For reference,
   the same is measured for a process that only imports the CLI and the estimators.
3. The saved model is scored on the first 50,000 rows of the same stream (``make_sparse_classification``
   gives exactly the file's rows) as a sanity check that it learnt.

Target: peak RSS <= 400 MB (reported in MB = 10^6 bytes and MiB).
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import run_info, write_results

PY = sys.executable

WRAPPER = r"""
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t0
print(json.dumps({"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr[-4000:],
                  "wall_seconds": wall,
                  "peak_rss_bytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))
"""


def _measure(cmd):
    out = subprocess.run([PY, "-c", WRAPPER] + cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_432_040)
    parser.add_argument("--n-features", type=int, default=1_000_000)
    parser.add_argument("--nnz-per-row", type=float, default=100.0)
    parser.add_argument("--block-mb", default="16,32,64", help="comma-separated block sizes (MiB)")
    parser.add_argument("--max-iter", type=int, default=3, help="outer iterations of each run")
    parser.add_argument("--tmp", default=None, help="directory for the data file and the blocks")
    parser.add_argument("--keep", action="store_true", help="keep the data file")
    args = parser.parse_args()

    from streamlearn.datasets import make_sparse_classification, write_svmlight_stream
    from streamlearn.persist import load

    parent = args.tmp or tempfile.gettempdir()
    free = shutil.disk_usage(parent).free
    need = int(args.rows * args.nnz_per_row * 10 * 2.5)
    if free < need:
        sys.exit(f"{parent}: {free / 1e9:.1f} GB free, this benchmark needs about {need / 1e9:.1f} GB.")
    work = Path(tempfile.mkdtemp(prefix="bm-memory-", dir=parent))
    data = work / "synthetic.svm"
    rows = []
    try:
        t0 = time.perf_counter()
        size = write_svmlight_stream(
            data, args.rows, args.n_features, nnz_per_row=args.nnz_per_row, random_state=0, chunk_size=50_000
        )
        gen_seconds = time.perf_counter() - t0
        print(f"wrote {data} ({size / 1e9:.2f} GB) in {gen_seconds:.0f} s", flush=True)
        base = _measure(
            [
                PY,
                "-c",
                "import streamlearn.cli.main, streamlearn.linear_model, "
                "streamlearn.datasets, streamlearn.evaluation.train_test",
            ]
        )
        print(f"imports only: peak RSS {base['peak_rss_bytes'] / 2**20:.0f} MiB", flush=True)
        X_check, y_check = make_sparse_classification(
            50_000, args.n_features, nnz_per_row=args.nnz_per_row, random_state=0
        )
        for block_mb in [float(b) for b in args.block_mb.split(",")]:
            model = work / f"bm-{block_mb:g}.slm"
            cmd = [
                PY,
                "-m",
                "streamlearn",
                "train",
                str(data),
                "--learner",
                "bm-svm",
                "--block-mb",
                f"{block_mb:g}",
                "--n-features",
                str(args.n_features),
                "--zero-based",
                "false",
                "-p",
                f"max_iter={args.max_iter}",
                "-p",
                "random_state=0",
                "-p",
                f"cache_dir={work}",
                "-o",
                str(model),
                "--json",
                "--quiet",
            ]
            res = _measure(cmd)
            if res["returncode"] != 0:
                raise RuntimeError(f"train failed ({res['returncode']}): {res['stderr']}")
            report = json.loads(res["stdout"].strip().splitlines()[-1])
            est = load(model)
            row = {
                "block_mb": block_mb,
                "peak_rss_bytes": res["peak_rss_bytes"],
                "wall_seconds": res["wall_seconds"],
                "n_train": report["n_train"],
                "n_blocks": report["n_blocks"],
                "outer_iterations": report["n_iter"],
                "objective": report["objective"],
                "dual_objective": report["dual_objective"],
                "relative_duality_gap": (report["objective"] - report["dual_objective"]) / report["objective"],
                "train_seconds": report["train_seconds"],
                "accuracy_first_50k_rows": float(est.score(X_check, y_check)),
            }
            rows.append(row)
            print(
                f"block_mb={block_mb:g}: peak RSS {row['peak_rss_bytes'] / 2**20:.0f} MiB, {row['n_blocks']} blocks, "
                f"{row['wall_seconds']:.0f} s, gap {row['relative_duality_gap']:.2e}, "
                f"acc {row['accuracy_first_50k_rows']:.4f}",
                flush=True,
            )
            model.unlink()
            leftovers = [p.name for p in work.iterdir() if p.name.startswith("streamlearn-blocks-")]
            assert not leftovers, f"block directories left behind: {leftovers}"
    finally:
        if args.keep:
            print(f"kept {data}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    out = {
        **run_info("python benchmarks/bm_memory.py " + " ".join(sys.argv[1:])),
        "file_bytes": size,
        "rows": args.rows,
        "n_features": args.n_features,
        "nnz_per_row": args.nnz_per_row,
        "generate_seconds": gen_seconds,
        "imports_only_peak_rss_bytes": base["peak_rss_bytes"],
        "runs": rows,
        "target_peak_rss_bytes": 400e6,
        "met": all(r["peak_rss_bytes"] <= 400e6 for r in rows),
    }
    lines = [
        "# Block minimization on a > 2 GB LIBSVM file: peak memory",
        "",
        f"Command: `.venv/bin/{out['command']}` (1-minute load average {out['load_average_1min']:.2f} on 2 cores).",
        "",
        f"Data: synthetic binary bag-of-words from `write_svmlight_stream` ({args.rows:,} rows, "
        f"{args.n_features:,} features, {args.nnz_per_row:g} non-zeros per row on average, Zipf frequencies): "
        f"{size / 1e9:.2f} GB ({size / 2**30:.2f} GiB) of LIBSVM text, written in {gen_seconds:.0f} s.",
        "",
        "Each run is a fresh `python -m streamlearn train DATA --learner bm-svm --block-mb N --n-features ... "
        f"--zero-based false -p max_iter={args.max_iter}`: one streaming pass splits the file into compressed "
        f"blocks, then {args.max_iter} outer iterations read every block once each. Peak RSS = `ru_maxrss` of "
        "that process (interpreter and libraries included). A process that only imports the CLI and the "
        f"estimators peaks at {base['peak_rss_bytes'] / 2**20:.0f} MiB.",
        "",
        "| block_mb | blocks | peak RSS MB (MiB) | wall s | outer iterations | objective | relative duality gap "
        "| accuracy, first 50k rows |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['block_mb']:g} | {r['n_blocks']} | **{r['peak_rss_bytes'] / 1e6:.0f}** "
            f"({r['peak_rss_bytes'] / 2**20:.0f}) | {r['wall_seconds']:.0f} | {r['outer_iterations']} | "
            f"{r['objective']:.6g} | {r['relative_duality_gap']:.2e} | {r['accuracy_first_50k_rows']:.4f} |"
        )
    lines += [
        "",
        f"Target: peak RSS <= 400 MB: {'met' if out['met'] else 'NOT met'} for every block size above. "
        "The data file and every block were deleted afterwards.",
    ]
    write_results("bm_memory", out, lines)


if __name__ == "__main__":
    main()
