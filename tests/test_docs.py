"""The documentation's promises, checked: its Python examples run, the README's quickstarts run as
written in an empty folder, the API reference covers every public name, and the docs say nothing about
where the code came from.

Code blocks fenced as ```python are executed (one namespace per page, in order, in a temporary folder);
illustrative snippets that cannot run on their own (a cluster, a user's file) are fenced as ```py. Shell
blocks fenced as ```sh are executed too (one bash per page, in an empty folder, ``streamlearn`` and ``python``
being this interpreter); shell examples that cannot run on their own are fenced as ```bash.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def _blocks(path, languages):
    return [body for lang, body in _FENCE.findall(path.read_text()) if lang in languages]


def _pages_with_python():
    return sorted(p for p in DOCS.rglob("*.md") if _blocks(p, {"python"}))


def _env():
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
    return env


@pytest.mark.parametrize("page", _pages_with_python(), ids=lambda p: str(p.relative_to(DOCS)))
def test_documentation_python_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    for i, block in enumerate(_blocks(page, {"python"})):
        exec(compile(block, f"{page.relative_to(ROOT)} [python block {i + 1}]", "exec"), namespace)


def _pages_with_sh():
    return sorted(p for p in DOCS.rglob("*.md") if _blocks(p, {"sh"}))


@pytest.mark.parametrize("page", _pages_with_sh(), ids=lambda p: str(p.relative_to(DOCS)))
def test_documentation_shell_examples_run_as_written_in_an_empty_folder(page, tmp_path):
    prelude = (
        "set -euo pipefail\n"
        f'streamlearn() {{ {shlex.quote(sys.executable)} -m streamlearn "$@"; }}\n'
        f'python() {{ {shlex.quote(sys.executable)} "$@"; }}\n'
    )
    for i, block in enumerate(_blocks(page, {"sh"})):
        res = subprocess.run(
            ["bash", "-c", prelude + block], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600
        )
        assert res.returncode == 0, f"{page.relative_to(ROOT)} [sh block {i + 1}]: {res.stderr}"


def test_some_documentation_examples_are_executed():
    assert len(_pages_with_python()) >= 3


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def _cli_lines(block):
    for line in block.splitlines():
        argv = shlex.split(line, comments=True)
        if argv:
            assert argv[0] == "streamlearn", f"README command line does not start with streamlearn: {line}"
            yield argv[1:]


def test_readme_quickstarts_run_as_written_in_an_empty_folder(tmp_path):
    readme = ROOT / "README.md"
    python_blocks = _blocks(readme, {"python"})
    cli_blocks = _blocks(readme, {"sh"})
    assert python_blocks and cli_blocks, "README lost its Python or command-line quickstart"
    for block in python_blocks:
        res = subprocess.run(
            [sys.executable, "-c", block], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600
        )
        assert res.returncode == 0, res.stderr
    assert (tmp_path / "ftrl.slm").exists()
    cli_dir = tmp_path / "cli"
    cli_dir.mkdir()
    for block in cli_blocks:
        for argv in _cli_lines(block):
            res = subprocess.run(
                [sys.executable, "-m", "streamlearn", *argv],
                cwd=cli_dir,
                env=_env(),
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert res.returncode == 0, f"streamlearn {' '.join(argv)}: {res.stderr}"
    assert (cli_dir / "predictions.txt").read_text().count("\n") == 16281


def test_readme_and_docs_links_point_to_existing_files():
    for page in [ROOT / "README.md", *DOCS.rglob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            resolved = (page.parent / target).resolve()
            if page.parent == DOCS or DOCS in page.parents:  # the site publishes result figures under results/
                resolved = resolved if resolved.exists() else _published_figure(target)
            assert resolved.exists(), f"{page.relative_to(ROOT)} links to missing {target}"


def _published_figure(target):
    name = Path(target).name
    for folder in (ROOT / "benchmarks" / "results", ROOT / "tools" / "results"):
        if (folder / name).exists():
            return folder / name
    return Path("/nonexistent")


SUBPACKAGES = [
    "base",
    "linear_model",
    "second_order",
    "facto",
    "sketch",
    "model_selection",
    "preprocessing",
    "datasets",
    "evaluation",
    "experiments",
    "distributed",
    "serve",
    "persist",
    "learners",
    "losses",
    "checks",
]


def test_every_public_subpackage_has_an_api_reference_page():
    """Every package and module of streamlearn without a leading underscore is in the API reference, except the
    command line (documented by its help and the user guide)."""
    import pkgutil

    import streamlearn

    public = {m.name for m in pkgutil.iter_modules(streamlearn.__path__) if not m.name.startswith("_")}
    assert public - {"cli"} == set(SUBPACKAGES)


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_api_reference_page_covers_the_subpackage(name):
    """The page's marker makes the build hook document every name of ``__all__``; every public class and
    function carries a runnable example (doctests run in the suite)."""
    import importlib
    import inspect

    page = DOCS / "api" / f"{name}.md"
    assert f"<!-- api: streamlearn.{name} -->" in page.read_text()
    assert f"api/{name}.md" in (ROOT / "mkdocs.yml").read_text()
    module = importlib.import_module(f"streamlearn.{name}")
    for attr in module.__all__:
        obj = getattr(module, attr)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert ">>>" in (obj.__doc__ or ""), f"streamlearn.{name}.{attr} has no example in its docstring"


def test_no_word_of_where_the_code_came_from():
    pattern = re.compile(r"seed 00|ALGORITHMS\.md|issue [0-9]|session [0-9]", re.I)
    paths = [ROOT / "README.md", *DOCS.rglob("*.md"), *(ROOT / "streamlearn").rglob("*.py")]
    hits = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in paths
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not hits, hits


def test_benchmark_pages_include_their_results_file():
    for page in (DOCS / "benchmarks").glob("*.md"):
        for name in re.findall(r'--8<-- "benchmarks/results/([^":]+)', page.read_text()):
            assert (ROOT / "benchmarks" / "results" / name).exists(), f"{page.name} includes missing {name}"
