"""Griffe extension for the documentation build: a class whose docstring is completed at import time
(a shared parameter description substituted into a ``{placeholder}``) is documented with the docstring
it has at run time."""

from __future__ import annotations

import importlib
import inspect

import griffe


class RuntimeDocstrings(griffe.Extension):
    def on_class_instance(self, *, cls: griffe.Class, **kwargs) -> None:
        if cls.docstring is None or "{" not in cls.docstring.value:
            return
        try:
            obj = getattr(importlib.import_module(cls.module.path), cls.name)
        except (ImportError, AttributeError):
            return
        if obj.__doc__:
            cls.docstring.value = inspect.cleandoc(obj.__doc__)
