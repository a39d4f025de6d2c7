"""``streamlearn sketch DATA --sketch NAME --ell L [-p key=value] [--json]``: sketch the rows of a LIBSVM
file and report the covariance error (both normalisations), the time and rows per second.

``streamlearn sketch DATA [DATA ...] --scheduler ADDRESS|local:N``: each DATA file (or glob match) is sketched
on a Dask worker and the sketches are merged by a tree reduction (:func:`streamlearn.distributed.fit_sketch`);
the report is the same (the error is computed here, on the stacked DATA, unless ``--no-error``)."""

import math
import time

from ._common import (
    CLIError,
    add_libsvm_options,
    add_output_options,
    add_param_option,
    check_input_file,
    format_table,
    parse_params,
    print_json,
)
from ._data import SKETCH_HINT, ZERO_HINT, TrainData, output
from ._scheduler import add_scheduler_option, connected, distributed_module, expand_data, n_workers, single_file


def add_parser(sub):
    from ..sketch import SKETCHES

    p = sub.add_parser(
        "sketch",
        help="sketch the rows of a LIBSVM file (FD, PFD, CFD, RFD, RP, Oja); report the relative "
        "spectral error of A^T A and the speed",
        description="Stream the rows of DATA through a matrix sketch, then report ||A^T A - approx||_2 "
        "divided by ||A^T A||_2 (and by ||A||_F^2), the sketching time and rows/second. The labels are "
        "ignored.",
    )
    p.add_argument(
        "data",
        metavar="DATA",
        nargs="+",
        help="LIBSVM/svmlight file (.gz, .bz2, .xz read transparently); with --scheduler, one or more "
        "files or quoted glob patterns, each file a partition",
    )
    p.add_argument(
        "--sketch", "-s", default=None, choices=sorted(SKETCHES), help="fd, pfd, cfd, rfd (default), rp or oja"
    )
    p.add_argument("--ell", type=int, default=None, help="sketch size (rows of the sketch; default 10)")
    p.add_argument(
        "-i",
        "--initial-sketch",
        metavar="PATH",
        help="continue the sketch saved in this file (-o of "
        "an earlier run); its kind, ell and parameters come from the file; no covariance error is computed",
    )
    add_param_option(p, help="sketch parameter (repeatable), e.g. -p beta=0.4 (pfd) -p random_state=0 (rp, oja)")
    add_libsvm_options(
        p,
        n_features_help="feature-space width (at most 2**28); default: the largest index in DATA; values of "
        "features beyond it are ignored and counted",
        zero_based_help="are feature indices 0-based? (default: one-based, LIBSVM's convention)",
    )
    p.add_argument("--chunk-size", type=int, default=10_000, help="rows per chunk read (default 10000)")
    p.add_argument("-o", "--output", metavar="PATH", help="save the sketch to this model file")
    p.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        metavar="N",
        help="BLAS threads while sketching (default 1: the shrinks are small-by-wide products that "
        "gain little from threads, and multithreaded OpenBLAS slows down a lot on a busy machine; "
        "0 = the library default; with --scheduler it applies to the error computed here, Dask "
        "starts its workers with one BLAS thread)",
    )
    add_scheduler_option(p, "sketch the partitions and merge the sketches")
    p.add_argument(
        "--no-error", action="store_true", help="skip the covariance error (it needs all of DATA in memory here)"
    )
    add_output_options(p, plot=False)
    p.set_defaults(func=run)


def _value(text):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def make_sketch(name, ell, params):
    """A sketch from its command-line name, ``ell`` and ``{key: text}`` parameters."""
    from ..sketch import SKETCHES

    if name not in SKETCHES:
        raise CLIError(f"unknown sketch {name!r}; known: {', '.join(sorted(SKETCHES))}.")
    cls = SKETCHES[name]
    valid = set(cls().get_params()) - {"ell"}
    kwargs = {}
    for key, text in params.items():
        if key not in valid:
            raise CLIError(
                f"sketch {name!r} has no parameter {key!r}; its parameters: "
                f"{', '.join(sorted(valid)) or '(none)'} (ell is --ell)."
            )
        kwargs[key] = _value(text)
    return cls(ell=ell, **kwargs)


