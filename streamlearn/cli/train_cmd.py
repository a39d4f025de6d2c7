"""``streamlearn train`` and ``streamlearn evaluate``.

``streamlearn train DATA [DATA ...] --scheduler ADDRESS|local:N [--rounds R]`` trains on a Dask cluster by
iterative parameter mixing (:func:`streamlearn.distributed.fit_mixing`), each DATA file (or glob match) one
partition; the test file / holdout scoring, ``-o`` and ``--json`` are the same as for a local run.
"""

import contextlib
import os

from .._estimator import is_classifier
from ..learners import LEARNERS, make_learner, scaled_learner
from ..persist import load
from ._common import (
    CLIError,
    add_libsvm_options,
    add_scale_options,
    add_output_options,
    add_param_option,
    check_input_file,
    format_table,
    parse_params,
    print_json,
    show_progress,
    warn_if_below_constant,
)
from ._data import (
    TrainData,
    attach_spec,
    check_classes,
    check_data,
    check_diverged,
    check_test,
    checked_labels,
    example_error,
    model_spec,
    first_chunk_classes,
    model_reader,
    nonempty,
    output,
    plot_output,
)
from ._resume import (
    Checkpointer,
    check_checkpoint_args,
    check_resume_options,
    learner_name_of,
    load_for_resume,
    model_streams,
)
from ._input import add_input_options, check_libsvm_args, hashed_spec, input_format, refuse_other_format
from ._scheduler import add_scheduler_option, connected, distributed_module, expand_data, n_workers, single_file
from ._tabular import add_tabular_options, is_table_run, table_streams


def add_parser(sub):
    p = sub.add_parser(
        "train",
        help="train a learner on a data file (progressive validation on the first "
        "pass), score it on a test file or held-out rows, optionally save it",
        description="Train LEARNER on DATA, one chunk at a time. With --scheduler, the DATA "
        "files are partitions trained on a Dask cluster by iterative parameter mixing: every "
        "round, each partition runs --passes local passes from the current model on a worker, "
        "then the models are averaged, weighted by examples.",
    )
    _add_common(p, several=True)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--test", metavar="TEST", help="test file (in DATA's format) scored after training")
    g.add_argument("--holdout", type=float, metavar="FRAC", help="hold out this fraction of DATA's rows")
    p.add_argument("--seed", type=int, default=0, help="seed of the holdout draw (default 0)")
    p.add_argument(
        "--passes",
        type=int,
        default=1,
        help="passes over DATA (default 1); with --scheduler: local passes per partition per round",
    )
    p.add_argument("-o", "--output", metavar="MODEL", help="save the trained model to this file")
    p.add_argument(
        "-i",
        "--initial-model",
        metavar="MODEL",
        help="continue training the model saved in this "
        "file (its learner, parameters and input format come from the file; --learner optional)",
    )
    p.add_argument(
        "--save-every",
        type=int,
        default=None,
        metavar="N",
        help="checkpoint: rewrite -o MODEL atomically after the chunk that reaches every N examples",
    )
    p.add_argument(
        "--save-per-pass", action="store_true", help="checkpoint: write MODEL.passK (atomically) after pass K"
    )
    p.add_argument(
        "--block-mb",
        type=float,
        default=None,
        metavar="N",
        help="block size in MiB for learners that split DATA into on-disk blocks (bm-svm); same as -p block_mb=N",
    )
    add_scheduler_option(p, "train by iterative parameter mixing")
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        metavar="R",
        help="mixing rounds with --scheduler (default 5, fit_mixing's default)",
    )
    p.set_defaults(func=run_train)

    e = sub.add_parser(
        "evaluate",
        help="progressive validation of a learner on a data file: VW-style "
        "table of average loss and online error at doubling example counts",
        description="Progressive validation: every example is predicted before it is learnt. "
        "With -i MODEL, the saved model scores DATA without learning (frozen).",
    )
    _add_common(e)
    e.add_argument(
        "-i",
        "--initial-model",
        metavar="MODEL",
        help="score DATA with this saved model, frozen (no learning); --learner optional",
    )
    e.set_defaults(func=run_evaluate)


