"""One pass of the first-order learners (PA-I, OGD-logistic, Perceptron) against scikit-learn and river.

What is measured, and how it is kept fair:

* Same data for every library: CSR float64 with int32 indices, sorted (normalised once, before any
  timing). Datasets: farm-ads (UCI bag of words, 4,143 x 54,877) and a synthetic stream from
  ``make_sparse_classification`` (default 200,000 x 1,000,000, ~100 non-zeros per row, Zipf 1.1).
  The first 80% of farm-ads (the first ``--rows`` synthetic rows) are learnt from; the rest (another 10%
  of synthetic rows) is held out for accuracy, so that speed is not bought by learning nothing.
* streamlearn and scikit-learn: ``partial_fit(X, y, classes=[-1, 1])``, one call over the whole training
  matrix, a fresh estimator each time, one pass in storage order (scikit-learn with ``shuffle=False``).
  The numba kernels are compiled (or loaded from the on-disk cache) by a warm-up call on 8 rows before
  timing; compile time is measured separately in fresh processes (empty cache, then warm cache).
  Runs alternate ours / scikit-learn; each figure is the best of ``--repeats`` runs (wall clock), and the
  CPU-time ratio is reported next to it as a cross-check (the machine is shared).
* river learns from dicts, one ``learn_one`` per example, on the same training rows as the others (all of
  them by default; ``--river-rows`` caps it). Rows are converted to dicts 5,000 at a time, outside the
  timed loop: only the ``learn_one`` calls are timed (a model that grows over 200,000 Zipf rows is slower
  per example than after 20,000, so a prefix would flatter river). Its accuracy is measured on the first
  ``--river-test-rows`` held-out rows, next to ours on the same rows.
* Equivalent settings: PA-I with C=1 (scikit-learn: ``SGDClassifier(loss="hinge", penalty=None,
  learning_rate="pa1", eta0=1.0)``, what its deprecated ``PassiveAggressiveClassifier`` now points to);
  OGD-logistic with step 0.5 / sqrt(t), no penalty (``SGDClassifier(loss="log_loss", penalty=None,
  learning_rate="invscaling", eta0=0.5, power_t=0.5)``; river ``LogisticRegression`` with
  ``SGD(InverseScaling(0.5))``); Perceptron with unit step (scikit-learn ``Perceptron``, river
  ``Perceptron``). The intercept is learnt everywhere.

Writes ``benchmarks/results/first_order.json`` (every raw timing) and ``first_order.md`` (the table, with
the command line that produced it). Run ``python benchmarks/first_order.py --help`` for the options.
"""

import argparse
import json
import lzma
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from _results import command

REPO = Path(__file__).resolve().parents[1]
FARM_ADS_N_FEATURES = 54_877


# ---------------------------------------------------------------------------------------------------
# data
def normalise(X):
    """CSR float64, int32 indices and indptr, sorted: the common input of every library."""
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    if X.indices.dtype != np.int32:
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    return X


def load_farm_ads():
    from sklearn.datasets import load_svmlight_file

    from streamlearn.datasets import shared_data_path

    try:
        path = shared_data_path("farm-ads/farm-ads-vect.xz")
    except FileNotFoundError as e:
        print(f"farm-ads skipped: {e}", file=sys.stderr)
        return None
    with lzma.open(path) as f:
        X, y = load_svmlight_file(f, n_features=FARM_ADS_N_FEATURES)
    X = normalise(X)
    n_train = int(0.8 * X.shape[0])
    return dict(
        name="farm-ads",
        source=str(path.resolve()),
        X=X[:n_train],
        y=y[:n_train],
        X_test=X[n_train:],
        y_test=y[n_train:],
    )


