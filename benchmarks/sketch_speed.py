"""Fast FD and fast RFD (streamlearn) against a plain NumPy fast FD: rows/second on farm-ads and a dense matrix.

What is measured, and how it is kept fair:

* Data: farm-ads (UCI bag of words, 4,143 x 54,877, ~198 non-zeros per row, CSR float64 int32 indices)
  and a dense synthetic matrix (default 20,000 x 5,000: rank-50 signal plus unit Gaussian noise, seed 0,
  C-contiguous float64).
* streamlearn: ``FrequentDirections(ell=L)`` and ``RobustFrequentDirections(ell=L)`` (the doubling-space
  Alg. 4 / 5), one ``partial_fit`` over the whole matrix plus reading ``sketch_`` (which applies the final
  shrink), a fresh sketch each run. The numba kernels are compiled (or loaded from the on-disk cache) by
  a warm-up on 2L + 2 rows before timing.
* The NumPy reference is Liberty's fast FD written plainly: a 2L x d dense buffer; each row is copied
  in (sparse rows scattered into a zeroed buffer row); when the buffer is full,
  ``numpy.linalg.svd(buffer, full_matrices=False)`` and the rows become
  ``sqrt(s_i^2 - s_L^2) v_i`` for i < L, the rest zeroed, and filling restarts at row L - 1. That is the
  shrink schedule of Alg. 4 of the RFD paper (and of streamlearn): the same number of shrinks, the same
  sketch up to rounding (the relative spectral errors are printed side by side on farm-ads).
* Runs alternate FD / RFD / reference (FD and RFD swap order every repeat); each figure is the best of ``--repeats`` wall-clock runs
  (reference: ``--ref-repeats``, it is slow); CPU-time ratios are reported next to them as a cross-check
  (the machine is shared).
* BLAS threads: both sides call OpenBLAS (NumPy's SVD; the kernels' products through SciPy's BLAS), and
  both are limited to ``--blas-threads`` threads (default 1, with threadpoolctl). On this shared 2-core
  machine multithreaded OpenBLAS spin-waits for busy cores: a 20 x 500 ``numpy.linalg.svd`` took a
  median 176 ms with 2 threads and 0.27 ms with 1 (``--blas-threads 0`` leaves the default).

Targets: fast FD >= 5x the NumPy reference on farm-ads; RFD time <= 1.1x FD time.

Writes ``benchmarks/results/sketch_speed.json`` (every raw timing) and ``sketch_speed.md``.
``python benchmarks/sketch_speed.py --help`` for the options.
"""

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from _results import RESULTS, command, load_averages, machine

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------------
# the NumPy reference
def numpy_fast_fd(X, ell):
    """Liberty's fast FD with ``numpy.linalg.svd`` of the 2 ell buffer; returns (buffer rows, n_svd)."""
    n, d = X.shape
    buf = np.zeros((2 * ell, d))
    r = 0
    n_svd = 0
    sparse = sp.issparse(X)
    if sparse:
        indptr, indices, data = X.indptr, X.indices, X.data
    for i in range(n):
        if sparse:
            buf[r] = 0.0
            s, e = indptr[i], indptr[i + 1]
            buf[r, indices[s:e]] = data[s:e]
        else:
            buf[r] = X[i]
        r += 1
        if r == 2 * ell:
            _, sv, vt = np.linalg.svd(buf, full_matrices=False)
            shrunk = np.sqrt(np.maximum(sv[: ell - 1] ** 2 - sv[ell - 1] ** 2, 0.0))
            buf[: ell - 1] = shrunk[:, None] * vt[: ell - 1]
            buf[ell - 1 :] = 0.0
            r = ell - 1
            n_svd += 1
    return buf[:r].copy(), n_svd


# ---------------------------------------------------------------------------------------------------
# data
def load_farm_ads():
    from streamlearn import datasets

    try:
        X, _ = datasets.load_farm_ads()
    except FileNotFoundError as e:
        print(f"farm-ads skipped: {e}", file=sys.stderr)
        return None
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    return dict(name="farm-ads", X=X, kind="sparse")


