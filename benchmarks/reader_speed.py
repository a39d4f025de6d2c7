"""LIBSVM reader speed: streamlearn's ``load_svmlight`` vs scikit-learn's ``load_svmlight_file``, and
streaming a >= 2 GB file through ``iter_svmlight`` + ``PassiveAggressiveClassifier.partial_fit``.

What is measured, and how it is kept fair:

* Full load, MB/s of uncompressed text, on the same plain file in the same run: a9a and farm-ads
  (decompressed from the shared data to a temporary file), a synthetic binary bag-of-words file written
  by ``streamlearn.datasets.write_svmlight_stream`` (~200 MB: Zipf feature frequencies, values ``1``),
  a synthetic real-valued file (~200 MB, values ``0.dddddd``) and a synthetic file of full-precision
  doubles (Python ``repr``, ~17 significant digits, the hardest case for a float parser). Both readers
  get ``n_features`` and ``zero_based=False``. The numba kernel is loaded from its cache (or compiled) by
  a warm-up call before timing, the file is read once to warm the page cache, runs alternate
  ours / scikit-learn, and each figure is the best of ``--repeats`` wall-clock runs. The results are
  checked equal (data, indices, indptr, y) before they are reported.
* Streaming, in a fresh subprocess per mode: a ``--stream-gib`` (default 2 GiB) synthetic file (binary,
  10^6 features, ~100 non-zeros per row) read by ``iter_svmlight(path, chunk_size=10_000,
  n_features=..., zero_based=False)`` alone ("reader only") and with one ``partial_fit(X, y,
  classes=[-1, 1])`` of ``PassiveAggressiveClassifier`` per chunk. Peak RSS is the child's
  ``VmHWM`` (``ru_maxrss`` off Linux; it includes the interpreter, numpy/scipy/scikit-learn/numba and the 8 MB weight vector;
  the RSS right after imports and warm-up is reported too). The file is deleted at the end.

Writes ``benchmarks/results/reader_speed.json`` (every raw timing) and ``reader_speed.md``.
Run ``python benchmarks/reader_speed.py --help`` for the options (``--quick`` for a 1-minute smoke run).
"""

import argparse
import json
import lzma
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _results import command

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"


# ---------------------------------------------------------------------------------------------------
# synthetic files
def write_binary(path, target_mb, n_features, seed):
    """Binary Zipf bag-of-words by the library's writer (values '1'), at least ``target_mb`` MB.

    Returns (n_rows, n_bytes). The row count comes from the bytes per row of a 20,000-row sample.
    """
    from streamlearn.datasets import write_svmlight_stream

    sample = write_svmlight_stream(path, 20_000, n_features, nnz_per_row=100, random_state=seed)
    n_rows = max(1000, int(target_mb * 1e6 / (sample / 20_000) * 1.01))
    n_bytes = write_svmlight_stream(path, n_rows, n_features, nnz_per_row=100, random_state=seed, chunk_size=20_000)
    return n_rows, n_bytes


def _digits_matrix(v, width):
    """uint8 (len(v), width) right-aligned decimal digits of non-negative ints, 0 bytes as left padding."""
    M = np.zeros((len(v), width), dtype=np.uint8)
    q = v.astype(np.int64)
    for k in range(width):
        d = (q % 10).astype(np.uint8) + 48
        if k > 0:
            d *= q > 0
        M[:, width - 1 - k] = d
        q //= 10
    return M