def _add_common(p, several=False):
    if several:
        p.add_argument(
            "data",
            metavar="DATA",
            nargs="+",
            help="LIBSVM, VW text, CSV or Parquet file (format from --format or the name; .gz, .bz2, .xz "
            "read transparently, .zst too for CSV; '-' is standard input, read once); with --scheduler, one or "
            "more files or quoted glob patterns, each file a partition",
        )
    else:
        p.add_argument(
            "data",
            metavar="DATA",
            help="LIBSVM, VW text, CSV or Parquet file (format from --format or the name; .gz, .bz2, .xz "
            "read transparently, .zst too for CSV; '-' is standard input, read once)",
        )
    p.add_argument(
        "--learner",
        "-l",
        metavar="NAME",
        help="learner name (see 'streamlearn learners'); required unless -i MODEL is given",
    )
    add_param_option(p)
    p.add_argument("--chunk-size", type=int, default=10_000, help="rows per chunk (default 10000)")
    add_scale_options(p, not_for="batch learners and --scheduler runs" if several else "")
    add_libsvm_options(
        p,
        n_features_help="feature-space width (at most 2**28); default: the largest index found in the data "
        "(growing while a stream is read); values of features beyond it are ignored and counted",
        zero_based_help="are feature indices 0-based? (default: one-based, LIBSVM's convention; a '0:' feature "
        "is then an error naming the line)",
    )
    add_input_options(p)
    add_tabular_options(p)
    add_output_options(p)


def _file_infos(args, paths):
    """``(n_features, [{"n_features", "zero_based"} per file])``: one width for all files. Unless --n-features
    and --zero-based are both given, each file is read once up front (validating it) to find its width and
    index base."""
    from ..datasets._stream import scan_svmlight
    from ._data import ZERO_HINT, zero_based

    for path in paths:
        check_input_file(path)
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    if args.n_features is not None and args.n_features < 1:
        raise CLIError(f"--n-features must be >= 1; got {args.n_features}.")
    zb = zero_based(args)  # decided once: one-based unless --zero-based true
    if args.n_features is not None:
        infos = [{"n_features": args.n_features, "zero_based": zb} for _ in paths]
    else:
        infos = [
            {"n_features": scan_svmlight(path, zb, zero_hint=ZERO_HINT)["n_features"], "zero_based": zb}
            for path in paths
        ]
    return max(info["n_features"] for info in infos), infos


def _need_learner(args):
    if args.learner is None and getattr(args, "initial_model", None) is None:
        raise CLIError("--learner NAME is required (or -i MODEL to continue a saved model).")


def _hashed_openers(args, paths):
    """Openers of hashed-format files (VW text, CSV, Parquet), all read with one :class:`InputSpec`, which is
    returned too. For tables the first file fixes the columns (kinds, namespaces)."""
    from ..datasets._parallel_vw import parallel_vw_chunks, use_parallel
    from ..datasets._prefetch import prefetch
    from ..datasets._readers import open_stream

    if paths[1:]:
        _refuse_other_test_formats(paths[1:], input_format(args, paths[0]))
    if is_table_run(args, paths):
        opens, spec = table_streams(args, paths)
        return _nonempty_openers(opens, paths), spec

    for path in paths:
        check_data(path)
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    spec = hashed_spec(args, paths[0], LEARNERS[args.learner].task)

    def read_ahead(path):
        # a large VW file is parsed by worker threads and by the learner's own thread while it waits (the same
        # chunks, in order); otherwise one thread reads ahead: the next chunk is parsed while the learner works
        if use_parallel(path, spec):
            return parallel_vw_chunks(path, spec, args.chunk_size, require_label=True)
        return prefetch(open_stream(path, spec, args.chunk_size, require_label=True))

    return _nonempty_openers([lambda p=p: read_ahead(p) for p in paths], paths), spec


def _refuse_other_test_formats(tests, fmt):
    """A test file that says it is in another format than DATA, read as ``fmt``, is an error naming both (not a
    parse error on its first line)."""
    for path in tests:
        refuse_other_format(path, fmt, f"DATA is read as {fmt}", "TEST in DATA's format", "the test file ")


def _nonempty_openers(opens, paths):
    """The openers, each stream of them checked to hold an example (the first path is the data, the others
    test files)."""
    return [
        lambda o=o, p=p, i=i: nonempty(o(), p, "data file" if i == 0 else "test file")
        for i, (o, p) in enumerate(zip(opens, paths))
    ]


