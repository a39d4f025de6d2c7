"""streamlearn.distributed on a LocalCluster: sketching speed with 2 workers vs 1 process, and parameter-mixing
training time and accuracy vs one sequential pass.

What is measured, and how it is kept fair:

* (a) Sketching. Data: ``make_sparse_classification(400_000, 20_000, nnz_per_row=50, zipf_a=1.1,
  random_state=0)`` (density 0.25 %, binary values), written ONCE by ``write_svmlight_stream`` as a LIBSVM
  text file and cut into ``--partitions`` (default 4) files of consecutive rows, cached under ``--tmp``
  (not timed; reused by later runs with the same sizes). Transfer cost is included honestly: every timed
  run reads and parses the LIBSVM files (from the OS page cache: the files were just written or read) -
  the workers each read their own partition files, the sequential process reads all of them. Nothing is
  shipped from the client but the file names and the final ell x d sketches.

  - *sequential*: this process, one ``FrequentDirections(ell)`` fed chunk by chunk (``iter_svmlight``,
    10,000 rows) over the partition files in order, then ``sketch_``; BLAS limited to 1 thread.
  - *dask, 2 workers*: ``fit_sketch`` over the same files on ``LocalCluster(n_workers=2,
    threads_per_worker=1, processes=True)``: one sketch per file, merged by a tree reduction; the wall
    time of the ``fit_sketch`` call including the merges and the transfer of the final sketch.
  - *dask, 1 worker* (``--no-one-worker`` to skip): the same on a 1-worker cluster, which isolates Dask's
    overhead from the parallel gain.

  CPU time is recorded next to wall time: this process's, and every worker process's (``os.times`` via
  ``client.run`` before and after each run). Sequential CPU / busiest worker's CPU estimates the speed-up
  when each worker has a core of its own, which the other jobs on a shared machine change less than the
  wall-clock ratio.

  Both clusters are started before timing (start-up time reported separately) and every worker loads the
  numba kernels (a warm-up sketch, ``client.run``) before timing; the sequential side warms up likewise.
  Runs alternate the order of the contenders each repeat; figures are the best of ``--repeats`` and the
  median ratio is given too. The relative spectral error ``||A^T A - B^T B||_2 / ||A^T A||_2`` of the
  sequential and the merged sketch (same ``ell``) is computed afterwards on the whole matrix.

* (b) Training. a9a (bundled; test a9a.t) and farm-ads (if present in the shared data: a seeded 70/30
  split) are written as ``--partitions`` LIBSVM files of consecutive training rows. PA-I (``pa1``), FTRL
  (``ftrl``) and RFD-SON (``rfd-son``) with the CLI defaults: one sequential pass over the files
  (``partial_fit`` per 10,000-row chunk, this process) vs ``fit_mixing`` on the 2-worker cluster with 1 and
  5 rounds (1 local pass per round). Test accuracy of each model. Every figure is the best of
  ``--train-repeats``, after a warm-up of every path.

Target: (a) 2 workers >= 1.6x faster than 1 process, same run. A 2-core machine shared with
other jobs cannot show it: the load average at start and end is printed next to the figures; rerun when
the machine is quiet (``--wait-load 0.5`` waits for that before timing).

Writes ``benchmarks/results/dask_speed.json`` (every raw timing) and ``dask_speed.md``.
``python benchmarks/dask_speed.py --quick`` is a small smoke run (~1 min, written to ``dask_speed_quick.*``);
``--help`` for the options.
"""

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from _results import RESULTS, command, load_averages, machine

LEARNERS = ("pa1", "ftrl", "rfd-son")


# ---------------------------------------------------------------------------------------------------
# data (not timed)
def split_lines(src, n_parts, out_dir, stem):
    """Cut a LIBSVM text file into ``n_parts`` files of consecutive rows (sizes differ by at most one)."""
    with open(src, "rb") as f:
        lines = f.readlines()
    bounds = np.linspace(0, len(lines), n_parts + 1).round().astype(int)
    paths = []
    for k in range(n_parts):
        path = out_dir / f"{stem}-{k:02d}.svm"
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            f.writelines(lines[bounds[k] : bounds[k + 1]])
        tmp.rename(path)
        paths.append(str(path))
    return paths


