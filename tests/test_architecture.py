"""The layering of DEVELOPERS.md / STYLE.md, asserted: kernels import only numpy/numba/stdlib, numba flags
are set in one place, and lower layers never import higher ones."""

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "streamlearn"
STDLIB_OK = {"math", "functools", "numpy", "numba", "cmath", "typing", "collections"}
ESTIMATOR_LAYERS = ["linear_model", "second_order", "facto", "sketch", "sparse", "preprocessing"]
#: preprocessing may use the readers' format logic (its DictHasher hashes dict rows exactly as the CSV and
#: Parquet readers hash a table's rows); estimators may not
_FORBIDDEN = {layer: r"streamlearn\.(evaluation|datasets|cli)\b" for layer in ESTIMATOR_LAYERS}
_FORBIDDEN["preprocessing"] = r"streamlearn\.(evaluation|cli)\b"


def _imports(path):
    tree = ast.parse(path.read_text())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = path.relative_to(PKG.parent).with_suffix("").parts[: -node.level]
                names.append(".".join(base + ((node.module,) if node.module else ())))
            else:
                names.append(node.module)
    return names


def test_kernels_import_only_numpy_numba_and_themselves():
    for path in sorted((PKG / "_kernels").glob("*.py")):
        # _numba.py reads its numba switch (os), stamps the cache with a digest of the sources (hashlib), may
        # cache in a private temporary folder (stat, tempfile) and compiles with Ctrl-C held back (the leaf
        # module streamlearn._signals, which imports nothing of streamlearn: checked below)
        numba_setup = path.name == "_numba.py"
        allowed = STDLIB_OK | ({"os", "hashlib", "stat", "tempfile"} if numba_setup else set())
        for name in _imports(path):
            top = name.split(".")[0]
            leaf = numba_setup and name == "streamlearn._signals"
            assert top in allowed or leaf or name.startswith("streamlearn._kernels"), f"{path.name} imports {name}"
    assert not [n for n in _imports(PKG / "_signals.py") if n.startswith("streamlearn")]


def test_numba_flags_are_set_in_one_place():
    pattern = re.compile(r"\b(cache|fastmath)\s*=")
    for path in PKG.rglob("*.py"):
        if path.name == "_numba.py":
            continue
        text = path.read_text()
        assert not pattern.search(text) or "njit" not in text, f"{path} sets numba flags itself"
        assert "numba.njit(" not in text and "@njit(" not in text and "@jit" not in text, (
            f"{path} jits outside _kernels/_numba.py's njit_kernel"
        )


@pytest.mark.parametrize("layer", ESTIMATOR_LAYERS)
def test_estimators_do_not_import_evaluation_datasets_or_cli(layer):
    for path in (PKG / layer).rglob("*.py") if (PKG / layer).exists() else []:
        for name in _imports(path):
            assert not re.match(_FORBIDDEN[layer], name), f"{path} imports {name}"


def test_library_does_not_import_cli():
    for path in PKG.rglob("*.py"):
        if "cli" in path.relative_to(PKG).parts or path.name == "__main__.py":
            continue
        for name in _imports(path):
            assert not name.startswith("streamlearn.cli"), f"{path} imports {name}"


def _inhouse_depth(cls):
    """Length of the longest chain of streamlearn base classes above ``cls`` (itself included); mixins
    (classes named ``*Mixin``) compose orthogonal concerns and are not counted, nor is the scikit-learn estimator
    API (``streamlearn._estimator.BaseEstimator``, scikit-learn's contract without importing scikit-learn)."""
    bases = [
        b
        for b in cls.__bases__
        if b.__module__.startswith("streamlearn") and b.__module__ != "streamlearn._estimator"
        if not b.__name__.endswith("Mixin")
    ]
    return 1 + max((_inhouse_depth(b) for b in bases), default=0)