def _labels_hint(args, path, exc, spec):
    """A VW label of DATA outside the binary label convention of a new model: the reader's error and the
    ``--labels`` that reads such labels (not for a continued model, whose convention is fixed, nor a test file,
    read in the training data's convention); None otherwise."""
    from ..datasets import VwFormatError
    from ..datasets._pipes import pipe_name

    other = {"pm1": "01", "01": "pm1"}.get(getattr(spec, "label_convention", None))
    if (
        not isinstance(exc, VwFormatError)
        or not exc.reason.startswith("bad label ")
        or getattr(args, "initial_model", None) is not None
        or exc.source != pipe_name(path)
        or other is None
    ):
        return None
    return CLIError(f"{exc}; for {'0/1' if other == '01' else '-1/1'} labels use --labels {other}.")


def _no_rows_left(args, path, exc, spec=None):
    """A row the learner refused (a value too large) or diverged on (see ``_progressive._run``), or a test row
    it could not score (``score_stream``): the error naming the file and the line of the example (its number in
    a pipe or among the rows a --holdout left or held out; ``spec`` is how the files are read, LIBSVM when
    None); a --holdout that drew every row of DATA, or every row of positive importance weight, leaves nothing
    to train on (or nothing to score): the error naming the option and file; a bad VW label of a new model's
    DATA, with the ``--labels`` that reads it (``_labels_hint``); None for any other ``exc``."""
    from ..datasets._pipes import pipe_name

    hint = _labels_hint(args, path, exc, spec)
    if hint is not None:
        return hint
    holdout = getattr(args, "holdout", None)
    if getattr(exc, "chunk", None) is not None:  # a chunk the learner refused as a whole: the learner's reason
        return CLIError(f"{pipe_name(path)}: {exc.reason}")
    example = getattr(exc, "example", None)
    if example is not None:
        return example_error(path, spec, example, exc, "" if holdout is None else " of the rows trained on")
    example = getattr(exc, "test_example", None)
    if example is not None:
        if holdout is None:
            return example_error(args.test, spec, example, exc)
        return example_error(path, spec, example, exc, " of the rows held out")
    if holdout is None:
        return None
    where = f"--holdout {holdout:g}: every row of {pipe_name(path)}"
    if "yielded no examples" in str(exc):
        return CLIError(f"{where} was held out, none is left to train on; hold out a smaller fraction.")
    if "examples of the stream have sample weight 0" in str(exc):
        return CLIError(f"{where} left to train on has importance weight 0; hold out a smaller fraction.")
    if "test examples have sample weight 0" in str(exc):
        return CLIError(f"{where} held out has importance weight 0, none can be scored; hold out a larger fraction.")
    return None


def _with_scaler(args, learner):
    """``learner`` behind the ``--scale`` scaler and the ``--scale-target`` target scaler (a ``StreamPipeline``,
    saved whole; without them, the learner's defaults), or itself for none."""
    one_process = not LEARNERS[args.learner].batch and getattr(args, "scheduler", None) is None
    target = getattr(args, "scale_target", None)
    spec = LEARNERS[args.learner]
    if target is not None and spec.task != "regression":
        raise CLIError(f"--scale-target applies to regressors; {args.learner} is a {spec.task} learner.")
    if target == "standard" and getattr(learner, "_progressive_loss", None) != "squared":
        raise CLIError(
            f"--scale-target standard needs a squared-loss regressor; {args.learner}'s loss is "
            f"{learner._progressive_loss}."
        )
    if not one_process:
        if args.scale not in (None, "none") or target not in (None, "none"):
            option = f"--scale {args.scale}" if args.scale not in (None, "none") else f"--scale-target {target}"
            raise CLIError(
                f"--scale and --scale-target apply to online learners trained in one process (not to batch "
                f"learners or --scheduler runs); got {option} with {args.learner}."
            )
        return learner
    return scaled_learner(args.learner, learner, args.scale, target)


