"""One compiled specialisation per kernel and argument types: no kernel is compiled again for a constant.

numba types a literal argument (``f(x, 0)``, ``f(x, False)``, a counter initialised with ``n = 0``) as
``Literal[int](0)`` / ``Literal[bool](False)`` and compiles a separate specialisation of the callee for it, on
top of the ``int64`` / ``bool`` one: each costs a full compilation on a cold start (the sketched online
Newton kernels compiled ``_solve``, ``_small_solve``, ``_split_step``, ``_fd_materialise``, ``_fd_basis_dot`` and
``_chol_extend`` twice). Call sites pass ``np.int64(0)`` / ``np.bool_(False)`` instead.

A callee's specialisations are made while its caller is typed, and a caller loaded from numba's cache is not
typed: so, before looking, the checks type the calling kernels again (type inference only, no code
generation).
"""

import contextlib
import importlib
import pkgutil

import numpy as np
import scipy.sparse as sp
from numba.core import types
from numba.core.compiler import CompilerBase, DefaultPassBuilder, Flags
from numba.core.registry import CPUDispatcher, cpu_target
from numba.core.typed_passes import NopythonTypeInference

import streamlearn._kernels as kernels
from streamlearn.second_order import AdaGrad, OnlineNewtonStep, SketchedOnlineNewton


def _dispatchers():
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"streamlearn._kernels.{info.name}")
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == module.__name__:
                yield f"{info.name}.{name}", obj


class _TypeInferenceOnly(CompilerBase):
    """numba's nopython pipeline, stopped after type inference."""

    def define_pipelines(self):
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.passes = pm.passes[: [p for p, _ in pm.passes].index(NopythonTypeInference) + 1]
        pm.finalize()
        return [pm]


def _calls_a_compiled_kernel(func, seen):
    """Whether ``func`` calls a kernel that is compiled on its own (not inlined), directly or from a helper
    inlined into it."""
    for name in func.__code__.co_names:
        callee = func.__globals__.get(name)
        if isinstance(callee, CPUDispatcher) and callee not in seen:
            seen.add(callee)
            if callee.targetoptions.get("inline") != "always" or _calls_a_compiled_kernel(callee.py_func, seen):
                return True
    return False


def _type_compiled_kernels_again():
    """Type inference of the kernels that call other compiled kernels, for one signature each that was compiled
    (or loaded from the cache): what they call is specialised as a compilation of the kernel would do."""
    typing, target = cpu_target.typing_context, cpu_target.target_context
    typing.refresh()
    target.refresh()
    for name, d in list(_dispatchers()):
        if not _calls_a_compiled_kernel(d.py_func, set()):
            continue  # (its literal arguments, if any, go to inlined helpers: no specialisation compiled)
        for sig in d.signatures[:1]:  # (what the kernel passes is written in its code, whatever the types)
            flags = Flags()
            d.targetdescr.options.parse_as_flags(flags, d.targetoptions)
            compiler = _TypeInferenceOnly(typing, target, None, sig, None, flags, {})
            with contextlib.suppress(AttributeError):  # (no code generated, so no result, "cr", to return)
                compiler.compile_extra(d.py_func)
            assert compiler.state.typemap, f"{name}{sig} was not typed again"


def _literal_specialisations():
    _type_compiled_kernels_again()
    literal = {
        name: [str(s) for s in d.signatures if any(isinstance(t, types.Literal) for t in s)]
        for name, d in _dispatchers()
    }
    return {k: v for k, v in literal.items() if v}


def _learn_with_the_sketched_newton_kernels():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 15))
    X[rng.random(X.shape) > 0.4] = 0.0
    X = sp.csr_matrix(X)
    y = np.where(X @ rng.standard_normal(15) > 0, 1, -1)
    for params in (
        {"sketch": "fd"},
        {"sketch": "oja"},
        {"sketch": "rp"},
        {"sketch": "rfd"},
        {"sketch": "rfd", "alpha0": 0.0, "slab": "current"},
    ):  # alpha0 = 0: the pseudo-inverse path
        SketchedOnlineNewton(ell=4, random_state=0, **params).fit(X, y)
    weights = np.where(np.arange(X.shape[0]) % 3 == 0, 0.0, 1.0)  # weight 0: scored, projected nowhere
    for learner in (AdaGrad, OnlineNewtonStep):
        for slab in ("next", "current"):
            learner(slab=slab).partial_fit(X, y, classes=[-1, 1], sample_weight=weights)


def test_sketched_newton_kernels_compile_once():
    _learn_with_the_sketched_newton_kernels()
    for name, d in _dispatchers():
        if name.startswith(("son_lazy.", "son.")):
            assert len(d.signatures) <= 1, f"{name} compiled {len(d.signatures)} times: {d.signatures}"


def test_no_kernel_is_compiled_for_a_literal_argument():
    """After every registered learner (the sketched Newton step on every path) and every sketch has learnt from
    sparse and dense rows (the sketches often enough to shrink their buffers)."""
    from streamlearn.learners import LEARNERS, make_learner
    from streamlearn.sketch import SKETCHES

    _learn_with_the_sketched_newton_kernels()
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 12))
    X[rng.random(X.shape) > 0.5] = 0.0
    y_class = np.where(X @ rng.standard_normal(12) > 0, 1, -1)
    y_value = X @ rng.standard_normal(12)
    for data in (sp.csr_matrix(X), X):
        for sketch in SKETCHES.values():
            sketch(ell=4).partial_fit(data)
        for name, spec in LEARNERS.items():
            learner = make_learner(name, None)
            if spec.batch:  # (the batch SVMs learn with fit)
                learner.fit(data, y_class)
            elif spec.task == "regression":
                learner.partial_fit(data, y_value)
            else:
                learner.partial_fit(data, y_class, classes=[-1, 1])
    literal = _literal_specialisations()
    assert literal == {}, f"kernels compiled for literal arguments: {literal}"
