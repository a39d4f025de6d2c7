"""MkDocs hooks for the streamlearn documentation (``hooks:`` in mkdocs.yml).

* ``<!-- api: streamlearn.X -->`` in a page becomes one mkdocstrings directive per public name of
  ``streamlearn.X.__all__`` (classes and functions, at the module that defines them) plus a table of its
  constants, so the API reference follows ``__all__`` and cannot miss a public name.
* ``<!-- learners-table -->`` becomes the table of the learner registry (``streamlearn learners``), and
  ``<!-- experiments-table -->`` the table of the registered experiments.
* The figures in ``benchmarks/results/`` and ``tools/results/`` are published under ``results/`` and
  ``tools-results/`` so pages can show them without copying them into ``docs/``.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
_API = re.compile(r"^<!-- api: (streamlearn[\w.]*) -->$", re.M)
_FIGURES = {"results": ROOT / "benchmarks" / "results", "tools-results": ROOT / "tools" / "results"}


def public_api(module_name: str) -> tuple[list[str], list[tuple[str, object]]]:
    """``(paths, constants)``: the defining path of each public class/function of ``module_name``, and its
    public constants as ``(name, value)``."""
    module = importlib.import_module(module_name)
    paths, constants = [], []
    for name in module.__all__:
        obj = getattr(module, name)
        path = f"{obj.__module__}.{obj.__qualname__}" if inspect.isclass(obj) or inspect.isfunction(obj) else None
        if path is not None and path not in paths:
            paths.append(path)
        else:  # a constant, or another name of a class already listed (shown as that class)
            constants.append((name, obj))
    return paths, constants


def _api_markdown(module_name: str) -> str:
    paths, constants = public_api(module_name)
    out = []
    for path in paths:
        out += [f"::: {path}", ""]
    if constants:
        out += ["## Constants", "", "| name | value |", "|---|---|"]
        for name, value in constants:
            if inspect.isclass(value) or inspect.isfunction(value):
                shown = f"{value.__module__}.{value.__qualname__}"
            elif isinstance(value, (dict, frozenset, set)):
                shown = ", ".join(sorted(value))
            else:
                shown = repr(value)
            out.append(f"| `{module_name}.{name}` | `{shown}` |")
        out.append("")
    return "\n".join(out)


def _learners_table() -> str:
    from streamlearn.learners import DEFAULTS_WHY, LEARNERS

    rows = ["| CLI name | class | what | command-line defaults: why |", "|---|---|---|---|"]
    for spec in LEARNERS.values():
        cls = spec.target.split(":")[-1]
        why = DEFAULTS_WHY.get(spec.name, "")
        settings = ", ".join(
            [f"`{k}={v!r}`" for k, v in spec.defaults.items()]
            + ([f"`--scale {spec.scale}`"] if spec.scale != "none" else [])
        )
        note = f"{settings}: {why}" if settings and why else settings or why
        rows.append(f"| `{spec.name}` | `{cls}` | {spec.description.replace('|', '/')} | {note.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def _experiments_table() -> str:
    from streamlearn import experiments

    rows = ["| name | what |", "|---|---|"]
    for name in experiments.names():
        rows.append(f"| `streamlearn experiment {name}` | {experiments.get(name).HELP.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown, page, config, files):
    markdown = _API.sub(lambda m: _api_markdown(m.group(1)), markdown)
    if "<!-- learners-table -->" in markdown:
        markdown = markdown.replace("<!-- learners-table -->", _learners_table())
    if "<!-- experiments-table -->" in markdown:
        markdown = markdown.replace("<!-- experiments-table -->", _experiments_table())
    return markdown


def on_files(files, config):
    for prefix, folder in _FIGURES.items():
        for path in sorted(folder.glob("*.png")):
            files.append(File.generated(config, f"{prefix}/{path.name}", abs_src_path=str(path)))
    return files
