"""How the commands read LIBSVM data: the index base decided once, widths, streams, the model's contract.

* Training data (``train``, ``evaluate``, ``sketch``) is read one-based (LIBSVM's convention) unless
  ``--zero-based true``; a ``0:`` feature under one-based reading is an error naming file:line, never a
  silent shift. A regular file is validated by one pass first (errors before any work, and its width);
  ``-``, ``/dev/stdin`` or a FIFO is read once, its width growing as rows arrive (learners that can widen
  exactly) or fixed by ``--n-features``.
* Under a fixed width (``--n-features``, or a model's width), values of features at or beyond the width
  are ignored and counted (``ignored_features`` in the output).
* ``--test``, ``predict`` read files under the saved model's input contract (``input_spec_``): same base,
  same width; a test label outside the model's classes is an error naming it.
"""

import os

import numpy as np

from .._atomic import Output
from .._validation import label_text, labels_text
from ._common import CLIError, check_input_file

ZERO_HINT = "; pass --zero-based true if the indices of this data start at 0"
CONTRACT_HINT = " (the model's input contract, as its training data); the file must use the same index base"
SKETCH_HINT = " (the index base of the continued sketch, as its data); the file must use the same index base"


def check_data(path, what="data file"):
    """``-`` (standard input) or an existing file that is not a directory."""
    if path == "-":
        return path
    return check_input_file(path, what)


def check_test(test, data):
    """``--test TEST``: as :func:`check_data`; the stream DATA is read from cannot be TEST too (read once)."""
    from ..datasets._pipes import is_stream_path, pipe_name

    check_data(test, "test file")
    stdin = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
    same = (test in stdin and data in stdin) or os.path.realpath(test) == os.path.realpath(data)
    if same and is_stream_path(test) and is_stream_path(data):
        raise CLIError(
            f"DATA and TEST are the same stream ({pipe_name(data)}), which is read once; give TEST as a file."
        )
    return test


def nonempty(chunks, path, what):
    """The chunks of ``chunks``; when none holds a row, or every row has weight 0, an error naming ``path`` (a
    run never trains on, or scores, nothing)."""
    from ..datasets._pipes import pipe_name

    rows = 0
    weight = 0.0  # of weighted chunks (X, y, sample_weight)
    weighted = False
    for chunk in chunks:
        rows += chunk[0].shape[0]
        if len(chunk) > 2 and chunk[2] is not None:
            weighted = True
            weight += float(np.sum(chunk[2]))
        yield chunk
    if rows == 0:
        raise CLIError(f"{pipe_name(path)}: no examples: the {what} has no data lines.")
    if weighted and weight == 0:
        raise CLIError(f"{pipe_name(path)}: every example has importance weight 0; the {what} needs a positive weight.")


def zero_based(args):
    """``--zero-based``: ``true`` -> zero-based; ``false`` and ``auto`` (the default) -> one-based."""
    return getattr(args, "zero_based", "auto") == "true"


def check_width(args):
    from ..datasets._stream import MAX_WIDTH

    n = getattr(args, "n_features", None)
    if n is not None and not 1 <= n <= MAX_WIDTH:
        raise CLIError(f"--n-features must be between 1 and {MAX_WIDTH} (2**28); got {n}.")
    return n


def output(path, inputs, what, others=()):
    """Validate an output path before any work (None when the option was not given); ``others``: the outputs of
    the same command validated before it (or None), which it may not be (one would overwrite the other)."""
    if path is None:
        return None
    if path == "-":  # standard input as DATA; as an output it would silently be a file named '-'
        raise CLIError(
            f"{what} '-': this file is not written to standard output; give a file name (/dev/stdout writes "
            "it to standard output)."
        )
    out = Output(path, inputs=[p for p in inputs if p], what=what)
    for other in others:
        if other is not None and other.path == out.path and not out.through:  # devices take both
            out.discard()
            raise CLIError(
                f"{what} {out.name!r} is also the {other.what} {other.name!r}; give each output its own path."
            )
    return out


