"""The report of a run: one self-contained HTML page (tables, inline SVG figures, no outside
resource) and the same report in Markdown, with its figures as PNG files beside it.

A report has sections; each is a title, tables and figures built from the run's records and
summary, so it shows exactly what the run file holds.
"""

from __future__ import annotations

import html
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from robustcount.report import cell, markdown_table, new_figure, violin_figure
from robustcount.runs.files import Run
from robustcount.runs.summaries import seconds_by_index, summarise_run, summary_table


@dataclass
class Section:
    """A titled part of the report: a warning (shown first, prominently), a note, tables
    (caption, headers, rows) and named figures."""

    title: str
    note: str = ""
    warning: str = ""
    tables: list[tuple[str, list[str], list[list]]] = field(default_factory=list)
    figures: list[tuple[str, object]] = field(default_factory=list)


def write_report(run: Run, out_dir, name: str = "report") -> tuple[Path, Path]:
    """Write `name`.html and `name`.md (and the Markdown's PNG figures) into `out_dir`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sections = report_sections(run)
    title = f"robustcount {run.header['command']}: {', '.join(m['spec'] for m in run.header['models'])} " \
            f"on {run.header['data']['spec']}"
    html_path, markdown_path = out_dir / f"{name}.html", out_dir / f"{name}.md"
    html_path.write_text(_html(title, sections), encoding="utf-8")
    markdown_path.write_text(_markdown(title, sections, out_dir, name), encoding="utf-8")
    import matplotlib.pyplot as plt

    for section in sections:
        for _, figure in section.figures:
            plt.close(figure)
    return html_path, markdown_path


def report_sections(run: Run) -> list[Section]:
    """The sections of the report of `run`: its results, then the command's details, then how it
    was made (provenance) and how long it took."""
    summary = summarise_run(run)
    headers, rows = summary_table(summary)
    status = "complete" if summary["complete"] else \
        f"incomplete: {summary['examples']} of {summary['planned_examples']} examples"
    warning = "" if summary["complete"] else (
        f"Unfinished run: {summary['examples']} of {summary['planned_examples']} examples are done. Every figure "
        "and share below covers those only; continue the run with --resume.")
    results = Section("Results", note=f"{summary['examples']} examples ({status}), seed {summary['seed']}.",
                      warning=warning, tables=[("Summary", headers, rows)])
    details = DETAILS[run.header["command"]](run, summary)
    return [results, *details, _provenance(run), _timings(run)]


def _evaluate(run: Run, summary: dict) -> list[Section]:
    confidence = {True: [], False: []}
    for r in run.records:
        if r["correct"] is not None:
            confidence[r["correct"]].append(max(r["probabilities"]))
    figure, axes = new_figure(6, 3.5)
    axes.hist([confidence[True], confidence[False]], bins=20, range=(0, 1), label=["correct", "wrong"], stacked=True)
    axes.set_xlabel("probability of the predicted label")
    axes.set_ylabel("examples")
    axes.legend()
    figure.tight_layout()
    predicted = Counter((r["gold"], r["predicted"]) for r in run.records)
    labels = run.header["models"][0]["labels"]
    confusion = [[gold, *(predicted[(gold, p)] for p in labels)] for gold in labels]
    return [Section("Predictions", note="Rows: gold label; columns: predicted label.",
                    tables=[("Confusion matrix", ["gold \\ predicted", *labels], confusion)],
                    figures=[("confidence", figure)])]


def _zeroe(run: Run, summary: dict) -> list[Section]:
    from robustcount.zeroe_benchmark import ZeroeRow, zeroe_figure

    rows = [ZeroeRow(**row) for row in summary["rows"]]
    if not rows:
        return []
    figure = zeroe_figure(summary["clean_accuracy"], rows, summary["majority_baseline"],
                          "Relative accuracy under each Zéroe attack")
    return [Section("Robustness curves", note=f"Accuracy relative to the clean accuracy "
                    f"({summary['clean_accuracy']:.4f}) at each attack level; red: the majority-class baseline "
                    f"({summary['majority_baseline']:.4f}).", figures=[("zeroe", figure)])]


def _attack(run: Run, summary: dict) -> list[Section]:
    statuses = Counter(r["status"] for r in run.records)
    broken = [r for r in run.records if r["status"] == "success"]
    figures = []
    if broken:
        figure, axes = new_figure(6, 3.5)
        distances = Counter(r["distance"] for r in broken)
        axes.bar(list(distances), list(distances.values()))
        axes.set_xlabel("substitutions in the adversary")
        axes.set_ylabel("examples")
        figure.tight_layout()
        figures.append(("substitutions", figure))
    shown = broken[:20]
    return [Section(f"Attack ({summary['method']})",
                    tables=[("Outcomes", ["status", "examples"], sorted(statuses.items())),
                            (f"Adversaries (first {len(shown)} of {len(broken)})",
                             ["id", "substitutions", "original", "adversarial"],
                             [[r["id"], r["distance"], _text(r["input"]), _text(r["adversarial"])] for r in shown])],
                    figures=figures)]


def _certify(run: Run, summary: dict) -> list[Section]:
    radii = list(summary["certified_share"])
    figure = _share_figure([int(r) for r in radii], [summary["certified_share"][r] for r in radii],
                           "radius r (substitutions)", "share of examples certified")
    reached = Counter(r.get("certified_radius") for r in run.records if r["correct"])
    return [Section("Certification", note=f"{summary['misclassified']} misclassified examples are never "
                    f"certified; {summary['empty_spaces']} had an empty space (nothing to certify, never "
                    f"certified); {summary['undecided']} stopped undecided (space too large, budget or time).",
                    tables=[("Largest certified radius", ["radius", "examples"], sorted(reached.items()))],
                    figures=[("certified", figure)])]


def _radius(run: Run, summary: dict) -> list[Section]:
    bracketed = [r for r in run.records if r["kind"] != "misclassified"]
    figure, axes = new_figure(6, 3.5)
    lower = [r["lower"] for r in bracketed if r["lower"] is not None]
    upper = [r["upper"] for r in bracketed if r["upper"] is not None]
    axes.hist([lower, upper], bins=range(0, max(lower + upper + [1]) + 2), label=["certified (lower)",
              "adversary - 1 (upper)"], align="left")
    axes.set_xlabel("robust radius")
    axes.set_ylabel("examples")
    axes.legend()
    figure.tight_layout()
    pairs = Counter((r["lower"], r["upper"]) for r in bracketed)
    return [Section("Radius brackets", tables=[("Brackets", ["lower", "upper", "examples"],
                                                [[lo, up, n] for (lo, up), n in sorted(pairs.items(), key=str)])],
                    figures=[("radius", figure)])]


def _estimate(run: Run, summary: dict) -> list[Section]:
    values = [r["estimate"]["pr"] for r in run.records if r["estimate"]]
    figure, axes = new_figure(6, 3.5)
    axes.hist(values, bins=20, range=(0, 1))
    axes.set_xlabel("PR estimate")
    axes.set_ylabel("examples")
    figure.tight_layout()
    sections = [Section("PR distribution", note=f"Each PR lies within eps = {summary['eps']} of its estimate with "
                        f"probability at least {1 - summary['delta']} ({summary['method']}).",
                        figures=[("pr", figure)])]
    shells = summary["by_distance"]
    if shells:
        distances = [int(d) for d in shells]
        figure = _share_figure(distances, [shells[str(d)]["mean_pr"] for d in distances],
                               "exact distance d (substitutions)", "mean PR of the points at distance d")
        sections.append(Section(
            "PR by distance", note="The share of the points at each exact distance that keep the label (uniform "
            "within each distance), averaged over the examples: where robustness breaks.",
            tables=[("Mean PR per distance", ["distance", "examples", "mean PR"],
                     [[d, shells[str(d)]["examples"], shells[str(d)]["mean_pr"]] for d in distances])],
            figures=[("by-distance", figure)]))
    return sections


def _share_figure(steps: list[int], shares: list[float], xlabel: str, ylabel: str):
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


def _compare(run: Run, summary: dict) -> list[Section]:
    figure = violin_figure(summary["pr"], f"PR per model ({summary['method']}, eps {summary['eps']})")
    p = summary["wilcoxon_p"]
    note = (f"Paired on {summary['paired_examples']} examples both models classify correctly: mean difference "
            f"{summary['mean_difference']:.4f}" if summary["paired_examples"] else "No example is paired") + \
        (f", Wilcoxon signed-rank p = {p:.4g}." if p is not None else ".")
    return [Section("PR per model", note=note, figures=[("violin", figure)])]


DETAILS = {"evaluate": _evaluate, "zeroe": _zeroe, "attack": _attack, "certify": _certify, "radius": _radius,
           "estimate": _estimate, "compare": _compare}


def _provenance(run: Run) -> Section:
    h = run.header
    rows = [["command", h["command"]], ["seed", h["seed"]], ["robustcount", h["robustcount"]],
            ["python", h["python"]], ["data", f"{h['data']['spec']} ({h['data']['examples']} examples, "
                                              f"sha256 {h['data']['digest'][:16]}…)"]]
    rows += [[f"model {m['spec']}", f"digest {m['digest'] or 'none'}, labels {', '.join(m['labels'])}"]
             for m in h["models"]]
    rows += [["options", ", ".join(f"{k}={v}" for k, v in sorted(h["options"].items()))]]
    if h["space"] is not None:
        sources = ", ".join(" ".join(f"{k}={v}" for k, v in s.items()) for s in h["space"]["sources"])
        rows += [["space sources", sources],
                 ["space filters", ", ".join(f"{k}={v}" for k, v in h["space"]["filters"].items())]]
    rows += [["dependencies", ", ".join(f"{k} {v}" for k, v in h["dependencies"].items())]]
    return Section("Provenance", note="Everything the results depend on, from the run file's header.",
                   tables=[("Run", ["field", "value"], rows)])


def _timings(run: Run) -> Section:
    sessions = [t for t in run.timings if t.get("record") == "session"]
    seconds = list(seconds_by_index(run).values())
    if not sessions:
        return Section("Timings", note="No timings file beside the run file.")
    workers = {t["worker"] for t in run.timings if t.get("record") == "chunk"}
    rows = [["sessions", len(sessions)], ["backends", ", ".join(sorted({s["backend"] for s in sessions}))],
            ["worker processes", len(workers)], ["examples timed", len(seconds)],
            ["total example seconds", sum(seconds)],
            ["seconds inside the model", sum(t["model_seconds"] for t in run.timings if t.get("record") == "chunk")],
            ["model calls", sum(t.get("model_calls", 0) for t in run.timings if t.get("record") == "chunk")],
            ["median seconds per example", median(seconds) if seconds else None]]
    return Section("Timings", note="From the timings file: they vary with the machine, never the results.",
                   tables=[("Work", ["measure", "value"], rows)])


def _text(value) -> str:
    if isinstance(value, list):
        return " / ".join(value)
    return "" if value is None else str(value)


# ---------------------------------------------------------------- rendering

STYLE = """body{font-family:system-ui,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;padding:.25rem .6rem;
text-align:left;vertical-align:top}th{background:#f3f3f3}caption{text-align:left;font-weight:600;padding:.3rem 0}
figure{margin:1rem 0}svg{max-width:100%;height:auto}.note{color:#555}
.warning{border:2px solid #b00020;background:#fdecea;color:#5f0010;padding:.6rem .9rem;font-weight:600}"""


def _svg(figure) -> str:
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "robustcount", "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _html(title: str, sections: list[Section]) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    for section in sections:
        parts.append(f"<section><h2>{html.escape(section.title)}</h2>")
        if section.warning:
            parts.append(f'<p class="warning" role="alert">{html.escape(section.warning)}</p>')
        if section.note:
            parts.append(f'<p class="note">{html.escape(section.note)}</p>')
        for caption, headers, rows in section.tables:
            parts.append(f"<table><caption>{html.escape(caption)}</caption><thead><tr>"
                         + "".join(f"<th>{html.escape(str(h))}</th>" for h in headers) + "</tr></thead><tbody>")
            parts.extend("<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>" for v in row) + "</tr>" for row in rows)
            parts.append("</tbody></table>")
        for name, figure in section.figures:
            parts.append(f'<figure id="figure-{html.escape(name)}">{_svg(figure)}</figure>')
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _markdown(title: str, sections: list[Section], out_dir: Path, name: str) -> str:
    lines = [f"# {title}", ""]
    for section in sections:
        lines += [f"## {section.title}", ""]
        if section.warning:
            lines += [f"> **Warning:** {section.warning}", ""]
        if section.note:
            lines += [section.note, ""]
        for caption, headers, rows in section.tables:
            lines += [f"**{caption}**", "", markdown_table(headers, rows), ""]
        for figure_name, figure in section.figures:
            path = out_dir / f"{name}-{figure_name}.png"
            figure.savefig(path, dpi=110)
            lines += [f"![{figure_name}]({path.name})", ""]
    return "\n".join(lines)
