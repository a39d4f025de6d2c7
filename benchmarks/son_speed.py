"""Per-example time of the sketched online Newton step vs vowpal_wabbit ``--OjaNewton``.

Same run, same examples: the a9a training file (and farm-ads with ``--farm-ads``), one pass.

* ours: ``SketchedOnlineNewton(sketch=S, ell=L, alpha0=10, slab=SLAB).partial_fit`` on the in-memory CSR matrix
  (method ``rfd0``: ``sketch="rfd", alpha0=0``)
  (after a 2-row warm-up so numba's compilation is not counted), BLAS limited to one thread (threadpoolctl;
  the r x r eigendecompositions are far slower with threads on a busy machine); time / n examples, i.e. the
  cost amortised over the whole pass, materialisations of the lazy form included (their count is reported);
  with ``--dense-rows N`` the dense O(ell d) reference kernel is timed too, on the first N rows; with
  ``--one-row N`` the first N rows are also learnt one row per ``partial_fit`` call (as a model learning from
  single requests does), time per call;
* VW: ``python -m``-style in a fresh subprocess, ``vowpalwabbit.Workspace(["-d", file, "--OjaNewton",
  "--sketch_size", L, "--loss_function", "squared", "--quiet"])`` (VW's native parser and driver),
  wall time / n; the same command without ``--OjaNewton`` (plain SGD) is timed too, and the net
  ``OjaNewton - SGD`` time (VW's second-order cost without its parsing) is reported beside it.

The machine is shared: read the ratios (ours / VW in the same run), not the absolute figures.

    python benchmarks/son_speed.py [--ells 10,20,50] [--farm-ads] [--repeat 3] [--dense-rows 500]
                                   [--methods rfd,fd,oja,rfd0] [--slab next|current] [--one-row N]
                                   [--tag NAME]

Writes benchmarks/results/son_speed.json and .md (son_speed_TAG.* with --tag).
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

from _results import write_results

PY = sys.executable
VW_SCRIPT = r"""
import json, sys, time
import vowpalwabbit
t0 = time.perf_counter()
vw = vowpalwabbit.Workspace(arg_list=sys.argv[1:])
vw.finish()
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""


def _vw_file(X, y, path):
    X = X.tocsr()
    with open(path, "w") as f:
        for i in range(X.shape[0]):
            a, b = X.indptr[i], X.indptr[i + 1]
            feats = " ".join(f"{j}:{v:g}" for j, v in zip(X.indices[a:b], X.data[a:b]))
            f.write(f"{int(y[i])} |f {feats}\n")


def _vw_time(path, extra):
    cmd = [PY, "-c", VW_SCRIPT, "-d", str(path), "--loss_function", "squared", "--quiet", "-b", "18", *extra]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["seconds"]


