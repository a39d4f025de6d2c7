"""``streamlearn experiment NAME ...`` and ``streamlearn demo`` (the main job of ``make run``)."""

import os
import sys

from .. import experiments
from ._common import add_output_options, format_table, print_json, show_progress
from ._data import output, plot_output


def add_parser(sub):
    p = sub.add_parser(
        "experiment",
        help="run a named experiment (paper reproductions, sweeps)",
        description="Run a named experiment; --json prints its result table as a JSON list.",
    )
    esub = p.add_subparsers(dest="experiment", metavar="NAME")
    esub.required = True
    for name in experiments.names():
        _add_experiment(esub, name)
    d = sub.add_parser(
        "demo",
        help="the main job: every learner, one pass over the bundled a9a, scored on a9a.t (same as 'experiment demo')",
    )
    module = experiments.get("demo")
    module.add_arguments(d)
    add_output_options(d)
    d.set_defaults(func=run, experiment="demo")


def _add_experiment(esub, name):
    module = experiments.get(name)
    ep = esub.add_parser(name, help=module.HELP, description=module.HELP)
    module.add_arguments(ep)
    add_output_options(ep)
    ep.set_defaults(func=run)


def run(args):
    module = experiments.get(args.experiment)
    args.progress = show_progress(args)
    # the files an experiment reads (--data, --test) are never overwritten by the files it writes
    inputs = [p for name in ("data", "test") for p in _as_list(getattr(args, name, None)) if os.path.isfile(p)]
    plot_out = None
    if args.plot and hasattr(module, "plot"):  # checked before the run, written aside and renamed at the end
        plot_out = plot_output(args.plot, inputs)
    markdown = None
    if getattr(args, "markdown", None):  # checked before the run; the experiment writes it aside and renames it
        markdown = output(args.markdown, inputs, "Markdown file", others=[plot_out])
        markdown.discard()
    if getattr(args, "curves", None):  # rfd-table2's second figure, written by the experiment through this
        args.curves_output = plot_output(args.curves, inputs, "--curves", "curves figure", others=[plot_out, markdown])
    rows = module.run(args)
    if getattr(args, "write_data", None) is not None:  # ``demo --write-data DIR``: files written, nothing to plot
        if args.json:
            print_json(rows)
        elif not args.quiet:
            for row in rows:
                print(f"wrote {row['file']} ({row['bytes']:,} bytes)")
        return 0
    if args.plot:
        if plot_out is None:
            print(f"streamlearn: experiment {args.experiment} has no plot; --plot ignored", file=sys.stderr)
        else:
            with plot_out.path_for_writing(suffix=plot_out.suffix) as tmp:
                module.plot(rows, tmp, args)
    if args.json:
        print_json(rows)
    elif not args.quiet:
        print(format_table(rows, columns=getattr(module, "COLUMNS", None)))
        if args.plot:
            print(f"plot written to {args.plot}")
    return 0


def _as_list(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
