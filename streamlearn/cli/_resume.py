"""Continuing from a saved model (``train -i``, ``evaluate -i``) and writing checkpoints (``--save-every``,
``--save-per-pass``): argument checks and the model's input contract. No learning code lives here.

A model carries its input contract in ``input_spec_`` (a dict, see :mod:`streamlearn.datasets._spec`) when
the reader that trained it recorded one; otherwise it is read as LIBSVM with the model's width.
"""

import os
import stat

from ..learners import LEARNERS, learner_name_of, parse_param_value
from ..persist import load
from ._common import CLIError, check_input_file, refuse_non_finite

#: Registered learners that cannot continue from a saved model, with the reason (``train -i`` refuses them).
NOT_RESUMABLE = {
    name: "a batch learner: each fit solves the whole problem again, there is no online state to continue from"
    for name, spec in LEARNERS.items()
    if spec.batch
}

#: Registered learners whose result depends on where the stream is cut into chunks, with the reason. Their
#: resumed run equals the single run when the resume point is also a chunk boundary of that run.
CHUNK_DEPENDENT = {
    **{
        f"{sk}-son": "the sparse (lazy) kernel makes its sketch dense at the end of every call, which rounds "
        "differently from not doing so"
        for sk in ("fd", "pfd", "rp", "oja", "rfd", "rfd0")
    },
    "perceptron": "radius_ (R) is the largest row norm of the first chunk",
    "perceptron-nobias": "radius_ (R) is the largest row norm of the first chunk",
}


def load_for_resume(path, learner=None, params=None):
    """``(model, name)`` from model file ``path`` for ``train -i``: the learner and its parameters come from
    the file; ``learner`` (``--learner``) must name the same learner, and each ``-p`` must equal the
    model's value."""
    check_input_file(path, "model file")
    model = load(path)
    refuse_non_finite(model, path)
    inner = getattr(model, "learner_", model)  # a StreamPipeline (--scale) continues whole, scaler included
    name = learner_name_of(inner)
    if name is None:
        raise CLIError(
            f"{path}: holds a {type(model).__name__}, which no registered learner trains; "
            "'streamlearn train -i' continues learners listed by 'streamlearn learners'."
        )
    if learner is not None and learner != name:
        spec = LEARNERS.get(learner)
        same_class = (
            spec is not None
            and spec.cls() is type(inner)
            and all(inner.get_params(deep=False).get(k) == v for k, v in spec.fixed.items())
        )
        if not same_class:
            raise CLIError(
                f"--learner {learner} does not match the model in {path} (learner {name}, {type(inner).__name__}); "
                "omit --learner with -i."
            )
        name = learner
    if name in NOT_RESUMABLE:
        raise CLIError(f"cannot continue {name} from {path}: {NOT_RESUMABLE[name]}.")
    if not hasattr(model, "partial_fit"):
        raise CLIError(f"cannot continue {name} from {path}: it has no partial_fit.")
    current = inner.get_params(deep=False)
    for key, text in (params or {}).items():
        if key not in current:
            raise CLIError(f"-p {key}={text}: {name} has no parameter {key!r}.")
        value = parse_param_value(text, current[key]) if isinstance(text, str) else text
        if value != current[key]:
            raise CLIError(
                f"-p {key}={text} conflicts with the model in {path}, trained with {key}="
                f"{current[key]!r}; a continued model keeps its parameters (drop -p {key})."
            )
    if not hasattr(model, "n_features_in_"):
        raise CLIError(f"{path}: the model was never trained (no n_features_in_); train it without -i.")
    return model, name


def _scalers_of(model):
    """``(scale, scale_target)`` of a loaded model, as ``--scale`` / ``--scale-target`` name them."""
    from ..preprocessing import StreamPipeline

    if not isinstance(model, StreamPipeline):
        return "none", "none"
    names = {"MaxAbsScaler": "maxabs", "StandardScaler": "standard", "TargetStandardScaler": "standard"}
    scaler = getattr(model, "scaler_", model.scaler)
    target = getattr(model, "target_scaler_", model.target_scaler)
    return (
        "none" if scaler is None else names.get(type(scaler).__name__, type(scaler).__name__),
        "none" if target is None else names.get(type(target).__name__, type(target).__name__),
    )


