"""The matplotlib figures the commands and the run reports draw. matplotlib is imported when a
figure is first drawn, not with the module, so that the command line starts fast."""

from __future__ import annotations

from pathlib import Path


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


def close_figure(figure) -> None:
    """Free a figure that is no longer needed."""
    import matplotlib.pyplot as plt

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


def share_figure(steps: list[int], shares: list[float], xlabel: str, ylabel: str):
    """A line of shares in [0, 1] over integer steps (radii, distances)."""
    figure, axes = new_figure(5, 3.5)
    axes.plot(steps, shares, marker="o")
    axes.set_xticks(steps)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(alpha=0.3)
    figure.tight_layout()
    return figure


def histogram_figure(series: dict[str, list[float]], xlabel: str, ylabel: str = "examples", **options):
    """Histograms of one or more series (stacked options as matplotlib's `hist`), with a legend when
    there are several. The counts are ticked at whole numbers, and so are the values when the bins
    are a `range` (counts of substitutions, radii)."""
    from matplotlib.ticker import MaxNLocator

    figure, axes = new_figure(6, 3.5)
    axes.hist(list(series.values()), label=list(series), **options)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    if isinstance(options.get("bins"), range):
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    if len(series) > 1:
        axes.legend()
    figure.tight_layout()
    return figure
