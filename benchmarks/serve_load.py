"""Load test of ``streamlearn serve`` on the loopback interface, against the same learner in process.

For each learner (ftrl, rfd-son), a ``streamlearn serve --learner NAME`` subprocess (fsync on, as in production:
every /learn is answered after the fsync of the log covering it) is loaded by 1..64 concurrent clients (asyncio
tasks, one keep-alive HTTP/1.1 connection each, a minimal client: see ``_Conn``; every answer is read whole and
its status checked), for each mode: ``/predict`` and ``/learn`` with single examples and with batches of 100 a9a
lines. Each cell runs for ``--seconds`` or ``--max-requests`` requests, whichever comes first. Reported: examples/s,
p50 and p99 request latency.

The reference: the same learner in process, measured right before and right after each cell (``--ref-seconds``
each): ``partial_fit`` and ``decision_function`` on the parsed CSR rows, and parse + ``partial_fit`` of the same
text batches (what the server does per request, without HTTP), as examples/s. A cell's ratio is its examples/s
over the mean of the two. Every cell runs ``--repeats`` rounds, each round on a fresh server; the tables give the
median over the rounds (the JSON file keeps every round).

The clients run in one Python process on the same machine as the server (2 shared cores), on uvloop when it
is installed, with the request bytes prepared before the clock starts: the HTTP figures include the client's
own cost. The load average of the machine is recorded with each cell.

    python benchmarks/serve_load.py [--seconds 1.5] [--repeats 3] [--clients 1,8,32,64] [--learners ftrl,rfd-son]

Writes benchmarks/results/serve_load.json and .md.
"""

import argparse
import asyncio
import io
import json
import lzma
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def _lines():
    from streamlearn.datasets import bundled_path

    with lzma.open(bundled_path("a9a.xz"), "rb") as f:
        return [line.rstrip(b"\n") for line in f if line.strip()]