def _input_conflicts(args, spec):
    """``(option as typed, what the model does instead)`` for the first input option given on the command line
    that differs from the model's input specification ``spec``, or None. What the model does is None when the
    option does not apply to its format."""
    fmt = spec.get("format", "libsvm")
    hashed, table, vw = fmt != "libsvm", fmt in ("csv", "parquet"), fmt == "vw"
    options = spec.get("options") or {}
    checks = []  # (given?, option as typed, applies to the format?, equal to the model's?, the model's value)
    zb = getattr(args, "zero_based", "auto")
    if spec.get("zero_based") is not None:
        own = "zero-based indices" if spec["zero_based"] else "one-based indices"
        checks.append((zb != "auto", f"--zero-based {zb}", not hashed, (zb == "true") == spec["zero_based"], own))
    bits = getattr(args, "bits", None)
    checks.append((bits is not None, f"-b {bits}", hashed, bits == spec.get("bits"), f"-b {spec.get('bits')}"))
    crosses = list(getattr(args, "quadratic", [])) + list(getattr(args, "cubic", []))
    own = " ".join(spec.get("interactions", [])) or "none"
    for t in crosses:
        shown = f"-q {t}" if len(t) == 2 else f"--cubic {t}"
        checks.append((True, shown, hashed, t in spec.get("interactions", []), f"interactions {own}"))

    def listed(name, shown, own, applies):  # a repeatable option: the same values in any order
        given = list(getattr(args, name, []))
        typed = " ".join(f"{shown} {v}" for v in given)
        described = " ".join(f"{shown} {v}" for v in own) or f"no {shown}"
        checks.append((bool(given), typed, applies, sorted(given) == sorted(own), described))

    listed("ignore", "--ignore", spec.get("ignore", []), hashed)
    listed("keep", "--keep", spec.get("keep", []), hashed)
    labels = getattr(args, "labels", "auto")
    checks.append(
        (
            labels != "auto",
            f"--labels {labels}",
            vw,
            labels == spec.get("label_convention"),
            f"--labels {spec.get('label_convention')}",
        )
    )
    constant = bool(options.get("constant"))
    checks.append((getattr(args, "constant", False), "--constant", vw, constant, "no --constant"))
    for name, shown, own in (
        ("label", "--label", spec.get("label_column")),
        ("weight", "--weight", spec.get("weight_column")),
    ):
        given = getattr(args, name, None)
        checks.append((given is not None, f"{shown} {given}", table, given == own, f"{shown} {own}"))
    from ._tabular import tab_escape

    for name in ("delimiter", "decimal"):
        given = tab_escape(getattr(args, name, None))
        own = options.get(name)
        shown = f"--{name} {given!r}"
        checks.append((given is not None, shown, table, given == own, f"--{name} {own!r}" if own else f"no --{name}"))
    listed("ignore_column", "--ignore-column", spec.get("ignore_columns", []), table)
    listed("categorical", "--categorical", options.get("categorical", []), table)
    namespaces = list(getattr(args, "namespace", []))
    if namespaces:
        from ._tabular import _namespaces

        model_map = options.get("namespaces", {})
        same = all(model_map.get(c) == ns for ns, cols in _namespaces(namespaces).items() for c in cols)
        groups = {}
        for c, ns in model_map.items():
            groups.setdefault(ns, []).append(c)
        own = " ".join(f"--namespace {ns}={','.join(cols)}" for ns, cols in groups.items()) or "no --namespace"
        checks.append((True, " ".join(f"--namespace {v}" for v in namespaces), table, same, own))
    for given, shown, applies, same, own in checks:
        if given and (not applies or not same):
            return shown, own if applies else None
    return None