def run_train(args):
    _need_learner(args)
    check_checkpoint_args(args)
    params = parse_params(args.param)
    if args.holdout is not None and not 0.0 < args.holdout < 1.0:
        raise CLIError(f"--holdout must be a fraction in (0, 1); got {args.holdout}.")
    if args.seed < 0:
        raise CLIError(f"--seed must be >= 0; got {args.seed}.")
    if args.initial_model is not None:
        return _run_resumed_train(args, params)
    learner = _with_scaler(args, make_learner(args.learner, params))
    if args.passes < 1:
        raise CLIError(f"--passes must be >= 1; got {args.passes}.")
    if args.block_mb is not None:
        if "block_mb" not in learner.get_params() or args.block_mb <= 0:
            raise CLIError(
                f"--block-mb needs a learner that stores blocks on disk (bm-svm) and a size > 0; got "
                f"{args.block_mb} for {args.learner}."
            )
        learner.set_params(block_mb=args.block_mb)
    if args.scheduler is not None:
        if args.save_every is not None or args.save_per_pass:
            raise CLIError(
                "--save-every/--save-per-pass checkpoint a local run; with --scheduler, -o saves the mixed model."
            )
        return _run_distributed_train(args, learner, params)
    if args.rounds is not None:
        raise CLIError(
            "--rounds is the number of parameter-mixing rounds of a --scheduler run; without --scheduler use --passes."
        )
    path = single_file(args, "train")
    if args.test:
        check_test(args.test, path)
    model_out = output(args.output, [path, args.test], "model file")  # checked before any work
    plot_out = plot_output(args.plot, [path, args.test], others=[model_out])
    from ..datasets._stream import is_stream_path

    if args.passes > 1 and is_stream_path(path):  # every format: a second pass would find the pipe empty
        raise CLIError("DATA is a stream, read once: --passes > 1 needs a file.")
    if input_format(args, path) != "libsvm":
        return _run_hashed_train(args, learner, params, path, model_out, plot_out)
    is_table_run(args, [path])  # table options on LIBSVM data are an error
    if args.test:
        _refuse_other_test_formats([args.test], "libsvm")
    check_libsvm_args(args)
    data = TrainData(args, path, learner)
    if data.width is None and args.holdout is not None:
        raise CLIError("--holdout on a stream needs --n-features N (held-out rows are scored at the final width).")
    tests = []

    def test_stream():  # read under the trained model's contract (its base and width)
        attach_spec(learner, data.zero_based)
        tests.append(model_reader(learner, args.test, args.chunk_size))
        return checked_labels(tests[-1], learner)

    if LEARNERS[args.learner].batch:
        if args.save_every is not None or args.save_per_pass:
            raise CLIError(
                f"{args.learner} is a batch learner: it has no online state to checkpoint "
                "(--save-every, --save-per-pass); -o saves the final model."
            )
        return _run_batch_train(args, learner, params, data, model_out, test_stream)
    report, checkpoints = _online_train_run(
        args,
        learner,
        path,
        _classes_checked(learner, data.open, path, args.chunk_size),
        test_stream if args.test else None,
        checkpoints=_checkpointer(args, learner, model_out, data),
        name=args.learner,
        params=params,
    )
    check_classes(data, learner, path)
    return _finish_train(args, learner, report, model_out, plot_out, data=data, tests=tests, checkpoints=checkpoints)


def _run_hashed_train(args, learner, params, path, model_out, plot_out):
    """Training on a hashed format (VW text): every id has a column, nothing to widen or pre-scan."""
    from ..datasets._pipes import pipe_name

    if LEARNERS[args.learner].batch:
        raise CLIError(
            f"{args.learner} is a batch learner, which reads LIBSVM files; got a {input_format(args, path)} file."
        )
    opens, spec = _hashed_openers(args, [path] + ([args.test] if args.test else []))

    def attach():
        learner.input_spec_ = spec.to_dict()

    report, checkpoints = _online_train_run(
        args,
        learner,
        path,
        _classes_checked(learner, opens[0], path, args.chunk_size, spec),
        (lambda: checked_labels(opens[1](), learner, pipe_name(args.test), spec)) if args.test else None,
        checkpoints=_checkpointer(args, learner, model_out, before_save=attach),
        spec=spec,
        name=args.learner,
        params=params,
    )
    attach()
    return _finish_train(args, learner, report, model_out, plot_out, checkpoints=checkpoints)


def _online_train_run(args, learner, path, open_stream, test_stream, *, checkpoints, spec=None, **run):
    """``train_test_run`` with the command line's passes, hold-out, seed, progress bar and checkpoints
    (``run``: its other arguments); a run whose rows were all refused or held out names DATA. Returns the report
    and the :class:`Checkpointer` (None without checkpoints), whose files a divergence error accounts for."""
    from ..evaluation.train_test import train_test_run

    try:
        report = train_test_run(
            learner,
            open_stream,
            passes=args.passes,
            test_stream=test_stream,
            holdout=args.holdout,
            seed=args.seed,
            progress=show_progress(args),
            chunk_hook=checkpoints,
            **run,
        )
    except (ValueError, FloatingPointError) as exc:
        error = _no_rows_left(args, path, exc, spec)
        if error is None:
            raise
        raise error from exc
    return report, checkpoints