def sketch_files(args):
    """The partition files of the synthetic matrix, written once per size and cached under --tmp."""
    from streamlearn.datasets import write_svmlight_stream

    root = Path(args.tmp) / f"synth_{args.rows}x{args.features}_nnz{args.nnz_per_row}_seed0_p{args.partitions}"
    done = root / "DONE"
    paths = [str(root / f"synth-{k:02d}.svm") for k in range(args.partitions)]
    if done.exists() and all(os.path.exists(p) for p in paths):
        return paths, False
    root.mkdir(parents=True, exist_ok=True)
    whole = root / "whole.svm"
    t0 = time.perf_counter()
    write_svmlight_stream(whole, args.rows, args.features, nnz_per_row=args.nnz_per_row, random_state=0)
    paths = split_lines(whole, args.partitions, root, "synth")
    whole.unlink()
    done.write_text("ok\n")
    print(
        f"  wrote {args.partitions} partition files in {time.perf_counter() - t0:.1f} s to {root}",
        file=sys.stderr,
        flush=True,
    )
    return paths, True


def training_sets(args):
    """[(name, partition files, n_features, X_test, y_test)]: a9a, and farm-ads when present."""
    from sklearn.datasets import dump_svmlight_file

    from streamlearn.datasets import load_a9a, load_farm_ads

    out = []
    X, y, X_test, y_test = load_a9a()
    sets = [("a9a", X, y, X_test, y_test)]
    try:
        if args.quick:
            raise FileNotFoundError("not in a --quick run")
        Xf, yf = load_farm_ads()
        order = np.random.default_rng(0).permutation(Xf.shape[0])
        cut = int(round(0.7 * Xf.shape[0]))
        tr, te = np.sort(order[:cut]), np.sort(order[cut:])
        sets.append(("farm-ads", Xf[tr], yf[tr], Xf[te], yf[te]))
    except FileNotFoundError as exc:
        print(f"farm-ads skipped: {exc}", file=sys.stderr)
    for name, X, y, X_test, y_test in sets:
        root = Path(args.tmp) / f"train_{name}_p{args.partitions}"
        root.mkdir(parents=True, exist_ok=True)
        bounds = np.linspace(0, X.shape[0], args.partitions + 1).round().astype(int)
        paths = []
        for k in range(args.partitions):
            path = root / f"{name}-{k:02d}.svm"
            dump_svmlight_file(X[bounds[k] : bounds[k + 1]], y[bounds[k] : bounds[k + 1]], str(path), zero_based=False)
            paths.append(str(path))
        out.append(
            dict(name=name, paths=paths, n_features=X.shape[1], n_train=X.shape[0], X_test=X_test, y_test=y_test)
        )
    return out


# ---------------------------------------------------------------------------------------------------
# (a) sketching
def sequential_sketch(paths, n_features, ell):
    from streamlearn.datasets import iter_svmlight
    from streamlearn.sketch import FrequentDirections

    s = FrequentDirections(ell=ell)
    for path in paths:
        for X, _ in iter_svmlight(path, chunk_size=10_000, n_features=n_features, zero_based=False):
            s.partial_fit(X)
    _ = s.sketch_
    return s


def warm_sketch(ell=10):
    """Load the FD kernels (numba's cache) in this process; run on every worker with client.run."""
    import numpy as np

    from streamlearn.sketch import FrequentDirections

    _ = FrequentDirections(ell=ell).partial_fit(np.random.default_rng(0).standard_normal((4 * ell, 50))).sketch_
    return os.getpid()


def worker_blas(_=None):
    from threadpoolctl import threadpool_info

    return sorted({f"{i['internal_api']}:{i['num_threads']}" for i in threadpool_info()})