def make_synthetic(args, timings):
    from streamlearn.datasets import make_sparse_classification

    n_test = max(args.rows // 10, 1)
    kw = dict(nnz_per_row=args.nnz, zipf_a=args.zipf_a, random_state=0)
    t0 = time.perf_counter()
    X, y = make_sparse_classification(args.rows + n_test, args.features, **kw)
    timings["generate_s"] = time.perf_counter() - t0
    X = normalise(X)
    name = f"synthetic {args.rows // 1000}k x {args.features / 1e6:g}M"
    return dict(
        name=name,
        source=f"make_sparse_classification({args.rows + n_test}, {args.features}, **{kw})",
        X=X[: args.rows],
        y=y[: args.rows],
        X_test=X[args.rows :],
        y_test=y[args.rows :],
    )


def measure_writer(args):
    """Write the synthetic training stream as LIBSVM text to a temporary file; MB/s (the file is deleted)."""
    from streamlearn.datasets import write_svmlight_stream

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stream.svm"
        t0, c0 = time.perf_counter(), time.process_time()
        n_bytes = write_svmlight_stream(
            path, args.rows, args.features, nnz_per_row=args.nnz, zipf_a=args.zipf_a, random_state=0
        )
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(
        rows=args.rows,
        bytes=n_bytes,
        wall_s=wall,
        cpu_s=cpu,
        mb_per_s_wall=n_bytes / 1e6 / wall,
        mb_per_s_cpu=n_bytes / 1e6 / cpu,
    )


# ---------------------------------------------------------------------------------------------------
# learners
def learners():
    """name -> (ours, scikit-learn, river) factories of equivalently configured models."""
    from river import linear_model as rlm
    from river import optim
    from sklearn.linear_model import Perceptron as SkPerceptron
    from sklearn.linear_model import SGDClassifier

    from streamlearn.linear_model import OGDClassifier, PassiveAggressiveClassifier, Perceptron

    def river_logistic():
        return rlm.LogisticRegression(
            optimizer=optim.SGD(optim.schedulers.InverseScaling(0.5, power=0.5)),
            intercept_lr=optim.schedulers.InverseScaling(0.5, power=0.5),
            l2=0.0,
        )

    return {
        "PA-I (C=1)": (
            lambda: PassiveAggressiveClassifier(variant="pa1", C=1.0),
            lambda: SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=1.0, shuffle=False),
            lambda: rlm.PAClassifier(C=1.0, mode=1),
        ),
        "OGD-logistic (0.5/sqrt t)": (
            lambda: OGDClassifier(loss="logistic", eta0=0.5),
            lambda: SGDClassifier(
                loss="log_loss", penalty=None, learning_rate="invscaling", eta0=0.5, power_t=0.5, shuffle=False
            ),
            river_logistic,
        ),
        "Perceptron": (lambda: Perceptron(), lambda: SkPerceptron(shuffle=False), lambda: rlm.Perceptron()),
    }


def timed_partial_fit(factory, X, y):
    est = factory()
    t0, c0 = time.perf_counter(), time.process_time()
    est.partial_fit(X, y, classes=[-1, 1])
    return time.perf_counter() - t0, time.process_time() - c0, est


def to_dicts(X, n):
    ind, dat, ptr = X.indices, X.data, X.indptr
    return [dict(zip(ind[ptr[i] : ptr[i + 1]].tolist(), dat[ptr[i] : ptr[i + 1]].tolist())) for i in range(n)]


def time_river(factory, X, ys, n, chunk=5_000):
    """One river model over the first n rows; dicts are built chunk by chunk outside the timed loops."""
    model = factory()
    wall = cpu = 0.0
    for a in range(0, n, chunk):
        b = min(a + chunk, n)
        xs, yb = to_dicts(X[a:b], b - a), ys[a:b]
        t0, c0 = time.perf_counter(), time.process_time()
        for x, t in zip(xs, yb):
            model.learn_one(x, t)
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
    return wall, cpu, model


def river_accuracy(model, xs, ys):
    return float(np.mean([model.predict_one(x) == t for x, t in zip(xs, ys)]))


