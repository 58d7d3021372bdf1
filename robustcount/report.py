"""Tables and figures: plain-text and Markdown tables, and the matplotlib figures the commands and
run reports draw."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A left-aligned text table; floats print with 4 significant decimals."""
    cells = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown (GitHub) table; floats as in `format_table`, pipes escaped."""
    def escape(value: object) -> str:
        return cell(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(escape, headers)) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(map(escape, row)) + " |" for row in rows]
    return "\n".join(lines)


def cell(value: object) -> str:
    """A table cell: floats with 4 decimals, None as a dash."""
    if isinstance(value, float):
        return f"{value:.4f}"
    return "-" if value is None else str(value)


def new_figure(width: float, height: float):
    """A matplotlib figure and axes, drawn without a display."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height))


def save_figure(figure, path) -> None:
    """Write `figure` (PNG, or by the path's suffix), creating the directory, and free it."""
    import matplotlib.pyplot as plt

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def violin_figure(values: dict[str, list[float]], title: str):
    """One violin of PR estimates per name (as the PDP paper's figure)."""
    names = [n for n in values if values[n]]
    figure, axes = new_figure(1.8 + 1.6 * max(1, len(names)), 4)
    if names:
        axes.violinplot([values[n] for n in names], showmedians=True)
    axes.set_xticks(range(1, len(names) + 1), names)
    axes.set_ylabel("PR estimate")
    axes.set_ylim(-0.02, 1.02)
    axes.set_title(title, fontsize=9)
    axes.grid(alpha=0.3, axis="y")
    figure.tight_layout()
    return figure