def wait_for_load(target, max_wait):
    """Sleep until the 1-minute load average is below ``target`` (or ``max_wait`` seconds passed)."""
    t0 = time.perf_counter()
    while os.getloadavg()[0] >= target and time.perf_counter() - t0 < max_wait:
        print(f"  waiting for load < {target} (now {load_averages()})", file=sys.stderr, flush=True)
        time.sleep(10)
    out = {
        "target": target,
        "seconds": time.perf_counter() - t0,
        "load_reached": load_averages(),
        "reached": os.getloadavg()[0] < target,
    }
    print(f"  load wait: {out}", file=sys.stderr, flush=True)
    return out


def process_cpu(_=None):
    """CPU seconds (user + system) of this process so far; run on every worker with client.run."""
    t = os.times()
    return t.user + t.system


def timed(fn):
    load1 = os.getloadavg()[0]
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0, load1


def bench_sketch(args, clusters, meta):
    import scipy.sparse as sp

    from streamlearn.distributed import as_partitions, fit_sketch
    from streamlearn.evaluation.spectral import covariance_errors
    from streamlearn.sketch import FrequentDirections

    paths, written = sketch_files(args)
    d = args.features
    parts = as_partitions(paths, n_features=d, zero_based=False)
    size_mb = sum(os.path.getsize(p) for p in paths) / 2**20
    warm_sketch()
    for _name, client in clusters.items():
        client.run(warm_sketch)
    contenders = [("sequential", lambda: sequential_sketch(paths, d, args.ell), None)]
    for name, client in clusters.items():
        contenders.append((name, lambda c=client: fit_sketch(FrequentDirections(ell=args.ell), parts, c), client))
    times = {k: [] for k, _, _ in contenders}
    worker_cpu = {k: [] for k, _, c in contenders if c is not None}
    cpu = {k: [] for k, _, _ in contenders}
    loads = {k: [] for k, _, _ in contenders}
    sketches = {}
    for rep in range(args.repeats):
        order = contenders if rep % 2 == 0 else contenders[::-1]
        for key, fn, client in order:
            before = client.run(process_cpu) if client is not None else None
            sketches[key], w, c, l1 = timed(fn)
            if client is not None:
                after = client.run(process_cpu)
                worker_cpu[key].append(sorted(after[a] - before[a] for a in after))
            times[key].append(w)
            cpu[key].append(c)
            loads[key].append(l1)
        print(
            f"  sketch rep {rep}: "
            + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items())
            + f" (load {load_averages()})",
            file=sys.stderr,
            flush=True,
        )
    best = {k: min(v) for k, v in times.items()}
    row = {
        "rows": args.rows,
        "features": d,
        "nnz_per_row_target": args.nnz_per_row,
        "ell": args.ell,
        "partitions": args.partitions,
        "files_mb": size_mb,
        "files_written_this_run": written,
        "times": times,
        "client_cpu_times": cpu,
        "worker_cpu_times": worker_cpu,
        "load1_at_run_start": loads,
        "best": best,
    }
    seq = times["sequential"]
    for key in clusters:
        row[f"speedup_{key}"] = best["sequential"] / best[key]
        row[f"median_speedup_{key}"] = statistics.median(s / t for s, t in zip(seq, times[key]))
        # CPU-bound estimate, robust to other jobs: the run cannot end before its busiest worker's CPU work
        # is done, and on an otherwise idle machine each worker has a core of its own
        row[f"cpu_bound_speedup_{key}"] = min(cpu["sequential"]) / min(max(w) for w in worker_cpu[key])
    # errors, on the whole matrix read by the same reader
    from streamlearn.datasets import iter_svmlight

    t0 = time.perf_counter()
    X = sp.vstack([Xc for p in paths for Xc, _ in iter_svmlight(p, n_features=d, zero_based=False)], format="csr")
    row["n_rows"] = X.shape[0]
    row["nnz"] = int(X.nnz)
    row["density"] = X.nnz / (X.shape[0] * d)
    assert all(s.n_seen_ == X.shape[0] for s in sketches.values()), {k: s.n_seen_ for k, s in sketches.items()}
    errors = {}
    ata = None
    for key, s in sketches.items():
        e = covariance_errors(X, s, ata_norm=ata)
        ata = e["ata_norm"]
        errors[key] = {
            "relative_spectral_error": e["relative_spectral_error"],
            "relative_frobenius_error": e["relative_frobenius_error"],
            "converged": e["converged"],
        }
    row["errors"] = errors
    row["error_seconds"] = time.perf_counter() - t0
    return row


