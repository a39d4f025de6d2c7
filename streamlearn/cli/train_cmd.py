"""``streamlearn train`` and ``streamlearn evaluate``.

``streamlearn train DATA [DATA ...] --scheduler ADDRESS|local:N [--rounds R]`` trains on a Dask cluster by
iterative parameter mixing (:func:`streamlearn.distributed.fit_mixing`), each DATA file (or glob match) one
partition; the test file / holdout scoring, ``-o`` and ``--json`` are the same as for a local run.
"""

import os

from sklearn.base import is_classifier

from ..learners import LEARNERS, make_learner
from ._common import (CLIError, add_output_options, add_param_option, check_input_file, format_table,
                      parse_params, print_json, show_progress)
from ._input import add_input_options, check_libsvm_args, hashed_spec, input_format
from ._scheduler import add_scheduler_option, connected, distributed_module, expand_data, n_workers, single_file
from ._tabular import add_tabular_options, is_table_run, table_streams


def add_parser(sub):
    p = sub.add_parser("train", help="train a learner on a LIBSVM file (progressive validation on the first "
                       "pass), score it on a test file or held-out rows, optionally save it",
                       description="Train LEARNER on DATA, one chunk at a time. With --scheduler, the DATA "
                       "files are partitions trained on a Dask cluster by iterative parameter mixing: every "
                       "round, each partition runs --passes local passes from the current model on a worker, "
                       "then the models are averaged, weighted by examples.")
    _add_common(p, several=True)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--test", metavar="TEST", help="LIBSVM test file scored after training")
    g.add_argument("--holdout", type=float, metavar="FRAC", help="hold out this fraction of DATA's rows")
    p.add_argument("--seed", type=int, default=0, help="seed of the holdout draw (default 0)")
    p.add_argument("--passes", type=int, default=1,
                   help="passes over DATA (default 1); with --scheduler: local passes per partition per round")
    p.add_argument("-o", "--output", metavar="MODEL", help="save the trained model to this file")
    p.add_argument("--block-mb", type=float, default=None, metavar="N",
                   help="block size in MiB for learners that split DATA into on-disk blocks (bm-svm); "
                        "same as -p block_mb=N")
    add_scheduler_option(p, "train by iterative parameter mixing")
    p.add_argument("--rounds", type=int, default=None, metavar="R",
                   help="mixing rounds with --scheduler (default 5, fit_mixing's default)")
    p.set_defaults(func=run_train)

    e = sub.add_parser("evaluate", help="progressive validation of a learner on a LIBSVM file: VW-style "
                       "table of average loss and online error at doubling example counts",
                       description="Progressive validation: every example is predicted before it is learnt.")
    _add_common(e)
    e.set_defaults(func=run_evaluate)


def _add_common(p, several=False):
    if several:
        p.add_argument("data", metavar="DATA", nargs="+",
                       help="LIBSVM/svmlight file (.gz, .bz2, .xz read transparently); with --scheduler, one or "
                       "more files or quoted glob patterns, each file a partition")
    else:
        p.add_argument("data", metavar="DATA", help="LIBSVM/svmlight file (.gz, .bz2, .xz read transparently)")
    p.add_argument("--learner", "-l", required=True, metavar="NAME", help="learner name (see 'streamlearn learners')")
    add_param_option(p)
    p.add_argument("--chunk-size", type=int, default=10_000, help="rows per chunk (default 10000)")
    p.add_argument("--n-features", type=int, default=None,
                   help="feature-space width; default: the largest index found in the data files")
    p.add_argument("--zero-based", choices=("auto", "true", "false"), default="auto",
                   help="are feature indices 0-based? (default auto)")
    add_input_options(p)
    add_tabular_options(p)
    add_output_options(p)


def _zero_based(args):
    return {"auto": "auto", "true": True, "false": False}[args.zero_based]


def _file_infos(args, paths):
    """``(n_features, [{"n_features", "zero_based"} per file])``: one width for all files. Unless --n-features
    and --zero-based are both given, each file is read once up front (validating it) to find its width and
    index base."""
    from ..datasets._info import svmlight_info

    for path in paths:
        check_input_file(path)
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    if args.n_features is not None and args.n_features < 1:
        raise CLIError(f"--n-features must be >= 1; got {args.n_features}.")
    zb = _zero_based(args)
    if args.n_features is not None and zb != "auto":
        infos = [{"n_features": args.n_features, "zero_based": zb} for _ in paths]
    else:
        infos = [svmlight_info(path, zero_based=zb, n_features=args.n_features) for path in paths]
    return max(info["n_features"] for info in infos), infos


