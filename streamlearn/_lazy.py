"""Lazy (PEP 562) attributes for the package ``__init__`` modules.

``import streamlearn`` (and every ``import streamlearn.X``, which runs the package ``__init__`` first) would
otherwise import every subpackage, and with them about a hundred numba dispatchers, ``sklearn.metrics`` and
scipy's optimisers, although one command needs one learner and one reader (see
``python -X importtime -c "import streamlearn"``). The public names stay where they are; they are imported
on first access.

A saved model names its class by public path (``streamlearn.facto.FMClassifier``); classes register with
:mod:`streamlearn.persist` when their module is imported, and ``persist.load`` imports that public module on
a miss, so ``streamlearn.load(path)`` works whatever has been imported so far.
"""

import importlib

__all__ = ["lazy_attributes"]


def lazy_attributes(module_name, namespace, names):
    """``(__getattr__, __dir__)`` for a package: ``names`` maps a public attribute to the module (relative
    to ``module_name``, e.g. ``"._sparse"``; ``""`` for a subpackage of that name) that defines it.

    The imported value is stored in ``namespace`` (the package's ``globals()``), so later accesses are plain
    attribute reads.
    """

    def __getattr__(name):
        try:
            where = names[name]
        except KeyError:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}") from None
        if where == "":
            value = importlib.import_module(f"{module_name}.{name}")
        else:
            value = getattr(importlib.import_module(where, module_name), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