def _load(data):
    """All rows of DATA (read once, chunk by chunk) as one CSR matrix of the final width."""
    import scipy.sparse as sp

    chunks = [X for X, _ in data.open()]
    width = max(X.shape[1] for X in chunks)
    X = sp.vstack(
        [sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width)) for X in chunks], format="csr"
    )
    X.has_sorted_indices = True
    return X


def _run_stream(args, sketch, data, out):
    """A stream with a fixed width and --no-error: chunks go straight into the sketch, in constant memory."""
    sketch._check_params()
    n = nnz = 0
    seconds = 0.0
    for X, _ in data.open():
        t0 = time.perf_counter()
        sketch.partial_fit(X)
        seconds += time.perf_counter() - t0
        n += X.shape[0]
        nnz += X.nnz
    t0 = time.perf_counter()
    _ = sketch.sketch_  # the published sketch includes the final shrink of the FD family
    seconds += time.perf_counter() - t0
    row = _report(args, sketch, None, n, data.width, seconds)
    row["nnz"] = int(nnz)
    row["ignored_features"] = data.ignored
    return _finish(args, sketch, row, out)


def run(args):
    if args.blas_threads < 0:
        raise CLIError(f"--blas-threads must be >= 0; got {args.blas_threads}.")
    if args.blas_threads == 0:
        return _run(args)
    import scipy.linalg  # noqa: F401  (load SciPy's BLAS, which the kernels call, before limiting it)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(args.blas_threads):
        return _run(args)


_FORMAT_NAMES = {"vw": "VW text", "csv": "CSV", "parquet": "Parquet"}


def _libsvm_only(args, paths):
    """sketch reads LIBSVM data: a file that is VW text, CSV or Parquet by its name (or first lines, for a
    pipe) is refused before any work, instead of a parse error on its first line."""
    from ..datasets._pipes import pipe_name
    from ._input import input_format

    for path in paths:
        fmt = input_format(args, path)
        if fmt != "libsvm":
            raise CLIError(
                f"sketch reads LIBSVM/svmlight data; {pipe_name(path)} is {_FORMAT_NAMES.get(fmt, fmt)} (convert it to "
                "LIBSVM to sketch it)."
            )


def _run(args):
    from sklearn.base import clone

    if args.initial_sketch is not None:
        sketch = _resumed(args)
    else:
        args.sketch = args.sketch or "rfd"
        args.ell = 10 if args.ell is None else args.ell
        sketch = make_sketch(args.sketch, args.ell, parse_params(args.param))
    if args.scheduler is not None:
        return _run_distributed(args, sketch)
    path = single_file(args, "sketch")
    _libsvm_only(args, [path])
    out = output(args.output, [path], "sketch file")  # checked before any work
    saved = getattr(sketch, "input_spec_", None) if args.initial_sketch is not None else None
    data = TrainData(args, path, zero_hint=SKETCH_HINT if isinstance(saved, dict) else ZERO_HINT)
    if data.stream and args.no_error and data.width is not None:
        return _run_stream(args, sketch, data, out)
    X = _load(data)
    n, d = X.shape
    sketch._check_params()  # sklearn-format message for a bad value before reading anything else
    warm = clone(sketch).partial_fit(X[: min(n, 2 * args.ell + 2)])  # compile / load numba's cache
    _ = warm.sketch_
    t0 = time.perf_counter()
    sketch.partial_fit(X)
    _ = sketch.sketch_  # the published sketch includes the final shrink of the FD family
    seconds = time.perf_counter() - t0
    row = _report(args, sketch, None if args.no_error else X, n, d, seconds)
    if args.no_error:
        row["nnz"] = int(X.nnz)
    if data.ignored is not None:
        row["ignored_features"] = data.ignored
    return _finish(args, sketch, row, out)


