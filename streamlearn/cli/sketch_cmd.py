"""``streamlearn sketch DATA --sketch NAME --ell L [-p key=value] [--json]``: sketch the rows of a LIBSVM
file and report the covariance error (both normalisations), the time and rows per second."""

import time

from ._common import (CLIError, add_output_options, add_param_option, check_input_file, format_table,
                      parse_params, print_json)


def add_parser(sub):
    from ..sketch import SKETCHES

    p = sub.add_parser(
        "sketch", help="sketch the rows of a LIBSVM file (FD, PFD, CFD, RFD, RP, Oja); report the relative "
        "spectral error of A^T A and the speed",
        description="Stream the rows of DATA through a matrix sketch, then report ||A^T A - approx||_2 "
        "divided by ||A^T A||_2 (and by ||A||_F^2), the sketching time and rows/second. The labels are "
        "ignored.")
    p.add_argument("data", metavar="DATA", help="LIBSVM/svmlight file (.gz, .bz2, .xz read transparently)")
    p.add_argument("--sketch", "-s", default="rfd", choices=sorted(SKETCHES),
                   help="fd, pfd, cfd, rfd (default), rp or oja")
    p.add_argument("--ell", type=int, default=10, help="sketch size (rows of the sketch; default 10)")
    add_param_option(p)
    p.add_argument("--n-features", type=int, default=None,
                   help="feature-space width; default: the largest index in DATA")
    p.add_argument("-o", "--output", metavar="PATH", help="save the sketch to this model file")
    p.add_argument("--blas-threads", type=int, default=1, metavar="N",
                   help="BLAS threads while sketching (default 1: the shrinks are small-by-wide products that "
                   "gain little from threads, and multithreaded OpenBLAS slows down a lot on a busy machine; "
                   "0 = the library default)")
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
            raise CLIError(f"sketch {name!r} has no parameter {key!r}; its parameters: "
                           f"{', '.join(sorted(valid)) or '(none)'} (ell is --ell).")
        kwargs[key] = _value(text)
    return cls(ell=ell, **kwargs)


def _load(path, n_features):
    from ..datasets import load_svmlight

    check_input_file(path)
    if n_features is not None and n_features < 1:
        raise CLIError(f"--n-features must be >= 1; got {n_features}.")
    X, _ = load_svmlight(path, n_features=n_features)
    return X


def run(args):
    if args.blas_threads < 0:
        raise CLIError(f"--blas-threads must be >= 0; got {args.blas_threads}.")
    if args.blas_threads == 0:
        return _run(args)
    import scipy.linalg  # noqa: F401  (load SciPy's BLAS, which the kernels call, before limiting it)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(args.blas_threads):
        return _run(args)


def _run(args):
    from sklearn.base import clone

    from ..evaluation.spectral import covariance_errors

    sketch = make_sketch(args.sketch, args.ell, parse_params(args.param))
    X = _load(args.data, args.n_features)
    n, d = X.shape
    sketch._check_params()  # sklearn-format message for a bad value before reading anything else
    warm = clone(sketch).partial_fit(X[:min(n, 2 * args.ell + 2)])  # compile / load numba's cache
    warm.sketch_
    t0 = time.perf_counter()
    sketch.partial_fit(X)
    sketch.sketch_  # the published sketch includes the final shrink of the FD family
    seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    errors = covariance_errors(X, sketch)
    error_seconds = time.perf_counter() - t1
    row = {"sketch": args.sketch, "class": type(sketch).__name__, "ell": args.ell,
           "params": {k: v for k, v in sketch.get_params().items() if k != "ell"},
           "n_rows": n, "n_features": d, "nnz": int(X.nnz),
           "relative_spectral_error": errors["relative_spectral_error"],
           "relative_frobenius_error": errors["relative_frobenius_error"],
           "spectral_error": errors["spectral_error"], "ata_norm": errors["ata_norm"],
           "alpha": float(getattr(sketch, "alpha_", 0.0)),
           "seconds": seconds, "rows_per_second": n / seconds if seconds > 0 else float("inf"),
           "error_seconds": error_seconds, "error_converged": errors["converged"],
           "blas_threads": args.blas_threads or "default"}
    if args.output:
        sketch.save(args.output)
        row["output"] = args.output
    if args.json:
        print_json(row)
    elif not args.quiet:
        print(format_table([{"quantity": k, "value": v} for k, v in row.items()], floatfmt="{:.6g}"))
    return 0
