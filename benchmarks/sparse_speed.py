"""Speed of the sparse online learners against river and Vowpal Wabbit, on farm-ads and on a
synthetic click-log-like stream (1M rows, 2^22 features, Zipf feature frequencies, ~40 non-zeros per row).

Run: ``.venv/bin/python benchmarks/sparse_speed.py`` (about 5 minutes; ``--quick`` for a 100k-row smoke run).
Writes ``benchmarks/results/sparse_speed.{json,md}``. Everything below is measured in the same run, so the
ratios are meaningful even on a busy machine (the absolute times are not: the 1-minute load average is
recorded).

1. In-memory CSR, examples per second of FTRL-Proximal (logistic loss), ours
   (``FTRLProximalClassifier.partial_fit`` on the whole training CSR, after a 100-row warm-up that loads the
   numba cache) against river's ``LogisticRegression(optimizer=optim.FTRLProximal(...))`` fed ``learn_one``
   with dicts built beforehand (not timed) from the first ``--river-rows`` rows (all rows for farm-ads).
   Both: median of ``--repeats`` runs, a fresh model each. Target: ours >= 100x river.
2. File -> trained model, wall time of a fresh process each, alternating, median of ``--repeats``:
   * ours: ``python -c <script>`` that imports streamlearn, streams the LIBSVM file with
     ``iter_svmlight(path, chunk_size=100_000, n_features=..., zero_based=False)`` (one read), calls
     ``partial_fit`` per chunk and saves the model file (``est.save``). Two variants: the chunks read in the
     main thread ("ours"), or by a background thread one chunk ahead ("ours, reader thread"; the parse and
     learn kernels release the GIL, so reading and learning overlap on 2 cores, as VW's parser thread does;
     the thread starts before the learner is built, so the first chunk is parsed while the main thread
     imports scikit-learn: reading a LIBSVM file does not import it). In that variant the import and
     read + learn stages overlap, and "import" is the main thread's time in it.
   * VW: ``python -m vowpalwabbit -d train.vw ... -f model --quiet`` (the pip package ships no ``vw`` binary;
     this runs VW's native C++ driver and parser thread in-process). The VW text file is converted from the
     LIBSVM file beforehand (``label |f idx:val ...``; not timed); ``-b`` is the smallest with
     2^b >= n_features + 1, so the numeric feature names map one-to-one onto VW's weights.
   Matched hyperparameters (same loss, logistic):
   * FTRL: ours ``ftrl`` alpha, beta, l1, l2 = VW ``--ftrl --ftrl_alpha alpha --ftrl_beta beta --l1 l1 --l2 l2``
     (the same per-coordinate update; VW computes in float32 and also regularises its constant feature).
   * TG: ours ``tg`` with theta = inf, k = 1, gravity = g, eta0, eta_t = eta0 / sqrt(t) = VW
     ``--sgd --l1 g -l eta0 --power_t 0.5`` (VW's truncated gradient: plain SGD steps eta0 / t^0.5 with the
     L1 gravity accumulated and applied lazily).
   * ours CLI: ``python -m streamlearn train train.svm --learner NAME -p ... --n-features N --zero-based false
     --chunk-size 100000 -o model --quiet`` (what a user runs; progressive validation included).
   Each script run reports its stages (interpreter start, import, numba's one-time start-up, read + learn, save,
   interpreter teardown) and the first-call time of each kernel (loading it from numba's cache). On farm-ads,
   the fresh-process floors (``python -c pass``, ``import numpy``, ``import numpy, numba``, ``... sklearn.base``,
   ``import vowpalwabbit``) are timed in the same run.
   Test log-loss of both models on the held-out rows (VW: ``-t -i model -p preds --link logistic``; ours:
   ``predict_proba`` of the loaded model file). Targets: wall time <= 1.0x VW, log-loss within 1 % of VW's.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from _results import children_cpu

RESULTS = Path(__file__).resolve().parent / "results"
PY = sys.executable

#: dataset -> hyperparameters: FTRL (alpha, beta, l1, l2) and TG (gravity, eta0)
HYPER = {
    "farm-ads": {"ftrl": {"alpha": 0.1, "beta": 1.0, "l1": 1.0, "l2": 1.0}, "tg": {"gravity": 1e-3, "eta0": 0.5}},
    "click-synthetic": {
        "ftrl": {"alpha": 0.1, "beta": 1.0, "l1": 1.0, "l2": 1.0},
        "tg": {"gravity": 1e-6, "eta0": 2.0},
    },
}

OURS_SCRIPT = r"""
import json, queue, sys, threading, time
wall0, t0 = time.time(), time.perf_counter()
from streamlearn.datasets import iter_svmlight  # the reader alone: numpy, scipy.sparse, numba (no sklearn)
from streamlearn.learners import make_learner
learner, path, n_features, params, out, mode = sys.argv[1:7]
t_import = time.perf_counter() - t0
# numba's one-time start-up (typing and target registries), which the first kernel call of any process
# would otherwise pay: timed on its own
s = time.perf_counter()
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()
t_numba = time.perf_counter() - s
# first call of each kernel signature = loading it from numba's on-disk cache: timed per kernel
from numba.core.dispatcher import Dispatcher
loads, _orig = [], Dispatcher._compile_for_args
def _logged(self, *a, **k):
    s = time.perf_counter()
    try:
        return _orig(self, *a, **k)
    finally:
        loads.append((self.py_func.__module__.rpartition(".")[2] + "." + self.py_func.__name__,
                      time.perf_counter() - s))
