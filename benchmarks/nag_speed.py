"""Cost of the normalized adaptive gradient (``nag``) against plain OGD, per example, same run.

Both learners get the same CSR float64 matrix (sorted indices) and learn from it with one
``partial_fit(X, y, classes=[-1, 1])`` over the whole training part, a fresh estimator each time, one pass in
storage order, after a warm-up call that compiles (or loads) the kernels. Runs alternate OGD / NAG / NAG
with plain (not importance-invariant) steps / NAG with the modified Huber loss (the command line's ``nag``) /
OGD with ``normalized=True``; each figure is the best of
``--repeats`` runs in CPU time of the calling thread (``time.thread_time``: on a loaded machine wall-clock
runs of a few milliseconds are preempted at random), and the ratio to OGD is taken from those best runs
(only ratios measured in the same run are meaningful). Held-out accuracy is reported next to each time.

Data: a9a (32,561 x 123, ~14 non-zeros per row; test on a9a.t) and farm-ads (4,143 x 54,877 bag of words,
~200 non-zeros per row; first 80% learnt, rest held out) when ``$STREAMLEARN_SHARED_DATA`` (or
../shared/data) has it, and a synthetic Zipf stream (``make_sparse_classification``) otherwise too.

Writes ``benchmarks/results/nag_speed.json`` (every raw timing) and ``nag_speed.md``.
"""

import argparse
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from streamlearn.linear_model import NAGClassifier, OGDClassifier

LEARNERS = {
    "ogd": lambda: OGDClassifier(),
    "nag": lambda: NAGClassifier(),
    "nag (invariant=False)": lambda: NAGClassifier(invariant=False),
    # what `streamlearn train -l nag` builds: the modified Huber loss (VW's squared loss on -1/+1 labels)
    "nag (loss=modified_huber, the CLI's)": lambda: NAGClassifier(loss="modified_huber"),
    "ogd (normalized=True)": lambda: OGDClassifier(normalized=True),
}


def _csr(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X


def datasets(rows):
    from streamlearn.datasets import load_a9a, load_farm_ads, make_sparse_classification

    X, y, Xt, yt = load_a9a()
    yield "a9a", _csr(X), np.asarray(y), _csr(Xt), np.asarray(yt)
    try:
        X, y = load_farm_ads()
    except (FileNotFoundError, OSError) as exc:
        print(f"farm-ads skipped: {exc}", file=sys.stderr)
    else:
        X, y = _csr(X), np.asarray(y)
        n = int(0.8 * X.shape[0])
        yield "farm-ads", X[:n], y[:n], X[n:], y[n:]
    X, y = make_sparse_classification(n_samples=rows + rows // 10, n_features=1 << 20, random_state=0)
    X, y = _csr(X), np.where(np.asarray(y) > 0, 1, -1)
    yield f"synthetic {rows // 1000}k x 2^20 Zipf", X[:rows], y[:rows], X[rows:], y[rows:]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--rows", type=int, default=50_000, help="synthetic training rows")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "nag_speed"))
    args = ap.parse_args(argv)
    results = {
        "command": "python benchmarks/nag_speed.py " + shlex.join(argv if argv is not None else sys.argv[1:]),
        "machine": f"{platform.machine()} {platform.processor()} python {platform.python_version()}",
        "datasets": {},
        "load_average_start": os.getloadavg(),
    }
    for name, X, y, Xt, yt in datasets(args.rows):
        for make in LEARNERS.values():  # compile / load every kernel first
            make().partial_fit(X[:8], y[:8], classes=[-1, 1])
        times = {k: [] for k in LEARNERS}
        acc = {}
        for _ in range(args.repeats):
            for label, make in LEARNERS.items():
                est = make()
                t0 = time.thread_time()
                est.partial_fit(X, y, classes=[-1, 1])
                times[label].append(time.thread_time() - t0)
                acc[label] = float(est.score(Xt, yt))
        best = {k: min(v) for k, v in times.items()}
        results["datasets"][name] = {
            "rows": int(X.shape[0]),
            "nnz_per_row": float(X.nnz / X.shape[0]),
            "times_s": times,
            "best_s": best,
            "ns_per_example": {k: 1e9 * v / X.shape[0] for k, v in best.items()},
            "ratio_to_ogd": {k: v / best["ogd"] for k, v in best.items()},
            "test_accuracy": acc,
        }
        print(name, {k: round(v / best["ogd"], 2) for k, v in best.items()}, flush=True)
    results["load_average_end"] = os.getloadavg()
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(results, indent=1))
    lines = [
        "# NAG against plain OGD: one pass, time per example",
        "",
        f"Command: `{results['command']}` ({results['machine']}). Best of {args.repeats} alternating runs "
        "(thread CPU time), one `partial_fit` over the training rows after compilation; ratio = time / OGD's "
        "time in the same run. Load average (1, 5, 15 min) at the start "
        f"{'/'.join(f'{v:.1f}' for v in results['load_average_start'])}, at the end "
        f"{'/'.join(f'{v:.1f}' for v in results['load_average_end'])}.",
        "",
        "| data | rows | nnz/row | learner | ns / example | ratio to ogd | test accuracy |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for name, r in results["datasets"].items():
        for k in LEARNERS:
            lines.append(
                f"| {name} | {r['rows']} | {r['nnz_per_row']:.0f} | {k} | {r['ns_per_example'][k]:.0f} | "
                f"{r['ratio_to_ogd'][k]:.2f} | {r['test_accuracy'][k]:.4f} |"
            )
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