def _classes_checked(learner, open_stream, path, chunk_size, spec=None):
    """``open_stream``, its chunks checked to bring no class after the first chunk (classifiers; ``spec``: how
    the file is read, LIBSVM when None)."""
    if not is_classifier(learner):
        return open_stream
    return lambda: first_chunk_classes(open_stream(), path, chunk_size, spec)


def _checkpointer(args, learner, model_out, data=None, before_save=None):
    if args.save_every is None and not args.save_per_pass:
        return None
    # checkpoints carry the input contract, as the final model does
    if data is not None:

        def before_save():
            attach_spec(learner, data.zero_based)

    return Checkpointer(
        learner,
        args.output,
        every=args.save_every,
        per_pass=args.save_per_pass,
        before_save=before_save,
        name=_learner_class(learner),
        output=model_out,
    )


def _run_resumed_train(args, params):
    """``train -i MODEL``: continue the saved model on DATA (same kernel calls as one run over both)."""
    if args.scheduler is not None or args.rounds is not None:
        raise CLIError("-i continues a model locally; it does not combine with --scheduler/--rounds.")
    if args.block_mb is not None:
        raise CLIError("--block-mb applies to batch learners, which cannot continue from a model (-i).")
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    if args.passes < 1:
        raise CLIError(f"--passes must be >= 1; got {args.passes}.")
    path = single_file(args, "train")
    if args.test:
        check_test(args.test, path)
    # the model may be rewritten in place (-i m -o m): it is read whole before the new file replaces it
    model_out = output(args.output, [path, args.test], "model file")
    plot_out = plot_output(args.plot, [path, args.test, args.initial_model], others=[model_out])
    learner, name = load_for_resume(args.initial_model, args.learner, params)
    check_resume_options(args, learner, args.initial_model)
    from ..datasets._stream import is_stream_path

    if args.passes > 1 and is_stream_path(path):
        raise CLIError("DATA is a stream, read once: --passes > 1 needs a file.")
    tests, readers = [], []
    data_stream, test_stream = model_streams(learner, args.initial_model, path, args.test, args, tests, readers)
    report, checkpoints = _online_train_run(
        args,
        learner,
        path,
        data_stream,
        test_stream if args.test else None,
        checkpoints=_checkpointer(args, learner, model_out),
        spec=model_spec(learner),
        name=name,
        # a scaling pipeline's parameters hold the learner object: report the learner's own
        params=getattr(learner, "learner_", learner).get_params(deep=False),
        classes=getattr(learner, "classes_", None),
    )
    return _finish_train(
        args,
        learner,
        report,
        model_out,
        plot_out,
        tests=tests,
        resumed_from=os.path.abspath(args.initial_model),
        ignored=readers[0].ignored if readers else None,
        checkpoints=checkpoints,
    )


def _learner_class(learner):
    """The class name of ``learner``, or of the learner inside a scaling pipeline (whose name says nothing)."""
    inner = getattr(learner, "learner_", None)
    return type(getattr(learner, "learner", learner) if inner is None else inner).__name__


def _finish_train(
    args,
    learner,
    report,
    model_out,
    plot_out,
    data=None,
    tests=(),
    resumed_from=None,
    ignored=None,
    checkpoints=None,
):
    """Check, save and report a training run; ``ignored``: the count of DATA's feature values beyond a
    continued model's width (``data`` counts its own); ``checkpoints``: the run's :class:`Checkpointer`, whose
    files a divergence error accounts for."""
    from ..datasets._pipes import pipe_name

    try:
        check_diverged(learner, report.average_loss, _learner_class(learner))
    except FloatingPointError as exc:
        if checkpoints is None:
            raise
        raise FloatingPointError(f"{exc} {checkpoints.kept()}") from None
    if getattr(args, "holdout", None) is not None and not report.test:
        raise CLIError(
            f"--holdout {args.holdout:g}: no row of {pipe_name(args.data[0])} was held out ({report.n_train} rows "
            "trained on); hold out a larger fraction."
        )
    if data is not None:
        attach_spec(learner, data.zero_based)
    _write_model_and_plot(learner, model_out, report, plot_out)
    out = report.as_dict()
    selected = getattr(getattr(learner, "learner_", learner), "selected_", None)
    if selected is not None:  # auto: the learner that predicts now
        out["selected"] = selected
    if resumed_from is not None:
        out["resumed_from"] = resumed_from
    if data is not None or tests:
        _ignored(out, data, tests)
    if ignored is not None:
        out["ignored_features"] = ignored
    if args.json:
        print_json(out)
    elif not args.quiet:
        print(format_table([{k: v for k, v in out.items() if k != "params"}], floatfmt="{:.4f}"))
        if args.output:
            print(f"model saved to {os.path.abspath(args.output)}")
    if report.progressive is not None:  # once everything is written: an error stays the only line
        warn_if_below_constant(args, report.progressive, args.data)
    return 0


