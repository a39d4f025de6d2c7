"""The HTTP endpoints of ``streamlearn serve`` (Starlette), in front of a :class:`ServedModel`.

=================  =========================================================================================
``POST /predict``  ``text/plain`` LIBSVM lines (labels optional, ignored) or JSON ``{"rows": [...]}`` ->
                   ``{"scores", "labels"[, "proba"]}``
``POST /learn``    labelled lines -> ``{"learned", "scores", "first", "n_learned"}`` (pre-update scores),
                   answered once the batch is in the fsynced log
``GET /health``    ``{"status": "ok", "n_learned", ...}``
``GET /metrics``   Prometheus text format
``GET /model``     the current model file (streamlearn model format)
``POST /model``    replace the model by an uploaded model file (read by the safe loader first)
=================  =========================================================================================
"""

import asyncio
import contextlib
import hmac
import json
import math
import os
import re
import sys
import tempfile
import time
from bisect import bisect_left
from itertools import accumulate
from typing import Any

from anyio import to_thread
from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..persist import ModelFileError, load
from ._core import BadRequest, ModelReplaced, ServedModel

#: How many times a /predict batch is parsed again when POST /model replaces the model in between.
_REPARSES = 3


def _dumps_json(obj):
    return json.dumps(obj).encode()


try:  # orjson (optional): JSON of the scores in microseconds instead of one float repr each
    from orjson import dumps as _dumps
except ImportError:  # pragma: no cover - exercised when orjson is absent
    _dumps = _dumps_json  # type: ignore[assignment]


__all__ = ["create_app"]

_JSON_HEADERS = [(b"content-type", b"application/json")]
_JSON_START = re.compile(rb"\s*[{\[]")  # a body that opens a JSON object or array (a LIBSVM line starts with its label)
#: the thread switch interval (seconds) while the application runs (see ``create_app``)
SWITCH_INTERVAL = 2e-4
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)


class _Metrics:
    def __init__(self):
        self.requests = {}  # (endpoint, status) -> count
        self.hist = {}  # endpoint -> [bucket counts..., sum, count]

    def observe(self, endpoint, status, seconds):
        key = (endpoint, status)
        self.requests[key] = self.requests.get(key, 0) + 1
        h = self.hist.get(endpoint)
        if h is None:
            h = self.hist[endpoint] = [0] * (len(_BUCKETS) + 1) + [0.0, 0]
        h[bisect_left(_BUCKETS, seconds)] += 1  # the first bucket holding it (one past the last: above them all)
        h[-2] += seconds
        h[-1] += 1

    def cumulative(self, h):
        """The Prometheus buckets (counts at or below each bound) of a histogram kept by ``observe``."""
        return list(accumulate(h[: len(_BUCKETS)]))


def _num(x):
    """A sample value as the Prometheus text format writes it (``NaN``, ``+Inf``, ``-Inf``; Python's ``inf`` is not
    one: a scrape of it fails)."""
    x = float(x)
    return "NaN" if math.isnan(x) else ("+Inf" if x > 0 else "-Inf") if math.isinf(x) else repr(x)