def make_dense(n, d, rank=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X += (rng.standard_normal((n, rank)) * np.linspace(10, 1, rank)) @ rng.standard_normal((rank, d)) / np.sqrt(rank)
    return dict(name=f"dense {n:,} x {d:,}", X=np.ascontiguousarray(X), kind="dense")


# ---------------------------------------------------------------------------------------------------
def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def bench(ds, ell, repeats, ref_repeats, check_error):
    from streamlearn.evaluation import relative_spectral_error
    from streamlearn.sketch import FrequentDirections, RobustFrequentDirections

    X = ds["X"]
    n = X.shape[0]

    def ours(cls):
        s = cls(ell=ell)
        s.partial_fit(X)
        _ = s.sketch_
        return s

    for cls in (FrequentDirections, RobustFrequentDirections):  # warm-up: compile / load numba's cache
        _ = cls(ell=ell).partial_fit(X[: 2 * ell + 2]).sketch_
    times = {"fd": [], "rfd": [], "numpy": []}
    cpu = {"fd": [], "rfd": [], "numpy": []}
    results = {}
    for rep in range(max(repeats, ref_repeats)):
        if rep < repeats:
            pair = (("fd", FrequentDirections), ("rfd", RobustFrequentDirections))
            for key, cls in pair if rep % 2 == 0 else pair[::-1]:  # alternate who goes first
                results[key], w, c = timed(lambda cls=cls: ours(cls))
                times[key].append(w)
                cpu[key].append(c)
        if rep < ref_repeats:
            (rows, n_svd), w, c = timed(lambda: numpy_fast_fd(X, ell))
            results["numpy"] = rows
            times["numpy"].append(w)
            cpu["numpy"].append(c)
        print(
            f"  {ds['name']} ell={ell} rep {rep}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items() if v),
            file=sys.stderr,
            flush=True,
        )
    best = {k: min(v) for k, v in times.items()}
    best_cpu = {k: min(v) for k, v in cpu.items()}
    row = {
        "data": ds["name"],
        "n": n,
        "d": X.shape[1],
        "nnz_per_row": (X.nnz / n) if sp.issparse(X) else X.shape[1],
        "ell": ell,
        "n_shrinks_numpy": n_svd,
        "n_shrinks_ours": results["fd"]._n_shrinks + 1,
        "rows_per_s_fd": n / best["fd"],
        "rows_per_s_rfd": n / best["rfd"],
        "rows_per_s_numpy": n / best["numpy"],
        "speedup_fd_vs_numpy": best["numpy"] / best["fd"],
        "speedup_fd_vs_numpy_cpu": best_cpu["numpy"] / best_cpu["fd"],
        "speedup_rfd_vs_numpy": best["numpy"] / best["rfd"],
        "rfd_over_fd_time": best["rfd"] / best["fd"],
        "rfd_over_fd_cpu": best_cpu["rfd"] / best_cpu["fd"],
        "times": times,
        "cpu_times": cpu,
    }
    if check_error:
        row["error_fd"] = relative_spectral_error(X, results["fd"])
        row["error_numpy"] = relative_spectral_error(X, results["numpy"])
        row["error_rfd"] = relative_spectral_error(X, results["rfd"])
    return row


def write(rows, args, meta):
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "sketch_speed.json", "w") as f:
        json.dump({"command": meta["command"], "meta": meta, "rows": rows}, f, indent=1)
    lines = [
        "# Fast FD / fast RFD against a NumPy fast FD (numpy.linalg.svd of the 2 ell buffer)",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Machine: {meta['machine_start']} at start; load {meta['load_end']} at end. Python "
        f"{platform.python_version()}, numpy {np.__version__}, numba {meta['numba']}, streamlearn "
        f"{meta['streamlearn']}. {meta['date']}.",
        "",
        "Rows/second = rows / best wall time of one pass (streamlearn: `partial_fit` over the whole matrix + "
        "`sketch_`; NumPy: the row loop with an SVD per shrink). *cpu* = the same ratio from CPU time. "
        f"Best of {args.repeats} (NumPy reference: {args.ref_repeats}). BLAS threads on both sides: "
        f"{meta['blas_threads']} ({'; '.join(meta['blas_libraries'] or [])}).",
        "",
        "| data | ell | shrinks | fast FD rows/s | fast RFD rows/s | NumPy FD rows/s | FD / NumPy (cpu) | "
        "RFD / NumPy | RFD time / FD time (cpu) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['data']} | {r['ell']} | {r['n_shrinks_numpy']} | {r['rows_per_s_fd']:,.0f} | "
            f"{r['rows_per_s_rfd']:,.0f} | {r['rows_per_s_numpy']:,.0f} | {r['speedup_fd_vs_numpy']:.1f}x "
            f"({r['speedup_fd_vs_numpy_cpu']:.1f}x) | {r['speedup_rfd_vs_numpy']:.1f}x | "
            f"{r['rfd_over_fd_time']:.3f} ({r['rfd_over_fd_cpu']:.3f}) |"
        )
    err_rows = [r for r in rows if "error_fd" in r]
    if err_rows:
        lines += [
            "",
            "Same algorithm, same result: relative spectral error ||A^T A - approx||_2 / ||A^T A||_2 of the "
            "sketches timed above (streamlearn's includes the final shrink to ell rows; the NumPy "
            "reference's is its buffer).",
            "",
            "| data | ell | fast FD | NumPy FD | fast RFD |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in err_rows:
            lines.append(
                f"| {r['data']} | {r['ell']} | {r['error_fd']:.4f} | {r['error_numpy']:.4f} | {r['error_rfd']:.4f} |"
            )
    lines += ["", "Targets: fast FD >= 5x the NumPy reference on farm-ads; RFD time <= 1.1x FD time.", ""]
    for r in rows:
        if r["data"] == "farm-ads":
            ok = "met" if r["speedup_fd_vs_numpy"] >= 5 else "NOT met"
            lines.append(
                f"- farm-ads, ell={r['ell']}: fast FD {r['speedup_fd_vs_numpy']:.1f}x the NumPy reference ({ok})."
            )
    for r in rows:
        ok = "met" if r["rfd_over_fd_time"] <= 1.1 else "NOT met"
        lines.append(f"- {r['data']}, ell={r['ell']}: RFD / FD time {r['rfd_over_fd_time']:.3f} ({ok}).")
    with open(RESULTS / "sketch_speed.md", "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ells", default="20,50", help="sketch sizes (default 20,50)")
    ap.add_argument("--dense-rows", type=int, default=20_000)
    ap.add_argument("--dense-features", type=int, default=5_000)
    ap.add_argument("--repeats", type=int, default=9, help="runs of streamlearn FD / RFD (best is kept)")
    ap.add_argument("--ref-repeats", type=int, default=1, help="runs of the NumPy reference (slow)")
    ap.add_argument("--no-dense", action="store_true", help="skip the dense matrix")
    ap.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        help="BLAS threads for both sides (default 1; 0 = leave the library default)",
    )
    args = ap.parse_args(argv)
    if args.blas_threads > 0:
        # threadpoolctl limits the BLAS libraries loaded when it is entered: load SciPy's (which the numba
        # kernels call through scipy.linalg.cython_blas) and NumPy's first.
        import scipy.linalg  # noqa: F401
        from threadpoolctl import threadpool_info, threadpool_limits

        import streamlearn.sketch  # noqa: F401

        with threadpool_limits(args.blas_threads):
            args.blas_libraries = [
                f"{i['internal_api']} {os.path.basename(i['filepath'])}: {i['num_threads']} thread(s)"
                for i in threadpool_info()
            ]
            return _main(args, argv)
    return _main(args, argv)


def _main(args, argv):
    import numba

    import streamlearn

    ells = [int(v) for v in args.ells.split(",")]
    meta = {
        "command": command("sketch_speed.py", argv),
        "machine_start": machine(),
        "numba": numba.__version__,
        "streamlearn": streamlearn.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "blas_threads": args.blas_threads or "library default",
        "blas_libraries": getattr(args, "blas_libraries", None),
    }
    datasets = [ds for ds in [load_farm_ads()] if ds is not None]
    if not args.no_dense:
        datasets.append(make_dense(args.dense_rows, args.dense_features))
    rows = []
    for ds in datasets:
        for ell in ells:
            rows.append(bench(ds, ell, args.repeats, args.ref_repeats, check_error=ds["kind"] == "sparse"))
    meta["load_end"] = load_averages()
    write(rows, args, meta)
    print((RESULTS / "sketch_speed.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
