"""``streamlearn serve`` as users run it: a real server process on a free loopback port, an HTTP client (httpx).

Every request count and wait is bounded; every server is killed in a ``finally``.
"""

import contextlib
import io
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from streamlearn.cli.main import main  # noqa: E402 (after the importorskip calls)
from streamlearn.datasets import load_svmlight  # noqa: E402 (after the importorskip calls)
from streamlearn.evaluation import progressive_validation  # noqa: E402 (after the importorskip calls)
from streamlearn.learners import make_learner  # noqa: E402 (after the importorskip calls)
from streamlearn.serve._wal import HEADER  # noqa: E402 (after the importorskip calls)

ROOT = Path(__file__).resolve().parents[2]
D = 40
TOKEN = "s3cret-token"


def _await_port(port_file, alive, log, seconds):
    """The port the server bound (``--port 0 --port-file``), then ``/health`` answering 200 on it; the server's
    log in the error when it exits or does not come up within ``seconds`` (no port is chosen here and freed
    for the server to take later, so no other process can race for it)."""
    deadline = time.monotonic() + seconds
    url = None
    while True:
        if url is None and port_file.exists():
            url = f"http://127.0.0.1:{int(port_file.read_text())}"
        if url is not None:
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    return url
            except httpx.TransportError:
                pass
        if not alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start: " + Path(log).read_text())
        time.sleep(0.02)


_SERVERS = itertools.count()


def _serve_command(state_dir, start, extra):
    """``(argv, port_file, log)``: the arguments of ``streamlearn serve`` for ``state_dir`` on a free port, with
    a fresh port file (absent until the server writes it) and log file beside ``state_dir``."""
    parent = Path(state_dir).parent
    n = next(_SERVERS)
    port_file = parent / f"server-{n}.port"
    port_file.unlink(missing_ok=True)
    argv = ["serve", *start, "--state-dir", str(state_dir), "--port", "0", "--port-file", str(port_file)]
    return [*argv, "--n-features", str(D), *extra], port_file, parent / f"server-{n}.log"


