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
from types import ModuleType

__all__ = ["get", "names"]

_MODULES = {
    "demo": "streamlearn.experiments.demo",
    "sparsity": "streamlearn.experiments.sparsity",
    "occfm": "streamlearn.experiments.occfm",
    "rfd-figure1": "streamlearn.experiments.rfd_figure1",
    "rfd-table2": "streamlearn.experiments.rfd_table2",
    "zoo": "streamlearn.experiments.zoo",
}


def names() -> list[str]:
    """Registered experiment names, sorted.

    >>> from streamlearn import experiments
    >>> "rfd-table2" in experiments.names()
    True
    """
    return sorted(_MODULES)


def get(name: str) -> ModuleType:
    """The module of experiment ``name`` (``KeyError`` with the known names otherwise).

    >>> from streamlearn import experiments
    >>> experiments.get("sparsity").HELP.split(" (")[0]
    'sparse learners'
    """
    if name not in _MODULES:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(names())}")
    return importlib.import_module(_MODULES[name])
