"""The main job (``make run`` / ``streamlearn demo``): every registered classification learner, one pass
over the bundled a9a with progressive validation, then test accuracy on a9a.t, timing and a PNG of the
online error curves.

Each learner is first warmed up by the same calls on a few rows (progressive validation, then scoring)
so that µs/example measures learning, not numba's compilation (or cache load); the warm-up model is
thrown away. With ``--jobs N`` (default: the CPUs this process may use) the warm-ups of all learners run
first, shared between this process and N - 1 worker processes that compile kernels into numba's disk
cache: a first run (empty cache) waits for about 1/N of the compile time, and the timed passes run after
every worker has finished, so nothing else competes with them.

``streamlearn demo --write-data DIR`` writes the bundled files as plain LIBSVM text (``DIR/a9a`` and
``DIR/a9a.t``) instead, for the command-line quickstart.
"""

import os
import sys
import time
from pathlib import Path

from .._cpus import available_cpus
from ._markdown import write_report
from ._options import positive_int

HELP = "every learner, one pass over the bundled a9a, scored on a9a.t (the main job of 'make run')"
WARM_UP_ROWS = 64
COLUMNS = ["learner", "online_error_rate", "average_loss", "test_accuracy", "us_per_example", "nnz_weights"]


def add_arguments(parser):
    parser.add_argument(
        "--learners",
        metavar="A,B,...",
        default=None,
        help="comma-separated learner names (default: every demo learner)",
    )
    parser.add_argument(
        "--jobs",
        metavar="N",
        type=positive_int,
        default=None,
        help="processes that compile the learners' kernels before the timed passes (default: the CPUs "
        "available; 1: this process only)",
    )
    parser.add_argument("--markdown", metavar="PATH", default=None, help="also write the table as Markdown")
    parser.add_argument(
        "--write-data",
        metavar="DIR",
        default=None,
        help="write the bundled a9a training and test files to DIR/a9a and DIR/a9a.t (LIBSVM "
        "text) and stop; existing files are never overwritten",
    )


def write_data(directory) -> list[Path]:
    """Write the bundled a9a files as plain LIBSVM text to ``directory/a9a`` and ``directory/a9a.t``.

    Refuses (``ValueError``) when either file exists; each file is written whole or not at all.
    Returns the two paths.
    """
    import lzma
    import shutil

    from ..datasets import bundled_path

    if not str(directory):
        raise ValueError("--write-data: the folder name is empty; give a folder (e.g. '.').")
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"--write-data: {directory} is not a directory")
    targets = {"a9a.xz": directory / "a9a", "a9a.t.xz": directory / "a9a.t"}
    for target in targets.values():
        if target.exists():
            raise ValueError(f"--write-data: {target} exists; remove it or choose another directory")
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, target in targets.items():
            tmp = target.with_name(target.name + ".part")
            with lzma.open(bundled_path(name)) as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.replace(tmp, target)
            tmp = None
    except BaseException as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            where = tmp.with_suffix("") if tmp is not None else directory
            raise ValueError(f"--write-data: cannot write {where}: {exc.strerror or exc}.") from exc
        raise
    return list(targets.values())


