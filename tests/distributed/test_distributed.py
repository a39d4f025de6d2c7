"""streamlearn.distributed on a LocalCluster of 2 worker processes (one thread each), shared by the module.

* fit_sketch: the merged FD / RFD sketch of 4 partitions obeys the bound of one sketch of the whole
  (the bound of tests/sketch/test_bounds.py), and every kind of source gives the same merged sketch;
* fit_mixing: PA-I, FTRL and RFD-SON mixed on a9a (4 partitions, 3 rounds) and farm-ads (2 partitions,
  4 rounds) are within 0.5 point of test accuracy of the sequential one-pass model;
* a worker killed mid-task: the partition is retried by Dask; killed every time: RuntimeError naming the
  partition, no model;
* errors: unsupported learners, bad scheduler strings, bad arguments.
"""

import functools
import os
import subprocess
import sys
from pathlib import Path

import dask
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import dump_svmlight_file

from streamlearn.datasets import load_a9a, load_svmlight
from streamlearn.distributed import Partition, as_partitions, connect, fit_mixing, fit_sketch, supported_learners
from streamlearn._mixing import merge_sketch_increments as _merge_increments
from streamlearn.linear_model import (
    ConfidenceWeightedClassifier,
    FTRLProximalClassifier,
    OGDRegressor,
    PassiveAggressiveClassifier,
)
from streamlearn.second_order import SketchedOnlineNewton
from streamlearn.sketch import FrequentDirections, RobustFrequentDirections
from tests.conftest import SHARED_DATA
from tests.sketch.test_bounds import check_fd_bound, low_rank_plus_noise

SHARED = SHARED_DATA
FARM_ADS = SHARED / "farm-ads" / "farm-ads-vect.xz"

LEARNERS = {
    "PA-I": PassiveAggressiveClassifier(C=0.01, variant="pa1"),
    "FTRL": FTRLProximalClassifier(l1=1.0),
    "RFD-SON": SketchedOnlineNewton(sketch="rfd", ell=5, alpha0=10.0),
}


@pytest.fixture(scope="module")
def client():
    # one retry per lost worker (Dask's default is 3) keeps the failure tests short
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), connect("local:2") as c:
        yield c


