"""The model a server learns and predicts with: one writer thread, a write-ahead log, atomic snapshots.

State directory layout::

    state-<g>.json  snapshot number g: the server's settings, online counters and n, the examples learned
    model-<g>.slm   the model of snapshot g (streamlearn model format; written atomically after state-<g>.json)
    wal-<m>.log     the batches learned from example m on (see ``_wal``); a snapshot at n starts wal-<n>.log,
                    then removes the older files

Start-up loads the newest snapshot whose two files exist (a crash between them leaves the previous snapshot
in force, and its log) and replays the log records from its ``n`` on, each
record as one ``partial_fit`` call: the same calls, on the same batches, as before the restart, so the model
is the same bit for bit whatever the learner. A torn last record (crash in the middle of a write) is dropped.

A running server holds an exclusive ``flock`` of the folder: a second server on it is refused.
"""

import contextlib
import copy
import errno
import io
import json
import math
import os
import re
import shutil
import tempfile
import threading
import time
from collections import deque
from concurrent.futures import Future, InvalidStateError
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._estimator import is_classifier
from .._typing import FloatArray
from .._validation import EXPECTED_BELOW_BOUND, MAX_FEATURE_VALUE, non_finite_state, validate_params
from ..datasets import load_svmlight
from ..datasets._spec import InputSpec
from ..datasets._stream import MAX_WIDTH
from ..datasets._svmlight import SvmlightFormatError
from ..evaluation._common import example_losses, loss_spec, signed_targets
from ..learners import LEARNERS, learner_name_of, make_learner, scaled_learner
from ..persist import load, save
from . import _wal
from ._wal import HEADER, WriteAheadLog, fsync_path, read_records

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: the state folder is not locked
    fcntl = None  # type: ignore[assignment]

__all__ = ["ServedModel", "BadRequest", "DEFAULT_N_FEATURES"]

#: Width of a server started from a learner name without ``--n-features``.
DEFAULT_N_FEATURES = 1 << 18
_SNAP = re.compile(r"^(model|state)-(\d+)\.(slm|json)$")
_WAL = re.compile(r"^wal-(\d+)\.log$")
#: the temporary files the server writes in its state folder (snapshots and model uploads; model downloads
#: were written there too before they were made in memory), left there by a crash in the middle of one
_TEMPORARY = re.compile(r"^\.(tmp|upload|get)-")
_SYNC_THREADS = 2
#: the errors of a log write that more room on the disk resolves: their requests are answered 507
_NO_ROOM = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_BARE_CR = re.compile(rb"\r(?!\n)")
_NO_LABEL = re.compile(rb"^(?=[ \t]*[^\s:#]+:)", re.MULTILINE)


def _resolve(items):
    for fut, result, exc in items:
        if not fut.done():  # a client that went away cancelled its future
            if exc is not None:
                fut.set_exception(exc)
            else:
                fut.set_result(result)


#: the state folders this process serves: their real path -> [descriptor holding the lock, number of ServedModels]
_HELD: dict = {}
_HELD_LOCK = threading.Lock()


def _lock_state_dir(path, log):
    """Take the state folder ``path`` for this process (an exclusive ``flock`` of the folder, held until
    :func:`_unlock_state_dir`): a second server on the same folder, in another process, is refused instead of
    appending its records to the same log, where the acknowledged examples of one of them were lost at the next
    start. ServedModels of one process may share a folder (a test abandons one, as a crash would)."""
    key = os.path.realpath(path)
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is not None:
            held[1] += 1
            return key
        fd = None
        try:
            if fcntl is not None:
                fd = os.open(key, os.O_RDONLY)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ValueError(
                f"state directory {path} is in use by another 'streamlearn serve' process: one server per "
                "folder (stop that one first, or give another --state-dir)."
            ) from None
        except OSError as exc:  # a file system without locks: served, unlocked
            if fd is not None:
                os.close(fd)
                fd = None
            log(f"state directory {path}: cannot lock it ({exc.strerror or exc}); a second server is not detected")
        _HELD[key] = [fd, 1]
        return key


