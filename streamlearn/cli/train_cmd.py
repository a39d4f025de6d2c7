"""``streamlearn train`` and ``streamlearn evaluate``."""

import os

from sklearn.base import is_classifier

from ..learners import LEARNERS, make_learner
from ._common import (CLIError, add_output_options, add_param_option, check_input_file, format_table,
                      parse_params, print_json, show_progress)


def add_parser(sub):
    p = sub.add_parser("train", help="train a learner on a LIBSVM file (progressive validation on the first "
                       "pass), score it on a test file or held-out rows, optionally save it",
                       description="Train LEARNER on DATA, one chunk at a time.")
    _add_common(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--test", metavar="TEST", help="LIBSVM test file scored after training")
    g.add_argument("--holdout", type=float, metavar="FRAC", help="hold out this fraction of DATA's rows")
    p.add_argument("--seed", type=int, default=0, help="seed of the holdout draw (default 0)")
    p.add_argument("--passes", type=int, default=1, help="passes over DATA (default 1)")
    p.add_argument("-o", "--output", metavar="MODEL", help="save the trained model to this file")
    p.add_argument("--block-mb", type=float, default=None, metavar="N",
                   help="block size in MiB for learners that split DATA into on-disk blocks (bm-svm); "
                        "same as -p block_mb=N")
    p.set_defaults(func=run_train)

    e = sub.add_parser("evaluate", help="progressive validation of a learner on a LIBSVM file: VW-style "
                       "table of average loss and online error at doubling example counts",
                       description="Progressive validation: every example is predicted before it is learnt.")
    _add_common(e)
    e.set_defaults(func=run_evaluate)


def _add_common(p):
    p.add_argument("data", metavar="DATA", help="LIBSVM/svmlight file (.gz, .bz2, .xz read transparently)")
    p.add_argument("--learner", "-l", required=True, metavar="NAME", help="learner name (see 'streamlearn learners')")
    add_param_option(p)
    p.add_argument("--chunk-size", type=int, default=10_000, help="rows per chunk (default 10000)")
    p.add_argument("--n-features", type=int, default=None,
                   help="feature-space width; default: the largest index found in the data files")
    p.add_argument("--zero-based", choices=("auto", "true", "false"), default="auto",
                   help="are feature indices 0-based? (default auto)")
    add_output_options(p)


def _zero_based(args):
    return {"auto": "auto", "true": True, "false": False}[args.zero_based]


def _streams(args, paths):
    """One opener per file, all with the same width. Unless --n-features and --zero-based are both given,
    each file is read once up front (validating it) to find its width and index base, so that every
    training pass then reads the file once."""
    from ..datasets import iter_svmlight
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
    n_features = max(info["n_features"] for info in infos)

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
    paths = [args.data] + ([args.test] if args.test else [])
    opens = _streams(args, paths)
    if LEARNERS[args.learner].batch:
        return _run_batch_train(args, learner, params, opens)
    report = train_test_run(learner, opens[0], name=args.learner, params=params, passes=args.passes,
                            test_stream=opens[1] if args.test else None, holdout=args.holdout, seed=args.seed,
                            progress=show_progress(args))
    if args.output:
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
        for X, y in stream:
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