def bench_dataset(ds, args, log):
    X, y, Xt, yt = ds["X"], ds["y"], ds["X_test"], ds["y_test"]
    n = X.shape[0]
    small = X.nnz < 5_000_000
    reps = args.repeats * (5 if small else 1)  # a small pass takes milliseconds: more repeats
    n_river = min(args.river_rows, n) if args.river_rows > 0 else n
    ys = (y[:n_river] > 0).tolist()
    n_river_test = min(args.river_test_rows, Xt.shape[0])
    xts, yts = to_dicts(Xt, n_river_test), (yt[:n_river_test] > 0).tolist()
    rows = []
    for name, (ours, skl, riv) in learners().items():
        warm = ours().partial_fit(X[:8], y[:8], classes=[-1, 1])  # compile / load numba code before timing
        del warm
        skl().partial_fit(X[:8], y[:8], classes=[-1, 1])
        t = {"ours": [], "sklearn": []}
        models = {}
        for _ in range(reps):
            for side, f in (("ours", ours), ("sklearn", skl)):
                wall, cpu, models[side] = timed_partial_fit(f, X, y)
                t[side].append((wall, cpu))
        rt = []
        for _ in range(args.river_repeats):
            wall, cpu, river_model = time_river(riv, X, ys, n_river)
            rt.append((wall, cpu))
        sub = ours().partial_fit(X[:n_river], y[:n_river], classes=[-1, 1])
        best = {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in (*t.items(), ("river", rt))}
        eps = {"ours": n / best["ours"][0], "sklearn": n / best["sklearn"][0], "river": n_river / best["river"][0]}
        row = dict(
            dataset=ds["name"],
            learner=name,
            n_train=n,
            nnz_train=int(X.nnz),
            n_test=Xt.shape[0],
            n_river=n_river,
            n_river_test=n_river_test,
            repeats=reps,
            river_repeats=args.river_repeats,
            times=dict(ours=t["ours"], sklearn=t["sklearn"], river=rt),
            examples_per_s=eps,
            ratio_sklearn_wall=eps["ours"] / eps["sklearn"],
            ratio_sklearn_cpu=best["sklearn"][1] / best["ours"][1],
            ratio_river_wall=eps["ours"] / eps["river"],
            ratio_river_cpu=(n / best["ours"][1]) / (n_river / best["river"][1]),
            accuracy=dict(
                ours=float(models["ours"].score(Xt, yt)),
                sklearn=float(models["sklearn"].score(Xt, yt)),
                ours_river_subset=float(sub.score(Xt[:n_river_test], yt[:n_river_test])),
                river_river_subset=river_accuracy(river_model, xts, yts),
            ),
        )
        rows.append(row)
        acc = row["accuracy"]
        log(
            f"{ds['name']:>24} {name:<26} ours {eps['ours']:>11,.0f}/s  sklearn {eps['sklearn']:>11,.0f}/s  "
            f"river {eps['river']:>8,.0f}/s  x{row['ratio_sklearn_wall']:.2f} sklearn "
            f"(cpu x{row['ratio_sklearn_cpu']:.2f})  x{row['ratio_river_wall']:.0f} river  "
            f"acc {acc['ours']:.3f}/{acc['sklearn']:.3f}"
        )
    return rows


# ---------------------------------------------------------------------------------------------------
# numba compile time, in fresh processes
_COMPILE_PROBE = textwrap.dedent("""
    import json, time
    t0 = time.perf_counter()
    import numpy as np, scipy.sparse as sp
    from streamlearn.linear_model import OGDClassifier, PassiveAggressiveClassifier, Perceptron
    t_import = time.perf_counter() - t0
    X = sp.csr_matrix(np.eye(8, 5))
    X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    y = np.array([1.0, -1.0] * 4)
    out = {"import_s": t_import}
    for name, f in (("first", PassiveAggressiveClassifier), ("second", OGDClassifier), ("third", Perceptron)):
        t0 = time.perf_counter(); f().partial_fit(X, y, classes=[-1, 1]).predict(X)
        out[name + "_call_s"] = time.perf_counter() - t0
    t0 = time.perf_counter(); PassiveAggressiveClassifier().partial_fit(X, y, classes=[-1, 1]).predict(X)
    out["warm_call_s"] = time.perf_counter() - t0
    print(json.dumps(out))
""")


def measure_compile():
    """First partial_fit + predict in a fresh process: with an empty numba cache, then with that cache."""
    res = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("empty_cache", "warm_cache"):
            out = subprocess.run(
                [sys.executable, "-c", _COMPILE_PROBE], env=env, capture_output=True, text=True, check=True, cwd=REPO
            )
            res[label] = json.loads(out.stdout.strip().splitlines()[-1])
    return res


# ---------------------------------------------------------------------------------------------------
# --profile: where the time of our pass goes (the kernel alone vs the estimator's validation/bookkeeping)
def _datasets(args, timings, log):
    """The data sets the options select: farm-ads (when present) and the synthetic stream."""
    datasets = []
    if not args.skip_farm_ads:
        ds = load_farm_ads()
        if ds is not None:
            datasets.append(ds)
    if not args.skip_synthetic:
        log("generating the synthetic stream...")
        datasets.append(make_synthetic(args, timings))
    return datasets


