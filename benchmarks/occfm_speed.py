"""OCCFM exact vs scalable (what the low-rank approximation costs) and CCFM-OGD vs OCCFM time per example.

On the bundled a9a (d = 123, so the exact dense state is cheap), one pass over the training file for:
``occfm`` exact, ``occfm`` scalable with rank = ell in {5, 10, 20}, ``ccfm-ogd`` (projected OGD, one eigh per
projection), and ``fm`` as a reference; same delta and eta for all OCCFM runs (eta from the OCG regret bound,
``occfm_eta``), OGD with ``eta0 = D / G``. Reported: online error rate, test accuracy on a9a.t, microseconds
per example, and each run's time as a ratio to OCCFM exact measured in the same run (the machine is shared,
so only ratios are stable). Also the distance between the exact and the scalable final models
(||C_exact - C_scalable||_F / ||C_exact||_F).

    python benchmarks/occfm_speed.py [--budget SECONDS] [--out benchmarks/results/occfm_speed]
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from streamlearn.datasets import load_a9a
from streamlearn.facto import CCFMOnlineGradientClassifier, FMClassifier, OCCFMClassifier, occfm_eta

DELTA = 20.0


def one_pass(make, X, y, Xt, yt, budget=None):
    make().partial_fit(X[:8], y[:8], classes=[-1, 1])  # compile / load cache
    est = make()
    n, secs, scores, step = 0, 0.0, [], (X.shape[0] if budget is None else 64)
    while n < X.shape[0]:
        t0 = time.perf_counter()
        s = est.partial_fit_scores(X[n : n + step], y[n : n + step], classes=[-1, 1])
        secs += time.perf_counter() - t0
        scores.append(s)
        n += len(s)
        if budget is not None and secs > budget:
            break
    s = np.concatenate(scores)
    online = float(np.mean(np.where(s >= 0, 1, -1) != y[:n]))
    return est, {
        "n_train": n,
        "online_error_rate": online,
        "test_accuracy": float(est.score(Xt, yt)),
        "seconds": secs,
        "us_per_example": 1e6 * secs / n,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=120.0, help="seconds for ccfm-ogd (default 120)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "occfm_speed"))
    args = ap.parse_args(argv)
    X, y, Xt, yt = load_a9a()
    G = 1.0 * 0.5 * float((np.asarray(X.multiply(X).sum(axis=1)).ravel() + 1.0).max())  # logistic: |l'| <= 1
    eta = occfm_eta(DELTA, G, X.shape[0])
    rows = []
    exact, r = one_pass(lambda: OCCFMClassifier(delta=DELTA, eta=eta, mode="exact"), X, y, Xt, yt)
    C_exact = exact.augmented_matrix()
    rows.append(
        {
            "learner": "occfm-exact",
            "params": {"delta": DELTA, "eta": eta},
            **r,
            "lmo_matvecs_per_example": exact.diagnostics()["lmo_matvecs"] / r["n_train"],
        }
    )
    for rank in (5, 10, 20):
        est, r = one_pass(
            lambda rank=rank: OCCFMClassifier(delta=DELTA, eta=eta, mode="scalable", rank=rank, ell=rank), X, y, Xt, yt
        )
        C = est.augmented_matrix()
        d = est.diagnostics()
        rows.append(
            {
                "learner": f"occfm-scalable r=ell={rank}",
                "params": {"delta": DELTA, "eta": eta, "rank": rank, "ell": rank},
                **r,
                "rel_frobenius_to_exact": float(np.linalg.norm(C - C_exact) / np.linalg.norm(C_exact)),
                "lmo_matvecs_per_example": d["lmo_matvecs"] / r["n_train"],
                "sketch_error_bound": d["sketch_error_bound"],
                "dropped_trace": d["dropped_trace"],
            }
        )
    est, r = one_pass(
        lambda: CCFMOnlineGradientClassifier(delta=DELTA, eta0=2 * DELTA / G), X, y, Xt, yt, budget=args.budget
    )
    d = est.diagnostics()
    rows.append(
        {
            "learner": "ccfm-ogd",
            "params": {"delta": DELTA, "eta0": 2 * DELTA / G},
            **r,
            "eigendecompositions": d["eigendecompositions"],
            "projections": d["projections"],
        }
    )
    _, r = one_pass(lambda: FMClassifier(n_factors=10), X, y, Xt, yt)
    rows.append({"learner": "fm", "params": {"n_factors": 10}, **r})
    base = rows[0]["us_per_example"]
    for row in rows:
        row["time_ratio_to_occfm_exact"] = row["us_per_example"] / base
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    cols = [
        "learner",
        "n_train",
        "online_error_rate",
        "test_accuracy",
        "us_per_example",
        "time_ratio_to_occfm_exact",
        "rel_frobenius_to_exact",
        "lmo_matvecs_per_example",
    ]
    lines = [
        "# OCCFM exact vs scalable, CCFM-OGD vs OCCFM (a9a, one pass)",
        "",
        f"delta = {DELTA}, eta = occfm_eta(delta, G={G:g}, T={X.shape[0]}) = {eta:.4g}; ccfm-ogd eta0 = 2 delta / G, "
        f"stopped after {args.budget:g} s. Command: `python benchmarks/occfm_speed.py`.",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    for row in rows:
        lines.append(
            "| "
            + " | ".join(f"{row.get(c):.4g}" if isinstance(row.get(c), float) else str(row.get(c, "-")) for c in cols)
            + " |"
        )
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
