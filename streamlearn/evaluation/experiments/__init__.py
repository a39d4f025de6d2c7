"""Experiments run by ``streamlearn experiment NAME`` (paper reproductions, sweeps, the demo).

Each experiment is a module exposing:

* ``HELP``: a one-line description;
* ``add_arguments(parser)``: its own command-line options (``--json``, ``--plot PNG`` and ``--quiet``
  are added by the CLI for every experiment);
* ``run(args) -> list[dict]``: computes the result table as a list of row dicts (JSON-serialisable);
* optionally ``plot(rows, path, args)``: writes a PNG when ``--plot`` is given.

Register a new experiment by adding its module to ``_MODULES`` (imported lazily, so an experiment's
dependencies load only when it runs).
"""

import importlib

_MODULES = {
    "demo": "streamlearn.evaluation.experiments.demo",
    "sparsity": "streamlearn.evaluation.experiments.sparsity",
    "occfm": "streamlearn.evaluation.experiments.occfm",
    "rfd-figure1": "streamlearn.evaluation.experiments.rfd_figure1",
    "rfd-table2": "streamlearn.evaluation.experiments.rfd_table2",
    "zoo": "streamlearn.experiments.zoo",
}


def names():
    """Registered experiment names, sorted."""
    return sorted(_MODULES)


def get(name):
    """The module of experiment ``name`` (``KeyError`` with the known names otherwise)."""
    if name not in _MODULES:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(names())}")
    return importlib.import_module(_MODULES[name])
