"""Markdown table from ``streamlearn experiment rfd-table2 --json`` outputs (one or several JSON files).

    python benchmarks/rfd_table2_report.py OUT.md TITLE COMMAND IN1.json [IN2.json ...]

Rows keep the order of the inputs; the robustness columns are the spread of the mean test accuracy over the
whole alpha0 grid and over alpha0 <= 1e4 (see streamlearn/evaluation/experiments/rfd_table2.py).
"""

import json
import sys


def _f(v, fmt):
    return "" if v is None else format(v, fmt)


def main():
    out, title, command, *inputs = sys.argv[1:]
    from streamlearn.evaluation.experiments.rfd_table2 import _PAPER, _paper_figures

    rows, seen = [], set()
    for path in inputs:
        for r in json.load(open(path)):
            if r["ell"] is None and r["method"] in seen:
                continue  # adagrad / full-on repeated by per-ell runs: keep the first
            seen.add(r["method"])
            rows.append(r)
    for r in rows:  # runs of a single sketch size made before the experiment mapped it to the paper's column
        if r["paper_accuracy"] is None:
            r["paper_accuracy"], r["paper_seconds"] = _paper_figures(_PAPER.get(r["data"]), r["data"], r["method"],
                                                                     r["ell"])
    r0 = rows[0]
    lines = [f"# {title}", "",
             f"Command(s): {command} ({r0['splits']} random 70/30 split(s), n_train={r0['n_train']}, "
             f"d={r0['n_features']}). Shared, loaded 2-core machine: the µs column is not comparable with the "
             "paper's Matlab timings; benchmarks/son_speed.py has same-run ratios against VW.", "",
             "| method | ell | best alpha0 | test acc % (mean ± std over splits) | paper % | diff | "
             "spread over alpha0 grid (pt) | spread over alpha0 <= 1e4 (pt) | final alpha | acc by alpha0 | "
             "µs/example | paper Table 3 µs |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        pa = r["paper_accuracy"]
        diff = "" if pa is None else f"{r['test_accuracy'] - pa:+.2f}"
        grid = ", ".join(f"{k}: {v:.2f}" for k, v in r["accuracy_by_alpha0"].items())
        ps = "" if r.get("paper_seconds") is None else f"{1e6 * r['paper_seconds']:.0f}"
        lines.append(
            f"| {r['method']} | {'' if r['ell'] is None else r['ell']} | {r['best_alpha0']:g} | "
            f"{r['test_accuracy']:.2f} ± {r['test_accuracy_std']:.2f} | {_f(pa, '.2f')} | {diff} | "
            f"{r['alpha0_spread']:.2f} | {_f(r.get('alpha0_spread_le_1e4'), '.2f')} | "
            f"{_f(r.get('final_alpha'), '.4g')} | {grid} | {1e6 * r['seconds_per_example']:.0f} | {ps} |")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
