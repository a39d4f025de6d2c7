"""Clients and task bookkeeping: ``connect``, the default client, and failures mapped to clear errors."""

import contextlib
import logging
import os
import re
import socket
from collections.abc import Iterator
from typing import Any

import distributed
from distributed import Client, LocalCluster
from distributed.scheduler import KilledWorker

__all__ = ["connect"]

_LOCAL = re.compile(r"local:(\d+)")
_LOCAL_FORM = "'local:N' (a LocalCluster of N >= 1 worker processes on this machine)"
_ADDRESS_FORM = "a scheduler address such as 'tcp://scheduler:8786'"


def max_local_workers() -> int:
    """The most worker processes ``"local:N"`` starts: 4 per CPU of this machine (at least 4)."""
    return 4 * max(os.cpu_count() or 1, 1)


def _shown(scheduler, option):
    """How the messages name the given scheduler (the Python parameter, or the command-line ``option``), and
    the forms it accepts (None only from Python)."""
    if option is None:
        return f"scheduler={scheduler!r}", f"{_LOCAL_FORM}, {_ADDRESS_FORM}, or None (the current default client)"
    return f"{option} {scheduler!r}", f"{_LOCAL_FORM} or {_ADDRESS_FORM}"


def check_scheduler(scheduler, option=None):
    """``_parse``, and for an address the checks of its form and port that need no connection: a ValueError
    naming ``option`` (e.g. ``"--scheduler"``) for a malformed one, before any work starts."""
    kind, value = _parse(scheduler, option)
    if kind == "address":
        _address_parts(scheduler, value, option)
    return kind, value


def _parse(scheduler, option=None):
    """``("local", n)`` or ``("address", text)``; ValueError naming the input for anything else. ``option``:
    the command-line option that gave it (``"--scheduler"``), named in the messages instead of the Python
    parameter (which also takes None)."""
    shown, forms = _shown(scheduler, option)
    if not isinstance(scheduler, str):
        raise ValueError(
            f"scheduler must be a string or None: {forms}; got {scheduler!r} ({type(scheduler).__name__})."
        )
    text = scheduler.strip()
    if not text:
        raise ValueError(f"{option or 'scheduler'} must not be empty: expected {forms}; got {scheduler!r}.")
    if text.lower().startswith("local"):
        m = _LOCAL.fullmatch(text.lower())
        if not m or int(m.group(1)) < 1:
            raise ValueError(
                f"{shown} is not a valid local cluster: expected 'local:N' with an "
                f"integer N >= 1 worker processes (e.g. 'local:2'); the accepted forms are {forms}."
            )
        n = int(m.group(1))
        most = max_local_workers()
        if n > most:
            raise ValueError(
                f"{shown} asks for {n} worker processes on this machine: expected at most "
                f"{most} (4 per CPU, {os.cpu_count() or 1} CPUs here; more processes only share the same cores). "
                "For a larger cluster, pass its scheduler's address."
            )
        return "local", n
    if any(c.isspace() for c in text) or ":" not in text:
        raise ValueError(f"{shown} is not a scheduler address: expected {forms}.")
    return "address", text