def plot_output(path, inputs, option="--plot", what="plot", others=()):
    """``--plot PATH``, validated before any work like :func:`output`; a name without an extension is a PNG, an
    extension that matplotlib cannot write is an error now rather than after the run. The returned output's
    ``suffix`` is what the figure is written as (the temporary file's extension, which matplotlib reads)."""
    if path is None or path == "-":
        return output(path, inputs, what, others)
    ext = os.path.splitext(path)[1].lower()
    if ext:
        from matplotlib.backend_bases import FigureCanvasBase

        formats = FigureCanvasBase.get_supported_filetypes()
        if ext[1:] not in formats:
            others = ", ".join(f".{f}" for f in sorted(formats) if f != "png")
            raise CLIError(
                f"{option} {path!r}: matplotlib cannot write {ext!r} figures; expected a name ending in .png "
                f"(or {others}; no extension: PNG)."
            )
    out = output(path, inputs, what, others)
    out.suffix = ext or ".png"
    return out


class TrainData:
    """The training data of one run: ``open()`` gives one pass of ``(X, y)`` chunks (a stream: one pass only).

    When ``learner`` is given and the width grows (a stream without ``--n-features``), the learner is widened
    before it sees a wider chunk, and narrower chunks are padded to its width.
    """

    def __init__(self, args, path, learner=None, zero_hint=ZERO_HINT):
        from .._widen import can_widen
        from ..datasets._stream import is_stream_path, scan_svmlight

        self.path = check_data(path)
        self.zero_based = zero_based(args)
        self.chunk_size = args.chunk_size
        if self.chunk_size < 1:
            raise CLIError(f"--chunk-size must be >= 1; got {self.chunk_size}.")
        self.learner = learner
        self.stream = is_stream_path(self.path)
        self.width = check_width(args)
        self.fixed = self.width is not None
        if self.width is None and not self.stream:
            self.width = scan_svmlight(self.path, self.zero_based, zero_hint=ZERO_HINT)["n_features"]
        if self.width is None and learner is not None and not can_widen(learner):
            raise CLIError(
                f"{getattr(args, 'learner', type(learner).__name__)} needs the feature-space width "
                f"before it starts and {_name(self.path)} is a stream read once: pass --n-features N "
                "(features beyond N are ignored and counted)."
            )
        self.readers = []
        self.labels = set()
        self.zero_hint = zero_hint  # what a '0:' feature in one-based data is told to do

    def open(self):
        from ..datasets._stream import SvmlightStream

        if self.stream and self.readers:
            raise CLIError(f"{_name(self.path)} is a stream and can be read only once: --passes > 1 needs a file.")
        reader = SvmlightStream(
            self.path,
            zero_based=self.zero_based,
            n_features=self.width,
            chunk_size=self.chunk_size,
            zero_hint=self.zero_hint,
        )
        self.readers.append(reader)
        return self._chunks(reader, first=len(self.readers) == 1)

    def _chunks(self, reader, first):
        from .._widen import widen

        learner = self.learner
        for X, y in reader:
            if first:
                self.labels.update(np.unique(y).tolist())
            if learner is not None and hasattr(learner, "n_features_in_"):
                d = int(learner.n_features_in_)
                if X.shape[1] > d:
                    widen(learner, X.shape[1])
                elif X.shape[1] < d:
                    X = _reshape(X, d)
            yield X, y

    @property
    def ignored(self):
        """Feature values beyond a fixed width in the first pass (None when the width was not fixed)."""
        return self.readers[0].ignored if self.readers and self.fixed else None


def _reshape(X, d):
    import scipy.sparse as sp

    out = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d), copy=False)
    out.has_sorted_indices = True
    return out


def _name(path):
    return "standard input" if path == "-" else repr(path)


def check_classes(data, learner, name):
    """A classifier trained on data holding a single label: refused, as the Python API refuses it."""
    from .._estimator import is_classifier

    if is_classifier(learner) and len(data.labels) < 2:
        labels = sorted(data.labels)
        raise CLIError(
            f"{name}: every training example has the label {labels[0]:g}; a classifier needs at "
            "least 2 classes in its training data."
        )