def create_app(
    served: ServedModel,
    *,
    token: str | None = None,
    auth_all: bool = False,
    max_body_bytes: int = 16 << 20,
    switch_interval: float = SWITCH_INTERVAL,
) -> Starlette:
    """The Starlette application serving ``served`` (a :class:`streamlearn.serve.ServedModel`).

    ``token``: when set, ``/learn`` and ``/model`` (every endpoint with ``auth_all``) need the header
    ``Authorization: Bearer <token>``. Bodies above ``max_body_bytes`` get 413.

    ``switch_interval``: while the application runs (from its lifespan start-up to its shutdown), the
    interpreter's thread switch interval (``sys.setswitchinterval``), restored afterwards; None leaves it alone.
    The writer thread gives up the GIL in every compiled kernel call, log write and fsync, and at the default
    interval (5 ms) it can wait that long to get it back from a busy event loop, several times per batch: with
    0.2 ms, a batch under load is learned and answered sooner.

    >>> import tempfile
    >>> from streamlearn.serve import ServedModel
    >>> m = ServedModel(tempfile.mkdtemp(), learner="ogd", n_features=4, snapshot_every=0)
    >>> sorted({route.path for route in create_app(m).routes})
    ['/health', '/learn', '/metrics', '/model', '/predict']
    >>> m.close()
    """
    metrics = _Metrics()
    token_bytes = token.encode() if token else None

    def authorised(request):
        return token_bytes is None or authorised_header(request.headers.get("authorization", "").encode("latin-1"))

    def authorised_header(header):
        scheme, _, value = header.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(value.strip(), token_bytes)

    def endpoint(name, protected):
        def wrap(handler):
            async def run(request):
                start = time.perf_counter()
                try:
                    if (protected or auth_all) and not authorised(request):
                        response = JSONResponse(
                            {"error": "missing or wrong 'Authorization: Bearer' token."},
                            401,
                            headers={"WWW-Authenticate": "Bearer"},
                        )
                    else:
                        response = await handler(request)
                except BadRequest as exc:
                    response = JSONResponse({"error": str(exc)}, exc.status)
                except Exception as exc:  # never take the server down; report and keep serving
                    response = JSONResponse({"error": f"internal error: {type(exc).__name__}: {exc}"}, 500)
                metrics.observe(name, response.status_code, time.perf_counter() - start)
                return response

            return run

        return wrap

    limit = f"the limit is {max_body_bytes} bytes (streamlearn serve --max-body-mb)"

    async def body_of(request):
        return await read_body(dict(request.scope["headers"]), request.receive)

    # /predict and /learn are plain ASGI handlers (no Request object, no routing table, no JSONResponse):
    # their per-request cost is what the load test sees. Everything else goes through Starlette.
    async def read_body(headers, receive):
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > max_body_bytes:
            raise BadRequest(f"request body of {length.decode()} bytes; {limit}.", 413)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > max_body_bytes:
                raise BadRequest(f"request body above the limit: {limit}.", 413)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def read_examples(headers, receive, labelled):
        body = await read_body(headers, receive)
        ctype = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if ctype != b"application/json" and _JSON_START.match(body):  # no LIBSVM line starts so
            given = f"is {ctype.decode('latin-1')!r}" if ctype else "is missing"
            raise BadRequest(
                f"the body is JSON but its Content-Type {given}: send JSON with 'Content-Type: application/json' "
                "(curl: -H 'Content-Type: application/json'), LIBSVM lines as text."
            )
        if ctype == b"application/json":
            try:
                doc = json.loads(body, object_pairs_hook=_unique_keys)
            except BadRequest:
                raise
            except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the parser goes
                raise BadRequest(f"the body is not valid JSON ({exc}).") from None
            if not isinstance(doc, dict) or "rows" not in doc:
                raise BadRequest('expected a JSON object {"rows": [...]}.')
            body = served.rows_to_lines(doc["rows"], labelled=labelled)
        if not body.strip():
            raise BadRequest("the body holds no examples.")
        return body

    # Concurrent /predict requests are answered together: the requests whose bodies arrived by the time the
    # event loop runs the flush (queued by the first of them) are parsed and scored in one call each.
    waiting: list[Any] = []

    async def predict(headers, receive):
        body = served.checked_lines(await read_examples(headers, receive, labelled=False))
        future = asyncio.get_running_loop().create_future()
        if not waiting:
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(flush_predictions()))
        waiting.append((body, future))
        return await future

    async def scored(X, config):
        result = served.try_predict(X, config)  # in the event loop when no update runs (no thread hop)
        return result if result is not None else await to_thread.run_sync(served.predict, X, config)

    async def flush_predictions():
        batch = waiting[:]
        waiting.clear()
        try:
            for attempt in range(_REPARSES + 1):
                try:
                    await answer(batch)
                    return
                except ModelReplaced:  # POST /model came in between: parse again under the new model's settings
                    if attempt == _REPARSES:
                        raise BadRequest(
                            "the model was replaced (POST /model) several times while this request was read; "
                            "send it again.",
                            503,
                        ) from None
        except Exception as exc:  # answered as a 500 (or the BadRequest's status) by each request
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)

    async def answer(batch):
        config = served.config  # one model's settings for the parse and the scores
        X, _, counts, errors = served.parse_many([body for body, _ in batch], labelled=False, config=config)
        result = None
        if X is not None:
            try:
                result = await scored(X, config)
            except BadRequest as refused:  # an example beyond the weights' range: each request alone, so
                if refused.status != 422 or errors.count(None) < 2:  # that only its own fails, naming it
                    raise
        own = []
        pos = 0
        for k, exc in zip(counts, errors):
            if exc is None and result is None:
                try:
                    own.append(await scored(X[pos : pos + k], config))
                except BadRequest as refused:
                    own.append(refused)
            else:
                own.append(None)
            pos += k
        pos = 0  # every answer is known (or a ModelReplaced has left them all unset): now they are set
        for (_, future), k, exc, alone in zip(batch, counts, errors, own):
            if not future.done():  # a client that went away cancelled its future
                if exc is not None or isinstance(alone, BadRequest):
                    future.set_exception(exc if exc is not None else alone)
                elif result is not None:
                    future.set_result({key: values[pos : pos + k] for key, values in result.items()})
                else:
                    future.set_result(alone)
            pos += k

    async def learn(headers, receive):
        body = await read_examples(headers, receive, labelled=True)
        # parsed by the writer with the other requests queued meanwhile (one parse, one fsync for all)
        return await served.learn_text(body, asyncio.get_running_loop().create_future())

    def lean(name, handler, protected):
        async def run(scope, receive, send):
            start = time.perf_counter()
            headers = dict(scope["headers"])
            extra = []
            try:
                if (
                    (protected or auth_all)
                    and token_bytes is not None
                    and not authorised_header(headers.get(b"authorization", b""))
                ):
                    status, doc = 401, {"error": "missing or wrong 'Authorization: Bearer' token."}
                    extra = [(b"www-authenticate", b"Bearer")]
                else:
                    status, doc = 200, await handler(headers, receive)
            except _Disconnected:
                return
            except BadRequest as exc:
                status, doc = exc.status, {"error": str(exc)}
            except Exception as exc:  # never take the server down; report and keep serving
                status, doc = 500, {"error": f"internal error: {type(exc).__name__}: {exc}"}
            data = _dumps(doc)
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [*_JSON_HEADERS, (b"content-length", b"%d" % len(data)), *extra],
                }
            )
            await send({"type": "http.response.body", "body": data})
            metrics.observe(name, status, time.perf_counter() - start)

        return run

    fast = {"/predict": lean("predict", predict, False), "/learn": lean("learn", learn, True)}

    @endpoint("health", False)
    async def health(request):
        return JSONResponse(served.health(), 200 if served.failed is None else 503)

    @endpoint("metrics", False)
    async def metrics_endpoint(request):
        m = served.online_metrics()
        lines = [
            "# HELP streamlearn_examples_learned_total Examples learned (acknowledged /learn examples).",
            "# TYPE streamlearn_examples_learned_total counter",
            f"streamlearn_examples_learned_total {m['n_learned']}",
            "# HELP streamlearn_online_loss Progressive-validation (pre-update) average loss.",
            "# TYPE streamlearn_online_loss gauge",
            f'streamlearn_online_loss{{scope="all"}} {_num(m["average_loss"])}',
            f'streamlearn_online_loss{{scope="window"}} {_num(m["window_average_loss"])}',
        ]
        metric = "error_rate" if "error_rate" in m else "rmse"
        lines += [
            f"# HELP streamlearn_online_{metric} Progressive-validation {metric.replace('_', ' ')}.",
            f"# TYPE streamlearn_online_{metric} gauge",
            f'streamlearn_online_{metric}{{scope="all"}} {_num(m[metric])}',
            f'streamlearn_online_{metric}{{scope="window"}} {_num(m["window_" + metric])}',
            "# HELP streamlearn_online_window_examples Examples in the recent window.",
            "# TYPE streamlearn_online_window_examples gauge",
            f"streamlearn_online_window_examples {m['window']}",
            "# HELP streamlearn_log_write_errors_total Write-ahead log writes that failed (a full disk); their "
            "requests were answered with an error and not learned.",
            "# TYPE streamlearn_log_write_errors_total counter",
            f"streamlearn_log_write_errors_total {served.log_write_errors}",
            "# HELP streamlearn_requests_total HTTP requests by endpoint and status code.",
            "# TYPE streamlearn_requests_total counter",
        ]
        for (ep, code), count in sorted(metrics.requests.items()):
            lines.append(f'streamlearn_requests_total{{endpoint="{ep}",code="{code}"}} {count}')
        lines += ["# HELP streamlearn_request_seconds Request latency.", "# TYPE streamlearn_request_seconds histogram"]
        for ep, h in sorted(metrics.hist.items()):
            for b, c in zip(_BUCKETS, metrics.cumulative(h)):
                lines.append(f'streamlearn_request_seconds_bucket{{endpoint="{ep}",le="{b}"}} {c}')
            lines.append(f'streamlearn_request_seconds_bucket{{endpoint="{ep}",le="+Inf"}} {h[-1]}')
            lines.append(f'streamlearn_request_seconds_sum{{endpoint="{ep}"}} {h[-2]!r}')
            lines.append(f'streamlearn_request_seconds_count{{endpoint="{ep}"}} {h[-1]}')
        return PlainTextResponse("\n".join(lines) + "\n", media_type="text/plain; version=0.0.4")

    @endpoint("model", True)
    async def get_model(request):
        data, n = await to_thread.run_sync(served.model_bytes)
        return Response(
            data,
            media_type="application/octet-stream",
            headers={"X-Streamlearn-N-Learned": str(n), "Content-Disposition": f'attachment; filename="model-{n}.slm"'},
        )

    @endpoint("model_upload", True)
    async def post_model(request):
        body = await body_of(request)
        fd, tmp = tempfile.mkstemp(prefix=".upload-", suffix=".slm", dir=served.dir)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            try:
                await to_thread.run_sync(load, tmp)  # the safe loader: nothing is unpickled
            except (ModelFileError, FileNotFoundError, TypeError, ValueError) as exc:
                raise BadRequest(f"the uploaded file is not a valid model: {exc}".replace(tmp, "upload")) from None
            try:
                result = await asyncio.wrap_future(served.swap(tmp))
            except ValueError as exc:
                raise BadRequest(str(exc)) from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return JSONResponse({"swapped": True, **result})

    @contextlib.asynccontextmanager
    async def lifespan(app):
        previous = sys.getswitchinterval()
        if switch_interval is not None:
            sys.setswitchinterval(switch_interval)
        try:
            yield
            await to_thread.run_sync(served.close)
        finally:
            sys.setswitchinterval(previous)

    routes = [  # the lean handlers also behind Starlette's routing (a mount under a root path reaches them there)
        Route("/predict", _Asgi(fast["/predict"]), methods=["POST"]),
        Route("/learn", _Asgi(fast["/learn"]), methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
        Route("/model", get_model, methods=["GET"]),
        Route("/model", post_model, methods=["POST"]),
    ]
    allowed: dict[str, set] = {}
    for route in routes:
        allowed.setdefault(route.path, set()).update(route.methods or ())
    endpoints = "POST /predict, POST /learn, GET /health, GET /metrics, GET /model and POST /model"

    def shown(path):
        return path if len(path) <= 80 else path[:80] + "..."

    async def not_found(request, exc):  # Starlette's answer is a text/plain "Not Found"
        path = shown(request.url.path)
        return JSONResponse({"error": f"no endpoint {request.method} {path}; the endpoints are {endpoints}."}, 404)

    async def not_allowed(request, exc):  # Starlette's Allow header names the first route of the path only
        path = next((p for p in allowed if request.url.path.endswith(p)), None)
        methods = ", ".join(sorted(allowed[path])) if path else (exc.headers or {}).get("Allow", "")
        return JSONResponse(
            {"error": f"{request.method} {shown(request.url.path)}: the method is not allowed; it takes {methods}."},
            405,
            headers={"Allow": methods},
        )

    starlette = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: not_found, 405: not_allowed})
    return _App(starlette, fast)


def _unique_keys(pairs):
    """A JSON object as a dict, refusing a key given twice (the parser keeps the last value: ``{"3": 1, "3": 2}``
    would be learned as feature 3 = 2 without a word, where a LIBSVM line with index 3 twice is refused)."""
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen: set = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise BadRequest(f"the JSON body gives the key {twice!r} twice in one object; give each key once.")
    return obj


class _Disconnected(Exception):
    """The client went away before its body was read: nothing to answer."""


class _Asgi:
    """A plain ASGI callable as a Starlette route endpoint (an instance, not a function: Starlette then passes
    ``scope, receive, send`` instead of a Request)."""

    def __init__(self, handler):
        self.handler = handler

    async def __call__(self, scope, receive, send):
        await self.handler(scope, receive, send)


class _App:
    """ASGI entry: ``POST /predict`` and ``POST /learn`` to their lean handlers, the rest to Starlette (which
    also answers other methods on those paths with 405)."""

    def __init__(self, starlette, fast):
        self.starlette = starlette
        self.fast = fast
        self.routes = starlette.routes

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST":
            handler = self.fast.get(scope["path"])
            if handler is not None:
                return await handler(scope, receive, send)
        return await self.starlette(scope, receive, send)