def main():
    from streamlearn.datasets import load_a9a, load_farm_ads
    from streamlearn.experiments.rfd_table2 import _PAPER, _paper_figures  # RFD paper Table 3
    from streamlearn.second_order import SketchedOnlineNewton

    ap = argparse.ArgumentParser()
    ap.add_argument("--ells", default="10,20,50")
    ap.add_argument("--farm-ads", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--dense-rows", type=int, default=0, help="also time the dense reference kernel on N rows")
    ap.add_argument("--methods", default="rfd,fd,oja", help="sketches to time (rfd, fd, oja, pfd, rp)")
    ap.add_argument("--one-row", type=int, default=0, help="also time N rows learnt one per partial_fit call")
    ap.add_argument("--tag", default="", help="suffix of the output files (son_speed_TAG.json/.md)")
    ap.add_argument("--slab", default="next", choices=["next", "current"], help="SketchedOnlineNewton's slab")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    ells = [int(v) for v in args.ells.split(",")]
    data = {"a9a": load_a9a()[:2]}
    if args.farm_ads:
        data["farm-ads"] = load_farm_ads()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (X, y) in data.items():
            y = np.where(y > 0, 1, -1)
            path = Path(tmp) / f"{name}.vw"
            _vw_file(X, y, path)
            n = X.shape[0]
            sgd = min(_vw_time(path, []) for _ in range(args.repeat))
            for ell in ells:
                vw = min(_vw_time(path, ["--OjaNewton", "--sketch_size", str(ell)]) for _ in range(args.repeat))
                for sk in args.methods.split(","):
                    make = partial(
                        SketchedOnlineNewton,
                        sketch="rfd" if sk == "rfd0" else sk,
                        ell=ell,
                        alpha0=0.0 if sk == "rfd0" else 10.0,
                        slab=args.slab,
                    )
                    make().partial_fit(X[:2], y[:2], classes=[-1, 1])
                    best = np.inf
                    for _ in range(args.repeat):
                        est = make()
                        t0 = time.perf_counter()
                        est.partial_fit(X, y, classes=[-1, 1])
                        best = min(best, time.perf_counter() - t0)
                    n_mat = int(getattr(est, "_state_n_mat", 0))
                    dense_us = None
                    if args.dense_rows:
                        m = min(args.dense_rows, n)
                        est = make()
                        est._lazy_kernel = False
                        est.partial_fit(X[:2], y[:2], classes=[-1, 1])
                        t0 = time.perf_counter()
                        est.partial_fit(X[2:m], y[2:m])
                        dense_us = 1e6 * (time.perf_counter() - t0) / (m - 2)
                    one_row_us = None
                    if args.one_row:
                        m = min(args.one_row, n)
                        best_one = np.inf
                        for _ in range(args.repeat):
                            est = make()
                            est.partial_fit(X[:2], y[:2], classes=[-1, 1])
                            t0 = time.perf_counter()
                            for i in range(2, m):
                                est.partial_fit(X[i : i + 1], y[i : i + 1])
                            best_one = min(best_one, time.perf_counter() - t0)
                        one_row_us = 1e6 * best_one / (m - 2)
                    paper_sec = _paper_figures(_PAPER.get(name), name, sk, ell)[1]
                    rows.append(
                        {
                            "data": name,
                            "method": f"{sk}-son",
                            "ell": ell,
                            "n": n,
                            "ours_us_per_example": 1e6 * best / n,
                            "materialisations": n_mat,
                            "dense_kernel_us_per_example": dense_us,
                            "one_row_us_per_call": one_row_us,
                            "one_row_ratio_to_vw": None if one_row_us is None else one_row_us / (1e6 * vw / n),
                            "vw_oja_us_per_example": 1e6 * vw / n,
                            "vw_oja_net_us_per_example": 1e6 * (vw - sgd) / n,
                            "ratio_ours_over_vw": best / vw,
                            "paper_table3_us": None if paper_sec is None else 1e6 * paper_sec,
                        }
                    )
                    print(json.dumps(rows[-1]), flush=True)
    stem = "son_speed" + (f"_{args.tag}" if args.tag else "")
    lines = [
        "# son_speed: sketched online Newton vs VW --OjaNewton (one pass, same examples)",
        "",
        "Command: `python benchmarks/son_speed.py --ells "
        + args.ells
        + (" --farm-ads" if args.farm_ads else "")
        + (f" --dense-rows {args.dense_rows}" if args.dense_rows else "")
        + f" --repeat {args.repeat}"
        + (f" --methods {args.methods}" if args.methods != "rfd,fd,oja" else "")
        + (f" --slab {args.slab}" if args.slab != "next" else "")
        + (f" --one-row {args.one_row}" if args.one_row else "")
        + (f" --tag {args.tag}" if args.tag else "")
        + "`. Shared 2-core machine: read the ratio column. Ours: lazy sparse kernels (son_lazy.py), "
        "time of the whole pass / n (amortised: materialisations included, their count in its column); "
        "dense: the O(ell d) reference kernel on the first rows"
        + (
            f"; one row per call: the first {args.one_row} rows learnt one per `partial_fit` call, µs per call "
            "and its ratio to VW's µs per example (VW learns one example at a time)"
            if args.one_row
            else ""
        )
        + ".",
        "",
        "| data | method | ell | ours µs/ex (amortised) | materialisations | dense kernel µs/ex | "
        "VW OjaNewton µs/ex (net of SGD) | ours / VW | one row per call µs (/ VW) | paper Table 3 µs |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p = "" if r["paper_table3_us"] is None else f"{r['paper_table3_us']:.0f}"
        dk = "" if r["dense_kernel_us_per_example"] is None else f"{r['dense_kernel_us_per_example']:.1f}"
        one = r.get("one_row_us_per_call")
        one = "" if one is None else f"{one:.0f} ({r['one_row_ratio_to_vw']:.1f})"
        lines.append(
            f"| {r['data']} | {r['method']} | {r['ell']} | {r['ours_us_per_example']:.1f} | "
            f"{r['materialisations']} | {dk} | "
            f"{r['vw_oja_us_per_example']:.1f} ({r['vw_oja_net_us_per_example']:.1f}) | "
            f"{r['ratio_ours_over_vw']:.2f} | {one} | {p} |"
        )
    write_results(stem, rows, lines)


if __name__ == "__main__":
    main()