def _make_state_dir(path):
    """Create the state folder ``path`` and the folders above it that are missing; the folders created,
    outermost first (none when ``path`` existed)."""
    missing = []
    folder = path
    while not os.path.lexists(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    missing.reverse()
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        _remove_state_dir(missing, alone=False)  # those made before the one that failed
        raise ValueError(f"state directory {path}: cannot create it ({exc.strerror or exc}).") from None
    return missing


def _remove_state_dir(created, *, alone):
    """Undo :func:`_make_state_dir` after a start that failed: the state folder with what this start wrote in it
    (``alone``: no other server of this process shares it), then the folders above it that are still empty."""
    if not created:
        return
    if alone:
        shutil.rmtree(created[-1], ignore_errors=True)
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def _unlock_state_dir(key):
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is None:  # released already
            return
        held[1] -= 1
        if held[1] == 0:
            del _HELD[key]
            if held[0] is not None:
                os.close(held[0])


class BadRequest(ValueError):
    """A request the server refuses (HTTP 4xx); ``status`` is the HTTP code, the message is the response's.

    >>> import tempfile
    >>> from streamlearn.serve import BadRequest, ServedModel
    >>> m = ServedModel(tempfile.mkdtemp(), learner="ftrl", n_features=10, snapshot_every=0)
    >>> try:
    ...     m.parse(b"1 1:abc\\n", labelled=True)
    ... except BadRequest as exc:
    ...     print(exc.status, exc)
    400 line 1: malformed feature '1:abc': the value after ':' is not a number
    """

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


class _NotLogged(Exception):
    """A batch whose log record could not be written, with the log and the model as before it: its requests
    are answered with this message and ``status``, and learning goes on."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class ModelReplaced(Exception):
    """Rows parsed under one model's input settings met another model (``POST /model`` came in between): they
    are parsed again under the new settings (index base and width may differ), never scored as they are."""


#: the settings that decide how a request's unlabelled lines are parsed
_PARSED_WITH = ("zero_based", "n_features")


#: learners whose update of a batch changes their arrays along the feature axis at the batch's features only
#: (the rest through scalars and small arrays): after a batch, only those slices of their large arrays can have
#: become not finite (tests/serve/test_divergence.py checks it for each of them). An averaged learner recomputes
#: its averaged weights everywhere, ``coef_ = running_coef_ - average_sum_ / t_``, but where the running weights
#: and the sum did not change, that lies between the running weight and the previous average: finite as they are.
_ROW_LOCAL = frozenset(
    {
        "streamlearn.linear_model._sparse._LazyLinearMixin",
        "streamlearn.linear_model._nag._NAG",
        "streamlearn.linear_model._first_order._FirstOrderLinear",
        "streamlearn.facto._fm._FMBase",
    }
)


def row_local(model):
    """True when learning a batch changes ``model``'s arrays along the feature axis at the batch's features only
    (a streaming scaler's statistics do too)."""
    learner = getattr(model, "learner_", getattr(model, "learner", model))  # a pipeline's, fitted or not
    cls = type(learner)
    if cls not in _ROW_LOCAL_CLASSES:
        _ROW_LOCAL_CLASSES[cls] = any(f"{c.__module__}.{c.__qualname__}" in _ROW_LOCAL for c in cls.__mro__)
    return _ROW_LOCAL_CLASSES[cls]


_ROW_LOCAL_CLASSES: dict = {}


def _raise_state_diverged(model, attr):
    """The learner's own divergence error (``_raise_diverged``) for a fitted attribute left non-finite."""
    learner, name = model, attr
    if attr.startswith("learner_.") and hasattr(model, "learner_"):  # a scaler's pipeline: its learner's state
        learner, name = model.learner_, attr.removeprefix("learner_.")
    if hasattr(learner, "_raise_diverged") and "." not in name:
        learner._raise_diverged(None, getattr(learner, "_diverge_hint", "the step size"), state=name)
    raise FloatingPointError(
        f"{type(learner).__name__} diverged: learning this batch made its {name} not finite: the values are too "
        "large for it."
    )


def _refuse_contradictions(own, given, says, advice):
    """A ValueError for the first setting (``n_features``, ``classes``, ``zero_based``) of ``given`` that is not
    None and differs from the model's in ``own`` ("{says} {key}={own}; {key}={given} (--option) contradicts
    it ({advice})."); classes compare as numbers."""
    for key, have in own.items():
        value = given.get(key)
        if value is None:
            continue
        if key == "classes":
            same = have is not None and [float(c) for c in value] == [float(c) for c in have]
        else:
            same = value == have
        if not same:
            option = "--" + key.replace("_", "-")
            raise ValueError(f"{says} {key}={have!r}; {key}={value!r} ({option}) contradicts it ({advice}).")


def _quiet_on_error(log):
    """``log`` that drops a line it cannot write: the server's log goes to standard error, which may be a closed
    pipe, and a BrokenPipeError raised in the writer thread ended it (every later /learn waited for ever)."""

    def quiet(msg):
        with contextlib.suppress(Exception):
            log(msg)

    return quiet


def _refusal(exc):
    """The answer to a request whose update the learner refused: 422 for a divergence (``FloatingPointError``),
    400 for a value it does not take (``ValueError``: NaN, infinity, a value beyond 2**500), its examples
    counted from 1 as the lines of a request."""
    text, row, reason = str(exc), getattr(exc, "row", None), getattr(exc, "reason", None)
    if row is not None and reason is not None:  # the learners' row errors (_validation.row_error)
        text = f"example {row + 1} of this request: {reason}"
    text = text.replace("this batch", "this request")
    status = 422 if isinstance(exc, FloatingPointError) else 400
    return BadRequest(f"{text} Nothing was learned from this request; the model is as before it.", status)


def _atomic_write(path, data):
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read_state(path):
    """The ``{"config", "stats"}`` of a snapshot's state file, checked: a file that is not what a snapshot
    writes (damaged, emptied, edited by hand) is a ValueError naming it."""

    def damaged(why):
        return ValueError(f"{path}: the snapshot's state file is damaged ({why}); restore it or empty the folder.")

    try:
        with open(path, "rb") as f:
            state = json.loads(f.read())
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise damaged(f"not JSON: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    if (
        not isinstance(state, dict)
        or not isinstance(state.get("config"), dict)
        or not isinstance(state.get("stats"), dict)
    ):
        raise damaged('expected a JSON object with "config" and "stats" objects')
    config, stats = state["config"], state["stats"]
    missing = [k for k in ("learner", "n_features", "zero_based", "classes") if k not in config]
    if missing:
        raise damaged(f"config has no {missing[0]!r}")
    n, width = stats.get("n_learned"), config["n_features"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise damaged(f"stats.n_learned is {n!r}, expected an integer >= 0")
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise damaged(f"config.n_features is {width!r}, expected an integer >= 1")
    for key, value in stats.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise damaged(f"stats.{key} is {value!r}, expected a number")
    window = state.setdefault("window", {"loss": [], "err": []})  # absent from snapshots of earlier versions
    for key in ("loss", "err"):  # an example's loss may be infinite (a squared error beyond the float range)
        values = window.get(key) if isinstance(window, dict) else None
        if not isinstance(values, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v) for v in values
        ):
            raise damaged(f"window.{key} is not a list of numbers")
    return state


def _check_width_and_classes(n_features, classes):
    """The width and classes given for a new model (``--n-features``, ``--classes``): a width the data readers
    allow (its weights are allocated at the first update), and two distinct classes or more, each once."""
    if n_features is not None and not 1 <= int(n_features) <= MAX_WIDTH:
        raise ValueError(f"n_features (--n-features) must be between 1 and {MAX_WIDTH} (2**28); got {n_features}.")
    if classes is None:
        return
    values = [float(c) for c in classes]
    bad = next((c for i, c in enumerate(classes) if not math.isfinite(values[i])), None)
    if bad is not None:  # no label can equal NaN, and an infinite class makes the learner's state not finite
        raise ValueError(f"classes={list(classes)!r} (--classes) must be finite numbers; got {bad!r}.")
    if len(set(values)) < 2:
        raise ValueError(f"classes={list(classes)!r} (--classes) needs at least 2 distinct classes.")
    twice = next((c for i, c in enumerate(classes) if values[i] in values[:i]), None)
    if twice is not None:
        raise ValueError(f"classes={list(classes)!r} (--classes) names {twice!r} twice; give each class once.")


class ServedModel:
    """A model that learns from a stream of batches (one writer) and predicts concurrently.

    Parameters
    ----------
    state_dir : str
        Snapshots and the write-ahead log. When it holds a snapshot, the server continues from it and
        ``model`` / ``learner`` are ignored; ``n_features``, ``classes`` and ``zero_based``, when given, must
        be the continued model's (ValueError otherwise).
    model : str or None
        Model file to start from (an empty state directory only).
    learner, params : str and dict
        Or a registered learner name and its parameters.
    scale, target_scale : str or None
        The streaming scaler (``"none"``, ``"maxabs"``, ``"standard"``) and, for a regressor, the target
        scaler (``"none"``, ``"standard"``) in front of a model started from ``learner``; None: the
        learner's defaults, as ``streamlearn train`` (see :func:`streamlearn.learners.scaled_learner`). A
        model file keeps its own.
    n_features : int or None
        Width of a model started from ``learner`` (default ``DEFAULT_N_FEATURES``); LIBSVM feature ids
        beyond it are refused.
    zero_based : bool or None
        LIBSVM index base of a model without an input specification (None: one-based).
    classes : list or None
        Classes of a classifier started from ``learner`` (default ``[-1, 1]``).

        With a trained model file, the width, the classes and the index base are the model's: a different
        ``n_features``, ``classes`` or ``zero_based`` is a ValueError.
    snapshot_every : float
        Seconds between snapshots (when something was learned); 0 disables the periodic snapshots.
    fsync : bool
        ``fsync`` every log record before acknowledging (the durability guarantee); False for benchmarks.

    Examples
    --------
    >>> import tempfile
    >>> m = ServedModel(tempfile.mkdtemp(), learner="ftrl", n_features=10, snapshot_every=0)
    >>> X, y, payload = m.parse(b"1 1:1 2:0.5\\n-1 3:1\\n", labelled=True)
    >>> m.learn(X, y, payload).result()["learned"]
    2
    >>> m.predict(m.parse(b"1:1 2:0.5\\n", labelled=False)[0])["labels"]
    [1.0]
    >>> m.close()
    """

    def __init__(
        self,
        state_dir,
        *,
        model=None,
        learner=None,
        params=None,
        scale=None,
        target_scale=None,
        n_features=None,
        zero_based=None,
        classes=None,
        snapshot_every=60.0,
        fsync=True,
        max_batch_lines=100_000,
        window=1000,
        log=None,
    ):
        if not (0.0 <= float(snapshot_every) < float("inf")):  # NaN, infinity: before anything is created
            raise ValueError(f"snapshot_every must be a finite number of seconds >= 0; got {snapshot_every!r}.")
        self.dir = os.path.abspath(state_dir)
        if os.path.exists(self.dir) and not os.path.isdir(self.dir):
            raise ValueError(f"state directory {self.dir} is not a folder (a file of that name exists).")
        self.snapshot_every = float(snapshot_every)
        self.fsync = fsync
        self.max_batch_lines = int(max_batch_lines)
        self.lock = threading.Lock()  # the model: held by the writer while it learns, by readers to predict
        self._queue = deque()
        self._cv = threading.Condition()
        self._closing = False
        # group commit: groups written to the log and learned wait in _pending for an fsync that started after
        # their write; _written groups so far, the first _covered of them covered by a started fsync, the
        # first _synced of them covered by a finished one; _syncing fsyncs running
        self._pending = []  # (group number, [(future, result, None), ...])
        self._written = self._covered = self._synced = self._syncing = 0
        self._draining = 0  # threads in _drain
        self._sync_cv = threading.Condition()
        self._sync_stop = False
        self.failed = None
        self.log_write_errors = 0  # log writes that failed (a full disk); see _unlogged
        self._log_blocked = False  # the last log write failed
        self.window = int(window)
        self._log = _quiet_on_error(log) if log is not None else (lambda msg: None)
        self.stats = {"n_learned": 0, "loss_sum": 0.0, "err_sum": 0.0, "n_batches": 0}
        self._win_loss = deque(maxlen=self.window)
        self._win_err = deque(maxlen=self.window)
        created = _make_state_dir(self.dir)  # the folders made here: a start that fails removes them
        try:
            self._state_key = _lock_state_dir(self.dir, self._log)
        except BaseException:  # another process serves the folder: only what is still empty goes
            _remove_state_dir(created, alone=False)
            raise
        try:
            if _HELD[self._state_key][1] == 1:  # not while another ServedModel of this process writes there
                self._remove_temporary_files()
            snap = self._latest_snapshot()
            if snap is None:
                if model is None and learner is None:
                    raise ValueError(f"state directory {self.dir} holds no snapshot: give a model file or a learner.")
                _, wals = self._files()
                left = [f"wal-{m}.log" for m in wals if os.path.getsize(os.path.join(self.dir, f"wal-{m}.log"))]
                if left:  # the records of an earlier model: a new one must not append to them or replay them
                    raise ValueError(
                        f"state directory {self.dir} holds the log {left[0]} but no complete snapshot: it is the log of "
                        "an earlier model. Restore its snapshot (model-N.slm and state-N.json), or empty the folder to "
                        "start over."
                    )
                self._init_fresh(model, learner, params, n_features, zero_based, classes, scale, target_scale)
                self._snapshot()
            else:
                if model is not None or learner is not None:
                    self._log(
                        f"continuing the model in {self.dir} (snapshot {snap}); the model/learner given "
                        "is used only for an empty state directory"
                    )
                self._recover(snap)
                self._check_continued(n_features=n_features, classes=classes, zero_based=zero_based)
            self._warm_up()
        except BaseException:
            _remove_state_dir(created, alone=_HELD[self._state_key][1] == 1)
            _unlock_state_dir(self._state_key)
            raise
        self._last_snapshot = time.monotonic()
        self._worker = threading.Thread(target=self._run, name="streamlearn-learner", daemon=True)
        self._syncers = [
            threading.Thread(target=self._sync_loop, args=(k,), name=f"streamlearn-log-sync-{k}", daemon=True)
            for k in range(_SYNC_THREADS)
        ]
        self._worker.start()
        for t in self._syncers:
            t.start()

    # ---------------------------------------------------------------------------------------- set-up
    def _check_continued(self, **given):
        """A width, classes or index base given for a continued model must be the model's: one that differs
        would be ignored, and the server would read lines otherwise than the caller asked."""
        _refuse_contradictions(
            {key: self.config[key] for key in given},
            given,
            f"state directory {self.dir} continues a model with",
            "omit it to continue that model, or empty the folder to start a new one",
        )

    def _init_fresh(self, model_path, learner, params, n_features, zero_based, classes, scale, target_scale):
        _check_width_and_classes(n_features, classes)
        if model_path is not None:
            model = load(model_path)
            name = learner_name_of(model)
            self._check_learnable(model, name, model_path)
            spec = getattr(model, "input_spec_", None)
            own = {}  # what the model file fixes; a different value given with it is an error, not ignored
            if isinstance(spec, dict):
                if spec.get("format", "libsvm") != "libsvm":
                    raise ValueError(
                        f"{model_path}: the model reads {spec['format']} input; this server reads LIBSVM lines."
                    )
                if spec.get("zero_based") is not None:
                    own["zero_based"] = bool(spec["zero_based"])
            if hasattr(model, "n_features_in_"):
                own["n_features"] = int(model.n_features_in_)
            if hasattr(model, "classes_"):
                own["classes"] = model.classes_.tolist()
            given = {"zero_based": zero_based, "n_features": n_features, "classes": classes}
            _refuse_contradictions(own, given, f"{model_path}: the model has", "omit it with a trained model file")
            zero_based = own.get("zero_based", zero_based)
            n_features = own.get("n_features", n_features)
            classes = own.get("classes", classes)
        else:
            inner = make_learner(learner, params or {})
            name = learner
            self._check_learnable(inner, name, learner)
            validate_params(inner)  # a bad -p value is an error now, not at the first /learn
            if target_scale not in (None, "none") and not (
                LEARNERS[name].task == "regression" and inner._progressive_loss == "squared"
            ):
                raise ValueError(
                    f"target_scale={target_scale!r} needs a squared-loss regressor; {name} is a "
                    f"{LEARNERS[name].task} learner with the {inner._progressive_loss} loss."
                )
            model = scaled_learner(name, inner, scale, target_scale)
        n_features = DEFAULT_N_FEATURES if n_features is None else int(n_features)
        if classes is not None and not is_classifier(model):
            raise ValueError(f"classes={list(classes)!r} (--classes) applies to classifiers; {name} is a regressor.")
        if is_classifier(model) and classes is None:
            classes = [-1.0, 1.0]
        self.model = model
        self.config = {
            "learner": name,
            "n_features": n_features,
            "zero_based": bool(zero_based),
            "classes": None if not is_classifier(model) else list(classes),
        }
        self._setup_wal(self.stats["n_learned"], None)

    @staticmethod
    def _check_learnable(model, name, what):
        bad = non_finite_state(model)
        if bad is not None:
            raise ValueError(f"{what}: the model's {bad} holds NaN or infinity (it diverged); it cannot be served.")
        if name is None or not hasattr(model, "partial_fit_scores"):
            raise ValueError(
                f"{what}: a {type(model).__name__} cannot be served: the server learns with the "
                "online learners of 'streamlearn learners'."
            )
        if LEARNERS[name].batch:
            raise ValueError(f"{what}: {name} is a batch learner; the server learns online.")

    def _remove_temporary_files(self):
        """Remove the temporary files that a crash left in the state folder (no other server uses it: it is
        locked): each kill in the middle of a snapshot could leave one or two, as large as the model."""
        for f in os.listdir(self.dir):
            if _TEMPORARY.match(f):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.dir, f))

    def _files(self):
        snaps, wals = {}, []
        for f in os.listdir(self.dir):
            m = _SNAP.match(f)
            if m:
                snaps.setdefault(int(m.group(2)), set()).add(m.group(1))
            m = _WAL.match(f)
            if m:
                wals.append(int(m.group(1)))
        return snaps, sorted(wals)

    def _latest_snapshot(self):
        snaps, _ = self._files()
        whole = [n for n, kinds in snaps.items() if kinds == {"model", "state"}]
        return max(whole) if whole else None

    def _recover(self, g):
        state = _read_state(os.path.join(self.dir, f"state-{g}.json"))
        path = os.path.join(self.dir, f"model-{g}.slm")
        self.model = load(path)
        if learner_name_of(self.model) is None or not hasattr(self.model, "partial_fit_scores"):
            # not a file the server wrote (copied over it by hand): it would fail at the first record replayed
            raise ValueError(
                f"{path}: the snapshot's model file holds a {type(self.model).__name__}, not a model of the online "
                "learners the server serves; restore it or empty the folder."
            )
        self.config = state["config"]
        self.stats.update(state["stats"])
        self._win_loss.extend(state["window"]["loss"])  # the recent window /metrics reports, as it was
        self._win_err.extend(state["window"]["err"])
        self._gen = g
        self._snap_batches = self.stats["n_batches"]
        n = self._snap_n = self.stats["n_learned"]
        wals = self._log_files(n)
        tail = {"good": None}
        batches = self._logged_batches(n, wals, tail, log=self._log)
        for path, start, X, y in batches:
            try:
                scores = self._learn(X, y)
            except FloatingPointError as exc:
                # only a log written by an earlier version holds such a record (its batch was logged before it
                # was learned; when it diverged nothing was acknowledged and learning stopped): the model is
                # put back as before it, and the record dropped when it is the last one
                self.model = self._rebuilt_model(stop=(path, start))
                if next(batches, None) is None and path == os.path.join(self.dir, f"wal-{wals[-1]}.log"):
                    tail["good"] = start
                    self._log(f"{path}: dropped the last record, at byte {start}: {exc} (never acknowledged)")
                else:
                    self.failed = f"{type(exc).__name__}: {exc}"
                    self._log(f"learning stopped while replaying {path}: {self.failed}")
                break
            except ValueError as exc:  # as before the restart: reads only
                self.failed = f"{type(exc).__name__}: {exc}"
                self._log(f"learning stopped while replaying {path}: {self.failed}")
                break
            self._account(X, y, scores)
        self._setup_wal(wals[-1] if wals else n, tail["good"] if wals else None)
        self._log(
            f"recovered {self.dir}: snapshot at {n}, {self.stats['n_learned'] - n} examples replayed from the log"
        )

    def _log_files(self, n):
        """The numbers m of the logs wal-m.log that hold the examples from example ``n`` on, in order."""
        _, wals = self._files()
        return [m for m in wals if m <= n][-1:] + [m for m in wals if m > n]

    def _logged_batches(self, n, wals, tail, log=None):
        """``(path, start, X, y)`` of every log record from example ``n`` on, in order (``start``: the record's
        byte offset in its log); ``tail["good"]`` gets the offset after the last whole record of the last log."""
        expected = n
        for i, m in enumerate(wals):
            path = os.path.join(self.dir, f"wal-{m}.log")
            records, good, torn = read_records(path)
            if torn and i < len(wals) - 1:
                raise ValueError(
                    f"{path}: corrupted record at byte {good}, and later logs exist; the state directory is damaged."
                )
            if torn and log is not None:
                log(f"{path}: dropped a torn last record at byte {good} (never acknowledged)")
            tail["good"] = good
            end = 0
            for seq, payload in records:
                start, end = end, end + HEADER.size + len(payload)
                if seq < expected:
                    continue
                if seq != expected:
                    raise ValueError(
                        f"{path}: the record at example {seq} follows example {expected}: missing log records."
                    )
                X, y, _ = self.parse(payload, labelled=True, _limit=False)  # a group may exceed one request's limit
                yield path, start, X, y
                expected += X.shape[0]

    def _rebuilt_model(self, stop=None):
        """The model of the current snapshot with the log records since it learned again, up to the record at
        ``stop`` (``(path, start)``; None: all of them): the same calls on the same batches, so the same model
        bit for bit as the one that learned them (see the module docstring)."""
        model = load(os.path.join(self.dir, f"model-{self._gen}.slm"))
        for path, start, X, y in self._logged_batches(self._snap_n, self._log_files(self._snap_n), {}):
            if (path, start) == stop:
                break
            model.partial_fit_scores(X, y, classes=self.config["classes"])
        return model

    def _setup_wal(self, m, truncate_at):
        self.wal = WriteAheadLog(
            os.path.join(self.dir, f"wal-{m}.log"), truncate_at=truncate_at, fsync=self.fsync, sync_slots=_SYNC_THREADS
        )

    def _warm_up(self):
        """Load the reader's and the model's compiled code now, not on the first request."""
        X, _, _ = self.parse(b"1:0\n", labelled=False)
        with contextlib.suppress(BadRequest):  # a model that cannot predict says so to each request
            self.predict(X)

    # ---------------------------------------------------------------------------------------- input
    def parse(
        self, body: bytes, *, labelled: bool, _limit: bool = True, config: dict[str, Any] | None = None
    ) -> tuple[Any, FloatArray, bytes]:
        """``(X, y, payload)`` from LIBSVM lines (bytes). Unlabelled lines (``labelled=False``) get label 0.
        Errors raise :class:`BadRequest` naming the line. ``config``: the model settings to read them with (by
        default the current ones, read once)."""
        config = self.config if config is None else config
        if isinstance(body, str):
            body = body.encode()
        if not labelled:
            body = _NO_LABEL.sub(b"0 ", body)
        if _limit:
            body = self.checked_lines(body)
        try:
            X, y = load_svmlight(io.BytesIO(body), n_features=config["n_features"], zero_based=config["zero_based"])
        except SvmlightFormatError as exc:
            reason = exc.reason
            if reason.startswith("feature index 0 in ") and not config["zero_based"]:
                # the reader's advice names its Python parameter, which a client cannot pass
                reason = (
                    reason.split(", but ")[0] + ", but this server reads one-based indices (LIBSVM's convention): "
                    "send indices from 1, or serve a model of zero-based data (--zero-based true)"
                )
            if _BARE_CR.search(body):  # old Mac line ends: the reader sees one line, its examples run together
                reason += " (the body ends its lines with a carriage return alone: end them with \\n or \\r\\n)"
            raise BadRequest(f"line {exc.line}: {reason}") from None
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        big = np.abs(X.data) >= MAX_FEATURE_VALUE
        if big.any():  # the learners take no such value: its square overflows
            p = int(np.flatnonzero(big)[0])
            i = int(np.searchsorted(X.indptr, p, side="right")) - 1
            raise BadRequest(f"example {i + 1}: a feature value of {X.data[p]:g} is too large: {EXPECTED_BELOW_BOUND}")
        if labelled and config["classes"] is not None:
            classes = np.asarray(config["classes"], dtype=np.float64)
            bad = ~np.isin(y, classes)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise BadRequest(
                    f"example {i + 1}: label {y[i]:g} is not one of the model's classes {config['classes']}."
                )
        return X, y, body

    def checked_lines(self, body: bytes) -> bytes:
        """``body`` ending with a newline, after the cheap checks of a request (not empty, the line limit)."""
        return self._checked(body)[0]

    def _checked(self, body):
        """``(body, lines)``: :meth:`checked_lines` and the number of lines it holds."""
        if not body.endswith(b"\n"):
            body += b"\n"
        n_lines = body.count(b"\n")
        if n_lines > self.max_batch_lines:
            raise BadRequest(f"{n_lines} lines; a request holds at most {self.max_batch_lines}.", 413)
        return body, n_lines

    def parse_many(
        self,
        bodies: list[bytes],
        *,
        labelled: bool,
        lines: list[int] | None = None,
        config: dict[str, Any] | None = None,
    ) -> tuple[Any, FloatArray | None, list[int], list[BadRequest | None]]:
        """Several request bodies (each ending with a newline) in one parse: ``(X, y, counts, errors)``, the
        rows of body i following those of the bodies before it (``counts[i]`` rows), or ``errors[i]`` (a
        :class:`BadRequest` naming the body's line) and no rows. One call when the bodies parse together and
        every line is an example (``lines``: their line counts); else each body alone. ``config``: as in
        :meth:`parse` (every body is read with the same settings).

        >>> import tempfile
        >>> m = ServedModel(tempfile.mkdtemp(), learner="ftrl", n_features=10, snapshot_every=0)
        >>> X, y, counts, errors = m.parse_many([b"1:1\\n2:1\\n", b"3:x\\n", b"4:1\\n"], labelled=False)
        >>> X.shape, counts, [str(e) if e else None for e in errors]
        ((3, 10), [2, 0, 1], [None, "line 1: malformed feature '3:x': ...", None])
        >>> m.close()
        """
        lines = [b.count(b"\n") for b in bodies] if lines is None else lines
        config = self.config if config is None else config
        try:
            X, y, _ = self.parse(
                bodies[0] if len(bodies) == 1 else b"".join(bodies), labelled=labelled, _limit=False, config=config
            )
        except BadRequest as exc:
            if len(bodies) == 1:
                return None, None, [0], [exc]
        else:
            if len(bodies) == 1 or X.shape[0] == sum(lines):  # no blank or comment lines: split by line counts
                return X, y, (lines if len(bodies) > 1 else [X.shape[0]]), [None] * len(bodies)
        parts: list[tuple[Any, FloatArray]] = []
        counts: list[int] = []
        errors: list[BadRequest | None] = []
        for body in bodies:
            try:
                parts.append(self.parse(body, labelled=labelled, _limit=False, config=config)[:2])
            except BadRequest as exc:
                counts.append(0)
                errors.append(exc)
                continue
            counts.append(parts[-1][0].shape[0])
            errors.append(None)
        if not parts:
            return None, None, counts, errors
        if len(parts) == 1:
            return parts[0][0], parts[0][1], counts, errors
        return sp.vstack([p[0] for p in parts], format="csr"), np.concatenate([p[1] for p in parts]), counts, errors

    @staticmethod
    def rows_to_lines(rows: list[Any], *, labelled: bool) -> bytes:
        """JSON rows -> LIBSVM text: each row a line (string) or ``{"label": y, "features": {id: value}}``."""
        if not isinstance(rows, list):
            raise BadRequest('"rows" must be a list.')
        out = []
        for i, row in enumerate(rows):
            if isinstance(row, str):
                if "\n" in row.strip("\n"):
                    raise BadRequest(f"row {i + 1}: one example per row.")
                if not row.strip() or row.lstrip().startswith("#"):  # the reader skips it: the answer would
                    raise BadRequest(  # have fewer entries than rows, each one row late after it
                        f"row {i + 1}: {row[:40]!r} holds no example (a blank or comment line); one example per row."
                    )
                out.append(row.strip("\n"))
                continue
            if not isinstance(row, dict) or not isinstance(row.get("features", {}), dict):
                raise BadRequest(
                    f'row {i + 1}: expected a LIBSVM line or {{"label": y, "features": '
                    f'{{"id": value}}}}; got {type(row).__name__}.'
                )
            unknown = sorted(set(row) - {"label", "features"})
            if unknown:  # a misspelt "features" would otherwise be learned as an example without features
                raise BadRequest(
                    f'row {i + 1}: unknown key {unknown[0]!r}; a row has "label" and "features" '
                    f'({{"label": y, "features": {{"id": value}}}}).'
                )
            label = row.get("label") if labelled else None  # predictions ignore labels, as in text
            if labelled and (isinstance(label, bool) or not isinstance(label, (int, float))):
                raise BadRequest(f'row {i + 1}: a number "label" is required to learn; got {label!r}.')
            feats = []
            for k, v in row.get("features", {}).items():
                if not (k.isascii() and k.isdigit()) or isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise BadRequest(
                        f"row {i + 1}: feature {k!r}: {v!r}; expected a non-negative integer id and a number."
                    )
                try:
                    feats.append((int(k), float(v)))
                except OverflowError:  # a JSON integer beyond the float range
                    raise BadRequest(
                        f"row {i + 1}: feature {k!r}: a number beyond the float range; values must be finite."
                    ) from None
            feats.sort()  # the ids of a JSON object come in any order; a LIBSVM line has them increasing
            try:
                y = float(label or 0.0)
            except OverflowError:
                raise BadRequest(f'row {i + 1}: "label" is a number beyond the float range.') from None
            out.append(f"{y!r} " + " ".join(f"{k}:{v!r}" for k, v in feats))
        return ("\n".join(out) + "\n").encode()

    # ---------------------------------------------------------------------------------------- reading
    def predict(self, X: Any, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """``{"scores", "labels"[, "proba"]}`` for X under the current model (consistent: no update runs).
        ``config``: the settings X was parsed with (:meth:`parse`); :class:`ModelReplaced` when the model
        has been replaced since by one with another index base or width."""
        with self.lock:
            return self._predict_locked(X, config)

    def try_predict(self, X: Any, config: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """``predict`` if no update is running now, else None (the caller then waits in a worker thread)."""
        if not self.lock.acquire(blocking=False):
            return None
        try:
            return self._predict_locked(X, config)
        finally:
            self.lock.release()

    def _predict_locked(self, X, config=None):
        if config is not None and config is not self.config and any(config[k] != self.config[k] for k in _PARSED_WITH):
            raise ModelReplaced
        model = self.model
        if not hasattr(model, "n_features_in_"):  # nothing learned yet: every score is 0, in the usual shapes
            n, classes = X.shape[0], self.config["classes"]
            k = len(classes) if classes and len(classes) > 2 else None  # one score per class
            out = {"scores": [[0.0] * k for _ in range(n)] if k else [0.0] * n, "labels": self._untrained_labels(n)}
            if hasattr(model, "predict_proba"):
                out["proba"] = [[1.0 / k] * k for _ in range(n)] if k else [0.5] * n
            return out
        try:  # never an answer with NaN (null) scores: the learners refuse to give one
            scores = model._decision_function(X)
            finite = np.isfinite(scores) if scores.ndim == 1 else np.isfinite(scores).all(axis=1)
            i = int(np.flatnonzero(~finite)[0]) if not finite.all() else None
        except ValueError as exc:
            i = getattr(exc, "row", None)
            if i is None:
                raise BadRequest(str(exc)) from None
        if i is not None:
            bad = non_finite_state(model)
            if bad is not None:
                raise BadRequest(
                    f"the model cannot predict: its {bad} holds NaN or infinity (the score of example {i + 1} is "
                    "not finite). Upload a finite model (POST /model).",
                    500,
                )
            raise BadRequest(
                f"example {i + 1}: its score is not finite: its feature values are too large for the model's weights.",
                422,
            )
        proba = model.predict_proba(X) if hasattr(model, "predict_proba") else None
        out = {"scores": scores.tolist(), "labels": np.asarray(model.scores_to_labels(scores)).tolist()}
        if proba is not None:
            out["proba"] = (proba[:, 1] if proba.shape[1] == 2 else proba).tolist()
        return out

    def _untrained_labels(self, n):
        classes = self.config["classes"]
        return [classes[-1] if len(classes) == 2 else classes[0]] * n if classes else [0.0] * n

    def model_bytes(self) -> tuple[bytes, int]:
        """The current model as a model file (bytes), consistent with the examples learned so far."""
        with self.lock:
            model = copy.deepcopy(self.model)
            n = self.stats["n_learned"]
            config = dict(self.config)
        if not isinstance(getattr(model, "input_spec_", None), dict):
            # the file reads data as this server reads lines (index base, width): without it, `streamlearn
            # predict` and `train -i` guess the base from the data file
            classes = config.get("classes")
            convention = (
                "regression"
                if not classes
                else "pm1"
                if set(classes) <= {-1.0, 1.0}
                else "01"
                if set(classes) <= {0.0, 1.0}
                else "multiclass"
            )
            model.input_spec_ = InputSpec(
                format="libsvm",
                zero_based=bool(config["zero_based"]),
                n_features=int(config["n_features"]),
                label_convention=convention,
            ).to_dict()
        buf = io.BytesIO()  # in memory: a copy of the model can be taken when the disk is full or read-only
        save(model, buf)
        return buf.getvalue(), n

    def health(self) -> dict[str, Any]:
        s = self.stats
        return {
            "status": "ok" if self.failed is None else "failed",
            "n_learned": s["n_learned"],
            "learner": self.config["learner"],
            "n_features": self.config["n_features"],
            "queued": len(self._queue),
            "log_write_errors": self.log_write_errors,
            **({"error": self.failed} if self.failed else {}),
        }

    def online_metrics(self) -> dict[str, Any]:
        s = self.stats
        n = s["n_learned"]
        clf = self.config["classes"] is not None
        out = {"n_learned": n, "average_loss": s["loss_sum"] / n if n else float("nan")}
        wn = len(self._win_loss)
        out["window"] = wn
        out["window_average_loss"] = float(np.sum(self._win_loss)) / wn if wn else float("nan")
        if clf:
            out["error_rate"] = s["err_sum"] / n if n else float("nan")
            out["window_error_rate"] = float(np.sum(self._win_err)) / wn if wn else float("nan")
        else:
            out["rmse"] = float(np.sqrt(s["err_sum"] / n)) if n else float("nan")
            out["window_rmse"] = float(np.sqrt(np.sum(self._win_err) / wn)) if wn else float("nan")
        return out

    # ---------------------------------------------------------------------------------------- writing
    def learn(self, X: Any, y: FloatArray, payload: bytes) -> Future:
        """Queue a labelled batch; the returned Future gives ``{"learned", "scores", "first", "n_learned"}``
        once the batch is in the log (durable) and learned."""
        fut: Future = Future()
        self._submit(["learn", X, y, payload, fut, X.shape[0]])
        return fut

    def learn_text(self, body: bytes, future: Future | None = None) -> Future:
        """Queue labelled LIBSVM lines (bytes) to be parsed by the writer, together with the other requests
        queued at the time (one parse, one log record, one fsync and one kernel call for all of them).

        ``future`` (a ``concurrent.futures.Future`` by default, or an ``asyncio`` future of a running loop)
        receives the result of :meth:`learn`, or :class:`BadRequest` naming the line of a malformed body.

        >>> import tempfile
        >>> m = ServedModel(tempfile.mkdtemp(), learner="ftrl", n_features=10, snapshot_every=0)
        >>> m.learn_text(b"1 1:1 2:0.5\\n-1 3:1\\n").result()["learned"]
        2
        >>> print(m.learn_text(b"1 1:1\\n-1 oops\\n").exception())
        line 2: malformed feature 'oops': ...
        >>> m.close()
        """
        body, n_lines = self._checked(body)
        fut = Future() if future is None else future
        self._submit(["text", None, None, body, fut, n_lines])
        return fut

    def swap(self, model_path: str) -> Future:
        """Queue replacing the model by the one in ``model_path`` (already validated by the safe loader)."""
        fut: Future = Future()
        self._submit(("swap", model_path, fut))
        return fut

    def snapshot(self) -> Future:
        fut: Future = Future()
        self._submit(("snapshot", fut))
        return fut

    def _submit(self, item):
        if self.failed is not None:
            raise BadRequest(f"the learner stopped after an error: {self.failed}", 503)
        with self._cv:
            if self._closing:
                raise BadRequest("the server is shutting down.", 503)
            self._queue.append(item)
            self._cv.notify()

    @property
    def closing(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closing

    def close(self, snapshot: bool = True) -> None:
        """Stop the writer after the queued work, take a last snapshot, close the log."""
        with self._cv:
            self._closing = True
            self._final_snapshot = snapshot
            self._cv.notify()
        self._worker.join()
        self._drain()
        with self._sync_cv:
            self._sync_stop = True
            self._sync_cv.notify_all()
        for t in self._syncers:
            t.join()
        self.wal.close()
        if self._state_key is not None:
            _unlock_state_dir(self._state_key)
            self._state_key = None

    def _run(self):
        while True:
            with self._cv:
                while not self._queue and not self._closing:
                    timeout = None
                    if self.snapshot_every > 0:
                        timeout = max(0.0, self._last_snapshot + self.snapshot_every - time.monotonic())
                        timeout = min(timeout, 86400.0)  # a timed wait has a range; the loop waits again
                    if not self._cv.wait(timeout) and timeout is not None:
                        break
                if not self._queue and self._closing:
                    if self._final_snapshot and self.failed is None:
                        self._periodic_snapshot(force=True)
                    return
                batch = []
                lines = size = 0
                while (
                    self._queue
                    and self._queue[0][0] in ("learn", "text")
                    and (
                        not batch or (lines < self.max_batch_lines and size + len(self._queue[0][3]) < _wal.MAX_RECORD)
                    )
                ):  # a group is one log record: its bytes stay below what a record holds
                    item = self._queue.popleft()
                    batch.append(item)
                    lines += item[5]
                    size += len(item[3])
                other = self._queue.popleft() if not batch and self._queue else None
            try:
                if batch:
                    self._commit(batch)
                elif other is not None:
                    self._other(other)
                self._periodic_snapshot()
            except Exception as exc:  # an unforeseen error must not end the writer (every /learn would wait for
                # ever): as a learner failure, learning stops, the requests of the group get 503, reads go on
                self._fail([item for item in batch if not item[4].done()], exc)

    def _periodic_snapshot(self, force=False):
        """A timed (or the final) snapshot; one that fails (a full disk) is logged and tried again at the next
        interval: the log still holds every example since the last snapshot, and learning goes on."""
        try:
            self._maybe_snapshot(force=force)
        except Exception as exc:
            self._last_snapshot = time.monotonic()
            self._log(
                f"snapshot failed ({type(exc).__name__}: {exc}); the log keeps every example since the last "
                "snapshot, the next attempt is at the next interval"
            )

    def _commit(self, batch):
        """Group commit: one log record and one kernel call for every queued request; their answers wait for
        the fsync that covers the record (``_sync_loop``), while the next group is already learned."""
        if self.failed is not None:
            self._deliver([(item[4], None, self._stopped()) for item in batch])
            return
        if len(batch[0][3]) >= _wal.MAX_RECORD:  # alone in its group (see _run): more than a log record holds
            big = len(batch[0][3])
            refused = BadRequest(f"a request of {big} bytes to learn; one holds less than {_wal.MAX_RECORD}.", 413)
            self._deliver([(batch[0][4], None, refused)])
            return
        batch, X, y, payload = self._prepare(batch)
        if not batch:
            return
        first = self.stats["n_learned"]
        backup = None
        if self._log_blocked:  # the last log write failed: a failure now puts this copy back (no log replay)
            with contextlib.suppress(Exception):
                backup = copy.deepcopy(self.model)
        try:
            # learned first, logged once it is known to keep the model finite: the log holds the updates made
            scores = self._learn(X, y, roll_back=True, logged=(first, payload), backup=backup)
        except _NotLogged as exc:  # the log and the model are as before the batch: learning goes on
            self._deliver([(item[4], None, BadRequest(str(exc), exc.status)) for item in batch])
            return
        except (FloatingPointError, ValueError) as exc:  # refused, the model as before it (see _learn)
            if len(batch) > 1:  # one request of the group, or their sum: each is learned (or refused) alone
                for item in batch:
                    self._commit([item])
                return
            self._deliver([(batch[0][4], None, _refusal(exc))])
            if self.stats["n_batches"] > self._snap_batches:  # the next refusal replays the log from here
                self._periodic_snapshot(force=True)
            return
        except BaseException as exc:  # the learner or the log failed: stop learning, keep serving reads
            self._fail(batch, exc)
            return
        self._account(X, y, scores)
        pos = 0
        n_after = self.stats["n_learned"]
        done = []
        for item in batch:
            k = item[5]
            result = {
                "learned": k,
                "scores": scores[pos : pos + k].tolist(),
                "first": first + pos,
                "n_learned": n_after,
            }
            done.append((item[4], result, None))
            pos += k
        if not self.fsync:
            self._deliver(done)
            return
        with self._sync_cv:
            self._written += 1
            self._pending.append((self._written, done))
            # wakes one idle log-sync thread (a busy one takes the group when its fsync returns); no thread
            # waits in _drain now: only this writer thread calls it, or close() once this thread has ended
            self._sync_cv.notify()

    def _fail(self, batch, exc):
        self.failed = f"{type(exc).__name__}: {exc}"
        self._log(f"learning stopped: {self.failed}")
        self._deliver([(item[4], None, self._stopped()) for item in batch])

    def _stopped(self):
        return BadRequest(f"the learner stopped after an error: {self.failed}", 503)

    def _prepare(self, batch):
        """``(items, X, y, payload)``: the group's requests that can be learned, parsed into one CSR matrix
        (see :meth:`parse_many`); the malformed ones get their error (naming their line)."""
        if all(item[0] == "text" for item in batch):
            bodies = [item[3] for item in batch]
            X, y, counts, errors = self.parse_many(bodies, labelled=True, lines=[item[5] for item in batch])
            good = []
            for item, k, exc in zip(batch, counts, errors):
                if exc is not None:
                    self._deliver([(item[4], None, exc)])
                    continue
                item[5] = k
                good.append(item)
            if len(good) < len(batch):
                bodies = [item[3] for item in good]
            return good, X, y, (bodies[0] if len(bodies) == 1 else b"".join(bodies))
        good = []
        for item in batch:
            if item[0] == "text":
                try:
                    item[1], item[2], _ = self.parse(item[3], labelled=True, _limit=False)
                except BadRequest as exc:
                    self._deliver([(item[4], None, exc)])
                    continue
                item[5] = item[1].shape[0]
            elif not self._still_valid(item):
                continue
            good.append(item)
        if len(good) <= 1:
            return (good, good[0][1], good[0][2], good[0][3]) if good else ([], None, None, None)
        X = sp.vstack([item[1] for item in good], format="csr")
        y = np.concatenate([item[2] for item in good])
        return good, X, y, b"".join(item[3] for item in good)

    def _sync_loop(self, slot):
        """The log's group commit (``_SYNC_THREADS`` threads): an fsync covers every group written before it
        started; when it returns, those groups are answered, in log order. A second fsync can start while one
        runs, for the groups written meanwhile (overlapping fsyncs finish sooner than back-to-back ones).

        Each thread fsyncs through a descriptor of its own (``slot``, see ``WriteAheadLog``): a write-back
        error is then reported to both, not to the first of two overlapping fsyncs only. An fsync that fails
        stops learning (``failed``, set under the lock before its groups are answered 503); an fsync that
        returns success after that answers its groups 503 as well."""
        while True:
            with self._sync_cv:
                while self._written == self._covered and not self._sync_stop:
                    self._sync_cv.wait()
                if self._written == self._covered:
                    return
                target = self._covered = self._written
                self._syncing += 1
                wal = self.wal
            error = None
            try:
                if self.failed is not None:  # after a failed fsync nothing is acknowledged (pages may be lost)
                    raise OSError(self.failed)
                wal.sync(slot)
            except BaseException as exc:
                error = exc
            with self._sync_cv:
                self._syncing -= 1
                if error is not None and self.failed is None:
                    self.failed = f"{type(error).__name__}: {error}"
                    self._log(f"learning stopped: {self.failed}")
                self._synced = max(self._synced, target)
                k = 0
                while k < len(self._pending) and self._pending[k][0] <= self._synced:
                    k += 1
                done = [d for _, group in self._pending[:k] for d in group]
                del self._pending[:k]
                if self.failed is not None:
                    done = [(fut, None, self._stopped()) for fut, _, _ in done]
                self._deliver(done)  # under the lock: groups are answered in log order
                if self._draining:  # the other sync thread waits for new groups only (woken by _commit)
                    self._sync_cv.notify_all()

    def _drain(self):
        """Wait until every learned batch is fsynced and answered (before the log file changes)."""
        with self._sync_cv:
            self._draining += 1
            try:
                while self._pending or self._syncing:
                    self._sync_cv.wait()
            finally:
                self._draining -= 1

    @staticmethod
    def _deliver(done):
        """Answer ``[(future, result, exception)]``: concurrent futures directly, asyncio futures with one
        wake-up of their event loop for the whole group."""
        loops = {}
        for fut, result, exc in done:
            if isinstance(fut, Future):
                with contextlib.suppress(InvalidStateError):  # a future its caller cancelled: nobody waits
                    if exc is not None:
                        fut.set_exception(exc)
                    else:
                        fut.set_result(result)
            else:
                loops.setdefault(fut.get_loop(), []).append((fut, result, exc))
        for loop, items in loops.items():
            with contextlib.suppress(RuntimeError):  # the loop closed (shutting down): nobody waits
                loop.call_soon_threadsafe(_resolve, items)

    def _still_valid(self, item):
        """A request parsed before a model swap may not fit the new model: refuse it (409), learn the rest."""
        X, y = item[1], item[2]
        classes = self.config["classes"]
        if X.shape[1] == self.config["n_features"] and (classes is None or np.isin(y, classes).all()):
            return True
        self._deliver(
            [
                (
                    item[4],
                    None,
                    BadRequest(
                        "the model was replaced while this request waited, and the request "
                        "does not fit the new model; send it again.",
                        409,
                    ),
                )
            ]
        )
        return False

    def _learn(self, X, y, roll_back=False, logged=None, backup=None):
        """The model's scores of the batch before learning it. An update that leaves the model not finite raises
        the learner's FloatingPointError (its own when a score is not finite, see ``_raise_diverged``); with
        ``roll_back`` the model is first put back as before the batch (``backup``, a copy of it, or the snapshot
        and the log replayed), so no reader ever sees it.

        ``logged`` (``(seq, payload)``): the batch's log record, written before the model lock is released, so
        that a reader never sees an update that is not in the log (see :meth:`_unlogged` when the write
        fails)."""
        with self.lock:
            model = self.model
            started = hasattr(model, "n_features_in_")
            try:
                scores = model.partial_fit_scores(X, y, classes=self.config["classes"])
                bad = non_finite_state(model, np.unique(X.indices) if started and row_local(model) else None)
                if bad is not None:
                    _raise_state_diverged(model, bad)
            except (FloatingPointError, ValueError):  # a divergence, or a value the learner refuses
                if roll_back:
                    self.model = backup if backup is not None else self._rebuilt_model()
                raise
            if logged is not None:
                try:
                    self.wal.write(*logged)
                except BaseException as exc:
                    self._unlogged(exc, backup)
                if self._log_blocked:
                    self._log_blocked = False
                    self._log(f"the write-ahead log is written again ({self.log_write_errors} failed writes so far)")
        return scores

    def _unlogged(self, exc, backup):
        """The log record of the batch just learned could not be written (``exc``; the model lock is held):
        the model is put back as before the batch (``backup``, or the snapshot and the log replayed). When the
        log was left as before the write (``WriteAheadLog.write`` cut off what it wrote) and that cut is on
        disk, :class:`_NotLogged` answers the batch and learning goes on; otherwise ``exc`` (or the error of the
        fsync) is raised and learning stops, since the log and the model could then disagree."""
        self.log_write_errors += 1
        try:
            self.model = backup if backup is not None else self._rebuilt_model()
        except BaseException as again:  # reads then answer with the update: it is lost on a restart
            self._log(f"the update that was not logged stays in the model: {type(again).__name__}: {again}")
            raise exc from None
        if not isinstance(exc, OSError) or isinstance(exc, _wal.TornRecordError):
            raise exc
        with self._sync_cv:  # no log-sync thread answers a group while the cut is being fsynced
            try:
                self.wal.sync()  # the cut is on disk before a record is written after it
            except BaseException as again:  # pages may be lost: nothing more is acknowledged (see _sync_loop)
                self.failed = f"{type(again).__name__}: {again}"
                raise
        room = exc.errno in _NO_ROOM
        refused = _NotLogged(
            f"the write-ahead log could not be written ({exc.strerror or exc}): the update was not learned; "
            + ("retry when there is room." if room else "retry later."),
            507 if room else 503,
        )
        if not self._log_blocked:  # once until a write succeeds again (a full disk fails every request)
            self._log(f"{refused} Requests are refused with {refused.status} until the log can be written again.")
        self._log_blocked = True  # until a write succeeds, a batch is learned on a copy of the model
        raise refused from None

    def _account(self, X, y, scores):
        """Add a learned batch to the online statistics."""
        model = self.model
        name, param = loss_spec(model)
        with np.errstate(over="ignore"):  # a squared error beyond the float range: an infinite loss, not a warning
            if self.config["classes"] is not None:
                targets = signed_targets(model.classes_, y)
                errs = (np.asarray(model.scores_to_labels(scores)) != y).astype(np.float64)
            else:
                targets = y.astype(np.float64)
                errs = (scores - targets) ** 2
            losses = np.asarray(example_losses(name, param, targets, scores), dtype=np.float64)
        s = self.stats
        s["n_learned"] += X.shape[0]
        s["n_batches"] += 1
        s["loss_sum"] += float(np.sum(losses))
        s["err_sum"] += float(np.sum(errs))
        self._win_loss.extend(losses[-self.window :].tolist())
        self._win_err.extend(errs[-self.window :].tolist())

    def _other(self, item):
        kind, fut = item[0], item[-1]
        result = exc = None
        try:
            if kind == "snapshot":
                result = self._maybe_snapshot(force=True)
            elif kind == "swap":
                self._swap(item[1])
                result = self.health()
        except BaseException as error:
            exc = error
        self._deliver([(fut, result, exc)])

    def _swap(self, path):
        model = load(path)
        name = learner_name_of(model)
        self._check_learnable(model, name, "the uploaded model")
        config = dict(self.config, learner=name)
        spec = getattr(model, "input_spec_", None)
        if isinstance(spec, dict):
            if spec.get("format", "libsvm") != "libsvm":
                raise BadRequest(f"the uploaded model reads {spec['format']} input; this server reads LIBSVM lines.")
            if spec.get("zero_based") is not None:
                config["zero_based"] = bool(spec["zero_based"])
        if hasattr(model, "n_features_in_"):
            config["n_features"] = int(model.n_features_in_)
        config["classes"] = (
            model.classes_.tolist()
            if hasattr(model, "classes_")
            else (
                config["classes"]
                if is_classifier(model) and config["classes"]
                else ([-1.0, 1.0] if is_classifier(model) else None)
            )
        )
        with self.lock:
            previous = self.model, self.config
            self.model = model
            self.config = config
        try:
            self._snapshot()  # the log so far belongs to the old model: a snapshot starts the new one's log
        except BaseException:
            with self.lock:  # not durable: keep the model the log belongs to
                self.model, self.config = previous
            raise

    def _maybe_snapshot(self, force=False):
        due = self.snapshot_every > 0 and time.monotonic() - self._last_snapshot >= self.snapshot_every
        if force or (due and self.stats["n_batches"] > self._snap_batches):
            return self._snapshot()
        if due:
            self._last_snapshot = time.monotonic()
        return None

    def _snapshot(self):
        """Atomic snapshot g at n examples: state-g.json, then model-g.slm (each temp + fsync + rename, then
        fsync of the folder), then a fresh wal-n.log; older files are removed last."""
        self._drain()  # the batches in the current log are fsynced and answered before it is replaced
        n = self.stats["n_learned"]
        g = getattr(self, "_gen", 0) + 1
        state = {
            "config": self.config,
            "stats": self.stats,
            "window": {"loss": list(self._win_loss), "err": list(self._win_err)},
        }
        files = [os.path.join(self.dir, f"state-{g}.json"), os.path.join(self.dir, f"model-{g}.slm")]
        try:
            _atomic_write(files[0], json.dumps(state).encode())
            fd, tmp = tempfile.mkstemp(prefix=".tmp-model-", suffix=".slm", dir=self.dir)
            os.close(fd)
            try:
                save(self.model, tmp)
                fsync_path(tmp)
                os.replace(tmp, files[1])
            except BaseException:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise
            fsync_path(self.dir)
            old = getattr(self, "wal", None)
            if old is None or os.path.basename(old.path) != f"wal-{n}.log":
                self.wal = WriteAheadLog(
                    os.path.join(self.dir, f"wal-{n}.log"), fsync=self.fsync, sync_slots=_SYNC_THREADS
                )
                if old is not None:
                    old.close()
        except BaseException:
            # an unfinished snapshot is removed: the previous one and its log stay the state (a model upload
            # whose snapshot failed is undone by the caller, and must not be found by a restart)
            for path in files:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            raise
        snaps, wals = self._files()
        self._gen, self._snap_n = g, n
        for k, kinds in snaps.items():
            if k != g:
                for kind in kinds:
                    os.unlink(os.path.join(self.dir, f"{kind}-{k}.{'slm' if kind == 'model' else 'json'}"))
        for m in wals:
            if m != n:
                os.unlink(os.path.join(self.dir, f"wal-{m}.log"))
        fsync_path(self.dir)
        self._last_snapshot = time.monotonic()
        self._snap_batches = self.stats["n_batches"]
        return n