def run(args):
    from sklearn.base import clone

    from ..datasets import load_a9a
    from ..learners import LEARNERS, make_learner, scaled_learner
    from ..evaluation import progressive_validation

    if getattr(args, "write_data", None) is not None:
        paths = write_data(args.write_data)
        return [{"file": str(p), "bytes": p.stat().st_size} for p in paths]
    names = (
        [n.strip() for n in args.learners.split(",")] if args.learners else [n for n, s in LEARNERS.items() if s.demo]
    )
    for name in names:  # before any work: the demo runs progressive validation of classifiers on a9a
        spec = LEARNERS.get(name)
        if spec is not None and (spec.batch or spec.task != "classification"):
            what = "a batch learner (no progressive validation)" if spec.batch else f"a {spec.task} learner"
            raise ValueError(
                f"--learners: {name} is {what}; the demo runs one online pass of classifiers over a9a (binary "
                "labels): name online classifiers (see 'streamlearn learners')."
            )
    # a cold numba cache: the learners' kernels are compiled by this process and workers together, which
    # start at once on the first rows (read without compiling) and go on while the data is read
    jobs = (getattr(args, "jobs", None) or available_cpus()) if _numba_cache_is_cold() else 1
    with ParallelWarmUp(names, jobs, first_rows) as warm_ups:
        X, y, X_test, y_test = load_a9a()
        warm_ups.share()
    few = (X[:WARM_UP_ROWS], y[:WARM_UP_ROWS], X_test[:WARM_UP_ROWS], y_test[:WARM_UP_ROWS])
    rows = []
    args._curves = {}
    for name in names:
        learner = scaled_learner(name, make_learner(name))  # as 'streamlearn train' runs it
        # warm-up on the same code path (progressive validation, then scoring) over a few rows, so that
        # us_per_example measures learning, not numba compiling or loading the kernels
        warm_up(clone(learner), few)
        t0 = time.perf_counter()
        result = progressive_validation(learner, (X, y), classes=[-1, 1], progress=args.progress)
        seconds = time.perf_counter() - t0
        rows.append(
            {
                "learner": name,
                "online_error_rate": result.online_error_rate,
                "average_loss": result.average_loss,
                "test_accuracy": float(learner.score(X_test, y_test)),
                "us_per_example": 1e6 * seconds / result.n_examples,
                "nnz_weights": learner.nnz_weights,
                "loss": result.loss,
            }
        )
        args._curves[name] = result
    if getattr(args, "markdown", None):
        _write_markdown(rows, args.markdown)
    return rows


def warm_up(learner, few):
    """The demo's calls (progressive validation, then scoring) on the few rows ``few = (X, y, X_test,
    y_test)``: numba compiles ``learner``'s kernels, or loads them from its disk cache."""
    from ..evaluation import progressive_validation

    X, y, X_test, y_test = few
    progressive_validation(learner, (X, y), classes=[-1, 1])
    learner.score(X_test, y_test)


def _numba_cache_is_cold():
    """Whether numba compiles (rather than loads from its disk cache) the input check that every learner
    runs first: then the cache is cold, and compiling the kernels in parallel pays."""
    import numpy as np
    from numba.core import event

    from .._kernels.linear import csr_check

    listener = _compiles()
    with event.install_listener("numba:compile", listener):
        csr_check(np.zeros(2, np.int32), np.zeros(1, np.int32), np.zeros(1, np.uint64), 1, np.uint64(0))
    return listener.n > 0


def _compiles():
    """A numba event listener that counts compilations (not loads from the disk cache)."""
    from numba.core import event

    class Compiles(event.Listener):
        n = 0

        def on_start(self, ev):
            self.n += 1

        def on_end(self, ev):
            pass

    return Compiles()


#: fixed parameters with which a learner runs another kernel than the rest of its estimator class (the
#: sketched Newton step: one kernel for the frequent-directions family, one for RP, one for Oja)
_OWN_KERNEL = {"sketch": {"rp": "rp", "oja": "oja"}, "covariance": {"diagonal": "diagonal"}}

#: states of a unit of warm-up work in :class:`ParallelWarmUp`
_FREE, _MINE, _WORKER, _WORKER_DONE = 0, 1, 2, 3


