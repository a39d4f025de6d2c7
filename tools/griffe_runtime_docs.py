"""Griffe extension for the documentation build: what static analysis cannot see is taken from the imported
objects. A docstring completed at import time (a shared parameter description substituted into a class
docstring's ``{placeholder}``, or the sections a decorator adds to a function's docstring, as the conformance
checks' ``_check`` does) is documented as it is at run time; a constructor assigned rather than defined
(``__init__ = with_defaults(Classifier.__init__, ...)`` or ``keyword_init(...)``) is documented with its
run-time signature."""

from __future__ import annotations

import importlib
import inspect
import math

import griffe


def _runtime(obj: griffe.Object):
    """The imported module-level class or function, or None when it cannot be imported."""
    try:
        return getattr(importlib.import_module(obj.module.path), obj.name)
    except (ImportError, AttributeError):
        return None


def _source(value: object) -> str:
    """A default value as the source writes it (strings in double quotes, ``float("inf")``)."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float) and math.isinf(value):
        return f'float("{value}")'
    return repr(value)


class RuntimeDocstrings(griffe.Extension):
    def on_class_instance(self, *, cls: griffe.Class, **kwargs) -> None:
        if cls.docstring is None or "{" not in cls.docstring.value:
            return
        obj = _runtime(cls)
        if obj is not None and obj.__doc__:
            cls.docstring.value = inspect.cleandoc(obj.__doc__)

    def on_function_instance(self, *, func: griffe.Function, **kwargs) -> None:
        if not isinstance(func.parent, griffe.Module) or func.docstring is None:
            return
        obj = _runtime(func)
        if obj is not None and obj.__doc__ and inspect.cleandoc(obj.__doc__) != func.docstring.value:
            func.docstring.value = inspect.cleandoc(obj.__doc__)

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
                default=None if p.default is inspect.Parameter.empty else _source(p.default),
            )
            for p in inspect.signature(obj.__init__).parameters.values()
        ]
        function = griffe.Function(
            "__init__", parameters=griffe.Parameters(*parameters), lineno=init.lineno, endlineno=init.endlineno
        )
        cls.set_member("__init__", function)