def _resumed(args):
    """The sketch of ``-i PATH``; --sketch, --ell and -p must agree with it (or be omitted)."""
    from ..persist import load
    from ..sketch import SKETCHES

    check_input_file(args.initial_sketch, "sketch file")
    if args.scheduler is not None:
        raise CLIError("-i continues a sketch locally; it does not combine with --scheduler.")
    sketch = load(args.initial_sketch)
    names = [k for k, cls in SKETCHES.items() if cls is type(sketch)]
    if not names:
        raise CLIError(f"{args.initial_sketch}: holds a {type(sketch).__name__}, not a sketch.")
    if args.sketch is not None and args.sketch not in names:
        raise CLIError(
            f"--sketch {args.sketch} does not match {args.initial_sketch}, a {names[0]} sketch; omit --sketch with -i."
        )
    if args.ell is not None and args.ell != sketch.ell:
        raise CLIError(f"--ell {args.ell} conflicts with {args.initial_sketch} (ell={sketch.ell}); omit --ell with -i.")
    for key, text in parse_params(args.param).items():
        current = sketch.get_params(deep=False)
        if key not in current:
            own = ", ".join(k for k in sorted(current) if k != "ell") or "none"
            raise CLIError(
                f"-p {key}={text}: the {names[0]} sketch in {args.initial_sketch} has no parameter {key!r}; "
                f"its parameters: {own} (ell is --ell)."
            )
        if _value(text) != current[key]:
            raise CLIError(
                f"-p {key}={text} conflicts with {args.initial_sketch} ({key}={current.get(key)!r}); a "
                "continued sketch keeps its parameters."
            )
    if not hasattr(sketch, "n_features_in_"):
        raise CLIError(f"{args.initial_sketch}: the sketch is empty; sketch without -i.")
    if args.n_features is not None and args.n_features != sketch.n_features_in_:
        raise CLIError(
            f"--n-features {args.n_features} conflicts with {args.initial_sketch} ({sketch.n_features_in_} features)."
        )
    saved = getattr(sketch, "input_spec_", None)  # the index base DATA was read with (sketches saved by this command)
    if isinstance(saved, dict) and saved.get("zero_based") is not None:
        base = "true" if saved["zero_based"] else "false"
        if args.zero_based not in ("auto", base):
            raise CLIError(
                f"--zero-based {args.zero_based} conflicts with {args.initial_sketch}, sketched from "
                f"{'zero' if saved['zero_based'] else 'one'}-based data; omit --zero-based with -i."
            )
        args.zero_based = base
    args.n_features = sketch.n_features_in_
    args.sketch, args.ell = names[0], sketch.ell
    args.no_error = True  # the error would need every row sketched so far, and only DATA is here
    return sketch


def _shown(value):
    return str(value) if isinstance(value, float) and not math.isfinite(value) else value


def _report(args, sketch, X, n, d, seconds):
    from ..evaluation.spectral import covariance_errors

    row = {
        "sketch": args.sketch,
        "class": type(sketch).__name__,
        "ell": args.ell,
        # an infinite value as text, as 'train --json' shows -p theta=inf (JSON has no inf; null would read as unset)
        "params": {k: _shown(v) for k, v in sketch.get_params().items() if k != "ell"},
        "n_rows": n,
        "n_features": d,
    }
    if X is not None:
        t1 = time.perf_counter()
        try:
            errors = covariance_errors(X, sketch)
        except ValueError as exc:  # every value of DATA is zero and the sketch is not (RFD's alpha0 I)
            alpha = float(getattr(sketch, "alpha_", 0.0))
            raise CLIError(
                f"the relative errors are undefined: every value of {' '.join(args.data)} is zero "
                f"(||A^T A||_2 = 0) but the {args.sketch} sketch's approximation is not (alpha = {alpha:g}); "
                "expected DATA with a non-zero value, or --no-error to sketch without them."
            ) from exc
        error_seconds = time.perf_counter() - t1
        row.update(
            nnz=int(X.nnz),
            relative_spectral_error=errors["relative_spectral_error"],
            relative_frobenius_error=errors["relative_frobenius_error"],
            spectral_error=errors["spectral_error"],
            ata_norm=errors["ata_norm"],
        )
    row.update(
        alpha=float(getattr(sketch, "alpha_", 0.0)),
        seconds=seconds,
        rows_per_second=n / seconds if seconds > 0 else float("inf"),
    )
    if X is not None:
        row.update(error_seconds=error_seconds, error_converged=errors["converged"])
    row["blas_threads"] = args.blas_threads or "default"
    return row


