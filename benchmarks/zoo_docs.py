"""Render the zoo tables into the documentation from benchmarks/results/zoo.json (never typed by hand).

    python benchmarks/zoo_docs.py [--check]

Updates, between their ``<!-- NAME:start -->`` / ``<!-- NAME:end -->`` markers,
docs/user-guide/choosing-a-learner.md (``zoo-choice``: which learner for which data) and
docs/benchmarks/zoo.md (``zoo-summary``, ``zoo-accuracy``, ``zoo-regression``, ``zoo-rescale``, ``zoo-command``),
and copies benchmarks/results/zoo.png to docs/benchmarks/zoo.png. ``--check`` only reports whether the pages
are up to date (exit code 1 when not).
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

from streamlearn.experiments import zoo

ROOT = Path(__file__).resolve().parents[1]


def render(results):
    """``{page path: new text}`` for the two pages, from the zoo.json content ``results``."""
    rows, meta = results["rows"], results["meta"]
    command = (
        f"`STREAMLEARN_SHARED_DATA=/path/to/shared/data {meta['command']}` ({meta['seconds']:.0f} s on "
        "a shared 2-core machine)"
    )
    tables = {
        ROOT / "docs/user-guide/choosing-a-learner.md": {"zoo-choice": zoo.learner_choice_table(rows)},
        ROOT / "docs/benchmarks/zoo.md": {
            "zoo-command": command,
            "zoo-summary": zoo.summary_markdown(rows),
            "zoo-accuracy": zoo.scores_markdown(rows, "classification"),
            "zoo-regression": zoo.scores_markdown(rows, "regression"),
            "zoo-rescale": zoo.rescale_markdown(rows),
        },
    }
    out = {}
    for page, blocks in tables.items():
        text = page.read_text()
        for marker, table in blocks.items():
            text = zoo.replace_between_markers(text, marker, table)
        out[page] = text
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(ROOT / "benchmarks/results/zoo.json"))
    parser.add_argument("--check", action="store_true", help="only check that the pages are up to date")
    args = parser.parse_args(argv)
    pages = render(json.loads(Path(args.results).read_text()))
    stale = [p for p, text in pages.items() if p.read_text() != text]
    if args.check:
        for p in stale:
            print(f"{p.relative_to(ROOT)} is not up to date with {args.results}: run python benchmarks/zoo_docs.py")
        return 1 if stale else 0
    for p, text in pages.items():
        p.write_text(text)
    png = Path(args.results).with_suffix(".png")
    if png.is_file():
        shutil.copyfile(png, ROOT / "docs/benchmarks/zoo.png")
    print(f"updated {len(stale)} page(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