@contextlib.contextmanager
def connect(
    scheduler: str | int | None = None, *, threads_per_worker: int = 1, **cluster_kwargs: Any
) -> Iterator[Client]:
    """Context manager yielding a ``distributed.Client``.

    Parameters
    ----------
    scheduler : str or None, default=None
        ``"local:N"`` (1 <= N <= 4 per CPU of this machine): start a ``LocalCluster`` of N worker *processes*
        with ``threads_per_worker`` threads each and no dashboard, closed (workers stopped) on exit.
        Any other string: the address of a running scheduler (``"tcp://scheduler:8786"``); only the
        client is closed on exit, the cluster keeps running. None: the current default client
        (``distributed.get_client()``), left open on exit.
    threads_per_worker : int >= 1, default=1
        Threads per local worker process (``"local:N"`` only). The kernels hold the GIL released, but
        one thread per process keeps the BLAS and numba work of a task on one core.
    **cluster_kwargs
        Passed to ``LocalCluster`` (``"local:N"`` only), e.g. ``memory_limit``. ``silence_logs`` defaults to
        ``logging.CRITICAL``: the worker processes print no log record of their own (a task that raises is
        reported once, by the exception :func:`fit_mixing` or :func:`fit_sketch` raises, not also as the
        worker's "Compute Failed" record with its remote traceback); pass ``silence_logs=logging.WARNING``
        to see them.

    Yields
    ------
    distributed.Client

    Raises
    ------
    ValueError
        ``scheduler`` is not one of the forms above (``"local:0"``, ``"local:x"``, ``""``, ...).
    RuntimeError
        ``scheduler=None`` and no client is running.

    Notes
    -----
    Local workers start with ``OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = MKL_NUM_THREADS = 1`` (Dask's
    ``distributed.nanny.pre-spawn-environ`` default); the tasks of :func:`fit_sketch` and
    :func:`fit_mixing` also cap BLAS threads with threadpoolctl, which covers remote workers too. Each
    worker process compiles (or loads from numba's on-disk cache) the kernels on its first task: the first
    round costs about a second more than the next ones.

    Examples
    --------
    >>> from streamlearn.distributed import connect
    >>> with connect("local:1") as client:  # doctest: +SKIP
    ...     print(len(client.scheduler_info()["workers"]))
    1
    >>> connect("local:0").__enter__()
    Traceback (most recent call last):
    ...
    ValueError: scheduler='local:0' is not a valid local cluster: expected 'local:N' with an integer N >= 1 ...
    """
    if scheduler is None:
        yield _default_client()
        return
    kind, value = _parse(scheduler)
    if kind == "local":
        cluster_kwargs.setdefault("silence_logs", logging.CRITICAL)
        cluster_kwargs.setdefault("dashboard_address", None)
        if cluster_kwargs["dashboard_address"] is None:
            # no dashboard, but the scheduler still serves HTTP (health, metrics), by default on port 8787: on any
            # free port instead, so that a second cluster on this machine does not warn that 8787 is taken
            host = cluster_kwargs.get("host") or "127.0.0.1"
            cluster_kwargs["scheduler_kwargs"] = {
                "dashboard_address": f"{host}:0",
                **cluster_kwargs.get("scheduler_kwargs", {}),
            }
        cluster = LocalCluster(n_workers=value, threads_per_worker=threads_per_worker, processes=True, **cluster_kwargs)
        try:
            client = Client(cluster)
            try:
                yield client
            finally:
                client.close()
        finally:
            cluster.close()
    else:
        _reachable(scheduler, value)
        client = Client(value)
        try:
            yield client
        finally:
            client.close()


def _address_parts(scheduler, address, option=None):
    """``(protocol, host, port)`` of a TCP/TLS scheduler address (None for another protocol); a ValueError naming the
    input for a malformed address or a port out of range."""
    from distributed.comm.addressing import parse_address, parse_host_port

    shown, forms = _shown(scheduler, option)
    try:
        protocol, location = parse_address(address, strict=False)
    except ValueError as exc:
        raise ValueError(f"{shown} is not a scheduler address ({exc}): expected {forms}.") from None
    if protocol not in ("tcp", "tls"):
        return None
    try:
        host, port = parse_host_port(location)
    except ValueError as exc:
        raise ValueError(f"{shown} is not a scheduler address ({exc}): expected {forms}.") from None
    if not 0 < port < 65536:
        raise ValueError(f"{shown}: port {port} is out of range; expected 1 to 65535.")
    return protocol, host, port


def _reachable(scheduler, address):
    """Fail at once, naming ``address``, when no scheduler can be listening there: a malformed or out-of-range
    port, an unknown host, a refused connection (Dask itself retries those for its whole connect timeout,
    30 s by default, before giving up). A host that does not answer fails after that timeout, as in Dask."""
    import dask.config
    from dask.utils import parse_timedelta

    parts = _address_parts(scheduler, address)
    if parts is None:
        return
    protocol, host, port = parts
    # dask.config's lookup of the dotted key (distributed.config is the plain dict, whose .get gave None: no
    # time limit at all)
    timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except socket.gaierror as exc:
        raise OSError(f"unknown host {host!r} ({exc.strerror})") from None
    except ConnectionRefusedError:
        raise ConnectionRefusedError(f"connection refused: no scheduler listens on {host}:{port}") from None
    except TimeoutError:
        raise TimeoutError(f"no answer from {host}:{port} within {timeout:g} s") from None
    if protocol == "tcp":
        _handshake(address, host, port, timeout)