def write_real_valued(path, target_mb, n_features, seed, *, nnz_per_row=40):
    """Real-valued rows ``label idx:0.dddddd ...`` built with array operations (no loop per value)."""
    rng = np.random.default_rng(seed)
    n_bytes = 0
    n_rows = 0
    w_idx = len(str(n_features))
    with open(path, "wb") as f:
        while n_bytes < target_mb * 1e6:
            rows = 20_000
            k = rng.poisson(nnz_per_row - 1, size=rows) + 1
            # Zipf-like column frequencies: inverse-CDF of a power law, unique and sorted per row
            u = rng.random(int(k.sum()))
            cols = np.minimum((n_features**u).astype(np.int64), n_features) - 1  # log-uniform ~ Zipf(1)
            row_of = np.repeat(np.arange(rows), k)
            key = np.unique(row_of * n_features + cols)
            row_of, cols = key // n_features, key % n_features
            counts = np.bincount(row_of, minlength=rows)
            labels = np.where(rng.random(rows) < 0.5, -1, 1)
            vals = rng.integers(0, 10**6, size=len(cols))
            n_tok = rows + len(cols)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) + np.arange(rows)  # label token slots
            is_lab = np.zeros(n_tok, dtype=bool)
            is_lab[starts] = True
            W = 1 + w_idx + 1 + 8
            M = np.zeros((n_tok, W), dtype=np.uint8)
            feat = M[~is_lab]
            feat[:, 0] = ord(" ")
            feat[:, 1 : 1 + w_idx] = _digits_matrix(cols + 1, w_idx)
            feat[:, 1 + w_idx] = ord(":")
            feat[:, 2 + w_idx] = ord("0")
            feat[:, 3 + w_idx] = ord(".")
            feat[:, 4 + w_idx :] = _digits_matrix(vals, 6)  # 6 digits; the 0-byte padding becomes "0" below
            feat[:, 4 + w_idx :][feat[:, 4 + w_idx :] == 0] = ord("0")
            M[~is_lab] = feat
            lab = np.zeros((rows, W), dtype=np.uint8)
            lab[:, 0] = ord("\n")
            lab[labels < 0, 1] = ord("-")
            lab[:, 2] = ord("1")
            M[is_lab] = lab
            flat = M.ravel()
            text = flat[flat != 0][1:].tobytes() + b"\n"
            f.write(text)
            n_bytes += len(text)
            n_rows += rows
    return n_rows, n_bytes


def write_repr_doubles(path, target_mb, n_features, seed, *, nnz_per_row=20):
    """Rows of full-precision doubles as Python writes them (``repr``, up to 17 significant digits)."""
    rng = np.random.default_rng(seed)
    n_bytes = 0
    n_rows = 0
    with open(path, "wb") as f:
        while n_bytes < target_mb * 1e6:
            rows = 5_000
            lines = []
            for _ in range(rows):
                cols = np.sort(rng.choice(n_features, size=nnz_per_row, replace=False)) + 1
                vals = rng.normal(size=nnz_per_row) * 10.0 ** rng.integers(-8, 9, size=nnz_per_row)
                lab = "1" if rng.random() < 0.5 else "-1"
                lines.append(lab + " " + " ".join(f"{c}:{v!r}" for c, v in zip(cols.tolist(), vals.tolist())))
            text = ("\n".join(lines) + "\n").encode()
            f.write(text)
            n_bytes += len(text)
            n_rows += rows
    return n_rows, n_bytes