Dispatcher._compile_for_args = _logged
t_body = time.perf_counter()
chunks = iter_svmlight(path, chunk_size=100_000, n_features=int(n_features), zero_based=False)

def ahead(it):
    # a thread reads one chunk ahead; it starts now, so the first chunk is parsed (the kernel releases the
    # GIL) while the main thread imports the learner's module and scikit-learn; up to 4 chunks wait
    q = queue.Queue(maxsize=4)
    def work():
        try:
            for item in it:
                q.put(item)
        except BaseException as exc:  # hand the reader's error to the consumer
            q.put(exc)
        q.put(None)
    threading.Thread(target=work, daemon=True).start()
    def gen():
        while (item := q.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    return gen()

if mode == "thread":
    chunks = ahead(chunks)
s = time.perf_counter()
est = make_learner(learner, json.loads(params))  # imports the learner's module and sklearn.base
t_make = time.perf_counter() - s
for X, y in chunks:
    est.partial_fit(X, y, classes=[-1, 1])
t_learn = time.perf_counter()
est.save(out)
t_save = time.perf_counter()
print(json.dumps({"wall_start": wall0, "wall_end": time.time(), "import": t_import + t_make,
                  "numba_startup": t_numba, "read_and_learn": t_learn - t_body - t_make, "save": t_save - t_learn,
                  "kernel_loads": loads, "nnz_weights": est.nnz_weights, "examples": est.t_}))
"""

#: fresh-process floors, measured in the same run as VW: what no streamlearn change can go below
FLOORS = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import numpy, numba": "import numpy, numba",
    "import numpy, numba, scipy.sparse, sklearn.base": "import numpy, numba, scipy.sparse, sklearn.base",
    "import vowpalwabbit": "import vowpalwabbit",
}

VW_SCRIPT = r"""
import json, sys, time
import vowpalwabbit
t0 = time.perf_counter()
vw = vowpalwabbit.Workspace(arg_list=sys.argv[1:])  # -d: runs VW's native driver and parser thread
vw.finish()  # writes the -f model file
print(json.dumps({"train_and_save": time.perf_counter() - t0}))
"""


def _timed(cmd, stamps=None):
    """(wall, cpu, stdout) of a fresh process; ``stamps`` (a dict) gets the launch and end epoch times."""
    cpu0, t0, w0 = children_cpu(), time.perf_counter(), time.time()
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    if stamps is not None:
        stamps.update(launch=w0, done=time.time())
    return time.perf_counter() - t0, children_cpu() - cpu0, proc.stdout


def _log_loss(y, p):
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-15, 1 - 1e-15)
    return float(-np.mean(np.where(y > 0, np.log(p), np.log1p(-p))))


# ---------------------------------------------------------------------------------------------------
# data
def _write_pair(X, y, path_svm, path_vw):
    """LIBSVM (1-based) and VW text versions of (X, y), both with labels -1/+1."""
    from sklearn.datasets import dump_svmlight_file

    dump_svmlight_file(X, y.astype(np.int64), str(path_svm), zero_based=False)
    _svm_to_vw(path_svm, path_vw)


def _svm_to_vw(path_svm, path_vw):
    with open(path_svm, "rb") as src, open(path_vw, "wb") as dst:
        for line in src:
            label, _, rest = line.partition(b" ")
            dst.write(label + b" |f " + rest if rest else label + b" |f\n")


def _prepare(args):
    """Both data sets as {name: dict(train/test paths, n_features)}; files are reused when present."""
    from streamlearn.datasets import load_farm_ads, write_svmlight_stream

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    out = {}
    X, y = load_farm_ads()
    d = work / "farm-ads"
    d.mkdir(exist_ok=True)
    if not (d / "test.vw").exists():
        perm = np.random.default_rng(0).permutation(X.shape[0])
        n_train = int(round(0.7 * X.shape[0]))
        _write_pair(X[perm[:n_train]], y[perm[:n_train]], d / "train.svm", d / "train.vw")
        _write_pair(X[perm[n_train:]], y[perm[n_train:]], d / "test.svm", d / "test.vw")
    out["farm-ads"] = {"dir": d, "n_features": X.shape[1], "rows": X.shape[0]}

    rows, test_rows = args.rows, args.test_rows
    d = work / f"click-{rows}-{test_rows}"
    d.mkdir(exist_ok=True)
    if not (d / "test.vw").exists():
        full = d / "all.svm"
        print(f"writing the synthetic stream ({rows + test_rows} rows) to {full} ...", flush=True)
        write_svmlight_stream(full, rows + test_rows, args.n_features, nnz_per_row=args.nnz, zipf_a=1.1, random_state=0)
        with open(full, "rb") as src, open(d / "train.svm", "wb") as tr, open(d / "test.svm", "wb") as te:
            for i, line in enumerate(src):
                (tr if i < rows else te).write(line)
        full.unlink()
        _svm_to_vw(d / "train.svm", d / "train.vw")
        _svm_to_vw(d / "test.svm", d / "test.vw")
    out["click-synthetic"] = {"dir": d, "n_features": args.n_features, "rows": rows + test_rows}
    return out


# ---------------------------------------------------------------------------------------------------
# 1. in-memory CSR: ours vs river
def _in_memory(name, info, args):
    from river import linear_model as rlm
    from river import optim

    from streamlearn.datasets import load_svmlight
    from streamlearn.linear_model import FTRLProximalClassifier

    X, y = load_svmlight(info["dir"] / "train.svm", n_features=info["n_features"], zero_based=False)
    h = HYPER[name]["ftrl"]
    FTRLProximalClassifier(**h).partial_fit(X[:100], y[:100], classes=[-1, 1])  # warm-up: numba cache
    ours = []
    for _ in range(args.repeats):
        est = FTRLProximalClassifier(**h)
        t0 = time.perf_counter()
        est.partial_fit(X, y, classes=[-1, 1])
        ours.append(X.shape[0] / (time.perf_counter() - t0))
    n_river = min(X.shape[0], args.river_rows)
    rows = []
    for i in range(n_river):
        s, e = X.indptr[i], X.indptr[i + 1]
        rows.append(dict(zip(X.indices[s:e].tolist(), X.data[s:e].tolist())))
    labels = (y[:n_river] > 0).tolist()
    river_runs = []
    for _ in range(args.repeats):  # same treatment as ours: a fresh model each time, median
        model = rlm.LogisticRegression(
            optimizer=optim.FTRLProximal(alpha=h["alpha"], beta=h["beta"], l1=h["l1"], l2=h["l2"])
        )
        t0 = time.perf_counter()
        for x, label in zip(rows, labels):
            model.learn_one(x, label)
        river_runs.append(n_river / (time.perf_counter() - t0))
    river = float(np.median(river_runs))
    ours_med = float(np.median(ours))
    return {
        "data": name,
        "ours_rows": X.shape[0],
        "ours_examples_per_second": ours_med,
        "river_rows": n_river,
        "river_examples_per_second": river,
        "ratio": ours_med / river,
        "target_ratio": 100.0,
        "meets_target": ours_med / river >= 100.0,
    }


# ---------------------------------------------------------------------------------------------------
# 2. file -> model: ours vs VW
def _vw_args(algo, h):
    if algo == "ftrl":
        return [
            "--ftrl",
            "--ftrl_alpha",
            str(h["alpha"]),
            "--ftrl_beta",
            str(h["beta"]),
            "--l1",
            str(h["l1"]),
            "--l2",
            str(h["l2"]),
        ]
    return ["--sgd", "--l1", str(h["gravity"]), "-l", str(h["eta0"]), "--power_t", "0.5"]


def _ours_params(algo, h):
    if algo == "ftrl":
        return dict(h)
    return {"gravity": h["gravity"], "eta0": h["eta0"], "theta": math.inf, "k": 1, "learning_rate": "invsqrt"}


def _cli_params(algo, h):
    out = []
    for k, v in _ours_params(algo, h).items():
        out += ["-p", f"{k}={v}"]
    return out


WHO = ("ours", "ours, reader thread", "ours CLI")
STAGES = ("start", "import", "numba_startup", "read_and_learn", "save", "exit")


def _file_to_model(name, info, algo, args):
    from streamlearn.datasets import load_svmlight
    from streamlearn.persist import load

    d, nf = info["dir"], info["n_features"]
    bits = max(1, math.ceil(math.log2(nf + 1)))
    h = HYPER[name][algo]
    ours_params = json.dumps(_ours_params(algo, h))
    runs = {who: [] for who in (*WHO, "vw")}
    vw_inproc, floors = [], {k: [] for k in FLOORS}
    breakdown = {}
    vw_model, our_model, cli_model = str(d / f"{algo}.vwmodel"), str(d / f"{algo}.slm"), str(d / f"{algo}.cli.slm")
    vw_cmd = [
        PY,
        "-m",
        "vowpalwabbit",
        "-d",
        str(d / "train.vw"),
        "-b",
        str(bits),
        "--loss_function",
        "logistic",
        *_vw_args(algo, h),
        "-f",
        vw_model,
        "--quiet",
    ]
    cmds = {
        who: [PY, "-c", OURS_SCRIPT, algo, str(d / "train.svm"), str(nf), ours_params, our_model, m]
        for who, m in (("ours", "main"), ("ours, reader thread", "thread"))
    }
    # the command line: same file, width and chunk size given, progressive validation as always
    cmds["ours CLI"] = [
        PY,
        "-m",
        "streamlearn",
        "train",
        str(d / "train.svm"),
        "--learner",
        algo,
        *_cli_params(algo, h),
        "--n-features",
        str(nf),
        "--zero-based",
        "false",
        "--chunk-size",
        "100000",
        "-o",
        cli_model,
        "--quiet",
    ]
    cmds["vw"] = vw_cmd
    _timed(cmds["ours"])  # untimed first runs: fill the numba cache and the page cache
    _timed(cmds["ours CLI"])
    _timed(vw_cmd)
    for _ in range(args.repeats):
        for who in ("ours", "vw", "ours CLI", "ours, reader thread"):
            stamps = {}
            wall, cpu, out = _timed(cmds[who], stamps)
            runs[who].append((wall, cpu))
            if who in ("ours", "ours, reader thread"):
                b = json.loads(out.strip().splitlines()[-1])
                b["start"] = b["wall_start"] - stamps["launch"]  # interpreter start-up
                b["exit"] = stamps["done"] - b["wall_end"]  # interpreter teardown and process end
                breakdown.setdefault(who, []).append(b)
        _, _, out = _timed([PY, "-c", VW_SCRIPT, *vw_cmd[3:]])
        vw_inproc.append(json.loads(out.strip().splitlines()[-1])["train_and_save"])
        if name == "farm-ads":  # the floors, interleaved with the runs above
            for k, code in FLOORS.items():
                floors[k].append(_timed([PY, "-c", code])[0])
    # test log-loss
    X_test, y_test = load_svmlight(d / "test.svm", n_features=nf, zero_based=False)
    ours_ll = _log_loss(y_test, load(our_model).predict_proba(X_test)[:, 1])
    cli_ll = _log_loss(y_test, load(cli_model).predict_proba(X_test)[:, 1])
    preds = d / f"{algo}.vwpred"
    subprocess.run(
        [
            PY,
            "-m",
            "vowpalwabbit",
            "-d",
            str(d / "test.vw"),
            "-t",
            "-i",
            vw_model,
            "-p",
            str(preds),
            "--link",
            "logistic",
            "--quiet",
        ],
        check=True,
        capture_output=True,
    )
    vw_ll = _log_loss(y_test, np.loadtxt(preds, ndmin=1))
    med = {k: (float(np.median([w for w, _ in v])), float(np.median([c for _, c in v]))) for k, v in runs.items()}
    row = {
        "data": name,
        "learner": algo,
        "ours_params": json.loads(ours_params),
        "vw_args": " ".join(_vw_args(algo, h)),
        "vw_bits": bits,
        "repeats": args.repeats,
    }
    for who, (wall, cpu) in med.items():
        row[f"{who} wall_s"] = wall
        row[f"{who} cpu_s"] = cpu
    for who in WHO:
        row[f"{who} / vw wall"] = med[who][0] / med["vw"][0]
    for who in ("ours", "ours, reader thread"):
        b = breakdown[who]
        row[f"{who} breakdown_s"] = {k: float(np.median([r[k] for r in b])) for k in STAGES}
    loads = {}
    for r in breakdown["ours"]:
        for kernel, sec in r["kernel_loads"]:
            loads.setdefault(kernel, []).append(sec)
    row["kernel first-call ms"] = {k: 1e3 * float(np.median(v)) for k, v in loads.items()}
    # after the imports: ours read + learn + save (with and without numba's one-time start-up) vs VW's driver
    # (read + learn) + model write in the same process after `import vowpalwabbit`
    row["vw in-process_s"] = float(np.median(vw_inproc))
    for who in ("ours", "ours, reader thread"):
        b = row[f"{who} breakdown_s"]
        row[f"{who} in-process_s"] = b["read_and_learn"] + b["save"]
        row[f"{who} in-process with numba start-up_s"] = b["numba_startup"] + b["read_and_learn"] + b["save"]
        row[f"{who} / vw in-process"] = row[f"{who} in-process_s"] / row["vw in-process_s"]
        row[f"{who} / vw in-process with numba start-up"] = (
            row[f"{who} in-process with numba start-up_s"] / row["vw in-process_s"]
        )
    if name == "farm-ads":
        row["floors_s"] = {k: float(np.median(v)) for k, v in floors.items()}
    row["ours nnz_weights"] = breakdown["ours"][-1]["nnz_weights"]
    row["ours test_log_loss"] = ours_ll
    row["ours CLI test_log_loss"] = cli_ll
    row["vw test_log_loss"] = vw_ll
    row["log_loss ours / vw"] = ours_ll / vw_ll
    row["log_loss ours CLI / vw"] = cli_ll / vw_ll
    best = min(row[f"{who} / vw wall"] for who in WHO)
    row["meets_time_target"] = best <= 1.0
    row["meets_log_loss_target"] = max(ours_ll, cli_ll) <= 1.01 * vw_ll
    return row


# ---------------------------------------------------------------------------------------------------
def _markdown(out):
    lines = [
        "# Sparse learners: speed against river and Vowpal Wabbit",
        "",
        f"Command: `{out['command']}`. 1-minute load average at start/end: {out['load_start']:.2f} / "
        f"{out['load_end']:.2f} on {os.cpu_count()} cores (shared machine: compare ratios, not absolute "
        "times). Synthetic stream: " + out["synthetic"] + ".",
        "",
        "## 1. In-memory CSR, FTRL-Proximal examples/second (target: ours >= 100x river)",
        "",
        "| data | ours ex/s (rows) | river ex/s (rows) | ratio | target met |",
        "|---|---|---|---|---|",
    ]
    for r in out["in_memory"]:
        lines.append(
            f"| {r['data']} | {r['ours_examples_per_second']:,.0f} ({r['ours_rows']:,}) | "
            f"{r['river_examples_per_second']:,.0f} ({r['river_rows']:,}) | {r['ratio']:.0f}x | "
            f"{'yes' if r['meets_target'] else 'NO'} |"
        )
    lines += [
        "",
        "## 2. File -> trained model file, fresh process each (median wall seconds; target <= 1.0x VW; "
        "test log-loss within 1 % of VW's)",
        "",
        "'ours': a Python script (streamlearn.learners.make_learner + iter_svmlight + partial_fit + save); "
        "'reader thread': the same with the chunks read one ahead by a thread; 'CLI': `streamlearn train "
        "FILE --learner NAME -p ... --n-features N --zero-based false --chunk-size 100000 -o MODEL --quiet` "
        "(progressive validation included).",
        "",
        "| data | learner | VW args | VW s | ours s (ratio) | ours, reader thread s (ratio) | ours CLI s (ratio) "
        "| log-loss VW / ours / CLI (ours / VW) | nnz_weights | targets met |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in out["file_to_model"]:
        met = (
            "time "
            + ("yes" if r["meets_time_target"] else "NO")
            + ", log-loss "
            + ("yes" if r["meets_log_loss_target"] else "NO")
        )
        lines.append(
            f"| {r['data']} | {r['learner']} | `{r['vw_args']} -b {r['vw_bits']}` | {r['vw wall_s']:.2f} | "
            + " | ".join(f"{r[f'{w} wall_s']:.2f} ({r[f'{w} / vw wall']:.2f}x)" for w in WHO)
            + f" | {r['vw test_log_loss']:.4f} / {r['ours test_log_loss']:.4f} / {r['ours CLI test_log_loss']:.4f} "
            f"({r['log_loss ours / vw']:.4f}) | {r['ours nnz_weights']:,} | {met} |"
        )
    lines += [
        "",
        "### Where the time of a fresh process goes (ours, median seconds)",
        "",
        "start = interpreter start-up before the script's first line; numba start-up = numba's one-time "
        "typing/target registries (`cpu_target.target_context.refresh()`, otherwise paid by the first kernel "
        "call); exit = interpreter teardown after the last line (the CLI skips it: os._exit after atexit and "
        "flush).",
        "",
        "| data | learner | variant | start | import | numba start-up | read+learn | save | exit | total wall | "
        "CPU s (VW CPU s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in out["file_to_model"]:
        for w in ("ours", "ours, reader thread"):
            b = r[f"{w} breakdown_s"]
            lines.append(
                f"| {r['data']} | {r['learner']} | {w} | "
                + " | ".join(f"{b[k]:.2f}" for k in STAGES)
                + f" | {r[f'{w} wall_s']:.2f} | {r[f'{w} cpu_s']:.2f} ({r['vw cpu_s']:.2f}) |"
            )
        lines.append(
            f"| {r['data']} | {r['learner']} | ours CLI | | | | | | | {r['ours CLI wall_s']:.2f} | "
            f"{r['ours CLI cpu_s']:.2f} ({r['vw cpu_s']:.2f}) |"
        )
    kl = [
        f"{r['data']} {r['learner']}: " + ", ".join(f"{k} {v:.1f}" for k, v in r["kernel first-call ms"].items())
        for r in out["file_to_model"]
    ]
    lines += [
        "",
        "First call of each kernel after numba's start-up (= loading its compiled code from numba's on-disk "
        "cache), median ms: " + "; ".join(kl) + ".",
    ]
    fl = [r for r in out["file_to_model"] if "floors_s" in r]
    if fl:
        f = fl[0]["floors_s"]
        vw = min(r["vw wall_s"] for r in fl)
        lines += [
            "",
            "### Fresh-process floors (farm-ads rows, same run, median wall seconds of `python -c CODE`)",
            "",
            "| CODE | seconds | / VW's whole farm-ads run |",
            "|---|---|---|",
        ]
        lines += [f"| `{k}` | {v:.2f} | {v / vw:.2f}x |" for k, v in f.items()]
        lines += [
            "",
            f"VW's whole farm-ads run (start, read, learn, write the model, exit): {vw:.2f} s. "
            + (
                "Importing numpy and numba alone takes longer, so fresh-process parity on farm-ads is not "
                "reachable by a numba library."
                if f["import numpy, numba"] > vw
                else ""
            ),
        ]
    lines += [
        "",
        "### After the imports (same processes: ours read + learn + save; VW: `Workspace(-d ... -f ...)` + "
        "`finish()` after `import vowpalwabbit`; the reader-thread variant's figure leaves out the chunks it "
        "parsed while the main thread was importing, so it flatters that variant)",
        "",
        "| data | learner | VW s | ours s (ratio) | ours incl. numba start-up s (ratio) | ours, reader thread s "
        "(ratio) |",
        "|---|---|---|---|---|---|",
    ]
    for r in out["file_to_model"]:
        lines.append(
            f"| {r['data']} | {r['learner']} | {r['vw in-process_s']:.2f} | {r['ours in-process_s']:.2f} "
            f"({r['ours / vw in-process']:.2f}x) | {r['ours in-process with numba start-up_s']:.2f} "
            f"({r['ours / vw in-process with numba start-up']:.2f}x) | "
            f"{r['ours, reader thread in-process_s']:.2f} ({r['ours, reader thread / vw in-process']:.2f}x) |"
        )
    lines.append("")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="training rows of the synthetic stream")
    p.add_argument("--test-rows", type=int, default=100_000, help="test rows of the synthetic stream")
    p.add_argument("--n-features", type=int, default=2**22)
    p.add_argument("--nnz", type=float, default=40.0, help="non-zeros per row of the synthetic stream")
    p.add_argument("--river-rows", type=int, default=20_000, help="rows given to river (its speed is per example)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--workdir", default="/tmp/streamlearn-sparse-speed", help="data files (reused between runs)")
    p.add_argument("--quick", action="store_true", help="100k rows, 1 repeat (smoke run; results not written)")
    args = p.parse_args(argv)
    if args.quick:
        args.rows, args.test_rows, args.repeats, args.river_rows = 100_000, 10_000, 1, 5_000
    load_start = os.getloadavg()[0]
    data = _prepare(args)
    in_memory = [_in_memory(name, info, args) for name, info in data.items()]
    print(json.dumps(in_memory, indent=1), flush=True)
    f2m = []
    for name, info in data.items():
        for algo in ("ftrl", "tg"):
            f2m.append(_file_to_model(name, info, algo, args))
            print(json.dumps(f2m[-1], indent=1), flush=True)
    out = {
        "command": "python benchmarks/sparse_speed.py" + (" " + " ".join(argv or sys.argv[1:])).rstrip(),
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
        "synthetic": (
            f"{args.rows:,} training + {args.test_rows:,} test rows, {args.n_features:,} features, "
            f"Zipf(1.1) frequencies, {args.nnz:g} non-zeros per row, binary values "
            "(streamlearn.datasets.write_svmlight_stream, random_state=0)"
        ),
        "hyperparameters": HYPER,
        "in_memory": in_memory,
        "file_to_model": f2m,
    }
    md = _markdown(out)
    print(md)
    if not args.quick:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "sparse_speed.json").write_text(json.dumps(out, indent=1, default=str))
        (RESULTS / "sparse_speed.md").write_text(md)


if __name__ == "__main__":
    main()