def _run_distributed(args, sketch):
    """``--scheduler``: one sketch per DATA file on the workers, merged by a tree reduction."""
    import scipy.sparse as sp

    from ..datasets._stream import scan_svmlight
    from ._data import ZERO_HINT, zero_based

    sketch._check_params()  # sklearn-format message for a bad value before starting anything
    if args.n_features is not None and args.n_features < 1:
        raise CLIError(f"--n-features must be >= 1; got {args.n_features}.")
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be >= 1; got {args.chunk_size}.")
    dist = distributed_module()
    paths = expand_data(args.data)
    _libsvm_only(args, paths)
    if len(paths) > 1:  # a sketch whose merge would fail once every partition is sketched: before any cluster
        from ..distributed._sketch import _check_mergeable

        try:
            _check_mergeable(sketch, len(paths))
        except (TypeError, ValueError) as exc:
            raise CLIError(str(exc)) from exc
    out = output(args.output, paths, "sketch file")
    with connected(dist, args.scheduler) as client:  # a bad --scheduler fails before DATA is read
        workers = n_workers(client)
        d = args.n_features
        infos = None
        if not args.no_error or d is None:  # one validating pass per file here, as a local run's load does
            zb = zero_based(args)  # decided once: one-based unless --zero-based true
            infos = [
                {"n_features": scan_svmlight(p, zb, zero_hint=ZERO_HINT)["n_features"], "zero_based": zb} for p in paths
            ]
            d = args.n_features or max(i["n_features"] for i in infos)
        bases = {i["zero_based"] for i in infos or []}
        try:
            partitions = dist.as_partitions(
                paths, n_features=d, chunk_size=args.chunk_size, zero_based=bases.pop() if len(bases) == 1 else "auto"
            )
        except ValueError as exc:  # the widest file is wider than --n-features (as_partitions names its argument)
            widest = getattr(exc, "widest", None)
            if widest is None:
                raise
            raise CLIError(
                f"--n-features {d}: the DATA files use up to {widest} features; with --scheduler the workers read every "
                "feature of their files (none is dropped): give --n-features of at least that width, or omit it."
            ) from exc
        t0 = time.perf_counter()
        try:
            result = dist.fit_sketch(sketch, partitions, client)
        except RuntimeError as exc:  # a worker died and its partition could not be retried
            raise CLIError(str(exc)) from exc
        _ = result.sketch_  # the published sketch includes the final shrink of the FD family
        seconds = time.perf_counter() - t0
    X = None
    if not args.no_error:  # read here exactly as the workers read it
        X = sp.vstack([X for part in partitions for X, _ in part.load()], format="csr")
    row = _report(args, result, X, int(result.n_seen_), d, seconds)
    row.update(scheduler=args.scheduler, n_workers=workers, n_partitions=len(partitions))
    return _finish(args, result, row, out)


def _finish(args, sketch, row, out):
    if out is not None:
        from ..datasets._spec import InputSpec
        from ._data import zero_based

        # the index base and width DATA was read with: -i reads the next DATA the same way
        spec = InputSpec(format="libsvm", zero_based=zero_based(args), n_features=int(sketch.n_features_in_))
        sketch.input_spec_ = spec.to_dict()
        sketch.save(out)
        row["output"] = args.output
    if args.json:
        print_json(row)
    elif not args.quiet:
        print(format_table([{"quantity": k, "value": v} for k, v in row.items()], floatfmt="{:.6g}"))
    return 0
