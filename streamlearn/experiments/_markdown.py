"""The Markdown reports of the experiments (``--markdown``): a title, what was run, the checks, one table."""

__all__ = ["report_head", "table_row", "write_report"]


def write_report(path, lines: list[str]) -> None:
    """Write the report's ``lines`` to ``path`` as every output of the command line is written: aside, then
    renamed over ``path`` once complete (an error leaves the previous file as it was)."""
    from .._atomic import Output

    with Output(path, what="Markdown file").open("w") as f:
        f.write("\n".join(lines) + "\n")


def table_row(cells: list[str]) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(cells) + " |"


def report_head(title: str, intro: list[str], checks: list[str], columns: list[str]) -> list[str]:
    """The lines of a report up to its table's header: ``# title``, the ``intro`` paragraphs (one line each), the
    ``checks`` as a list under ``## Checks``, then ``## Table`` and the header of a table of ``columns``.

    >>> print("\\n".join(report_head("Sweep", ["One pass."], ["all finite"], ["learner", "error"])))
    # Sweep
    <BLANKLINE>
    One pass.
    <BLANKLINE>
    ## Checks
    <BLANKLINE>
    - all finite
    <BLANKLINE>
    ## Table
    <BLANKLINE>
    | learner | error |
    |---|---|
    """
    paragraphs = [line for paragraph in intro for line in (paragraph, "")]
    return [
        f"# {title}",
        "",
        *paragraphs,
        "## Checks",
        "",
        *(f"- {check}" for check in checks),
        "",
        "## Table",
        "",
        table_row(columns),
        "|" + "---|" * len(columns),
    ]