def _write_model_and_plot(learner, model_out, report, plot_out):
    """Save the model to ``model_out`` and draw the figure to ``plot_out`` (either may be None), both written
    aside: the figure takes its place first, the model last, so that a figure that cannot be drawn or written
    (a full disk, a device that refuses it) leaves the model file as it was, as the run's error says."""
    from ..persist import save

    with contextlib.ExitStack() as written:  # closed last in, first out
        if model_out:
            with open(written.enter_context(model_out.path_for_writing(suffix=".slm")), "wb") as f:
                save(learner, f)
        if plot_out:
            report.progressive.plot(written.enter_context(plot_out.path_for_writing(suffix=plot_out.suffix)))


def _ignored(out, data, tests):
    """Counts of feature values beyond a fixed width (the documented rule: ignored and counted)."""
    if data is not None and data.ignored is not None:
        out["ignored_features"] = data.ignored
    if tests:
        out["test_ignored_features"] = tests[-1].ignored


def _run_batch_train(args, learner, params, data, model_out, test_stream):
    """A batch learner (``LearnerSpec.batch``): ``fit_stream`` over DATA's chunks, then the test file."""
    import time

    import numpy as np

    from ..evaluation.train_test import TrainReport, score_stream

    if args.holdout is not None or args.passes != 1 or args.plot:
        raise CLIError(
            f"{args.learner} is a batch learner: --holdout, --passes and --plot (progressive "
            "validation) do not apply; use --test and -p max_iter=N."
        )
    n_rows = [0]

    def counted(stream):
        for X, y, *rest in stream:
            if rest and rest[0] is not None and np.any(rest[0] != 1.0):
                raise CLIError(
                    f"{args.learner} is a batch learner and does not take importance weights; the "
                    "data has weights other than 1."
                )
            n_rows[0] += X.shape[0]
            yield X, y

    start = time.perf_counter()
    learner.fit_stream(counted(data.open()))
    seconds = time.perf_counter() - start
    report = TrainReport(
        learner=args.learner,
        params=params,
        n_train=n_rows[0],
        n_features=int(learner.n_features_in_),
        passes=1,
        online_error_rate=None,
        online_rmse=None,
        average_loss=float(np.mean(learner.train_loss_)),
        train_seconds=seconds,
        examples_per_second=n_rows[0] / seconds if seconds > 0 else float("inf"),
        nnz_weights=int(learner.nnz_weights),
        test=score_stream(learner, test_stream()) if args.test else {},
    )
    check_classes(data, learner, data.path)
    attach_spec(learner, data.zero_based)
    if model_out:
        learner.save(model_out)
    out = report.as_dict()
    out.update(
        objective=float(np.sum(learner.objective_)),
        dual_objective=float(np.sum(learner.dual_objective_)),
        n_iter=int(learner.n_iter_),
        n_blocks=getattr(learner, "n_blocks_", None),
    )
    if args.json:
        print_json({k: v for k, v in out.items() if v is not None})
    elif not args.quiet:
        print(format_table([{k: v for k, v in out.items() if k != "params" and v is not None}], floatfmt="{:.4f}"))
        if args.output:
            print(f"model saved to {os.path.abspath(args.output)}")
    return 0