def _streams(args, paths):
    """One opener per file, all with the same width, so that every training pass then reads the file once.
    Sets ``args.input_spec``, the :class:`InputSpec` saved with the model.
    CSV/Parquet files: the first file's reader fixes the columns (kinds, namespaces)."""
    from ..datasets import iter_svmlight
    from ..datasets._readers import open_stream
    from ..datasets._spec import InputSpec

    if is_table_run(args, paths):
        opens, args.input_spec = table_streams(args, paths)
        return opens

    if input_format(args, paths[0]) != "libsvm":
        for path in paths:
            check_input_file(path)
        if args.chunk_size < 1:
            raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
        spec = args.input_spec = hashed_spec(args, paths[0], LEARNERS[args.learner].task)
        return [lambda p=p: open_stream(p, spec, args.chunk_size, require_label=True) for p in paths]
    check_libsvm_args(args)
    n_features, infos = _file_infos(args, paths)
    args.input_spec = InputSpec(format="libsvm", n_features=n_features, zero_based=infos[0]["zero_based"])

    def opener(path, info):
        return lambda: iter_svmlight(path, chunk_size=args.chunk_size, n_features=n_features,
                                     zero_based=info["zero_based"])

    return [opener(p, i) for p, i in zip(paths, infos)]


def run_train(args):
    from ..evaluation.train_test import train_test_run

    params = parse_params(args.param)
    learner = make_learner(args.learner, params)
    if args.passes < 1:
        raise CLIError(f"--passes must be >= 1; got {args.passes}.")
    if args.block_mb is not None:
        if "block_mb" not in learner.get_params() or args.block_mb <= 0:
            raise CLIError(f"--block-mb needs a learner that stores blocks on disk (bm-svm) and a size > 0; got "
                           f"{args.block_mb} for {args.learner}.")
        learner.set_params(block_mb=args.block_mb)
    if args.scheduler is not None:
        return _run_distributed_train(args, learner, params)
    if args.rounds is not None:
        raise CLIError("--rounds is the number of parameter-mixing rounds of a --scheduler run; without "
                       "--scheduler use --passes.")
    paths = [single_file(args, "train")] + ([args.test] if args.test else [])
    opens = _streams(args, paths)
    if LEARNERS[args.learner].batch:
        return _run_batch_train(args, learner, params, opens)
    report = train_test_run(learner, opens[0], name=args.learner, params=params, passes=args.passes,
                            test_stream=opens[1] if args.test else None, holdout=args.holdout, seed=args.seed,
                            progress=show_progress(args))
    if args.output:
        learner.input_spec_ = args.input_spec.to_dict()
        learner.save(args.output)
    if args.plot:
        report.progressive.plot(args.plot)
    out = report.as_dict()
    if args.json:
        print_json(out)
    elif not args.quiet:
        print(format_table([{k: v for k, v in out.items() if k != "params"}], floatfmt="{:.4f}"))
        if args.output:
            print(f"model saved to {os.path.abspath(args.output)}")
    return 0


