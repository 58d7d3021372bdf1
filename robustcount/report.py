"""Plain-text tables for people and JSON lines for programs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A left-aligned text table; floats print with 4 significant decimals."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def open_output(path):
    """Open a results file for writing, creating its directory."""
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("w", encoding="utf-8")


def write_jsonl(handle: IO[str], record: dict) -> None:
    """Append one record as a JSON line and flush it, so that a crash loses nothing written."""
    handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    handle.flush()


@contextmanager
def results_file(path, run: dict) -> Iterator[Callable[[dict], None]]:
    """A `save(record)` that writes {**run, **record} as a flushed JSON line to `path` (or does
    nothing when `path` is None); the file is closed on exit, on errors too."""
    if path is None:
        yield lambda record: None
        return
    with open_output(path) as handle:
        yield lambda record: write_jsonl(handle, {**run, **record})


def violin_plot(values: dict[str, list[float]], path, title: str) -> None:
    """One violin of values per name (PR_hat per model, as the PDP paper's figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pathlib import Path

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    names = list(values)
    figure, axes = plt.subplots(figsize=(1.8 + 1.6 * len(names), 4))
    axes.violinplot([values[n] for n in names], showmedians=True)
    axes.set_xticks(range(1, len(names) + 1), names)
    axes.set_ylabel("PR estimate")
    axes.set_ylim(-0.02, 1.02)
    axes.set_title(title, fontsize=9)
    axes.grid(alpha=0.3, axis="y")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
