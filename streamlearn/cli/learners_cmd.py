"""``streamlearn learners``: names, one-line descriptions, parameters with defaults."""

import math

from ..learners import DEFAULTS_WHY, LEARNERS, learner_parameters
from ._common import print_json


def add_parser(sub):
    p = sub.add_parser("learners", help="list the learners with their parameters and defaults")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=run)


def _shown(params):
    """Infinite values as text ("inf", as -p takes them): JSON has no inf, and null would read as None."""
    return {k: str(v) if isinstance(v, float) and not math.isfinite(v) else v for k, v in params.items()}


def run(args):
    rows = []
    for name in sorted(LEARNERS):
        spec = LEARNERS[name]
        rows.append(
            {
                "name": name,
                "task": spec.task,
                "description": spec.description,
                "class": spec.target.split(":")[1],
                "fixed": spec.fixed,
                "parameters": learner_parameters(name),
                "scale": spec.scale,
                "scale_target": spec.target_scale,
                "defaults_why": DEFAULTS_WHY.get(name, ""),
            }
        )
    if args.json:
        print_json([dict(row, fixed=_shown(row["fixed"]), parameters=_shown(row["parameters"])) for row in rows])
        return 0
    for row in rows:
        params = " ".join(f"{k}={v!r}" for k, v in row["parameters"].items())
        print(f"{row['name']:<20} {row['description']}")
        scale = f"; --scale {row['scale']}" if row["scale"] != "none" else ""
        scale += f"; --scale-target {row['scale_target']}" if row["scale_target"] != "none" else ""
        print(f"{'':<20} [{row['task']}; {row['class']}{scale}] {params}")
        if row["defaults_why"]:
            print(f"{'':<20} (defaults: {row['defaults_why']})")
    return 0