def _run_batch_train(args, learner, params, opens):
    """A batch learner (``LearnerSpec.batch``): ``fit_stream`` over DATA's chunks, then the test file."""
    import time

    import numpy as np

    from ..evaluation.train_test import TrainReport, score_stream

    if args.holdout is not None or args.passes != 1 or args.plot:
        raise CLIError(f"{args.learner} is a batch learner: --holdout, --passes and --plot (progressive "
                       "validation) do not apply; use --test and -p max_iter=N.")
    n_rows = [0]

    def counted(stream):
        for X, y, *rest in stream:
            if rest and rest[0] is not None and np.any(rest[0] != 1.0):
                raise CLIError(f"{args.learner} is a batch learner and does not take importance weights; the "
                               "data has weights other than 1.")
            n_rows[0] += X.shape[0]
            yield X, y

    start = time.perf_counter()
    learner.fit_stream(counted(opens[0]()))
    seconds = time.perf_counter() - start
    report = TrainReport(
        learner=args.learner, params=params, n_train=n_rows[0], n_features=int(learner.n_features_in_), passes=1,
        online_error_rate=None, online_rmse=None, average_loss=float(np.mean(learner.train_loss_)),
        train_seconds=seconds, examples_per_second=n_rows[0] / seconds if seconds > 0 else float("inf"),
        nnz_weights=int(learner.nnz_weights), test=score_stream(learner, opens[1]()) if args.test else {})
    if args.output:
        learner.input_spec_ = args.input_spec.to_dict()
        learner.save(args.output)
    out = report.as_dict()
    out.update(objective=float(np.sum(learner.objective_)), dual_objective=float(np.sum(learner.dual_objective_)),
               n_iter=int(learner.n_iter_), n_blocks=getattr(learner, "n_blocks_", None))
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
        raise CLIError(f"{args.learner} is a batch learner; --scheduler trains online learners by parameter "
                       "mixing.")
    if args.plot:
        raise CLIError("--plot draws the progressive-validation curve of a local run; with --scheduler the "
                       "passes run on the workers and there is no single curve.")
    if args.rounds is not None and args.rounds < 1:
        raise CLIError(f"--rounds must be >= 1; got {args.rounds}.")
    if args.holdout is not None and not 0.0 < args.holdout < 1.0:
        raise CLIError(f"--holdout must be a fraction in (0, 1); got {args.holdout}.")
    if any(input_format(args, p) != "libsvm" for p in args.data):
        raise CLIError("--scheduler trains on LIBSVM files; VW text, CSV and Parquet are read by a local run.")
    check_libsvm_args(args)
    dist = distributed_module()
    if type(learner).__name__ not in dist.supported_learners():
        raise CLIError(f"--scheduler cannot train {args.learner} ({type(learner).__name__}): parameter mixing "
                       f"supports {', '.join(dist.supported_learners())}.")
    paths = expand_data(args.data)
    if args.test:
        check_input_file(args.test)
    kwargs = {} if args.rounds is None else {"rounds": args.rounds}
    with connected(dist, args.scheduler) as client:  # a bad --scheduler fails before DATA is read
        workers = n_workers(client)
        n_features, infos = _file_infos(args, paths + ([args.test] if args.test else []))
        held = []
        if args.holdout is not None:
            # the held-out rows must be scored by the final model: draw them here, as a local run does, and
            # send the remaining rows to the workers as in-memory partitions (one per file)
            source = [_kept_rows(_split(_open(args, p, n_features, i), args.holdout, args.seed, held))
                      for p, i in zip(paths, infos)]
            partitions = dist.as_partitions(source, n_features=n_features, chunk_size=args.chunk_size)
        else:
            bases = {i["zero_based"] for i in infos[:len(paths)]}
            partitions = dist.as_partitions(paths, n_features=n_features, chunk_size=args.chunk_size,
                                            zero_based=bases.pop() if len(bases) == 1 else "auto")
        classes = None
        if is_classifier(learner):  # as a local run does: from the first chunk ({-1,+1} / {0,1} completed)
            classes = next(_peek_classes(partitions[0].load()))
        start = time.perf_counter()
        try:
            model = dist.fit_mixing(learner, partitions, client, passes=args.passes, classes=classes, **kwargs)
        except TypeError as exc:
            if "support" not in str(exc):
                raise
            raise CLIError(f"--scheduler cannot train {args.learner}: {exc}") from exc
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
        learner=args.learner, params=params, n_train=n_train, n_features=int(model.n_features_in_),
        passes=args.passes, online_error_rate=first.get("progressive_error"),
        online_rmse=None if first.get("progressive_mse") is None else float(np.sqrt(first["progressive_mse"])),
        average_loss=None,
        train_seconds=seconds, examples_per_second=_rate(sum(h.get("n_examples", 0) for h in history), seconds),
        nnz_weights=int(model.nnz_weights), test=test)
    if args.output:
        from ..datasets._spec import InputSpec

        model.input_spec_ = InputSpec(format="libsvm", n_features=n_features,
                                      zero_based=infos[0]["zero_based"]).to_dict()
        model.save(args.output)
    out = report.as_dict()
    out.update(scheduler=args.scheduler, n_workers=workers, n_partitions=len(partitions), rounds=len(history),
               mixing_history=history)
    if args.json:
        print_json(out)
    elif not args.quiet:
        print(format_table([{k: v for k, v in out.items() if k not in ("params", "mixing_history")}],
                           floatfmt="{:.4f}"))
        if history:
            print()
            print(format_table(history, floatfmt="{:.4f}"))
        if args.output:
            print(f"model saved to {os.path.abspath(args.output)}")
    return 0


def _open(args, path, n_features, info):
    from ..datasets import iter_svmlight

    return iter_svmlight(path, chunk_size=args.chunk_size, n_features=n_features, zero_based=info["zero_based"])


def _kept_rows(stream):
    """One file's training rows (after the holdout draw) as one ``(X, y)`` pair."""
    import numpy as np
    import scipy.sparse as sp

    chunks = [(X, y) for X, y in stream if X.shape[0]]
    if not chunks:
        raise CLIError("a DATA file keeps no training rows after --holdout.")
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

    learner = make_learner(args.learner, parse_params(args.param))
    if LEARNERS[args.learner].batch:
        raise CLIError(f"{args.learner} is a batch learner: progressive validation does not apply; use "
                       "'streamlearn train --test TEST'.")
    stream = _streams(args, [args.data])[0]()
    classes = None
    if is_classifier(learner):
        stream = _peek_classes(stream)
        classes = next(stream)
    result = progressive_validation(learner, stream, classes=classes, progress=show_progress(args))
    if args.plot:
        result.plot(args.plot)
    if args.json:
        print_json({"learner": args.learner, "checkpoints": result.checkpoints,
                    "online_error_rate": getattr(result, "online_error_rate", None),
                    "average_loss": result.average_loss, "n_examples": result.n_examples})
    elif not args.quiet:
        print(result.format_table())
    return 0