def check_resume_options(args, model, path):
    """The options of ``train -i`` / ``evaluate -i`` that say how DATA is read or scaled (``--scale``,
    ``--scale-target``, ``--n-features``, ``--zero-based``, the hashing and table options) must be those of the
    model in ``path``, which keeps its own: a different value is an error naming both, never ignored."""
    scale, target = _scalers_of(model)
    for option, given, own in (
        ("--scale", getattr(args, "scale", None), scale),
        ("--scale-target", getattr(args, "scale_target", None), target),
    ):
        if given is not None and given != own:
            raise CLIError(
                f"{option} {given} conflicts with the model in {path}, trained with {option} {own}; a continued "
                f"model keeps its scalers (drop {option})."
            )
    if getattr(args, "n_features", None) is not None and args.n_features != int(model.n_features_in_):
        raise CLIError(
            f"--n-features {args.n_features} conflicts with the model in {path}, which "
            f"has {int(model.n_features_in_)} features; omit --n-features with -i."
        )
    spec = input_spec(model)
    conflict = _input_conflicts(args, spec)
    if conflict is not None:
        shown, own = conflict
        fmt = spec.get("format", "libsvm")
        if own is None:
            raise CLIError(f"{shown} does not apply to the model in {path}, which reads {fmt} input (input_spec_).")
        raise CLIError(
            f"{shown} conflicts with the model in {path}, which reads its {fmt} input with {own} (input_spec_); "
            "a continued model keeps its input format (drop the option)."
        )


def input_spec(model):
    """The model's input contract as a dict (``input_spec_``), or the LIBSVM fallback with its width."""
    spec = getattr(model, "input_spec_", None)
    if isinstance(spec, dict):
        return spec
    return {"format": "libsvm", "zero_based": None, "n_features": int(model.n_features_in_)}


def libsvm_reader_args(model, zero_based="auto", what="model"):
    """``(n_features, zero_based)`` to read LIBSVM data for ``model``; other formats are refused by name."""
    spec = input_spec(model)
    fmt = spec.get("format", "libsvm")
    if fmt != "libsvm":
        raise CLIError(f"the {what} reads {fmt} input (input_spec_), and this command reads LIBSVM files.")
    zb = spec.get("zero_based")
    return int(model.n_features_in_), zero_based if zb is None else bool(zb)


def model_streams(model, model_path, path, test, args, test_readers=None, data_readers=None):
    """``(data_stream, test_stream)``: openers of labelled chunks of ``path`` and ``test`` read under the
    saved model's input contract (hashed formats with its spec, LIBSVM with its width and base). DATA in
    another format than the model's is an error naming both. LIBSVM test and data readers are appended to
    ``test_readers`` and ``data_readers`` (their counts of feature values beyond the model's width)."""
    from ..datasets._pipes import pipe_name
    from ..datasets._stream import is_stream_path
    from ._data import TEST_LABELS, checked_labels, model_reader, nonempty
    from ._input import input_format, refuse_other_format

    spec = input_spec(model)
    model_format = spec.get("format", "libsvm")
    reads = f"the model in {model_path} reads {model_format} input (input_spec_)"
    given = getattr(args, "format", "auto") or "auto"
    if is_stream_path(path):
        refuse_other_format(path, model_format, reads, "DATA in the model's format")
    elif given == "auto":  # DATA's name or first lines may say another format
        refuse_other_format(path, model_format, reads, "DATA in the model's format (or --format)")
    else:
        named = input_format(args, path)  # --format: DATA is read as it says, whatever its name
        if named != model_format and {named, model_format} != {"csv", "parquet"}:
            raise CLIError(f"{reads}, and DATA is read as {named} (--format); give DATA in the model's format.")
    if test is not None:
        refuse_other_format(test, model_format, reads, "TEST in the model's format", role="the test file ")
    if model_format != "libsvm":  # hashed: read with the model's spec
        from ..datasets._readers import open_stream
        from ._input import table_spec

        hashed = table_spec(spec, model_path, True)
        return (
            lambda: nonempty(open_stream(path, hashed, args.chunk_size, require_label=True), path, "data file"),
            lambda: checked_labels(
                nonempty(open_stream(test, hashed, args.chunk_size, require_label=True), test, "test file"),
                model,
                pipe_name(test),
                hashed,
            ),
        )
    libsvm_reader_args(model)
    zero_based = getattr(args, "zero_based", "auto")  # for a model without a contract (one conflicting is refused)
    readers = [] if test_readers is None else test_readers
    data = [] if data_readers is None else data_readers
    why = TEST_LABELS  # evaluate -i scores DATA as a test file
    if getattr(args, "command", None) == "train":
        why = "a model continued with -i learns only the classes it was trained on."

    def test_stream():
        readers.append(model_reader(model, test, args.chunk_size, zero_based))
        return checked_labels(readers[-1], model)

    def data_stream():
        data.append(model_reader(model, path, args.chunk_size, zero_based))
        return checked_labels(data[-1], model, why=why)

    return data_stream, test_stream