class Server:
    """``streamlearn serve`` in a subprocess; ``kill()`` is kill -9."""

    def __init__(self, state_dir, *extra, start=("--learner", "ftrl")):
        argv, port_file, log = _serve_command(state_dir, start, extra)
        self.args = [sys.executable, "-m", "streamlearn", *argv]
        env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
        self.log = open(log, "wb")  # noqa: SIM115 (the server's lifetime)
        self.proc = subprocess.Popen(self.args, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        try:
            self.url = _await_port(port_file, lambda: self.proc.poll() is None, log, 90)
        except RuntimeError:
            self.kill()
            raise
        self.port = int(self.url.rsplit(":", 1)[1])

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.log.close()


class ForkedServer(Server):
    """The same command, ``main(["serve", ...])``, in a process forked from this one: a real server process
    (its own address space, killed with kill -9) without paying the interpreter's and the libraries' start-up
    again, which lets the crash test restart it ten times."""

    def __init__(self, state_dir, *extra, start=("--learner", "ftrl")):
        argv, port_file, log = _serve_command(state_dir, start, extra)
        pid = os.fork()
        if pid == 0:  # the server process
            code = 1
            try:
                fd = os.open(log, os.O_WRONLY | os.O_CREAT, 0o600)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                code = main(argv)
            finally:
                os._exit(code)
        self.pid = pid
        try:
            self.url = _await_port(port_file, lambda: os.waitpid(pid, os.WNOHANG) == (0, 0), log, 60)
        except RuntimeError:
            self.kill()
            raise
        self.port = int(self.url.rsplit(":", 1)[1])

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def _lines(rng, n):
    """n labelled LIBSVM lines (1-based ids up to D), a linear concept with noise."""
    out = []
    for _ in range(n):
        ids = np.sort(rng.choice(np.arange(1, D + 1), size=rng.integers(1, 6), replace=False))
        vals = np.round(rng.normal(size=ids.size), 4)
        label = 1 if (vals * np.sin(ids)).sum() + 0.1 * rng.normal() > 0 else -1
        out.append(f"{label} " + " ".join(f"{i}:{v:g}" for i, v in zip(ids, vals)))
    return out


def _state(model_bytes_or_path, tmp_path):
    path = model_bytes_or_path
    if isinstance(model_bytes_or_path, bytes):
        path = tmp_path / f"got-{random.random()}.slm"
        path.write_bytes(model_bytes_or_path)
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json"))
    meta.pop("streamlearn_version")
    meta["attributes"].pop("input_spec_", None)  # how the CLI read its file; the model state is the rest
    return json.dumps(meta, sort_keys=True)


def _offline(lines, tmp_path):
    """The model of ``streamlearn train`` over these lines, as a comparable state string."""
    data = tmp_path / "offline.svm"
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "offline.slm"
    if not lines:  # nothing learned: the new learner
        make_learner("ftrl").save(out)
        return _state(out, tmp_path)
    assert (
        main(
            [
                "train",
                str(data),
                "-l",
                "ftrl",
                "--n-features",
                str(D),
                "--zero-based",
                "false",
                "-o",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    return _state(out, tmp_path)


def test_endpoints_scores_auth_and_bad_requests(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    lines = _lines(np.random.default_rng(1), 60)
    server = Server(tmp_path / "state", "--token-file", str(token_file), "--max-body-mb", "0.01", "--max-lines", "50")
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            health = c.get("/health").json()
            assert health["status"] == "ok" and health["n_learned"] == 0 and health["learner"] == "ftrl"
            body = "\n".join(lines[:30]) + "\n"
            assert c.post("/learn", content=body).status_code == 401
            assert c.post("/learn", content=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert c.get("/model").status_code == 401
            assert c.get("/health").json()["n_learned"] == 0  # nothing learned without the token
            scores = []
            r = c.post("/learn", content=body, headers=auth)
            assert r.status_code == 200
            out = r.json()
            assert set(out) == {"learned", "scores", "first", "n_learned"} and out["learned"] == 30
            scores += out["scores"]
            out = c.post("/learn", headers=auth, json={"rows": lines[30:45]}).json()  # JSON rows
            assert out["first"] == 30 and out["learned"] == 15
            scores += out["scores"]
            row = lines[45].split()
            feats = {k: float(v) for k, v in (t.split(":") for t in row[1:])}
            out = c.post("/learn", headers=auth, json={"rows": [{"label": int(row[0]), "features": feats}]}).json()
            scores += out["scores"]
            # the /learn scores are progressive validation's pre-update scores, bit for bit
            X, y = load_svmlight(io.BytesIO(("\n".join(lines[:46]) + "\n").encode()), n_features=D, zero_based=False)
            ref = make_learner("ftrl")
            assert scores == ref.partial_fit_scores(X, y, classes=[-1.0, 1.0]).tolist()
            pv = progressive_validation(make_learner("ftrl"), (X, y), classes=[-1, 1])
            metrics = c.get("/metrics").text
            assert f'streamlearn_online_error_rate{{scope="all"}} {pv.online_error_rate!r}' in metrics
            assert "streamlearn_examples_learned_total 46" in metrics
            assert 'streamlearn_request_seconds_bucket{endpoint="learn",le="+Inf"}' in metrics
            assert 'streamlearn_requests_total{endpoint="learn",code="401"} 2' in metrics
            # predict: text without labels, text with labels, JSON; scores = the model's decision values
            p = c.post("/predict", content="\n".join(t.split(" ", 1)[1] for t in lines[46:50])).json()
            assert set(p) == {"scores", "labels", "proba"} and len(p["scores"]) == 4
            assert (
                p["scores"]
                == ref.decision_function(
                    load_svmlight(
                        io.BytesIO(("\n".join(lines[46:50]) + "\n").encode()), n_features=D, zero_based=False
                    )[0]
                ).tolist()
            )
            assert p["labels"] == [1.0 if s >= 0 else -1.0 for s in p["scores"]]
            assert c.post("/predict", content="\n".join(lines[46:50])).json() == p
            assert c.post("/predict", json={"rows": lines[46:50]}).json() == p
            # the model file equals the in-process model
            assert _state(c.get("/model", headers=auth).content, tmp_path) == _state(_saved(ref, tmp_path), tmp_path)
            # bad requests: 4xx JSON naming the problem, and the next request succeeds
            for bad, status, words in [
                ("1 3:1\n1 x:2\n", 400, "line 2"),
                ("1 3:1\n7 4:1\n", 400, "label 7"),
                (f"1 {D + 5}:1\n", 400, "line 1"),
                ("", 400, "no examples"),
                ("1 1:1\n" * 51, 413, "at most 50"),
                ("1 1:1 " * 3000, 413, "limit"),
            ]:
                r = c.post("/learn", content=bad, headers=auth)
                assert r.status_code == status and words in r.json()["error"], (bad[:20], r.text)
                assert c.post("/predict", content=lines[50]).status_code == 200
            r = c.post("/learn", content=b"{not json", headers={**auth, "content-type": "application/json"})
            assert r.status_code == 400 and "JSON" in r.json()["error"]
            assert c.get("/health").json()["n_learned"] == 46
            # POST /model: garbage is refused, a valid model replaces the current one
            r = c.post("/model", content=b"garbage", headers=auth)
            assert r.status_code == 400 and "not a valid model" in r.json()["error"]
            pa = make_learner("pa1").partial_fit(X, y, classes=[-1, 1])
            r = c.post("/model", content=_saved(pa, tmp_path).read_bytes(), headers=auth)
            assert r.status_code == 200 and r.json()["learner"] == "pa1"
            p = c.post("/predict", content=lines[46]).json()
            X46 = load_svmlight(io.BytesIO((lines[46] + "\n").encode()), n_features=D, zero_based=False)[0]
            assert "proba" not in p and p["scores"] == pa.decision_function(X46).tolist()
    finally:
        server.kill()


def _saved(model, tmp_path):
    path = tmp_path / f"m-{random.random()}.slm"
    model.save(path)
    return path


def _load_run(url, seed, stop, log):
    """One client: /learn requests of 1..20 fresh lines until ``stop`` is set or the server dies."""
    rng = np.random.default_rng(seed)
    with httpx.Client(base_url=url, timeout=10) as c:
        for _ in range(2000):
            if stop.is_set():
                return
            lines = _lines(rng, int(rng.integers(1, 21)))
            entry = {"lines": lines, "ack": None}
            log.append(entry)
            try:
                r = c.post("/learn", content="\n".join(lines) + "\n")
            except httpx.TransportError:
                return
            if r.status_code != 200:
                return
            entry["ack"] = r.json()


def _reconstruct(n_learned, entries, base):
    """Candidate streams: the acknowledged requests at their positions, gaps filled by requests that were in
    flight at the kill (their log record may have become durable before the answer was sent)."""
    acked = sorted((e["ack"]["first"] - base, e["lines"]) for e in entries if e["ack"] is not None)
    pending = [e["lines"] for e in entries if e["ack"] is None]
    pos, gaps = 0, []
    for first, lines in acked:
        assert first >= pos, "acknowledged requests overlap (or one predates the restart)"
        if first > pos:
            gaps.append(first - pos)
        pos = first + len(lines)
    assert pos <= n_learned, f"acknowledged examples missing: {pos} acknowledged, the model has {n_learned}"
    if n_learned > pos:
        gaps.append(n_learned - pos)
    for k in range(len(pending) + 1):
        for perm in itertools.permutations(pending, k):
            sizes = [len(p) for p in perm]
            fill, i = [], 0
            ok = True
            for g in gaps:
                chunk = []
                while i < len(perm) and sum(len(x) for x in chunk) < g:
                    chunk.append(perm[i])
                    i += 1
                if sum(len(x) for x in chunk) != g:
                    ok = False
                    break
                fill.append([t for x in chunk for t in x])
            if ok and i == len(perm) and sum(sizes) == sum(gaps):
                stream, pos, j = [], 0, 0
                for first, lines in acked:
                    if first > pos:
                        stream += fill[j]
                        j += 1
                    stream += lines
                    pos = first + len(lines)
                if n_learned > pos:
                    stream += fill[j]
                yield stream


def test_kill9_under_load_loses_no_acknowledged_example(tmp_path):
    """10 kill -9 at random moments of a /learn load from 3 clients (snapshots every 0.3 s); after each
    restart the model equals ``streamlearn train`` over the stream, bit for bit. Trial 5 also tears the log."""
    state = tmp_path / "state"
    rnd = random.Random(16)
    history = []
    server = ForkedServer(state, "--snapshot-every", "0.3")
    try:
        for trial in range(10):
            stop = threading.Event()
            logs = [[] for _ in range(3)]
            clients = [
                threading.Thread(target=_load_run, args=(server.url, 1000 * trial + k, stop, logs[k])) for k in range(3)
            ]
            for t in clients:
                t.start()
            deadline = time.monotonic() + 30
            while not any(e["ack"] for log in logs for e in list(log)) and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(rnd.uniform(0.0, 0.6))  # a random moment of the load
            server.kill()
            stop.set()
            for t in clients:
                t.join(timeout=30)
            torn_at = None
            if trial == 4:  # a crash in the middle of a write: a header promising more bytes than were written
                wal = max(state.glob("wal-*.log"), key=lambda p: int(p.stem.split("-")[1]))
                torn_at = wal.stat().st_size
                with open(wal, "ab") as f:
                    f.write(HEADER.pack(123, 500, 0) + b"1 1:1\n-1 2")
            server = ForkedServer(state, "--snapshot-every", "0.3")
            if torn_at is not None:
                try:
                    size = wal.stat().st_size
                except FileNotFoundError:  # a snapshot taken since the restart has retired the log (the model is
                    size = torn_at  # checked below)
                assert size == torn_at, "the torn record is cut off"
            with httpx.Client(base_url=server.url, timeout=30) as c:
                n = c.get("/health").json()["n_learned"]
                got = _state(c.get("/model").content, tmp_path)
            entries = [e for log in logs for e in log]
            assert n >= len(history) + sum(len(e["lines"]) for e in entries if e["ack"])
            for stream in _reconstruct(n - len(history), entries, len(history)):
                if _offline(history + stream, tmp_path) == got:
                    history += stream
                    break
            else:
                pytest.fail(
                    f"trial {trial}: the restarted model is not the offline model of the acknowledged "
                    "examples (plus in-flight ones)"
                )
        assert len(history) > 100
    finally:
        server.kill()


def test_taken_port_is_a_one_line_error_before_any_state_is_written(tmp_path, capsys):
    import socket

    from streamlearn.cli.main import main

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        state = tmp_path / "state"
        argv = ["serve", "-l", "ftrl", "--state-dir", str(state), "--n-features", "4", "--port", str(port)]
        assert main([*argv, "--port-file", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"streamlearn: error: cannot listen on 127.0.0.1:{port}: Address already in use."
    assert not state.exists() and not (tmp_path / "p").exists()


def test_port_file_never_replaces_an_input_and_is_written_only_for_a_model_that_loads(tmp_path, capsys):
    """``--port-file`` naming the MODEL or the --token-file replaced it with the port number before the model
    was read (the model was lost, then reported as 'not a streamlearn model file'); a model that fails to load
    left a port file naming a port nobody serves."""
    from streamlearn.cli.main import main

    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n" * 5)
    model, token = tmp_path / "m.slm", tmp_path / "token"
    assert main(["train", str(data), "-l", "pa1", "-o", str(model), "--quiet"]) == 0
    token.write_text("secret\n")
    before = {p: p.read_bytes() for p in (model, token, data)}
    start = [str(model), "--state-dir", str(tmp_path / "state"), "--port", "0", "--token-file", str(token)]
    for target in (model, token):
        capsys.readouterr()
        assert main(["serve", *start, "--port-file", str(target)]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"streamlearn: error: --port-file {str(target)!r} is the input file {str(target)!r}; writing it would "
            "destroy the input. Choose another output path.\n"
        )
    assert {p: p.read_bytes() for p in before} == before and not (tmp_path / "state").exists()
    bad, port_file = tmp_path / "bad.slm", tmp_path / "p"
    bad.write_bytes(b"not a model")
    assert (
        main(["serve", str(bad), "--state-dir", str(tmp_path / "s2"), "--port", "0", "--port-file", str(port_file)])
        == 2
    )
    assert "not a streamlearn model file" in capsys.readouterr().err and not port_file.exists()
    assert main(["serve", str(tmp_path), "--state-dir", str(tmp_path / "s3"), "--port", "0"]) == 2
    assert capsys.readouterr().err.endswith("is a directory, expected a model file.\n")  # it 'did not exist'


@contextlib.contextmanager
def _two_learnt_then_a_stalled_request(server):
    """``server`` learns two examples; then, for the ``with`` block, a client that sent 6 of the 100 bytes of a
    ``/learn`` request it announced waits."""
    import socket

    with httpx.Client(base_url=server.url, timeout=30) as c:
        assert c.post("/learn", content="1 1:1\n-1 2:1\n").status_code == 200
    with socket.create_connection(("127.0.0.1", server.port)) as stalled:
        stalled.sendall(b"POST /learn HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n1 3:1\n")
        time.sleep(0.3)
        yield


def test_a_stalled_client_does_not_keep_a_stopping_server_waiting(tmp_path):
    """A client that sent half of its body kept a server told to stop (SIGTERM) waiting for ever: it neither
    exited nor took its last snapshot, until a process manager killed it. After --shutdown-timeout seconds the
    request in progress is dropped, and the server takes its last snapshot and exits."""
    state = tmp_path / "state"
    server = Server(state, "--shutdown-timeout", "1", "--snapshot-every", "0")
    try:
        with _two_learnt_then_a_stalled_request(server):
            server.proc.send_signal(signal.SIGTERM)
            assert server.proc.wait(timeout=30) == 0  # a stop asked for and done (it was 143, "error: terminated")
    finally:
        server.kill()
    assert sorted(p.name for p in state.iterdir()) == ["model-2.slm", "state-2.json", "wal-2.log"]
    assert "error" not in Path(server.log.name).read_text()


def test_a_second_interrupt_while_stopping_exits_at_once_in_one_line_and_loses_no_acknowledged_update(tmp_path):
    """A second SIGINT while the server waits for a stalled request made uvicorn exit at once: the cancelled
    shutdown was logged as a CancelledError traceback and the exit status was 0, although the last snapshot was
    skipped. Now: one line saying so, status 130, and the next start replays the log."""
    state = tmp_path / "state"
    server = Server(state, "--shutdown-timeout", "20", "--snapshot-every", "0")
    try:
        with _two_learnt_then_a_stalled_request(server):
            server.proc.send_signal(signal.SIGINT)  # waits up to 20 s for the stalled request
            time.sleep(0.5)
            server.proc.send_signal(signal.SIGINT)
            assert server.proc.wait(timeout=15) == 130
    finally:
        server.kill()
    log = Path(server.log.name).read_text()
    assert "Traceback" not in log and "CancelledError" not in log, log
    assert log.rstrip().endswith(
        "streamlearn serve: stopped at once by a second interrupt, without its last snapshot; the write-ahead log "
        "holds every update it acknowledged, and the next start replays them."
    ), log
    again = Server(state)
    try:
        with httpx.Client(base_url=again.url, timeout=30) as c:
            assert c.get("/health").json()["n_learned"] == 2
    finally:
        again.kill()
