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

__all__ = ["lazy_attributes", "lazy_exports"]


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


def lazy_exports(module_name, namespace, where):
    """``(__getattr__, __dir__, __all__)`` for a package whose public names are listed by defining module:
    ``where`` maps a module (as in :func:`lazy_attributes`) to the names it defines; ``__all__`` lists them in
    the order of ``where``.

    >>> ns = {}
    >>> getattr_, dir_, names = lazy_exports("streamlearn", ns, {".losses": ["LOSSES", "loss_code"]})
    >>> names, "loss_code" in dir_(), "LOSSES" in ns, callable(getattr_("loss_code")), "loss_code" in ns
    (['LOSSES', 'loss_code'], True, False, True, True)
    """
    names = {name: module for module, defined in where.items() for name in defined}
    return (*lazy_attributes(module_name, namespace, names), list(names))