# ---------------------------------------------------------------------------------------------------
# full load, ours vs scikit-learn
def full_load_case(name, path, n_features, repeats):
    from sklearn.datasets import load_svmlight_file

    from streamlearn.datasets import load_svmlight

    size = os.path.getsize(path)
    with open(path, "rb") as f:  # warm the page cache for both
        while f.read(1 << 24):
            pass
    ours, theirs, ours_cpu, theirs_cpu = [], [], [], []
    X = Xs = None
    for r in range(repeats):
        order = ("ours", "sklearn") if r % 2 == 0 else ("sklearn", "ours")
        for who in order:
            X = Xs = None  # free the previous result before timing
            t, c = time.perf_counter(), time.process_time()
            if who == "ours":
                X, y = load_svmlight(path, n_features=n_features, zero_based=False)
                ours.append(time.perf_counter() - t)
                ours_cpu.append(time.process_time() - c)
            else:
                Xs, ys = load_svmlight_file(str(path), n_features=n_features, zero_based=False)
                theirs.append(time.perf_counter() - t)
                theirs_cpu.append(time.process_time() - c)
    if X is None:
        X, y = load_svmlight(path, n_features=n_features, zero_based=False)
    if Xs is None:
        Xs, ys = load_svmlight_file(str(path), n_features=n_features, zero_based=False)
    equal = bool(
        X.shape == Xs.shape
        and np.array_equal(X.indptr, Xs.indptr)
        and np.array_equal(X.indices, Xs.indices)
        and np.array_equal(X.data, Xs.data)
        and np.array_equal(y, ys)
    )
    if not equal:
        raise AssertionError(f"{name}: load_svmlight and load_svmlight_file disagree")
    row = {
        "dataset": name,
        "mb": size / 1e6,
        "rows": X.shape[0],
        "n_features": X.shape[1],
        "nnz": int(X.nnz),
        "ours_s": min(ours),
        "sklearn_s": min(theirs),
        "ours_all_s": ours,
        "sklearn_all_s": theirs,
        "ours_cpu_all_s": ours_cpu,
        "sklearn_cpu_all_s": theirs_cpu,
        "equal": equal,
    }
    row["ours_mb_s"] = row["mb"] / row["ours_s"]
    row["sklearn_mb_s"] = row["mb"] / row["sklearn_s"]
    row["ratio"] = row["sklearn_s"] / row["ours_s"]
    row["cpu_ratio"] = min(theirs_cpu) / min(ours_cpu)
    print(
        f"  {name:<22} {row['mb']:8.1f} MB  ours {row['ours_mb_s']:7.1f} MB/s  sklearn "
        f"{row['sklearn_mb_s']:6.1f} MB/s  x{row['ratio']:.1f} (CPU time x{row['cpu_ratio']:.1f})",
        flush=True,
    )
    return row


