"""Cost of streamlearn.evaluation: progressive-validation overhead and regret solver times.

1. Overhead of ``progressive_validation`` over the bare pass it wraps (the same ``partial_fit_scores`` calls on
   the same chunks, nothing else), on the bundled a9a (one call) and on a synthetic Zipf stream in chunks;
   interleaved repeats, medians, reported as a ratio (the machine is shared, absolute times are noisy).
2. Batch solvers of ``regret`` on a9a (32,561 x 123): seconds per loss, and the hinge LP solved through its
   dual (what ``regret`` does) against the primal LP (the fallback), as a ratio in the same run.

Run: ``.venv/bin/python benchmarks/evaluation.py`` (about 2-4 min on the shared 2-core box; ``--help``).
Writes ``benchmarks/results/evaluation.{json,md}``.
"""

import argparse
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from _results import run_info, write_results


def _interleaved(fns, repeats):
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def overhead(args):
    from streamlearn.datasets import load_a9a, make_sparse_classification
    from streamlearn.evaluation import iter_array_chunks, progressive_validation
    from streamlearn.linear_model import OGDClassifier, PassiveAggressiveClassifier

    X, y, _, _ = load_a9a()
    Xs, ys = make_sparse_classification(args.rows, args.features, nnz_per_row=args.nnz, random_state=0)
    datasets = {
        "a9a (32,561 x 123, one call)": (X, y, X.shape[0]),
        f"Zipf {args.rows:,} x {args.features:,}, {args.nnz} nnz/row, chunks of {args.chunk:,}": (Xs, ys, args.chunk),
    }
    rows = []
    for data_name, (Xd, yd, chunk) in datasets.items():
        chunks = list(iter_array_chunks(Xd, yd, chunk_size=chunk))
        for learner in (PassiveAggressiveClassifier(C=0.01), OGDClassifier()):
            clone(learner).partial_fit_scores(chunks[0][0][:10], chunks[0][1][:10], classes=[-1, 1])  # warm-up

            def bare(learner=learner, chunks=chunks):
                est = clone(learner)
                for Xc, yc in chunks:
                    est.partial_fit_scores(Xc, yc, classes=[-1, 1])

            def pv(learner=learner, chunks=chunks):
                progressive_validation(clone(learner), chunks, classes=[-1, 1])

            times = _interleaved({"bare": bare, "pv": pv}, args.repeats)
            b, p = statistics.median(times["bare"]), statistics.median(times["pv"])
            res = progressive_validation(clone(learner), chunks, classes=[-1, 1])
            rows.append(
                {
                    "data": data_name,
                    "learner": type(learner).__name__,
                    "n": int(Xd.shape[0]),
                    "bare_seconds": b,
                    "pv_seconds": p,
                    "ratio_pv_over_bare": p / b,
                    "pv_examples_per_second": Xd.shape[0] / p,
                    "online_error_rate": res.online_error_rate,
                    "curve_points": int(len(res.curve["n_examples"])),
                    "checkpoints": len(res.checkpoints),
                    "raw": times,
                }
            )
            print(f"{data_name} {type(learner).__name__}: pv/bare = {p / b:.3f}", file=sys.stderr)
    return rows


