"""Fuzzing run: >= 10,000 generated cases over the LIBSVM and CSV readers, model files, dict rows and the command line.

Runs the property-based tests of ``tests/fuzz`` under the large hypothesis profile (``fuzz-large``, random
seed, no example database) and reports, per target, the number of generated cases, their outcomes, the
failing properties with their minimal examples, tracebacks and wrong results. The same tests run in the
test suite under the small, deterministic profile. Writes ``benchmarks/results/fuzz.md`` and ``fuzz.json``.

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/fuzz.py`` (a few minutes).
"""

import argparse
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))


def main():
    import hypothesis
    from hypothesis import settings

    # standard input is empty, as under pytest: a generated command line reading '-' (standard input) reads
    # nothing, whatever this run was started from
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    sys.stdin = open(os.devnull)  # noqa: SIM115 (for the rest of the process)

    from tests.fuzz import _profiles

    settings.load_profile("fuzz-large")  # before the test modules are imported: they size their runs from it
    from tests.fuzz import test_fuzz_cli, test_fuzz_csv, test_fuzz_hashing, test_fuzz_persist, test_fuzz_svmlight

    tests = {
        "LIBSVM reader": [
            test_fuzz_svmlight.test_valid_files_read_as_sklearn_reads_them,
            test_fuzz_svmlight.test_mutated_files_equal_sklearn_or_name_the_line,
        ],
        "model files": [
            test_fuzz_persist.test_intact_files_load_identical,
            test_fuzz_persist.test_damaged_model_file_is_identical_or_a_clean_error,
            test_fuzz_persist.test_damaged_deflate_stream_is_a_clean_error,
            test_fuzz_persist.test_every_truncation_is_a_clean_error,
        ],
        "CSV reader": [test_fuzz_csv.test_csv_files_read_or_raise_one_line_naming_the_file],
        "dict rows": [test_fuzz_hashing.test_dict_rows_hash_as_the_twin_or_name_the_row_and_key],
        "CLI arguments": [
            test_fuzz_cli.test_cli_arguments_exit_cleanly,
            test_fuzz_cli.test_normal_runs_exit_0_and_user_errors_exit_2,
        ],
    }
    rows, failures = [], []
    t_all = time.perf_counter()
    for target, funcs in tests.items():
        t0 = time.perf_counter()
        for func in funcs:
            try:
                func()
            except Exception as exc:  # noqa: BLE001 (a failed property, minimised by hypothesis: reported)
                failures.append(
                    {
                        "target": target,
                        "test": func.__name__,
                        "error": "".join(traceback.format_exception_only(exc)).strip()[:2000],
                    }
                )
        outcomes = dict(_profiles.OUTCOMES[target])
        rows.append(
            {
                "target": target,
                "cases": sum(outcomes.values()),
                "outcomes": outcomes,
                "tracebacks": outcomes.get("traceback", 0),
                "wrong": outcomes.get("wrong", 0),
                "known_tracebacks": outcomes.get("known traceback", 0),
                "failed_properties": sum(f["target"] == target for f in failures),
                "seconds": round(time.perf_counter() - t0, 1),
            }
        )
    total = {
        "cases": sum(r["cases"] for r in rows),
        "tracebacks": sum(r["tracebacks"] for r in rows),
        "wrong": sum(r["wrong"] for r in rows),
        "known_tracebacks": sum(r["known_tracebacks"] for r in rows),
        "failed_properties": len(failures),
        "seconds": round(time.perf_counter() - t_all, 1),
    }
    command = "OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/fuzz.py"
    out = {
        "command": command,
        "profile": "fuzz-large",
        "hypothesis": hypothesis.__version__,
        "python": platform.python_version(),
        "load_average_1min": os.getloadavg()[0],
        "total": total,
        "targets": rows,
        "failures": failures,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fuzz.json").write_text(json.dumps(out, indent=1) + "\n")
    intro = (
        f"Command: `{command}` (hypothesis {hypothesis.__version__}, profile `fuzz-large`, random seed; "
        f"1-minute load average {out['load_average_1min']:.1f} on 2 cores). The same properties run in "
        "the test suite under the small deterministic profile (`tests/fuzz`)."
    )
    lines = [
        "# Fuzzing: LIBSVM and CSV readers, model files, dict rows, command line",
        "",
        intro,
        "",
        "| target | generated cases | tracebacks | wrong results | failed properties | outcomes | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(r["outcomes"].items(), key=lambda kv: -kv[1]))
        lines.append(
            f"| {r['target']} | {r['cases']} | {r['tracebacks']} | {r['wrong']} | {r['failed_properties']} "
            f"| {outcomes} | {r['seconds']} |"
        )
    lines.append(
        f"| **total** | **{total['cases']}** | **{total['tracebacks']}** | **{total['wrong']}** | "
        f"**{total['failed_properties']}** | | {total['seconds']} |"
    )
    lines += [
        "",
        (
            "Outcomes: *equal to scikit-learn* (same X and y bit for bit), *both refuse* (both readers raise; "
            "ours names the file and the line), *documented difference* (a difference listed in "
            "`load_svmlight`'s docstring: NaN/inf, digit separators, `-0` indices, `qid` tokens that are not "
            "`qid:<int>`, indices above 2**31 - 1), "
            "*identical* (a damaged model file still loads as the same model; dict rows hash to the plain-Python "
            "hasher's matrix bit for bit), *clean error* (one-line `ModelFileError`; for dict rows a one-line "
            "`ValueError` or `TypeError` naming the row and the key; for CSV files a one-line `ValueError` naming "
            "the file), *read* (a generated or damaged CSV file read: finite values, one label per row), "
            "*exit N* (the command returned exit code N or argparse exited with it), "
            "*known traceback* (a traceback in a subcommand's error handling that a regression test in "
            "tests/fuzz/test_fuzz_cli.py tracks)."
        ),
    ]
    if failures:
        lines += ["", "## Failed properties (minimal examples)", ""]
        lines += [f"- {f['target']} / `{f['test']}`: `{f['error'][:600]}`" for f in failures]
    (RESULTS / "fuzz.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if failures or total["tracebacks"] or total["wrong"] else 0


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # (no options: --help)
    sys.exit(main())
