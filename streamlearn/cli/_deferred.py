"""Modules that our dependencies import at start-up but the commands rarely use, loaded on first use instead.

* ``import sklearn.base`` (the scaler pipeline, the model-selection helpers) runs ``sklearn.utils.fixes``,
  which imports ``scipy.stats`` and ``pandas`` for a few helpers called only on their own paths: together
  about a third of a second of CPU time.
* ``import numba`` imports ``yaml`` (some 20 ms) to read a ``.numba_config.yaml`` that rarely exists.
* ``import scipy.sparse`` runs scipy's array-API layer, which walks ``dir(numpy)`` and so imports
  ``numpy.f2py`` and ``numpy.testing`` (some 30 ms of CPU time, a third of ``scipy.sparse``'s; it also imports
  ``numpy.ma``, which numba reads on every call).

While the command line and its dependencies import, the garbage collector is off (from :func:`activate` to
:func:`before_numeric_run`): what imports create lives as long as the process, so collecting over it is
start-up time spent for nothing.

:func:`defer_imports` registers each of them as a stand-in module that imports the real one the first time
any attribute of it is read (and from then on is a copy of it), so a run that never touches them never
pays for them, and one that does sees no difference. It is called by the ``streamlearn`` executable only,
never by ``import streamlearn``: :func:`activate` at start, :func:`before_numeric_command` when a command
that imports numpy is chosen (``--version``, ``--help`` and ``learners`` import no numpy at all).
"""

import gc
import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import types

#: imported by ``sklearn.utils.fixes`` at start-up, used only inside the helpers that need them; ``yaml`` by
#: ``numba.core.config``, used only when a ``.numba_config.yaml`` exists
DEFERRED = ("scipy.stats", "pandas", "yaml")
#: submodules of numpy that ``import scipy.sparse`` reads by name only (deferred once numpy is imported)
DEFERRED_NUMPY = ("numpy.f2py", "numpy.testing")

_lock = threading.RLock()
_active = False
_numeric = False  # a numeric command has been chosen (by the ``streamlearn`` executable)
_collector_held = False  # activate() turned the garbage collector off until before_numeric_run()


class _Deferred(types.ModuleType):
    """A stand-in in ``sys.modules`` that becomes the real module on the first attribute read."""

    def __getattr__(self, attr):  # only for attributes not (yet) in the stand-in's namespace
        return getattr(_load(self), attr)


def _load(stub):
    name = stub.__name__
    with _lock:
        if sys.modules.get(name) is stub:
            del sys.modules[name]
        real = importlib.import_module(name)
        stub.__dict__.update(real.__dict__)
    return real


def defer_imports(names=DEFERRED):
    """Register stand-ins for ``names`` not yet imported (and installed); returns the names deferred.

    >>> import sys
    >>> defer_imports(["json"]) if "json" in sys.modules else ["json"]  # already imported: left alone
    []
    """
    done = []
    for name in names:
        if name in sys.modules:
            continue
        top = name.partition(".")[0]
        try:  # finding a submodule would import its package: the top-level one tells whether it is installed
            found = top in sys.modules or importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        if not found:  # not installed: importing it fails as it would have
            continue
        parent, _, child = name.rpartition(".")
        if parent and parent.partition(".")[0] == "numpy" and parent not in sys.modules:
            continue  # numpy's __getattr__ imports its submodules by name: the stand-in must be its attribute
        stub = _Deferred(name)
        stub.__spec__ = importlib.machinery.ModuleSpec(name, None)  # what ``import name`` reads when cached
        sys.modules[name] = stub
        if parent in sys.modules:  # ``parent.child`` is the stand-in until the real module replaces it
            setattr(sys.modules[parent], child, stub)
        done.append(name)
    return done


def activate():
    """Defer :data:`DEFERRED` and let :func:`before_numeric_command` defer :data:`DEFERRED_NUMPY` later; hold
    the garbage collector off until :func:`before_numeric_run`.

    What the command line and its dependencies create while they import (modules, classes, numba's typing
    tables) lives until the process ends, so a collection during the imports only walks it; left on, the
    collector runs some 150 times while numpy, scipy.sparse and numba import (``gc.callbacks`` counts them).
    """
    global _active, _collector_held
    _active = True
    _collector_held = gc.isenabled()
    gc.disable()
    return defer_imports(DEFERRED)


def before_numeric_command():
    """Once :func:`activate` has run: import numpy and defer :data:`DEFERRED_NUMPY`."""
    if not _active:
        return []
    global _numeric
    import_shielded("numpy")  # (imported by every numeric command anyway)
    _numeric = True
    return defer_imports(DEFERRED_NUMPY)


def before_numeric_run():
    """Once a command's arguments are parsed (not for ``--help``): for a numeric command import scipy.sparse
    and numba, which every such command uses, with Ctrl-C held back (:func:`import_shielded`); then turn the
    garbage collector back on (:func:`activate`), with every object alive so far frozen out of its sweeps.
    True for a numeric command."""
    if _numeric:
        import_shielded("scipy.sparse")
        import_shielded("numba")
    global _collector_held
    if _collector_held:  # the start-up imports are over: what they made is left out of the collections
        _collector_held = False
        gc.freeze()
        gc.enable()
    return _numeric


def import_shielded(name):
    """Import ``name`` with Ctrl-C held back until the import is over (POSIX, main thread; elsewhere a plain
    import).

    ``scipy.sparse`` runs ``exec("from numpy import *")`` while it imports. A KeyboardInterrupt that escapes
    code run from a string makes CPython end the process by SIGINT at exit, even when the command catches it and
    stops cleanly with its one-line message and exit code 130; one that lands inside numpy's own import can
    leave it half-initialised, so that the next import fails with another error, and one inside numba's turns
    into an ImportError of one of its extension modules. Held back (:func:`~streamlearn._signals.interrupts_held`),
    a Ctrl-C during the import is raised right after it, in the command's own code.
    """
    from .._signals import interrupts_held

    with interrupts_held():
        return importlib.import_module(name)