def regret_solvers():
    from streamlearn.datasets import load_a9a
    from streamlearn.evaluation import regret
    from streamlearn.evaluation._regret import _lp, _lp_primal
    from streamlearn.linear_model import OGDClassifier, PassiveAggressiveClassifier

    X, y, _, _ = load_a9a()
    rows = []
    cases = [
        ("logistic", OGDClassifier(), {}),
        ("hinge", PassiveAggressiveClassifier(C=0.01), {}),
        ("squared", OGDClassifier(loss="squared", eta0=0.01), {}),
        ("logistic, radius=1", OGDClassifier(), {"radius": 1.0}),
    ]
    for name, learner, kw in cases:
        t0 = time.perf_counter()
        res = regret(clone(learner), X, y, **kw)
        sec = time.perf_counter() - t0
        rows.append(
            {
                "case": name,
                "learner": repr(learner),
                "solver": res.solver,
                "seconds": sec,
                "online_loss": res.online_loss,
                "best_fixed_loss": res.best_fixed_loss,
                "regret_per_example": res.regret_per_example,
                "converged": res.converged,
            }
        )
        print(f"regret {name}: {sec:.1f} s", file=sys.stderr)
    A = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
    t0 = time.perf_counter()
    w, b, _ = _lp(X, y, "hinge", 0.0, True)
    dual = time.perf_counter() - t0
    t0 = time.perf_counter()
    wp, bp, _ = _lp_primal(A, y, "hinge", 0.0, X.shape[1], True)
    primal = time.perf_counter() - t0
    hinge = lambda w, b: float(np.maximum(0, 1 - y * (X @ w + b)).sum())  # noqa: E731
    lp = {
        "dual_seconds": dual,
        "primal_seconds": primal,
        "ratio_primal_over_dual": primal / dual,
        "dual_loss": hinge(w, b),
        "primal_loss": hinge(wp, bp),
    }
    print(f"hinge LP primal/dual = {primal / dual:.1f}", file=sys.stderr)
    return rows, lp


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="rows of the synthetic stream (default 200000)")
    ap.add_argument("--features", type=int, default=100_000, help="features of the synthetic stream")
    ap.add_argument("--nnz", type=int, default=50, help="non-zeros per row of the synthetic stream")
    ap.add_argument("--chunk", type=int, default=10_000, help="rows per chunk of the synthetic stream")
    ap.add_argument("--repeats", type=int, default=7, help="interleaved repeats per timing (median reported)")
    ap.add_argument("--skip-regret", action="store_true", help="only the progressive-validation overhead")
    args = ap.parse_args(argv)
    cmd = " ".join(["python benchmarks/evaluation.py", *(sys.argv[1:] if argv is None else argv)])
    over = overhead(args)
    solvers, lp = ([], None) if args.skip_regret else regret_solvers()
    out = {**run_info(cmd), "overhead": over, "regret": solvers, "hinge_lp": lp}
    load = out["load_average_1min"]
    lines = [
        "# streamlearn.evaluation: progressive-validation overhead and regret solvers",
        "",
        f"Command: `.venv/bin/{cmd}` (1-minute load average at the end: {load:.2f} on 2 cores).",
        "",
        "## Progressive validation vs the bare pass it wraps (same partial_fit_scores calls), "
        f"median of {args.repeats} interleaved runs",
        "",
        "| data | learner | bare s | progressive_validation s | ratio | examples/s | online error | "
        "curve points | checkpoints |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['data']} | {r['learner']} | {r['bare_seconds']:.3f} | {r['pv_seconds']:.3f} | "
        f"{r['ratio_pv_over_bare']:.2f} | {r['pv_examples_per_second']:,.0f} | {r['online_error_rate']:.4f} | "
        f"{r['curve_points']} | {r['checkpoints']} |"
        for r in over
    ]
    if solvers:
        lines += [
            "",
            "## regret on a9a (32,561 x 123): batch solver time",
            "",
            "| case | solver | seconds | online loss | best fixed loss | regret / example |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['case']} | {r['solver']} | {r['seconds']:.1f} | {r['online_loss']:.1f} | "
            f"{r['best_fixed_loss']:.1f} | {r['regret_per_example']:.4f} |"
            for r in solvers
        ]
        lines += [
            "",
            f"Hinge LP on a9a: dual {lp['dual_seconds']:.1f} s, primal {lp['primal_seconds']:.1f} s "
            f"(primal / dual = {lp['ratio_primal_over_dual']:.1f}); hinge loss of the solutions "
            f"{lp['dual_loss']:.4f} (dual) and {lp['primal_loss']:.4f} (primal).",
        ]
    write_results("evaluation", out, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