class ParallelWarmUp:
    """Warm up learners ``names`` (:func:`warm_up` on the rows ``few = rows()``) in this process and
    ``jobs - 1`` forked workers, sharing numba's compilation on a cold cache.

    Learners of one estimator class share their kernels, so they form one unit of work (split where a fixed
    parameter picks another kernel, :data:`_OWN_KERNEL`). The workers start when the context is entered and
    take units from the back of the list, each claiming a unit under a lock; :meth:`share` makes this
    process take units from the front until none is left, then wait for the units the workers claimed (or
    for their end, if one dies: this process then compiles what is missing when it runs the learner). A
    worker's kernels reach this process through numba's disk cache. Leaving the context stops the workers
    that are still running: without :meth:`share` (a warm cache, where every load is quick) that is at once.
    A worker that fails on a learner goes on with the next unit (this process reports the error when it runs
    that learner); the workers ignore Ctrl-C. Workers are forked (they start at once, with the modules and
    compiled kernels of this process), so there are none where fork is unsafe: off Linux, or when this
    process runs other threads.
    """

    def __init__(self, names, jobs, rows):
        from ..learners import LEARNERS

        units = {}
        for name in names:
            spec = LEARNERS.get(name)
            own = [_OWN_KERNEL[k].get(v) for k, v in spec.fixed.items() if k in _OWN_KERNEL] if spec else []
            key = (spec.target, *own) if spec else name
            units.setdefault(key, []).append(name)
        self.groups = list(units.values())
        self.jobs = max(1, min(jobs, len(self.groups)))
        self.rows = rows
        self.workers = []

    def __enter__(self):
        import threading

        if self.jobs < 2 or sys.platform != "linux" or threading.active_count() > 1:
            return self
        import multiprocessing

        self.few = self.rows()
        ctx = multiprocessing.get_context("fork")
        self.state, self.lock = ctx.Array("b", len(self.groups), lock=False), ctx.Lock()
        args = (self.groups, self.few, self.state, self.lock)
        self.workers = [ctx.Process(target=_warm_up_worker, args=args, daemon=True) for _ in range(self.jobs - 1)]
        for worker in self.workers:
            worker.start()
        return self

    def share(self):
        """Warm up the units from the front until none is left, then wait for the workers' units; returns
        the units that workers warmed up (lists of learner names)."""
        if not self.workers:
            return []
        from multiprocessing.connection import wait

        for i, group in enumerate(self.groups):
            if _claim(self.state, self.lock, i, _MINE):
                _warm_up_group(group, self.few)
        alive = [worker.sentinel for worker in self.workers]
        while alive and _WORKER in self.state[:]:
            ended = wait(alive, timeout=0.05)
            alive = [s for s in alive if s not in ended]
        return [group for group, who in zip(self.groups, self.state[:]) if who == _WORKER_DONE]

    def __exit__(self, *exc):
        for worker in self.workers:
            if worker.is_alive():
                worker.terminate()
            worker.join()
        return False


def first_rows():
    """``(X, y, X_test, y_test)``: the first ``WARM_UP_ROWS`` rows of the bundled a9a and a9a.t as
    :func:`~streamlearn.datasets.load_a9a` returns them (CSR float64 with int32 indices, labels -1/+1),
    read by scikit-learn's LIBSVM reader, which needs no compilation: the warm-up workers can start
    before numba has compiled streamlearn's own reader."""
    import io
    import itertools
    import lzma

    import numpy as np
    import scipy.sparse as sp
    from sklearn.datasets import load_svmlight_file

    from ..datasets import bundled_path
    from ..datasets._bundled import A9A_N_FEATURES

    out = []
    for name in ("a9a.xz", "a9a.t.xz"):
        with lzma.open(bundled_path(name)) as f:
            head = b"".join(itertools.islice(f, WARM_UP_ROWS))
        X, y = load_svmlight_file(io.BytesIO(head), n_features=A9A_N_FEATURES, zero_based=False)
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
        out += [X, y.astype(np.float64)]
    return tuple(out)


def _claim(state, lock, i, who):
    with lock:
        if state[i] != _FREE:
            return False
        state[i] = who
        return True


def _warm_up_group(names, few):
    from ..learners import make_learner, scaled_learner

    for name in names:
        warm_up(scaled_learner(name, make_learner(name)), few)


