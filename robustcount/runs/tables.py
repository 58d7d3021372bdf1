"""Tables as text (for terminals) and as Markdown, laid out by tabulate; cells read the same in
both: floats with 4 decimals, None as a dash, NaN (a mean or share of nothing) as n/a, and marked
words (`Marked`) in bold."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tabulate import tabulate


@dataclass(frozen=True)
class Marked:
    """A text whose parts flagged True are to stand out (an adversary's changed words)."""

    parts: tuple[tuple[str, bool], ...]

    def __str__(self) -> str:
        return "".join(f"**{text}**" if marked else text for text, marked in self.parts)


def cell(value: object) -> str:
    """A table cell: floats with 4 decimals, None as a dash, NaN as n/a, marked words in bold."""
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.4f}"
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