# ---------------------------------------------------------------------------------------------------
# (b) training
def sequential_train(name, paths, n_features):
    from streamlearn.datasets import iter_svmlight
    from streamlearn.learners import make_learner

    model = make_learner(name, {})
    for path in paths:
        for X, y in iter_svmlight(path, chunk_size=10_000, n_features=n_features, zero_based=False):
            model.partial_fit(X, y, classes=[-1.0, 1.0])
    return model


def bench_train(args, client):
    from streamlearn.distributed import as_partitions, fit_mixing
    from streamlearn.learners import make_learner

    rows = []
    for ds in training_sets(args):
        parts = as_partitions(ds["paths"], n_features=ds["n_features"], zero_based=False)
        for name in LEARNERS:
            # warm-up: kernels compiled / loaded here and on every worker
            sequential_train(name, ds["paths"][:1], ds["n_features"])
            fit_mixing(make_learner(name, {}), parts, client, rounds=1, classes=[-1.0, 1.0])
            contenders = [
                ("sequential", lambda name=name, ds=ds: sequential_train(name, ds["paths"], ds["n_features"]))
            ]
            for r in args.rounds:
                contenders.append(
                    (
                        f"mixing {r} round{'s' if r > 1 else ''}",
                        lambda r=r, name=name, parts=parts: fit_mixing(
                            make_learner(name, {}), parts, client, rounds=r, classes=[-1.0, 1.0]
                        ),
                    )
                )
            times = {k: [] for k, _ in contenders}
            models = {}
            for rep in range(args.train_repeats):
                for key, fn in contenders if rep % 2 == 0 else contenders[::-1]:
                    models[key], w, _, _ = timed(fn)
                    times[key].append(w)
            row = {
                "data": ds["name"],
                "learner": name,
                "n_train": ds["n_train"],
                "partitions": len(parts),
                "times": times,
            }
            for key, model in models.items():
                row[key] = {"seconds": min(times[key]), "test_accuracy": float(model.score(ds["X_test"], ds["y_test"]))}
            rows.append(row)
            print(
                f"  train {ds['name']} {name}: "
                + ", ".join(f"{k} {row[k]['seconds']:.2f}s acc {row[k]['test_accuracy']:.4f}" for k in times),
                file=sys.stderr,
                flush=True,
            )
    return rows