def _warm_up_worker(groups, few, state, lock):
    import contextlib
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops its workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # how the parent stops it: no Ctrl-C-like unwinding here
    for i in reversed(range(len(groups))):
        if _claim(state, lock, i, _WORKER):
            # on an error the parent runs this learner itself and reports it
            with contextlib.suppress(Exception):
                _warm_up_group(groups[i], few)
            state[i] = _WORKER_DONE


def _write_markdown(rows, path):
    lines = [
        "# Every learner, one pass over a9a",
        "",
        "Command: `streamlearn demo` (default parameters; one pass over the bundled a9a with progressive "
        "validation, then the test accuracy on a9a.t). Times are per example on the machine that ran it.",
        "",
        "| learner | online error | test accuracy | µs/example | non-zero weights |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['learner']}` | {r['online_error_rate']:.4f} | {r['test_accuracy']:.4f} | "
            f"{r['us_per_example']:.2f} | {r['nnz_weights']} |"
        )
    write_report(path, lines)


#: Panels of the demo figure: learner name -> family (learners not listed go by their subpackage).
FAMILIES = {
    "first order": ["perceptron", "perceptron-nobias", "pa", "pa1", "pa2", "ogd", "ogd-hinge", "ogd-squared"],
    "scale-free (normalized adaptive)": ["nag", "nag-hinge"],
    "sparse (L1)": ["truncation", "tg", "fobos", "rda", "ftrl"],
    "confidence-weighted, Pegasos, auto": ["auto", "cw", "cw-diag", "arow", "scw1", "scw2", "pegasos"],
    "second order": ["adagrad", "full-on", "fd-son", "pfd-son", "rp-son", "oja-son", "rfd-son", "rfd0-son"],
    "factorization machines": ["fm", "ccfm-ogd", "occfm"],
}


def _family(name):
    for family, members in FAMILIES.items():
        if name in members:
            return family
    from ..learners import LEARNERS

    spec = LEARNERS.get(name)
    package = spec.target.split(":")[0].split(".")[1] if spec else ""
    return {"second_order": "second order", "facto": "factorization machines"}.get(package, "other")


def plot(rows, path, args):
    """One panel per family of learners, each curve labelled with its final online error; the error axis
    of every panel spans all of its curves from the 100th example on (earlier points are noise)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = getattr(args, "_curves", {})
    groups = {}
    for name, result in curves.items():
        groups.setdefault(_family(name), []).append((name, result))
    if not groups:
        return
    ncols = min(3, len(groups))
    nrows = -(-len(groups) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.9 * nrows), squeeze=False)
    colors = plt.get_cmap("tab10").colors
    start = 100
    for ax, (family, members) in zip(axes.flat, groups.items()):
        top, bottom, last = 0.0, 1.0, start + 1
        for i, (name, result) in enumerate(members):
            n, err = result.curve["n_examples"], result.curve["error_rate"]
            keep = n >= start
            if keep.any():
                top, bottom = max(top, float(err[keep].max())), min(bottom, float(err[keep].min()))
                last = max(last, int(n[-1]))
            ax.plot(
                n,
                err,
                color=colors[i % 10],
                linestyle="-" if i < 10 else "--",
                linewidth=1.3,
                label=f"{name} ({result.online_error_rate:.3f})",
            )
        ax.set_xscale("log")
        ax.set_xlim(start, last)
        pad = 0.05 * max(top - bottom, 0.01)
        ax.set_ylim(max(0.0, bottom - pad), min(1.0, top + pad))
        ax.set_title(family, fontsize=10)
        ax.set_xlabel("examples seen (a9a, one pass)", fontsize=8)
        ax.set_ylabel("online error rate", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="best", title="final online error", title_fontsize=7)
    for ax in list(axes.flat)[len(groups) :]:
        ax.set_visible(False)
    fig.suptitle("streamlearn demo: progressive validation on a9a, by family of learners", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