def check_diverged(learner, average_loss, name):
    """Non-finite weights or an astronomically large average loss: the run diverged (as the API says)."""
    if average_loss is not None and not (np.isfinite(average_loss) and abs(average_loss) < _LOSS_LIMIT):
        raise FloatingPointError(
            f"{name} diverged: average loss {average_loss:.3g} on the training data. Scale the features or lower "
            "the step size."
        )
    for attr in ("coef_", "intercept_"):
        value = getattr(learner, attr, None)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            raise FloatingPointError(
                f"{name} diverged: its weights are not finite. Scale the features or lower the step size."
            )
    from .._validation import non_finite_state

    bad = non_finite_state(learner)  # the rest of its state (an overflowed accumulator stops a feature learning)
    if bad is not None:
        raise FloatingPointError(
            f"{name} diverged: its {bad} is not finite. Scale the features or lower the step size."
        )


_LOSS_LIMIT = 1e100  # no converging run reports an average loss this large: its scores are beyond 1e50


def attach_spec(learner, zero_based_):
    """Store the input contract in the model (saved with it): base, width, label convention."""
    from .._estimator import is_classifier

    from ..datasets._spec import InputSpec

    if is_classifier(learner):
        classes = set(np.asarray(learner.classes_).tolist())
        conv = "pm1" if classes <= {-1, 1} else "01" if classes <= {0, 1} else "multiclass"
    else:
        conv = "regression"
    spec = InputSpec(
        format="libsvm", zero_based=bool(zero_based_), n_features=int(learner.n_features_in_), label_convention=conv
    )
    learner.input_spec_ = spec.to_dict()
    return learner


def model_reader(model, path, chunk_size, zero_based="auto", *, allow_empty=False):
    """A one-pass reader of ``path`` under ``model``'s input contract (width and base).

    A model saved without a contract (older files, the Python API) is read with its width and the base
    ``zero_based`` (``--zero-based`` true / false), or guessed from the file when it is ``"auto"`` (one-based
    for a stream). ``allow_empty``: a file without data lines gives no chunk (``predict``: no predictions)
    instead of an error.
    """
    from ..datasets._info import svmlight_info
    from ..datasets._stream import SvmlightStream, is_stream_path
    from ..datasets._svmlight import SvmlightFormatError

    check_data(path)
    spec = getattr(model, "input_spec_", None)
    if isinstance(spec, dict) and spec.get("zero_based") is not None:
        zb, hint = bool(spec["zero_based"]), CONTRACT_HINT
    elif zero_based in ("true", "false"):
        zb, hint = zero_based == "true", ""
    elif is_stream_path(path):
        zb, hint = False, ""
    else:
        try:
            zb, hint = svmlight_info(path)["zero_based"], ""
        except SvmlightFormatError as exc:
            if not (allow_empty and exc.reason.startswith("no data lines")):
                raise
            zb, hint = False, ""  # no rows: either base reads them
    return SvmlightStream(
        path,
        zero_based=zb,
        n_features=int(model.n_features_in_),
        chunk_size=chunk_size,
        zero_hint=hint,
        allow_empty=allow_empty,
    )


TEST_LABELS = "a test file must use the labels of the training data."


def checked_labels(reader, model, name=None, spec=None, why=TEST_LABELS):
    """The chunks of ``reader`` (``(X, y)`` or ``(X, y, sample_weight)``); a label the classifier does not know
    is an error naming it and the file (``name``, by default ``reader.name``) with the line (``spec``: how the
    file is read, LIBSVM when None), then ``why``."""
    classes = getattr(model, "classes_", None)
    seen = 0
    for chunk in reader:
        y = chunk[1]
        if classes is not None and len(y):
            _refuse_unknown(
                y,
                classes,
                seen,
                reader.name if name is None else name,
                "of the model's classes {classes}; " + why,
                spec,
            )
        seen += len(y)
        yield chunk


