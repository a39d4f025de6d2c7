"""``nag`` against Vowpal Wabbit on the same rows in the same order, one pass, for two losses.

VW runs through its Python package (``pyvw.Workspace("--quiet")``: adaptive, normalized, invariant updates,
learning rate 0.5, 18 hash bits), reading feature ``j`` as ``f<j>:<value>``; its prediction is the sign of its
raw score. Two pairs:

* VW's defaults (the squared loss on -1/+1 labels, its predictions clipped to [-1, 1]) against ``nag`` with the
  command line's defaults (the modified Huber loss, the same loss written as one);
* VW with ``--loss_function logistic`` against ``nag`` with ``loss="logistic"`` (the class default).

Data:

* a9a: train on a9a, test on a9a.t, file order;
* breast cancer (scikit-learn's bundled copy, raw: columns from 1e-3 to 4e3): ``--seeds`` shuffles, 70/30;
* the same breast-cancer split with every column multiplied by a random factor in 1e-3..1e3 (one draw per
  seed): NAG's predictions do not change; VW's may differ only through rounding (float32) and hashing.

``ogd`` (plain OGD, CLI defaults) is shown for reference. Writes ``benchmarks/results/nag_vs_vw.md/.json``.
"""

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from streamlearn.learners import make_learner


def _vw_lines(X, y=None):
    X = sp.csr_matrix(X)
    out = []
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        feats = " ".join(f"f{j}:{float(v)!r}" for j, v in zip(X.indices[lo:hi], X.data[lo:hi]) if v != 0)
        out.append(("" if y is None else f"{1 if y[i] > 0 else -1} ") + f"| {feats}")
    return out


def vw_accuracy(X, y, Xt, yt, options=""):
    from vowpalwabbit import pyvw

    vw = pyvw.Workspace(f"--quiet {options}".strip())
    try:
        for line in _vw_lines(X, y):
            vw.learn(line)
        pred = np.array([vw.predict(line) for line in _vw_lines(Xt)])
    finally:
        vw.finish()
    return float(np.mean(np.where(pred >= 0, 1, -1) == np.where(yt > 0, 1, -1)))


def ours(name, X, y, Xt, yt, params=None):
    clf = make_learner(name, params).partial_fit(X, y, classes=[-1, 1])
    return float(clf.score(Xt, np.where(yt > 0, 1, -1)))


def _scores(X, y, Xt, yt):
    """Both pairs (VW and nag with VW's default loss, then with the logistic loss) and plain OGD on one split."""
    r = {
        "vw": vw_accuracy(X, y, Xt, yt),
        "nag": ours("nag", X, y, Xt, yt),
        "vw_logistic": vw_accuracy(X, y, Xt, yt, "--loss_function logistic"),
        "nag_logistic": ours("nag", X, y, Xt, yt, {"loss": "logistic"}),
        "ogd": ours("ogd", X, y, Xt, yt),
    }
    r["nag - vw (pt)"] = 100 * (r["nag"] - r["vw"])
    r["nag_logistic - vw_logistic (pt)"] = 100 * (r["nag_logistic"] - r["vw_logistic"])
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "nag_vs_vw"))
    args = ap.parse_args(argv)
    from sklearn.datasets import load_breast_cancer

    from streamlearn.datasets import load_a9a

    rows = []
    X, y, Xt, yt = load_a9a()
    rows.append(dict(data="a9a (file order)", **_scores(X, y, Xt, yt)))
    Xb, yb = load_breast_cancer(return_X_y=True)
    yb = np.where(yb > 0, 1, -1)
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(yb))
        Xs, ys = Xb[order], yb[order]
        n = int(0.7 * len(ys))
        factors = 10.0 ** rng.uniform(-3, 3, size=Xs.shape[1])
        for label, M in (("raw", Xs), ("columns rescaled", Xs * factors)):
            split = (M[:n], ys[:n], M[n:], ys[n:])
            rows.append(dict(data=f"breast cancer {label}, shuffle {seed}", **_scores(*split)))
    for r in rows:
        print(r, flush=True)
    command = " ".join(["python benchmarks/nag_vs_vw.py", shlex.join(argv if argv is not None else sys.argv[1:])])
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps({"command": command, "rows": rows}, indent=1))
    lines = [
        "# nag against Vowpal Wabbit: test accuracy, one pass, same rows and order",
        "",
        f"Command: `{command.strip()}`. VW's defaults use the squared loss on -1/+1 labels (predictions clipped to "
        "[-1, 1]), which `nag` as the command line builds it runs as the modified Huber loss; the second pair is "
        "both with the logistic loss (`--loss_function logistic`; `nag -p loss=logistic`, the class default). "
        "`ogd`: plain OGD with the command line's defaults, for reference.",
        "",
        "| data | VW defaults | nag, CLI defaults | gap (pt) | VW, logistic | nag, logistic | gap (pt) | ogd |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['data']} | {r['vw']:.4f} | {r['nag']:.4f} | {r['nag - vw (pt)']:+.2f} | {r['vw_logistic']:.4f} | "
        f"{r['nag_logistic']:.4f} | {r['nag_logistic - vw_logistic (pt)']:+.2f} | {r['ogd']:.4f} |"
        for r in rows
    ]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
