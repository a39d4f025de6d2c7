"""Estimator constructors shared between classes (not public)."""

import types
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Any)


def with_defaults(init: F, **defaults: object) -> F:
    """A copy of the constructor ``init`` (keyword-only parameters) with other defaults for some parameters.

    The regressor of a classifier/regressor pair takes the same parameters as the classifier and differs only in
    some defaults (``loss``, the step size): it uses ``__init__ = with_defaults(Classifier.__init__, ...)``.
    ``inspect.signature`` (hence ``get_params``, ``clone``, the learners table and the docs) shows the new
    defaults.
    """
    kwdefaults = init.__kwdefaults__ or {}
    unknown = sorted(set(defaults) - set(kwdefaults))
    if unknown:
        raise TypeError(f"with_defaults: {init.__qualname__} has no keyword-only parameter {', '.join(unknown)}")
    copy = types.FunctionType(init.__code__, init.__globals__, init.__name__, init.__defaults__, init.__closure__)
    copy.__kwdefaults__ = {**kwdefaults, **defaults}
    copy.__doc__ = init.__doc__
    return cast(F, copy)