def profile(args, log):
    """Per dataset and learner: our partial_fit, the kernel alone, the input check alone, and scikit-learn."""
    from streamlearn._kernels import linear as K

    datasets = _datasets(args, {}, log)
    out = []
    for ds in datasets:
        X, y = ds["X"], ds["y"]
        n, d = X.shape
        small = X.nnz < 5_000_000
        reps = args.repeats * (20 if small else 1)
        targets = np.ascontiguousarray(np.where(y > 0, 1.0, -1.0).reshape(-1, 1))
        sw = np.ones(n)

        def kernel(fit, X=X, targets=targets, sw=sw, n=n):
            """The estimator's own kernel call (``_kernel_pass``) over the whole set, from a zero model."""
            fit._coef_2d()[:] = 0.0
            fit.intercept_[:] = 0.0
            fit.t_ = 0
            fit._kernel_pass(X, targets, sw, np.empty((n, 1)))
            return fit.coef_

        def cpu(f):
            c0 = time.process_time()
            f()
            return time.process_time() - c0

        rows = []
        for name, (ours, skl, _) in learners().items():
            ours().partial_fit(X[:8], y[:8], classes=[-1, 1])
            skl().partial_fit(X[:8], y[:8], classes=[-1, 1])
            fit = ours().partial_fit(X, y, classes=[-1, 1])
            # the reset model learns what partial_fit learned: the kernel alone does the estimator's pass
            np.testing.assert_allclose(fit.coef_.copy(), kernel(fit), rtol=1e-9, atol=1e-12)
            t = {k: [] for k in ("partial_fit", "kernel", "check", "radius", "sklearn")}
            for _ in range(reps):
                # default arguments bind this iteration's values (B023: no late binding of loop variables)
                t["partial_fit"].append(cpu(lambda ours=ours, X=X, y=y: ours().partial_fit(X, y, classes=[-1, 1])))
                t["kernel"].append(cpu(lambda fit=fit, kernel=kernel: kernel(fit)))
                t["check"].append(cpu(lambda ours=ours, X=X, y=y: ours()._check_X_y(X, y, reset=True)))
                t["radius"].append(
                    cpu(lambda X=X: K.csr_max_row_sqnorm(X.indptr, X.data)) if name == "Perceptron" else 0.0
                )
                t["sklearn"].append(cpu(lambda skl=skl, X=X, y=y: skl().partial_fit(X, y, classes=[-1, 1])))
            best = {k: min(v) for k, v in t.items()}
            rest = best["partial_fit"] - best["kernel"] - best["check"] - best["radius"]
            row = dict(
                dataset=ds["name"],
                learner=name,
                cpu_s=best,
                times=t,
                rest_s=rest,
                repeats=reps,
                ratio_now=best["sklearn"] / best["partial_fit"],
            )
            rows.append(row)
            log(
                f"{ds['name']:>22} {name:<26} partial_fit {best['partial_fit'] * 1e3:8.2f} ms = kernel "
                f"{best['kernel'] * 1e3:.2f} + check {best['check'] * 1e3:.2f} + radius {best['radius'] * 1e3:.2f} "
                f"+ rest {rest * 1e3:.2f}; sklearn {best['sklearn'] * 1e3:.2f}; ours/sklearn {row['ratio_now']:.2f}x"
            )
        out.append(dict(name=ds["name"], n=n, d=d, nnz=int(X.nnz), rows=rows))
    return dict(datasets=out)


