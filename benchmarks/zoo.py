"""The zoo benchmark: every learner with its CLI defaults on the raw data-set zoo, against Vowpal Wabbit's
defaults and a tuned batch ceiling; writes benchmarks/results/zoo.md/.json and zoo.png.

    STREAMLEARN_SHARED_DATA=/path/to/shared/data python benchmarks/zoo.py [--quick] [--datasets a,b]

Same as ``streamlearn experiment zoo`` (which prints the table instead of writing the files). The code lives
in streamlearn/experiments/zoo.py.
"""

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from streamlearn.experiments import zoo

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    zoo.add_arguments(parser)
    parser.add_argument(
        "--out", default=None, help="output stem (default benchmarks/results/zoo, zoo_scale_<scaler> with --scale)"
    )
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = str(RESULTS / ("zoo" if args.scale == "default" else f"zoo_scale_{args.scale}"))
    args.verbose_log = True
    t0 = time.perf_counter()
    rows = zoo.run(args)
    seconds = time.perf_counter() - t0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    zoo.plot(rows, out.with_suffix(".png"))
    command = "python benchmarks/zoo.py " + " ".join(sys.argv[1:] if argv is None else argv)
    meta = {
        "command": command.strip(),
        "seconds": seconds,
        "scale": args.scale,
        "python": platform.python_version(),
        "skipped_datasets": args._skipped,
    }
    out.with_suffix(".json").write_text(
        json.dumps(
            {"meta": meta, "summary": zoo.summary(rows), "shuffles": zoo.shuffles_summary(rows), "rows": rows},
            indent=1,
            default=float,
        )
    )
    out.with_suffix(".md").write_text(zoo.report_markdown(rows, meta, png=out.with_suffix(".png").name))
    print(f"{len(rows)} rows in {seconds:.0f} s; wrote {out}.md/.json/.png")


if __name__ == "__main__":
    main()