# ---------------------------------------------------------------------------------------------------
def write(result, args):
    meta = result["meta"]
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / f"{args.stem}.json", "w") as f:
        json.dump(result, f, indent=1)
    lines = [
        "# streamlearn.distributed on a LocalCluster: sketch 2 workers vs 1 process; mixing vs sequential",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Machine: {meta['machine_start']} at start; load average {meta['load_end']} at end. Python "
        f"{platform.python_version()}, numpy {np.__version__}, numba {meta['numba']}, dask "
        f"{meta['dask']}, streamlearn {meta['streamlearn']}. {meta['date']}.",
        "",
        f"Clusters: `LocalCluster(n_workers=N, threads_per_worker=1, processes=True)`, started before "
        f"timing in {', '.join(f'{k}: {v:.1f} s' for k, v in meta['cluster_start_seconds'].items())}; "
        f"worker BLAS: {meta['worker_blas']}; this process: BLAS limited to 1 thread.",
        "",
    ]
    if "waited_for_load" in meta:
        w = meta["waited_for_load"]
        lines += [
            f"Waited {w['seconds']:.0f} s for a 1-minute load average below {w['target']}: "
            f"{'reached' if w['reached'] else 'NOT reached'} (load {w['load_reached']} when timing began).",
            "",
        ]
    sk = result.get("sketch")
    if sk:
        keys = list(sk["best"])
        lines += [
            f"## (a) FD sketch (ell = {sk['ell']}) of a {sk['n_rows']:,} x {sk['features']:,} sparse matrix",
            "",
            f"`make_sparse_classification({sk['rows']}, {sk['features']}, "
            f"nnz_per_row={sk['nnz_per_row_target']}, random_state=0)`: {sk['nnz']:,} non-zeros, density "
            f"{100 * sk['density']:.3f} % ({sk['nnz'] / sk['n_rows']:.1f} per row), as {sk['partitions']} "
            f"LIBSVM files of consecutive rows ({sk['files_mb']:.0f} MB in all, read from the page cache). "
            "Every timed run reads and parses the files (workers: their own partitions; sequential: all "
            "of them), so the data transfer cost is inside the times; only file names go to the workers "
            "and only the ell x d sketches come back.",
            "",
            f"Wall time, best of {len(sk['times']['sequential'])} (alternating order); all runs: in the JSON.",
            "",
            "*CPU s*: least CPU time over the runs of this process, and of the busiest worker process "
            "(its whole process: task, reading, Dask's own threads). *CPU-bound estimate* = sequential "
            "CPU / busiest worker CPU: the speed-up when every worker has a core of its own, which the "
            "other jobs on this machine do not change much (the wall-clock ratio they do).",
            "",
            "| run | best wall s | all runs s | 1-min load at run start | speed-up vs sequential (best; "
            "median) | CPU s: this process / busiest worker | CPU-bound estimate | relative spectral error "
            "| relative Frobenius error |",
            "|---|---:|---|---|---:|---:|---:|---:|---:|",
        ]
        for k in keys:
            e = sk["errors"][k]
            sp_text = "1" if k == "sequential" else f"{sk[f'speedup_{k}']:.2f}x; {sk[f'median_speedup_{k}']:.2f}x"
            wcpu = sk["worker_cpu_times"].get(k)
            cpu_text = f"{min(sk['client_cpu_times'][k]):.1f}" + (f" / {min(max(w) for w in wcpu):.1f}" if wcpu else "")
            est = f"{sk[f'cpu_bound_speedup_{k}']:.2f}x" if wcpu else "1"
            lines.append(
                f"| {k} | {sk['best'][k]:.2f} | {', '.join(f'{t:.2f}' for t in sk['times'][k])} | "
                f"{', '.join(f'{x:.1f}' for x in sk['load1_at_run_start'][k])} | {sp_text} | {cpu_text} | "
                f"{est} | {e['relative_spectral_error']:.4f} | {e['relative_frobenius_error']:.5f} |"
            )
        ok = sk.get("speedup_dask, 2 workers", 0) >= 1.6
        lines += [
            "",
            f"Target: 2 workers >= 1.6x faster than 1 process: **{'met' if ok else 'NOT met'}** "
            f"({sk.get('speedup_dask, 2 workers', float('nan')):.2f}x) at load average "
            f"{meta['machine_start'].split('load average ')[-1].rstrip(')')} (start) / {meta['load_end']} "
            f"(end); CPU-bound estimate {sk.get('cpu_bound_speedup_dask, 2 workers', float('nan')):.2f}x. "
            "On a 2-core machine any other job takes a core from the workers: rerun when the load "
            "average is below 0.5.",
            "",
        ]
    tr = result.get("train")
    if tr:
        keys = [k for k in tr[0]["times"]]
        lines += [
            "## (b) Parameter mixing vs one sequential pass",
            "",
            f"{tr[0]['partitions']} partition files of consecutive training rows; the 2-worker cluster; 1 local "
            "pass per round; CLI default parameters; seconds = wall time, best of "
            f"{len(tr[0]['times']['sequential'])} (includes reading the files; mixing: scatter, gather and "
            "averaging every round).",
            "",
            "| data | learner | " + " | ".join(f"{k} s | {k} test acc." for k in keys) + " |",
            "|---|---|" + "---:|---:|" * len(keys),
        ]
        for r in tr:
            lines.append(
                f"| {r['data']} ({r['n_train']:,} rows) | {r['learner']} | "
                + " | ".join(f"{r[k]['seconds']:.2f} | {100 * r[k]['test_accuracy']:.2f} %" for k in keys)
                + " |"
            )
        lines += [
            "",
            "These data sets are small: one sequential pass takes well under a second, so mixing "
            "(a round trip to the workers per round) is slower here; it is for data that one process "
            "cannot read fast enough or hold.",
            "",
        ]
    with open(RESULTS / f"{args.stem}.md", "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=400_000)
    ap.add_argument("--features", type=int, default=20_000)
    ap.add_argument("--nnz-per-row", type=int, default=50)
    ap.add_argument("--ell", type=int, default=20)
    ap.add_argument("--partitions", type=int, default=4, help="LIBSVM files per data set (default 4)")
    ap.add_argument("--repeats", type=int, default=3, help="timed sketch runs per contender (best kept)")
    ap.add_argument("--train-repeats", type=int, default=3)
    ap.add_argument("--rounds", default="1,5", help="mixing rounds to time (default 1,5)")
    ap.add_argument("--no-one-worker", action="store_true", help="skip the 1-worker cluster in (a)")
    ap.add_argument("--no-sketch", action="store_true", help="skip (a)")
    ap.add_argument("--no-train", action="store_true", help="skip (b)")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 40,000 rows, 1 repeat, 1 training repeat, a9a only (figures not meaningful), "
        "written to "
        "results/dask_speed_quick.{json,md}",
    )
    ap.add_argument(
        "--wait-load",
        type=float,
        default=None,
        metavar="L",
        help="before timing, wait until the 1-minute load average is below L (checked every 10 s, "
        "at most --max-wait seconds; the wait and the load reached are recorded)",
    )
    ap.add_argument("--max-wait", type=float, default=1800, help="seconds (default 1800)")
    ap.add_argument(
        "--tmp",
        default=os.environ.get("TMPDIR", "/tmp") + "/streamlearn_dask_speed",
        help="where the partition files are written and cached",
    )
    args = ap.parse_args(argv)
    args.stem = "dask_speed_quick" if args.quick else "dask_speed"  # a smoke run never overwrites the results
    if args.quick:
        args.rows, args.repeats, args.train_repeats = min(args.rows, 40_000), 1, 1
    args.rounds = [int(r) for r in args.rounds.split(",")]
    import scipy.linalg  # noqa: F401  (load SciPy's BLAS, which the kernels call, before limiting it)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _main(args, argv)