def _run_distributed_train(args, learner, params):
    """``--scheduler``: parameter mixing over the DATA files on a Dask cluster, then the usual scoring."""
    import time

    import numpy as np

    from ..evaluation.train_test import TrainReport, _peek_classes, _split, score_stream

    if LEARNERS[args.learner].batch:
        raise CLIError(f"{args.learner} is a batch learner; --scheduler trains online learners by parameter mixing.")
    if args.plot:
        raise CLIError(
            "--plot draws the progressive-validation curve of a local run; with --scheduler the "
            "passes run on the workers and there is no single curve."
        )
    if args.rounds is not None and args.rounds < 1:
        raise CLIError(f"--rounds must be >= 1; got {args.rounds}.")
    if args.holdout is not None and not 0.0 < args.holdout < 1.0:
        raise CLIError(f"--holdout must be a fraction in (0, 1); got {args.holdout}.")
    if any(input_format(args, p) != "libsvm" for p in args.data):
        raise CLIError("--scheduler trains on LIBSVM files; VW text, CSV and Parquet are read by a local run.")
    check_libsvm_args(args)
    dist = distributed_module()
    if type(learner).__name__ not in dist.supported_learners():
        raise CLIError(
            f"--scheduler cannot train {args.learner} ({type(learner).__name__}): parameter mixing "
            f"supports {', '.join(dist.supported_learners())}."
        )
    try:
        learner.check_mixable()  # the settings it cannot mix (SON over rp/oja sketches, normalized OGD)
    except TypeError as exc:
        raise CLIError(f"--scheduler cannot train {args.learner}: {exc}") from None
    paths = expand_data(args.data)
    if args.test:
        check_input_file(args.test)
    model_out = output(args.output, [*paths, args.test], "model file")
    kwargs = {} if args.rounds is None else {"rounds": args.rounds}
    with connected(dist, args.scheduler) as client:  # a bad --scheduler fails before DATA is read
        workers = n_workers(client)
        n_features, infos = _file_infos(args, paths + ([args.test] if args.test else []))
        held = []
        if args.holdout is not None:
            # the held-out rows must be scored by the final model: draw them here, as a local run does, and
            # send the remaining rows to the workers as in-memory partitions (one per file)
            source = [
                _kept_rows(_split(_open(args, p, n_features, i), args.holdout, args.seed, held), args, p)
                for p, i in zip(paths, infos)
            ]
            partitions = dist.as_partitions(source, n_features=n_features, chunk_size=args.chunk_size)
        else:
            bases = {i["zero_based"] for i in infos[: len(paths)]}
            partitions = dist.as_partitions(
                paths,
                n_features=n_features,
                chunk_size=args.chunk_size,
                zero_based=bases.pop() if len(bases) == 1 else "auto",
            )
        classes = None
        if is_classifier(learner):  # as a local run does: from the first chunk ({-1,+1} / {0,1} completed)
            classes = next(_peek_classes(partitions[0].load()))
        start = time.perf_counter()
        try:
            model = dist.fit_mixing(learner, partitions, client, passes=args.passes, classes=classes, **kwargs)
        except RuntimeError as exc:  # a worker died and its partition could not be retried
            raise CLIError(str(exc)) from exc
        seconds = time.perf_counter() - start
    history = list(getattr(model, "mixing_history_", []))
    n_train = _n_train(partitions, history, args.passes)
    test = {}
    if args.test:
        test = score_stream(model, _open(args, args.test, n_features, infos[-1]))
    elif held:
        test = score_stream(model, held)
    first = history[0] if history else {}
    report = TrainReport(
        learner=args.learner,
        params=params,
        n_train=n_train,
        n_features=int(model.n_features_in_),
        passes=args.passes,
        online_error_rate=first.get("progressive_error"),
        online_rmse=None if first.get("progressive_mse") is None else float(np.sqrt(first["progressive_mse"])),
        average_loss=None,
        train_seconds=seconds,
        examples_per_second=_rate(sum(h.get("n_examples", 0) for h in history), seconds),
        nnz_weights=int(model.nnz_weights),
        test=test,
    )
    attach_spec(model, infos[0]["zero_based"])
    if model_out:
        model.save(model_out)
    out = report.as_dict()
    out.update(
        scheduler=args.scheduler,
        n_workers=workers,
        n_partitions=len(partitions),
        rounds=len(history),
        mixing_history=history,
    )
    if args.json:
        print_json(out)
    elif not args.quiet:
        print(
            format_table([{k: v for k, v in out.items() if k not in ("params", "mixing_history")}], floatfmt="{:.4f}")
        )
        if history:
            print()
            print(format_table(history, floatfmt="{:.4f}"))
        if args.output:
            print(f"model saved to {os.path.abspath(args.output)}")
    return 0


def _open(args, path, n_features, info):
    from ..datasets import iter_svmlight

    return iter_svmlight(path, chunk_size=args.chunk_size, n_features=n_features, zero_based=info["zero_based"])


def _kept_rows(stream, args, path):
    """One file's training rows (after the holdout draw) as one ``(X, y)`` pair."""
    import numpy as np
    import scipy.sparse as sp

    chunks = [(X, y) for X, y in stream if X.shape[0]]
    if not chunks:
        raise CLIError(
            f"--holdout {args.holdout:g}: every row of {path} was held out, none is left to train on; hold out a "
            "smaller fraction."
        )
    return sp.vstack([X for X, _ in chunks], format="csr"), np.concatenate([y for _, y in chunks])


