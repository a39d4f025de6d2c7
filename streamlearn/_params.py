"""Estimator constructors shared between classes (not public)."""

import keyword
import sys
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


#: the defaults of the pass parameters of the linear online learners (their constraints:
#: ``streamlearn._validation.LINEAR_PASS_PARAMS``)
LINEAR_PASS_DEFAULTS = {"fit_intercept": True, "max_iter": 5, "shuffle": True, "random_state": None}


def keyword_init(**defaults: object) -> Any:
    """The constructor of a scikit-learn estimator: keyword-only parameters ``defaults`` (name -> default, in
    this order), each stored as the attribute of the same name, and nothing else.

    It is the ``def __init__(self, *, a=1.0, b="x"): self.a = a; self.b = b`` scikit-learn asks for, written
    from the table (as :mod:`dataclasses` writes its ``__init__``): ``inspect.signature``, ``get_params``,
    ``clone`` and the learners table see an ordinary constructor, and ``with_defaults`` applies to it.

    >>> class Est:
    ...     __init__ = keyword_init(a=1.0, b="x")
    >>> vars(Est(b="y")), Est.__init__.__qualname__
    ({'a': 1.0, 'b': 'y'}, 'Est.__init__')
    >>> Est(c=0)
    Traceback (most recent call last):
    ...
    TypeError: Est.__init__() got an unexpected keyword argument 'c'
    """
    bad = [name for name in defaults if not name.isidentifier() or keyword.iskeyword(name) or name == "self"]
    if bad:
        raise TypeError(f"keyword_init: {bad[0]!r} cannot be a parameter name")
    params = "".join(f", {name}=_defaults[{name!r}]" for name in defaults)
    body = "".join(f"\n    self.{name} = {name}" for name in defaults) or "\n    pass"
    namespace: dict[str, Any] = {"_defaults": defaults}
    exec(f"def __init__(self{', *' if defaults else ''}{params}):{body}", namespace)
    init = namespace["__init__"]
    caller = sys._getframe(1)  # the class body that assigns it: name the function as if it were written there
    init.__module__ = caller.f_globals.get("__name__")
    init.__qualname__ = f"{caller.f_code.co_qualname}.__init__"
    return init
