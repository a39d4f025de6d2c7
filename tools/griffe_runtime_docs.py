"""Griffe extension for the documentation build: what static analysis cannot see is taken from the imported
class. A docstring completed at import time (a shared parameter description substituted into a
``{placeholder}``) is documented as it is at run time; a constructor assigned rather than defined
(``__init__ = with_defaults(Classifier.__init__, ...)``) is documented with its run-time signature."""

from __future__ import annotations

import importlib
import inspect

import griffe


def _runtime(cls: griffe.Class):
    try:
        return getattr(importlib.import_module(cls.module.path), cls.name)
    except (ImportError, AttributeError):
        return None


class RuntimeDocstrings(griffe.Extension):
    def on_class_instance(self, *, cls: griffe.Class, **kwargs) -> None:
        if cls.docstring is None or "{" not in cls.docstring.value:
            return
        obj = _runtime(cls)
        if obj is not None and obj.__doc__:
            cls.docstring.value = inspect.cleandoc(obj.__doc__)

    def on_class_members(self, *, cls: griffe.Class, **kwargs) -> None:
        init = cls.members.get("__init__")
        if init is None or not init.is_attribute:
            return
        obj = _runtime(cls)
        if obj is None:
            return
        parameters = [
            griffe.Parameter(
                p.name,
                kind=griffe.ParameterKind[p.kind.name.lower()],
                default=None if p.default is inspect.Parameter.empty else repr(p.default),
            )
            for p in inspect.signature(obj.__init__).parameters.values()
        ]
        function = griffe.Function(
            "__init__", parameters=griffe.Parameters(*parameters), lineno=init.lineno, endlineno=init.endlineno
        )
        cls.set_member("__init__", function)