def _handshake(address, host, port, timeout):
    """Open and close one Dask connection to ``address`` within ``timeout`` seconds. Dask waits for the
    scheduler's handshake without a time limit (a server that accepts and never answers kept ``Client`` waiting
    for ever) and takes the first bytes of any other server for a message length (an HTTP server's reply
    became a 3 EiB allocation and a MemoryError): both are an OSError naming the address here."""
    import asyncio

    from distributed.comm import connect as comm_connect

    async def probe():
        comm = await comm_connect(address, timeout=timeout)
        await comm.close()

    async def bounded():
        await asyncio.wait_for(probe(), timeout)

    try:
        asyncio.run(bounded())
    except TimeoutError:
        raise TimeoutError(
            f"{host}:{port} accepts connections but did not answer Dask's handshake within {timeout:g} s; "
            "is a Dask scheduler listening there?"
        ) from None
    except OSError as exc:
        raise OSError(
            f"{host}:{port} closed the connection during Dask's handshake ({exc}); is a Dask scheduler listening there?"
        ) from None
    except Exception as exc:  # noqa: BLE001 (MemoryError, a decoding error: bytes that are not Dask's protocol)
        raise OSError(
            f"{host}:{port} does not speak Dask's protocol ({type(exc).__name__} reading its handshake); is a "
            "Dask scheduler listening there?"
        ) from None


def _default_client():
    try:
        return distributed.get_client()
    except ValueError:
        raise RuntimeError(
            "No Dask client is running: pass client=... (a distributed.Client), or start one "
            "first, e.g. `with streamlearn.distributed.connect('local:2') as client:` or "
            "`Client('tcp://scheduler:8786')`."
        ) from None


def resolve_client(client):
    """``client`` itself, or the default client when None (RuntimeError when there is none)."""
    if client is None:
        return _default_client()
    if not isinstance(client, Client):
        raise TypeError(
            f"client must be a distributed.Client or None; got {type(client).__name__}. Use "
            "streamlearn.distributed.connect(...) to make one."
        )
    return client


@contextlib.contextmanager
def scheduler_kept(what):
    """Run the body (calls that wait on the scheduler); the scheduler lost meanwhile (the client cancels its
    futures, or its connection closes) is a RuntimeError naming ``what``, as a worker lost for good is, instead of
    Dask's FuturesCancelledError or CommClosedError (which the command line would show as a traceback, or as an
    error of its standard output)."""
    from concurrent.futures import CancelledError

    from distributed.comm.core import CommClosedError

    try:
        yield
    except (CancelledError, CommClosedError) as exc:
        said = [line.removeprefix("Message: ") for line in str(exc).splitlines() if line.startswith("Message: ")]
        said = [line.rstrip(".") for line in said if line not in ("", "None")]
        reason = f" ({said[0]})" if said else ""
        raise RuntimeError(
            f"{what} stopped: the connection to the Dask scheduler was lost{reason}; nothing was returned."
        ) from exc


def collect(futures, parts, what, *, gather=True):
    """Wait for one future per partition; the results in order, or a clear error naming the partition.

    Any exception a task raised is re-raised as is, with a note naming the partition (the first such partition,
    in order). A task whose worker died more often than the scheduler's ``allowed-failures`` raises
    ``KilledWorker``: when no task raised anything else, a RuntimeError naming every partition whose worker died
    (a task that kills its worker takes the tasks running beside it along, and Dask counts those losses against
    them too) and no partial model is returned; so is a scheduler lost meanwhile.
    """
    with scheduler_kept(what):
        distributed.wait(futures)
    failed = [(k, fut.exception()) for k, fut in enumerate(futures) if fut.status == "error"]
    if failed:
        for other in futures:
            other.cancel()
        raised = [(k, exc) for k, exc in failed if not isinstance(exc, KilledWorker)]
        if raised:
            k, exc = raised[0]
            exc.add_note(f"(raised by partition {k}: {parts[k].describe()})")
            raise exc
        raise_killed([k for k, _ in failed], parts, what, failed[0][1])
    if not gather or not futures:
        return None
    with scheduler_kept(what):
        return futures[0].client.gather(futures)


def raise_killed(ks, parts, what, exc):
    """RuntimeError for the partitions ``ks`` whose workers kept dying (``exc``: the first one's KilledWorker)."""
    named = [f"{k} ({parts[k].describe()})" for k in ks]
    if len(named) == 1:
        which = f"worker running partition {named[0]} died (the task was retried by Dask and its worker was"
    else:
        listed = ", ".join(named[:-1]) + " and " + named[-1]
        which = (
            f"workers running partitions {listed} died (one task can take the others running beside it on its "
            "worker along; each was retried by Dask and its worker was"
        )
    raise RuntimeError(f"{which} lost every time: {exc}); {what} stopped and no model returned.") from exc