def _main(args, argv):
    import dask
    import numba
    from distributed import Client, LocalCluster

    import streamlearn

    meta = {
        "command": command("dask_speed.py", argv),
        "machine_start": machine(),
        "numba": numba.__version__,
        "dask": dask.__version__,
        "streamlearn": streamlearn.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    print(meta["machine_start"], file=sys.stderr, flush=True)
    logging.getLogger("distributed").setLevel(logging.ERROR)  # no INFO lines when the clusters close
    sizes = [2] if args.no_one_worker else [2, 1]
    clusters, handles, starts = {}, [], {}
    try:
        for n in sizes:
            t0 = time.perf_counter()
            cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
            )
            client = Client(cluster)
            client.wait_for_workers(n)
            key = f"dask, {n} worker{'s' if n > 1 else ''}"
            starts[key] = time.perf_counter() - t0
            handles += [client, cluster]
            clusters[key] = client
        meta["cluster_start_seconds"] = starts
        blas = clusters["dask, 2 workers"].run(worker_blas).values()
        meta["worker_blas"] = "; ".join(sorted({", ".join(v) for v in blas}))
        result = {"command": meta["command"], "meta": meta}
        if args.wait_load is not None:
            meta["waited_for_load"] = wait_for_load(args.wait_load, args.max_wait)
        if not args.no_sketch:
            result["sketch"] = bench_sketch(args, clusters, meta)
        if not args.no_train:
            result["train"] = bench_train(args, clusters["dask, 2 workers"])
    finally:
        for h in handles:
            h.close()
    meta["load_end"] = load_averages()
    write(result, args)
    print((RESULTS / f"{args.stem}.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
