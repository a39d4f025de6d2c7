"""Raw data in, VW text part: file -> trained model on a generated click log, streamlearn vs Vowpal Wabbit.

What is measured (same run, same files):

* A click log of ``--rows`` training rows and ``--rows // 5`` test rows is written in VW text by
  ``streamlearn.datasets.write_click_log`` (two namespaces, ``u`` user and ``a`` ad; the test log has
  other rows from the same hidden model).
* Training wall time, each in a fresh subprocess, file -> saved model, with ``-q ua -b BITS``, the fastest of
  ``--repeat`` runs of each configuration, interleaved:
  ``streamlearn train --learner ftrl`` (default parameters, and with VW's ``--ftrl`` defaults
  ``alpha=0.005 beta=0.1 l1=0 l2=0``), ``nag -p loss=logistic`` when the learner exists, and Vowpal Wabbit with ``--ftrl``
  and with its defaults (``--loss_function logistic``). streamlearn's numba code is loaded from its
  on-disk cache (a warm-up run on a small file fills it first). streamlearn's ``train`` also runs
  progressive validation on that pass, as VW prints its progressive loss.
* Vowpal Wabbit is run through the ``vowpalwabbit`` Python package's own command-line driver
  (``python -m vowpalwabbit -d FILE ...``: VW's C++ parser, hasher and learner read the file; no Python
  per line). The package ships no ``vw`` executable; when one is on ``PATH`` it is used instead.
* Test log-loss: each saved model scores the test file (``streamlearn predict --scores``; VW ``-t -i
  MODEL -r RAW``) and the mean logistic loss ``log(1 + exp(-y z))`` is computed here from the raw scores.
* Parse + hash only: ``iter_vw`` over the training file in-process (rows/s, MB/s), and VW with
  ``--noop`` (parse, hash, no learning) in a subprocess.

Writes ``benchmarks/results/raw_data.json`` and ``raw_data.md``. ``python benchmarks/raw_data.py --help``.
The CSV and Parquet part is ``python benchmarks/raw_data.py --tabular`` (``benchmarks/raw_data_tabular.py``,
results in ``raw_data_tabular.md/json``).
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _results import children_cpu, timed_env

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
ENV = timed_env(PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="1")


def _run(cmd):
    """(wall seconds, CPU seconds of the child, completed process)."""
    c = children_cpu()
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=ENV, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{proc.stderr[-2000:]}")
    return seconds, children_cpu() - c, proc


def _vw_cmd():
    exe = shutil.which("vw")
    return (
        ([exe], "vw executable")
        if exe
        else ([sys.executable, "-m", "vowpalwabbit"], "python -m vowpalwabbit (the package's VW driver)")
    )


def _logloss(y, z):
    return float(np.mean(np.logaddexp(0.0, -y * z)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="training rows (test: rows // 5)")
    ap.add_argument("--bits", type=int, default=18)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="raw_data", help="result name under benchmarks/results/")
    ap.add_argument(
        "--repeat", type=int, default=3, help="training runs per configuration, interleaved; the fastest is kept"
    )
    ap.add_argument(
        "--tabular",
        nargs=argparse.REMAINDER,
        default=None,
        metavar="...",
        help="run the CSV/Parquet part instead (benchmarks/raw_data_tabular.py, with the options that "
        "follow): parse + hash throughput against pandas + FeatureHasher, peak memory by size",
    )
    args = ap.parse_args(argv)
    if args.tabular is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from raw_data_tabular import main as tabular_main

        return tabular_main(args.tabular)

    sys.path.insert(0, str(REPO))
    from streamlearn.datasets import iter_vw, load_vw, write_click_log
    from streamlearn.learners import LEARNERS

    py = sys.executable
    vw, vw_how = _vw_cmd()
    tmp = Path(tempfile.mkdtemp(prefix="raw_data_"))
    try:
        t = time.perf_counter()
        train, test = tmp / "train.vw", tmp / "test.vw"
        write_click_log(train, args.rows, seed=args.seed)
        write_click_log(test, args.rows // 5, seed=args.seed + 1000)
        write_click_log(tmp / "warm.vw", 2000, seed=7)
        gen_seconds = time.perf_counter() - t
        mb = train.stat().st_size / 1e6
        _, y_test, _, _ = load_vw(test, bits=args.bits)

        # parse + hash only
        _run(
            [py, "-m", "streamlearn", "evaluate", str(tmp / "warm.vw"), "--learner", "ftrl", "-q", "ua", "--quiet"]
        )  # fills the numba cache
        t, c = time.perf_counter(), time.process_time()
        n = 0
        for X, *_ in iter_vw(train, chunk_size=10_000, bits=args.bits, quadratic=["ua"]):
            n += X.shape[0]
        parse_ours, parse_ours_cpu = time.perf_counter() - t, time.process_time() - c
        parse_vw, parse_vw_cpu, _ = _run(vw + ["-d", str(train), "-q", "ua", "-b", str(args.bits), "--noop", "--quiet"])

        runs = []
        q = ["-q", "ua", "-b", str(args.bits)]
        ours = [
            ("streamlearn ftrl", ["--learner", "ftrl"]),
            (
                "streamlearn ftrl, VW's --ftrl parameters",
                ["--learner", "ftrl", "-p", "alpha=0.005", "-p", "beta=0.1", "-p", "l1=0", "-p", "l2=0"],
            ),
        ]
        if "nag" in LEARNERS:
            # the logistic loss, as the VW runs below (the command line's nag defaults to VW's squared loss)
            ours.append(("streamlearn nag", ["--learner", "nag", "-p", "loss=logistic"]))
        # every configuration trains --repeat times, interleaved (ours, VW, ours, VW, ...): the fastest wall
        # and CPU time of each is kept, which damps other processes on a shared machine for both sides alike
        configs = [("ours", name, opts) for name, opts in ours]
        configs += [("vw", "VW --ftrl", ["--ftrl"]), ("vw", "VW defaults", [])]
        walls, cpus = {}, {}
        models = [tmp / (f"m{i}.slm" if who == "ours" else f"vw{i}.model") for i, (who, _, _) in enumerate(configs)]
        fixed = {}  # the same commands on the 2,000-row file: what each program costs before and after learning
        for _ in range(args.repeat):
            for (who, name, opts), model in zip(configs, models):
                scratch = model.with_name("small-" + model.name)  # the test scores the model of the whole file
                for data, into, out in ((train, walls, model), (tmp / "warm.vw", fixed, scratch)):
                    if who == "ours":
                        cmd = [py, "-m", "streamlearn", "train", str(data), *opts, *q, "-o", str(out), "--quiet"]
                    else:
                        cmd = vw + ["-d", str(data), *q, *opts, "--loss_function", "logistic", "-f", str(out)]
                        cmd.append("--quiet")
                    secs, cpu, _ = _run(cmd)
                    into.setdefault(name, []).append(secs)
                    if into is walls:
                        cpus.setdefault(name, []).append(cpu)
        for (who, name, _opts), model in zip(configs, models):
            if who == "ours":
                _, _, proc = _run([py, "-m", "streamlearn", "predict", str(model), str(test), "--scores"])
                z = np.array(proc.stdout.split(), dtype=float)
            else:
                raw = tmp / "raw.txt"
                _run(vw + ["-d", str(test), "-t", "-i", str(model), "-r", str(raw), "--quiet"])
                z = np.array([float(line.split()[0]) for line in raw.read_text().splitlines()])
            runs.append(
                {
                    "name": name,
                    "train_seconds": min(walls[name]),
                    "train_cpu_seconds": min(cpus[name]),
                    "train_seconds_all": walls[name],
                    "train_cpu_seconds_all": cpus[name],
                    "fixed_seconds": min(fixed[name]),
                    "test_logloss": _logloss(y_test, z),
                }
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    base = {r["name"]: r for r in runs}
    for r in runs:
        peer = base["VW --ftrl"] if "ftrl" in r["name"] else base["VW defaults"]
        r["time_vs_vw"] = r["train_seconds"] / peer["train_seconds"]
        r["learn_vs_vw"] = (r["train_seconds"] - r["fixed_seconds"]) / (peer["train_seconds"] - peer["fixed_seconds"])
        r["cpu_vs_vw"] = r["train_cpu_seconds"] / peer["train_cpu_seconds"]
        r["logloss_vs_vw"] = r["test_logloss"] / peer["test_logloss"]
        r["logloss_vs_vw_defaults"] = r["test_logloss"] / base["VW defaults"]["test_logloss"]
        r["peer"] = peer["name"]
    result = {
        "rows": args.rows,
        "test_rows": args.rows // 5,
        "bits": args.bits,
        "interactions": ["ua"],
        "train_mb": mb,
        "generate_seconds": gen_seconds,
        "vw": vw_how,
        "parse_hash": {
            "streamlearn_iter_vw_seconds": parse_ours,
            "streamlearn_rows_per_second": n / parse_ours,
            "streamlearn_mb_per_second": mb / parse_ours,
            "vw_noop_seconds": parse_vw,
            "ratio_ours_vs_vw": parse_ours / parse_vw,
            "streamlearn_cpu_seconds": parse_ours_cpu,
            "vw_noop_cpu_seconds": parse_vw_cpu,
            "cpu_ratio_ours_vs_vw": parse_ours_cpu / parse_vw_cpu,
        },
        "load_average_after": os.getloadavg()[0],
        "runs": runs,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "repeat": args.repeat,
        "command": "python benchmarks/raw_data.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(json.dumps(result, indent=1) + "\n")
    ph = result["parse_hash"]
    lines = [
        f"# Raw data in: VW text, file -> model ({args.rows:,} training rows, {args.rows // 5:,} test rows)",
        "",
        (
            f"Generated by `{result['command']}`. Click log from `write_click_log` ({mb:.0f} MB of VW text), "
            f"`-q ua -b {args.bits}`. Vowpal Wabbit: {vw_how}. Times are wall-clock and CPU seconds of one "
            f"subprocess each, file to saved model, the fastest of {args.repeat} interleaved runs, measured in the "
            "same run (the CPU time is the fairer figure "
            f"on a loaded machine; load average after the run: {result['load_average_after']:.1f}); log-loss is "
            "on the test file. Both programs parse while they learn: VW in a second thread, `streamlearn train` in "
            "one thread per core but one, which parse the next pieces of the file while the learner works on the "
            "current chunk; the learner parses too whenever the next chunk is not ready (files of 8 MB or more; one "
            "read-ahead thread below). streamlearn starts with warm caches, as an installed "
            "package does after its first run: numba's compiled kernels and Python's bytecode."
        ),
        "",
        (
            "| run | train wall s | wall / peer | train CPU s | CPU / peer | fixed wall s | wall - fixed / peer "
            "| test log-loss | log-loss / peer | log-loss / VW defaults | peer |"
        ),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in runs:
        lines.append(
            f"| {r['name']} | {r['train_seconds']:.2f} | {r['time_vs_vw']:.2f} | {r['train_cpu_seconds']:.2f} "
            f"| {r['cpu_vs_vw']:.2f} | {r['fixed_seconds']:.2f} | {r['learn_vs_vw']:.2f} | {r['test_logloss']:.4f} "
            f"| {r['logloss_vs_vw']:.3f} | {r['logloss_vs_vw_defaults']:.3f} | {r['peer']} |"
        )
    lines += [
        "",
        "Fixed: the same command on a 2,000-row click log (start-up, loading the compiled code, saving the "
        "model; the fastest of the runs); wall - fixed: the time that grows with the data, as a ratio to the "
        "peer's.",
    ]
    lines += [
        "",
        (
            f"Parse + hash only (with `-q ua`): `iter_vw` {ph['streamlearn_iter_vw_seconds']:.2f} s wall, "
            f"{ph['streamlearn_cpu_seconds']:.2f} s CPU ({ph['streamlearn_rows_per_second']:,.0f} rows/s, "
            f"{ph['streamlearn_mb_per_second']:.0f} MB/s, in-process, interpreter start excluded); VW `--noop` "
            f"{ph['vw_noop_seconds']:.2f} s wall, {ph['vw_noop_cpu_seconds']:.2f} s CPU (subprocess, start "
            f"included). Ratio ours / VW: {ph['ratio_ours_vs_vw']:.2f} wall, {ph['cpu_ratio_ours_vs_vw']:.2f} "
            "CPU."
        ),
        "",
    ]
    (RESULTS / f"{args.out}.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
