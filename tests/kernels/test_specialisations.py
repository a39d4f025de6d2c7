"""One compiled specialisation per kernel and argument types: no kernel is compiled again for a constant.

numba types a literal argument (``f(x, 0)``, ``f(x, False)``, a counter initialised with ``n = 0``) as
``Literal[int](0)`` / ``Literal[bool](False)`` and compiles a separate specialisation of the callee for it, on
top of the ``int64`` / ``bool`` one: each costs a full compilation on a cold start (the sketched online
Newton kernels compiled ``_solve``, ``_small_solve``, ``_split_step``, ``_fd_materialise``, ``_fd_basis_dot`` and
``_chol_extend`` twice). Call sites pass ``np.int64(0)`` / ``np.bool_(False)`` instead.
"""

import importlib
import pkgutil

import numpy as np
import scipy.sparse as sp
from numba.core import types
from numba.core.registry import CPUDispatcher

import streamlearn._kernels as kernels
from streamlearn.second_order import AdaGrad, OnlineNewtonStep, SketchedOnlineNewton


def _dispatchers():
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"streamlearn._kernels.{info.name}")
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == module.__name__:
                yield f"{info.name}.{name}", obj


def test_sketched_newton_kernels_compile_no_literal_specialisation():
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
    literal = {
        name: [str(s) for s in d.signatures if any(isinstance(t, types.Literal) for t in s)]
        for name, d in _dispatchers()
    }
    literal = {k: v for k, v in literal.items() if v}
    assert literal == {}, f"kernels compiled for literal arguments: {literal}"
    for name, d in _dispatchers():
        if name.startswith(("son_lazy.", "son.")):
            assert len(d.signatures) <= 1, f"{name} compiled {len(d.signatures)} times: {d.signatures}"