def check_checkpoint_args(args):
    """``--save-every N`` / ``--save-per-pass`` need ``-o`` (the checkpoints are written there)."""
    every = getattr(args, "save_every", None)
    if every is not None and every < 1:
        raise CLIError(f"--save-every must be >= 1 examples; got {every}.")
    if every is None and not getattr(args, "save_per_pass", False):
        return
    if not args.output:
        raise CLIError("--save-every and --save-per-pass write checkpoints of the -o MODEL file; give -o.")
    if getattr(args, "save_per_pass", False):  # MODEL.passK beside MODEL: checked before any work, as MODEL is
        from ._data import output

        inputs = [*getattr(args, "data", []), getattr(args, "test", None), getattr(args, "initial_model", None)]
        for k in range(1, max(int(getattr(args, "passes", 1)), 1) + 1):
            target = f"{args.output}.pass{k}"
            if os.path.lexists(target):  # a new file goes in MODEL's folder, which -o checks
                output(target, inputs, "checkpoint file").discard()
    try:
        mode = os.stat(args.output).st_mode
    except OSError:
        return
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):  # MODEL.passK files in /dev; models one after the other in a pipe
        raise CLIError(
            "checkpoints (--save-every, --save-per-pass) are model files written at -o MODEL or beside it; "
            f"{args.output!r} is a device or named pipe: give a file path."
        )


class Checkpointer:
    """The ``chunk_hook`` of :func:`streamlearn.evaluation.train_test.train_test_run`: saves ``learner``
    atomically (temporary file + rename in the same folder, see :func:`streamlearn.persist.save`) to
    ``path`` after the chunk that reaches each multiple of ``every`` examples, and to ``path.passN`` after
    pass N when ``per_pass``.

    A checkpoint is written only if the model passes the final model's divergence check (finite state, and
    an average loss under the limit on the chunk just learnt); otherwise the run stops there with that error,
    which says what the checkpoint files hold: a diverged model never replaces a checkpoint, nor the file
    that was at ``path`` before the run."""

    def __init__(self, learner, path, every=None, per_pass=False, before_save=None, name=None, output=None):
        self.learner, self.path, self.every, self.per_pass = learner, path, every, per_pass
        self.output = output  # the run's Output at ``path``: told what the file holds after each checkpoint
        self.before_save = before_save  # e.g. attach the input contract, as the final save does
        self.name = name or type(learner).__name__
        self.n = 0
        self.last = None  # the chunk learnt last (the divergence check scores the model on it)
        self.written = {}  # checkpoint file -> examples learnt when it was written

    def _save(self, target):
        self._check()
        if self.before_save is not None:
            self.before_save()
        self.learner.save(target)
        self.written[target] = self.n
        if target == self.path and self.output is not None:
            self.output.holds = f"the checkpoint after {self.n:,} examples"

    def _check(self):
        from ..evaluation.train_test import score_stream
        from ._data import check_diverged

        loss = None
        if self.last is not None:
            try:
                loss = score_stream(self.learner, [self.last]).get("average_loss")
            except (ValueError, FloatingPointError):  # e.g. a chunk whose sample weights are all 0: no loss
                loss = None
        try:
            check_diverged(self.learner, loss, self.name)
        except FloatingPointError as exc:
            raise FloatingPointError(f"{exc} {self.kept()}") from None

    def kept(self):
        """What the checkpoint files hold after a diverged run, for its error message."""
        if not self.written:
            return f"No checkpoint was written; {self.path!r} was left as it was."
        return (
            "; ".join(f"{target!r} holds the checkpoint after {n:,} examples" for target, n in self.written.items())
            + ", learnt before the run diverged."
        )

    def __call__(self, pass_index, chunk):
        if chunk is None:  # end of a pass
            if self.per_pass:
                self._save(f"{self.path}.pass{pass_index + 1}")
            return
        self.last = chunk
        before = self.n
        self.n += chunk[0].shape[0]
        if self.every is not None and self.n // self.every > before // self.every:
            self._save(self.path)