# ---------------------------------------------------------------------------------------------------
# streaming, in a child process
def peak_rss_bytes():
    """Peak resident set size of this process image: VmHWM on Linux (ru_maxrss elsewhere).

    ``ru_maxrss`` is not used on Linux because it survives ``exec``: a child started by a parent holding
    a few hundred MB reports at least the parent's RSS at fork time.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def child_stream(path, n_features, mode, chunk_size):
    import io

    from streamlearn.datasets import iter_svmlight
    from streamlearn.linear_model import PassiveAggressiveClassifier

    # warm-up: load the numba kernels (reader and learner) from their cache before measuring
    clf = PassiveAggressiveClassifier()
    for X, y in iter_svmlight(io.BytesIO(b"1 1:1\n-1 2:1\n"), chunk_size=2, n_features=n_features, zero_based=False):
        clf.partial_fit(X, y, classes=[-1, 1])
    base_rss = peak_rss_bytes()
    clf = PassiveAggressiveClassifier()
    rows = nnz = 0
    t_learn = 0.0
    correct = 0
    t0 = time.perf_counter()
    for X, y in iter_svmlight(path, chunk_size=chunk_size, n_features=n_features, zero_based=False):
        rows += X.shape[0]
        nnz += X.nnz
        if mode == "pa":
            t = time.perf_counter()
            if rows > X.shape[0]:  # progressive validation on the chunk before learning from it
                correct += int((clf.predict(X) == y).sum())
            clf.partial_fit(X, y, classes=[-1, 1])
            t_learn += time.perf_counter() - t
    wall = time.perf_counter() - t0
    peak = peak_rss_bytes()
    out = {
        "mode": mode,
        "rows": rows,
        "nnz": nnz,
        "wall_s": wall,
        "learn_s": t_learn,
        "peak_rss_bytes": peak,
        "rss_after_imports_bytes": base_rss,
    }
    if mode == "pa":
        out["progressive_accuracy_after_first_chunk"] = correct / max(rows - chunk_size, 1)
    print(json.dumps(out))


def stream_case(path, n_features, mode, chunk_size):
    cmd = [
        sys.executable,
        __file__,
        "--child",
        str(path),
        "--child-mode",
        mode,
        "--child-n-features",
        str(n_features),
        "--chunk-size",
        str(chunk_size),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=REPO)
    out = json.loads(res.stdout.strip().splitlines()[-1])
    size = os.path.getsize(path)
    out["mb"] = size / 1e6
    out["mb_s"] = out["mb"] / out["wall_s"]
    out["rows_s"] = out["rows"] / out["wall_s"]
    print(
        f"  stream {mode:<7} {out['mb']:8.0f} MB  {out['mb_s']:6.1f} MB/s  {out['rows_s']:9.0f} rows/s  "
        f"peak RSS {out['peak_rss_bytes'] / 2**20:6.0f} MiB (after imports "
        f"{out['rss_after_imports_bytes'] / 2**20:.0f} MiB)",
        flush=True,
    )
    return out


# ---------------------------------------------------------------------------------------------------
def write_markdown(res, path):
    a = res["args"]
    lines = [
        "# LIBSVM reader speed",
        "",
        f"Command: `{res['command']}`  ",
        f"Machine: {res['machine']}; numba {res['versions']['numba']}, scikit-learn "
        f"{res['versions']['sklearn']}, numpy {res['versions']['numpy']}. {res['date']}.",
        "",
        "## Full load: `load_svmlight` vs `sklearn.datasets.load_svmlight_file`",
        "",
        f"Same plain file, same run, alternating, best of {a['repeats']} (wall clock; the CPU-time ratio is a "
        "cross-check on a shared machine); MB = 10^6 bytes of uncompressed text. Results checked identical "
        "(data, indices, indptr, y) before reporting.",
        "",
        "| file | MB | rows | nnz | ours MB/s | sklearn MB/s | ours / sklearn, wall | CPU time ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in res["full_load"]:
        lines.append(
            f"| {r['dataset']} | {r['mb']:.1f} | {r['rows']:,} | {r['nnz']:,} | {r['ours_mb_s']:.1f} | "
            f"{r['sklearn_mb_s']:.1f} | **{r['ratio']:.1f}x** | {r['cpu_ratio']:.1f}x |"
        )
    for s in res.get("skipped", []):
        lines.append(f"| {s} | skipped: shared data absent | | | | | | |")
    if res.get("stream"):
        st = res["stream"]
        lines += [
            "",
            f"## Streaming a {st['file_mb'] * 1e6 / 2**30:.2f} GiB ({st['file_mb'] / 1000:.2f} GB) file through "
            "`iter_svmlight`",
            "",
            f"Synthetic binary bag-of-words ({st['rows']:,} rows, {st['n_features']:,} features, "
            f"{st['nnz']:,} non-zeros, written by `write_svmlight_stream` in {st['write_s']:.0f} s), "
            f"`iter_svmlight(path, chunk_size={a['chunk_size']:,}, n_features={st['n_features']:,}, "
            "zero_based=False)`, each mode in a fresh subprocess. Peak RSS = `VmHWM` of the child "
            "(interpreter and libraries included). Target: peak RSS <= 500 MB.",
            "",
            "| mode | MB/s | rows/s | wall s | learner s | RSS after imports MiB | peak RSS MiB |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for r in st["runs"]:
            name = {"read": "reader only", "pa": "reader + PA partial_fit"}[r["mode"]]
            lines.append(
                f"| {name} | {r['mb_s']:.1f} | {r['rows_s']:,.0f} | {r['wall_s']:.1f} | "
                f"{r['learn_s']:.1f} | {r['rss_after_imports_bytes'] / 2**20:.0f} | "
                f"**{r['peak_rss_bytes'] / 2**20:.0f}** |"
            )
        pa = [r for r in st["runs"] if r["mode"] == "pa"]
        if pa:
            lines += [
                "",
                f"Progressive accuracy of PA over the stream (each chunk predicted before it is "
                f"learnt): {pa[0]['progressive_accuracy_after_first_chunk']:.3f}.",
            ]
    lines += [
        "",
        f"Load average during the run (1 min, at start / end): {res.get('load_start', '?')} / "
        f"{res.get('load_end', '?')} on {os.cpu_count()} cores.",
        "",
    ]
    Path(path).write_text("\n".join(lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per reader and file (best is kept)")
    ap.add_argument("--synthetic-mb", type=float, default=200, help="size of each synthetic full-load file")
    ap.add_argument("--repr-mb", type=float, default=50, help="size of the full-precision-doubles file")
    ap.add_argument("--stream-gib", type=float, default=2.0, help="size of the streamed file in GiB (0: skip)")
    ap.add_argument("--chunk-size", type=int, default=10_000, help="rows per chunk when streaming")
    ap.add_argument("--tmp", default=tempfile.gettempdir(), help="directory for the temporary files")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run, about a minute)")
    ap.add_argument("--out", default=str(RESULTS / "reader_speed"), help="results path without suffix")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-mode", help=argparse.SUPPRESS)
    ap.add_argument("--child-n-features", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child_stream(args.child, args.child_n_features, args.child_mode, args.chunk_size)
    if args.quick:
        args.synthetic_mb, args.repr_mb, args.stream_gib, args.repeats = 10, 3, 0.05, 2

    import numba
    import sklearn

    from streamlearn.datasets import load_svmlight, shared_data_path

    load_svmlight(__import__("io").BytesIO(b"1 1:1\n"))  # numba kernel: cache load / compile
    work = Path(tempfile.mkdtemp(prefix="reader_speed_", dir=args.tmp))
    res = {
        "command": command("reader_speed.py", argv),
        "args": vars(args),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}",
        "versions": {"numba": numba.__version__, "sklearn": sklearn.__version__, "numpy": np.__version__},
        "full_load": [],
        "skipped": [],
        "load_start": round(os.getloadavg()[0], 1),
    }
    try:
        print("full load (ours vs scikit-learn):", flush=True)
        for name, rel, nf in [("a9a", "a9a/a9a.xz", 123), ("farm-ads", "farm-ads/farm-ads-vect.xz", 54_877)]:
            try:
                src = shared_data_path(rel)
            except FileNotFoundError as e:
                print(f"  {name}: skipped ({e})")
                res["skipped"].append(name)
                continue
            plain = work / name
            with lzma.open(src) as fi, open(plain, "wb") as fo:
                shutil.copyfileobj(fi, fo, 1 << 20)
            res["full_load"].append(full_load_case(name, plain, nf, args.repeats))
            plain.unlink()
        for name, writer, mb, nf in [
            ("synthetic binary", write_binary, args.synthetic_mb, 1_000_000),
            ("synthetic 0.dddddd", write_real_valued, args.synthetic_mb, 1_000_000),
            ("synthetic repr doubles", write_repr_doubles, args.repr_mb, 100_000),
        ]:
            p = work / name.replace(" ", "_")
            t = time.perf_counter()
            writer(p, mb, nf, 0)
            print(f"  (wrote {name}: {os.path.getsize(p) / 1e6:.0f} MB in {time.perf_counter() - t:.1f} s)")
            res["full_load"].append(full_load_case(name, p, nf, args.repeats))
            p.unlink()

        if args.stream_gib > 0:
            nf = 1_000_000
            p = work / "stream.svm"
            free = shutil.disk_usage(work).free
            if free < args.stream_gib * 2**30 * 1.5:
                raise SystemExit(f"not enough space in {work}: {free / 1e9:.1f} GB free")
            t = time.perf_counter()
            n_rows, n_bytes = write_binary(p, args.stream_gib * 2**30 / 1e6, nf, 1)
            write_s = time.perf_counter() - t
            print(f"streaming (wrote {n_bytes / 2**30:.2f} GiB, {n_rows:,} rows in {write_s:.0f} s):", flush=True)
            runs = [stream_case(p, nf, mode, args.chunk_size) for mode in ("read", "pa")]
            res["stream"] = {
                "file_mb": n_bytes / 1e6,
                "rows": n_rows,
                "n_features": nf,
                "nnz": runs[0]["nnz"],
                "write_s": write_s,
                "runs": runs,
            }
            p.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res["load_end"] = round(os.getloadavg()[0], 1)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(res, indent=1))
    write_markdown(res, out.with_suffix(".md"))
    print(f"wrote {out}.json and {out}.md")


if __name__ == "__main__":
    main()
