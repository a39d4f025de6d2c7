"""RFD0-SON's alpha = 0 phase on farm-ads: where a pseudo-inverse Newton step inflates the weights.

Runs RFD0-SON (alpha0 = 0) one example at a time over the first rows of an rfd-table2 split of farm-ads
and prints, for every example whose step multiplies |w| by more than 2: the pre-update score u.x, the label,
|g| and the step's norm, the largest cosine between x and the earlier rows, and alpha. Then the test
accuracy after the whole pass. With H = B^T B (alpha = 0) a small gradient g = 2(z - y) x whose x brings a
new direction gets the step H^+ g of norm about 1 / ((mu + eta_t) |g|): the smaller the loss, the larger
the step.

    python tools/rfd0_blowup.py [--ell 30] [--split 1] [--rows 60]

Writes tools/results/rfd0_blowup.json.
"""

import argparse
import json
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def main():
    from threadpoolctl import threadpool_limits

    from streamlearn.datasets import load_farm_ads
    from streamlearn.experiments.rfd_table2 import split_indices
    from streamlearn.second_order import SketchedOnlineNewton

    ap = argparse.ArgumentParser()
    ap.add_argument("--ell", type=int, default=30)
    ap.add_argument("--split", type=int, default=1)
    ap.add_argument("--rows", type=int, default=60)
    args = ap.parse_args()
    threadpool_limits(1)
    X, y = load_farm_ads()
    y = np.where(y > 0, 1, -1)
    n = X.shape[0]
    tr, te = split_indices(n, args.split)  # rfd-table2's split (--seed 0)
    Xtr, ytr = X[tr], y[tr]
    norms = np.sqrt(np.asarray(Xtr.multiply(Xtr).sum(axis=1)).ravel())
    est = SketchedOnlineNewton(sketch="rfd", ell=args.ell, alpha0=0.0)
    events, prev = [], 0.0
    for i in range(args.rows):
        u = est.coef_[0].copy() if i else np.zeros(X.shape[1])
        x = Xtr[i].toarray().ravel()
        z = float(np.clip(x @ u, -1.0, 1.0))
        est.partial_fit(Xtr[i : i + 1], ytr[i : i + 1], classes=[-1, 1])
        w = est.coef_[0]
        if np.linalg.norm(w) > 2.0 * prev + 1.0:
            cos = (Xtr[:i] @ x) / (norms[:i] * norms[i]) if i else np.zeros(1)
            events.append(
                {
                    "example": i,
                    "score": z,
                    "label": int(ytr[i]),
                    "grad_norm": abs(2 * (z - ytr[i])) * norms[i],
                    "w_norm_before": prev,
                    "w_norm_after": float(np.linalg.norm(w)),
                    "step_norm": float(np.linalg.norm(w - u)),
                    "max_cosine_with_earlier_rows": float(cos.max()),
                    "alpha": float(est.alpha_[0]),
                }
            )
            print(json.dumps(events[-1]), flush=True)
        prev = float(np.linalg.norm(w))
    est.partial_fit(Xtr[args.rows :], ytr[args.rows :])
    out = {
        "ell": args.ell,
        "split": args.split,
        "events": events,
        "final_alpha": float(est.alpha_[0]),
        "final_w_norm": float(np.linalg.norm(est.coef_)),
        "test_accuracy": 100.0 * float(est.score(X[te], y[te])),
    }
    print(json.dumps({k: v for k, v in out.items() if k != "events"}))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "rfd0_blowup.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