def first_chunk_classes(chunks, path, chunk_size, spec=None):
    """The chunks of a classifier's training data (``(X, y)`` or ``(X, y, sample_weight)``). Its classes are
    those of the first chunk with rows (``infer_classes``); a later label outside them is an error naming the
    file and the line of the example (``spec``: how the file is read, LIBSVM when None), instead of the
    learner's error about its ``classes_``. A first chunk with a single class (which the learner refuses) is
    checked against the next chunk with rows before it is passed on, so a second class just after it is that
    error too, not "needs at least 2 classes"."""
    from ..evaluation.train_test import infer_classes

    def check(y, seen):
        if y.dtype.kind == "f":
            frac = y != np.floor(y)
            if frac.any():
                i = int(np.argmax(frac))
                where, which = _example_at(path, spec, seen + i)
                raise CLIError(
                    f"{where}: label {y[i]:g}{which} is not a class: a classifier needs whole-number or text "
                    "labels; for numeric targets use a regression learner."
                )
        _refuse_unknown(
            y,
            classes,
            seen,
            path,
            f"of the classes {{classes}} of the first chunk ({chunk_size} rows), "
            "from which a classifier takes its classes; pass a --chunk-size that puts every class in the first "
            "chunk.",
            spec,
        )

    classes = None
    seen = 0
    chunks = iter(chunks)
    for chunk in chunks:
        y = chunk[1]
        ahead = []
        if len(y):
            if classes is None:
                classes = infer_classes(y)
                if len(classes) < 2:  # read on to the next chunk with rows, which may hold the second class
                    for later in chunks:
                        ahead.append(later)
                        if len(later[1]):
                            break
            check(y, seen)
        seen += len(y)
        for later in ahead:
            if len(later[1]):
                check(later[1], seen)
            seen += len(later[1])
        yield chunk
        yield from ahead


def _refuse_unknown(y, classes, seen, where, which, spec):
    """A label of ``y`` not in ``classes`` is an error naming it, the file ``where`` and the line of its example
    (``seen`` examples came before ``y``): "WHERE, line N: label L is not one WHICH" (see ``_example_at``),
    ``{classes}`` in ``which`` the classes."""
    bad = ~np.isin(y, classes)
    if bad.any():
        i = int(np.argmax(bad))
        where, example = _example_at(where, spec, seen + i)
        raise CLIError(
            f"{where}: label {label_text(y[i])}{example} is not one " + which.format(classes=labels_text(classes))
        )


def model_spec(model):
    """The :class:`InputSpec` a saved model reads its data with (None, i.e. LIBSVM, for a model saved without)."""
    from ..datasets._spec import InputSpec

    spec = getattr(model, "input_spec_", None)
    return InputSpec.from_dict(spec) if isinstance(spec, dict) else None


def _example_at(path, spec, example):
    """``(place, "")`` with the place of the 0-based ``example`` of the file ``path`` read as ``spec`` (LIBSVM when
    None; see :func:`~streamlearn.datasets._readers.example_place`), or ``(name, " (example N)")`` for a pipe."""
    from ..datasets._pipes import pipe_name
    from ..datasets._readers import example_place
    from ..datasets._spec import InputSpec

    place = example_place(path, spec or InputSpec(format="libsvm"), example)
    return (pipe_name(path), f" (example {example + 1})") if place is None else (place, "")


def example_error(path, spec, example, exc, rows=""):
    """The error for ``exc``, a row refused (a value too large) or diverged on (see ``_validation.row_error``)
    that is the 0-based ``example`` of the file ``path`` read as ``spec`` (LIBSVM when None): "FILE, line N:
    REASON", or for a pipe "NAME: example N ROWS: REASON" (``rows`` says which rows are counted, e.g. after a
    --holdout)."""
    from ..datasets._pipes import pipe_name
    from ..datasets._readers import example_message
    from ..datasets._spec import InputSpec

    text = getattr(exc, "reason", None) or str(exc)
    if rows:
        return CLIError(f"{pipe_name(path)}: example {example + 1}{rows}: {text}")
    return CLIError(example_message(path, spec or InputSpec(format="libsvm"), example, text, pipe_name(path)))
