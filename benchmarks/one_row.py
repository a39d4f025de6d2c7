"""Latency of learning and predicting one example per call, against river and scikit-learn.

Online learning in production often sees one example at a time (a click, a request). This measures the time of
one call that learns (or predicts) one example, for the same linear learner (passive-aggressive, PA-I with
``C=1``) in three libraries:

* river: ``PAClassifier(C=1, mode=1)``, ``learn_one`` / ``predict_one`` on a dict (the peer every ratio
  divides by);
* scikit-learn: ``PassiveAggressiveClassifier(C=1)``, ``partial_fit`` on a one-row NumPy array;
* streamlearn: ``pa1`` (CLI defaults), ``partial_fit`` on a one-row NumPy array and on a one-row CSR matrix,
  ``learn_one`` / ``predict_one`` on a dict (hashed into 2**18 columns; ``predict_one`` also on the dict
  ``dict(zip(names, row))`` makes of a NumPy row, whose values are ``np.float64``), ``predict`` on a one-row
  array, and the same learner behind a streaming ``MaxAbsScaler`` (a pipeline); for comparison, ``learn_many`` /
  ``predict_many`` on chunks of 100 of the same dicts (the time per example: a chunk's call on every 100th
  example, nothing on the others).

Data: scikit-learn's bundled breast-cancer set (569 rows, 30 columns), standardized once, labels 0/1; the rows,
their dicts and their one-row arrays are built before the timed loops. Each case runs ``--passes`` passes over
the rows (after one untimed warm-up call that also compiles the kernels); the cases take turns in each of
``--repeats`` rounds and the best round counts. Writes ``benchmarks/results/one_row.md`` and ``one_row.json``.
Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/one_row.py``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _results import command, machine, run_info, write_results


def _cases(X, y):
    from river import linear_model as rl
    from sklearn.linear_model import PassiveAggressiveClassifier

    from streamlearn.learners import make_learner
    from streamlearn.preprocessing import MaxAbsScaler, make_stream_pipeline

    n = X.shape[0]
    dense = [X[i : i + 1].copy() for i in range(n)]
    csr = [sp.csr_matrix(r) for r in dense]
    dicts = [{f"x{j}": float(v) for j, v in enumerate(X[i])} for i in range(n)]
    numpy_dicts = [dict(zip(dicts[i], X[i], strict=True)) for i in range(n)]  # np.float64 values, as zip gives them
    labels = [y[i : i + 1].copy() for i in range(n)]
    river = rl.PAClassifier(C=1.0, mode=1)
    sk = PassiveAggressiveClassifier(C=1.0)
    sk.partial_fit(dense[0], labels[0], classes=[0, 1])
    ours = {k: make_learner("pa1", None) for k in ("dense", "csr", "dict")}
    ours["dense"].partial_fit(dense[0], labels[0], classes=[0, 1])
    ours["csr"].partial_fit(csr[0], labels[0], classes=[0, 1])
    ours["dict"].learn_one(dicts[0], int(y[0]), classes=[0, 1])
    ours["many"] = make_learner("pa1", None).learn_many(dicts[:1], y[:1], classes=[0, 1])
    chunks = {i: (dicts[i : i + _CHUNK], y[i : i + _CHUNK]) for i in range(0, n, _CHUNK)}
    pipe = make_stream_pipeline(MaxAbsScaler(), make_learner("pa1", None))
    pipe.partial_fit(dense[0], labels[0], classes=[0, 1])
    river.learn_one(dicts[0], bool(y[0]))
    ys = [bool(v) for v in y]
    ints = [int(v) for v in y]
    return [
        ("river PAClassifier.learn_one(dict) (the peer)", "learn", lambda i: river.learn_one(dicts[i], ys[i])),
        (
            "scikit-learn PassiveAggressiveClassifier.partial_fit(1-row array)",
            "learn",
            lambda i: sk.partial_fit(dense[i], labels[i]),
        ),
        ("streamlearn pa1 partial_fit(1-row array)", "learn", lambda i: ours["dense"].partial_fit(dense[i], labels[i])),
        ("streamlearn pa1 partial_fit(1-row CSR)", "learn", lambda i: ours["csr"].partial_fit(csr[i], labels[i])),
        ("streamlearn pa1 learn_one(dict)", "learn", lambda i: ours["dict"].learn_one(dicts[i], ints[i])),
        (
            "streamlearn MaxAbsScaler + pa1 pipeline partial_fit(1-row array)",
            "learn",
            lambda i: pipe.partial_fit(dense[i], labels[i]),
        ),
        (
            f"streamlearn pa1 learn_many({_CHUNK} dicts), per example",
            "learn",
            lambda i: ours["many"].learn_many(*chunks[i]) if i in chunks else None,
        ),
        ("river PAClassifier.predict_one(dict) (the peer)", "predict", lambda i: river.predict_one(dicts[i])),
        ("scikit-learn PassiveAggressiveClassifier.predict(1-row array)", "predict", lambda i: sk.predict(dense[i])),
        ("streamlearn pa1 predict(1-row array)", "predict", lambda i: ours["dense"].predict(dense[i])),
        ("streamlearn pa1 predict_one(dict)", "predict", lambda i: ours["dict"].predict_one(dicts[i])),
        (
            "streamlearn pa1 predict_one(dict of NumPy floats)",
            "predict",
            lambda i: ours["dict"].predict_one(numpy_dicts[i]),
        ),
        (
            f"streamlearn pa1 predict_many({_CHUNK} dicts), per example",
            "predict",
            lambda i: ours["many"].predict_many(chunks[i][0]) if i in chunks else None,
        ),
    ]


_CHUNK = 100  # rows per learn_many / predict_many call


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passes", type=int, default=3, help="passes over the 569 rows per case and round (default 3)")
    ap.add_argument("--repeats", type=int, default=5, help="rounds; the best counts (default 5)")
    args = ap.parse_args(argv)
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    y = y.astype(np.int64)
    info = run_info(command("one_row.py", argv))
    cases = _cases(X, y)
    order = list(range(X.shape[0])) * args.passes
    best = [float("inf")] * len(cases)
    for _ in range(args.repeats):
        for k, (_, _, call) in enumerate(cases):
            t0 = time.perf_counter()
            for i in order:
                call(i)
            best[k] = min(best[k], (time.perf_counter() - t0) / len(order))
    peer = {kind: best[k] for k, (_, kind, _) in enumerate(cases) if "(the peer)" in cases[k][0]}
    rows = [
        {"case": name, "kind": kind, "us_per_call": 1e6 * t, "ratio_to_river": t / peer[kind]}
        for (name, kind, _), t in zip(cases, best)
    ]
    lines = [
        "# One example per call: learning and predicting latency",
        "",
        f"Command: `{info['command']}` (python {info['python']}; {machine()}). Best of {args.repeats} rounds of "
        f"{args.passes} passes over breast-cancer's 569 rows (standardized, 30 columns), the cases taking turns; "
        "ratio = time per call / river's for the same kind of call, measured in the same run.",
        "",
        "| call | µs per call | ratio to river |",
        "|---|---:|---:|",
    ]
    lines += [f"| {r['case']} | {r['us_per_call']:.1f} | {r['ratio_to_river']:.2f} |" for r in rows]
    write_results("one_row", {**info, "passes": args.passes, "repeats": args.repeats, "rows": rows}, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