def test_no_estimator_is_deeper_than_three_in_house_levels():
    import importlib
    import inspect

    deep = {}
    for layer in ["linear_model", "second_order", "facto", "sketch"]:
        mod = importlib.import_module(f"streamlearn.{layer}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) and _inhouse_depth(obj) > 3:
                deep[name] = [c.__name__ for c in obj.__mro__ if c.__module__.startswith("streamlearn")]
    assert not deep, f"estimators deeper than three in-house levels: {deep}"


def test_base_classes_do_not_test_for_their_subclasses():
    pattern = re.compile(r"isinstance\(self, \w*(Mixin|Classifier|Regressor)\)")
    for path in PKG.rglob("*.py"):
        if "cli" in path.parts:
            continue
        assert not pattern.search(path.read_text()), f"{path.relative_to(PKG)} tests isinstance(self, ...)"


def test_distributed_imports_no_private_estimator_name():
    for path in sorted((PKG / "distributed").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and any(part in node.module for part in ESTIMATOR_LAYERS + ["base"])
            ):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"distributed/{path.name} imports {private} from {node.module}"


def test_evaluation_depends_only_on_datasets_losses_and_metrics():
    """Paper reproductions live in ``streamlearn.experiments``; ``evaluation`` must not import learners."""
    # (_signals: a leaf module of the standard library only; a Ctrl-C that a library discarded stops the loop)
    allowed = re.compile(r"streamlearn\.(evaluation|datasets|losses|_validation|_lazy|_typing|_estimator|_signals)\b")
    for path in sorted((PKG / "evaluation").rglob("*.py")):
        for name in _imports(path):
            if name.startswith("streamlearn"):
                assert allowed.match(name), f"{path.relative_to(PKG)} imports {name}"


def test_experiments_are_outside_evaluation():
    assert not (PKG / "evaluation" / "experiments").exists()
    assert (PKG / "experiments" / "__init__.py").exists()


MAX_POSITIONAL_KERNEL_ARGS = 6
#: a kernel called from a kernel takes at most this many arguments: CPython passes more than 15 keywords as a
#: dict (CALL_FUNCTION_EX), which numba cannot always compile, so a longer call could not name its arguments
NUMBA_MAX_KEYWORDS = 15
#: kernel-to-kernel calls allowed to be longer than NUMBA_MAX_KEYWORDS (file -> callee names): none; a long call
#: groups its arguments (tuples, fewer arrays) instead of growing this table
LONG_KERNEL_CALLS_ALLOWED: dict[str, set[str]] = {}


def _kernel_names(path, tree):
    """``(modules, functions)``: the local names bound to ``streamlearn._kernels`` modules and functions."""
    modules, functions = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.asname and a.name.startswith("streamlearn._kernels.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = path.relative_to(PKG.parent).with_suffix("").parts[: -node.level]
                module = ".".join(base + ((node.module,) if node.module else ()))
            else:
                module = node.module or ""
            if module == "streamlearn._kernels":
                modules |= {a.asname or a.name for a in node.names}
            elif module.startswith("streamlearn._kernels."):
                functions |= {a.asname or a.name for a in node.names}
    if "_kernels" in path.parts:  # a kernel module's own functions
        functions |= {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    return modules, functions


def _long_positional_kernel_calls(path, source=None):
    """Calls into ``streamlearn._kernels`` from ``path`` (or ``source`` standing at ``path``) with more than
    MAX_POSITIONAL_KERNEL_ARGS positional arguments, or with ``*args`` (whose length the reader cannot see), and
    calls inside ``_kernels`` with more than NUMBA_MAX_KEYWORDS arguments: ``["file:line name", ...]``."""
    tree = ast.parse(path.read_text() if source is None else source)
    modules, functions = _kernel_names(path, tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        into_kernel = (isinstance(f, ast.Name) and f.id in functions) or (
            isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in modules
        )
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        jitted_long = "_kernels" in path.parts and len(node.args) + len(node.keywords) > NUMBA_MAX_KEYWORDS
        allowed = ast.unparse(f) in LONG_KERNEL_CALLS_ALLOWED.get(path.name, ()) and "_kernels" in path.parts
        if into_kernel and (len(node.args) > MAX_POSITIONAL_KERNEL_ARGS or starred or jitted_long) and not allowed:
            found.append(f"{path}:{node.lineno} {ast.unparse(f)}")
    return found


def test_kernels_with_many_arguments_are_called_by_keyword():
    """A kernel takes plain arrays and scalars; a long positional list of them is easy to get wrong silently
    (numba accepts any array in any slot of the same type), so every caller names them, kernels included."""
    root = PKG.parent
    paths = list(PKG.rglob("*.py"))
    paths += [p for d in ("tests", "benchmarks", "tools") for p in (root / d).rglob("*.py")]
    found = [c for p in sorted(paths) for c in _long_positional_kernel_calls(p)]
    assert not found, "kernel calls with more than 6 positional arguments (pass them by keyword):\n" + "\n".join(found)


def test_the_keyword_call_check_sees_relative_and_absolute_imports():
    src = (
        "from .._kernels import son as _k\nfrom streamlearn._kernels.dcd import dcd_solve\n"
        "_k.son_epoch(1, 2, 3, 4, 5, 6, 7)\ndcd_solve(*args)\n_k.son_epoch(1, 2, 3, 4, 5, 6, a=7)\n"
        "len(1, 2, 3, 4, 5, 6, 7)\n"
    )
    path = PKG / "second_order" / "probe.py"  # not read: stands for a module of the package
    assert _kernel_names(path, ast.parse(src)) == ({"_k"}, {"dcd_solve"})
    found = _long_positional_kernel_calls(path, src)
    assert [c.split()[-1] for c in found] == ["_k.son_epoch", "dcd_solve"]
    inside = "def helper(a, b, c, d, e, f, g):\n    pass\n\n\ndef kernel():\n    helper(1, 2, 3, 4, 5, 6, 7)\n"
    found = _long_positional_kernel_calls(PKG / "_kernels" / "probe.py", inside)
    assert [c.split()[-1] for c in found] == ["helper"]
    # inside a kernel, more than NUMBA_MAX_KEYWORDS arguments is refused whether positional or named
    many = ", ".join(f"a{i}" for i in range(16))
    for call in (f"helper({many})", "helper(" + ", ".join(f"a{i}=a{i}" for i in range(16)) + ")"):
        inside = f"def helper({many}):\n    pass\n\n\ndef kernel():\n    {call}\n"
        found = _long_positional_kernel_calls(PKG / "_kernels" / "probe.py", inside)
        assert [c.split()[-1] for c in found] == ["helper"], call


def _public_modules():
    """Every package and module of streamlearn without a leading underscore, except the command line."""
    import pkgutil

    import streamlearn

    return [
        f"streamlearn.{m.name}"
        for m in pkgutil.iter_modules(streamlearn.__path__)
        if m.name[0] != "_" and m.name != "cli"
    ]


PUBLIC_MODULES = _public_modules()
#: public methods allowed to go without annotations (none)
UNANNOTATED: set[str] = set()


def _unannotated(fn):
    """Parameters (and ``return``) of ``fn`` without an annotation."""
    import inspect

    sig = inspect.signature(inspect.unwrap(fn))
    missing = [p for p, v in sig.parameters.items() if p not in ("self", "cls") and v.annotation is v.empty]
    return missing + (["return"] if sig.return_annotation is sig.empty else [])


def _public_callables():
    """``{"Name" or "Class.method": function}`` over the ``__all__`` of PUBLIC_MODULES (streamlearn code only)."""
    import importlib
    import inspect

    found = {}
    for module in PUBLIC_MODULES:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and obj.__module__.startswith("streamlearn"):
                found[name] = obj
            elif inspect.isclass(obj):
                for attr in dir(obj):
                    raw = inspect.getattr_static(obj, attr)
                    fn = raw.fget if isinstance(raw, property) else getattr(raw, "__func__", raw)
                    if not attr.startswith("_") and inspect.isfunction(fn) and fn.__module__.startswith("streamlearn"):
                        found[f"{fn.__qualname__.split('.')[0] if '.' in fn.__qualname__ else name}.{attr}"] = fn
    return found


def test_public_api_is_annotated():
    missing = {name: _unannotated(fn) for name, fn in _public_callables().items()}
    missing = {name: m for name, m in missing.items() if m and name not in UNANNOTATED}
    assert not missing, f"public functions and methods without type annotations: {missing}"
