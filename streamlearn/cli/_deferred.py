"""Modules that scikit-learn imports at start-up but the commands rarely use, loaded on first use instead.

``import sklearn.base`` (every estimator) runs ``sklearn.utils.fixes``, which imports ``scipy.stats`` and
``pandas`` for a few helpers called only on their own paths: together about a third of a second of CPU
time, paid by every ``streamlearn`` command that trains or predicts. :func:`defer_imports` registers each of
them as a stand-in module that imports the real one the first time any attribute of it is read (and from
then on is a copy of it), so a run that never touches them never pays for them, and one that does sees
no difference. It is called by the ``streamlearn`` executable only, never by ``import streamlearn``.
"""

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import types

#: imported by ``sklearn.utils.fixes`` at start-up; used only inside the helpers that need them
DEFERRED = ("scipy.stats", "pandas")

_lock = threading.RLock()


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
        stub = _Deferred(name)
        stub.__spec__ = importlib.machinery.ModuleSpec(name, None)  # what ``import name`` reads when cached
        sys.modules[name] = stub
        done.append(name)
    return done