def profile_markdown(report):
    m, pr = report["machine"], report["profile"]
    lines = [
        "# First-order learners: where our one pass spends its time (CPU milliseconds)",
        "",
        f"Command: `{report['command']}`",
        "",
        f"Machine: {m['cpu']}, {m['cpus']} logical CPUs (shared; load average {report['loadavg_start']} at start, "
        f"{report['loadavg_end']} at end). numba {m['numba']}, scikit-learn {m['sklearn']}. {report['date']}.",
        "",
        "One `partial_fit(X, y, classes=[-1, 1])` of a fresh estimator over all training rows; best CPU time of "
        "the repeats, runs interleaved. *kernel* = `linear_epoch` alone on the arrays the estimator passes; "
        "*check* = the input validation alone (`_check_X_y`: CSR structure, finite values, labels); *radius* = "
        "the Perceptron's pass for R = max ||x||; *rest* = the remainder (label mapping, allocation, "
        "parameter checks). scikit-learn = its whole `partial_fit`.",
        "",
        "| dataset | learner | partial_fit | kernel | check | radius | rest | scikit-learn | ours / sklearn |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for ds in pr["datasets"]:
        for r in ds["rows"]:
            b = {k: v * 1e3 for k, v in r["cpu_s"].items()}
            lines.append(
                f"| {ds['name']} | {r['learner']} | {b['partial_fit']:.2f} | {b['kernel']:.2f} | "
                f"{b['check']:.2f} | {b['radius']:.2f} | {r['rest_s'] * 1e3:.2f} | {b['sklearn']:.2f} "
                f"| {r['ratio_now']:.2f}x |"
            )
    lines += [
        "",
        "Sizes: "
        + "; ".join(
            f"{ds['name']}: {ds['n']:,} x {ds['d']:,}, {ds['nnz'] / ds['n']:.0f} nnz/row, "
            f"best of {ds['rows'][0]['repeats']}"
            for ds in pr["datasets"]
        )
        + ".",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------
# report
def machine():
    info = dict(python=platform.python_version(), platform=platform.platform(), cpus=os.cpu_count())
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        info["cpu"] = platform.processor()
    import numba
    import river
    import sklearn

    import streamlearn

    for module in (np, numba, sklearn, river, streamlearn):
        info[module.__name__] = module.__version__
    return info


def markdown(report):
    m = report["machine"]
    lines = [
        "# First-order learners: one pass, examples/second",
        "",
        f"Command: `{report['command']}`",
        "",
        f"Machine: {m['cpu']}, {m['cpus']} logical CPUs (shared; load average {report['loadavg_start']} at start, "
        f"{report['loadavg_end']} at end). Python {m['python']}, numpy {m['numpy']}, numba {m['numba']}, "
        f"scikit-learn {m['sklearn']}, river {m['river']}, streamlearn {m['streamlearn']}. {report['date']}.",
        "",
        "Examples/second = training rows / best wall time of one `partial_fit` pass (river: the `learn_one` "
        "calls over the same rows, dicts built 5,000 rows at a time outside the timed loop). *cpu* = the same "
        "ratio from process CPU time (it counts every thread of the process). Accuracy on the "
        "held-out rows after the one pass; *river rows* = ours and river trained on the rows river learnt from "
        "and tested on its held-out rows (the same rows as the others unless `--river-rows` capped them).",
        "",
        "| dataset | learner | streamlearn ex/s | scikit-learn ex/s | river ex/s | ours / sklearn (cpu) "
        "| ours / river | acc ours | acc sklearn | acc ours, river rows | acc river, river rows |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["results"]:
        e, a = r["examples_per_s"], r["accuracy"]
        lines.append(
            f"| {r['dataset']} | {r['learner']} | {e['ours']:,.0f} | {e['sklearn']:,.0f} | {e['river']:,.0f} "
            f"| {r['ratio_sklearn_wall']:.2f}x ({r['ratio_sklearn_cpu']:.2f}x) | {r['ratio_river_wall']:,.0f}x "
            f"| {a['ours']:.3f} | {a['sklearn']:.3f} | {a['ours_river_subset']:.3f} | {a['river_river_subset']:.3f} |"
        )
    lines += [
        "",
        "Sizes: "
        + "; ".join(
            f"{d['name']}: {d['n_train']:,} training rows ({d['nnz_train'] / d['n_train']:.0f} nnz/row), {d['n_test']:,} "
            f"held out, river on {d['n_river']:,} / tested on {d['n_river_test']:,}, best of {d['repeats']} "
            f"(river {d['river_repeats']})"
            for d in report["datasets"]
        )
        + ".",
    ]
    c = report.get("compile")
    if c:
        e, w = c["empty_cache"], c["warm_cache"]
        lines += [
            "",
            "Numba compile (fresh process, tiny data, not in the figures above): first "
            f"`partial_fit` + `predict` {e['first_call_s']:.2f} s with an empty cache "
            f"({w['first_call_s']:.2f} s with the on-disk cache; import {w['import_s']:.2f} s); the other two "
            f"learners then take {e['second_call_s']:.3f} s and {e['third_call_s']:.3f} s (same kernel); "
            f"a warm call {w['warm_call_s'] * 1e3:.1f} ms.",
        ]
    g = report.get("data_timings", {})
    if "generate_s" in g:
        lines += ["", f"Data: generating the synthetic matrix took {g['generate_s']:.1f} s."]
    if "writer" in g:
        wr = g["writer"]
        lines += [
            f"Writing {wr['rows']:,} of its rows as LIBSVM text with `write_svmlight_stream`: "
            f"{wr['bytes'] / 1e6:,.0f} MB in {wr['wall_s']:.1f} s = {wr['mb_per_s_wall']:.0f} MB/s wall "
            f"({wr['mb_per_s_cpu']:.0f} MB/s of CPU time)."
        ]
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=200_000, help="synthetic training rows (default 200000)")
    p.add_argument("--features", type=int, default=1_000_000, help="synthetic features (default 1000000)")
    p.add_argument("--nnz", type=float, default=100, help="synthetic non-zeros per row (default 100)")
    p.add_argument("--zipf-a", type=float, default=1.1, help="synthetic Zipf exponent (default 1.1)")
    p.add_argument(
        "--repeats", type=int, default=5, help="timed passes per library, best kept (default 5; x5 on small data)"
    )
    p.add_argument(
        "--river-rows",
        type=int,
        default=0,
        help="rows river learns from (default 0: all training rows, as the other libraries)",
    )
    p.add_argument("--river-test-rows", type=int, default=5_000, help="held-out rows river predicts (default 5000)")
    p.add_argument("--river-repeats", type=int, default=3, help="timed river passes, best kept (default 3)")
    p.add_argument("--skip-farm-ads", action="store_true")
    p.add_argument("--skip-synthetic", action="store_true")
    p.add_argument("--skip-writer", action="store_true", help="do not time write_svmlight_stream")
    p.add_argument(
        "--out",
        type=Path,
        default=REPO / "benchmarks" / "results",
        help="output directory (default benchmarks/results)",
    )
    p.add_argument("--name", default=None, help="output file stem (default first_order, first_order_profile)")
    p.add_argument(
        "--profile",
        action="store_true",
        help="instead of the comparison: split our pass into kernel / input check / radius / rest, "
        "next to scikit-learn's whole pass (results to first_order_profile.{json,md})",
    )
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore", category=FutureWarning)

    def log(msg):
        print(msg, flush=True)

    report = dict(
        command=command("first_order.py", argv),
        date=time.strftime("%Y-%m-%d %H:%M %Z"),
        machine=machine(),
        loadavg_start=" ".join(f"{x:.1f}" for x in os.getloadavg()),
        results=[],
        datasets=[],
        data_timings={},
    )
    if args.profile:
        stem = args.name or "first_order_profile"
        report["profile"] = profile(args, log)
        report["loadavg_end"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
        return _write(args, stem, report, profile_markdown(report), log)
    log("numba compile probe (fresh processes)...")
    report["compile"] = measure_compile()
    datasets = _datasets(args, report["data_timings"], log)
    if not args.skip_synthetic and not args.skip_writer:
        report["data_timings"]["writer"] = measure_writer(args)
    for ds in datasets:
        rows = bench_dataset(ds, args, log)
        report["results"] += rows
        report["datasets"].append(
            dict(
                name=ds["name"],
                source=ds["source"],
                n_train=ds["X"].shape[0],
                nnz_train=int(ds["X"].nnz),
                n_test=ds["X_test"].shape[0],
                n_river=rows[0]["n_river"],
                n_river_test=rows[0]["n_river_test"],
                repeats=rows[0]["repeats"],
                river_repeats=args.river_repeats,
            )
        )
    report["loadavg_end"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return _write(args, args.name or "first_order", report, markdown(report), log)


def _write(args, stem, report, md, log):
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stem}.json").write_text(json.dumps(report, indent=1) + "\n")
    (args.out / f"{stem}.md").write_text(md)
    log(f"wrote {args.out / (stem + '.json')} and {args.out / (stem + '.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