def _split(X, y, n_parts):
    cuts = np.linspace(0, X.shape[0], n_parts + 1).astype(int)
    return [(X[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]


# ------------------------------------------------------------------------------------------ no cluster
@pytest.mark.parametrize("bad", ["local:0", "local:x", "", "   ", "local", "local:-1", "nonsense", 3])
def test_bad_scheduler_strings(bad):
    with pytest.raises(ValueError, match=r"scheduler.*(local:N|address|string)"), connect(bad):
        pass


def test_local_cluster_larger_than_the_machine_is_refused():
    """local:N starts N processes here: more than 4 per CPU is refused before any starts, naming the limit."""
    import os

    from streamlearn.distributed._client import max_local_workers

    most = max_local_workers()
    assert most == 4 * (os.cpu_count() or 1)
    match = rf"asks for {most + 1} worker processes .* at most {most} \(4 per CPU"
    with pytest.raises(ValueError, match=match), connect(f"local:{most + 1}"):
        pass


def test_refused_scheduler_address_fails_at_once():
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    with (
        pytest.raises(ConnectionRefusedError, match=f"no scheduler listens on 127.0.0.1:{port}"),
        connect(f"tcp://127.0.0.1:{port}"),
    ):
        pass
    assert time.monotonic() - t0 < 10  # Dask alone retries for distributed.comm.timeouts.connect (30 s)


def _listening(reply):
    """A thread accepting connections on a free local port: each is sent ``reply`` (b"" says nothing) and held
    open; ``(port, stop)``."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    done, held = threading.Event(), []

    def serve():
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            if reply:
                conn.sendall(reply)
        for conn in held:
            conn.close()
        server.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def stop():
        done.set()
        thread.join()

    return server.getsockname()[1], stop


@pytest.mark.parametrize(
    "reply, message",
    [
        (b"", r"accepts connections but did not answer Dask's handshake within 2 s"),
        (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", r"does not speak Dask's protocol"),
    ],
)
def test_a_server_that_is_no_scheduler_fails_within_the_connect_timeout(reply, message):
    """A port where something accepts connections but never answers (Dask waited for its handshake for ever)
    or answers another protocol (an HTTP reply was read as a 3 EiB message length: MemoryError) is an OSError
    naming the address, within distributed.comm.timeouts.connect."""
    import time

    port, stop = _listening(reply)
    try:
        t0 = time.monotonic()
        with (
            dask.config.set({"distributed.comm.timeouts.connect": "2s"}),
            pytest.raises(OSError, match=rf"127.0.0.1:{port} .*{message}"),
            connect(f"tcp://127.0.0.1:{port}"),
        ):
            pass
        assert time.monotonic() - t0 < 10
    finally:
        stop()


def test_sketches_that_cannot_merge_are_refused_before_any_task():
    from streamlearn.sketch import OjaSketch, RandomProjectionSketch

    X = np.random.default_rng(0).standard_normal((20, 6))
    # client=None and no default client: the refusal comes before the client is even looked up
    with pytest.raises(TypeError, match="fit_sketch cannot merge OjaSketch sketches .* 2 partitions"):
        fit_sketch(OjaSketch(ell=2), [X, X])
    with pytest.raises(ValueError, match=r"RandomProjectionSketch\(random_state=0\) would draw the same projections"):
        fit_sketch(RandomProjectionSketch(ell=2, random_state=0), [X, X])
    with pytest.raises(RuntimeError, match="No Dask client is running"):  # one partition needs no merge
        fit_sketch(OjaSketch(ell=2), [X])


def test_partitions_of_different_widths_name_both():
    X = np.zeros((3, 8))
    with pytest.raises(ValueError, match="item 1 has 5 columns, item 0 has 8; every partition"):
        as_partitions([X, X[:, :5]])
    with pytest.raises(ValueError, match="item 0 has 8 columns, n_features=6; every partition"):
        as_partitions([X, X[:, :6]], n_features=6)


def test_complex_or_non_numeric_features_are_refused_naming_the_partition():
    """Complex X would become its real part (scipy's cast only warns): a silent wrong model. Refused, as a local
    partial_fit refuses it, for in-memory and loader partitions, dense or sparse; strings name the partition."""
    X, y = np.ones((3, 2)) + 1j, np.array([1.0, -1.0, 1.0])
    for Xc in (X, sp.csr_matrix(X)):
        with pytest.raises(ValueError, match=r"^as_partitions item 0: X has complex values \(dtype complex128\)"):
            as_partitions([(Xc, y)])
        with pytest.raises(ValueError, match=r"^src: X has complex values"):
            next(Partition.from_loader(functools.partial(list, [(Xc, y)]), name="src").load())
    with pytest.raises(ValueError, match=r"^as_partitions item 1: X must hold numbers; got dtype <U1 \(could not"):
        as_partitions([(np.ones((3, 2)), y), (np.array([["a", "b"]] * 3), y)])
    X, _ = next(as_partitions([(np.array([[1, 2]] * 3, dtype=object), y)])[0].load())
    np.testing.assert_array_equal(X.toarray(), [[1.0, 2.0]] * 3)


def test_chunks_that_are_no_pairs_and_unequal_dask_arrays_are_named():
    """(X, y, sample_weight) triples (as a list item or a loader's chunk) and a loader's bare X are refused naming
    what was received (a loader's gave 'too many values to unpack'); a dask y shorter than X names both lengths
    (dask's message was about chunks)."""
    import dask.array as da

    X, y = np.eye(4), np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match=r"^as_partitions: item 0 of the list is a tuple of 3 items \(sample weights"):
        as_partitions([(X, y, np.ones(4))])
    for chunk, got in (((X, y, np.ones(4)), "a tuple of 3 items"), (X, "an object of type ndarray")):
        part = Partition.from_loader(functools.partial(list, [(X, y), chunk]), name="src")
        with pytest.raises(ValueError, match=rf"^src: chunk 1 must be an \(X, y\) pair; got {got}"):
            list(part.load())
    with pytest.raises(ValueError, match=r"^as_partitions: the dask array y has 3 labels and X 4 rows; expected one"):
        as_partitions((da.from_array(X, chunks=2), da.from_array(y[:3], chunks=2)))


def test_unsupported_learner_lists_the_supported_ones():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(TypeError, match=r"cannot average a ConfidenceWeightedClassifier.*PassiveAggressiveClassifier"):
        fit_mixing(ConfidenceWeightedClassifier(), [(X, y)])
    with pytest.raises(TypeError, match=r"sketch in \['fd', 'pfd', 'rfd'\].*'rp'"):
        fit_mixing(SketchedOnlineNewton(sketch="rp"), [(X, y)])
    assert {
        "FTRLProximalClassifier",
        "SketchedOnlineNewton",
        "AdaGrad",
        "Perceptron",
        "RDAClassifier",
        "FOBOSClassifier",
        "TruncatedGradientClassifier",
    } <= set(supported_learners())
    assert "ConfidenceWeightedClassifier" not in supported_learners()


def test_bad_arguments():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="rounds must be an int >= 1"):
        fit_mixing(PassiveAggressiveClassifier(), [(X, y)], rounds=0)
    # a learner's parameter: before any task (no client is running here), not on a worker in a partition's name
    with pytest.raises(ValueError, match=r"^The 'C' parameter of PassiveAggressiveClassifier must be a float"):
        fit_mixing(PassiveAggressiveClassifier(C=-1.0), [(X, y)])
    with pytest.raises(ValueError, match=r"^The 'ell' parameter of FrequentDirections must be an int"):
        fit_sketch(FrequentDirections(ell=-1), [X])
    with pytest.raises(ValueError, match="split_every must be an int >= 2"):
        fit_sketch(FrequentDirections(ell=2), [X], split_every=1)
    with pytest.raises(FileNotFoundError, match="matches no file"):
        as_partitions("/nonexistent/dir/part-*.svm")
    with pytest.raises(ValueError, match="item 1 has 3 columns"):
        as_partitions([(X, y), (np.eye(3), y[:3])])
    with pytest.raises(TypeError, match="cannot make partitions from a int"):
        as_partitions(5)


def test_import_streamlearn_does_not_import_dask():
    code = "import streamlearn, sys; print(any(m == 'dask' or m.startswith('distributed') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_son_sketch_increments_are_merged_once():
    """B^T B of the mixed SON = start + sum of the partitions' increments (the start is not counted twice)."""
    rng = np.random.default_rng(0)
    d = 12
    R0 = rng.standard_normal((3, d))
    G = [rng.standard_normal((2, d)) for _ in range(3)]
    parts = [np.vstack([R0, g]) for g in G]  # each partition: the start's rows plus its own
    rows, delta = _merge_increments(R0, parts, keep=11)  # keep >= rank 9: exact
    expect = R0.T @ R0 + sum(g.T @ g for g in G)
    np.testing.assert_allclose(rows.T @ rows, expect, atol=1e-10)
    assert delta == pytest.approx(0.0, abs=1e-10)
    rows, delta = _merge_increments(R0, parts, keep=4)  # shrunk as FD: PSD error at most delta
    gap = np.linalg.eigvalsh(expect - rows.T @ rows)
    assert gap[0] >= -1e-9 and gap[-1] <= delta + 1e-9


# ------------------------------------------------------------------------------------------ sketches
@pytest.mark.parametrize("cls, factor", [(FrequentDirections, 1.0), (RobustFrequentDirections, 0.5)])
def test_merged_sketch_of_4_partitions_obeys_the_bound_for_the_whole(client, cls, factor):
    A = low_rank_plus_noise(3, n=1200, d=40, rank=6)
    blocks = [A[:200], A[200:500], A[500:1000], A[1000:]]
    ell = 8
    merged = fit_sketch(cls(ell=ell), blocks, client)
    assert type(merged) is cls and merged.n_seen_ == A.shape[0]
    check_fd_bound(A, merged, ell, factor=factor)
    if cls is RobustFrequentDirections:
        assert merged.alpha_ > 0


def test_every_source_gives_the_same_merged_sketch(client, tmp_path):
    rng = np.random.default_rng(1)
    n, d = 800, 30
    A = (sp.random(n, d, density=0.3, random_state=rng, format="lil") * 2.0).tolil()
    A[0, d - 1] = 1.5  # the last column is used: every file-based width inference gives d
    A = A.tocsr()
    y = rng.choice([-1.0, 1.0], n)
    cuts = [0, 150, 400, 650, n]
    pairs = [(A[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    paths = []
    for k, (Xk, yk) in enumerate(pairs):
        paths.append(tmp_path / f"part-{k}.svm")
        dump_svmlight_file(Xk, yk, str(paths[-1]), zero_based=False)
    # the rows as written to the files (%.16g), so that every source holds the same numbers
    A = sp.vstack([load_svmlight(str(p), n_features=d, zero_based=False)[0] for p in paths]).tocsr()
    pairs = [(A[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    import dask.array as da
    import dask.bag as db

    dense = A.toarray()
    sources = {
        "glob": str(tmp_path / "part-*.svm"),
        "files": [str(p) for p in paths],
        "arrays": pairs,
        "bag": db.from_sequence(pairs, npartitions=4),
        "dask.array": (
            da.from_array(dense, chunks=(tuple(np.diff(cuts)), d)),
            da.from_array(y, chunks=(tuple(np.diff(cuts)),)),
        ),
    }
    ell = 6
    results = {}
    for name, src in sources.items():
        parts = as_partitions(src, chunk_size=100)
        assert len(parts) == 4, name
        results[name] = fit_sketch(FrequentDirections(ell=ell), parts, client)
        assert results[name].n_seen_ == n, name
    base = results["arrays"].sketch_
    check_fd_bound(dense, results["arrays"], ell)
    for name, sk in results.items():
        np.testing.assert_allclose(sk.sketch_, base, rtol=1e-9, atol=1e-9, err_msg=name)


# ------------------------------------------------------------------------------------------ mixing
def _check_mixing(client, name, X, y, X_test, y_test, n_parts, rounds):
    learner = LEARNERS[name]
    seq = clone(learner).partial_fit(X, y, classes=[-1, 1]).score(X_test, y_test)
    mixed = fit_mixing(learner, _split(X, y, n_parts), client, rounds=rounds, classes=[-1, 1])
    acc = mixed.score(X_test, y_test)
    assert len(mixed.mixing_history_) == rounds
    assert all(h["n_examples"] == X.shape[0] for h in mixed.mixing_history_)
    assert mixed.t_ == rounds * X.shape[0]
    assert abs(acc - seq) <= 0.005, (name, acc, seq)
    return mixed


@pytest.mark.parametrize("name", list(LEARNERS))
def test_mixing_on_a9a_matches_the_sequential_model(client, name):
    """4 partitions (contiguous quarters of a9a), 3 rounds of one local pass each."""
    X, y, X_test, y_test = load_a9a()
    mixed = _check_mixing(client, name, X, y, X_test, y_test, n_parts=4, rounds=3)
    assert 0.1 < mixed.mixing_history_[-1]["progressive_error"] < 0.25


@pytest.mark.skipif(
    not FARM_ADS.is_file(),
    reason=f"farm-ads not found at {FARM_ADS} (shared data absent; set STREAMLEARN_SHARED_DATA to its directory)",
)
@pytest.mark.parametrize("name", list(LEARNERS))
def test_mixing_on_farm_ads_matches_the_sequential_model(client, name):
    """A fixed random 70/30 split (seed 0) of farm-ads; 2 partitions, 4 rounds of one local pass each."""
    X, y = load_svmlight(str(FARM_ADS), n_features=54877, zero_based=False)
    order = np.random.default_rng(0).permutation(X.shape[0])
    X, y = X[order], y[order]
    cut = int(0.7 * X.shape[0])
    _check_mixing(client, name, X[:cut], y[:cut], X[cut:], y[cut:], n_parts=2, rounds=4)


def test_mixing_finds_classes_and_is_deterministic(client):
    X, y, X_test, y_test = load_a9a()
    parts = _split(X[:8000], y[:8000], 3)
    a = fit_mixing(FTRLProximalClassifier(), parts, client, rounds=2)
    b = fit_mixing(FTRLProximalClassifier(), parts, client, rounds=2, classes=[-1, 1])
    np.testing.assert_array_equal(a.classes_, [-1.0, 1.0])
    np.testing.assert_array_equal(a.coef_, b.coef_)


def _supported_instances():
    import streamlearn.linear_model as lm
    import streamlearn.second_order as so

    out = [getattr(lm, name, None) or getattr(so, name) for name in supported_learners()]
    out = [cls() for cls in out] + [SketchedOnlineNewton(sketch="fd", ell=3), SketchedOnlineNewton(sketch="pfd", ell=3)]
    return out


def test_one_partition_trains_the_sequential_model_bit_for_bit(client):
    """One partition (beside an empty one), 2 rounds of 2 passes: every supported learner's model is that of 4
    sequential passes of partial_fit over the partition's chunks, bit for bit (a round mixes nothing: no SON sketch
    shrunk to ell - 1 rows, no truncation flushed early, no G / t * t rounding), and it keeps learning as it does."""
    from streamlearn.base import OnlineClassifierMixin

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 10))
    X[rng.random(X.shape) < 0.5] = 0.0
    w = rng.standard_normal(10)
    for learner in _supported_instances():
        clf = isinstance(learner, OnlineClassifierMixin)
        y = np.where(X @ w > 0, 1.0, -1.0) if clf else X @ w
        kw = {"classes": [-1, 1]} if clf else {}
        parts = as_partitions([(X, y), (X[:0], y[:0])], chunk_size=128)
        mixed = fit_mixing(learner, parts, client, rounds=2, passes=2, **kw)
        seq = clone(learner)
        for _ in range(4):
            for Xc, yc in parts[0].load():
                seq.partial_fit(Xc, yc, **kw)
        name = repr(learner)
        assert mixed.t_ == seq.t_ == 1200, name
        for model in (mixed, seq):
            model.partial_fit(X[:50], y[:50])
        out = "decision_function" if clf else "predict"
        np.testing.assert_array_equal(getattr(mixed, out)(X), getattr(seq, out)(X), err_msg=name)
        np.testing.assert_array_equal(mixed.coef_, seq.coef_, err_msg=name)


def test_partitions_of_different_widths_known_only_on_the_workers_are_named(client):
    """Loader (or dask.bag) partitions have no width before their tasks run: models or sketches of different widths
    are a ValueError naming both partitions, not numpy's broadcast error (a width-1 model was even mixed silently into a wider one)."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 6)), np.tile([1.0, -1.0], 20)
    for narrow in (4, 1):
        parts = [
            Partition.from_loader(functools.partial(list, [(X, y)]), index=0, name="wide"),
            Partition.from_loader(functools.partial(list, [(X[:, :narrow], y)]), index=1, name="narrow"),
        ]
        match = rf"^fit_mixing: narrow has {narrow} features, wide has 6; every partition must have the same number"
        with pytest.raises(ValueError, match=match):
            fit_mixing(PassiveAggressiveClassifier(), parts, client, rounds=1, classes=[-1, 1])
    parts[1] = Partition.from_loader(functools.partial(list, [(X[:, :4], y)]), index=1, name="narrow")
    with pytest.raises(ValueError, match=r"^fit_sketch: narrow has 4 features, wide has 6; every partition"):
        fit_sketch(FrequentDirections(ell=2), parts, client)


def test_partitions_with_labels_of_different_kinds_are_named(client):
    """classes=None: partitions labelled with strings and with numbers gave Python's "'<' not supported between
    instances of 'str' and 'int'"; booleans and numbers silently became the three classes [-1, 0, 1]. Both are a
    ValueError naming two partitions and their kinds, as is a partition whose own labels mix kinds."""
    X, y = np.eye(4), np.array([1, -1, 1, -1])
    for other, kind in ((np.where(y > 0, "a", "b"), "string"), (y > 0, "boolean")):
        match = r"^fit_mixing: the labels of arrays partition 2, 4 rows are of kind number, those of arrays partition 1"
        with pytest.raises(ValueError, match=match + rf", 4 rows of kind {kind}; expected labels of one kind"):
            fit_mixing(PassiveAggressiveClassifier(), [(X[:0], y[:0]), (X, other), (X, y)], client, rounds=1)
    mixed = np.array(["a", 1, "a", 1], dtype=object)
    with pytest.raises(ValueError, match=r"^arrays partition 0, 4 rows: y mixes labels of kinds number, string"):
        fit_mixing(PassiveAggressiveClassifier(), [(X, mixed)], client, rounds=1)


class _EmptyFirst:
    """A loader whose first read in a task yields no row (a source still filling), the next ones ``(X, y)``."""

    def __init__(self, X, y):
        self.X, self.y, self.reads = X, y, 0

    def __call__(self):
        self.reads += 1
        return [] if self.reads == 1 else [(self.X, self.y)]


@pytest.mark.parametrize("learner,classes", [(PassiveAggressiveClassifier(C=0.01), [-1, 1]), (OGDRegressor(), None)])
def test_progressive_metric_counts_the_first_pass_that_yields_rows(client, learner, classes):
    X, y, _, _ = load_a9a()
    X, y = X[:2000], y[:2000]
    late = fit_mixing(learner, [Partition.from_loader(_EmptyFirst(X, y))], client, passes=2, classes=classes)
    once = fit_mixing(learner, [(X, y)], client, passes=1, classes=classes)
    key = "progressive_error" if classes else "progressive_mse"
    got, want = [h[key] for h in late.mixing_history_], [h[key] for h in once.mixing_history_]
    assert got == want and np.isfinite(got).all() and [h["n_examples"] for h in late.mixing_history_] == [2000] * 5
    np.testing.assert_array_equal(late.coef_, once.coef_)


# ------------------------------------------------------------------------------------------ failures
def _die_once(marker, X, y):
    if not os.path.exists(marker):
        Path(marker).write_text("died once")
        os._exit(1)  # the worker process dies mid-task
    return [(X, y)]


def _always_die(X, y):
    os._exit(1)


def test_killed_worker_partition_is_retried(client, tmp_path):
    X, y, _, _ = load_a9a()
    parts = as_partitions(_split(X[:6000], y[:6000], 3))
    reference = fit_mixing(PassiveAggressiveClassifier(C=0.01), parts, client, rounds=1, classes=[-1, 1])
    marker = tmp_path / "died"
    parts[1] = Partition.from_loader(
        functools.partial(_die_once, str(marker), *_split(X[:6000], y[:6000], 3)[1]),
        index=1,
        name="partition that dies once",
    )
    mixed = fit_mixing(PassiveAggressiveClassifier(C=0.01), parts, client, rounds=1, classes=[-1, 1])
    assert marker.read_text() == "died once"
    np.testing.assert_array_equal(mixed.coef_, reference.coef_)
    assert mixed.t_ == 6000


_WORKER_ERROR_SCRIPT = """
import numpy as np
from streamlearn.distributed import connect, fit_mixing
from streamlearn.linear_model import PassiveAggressiveClassifier

if __name__ == "__main__":
    X, y = np.eye(4), np.array([1.0, -1.0, 1.0, -1.0])
    X[2, 1] = np.nan
    with connect("local:1") as client:
        try:
            fit_mixing(PassiveAggressiveClassifier(), [(X, y)], client, rounds=1)
        except ValueError as exc:
            print(exc)
"""


def test_a_task_error_on_a_local_cluster_is_reported_once(tmp_path):
    """connect("local:N"): the worker process that runs a failing task prints no log record of its own (Dask's
    'Compute Failed' with the remote traceback, on the caller's standard error): the exception is the report."""
    script = tmp_path / "fail.py"
    script.write_text(_WORKER_ERROR_SCRIPT)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")]),
    }
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert res.stdout.startswith("arrays partition 0, 4 rows: example 3: a feature value is NaN"), res.stdout
    assert "Compute Failed" not in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_partition_whose_worker_always_dies_raises(client):
    X, y, _, _ = load_a9a()
    parts = as_partitions(_split(X[:3000], y[:3000], 2))
    parts.append(Partition.from_loader(functools.partial(_always_die, X[:10], y[:10]), index=2, name="poisoned.svm"))
    # (the poisoned task's worker may take a partition running beside it along: both are then named)
    with pytest.raises(
        RuntimeError, match=r"running partitions? (.*, |.* and )?2 \(poisoned.svm\) died.*no model returned"
    ):
        fit_mixing(PassiveAggressiveClassifier(), parts, client, rounds=1, classes=[-1, 1])


class _Done:
    """A finished future for ``collect``: its status and exception."""

    def __init__(self, exc=None):
        self.status = "error" if exc is not None else "finished"
        self._exc = exc

    def exception(self):
        return self._exc

    def cancel(self):
        pass


def test_collect_names_every_partition_whose_worker_died_and_prefers_a_raised_error(monkeypatch):
    """A task that kills its worker takes the tasks beside it along, and Dask gives up on them too: every
    partition whose worker kept dying is named, not the first alone (which blamed an innocent partition); an
    error a task raised is re-raised before any of them, with the note naming its partition."""
    from distributed.scheduler import KilledWorker

    from streamlearn.distributed import _client

    monkeypatch.setattr(_client.distributed, "wait", lambda futures: None)
    parts = as_partitions([np.eye(2), np.eye(2), np.eye(2)])
    from types import SimpleNamespace

    killed = KilledWorker("task-x", SimpleNamespace(address="tcp://127.0.0.1:1"), allowed_failures=2)
    with pytest.raises(RuntimeError) as err:
        _client.collect([_Done(killed), _Done(), _Done(killed)], parts, "fit_mixing (round 1 of 1)")
    assert str(err.value).startswith(
        "workers running partitions 0 (arrays partition 0, 2 rows) and 2 (arrays partition 2, 2 rows) died (one task "
        "can take the others running beside it on its worker along; each was retried by Dask and its worker was "
        "lost every time: "
    )
    assert str(err.value).endswith("); fit_mixing (round 1 of 1) stopped and no model returned.")
    with pytest.raises(RuntimeError, match=r"^worker running partition 1 \(arrays partition 1, 2 rows\) died \(the"):
        _client.collect([_Done(), _Done(killed), _Done()], parts, "fit_mixing (round 1 of 1)")
    bad = ValueError("bad row 7")
    with pytest.raises(ValueError, match="bad row 7") as err:
        _client.collect([_Done(killed), _Done(bad), _Done()], parts, "fit_mixing (round 1 of 1)")
    assert err.value.__notes__ == ["(raised by partition 1: arrays partition 1, 2 rows)"]


def _raise_bad_data():
    raise ValueError("bad row 7")


def test_error_in_a_partition_names_it(client):
    parts = as_partitions([np.eye(6), np.eye(6)])
    parts.append(Partition.from_loader(_raise_bad_data, index=2, name="broken.svm"))
    with pytest.raises(ValueError, match="bad row 7") as info:
        fit_sketch(FrequentDirections(ell=4), parts, client)
    assert "partition 2: broken.svm" in "".join(getattr(info.value, "__notes__", []))


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--partitions", "0"], "--partitions must be >= 1; got 0"),
        (["--rounds", "0"], "--rounds must be >= 1; got 0"),
        (["--scheduler", "nonsense"], "--scheduler 'nonsense' is not a scheduler address"),
    ],
)
def test_comparison_script_argument_errors(argv, message, capsys):
    from streamlearn.distributed.__main__ import main as compare

    with pytest.raises(SystemExit) as exc:
        compare(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and "Traceback" not in err


def test_partitions_without_rows_are_an_error_in_both_entry_points(client):
    """No partition yields a row: fit_mixing raises, and fit_sketch did return an unfitted sketch."""
    X, y = np.zeros((0, 5)), np.zeros(0)
    with pytest.raises(ValueError, match=r"^fit_sketch: no partition holds any row; nothing to sketch"):
        fit_sketch(FrequentDirections(ell=2), [X, X], client)
    with pytest.raises(ValueError, match=r"^fit_mixing: no partition holds any example"):
        fit_mixing(OGDRegressor(), [(X, y), (X, y)], client)
    assert fit_sketch(FrequentDirections(ell=2), [X, np.eye(5)], client).n_seen_ == 5


def test_a_lost_scheduler_is_a_runtime_error_naming_the_step():
    """The scheduler goes away under a client: fit_mixing and fit_sketch raise RuntimeError naming the step (as for
    a worker lost for good), not Dask's FuturesCancelledError."""
    from distributed import Client, LocalCluster

    X, y = np.eye(4), np.array([1.0, -1.0, 1.0, -1.0])
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        for run, step in (
            (lambda c: fit_mixing(PassiveAggressiveClassifier(), [(X, y)], c), r"fit_mixing \(reading the labels\)"),
            (lambda c: fit_sketch(FrequentDirections(ell=2), [X, X], c), "fit_sketch"),
        ):
            cluster = LocalCluster(n_workers=1, processes=False, protocol="tcp", dashboard_address=":0")
            client = Client(cluster.scheduler_address)
            try:
                cluster.close()
                with pytest.raises(
                    RuntimeError, match=rf"^{step} stopped: the connection to the Dask scheduler was lost"
                ):
                    run(client)
            finally:
                client.close()
                cluster.close()


def test_dask_arrays_with_blocks_of_unknown_size(client):
    """X and y cut by the same mask (blocks of unknown size) are one partition per block, as the blocks' arrays are
    (as_partitions said 'cannot convert float NaN to integer'); X and y whose blocks cannot be paired are named."""
    import dask.array as da

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    Xd, yd = da.from_array(X, chunks=(10, 4)), da.from_array(y, chunks=10)
    keep = X[:, 1] > 0
    parts = as_partitions((Xd[Xd[:, 1] > 0], yd[Xd[:, 1] > 0]))
    assert [p.n_rows for p in parts] == [None] * 3 and parts[0].describe() == "dask.array block 0"
    blocks = [(X[a : a + 10][keep[a : a + 10]], y[a : a + 10][keep[a : a + 10]]) for a in (0, 10, 20)]
    got = fit_mixing(PassiveAggressiveClassifier(), parts, client, rounds=2, classes=[-1, 1])
    want = fit_mixing(PassiveAggressiveClassifier(), blocks, client, rounds=2, classes=[-1, 1])
    assert got.t_ == want.t_ == 2 * int(keep.sum())
    np.testing.assert_array_equal(got.coef_, want.coef_)
    with pytest.raises(ValueError, match=r"^as_partitions: the dask arrays X and y have blocks of unknown size"):
        as_partitions((Xd, yd[yd > 0]))


def test_a_file_missing_on_the_worker_says_so(client, tmp_path):
    """A file the client found but a worker does not see (no shared file system): the error names the file and the
    worker, and says that every worker reads the path given on the client (the bare 'No such file or directory'
    read as if the file were missing here)."""
    paths = [tmp_path / "p0.svm", tmp_path / "p1.svm"]
    for path in paths:
        path.write_text("1 1:1 3:1 5:1\n-1 2:1 4:1\n")
    parts = as_partitions([str(p) for p in paths])
    paths[1].unlink()
    match = r"No such file or directory on the Dask worker tcp://\S+; every worker reads a partition's file at the path"
    with pytest.raises(FileNotFoundError, match=match) as info:
        fit_mixing(PassiveAggressiveClassifier(), parts, client, rounds=1, classes=[-1, 1])
    assert info.value.filename == str(paths[1])
    with pytest.raises(FileNotFoundError, match=match):
        fit_sketch(FrequentDirections(ell=2), parts, client)
    with pytest.raises(FileNotFoundError, match=r"^\[Errno 2\] No such file or directory: "):  # not on a worker
        next(parts[1].load())


def test_comparison_script_reports_a_lost_cluster_in_one_line(monkeypatch, capsys):
    """fit_mixing's RuntimeError (a worker lost for good, or the scheduler) is the script's one-line usage error."""
    import contextlib

    import streamlearn.distributed as dist
    from streamlearn.distributed.__main__ import main as compare

    def lost(*args, **kwargs):
        raise RuntimeError("fit_mixing (round 1 of 1) stopped: the connection to the Dask scheduler was lost")

    monkeypatch.setattr(dist, "connect", lambda scheduler: contextlib.nullcontext(None))
    monkeypatch.setattr(dist, "fit_mixing", lost)
    with pytest.raises(SystemExit) as exc:
        compare(["--rounds", "1", "--scheduler", "tcp://127.0.0.1:8786"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "error: fit_mixing (round 1 of 1) stopped" in err and "Traceback" not in err


def test_a_label_outside_the_classes_is_named_by_file_and_line(tmp_path):
    """A partition holding a label that is not one of fit_mixing's classes (on the command line, those of the
    first chunk of the first file): the error names the file and the line of the example, in stored order and
    after a shuffle, instead of the learner's 'y contains labels [2.0] that are not in classes=[-1.0, 1.0]'."""
    from streamlearn.distributed._mixing import _local_passes
    from streamlearn.distributed._partitions import Partition
    from streamlearn.linear_model import PassiveAggressiveClassifier

    path = tmp_path / "p.svm"
    path.write_text("1 1:1\n-1 2:1\n# note\n1 1:1 2:1\n2 2:1\n1 1:1\n")
    part = Partition("file", str(path), index=0, n_features=2, chunk_size=2)
    for seed in (None, 2):
        with pytest.raises(ValueError, match=rf"^{path}, line 5: label 2 is not one of the classes {{-1, 1}}"):
            _local_passes(PassiveAggressiveClassifier(), None, part, None, 1, np.array([-1.0, 1.0]), seed, 0)


def test_a_refused_row_of_a_file_partition_is_named_by_file_and_line(tmp_path):
    """A worker's learner refuses a value (or diverges) on a row of a LIBSVM file partition: the error names the
    file and the line of that row (a comment line before it), in stored order and after a shuffle; an in-memory
    partition is named with the example's number."""
    from streamlearn.distributed._mixing import _local_passes
    from streamlearn.distributed._partitions import Partition
    from streamlearn.linear_model import OGDClassifier

    path = tmp_path / "p.svm"
    path.write_text("1 1:1\n-1 2:1\n# note\n1 1:1 2:1\n-1 2:1e200\n1 1:1\n")
    part = Partition("file", str(path), index=0, n_features=2, chunk_size=2)
    for seed in (None, 2):  # seed 2 swaps the rows of the second chunk, where the refused one is
        with pytest.raises(ValueError, match=rf"^{path}, line 5: a feature value of 1e\+200 is too large"):
            _local_passes(OGDClassifier(), None, part, None, 1, np.array([-1.0, 1.0]), seed, 0)
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1e200]]))
    mem = Partition("arrays", [(X[:2], np.array([1.0, -1.0])), (X[2:], np.array([1.0]))], index=3, n_features=2)
    with pytest.raises(ValueError, match=r"^arrays partition 3: example 3: a feature value of 1e\+200"):
        _local_passes(OGDClassifier(), None, mem, None, 1, np.array([-1.0, 1.0]), None, 0)


def test_progressive_mse_is_finite_or_names_the_example(tmp_path):
    """A regressor's progressive squared error that overflows (a target of 1e300) was reported as an infinite
    progressive_mse; it is a FloatingPointError naming the file and line, as progressive validation refuses it.
    Targets given as strings of numbers (which the learner takes) gave numpy's UFuncTypeError."""
    from streamlearn.distributed._mixing import _local_passes

    path = tmp_path / "p.svm"
    path.write_text("1 1:1\n# note\n1e300 1:1\n2 1:1\n")
    part = Partition("file", str(path), index=0, n_features=1, chunk_size=2)
    match = rf"^{path}, line 3: the squared error of this example's pre-update score overflows the progressive MSE"
    with pytest.raises(FloatingPointError, match=match):
        _local_passes(OGDRegressor(), None, part, None, 1, None, None, 1)
    X, y = np.eye(3), np.array([1.0, -2.0, 0.5])
    numbers = _local_passes(OGDRegressor(), None, as_partitions([(X, y)])[0], None, 1, None, None, 1)
    strings = _local_passes(OGDRegressor(), None, as_partitions([(X, y.astype(str))])[0], None, 1, None, None, 1)
    assert np.isfinite(numbers[3]) and strings[1:] == numbers[1:]
