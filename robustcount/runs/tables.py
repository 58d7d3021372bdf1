"""Tables as text (for terminals) and as Markdown, laid out by tabulate; cells read the same in
both: floats with 4 decimals, None as a dash."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate


def cell(value: object) -> str:
    """A table cell: floats with 4 decimals, None as a dash."""
    if isinstance(value, float):
        return f"{value:.4f}"
    return "-" if value is None else str(value)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A left-aligned text table (a rule under the headers)."""
    return tabulate([[cell(v) for v in row] for row in rows], headers=list(headers), tablefmt="simple",
                    stralign="left", disable_numparse=True)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown (GitHub) table; pipes in cells escaped, line breaks made spaces."""
    def escape(value: object) -> str:
        return cell(value).replace("|", "\\|").replace("\n", " ")

    return tabulate([[escape(v) for v in row] for row in rows], headers=[escape(h) for h in headers],
                    tablefmt="github", stralign="left", disable_numparse=True)
