"""``python -m streamlearn.distributed [a9a|farm-ads] [--partitions P] [--rounds R] [--scheduler local:2]``:
mixed vs sequential one-pass test accuracy of PA-I, FTRL and RFD-SON (the figures of docs/user-guide/dask.md).

a9a: the bundled train/test files; farm-ads: a fixed random 70/30 split (seed 0) of the shared file.
The training rows are cut into P contiguous partitions; every learner is mixed for R rounds of one pass.
"""

import argparse
import contextlib
import time

import numpy as np
from sklearn.base import clone


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m streamlearn.distributed", description=__doc__.splitlines()[1])
    ap.add_argument("data", choices=["a9a", "farm-ads"], nargs="?", default="a9a")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scheduler", default="local:2")
    args = ap.parse_args(argv)
    for option, value in (("--partitions", args.partitions), ("--rounds", args.rounds)):
        if value < 1:
            ap.error(f"{option} must be >= 1; got {value}.")

    from ..datasets import load_a9a, load_farm_ads
    from ..linear_model import FTRLProximalClassifier, PassiveAggressiveClassifier
    from ..second_order import SketchedOnlineNewton
    from . import connect, fit_mixing
    from ._client import check_scheduler

    try:
        check_scheduler(args.scheduler, "--scheduler")  # a malformed --scheduler before the data are loaded
    except ValueError as exc:
        ap.error(str(exc))

    if args.data == "a9a":
        X, y, X_test, y_test = load_a9a()
    else:
        X, y = load_farm_ads()
        order = np.random.default_rng(0).permutation(X.shape[0])
        X, y = X[order], y[order]
        cut = int(0.7 * X.shape[0])
        X, y, X_test, y_test = X[:cut], y[:cut], X[cut:], y[cut:]
    cuts = np.linspace(0, X.shape[0], args.partitions + 1).astype(int)
    parts = [(X[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    learners = {
        "PA-I (C=0.01)": PassiveAggressiveClassifier(C=0.01),
        "FTRL (l1=1)": FTRLProximalClassifier(l1=1.0),
        "RFD-SON (ell=5, alpha0=10)": SketchedOnlineNewton(sketch="rfd", ell=5, alpha0=10.0),
    }
    print(
        f"{args.data}: {X.shape[0]} training rows in {args.partitions} partitions, {args.rounds} rounds, "
        f"scheduler {args.scheduler}"
    )
    print("| learner | sequential one pass | mixed | difference (pt) | mixing seconds | seconds per round |")
    print("|---|---|---|---|---|---|")
    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(connect(args.scheduler))
        except (OSError, ValueError) as exc:
            ap.error(f"could not connect to the Dask scheduler {args.scheduler!r}: {exc}")
        for name, learner in learners.items():
            seq = clone(learner).partial_fit(X, y, classes=[-1, 1]).score(X_test, y_test)
            t0 = time.perf_counter()
            try:
                mixed = fit_mixing(learner, parts, client, rounds=args.rounds, classes=[-1, 1])
            except RuntimeError as exc:  # a worker lost for good, or the scheduler
                ap.error(str(exc))
            secs = time.perf_counter() - t0
            acc = mixed.score(X_test, y_test)
            rounds = ", ".join(f"{h['seconds']:.2f}" for h in mixed.mixing_history_)
            print(f"| {name} | {seq:.4f} | {acc:.4f} | {100 * (acc - seq):+.2f} | {secs:.2f} | {rounds} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