def _run(coro):
    """asyncio.run on uvloop when installed (the client's cost per request is part of every figure)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def _server_stack():
    """What ``uvicorn`` picks for the server here (its "auto" choice): HTTP parser and event loop."""
    out = []
    for module, fallback in (("httptools", "h11"), ("uvloop", "asyncio")):
        try:
            __import__(module)
            out.append(module)
        except ImportError:
            out.append(fallback)
    return " + ".join(out)


FIGURES = ("partial_fit", "decision_function", "parse+partial_fit")


def _in_process(name, what, batch, data, seconds):
    """examples/s of one in-process figure: ``what`` (one of ``FIGURES``) on batches of ``batch`` a9a rows, timed
    for about ``seconds`` on a fresh model. ``data``: ``(X, y, lines)``, the parsed rows and their text."""
    from streamlearn.datasets import load_svmlight
    from streamlearn.learners import make_learner

    X, y, lines = data
    model = make_learner(name)
    model.partial_fit(X[:2], y[:2], classes=[-1.0, 1.0])  # compiled before the clock starts
    n = 0
    start = time.perf_counter()
    i = 0
    while time.perf_counter() - start < seconds:
        lo = (i * batch) % (X.shape[0] - batch)
        if what == "partial_fit":
            model.partial_fit(X[lo : lo + batch], y[lo : lo + batch])
        elif what == "decision_function":
            model.decision_function(X[lo : lo + batch])
        else:
            Xb, yb = load_svmlight(
                io.BytesIO(b"\n".join(lines[lo : lo + batch]) + b"\n"), n_features=123, zero_based=False
            )
            model.partial_fit(Xb, yb)
        n += batch
        i += 1
    return n / (time.perf_counter() - start)


def _request(path, body, host="127.0.0.1"):
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


class _Conn(asyncio.Protocol):
    """A minimal HTTP/1.1 keep-alive client over one loopback connection (the load generator only: httpx costs
    more CPU per request than the server on this machine, and client and server share its cores). An asyncio
    protocol: each answer is read whole (framed by its Content-Length) and handed to ``on_answer``; under load
    (``_cell``) that callback checks it and writes the next request at once, without a task or a future per
    request."""

    def __init__(self, url):
        host, port = url.rsplit("/", 1)[-1].split(":")
        self.host, self.port = host, int(port)
        self.buf = b""
        self.on_answer = None  # (status, body) -> None
        self.on_lost = None  # exception -> None
        self.transport = None

    async def open(self):
        await asyncio.get_running_loop().create_connection(lambda: self, self.host, self.port)

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.buf = self.buf + data if self.buf else data
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = self.buf[:end].lower()
        at = head.find(b"\r\ncontent-length:")
        length = 0
        if at >= 0:  # the header's value runs to the end of its line (or of the head)
            stop = head.find(b"\r\n", at + 2)
            length = int(head[at + 17 : stop if stop >= 0 else len(head)])
        if len(self.buf) >= end + 4 + length:
            status = int(head[9:12])
            data, self.buf = self.buf[end + 4 : end + 4 + length], self.buf[end + 4 + length :]
            self.on_answer(status, data)

    def connection_lost(self, exc):
        if self.on_lost is not None:
            self.on_lost(ConnectionError(f"the server closed the connection ({exc})"))

    async def post(self, request):
        """Send one request (the whole request, prepared by ``_request``) and wait for its answer."""
        waiter = asyncio.get_running_loop().create_future()
        self.on_answer = lambda status, data: waiter.set_result((status, data))
        self.on_lost = lambda exc: waiter.done() or waiter.set_exception(exc)
        self.transport.write(request)
        return await waiter

    async def close(self):
        self.on_lost = None
        self.transport.close()


async def _cell(url, path, bodies, clients, seconds, max_requests):
    latencies = []
    examples = [0]
    budget = [max_requests]
    conns = [_Conn(url) for _ in range(clients)]
    await asyncio.gather(*(c.open() for c in conns))  # connected before the clock starts
    requests = [(_request(path, body), n) for body, n in bodies]
    warm = _request("/predict", bodies[0][0])  # one untimed request per connection (no learning)
    await asyncio.gather(*(c.post(warm) for c in conns))
    load = os.getloadavg()[0]
    finished = asyncio.get_running_loop().create_future()
    running = [clients]

    def fail(exc):
        if not finished.done():
            finished.set_exception(exc)

    def drive(k, c):
        """Client k: one request at a time on its connection, the next one written when the answer is checked."""
        state = [k, 0, 0.0]  # next request, examples in flight, time sent

        def send():
            if time.perf_counter() >= stop or budget[0] <= 0:
                running[0] -= 1
                if running[0] == 0 and not finished.done():
                    finished.set_result(None)
                return
            budget[0] -= 1
            request, state[1] = requests[state[0] % len(requests)]
            state[0] += clients
            state[2] = time.perf_counter()
            c.transport.write(request)

        def answer(status, data):
            latencies.append(time.perf_counter() - state[2])
            if status != 200:
                fail(RuntimeError(f"{path}: HTTP {status} {data[:200]!r}"))
                return
            examples[0] += state[1]
            send()

        c.on_answer = answer
        c.on_lost = fail
        send()

    try:
        start = time.perf_counter()
        stop = start + seconds
        for k, c in enumerate(conns):
            drive(k, c)
        await finished
        wall = time.perf_counter() - start
    finally:
        await asyncio.gather(*(c.close() for c in conns))
    lat = np.array(latencies)
    return {
        "requests": int(lat.size),
        "examples_per_s": examples[0] / wall,
        "p50_ms": float(np.percentile(lat, 50) * 1e3),
        "p99_ms": float(np.percentile(lat, 99) * 1e3),
        "load_average_1min": [load, os.getloadavg()[0]],
    }


def _serve(name, folder):
    """Start ``streamlearn serve`` (state in ``folder``/state) on a port the system picks (``--port 0
    --port-file``); its URL once /health answers."""
    state, port_file = str(Path(folder) / "state"), Path(folder) / "port"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlearn",
            "serve",
            "--learner",
            name,
            "--n-features",
            "123",
            "--state-dir",
            state,
            "--port",
            "0",
            "--port-file",
            str(port_file),
            "--snapshot-every",
            "0",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import httpx

    deadline = time.monotonic() + 120
    url = None
    while time.monotonic() < deadline and proc.poll() is None:
        if url is None and port_file.exists():
            url = f"http://127.0.0.1:{int(port_file.read_text())}"
        if url is not None:
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    return proc, url
            except httpx.TransportError:
                pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"streamlearn serve --learner {name} did not start")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=1.5, help="seconds per cell (default 1.5)")
    ap.add_argument("--max-requests", type=int, default=20_000, help="requests per cell at most")
    ap.add_argument("--clients", default="1,8,32,64")
    ap.add_argument("--learners", default="ftrl,rfd-son")
    ap.add_argument("--repeats", type=int, default=3, help="rounds of every cell, each on a fresh server (default 3)")
    ap.add_argument(
        "--ref-seconds", type=float, default=0.5, help="seconds of each in-process figure around a cell (default 0.5)"
    )
    args = ap.parse_args()
    lines = _lines()
    clients = [int(c) for c in args.clients.split(",")]
    results = {
        "command": " ".join(["python benchmarks/serve_load.py", *sys.argv[1:]]),
        "server_stack": _server_stack(),
        "fsync": "every /learn answered after an fsync of the log covering it (the default, durable policy)",
        "cells": [],
        "repeats": args.repeats,
        "in_process": {},
    }
    from streamlearn.datasets import load_svmlight

    X, y = load_svmlight(io.BytesIO(b"\n".join(lines) + b"\n"), n_features=123, zero_based=False)
    data = (X, y, lines)
    for name in args.learners.split(","):
        runs = {}  # (endpoint, batch, clients) -> one dict per round
        refs = {}  # in-process figure -> every measurement of the learner
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as folder:  # a fresh server (and log) each round
                proc, url = _serve(name, folder)
                try:
                    for path in ("/predict", "/learn"):
                        kinds = ("partial_fit", "parse+partial_fit") if path == "/learn" else ("decision_function",)
                        for batch in (1, 100):
                            bodies = [
                                (b"\n".join(lines[i : i + batch]) + b"\n", batch) for i in range(0, 20_000, batch)
                            ]
                            _run(_cell(url, path, bodies, 1, 0.2, 50))  # warm-up, not reported
                            for k in clients:
                                # the in-process figures right before and right after the cell (the load of a
                                # shared machine drifts)
                                before = {w: _in_process(name, w, batch, data, args.ref_seconds) for w in kinds}
                                cell = _run(_cell(url, path, bodies, k, args.seconds, args.max_requests))
                                after = {w: _in_process(name, w, batch, data, args.ref_seconds) for w in kinds}
                                for w in kinds:
                                    ref = (before[w] + after[w]) / 2
                                    refs.setdefault(f"{w}_batch{batch}", []).extend([before[w], after[w]])
                                    cell["ratio_to_" + w.replace("+", "_")] = cell["examples_per_s"] / ref
                                runs.setdefault((path, batch, k), []).append(cell)
                finally:
                    proc.terminate()
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
        results["in_process"][name] = {key: float(np.mean(v)) for key, v in refs.items()}
        for (path, batch, k), rounds in runs.items():
            kind = "partial_fit" if path == "/learn" else "decision_function"
            cell = {"learner": name, "endpoint": path, "batch": batch, "clients": k}
            for key in ("requests", "examples_per_s", "p50_ms", "p99_ms", f"ratio_to_{kind}"):
                cell[key] = float(np.median([r[key] for r in rounds]))
            cell["ratio_to_in_process"] = cell.pop(f"ratio_to_{kind}")
            if path == "/learn":  # what the server does per example, without HTTP
                cell["ratio_to_parse_partial_fit"] = float(np.median([r["ratio_to_parse_partial_fit"] for r in rounds]))
            cell["load_average_1min"] = [
                min(r["load_average_1min"][0] for r in rounds),
                max(r["load_average_1min"][1] for r in rounds),
            ]
            cell["rounds"] = rounds
            results["cells"].append(cell)
            print(json.dumps({key: v for key, v in cell.items() if key != "rounds"}), flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "serve_load.json").write_text(json.dumps(results, indent=1) + "\n")
    (RESULTS / "serve_load.md").write_text(_report(results))


def _summary(res):
    """The two headline figures: /learn batches of 100 (best ratio over the client counts) and /predict single
    examples at 32 clients (p99), per learner."""
    out = []
    for name in res["in_process"]:
        learn = [c for c in res["cells"] if c["learner"] == name and c["endpoint"] == "/learn" and c["batch"] == 100]
        pred = [
            c
            for c in res["cells"]
            if c["learner"] == name and c["endpoint"] == "/predict" and c["batch"] == 1 and c["clients"] == 32
        ]
        if learn:
            best = max(learn, key=lambda c: c["ratio_to_in_process"])
            out.append(
                f"- {name}: /learn batches of 100 at {best['ratio_to_in_process']:.2f}x in-process partial_fit "
                f"({best['examples_per_s']:,.0f} examples/s, {best['clients']} clients; "
                f"{best['ratio_to_parse_partial_fit']:.2f}x parse+partial_fit)"
                + (f"; /predict single examples at 32 clients: p99 {pred[0]['p99_ms']:.1f} ms" if pred else "")
            )
    return [*out, ""] if out else []


def _report(res):
    out = [
        "# streamlearn serve: load test on loopback",
        "",
        f"Command: `{res['command']}`",
        "",
        f"Server: uvicorn on {res['server_stack']}; the load generator: one Python process on the same machine.",
        "",
        *_summary(res),
        (
            "In process, same run (examples/s; the mean of the measurements right before and after each of the "
            "learner's HTTP cells):"
        ),
        "",
        (
            "| learner | partial_fit b1 | partial_fit b100 | decision_function b1 | decision_function b100 | "
            "parse+partial_fit b1 | parse+partial_fit b100 |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in res["in_process"].items():
        out.append(
            f"| {name} | "
            + " | ".join(
                f"{r[k]:,.0f}"
                for k in (
                    "partial_fit_batch1",
                    "partial_fit_batch100",
                    "decision_function_batch1",
                    "decision_function_batch100",
                    "parse+partial_fit_batch1",
                    "parse+partial_fit_batch100",
                )
            )
            + " |"
        )
    out += [
        "",
        (
            f"Over HTTP (fsync policy: {res['fsync']}; the median of {res['repeats']} rounds, each on a fresh "
            "server; ratio = HTTP examples/s over the in-process partial_fit (learn) or decision_function "
            "(predict) examples/s of the same batch size measured right before and after the cell; for /learn "
            "also over parse+partial_fit; load = the machine's 1-minute load average, lowest before and highest "
            "after the cell's rounds):"
        ),
        "",
        "| learner | endpoint | batch | clients | requests | examples/s | ratio | ratio to parse+fit | p50 ms | p99 ms "
        "| load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in res["cells"]:
        second = f"{c['ratio_to_parse_partial_fit']:.3f}" if "ratio_to_parse_partial_fit" in c else ""
        out.append(
            f"| {c['learner']} | {c['endpoint']} | {c['batch']} | {c['clients']} | {c['requests']:.0f} | "
            f"{c['examples_per_s']:,.0f} | {c['ratio_to_in_process']:.3f} | {second} | {c['p50_ms']:.2f} | "
            f"{c['p99_ms']:.2f} | {c['load_average_1min'][0]:.1f}-{c['load_average_1min'][1]:.1f} |"
        )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
