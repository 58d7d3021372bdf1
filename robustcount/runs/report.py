"""The report of a run: one self-contained HTML page (tables, inline SVG figures, no outside
resource) and the same report in Markdown, with its figures as PNG files beside it, both rendered
from Jinja2 templates (`runs/templates`).

A report has sections; each is a title, tables and figures built from the run's records and
summary, so it shows exactly what the run file holds: the results, the command's own sections
(`Command.sections`), then how the run was made (provenance) and how long it took.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import median

import jinja2
from markupsafe import Markup

from robustcount.runs.figures import close_figure
from robustcount.runs.files import Run
from robustcount.runs.registry import command_named
from robustcount.runs.space_note import space_line
from robustcount.runs.summaries import (
    decided_note,
    seconds_by_index,
    summarise_run,
    summary_table,
    undecided_records,
    served_line,
    window_line,
)
from robustcount.runs.tables import Marked, cell, markdown_table
from robustcount.text import tokenize


@dataclass
class Section:
    """A titled part of the report: a warning (shown first, prominently), a note, tables
    (caption, headers, rows) and named figures."""

    title: str
    note: str = ""
    warning: str = ""
    tables: list[tuple[str, list[str], list[list]]] = field(default_factory=list)
    figures: list[tuple[str, object]] = field(default_factory=list)


def write_report(runs: Run | Sequence[Run], out_dir, name: str = "report",
                 labels: Sequence[str] | None = None, lead: Sequence[Section] = ()) -> tuple[Path, Path]:
    """Write `name`.html and `name`.md (and the Markdown's PNG figures) into `out_dir`: the report of
    one run, or of several on one page, each section titled by its run's label (default: run 1, 2, ...);
    the `lead` sections come first (a comparison of the runs)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(runs, Run):
        sections, title = report_sections(runs), _title(runs)
    else:
        labels = list(labels or (f"run {k}" for k in range(1, len(runs) + 1)))
        sections = [replace(section, title=f"{label}: {section.title}",
                            figures=[(f"{k}-{figure_name}", figure) for figure_name, figure in section.figures])
                    for k, (label, run) in enumerate(zip(labels, runs), start=1) for section in report_sections(run)]
        title = f"robustcount report of {len(runs)} runs: " + "; ".join(
            f"{label} ({_title(run).removeprefix('robustcount ')})" for label, run in zip(labels, runs))
    sections = [*lead, *sections]
    html_path, markdown_path = out_dir / f"{name}.html", out_dir / f"{name}.md"
    html_path.write_text(_render("report.html.j2", title, sections, autoescape=True), encoding="utf-8")

    def png(figure, figure_name: str) -> str:
        path = out_dir / f"{name}-{figure_name}.png"
        figure.savefig(path, dpi=110)
        return path.name

    markdown_path.write_text(_render("report.md.j2", title, sections, autoescape=False, png=png), encoding="utf-8")
    for section in sections:
        for _, figure in section.figures:
            close_figure(figure)
    return html_path, markdown_path


def _title(run: Run) -> str:
    return f"robustcount {run.header['command']}: {', '.join(m['spec'] for m in run.header['models'])} " \
           f"on {run.header['data']['spec']}"


def report_sections(run: Run) -> list[Section]:
    """The sections of the report of `run` (see the module docstring)."""
    summary = summarise_run(run)
    headers, rows = summary_table(summary)
    status = "complete" if summary["complete"] else \
        f"incomplete: {summary['examples']} of {summary['planned_examples']} examples"
    warning = "" if summary["complete"] else (
        f"Unfinished run: {summary['examples']} of {summary['planned_examples']} examples are done. Every figure "
        "and share below covers those only; continue the run with --resume.")
    space, beyond, served = space_line(summary["space"]), window_line(summary), served_line(summary)
    results = Section("Results", note=f"{summary['examples']} examples ({status}), seed {summary['seed']}: "
                      f"{decided_note(summary)}." + "".join(f" {line[0].upper()}{line[1:]}." for line in (beyond, space, served)
                                                             if line),
                      warning=warning, tables=[("Summary", headers, rows)])
    details = command_named(run.header["command"]).sections(run, summary)
    return [results, *details, *_undecided(run), _provenance(run), _timings(run)]


def _undecided(run: Run, shown: int = 20) -> list[Section]:
    """The examples whose search ended undecided, with the reason (none: no section)."""
    found = undecided_records(run)
    if not found:
        return []
    return [Section("Undecided", note=f"{len(found)} examples ended without an answer (a limit, never a result): "
                    "they count as neither robust nor broken.",
                    tables=[(f"Undecided examples (first {min(shown, len(found))} of {len(found)})",
                             ["id", "reason"], [[record["id"], reason] for record, reason in found[:shown]])])]


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
    chunks = [t for t in run.timings if t.get("record") == "chunk"]
    rows = [["sessions", len(sessions)], ["backends", ", ".join(sorted({s["backend"] for s in sessions}))],
            ["worker processes", len({t["worker"] for t in chunks})], ["examples timed", len(seconds)],
            ["total example seconds", sum(seconds)],
            ["seconds inside the model", sum(t["model_seconds"] for t in chunks)],
            ["model calls", sum(t.get("model_calls", 0) for t in chunks)],
            ["median seconds per example", median(seconds) if seconds else None]]
    return Section("Timings", note="From the timings file: they vary with the machine, never the results.",
                   tables=[("Work", ["measure", "value"], rows)])


def report_text(value) -> str:
    """An input or adversary as one line of a table (a pair as `premise / hypothesis`)."""
    if isinstance(value, list):
        return " / ".join(value)
    return "" if value is None else str(value)


def changed_words(original, adversarial) -> Marked | str:
    """`adversarial` as one line of a table with the words that differ from `original` marked (as it
    is when the two do not have the same number of words, as after a segmentation)."""
    before, after = tokenize(report_text(original)), tokenize(report_text(adversarial))
    if len(before.words) != len(after.words):
        return report_text(adversarial)
    parts = []
    for i, word in enumerate(after.words):
        parts += [(after.separators[i], False), (word, word != before.words[i])]
    return Marked(tuple(parts + [(after.separators[-1], False)]))


def _html_cell(value) -> Markup | str:
    """A table cell for the HTML page: marked words in <mark>."""
    if isinstance(value, Marked):
        return Markup("").join(Markup("<mark>{}</mark>").format(text) if marked else text
                               for text, marked in value.parts)
    return cell(value)


def _svg(figure) -> Markup:
    """The figure as inline SVG, byte-stable (no date, a fixed hash salt, text as paths)."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "robustcount", "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return Markup(text[text.index("<svg"):])


_TEMPLATES = jinja2.PackageLoader("robustcount.runs", "templates")


def _render(template: str, title: str, sections: list[Section], autoescape: bool, **filters) -> str:
    environment = jinja2.Environment(loader=_TEMPLATES, autoescape=autoescape, keep_trailing_newline=True,
                                     trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    environment.filters.update(cell=_html_cell if autoescape else cell, svg=_svg, **filters)
    environment.globals["markdown_table"] = markdown_table
    return environment.get_template(template).render(title=title, sections=sections)