def _n_train(partitions, history, passes):
    rows = [getattr(p, "n_rows", None) for p in partitions]
    if all(r is not None for r in rows):
        return int(sum(rows))
    if history and "n_examples" in history[0]:
        return int(history[0]["n_examples"]) // passes
    return None


def _rate(n, seconds):
    return n / seconds if seconds > 0 and n else None


def run_evaluate(args):
    from ..evaluation import progressive_validation
    from ..evaluation.train_test import _peek_classes

    _need_learner(args)
    if args.initial_model is not None:
        return _run_frozen_evaluate(args)
    learner = make_learner(args.learner, parse_params(args.param))
    if LEARNERS[args.learner].batch:
        raise CLIError(
            f"{args.learner} is a batch learner: progressive validation does not apply; use "
            "'streamlearn train --test TEST'."
        )
    learner = _with_scaler(args, learner)
    plot_out = plot_output(args.plot, [args.data])
    data = spec = None
    if input_format(args, args.data) != "libsvm":
        opens, spec = _hashed_openers(args, [args.data])
        stream = opens[0]()
    else:
        is_table_run(args, [args.data])
        check_libsvm_args(args)
        data = TrainData(args, args.data, learner)
        stream = data.open()
    classes = None
    try:
        if is_classifier(learner):
            stream = _peek_classes(first_chunk_classes(stream, args.data, args.chunk_size, spec))
            classes = next(stream)
        result = progressive_validation(learner, stream, classes=classes, progress=show_progress(args))
    except (ValueError, FloatingPointError) as exc:
        error = _no_rows_left(args, args.data, exc, spec)
        if error is None:
            raise
        raise error from exc
    check_diverged(learner, result.average_loss, _learner_class(learner))
    if plot_out:
        with plot_out.path_for_writing(suffix=plot_out.suffix) as tmp:
            result.plot(tmp)
    if args.json:
        out = {
            "learner": args.learner,
            "checkpoints": result.checkpoints,
            "online_error_rate": getattr(result, "online_error_rate", None),
            "online_rmse": result.online_rmse,
            "best_constant": result.best_constant,
            "best_constant_error_rate": result.best_constant_error_rate,
            "best_constant_rmse": result.best_constant_rmse,
            "average_loss": result.average_loss,
            "n_examples": result.n_examples,
        }
        out = {k: v for k, v in out.items() if v is not None}
        if data is not None and data.ignored is not None:
            out["ignored_features"] = data.ignored
        print_json(out)
    elif not args.quiet:
        print(result.format_table())
    warn_if_below_constant(args, result, args.data)
    return 0


def _run_frozen_evaluate(args):
    """``evaluate -i MODEL DATA``: score DATA with the saved model, which does not learn (VW's ``-t``)."""
    from ..evaluation.train_test import score_stream

    if args.plot:
        raise CLIError("--plot draws the progressive-validation curve; a frozen model (-i) has none.")
    params = parse_params(args.param)
    if params:
        raise CLIError("-p sets learner parameters; a frozen model (-i) keeps those in its file.")
    check_input_file(args.initial_model, "model file")
    model = load(args.initial_model)
    name = learner_name_of(model)
    if not hasattr(model, "_progressive_loss"):
        raise CLIError(
            f"{args.initial_model}: holds a {type(model).__name__}, which no registered learner trains; "
            "'streamlearn evaluate -i' scores models of the learners listed by 'streamlearn learners'."
        )
    if args.learner is not None and args.learner != name:
        raise CLIError(
            f"--learner {args.learner} does not match the model in {args.initial_model} "
            f"({f'learner {name}' if name else type(model).__name__}); omit --learner with -i."
        )
    if not hasattr(model, "n_features_in_"):
        raise CLIError(f"{args.initial_model}: the model was never trained (no n_features_in_).")
    check_resume_options(args, model, args.initial_model)
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    check_data(args.data)
    readers = []
    data_stream, _ = model_streams(model, args.initial_model, args.data, None, args, data_readers=readers)
    out = {"learner": name or type(model).__name__, "model": os.path.abspath(args.initial_model), "frozen": True}
    out.update(score_stream(model, data_stream()))
    if readers:
        out["ignored_features"] = readers[0].ignored
    if "n" not in out:
        raise CLIError(f"{args.data} holds no examples.")
    if args.json:
        print_json(out)
    elif not args.quiet:
        print(format_table([out], floatfmt="{:.4f}"))
    return 0
