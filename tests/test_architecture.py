"""The layering of DEVELOPERS.md / STYLE.md, asserted: kernels import only numpy/numba/stdlib, numba flags
are set in one place, and lower layers never import higher ones."""

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "streamlearn"
STDLIB_OK = {"math", "functools", "numpy", "numba", "cmath"}
ESTIMATOR_LAYERS = ["linear_model", "second_order", "facto", "sketch", "sparse", "preprocessing"]


def _imports(path):
    tree = ast.parse(path.read_text())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = path.relative_to(PKG.parent).with_suffix("").parts[:-node.level]
                names.append(".".join(base + ((node.module,) if node.module else ())))
            else:
                names.append(node.module)
    return names


def test_kernels_import_only_numpy_numba_and_themselves():
    for path in sorted((PKG / "_kernels").glob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top in STDLIB_OK or name.startswith("streamlearn._kernels"), f"{path.name} imports {name}"


def test_numba_flags_are_set_in_one_place():
    pattern = re.compile(r"\b(cache|fastmath)\s*=")
    for path in PKG.rglob("*.py"):
        if path.name == "_numba.py":
            continue
        text = path.read_text()
        assert not pattern.search(text) or "njit" not in text, f"{path} sets numba flags itself"
        assert "numba.njit(" not in text and "@njit(" not in text and "@jit" not in text, \
            f"{path} jits outside _kernels/_numba.py's njit_kernel"


@pytest.mark.parametrize("layer", ESTIMATOR_LAYERS)
def test_estimators_do_not_import_evaluation_datasets_or_cli(layer):
    for path in (PKG / layer).rglob("*.py") if (PKG / layer).exists() else []:
        for name in _imports(path):
            assert not re.match(r"streamlearn\.(evaluation|datasets|cli)\b", name), f"{path} imports {name}"


def test_library_does_not_import_cli():
    for path in PKG.rglob("*.py"):
        if "cli" in path.relative_to(PKG).parts or path.name == "__main__.py":
            continue
        for name in _imports(path):
            assert not name.startswith("streamlearn.cli"), f"{path} imports {name}"
