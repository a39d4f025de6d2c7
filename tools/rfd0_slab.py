"""RFD0-SON on farm-ads with the two readings of the slab projection (RFD0's failing rows).

Alg. 3 (and SON, Luo et al. 2016) projects onto K_{t+1}, the slab of the example about to be predicted
(streamlearn's default); Alg. 6 (the fast version the paper's experiments use) prints K_t: the updated u
is projected onto the slab of the example just learned, with the post-update H. The K_t reading clips the
pseudo-inverse Newton step of RFD0's alpha = 0 phase (tools/rfd0_blowup.py) along x_t. This script
runs RFD0-SON (alpha0 = 0) on the rfd-table2 splits (seed 0, 70/30) with both readings and reports the test
accuracy per split (the K_t reading is ``slab="current"``).

    python tools/rfd0_slab.py [--ells 20,30,50] [--splits 5] [--data farm-ads]

Writes tools/results/rfd0_slab_<data>.json and .md.
"""

import argparse
import json
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
PAPER = {"farm-ads": {20: 87.69, 30: 88.82, 50: 88.90}, "a9a": {5: 83.24, 10: 83.26, 20: 83.27}}


def main():
    from threadpoolctl import threadpool_limits

    from streamlearn.datasets import load_a9a, load_farm_ads
    from streamlearn.experiments.rfd_table2 import split_indices
    from streamlearn.second_order import SketchedOnlineNewton

    ap = argparse.ArgumentParser()
    ap.add_argument("--ells", default="20,30,50")
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--data", default="farm-ads", choices=["farm-ads", "a9a"])
    args = ap.parse_args()
    threadpool_limits(1)
    X, y = load_farm_ads() if args.data == "farm-ads" else load_a9a()[:2]
    y = np.where(y > 0, 1, -1)
    n = X.shape[0]
    n_train = int(round(0.7 * n))
    rows = []
    for ell in [int(v) for v in args.ells.split(",")]:
        for slab in ("next", "current"):
            accs = []
            for split in range(args.splits):
                tr, te = split_indices(n, split)
                est = SketchedOnlineNewton(sketch="rfd", ell=ell, alpha0=0.0, slab=slab)
                est.partial_fit(X[tr], y[tr], classes=[-1, 1])
                accs.append(100.0 * float(est.score(X[te], y[te])))
            rows.append(
                {
                    "data": args.data,
                    "ell": ell,
                    "slab": slab,
                    "accuracy_by_split": accs,
                    "mean": float(np.mean(accs)),
                    "std": float(np.std(accs)),
                    "paper": PAPER[args.data].get(ell),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    RESULTS.mkdir(exist_ok=True)
    stem = f"rfd0_slab_{args.data.replace('-', '_')}"
    (RESULTS / f"{stem}.json").write_text(json.dumps(rows, indent=1))
    lines = [
        f"# RFD0-SON on {args.data}: slab of the next example (Alg. 3) vs the current one (Alg. 6 as printed)",
        "",
        f"Command: `python tools/rfd0_slab.py --data {args.data} --ells {args.ells} --splits "
        f"{args.splits}` (rfd-table2 splits, seeds 0..{args.splits - 1}, n_train={n_train}).",
        "",
        "| m | projection | test acc % (mean ± std) | per split | paper % |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['ell']} | {'K_t+1 (next, default)' if r['slab'] == 'next' else 'K_t (current)'} | "
            f"{r['mean']:.2f} ± {r['std']:.2f} | {', '.join(f'{a:.2f}' for a in r['accuracy_by_split'])} | "
            f"{'' if r['paper'] is None else r['paper']} |"
        )
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
