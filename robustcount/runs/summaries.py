"""The summary of a run, computed from its records alone (so a resumed or parallel run summarises
the same; but a served model's ledger, which its timings hold): the fields every run has (with how many examples' searches were decided and how many ended
undecided, `Command.undecided`, and the space it searched, `space_note`), then its command's
(`Command.summarise`). A figure over the decided examples only says so where it is shown
(`decided_note`)."""

from __future__ import annotations

from collections import Counter

from robustcount.models.llm.ledger import LEDGER, ledger_line, ledger_sum
from robustcount.proofs.certify_record import WINDOW_FIELD
from robustcount.runs.files import Run
from robustcount.runs.registry import command_named
from robustcount.runs.space_note import space_summary
from robustcount.spaces.space import window_note


def summarise_run(run: Run) -> dict:
    """The command's summary of `run`, ending with the run's whole header (versions, seed, model
    digests, space definition, data digest), so that a summary also says what produced it."""
    header = run.header
    command = command_named(header["command"])
    undecided = undecided_records(run)
    return {"command": header["command"], "models": [m["spec"] for m in header["models"]],
            "data": header["data"]["spec"], "seed": header["seed"], "examples": len(run.records),
            "planned_examples": header["data"]["examples"], "complete": len(run.records) == header["data"]["examples"],
            "decided": len(run.records) - len(undecided), "undecided": len(undecided), **window_summary(run),
            **ledger_summary(run),
            "space": space_summary(header, run.records), **command.summarise(run), "run": header}


def ledger_summary(run: Run) -> dict:
    """`endpoint`: a served model's ledger over the run's sessions, from its timings (what varies
    from run to run: a rerun's answers come from the response cache); nothing without one."""
    found = ledger_sum([timing[LEDGER] for timing in run.timings if isinstance(timing.get(LEDGER), dict)])
    moving = [model["spec"] for model in run.header["models"] if not model.get("served", {}).get("deterministic", True)]
    return ({} if found is None else {LEDGER: found}) | ({"nondeterministic": moving} if moving else {})


def served_line(summary: dict) -> str | None:
    """The summary's ledger of a served model, and the served models whose answers to identical
    requests moved beyond the margin tolerance, in one line; None without either."""
    parts = [ledger_line(summary[LEDGER])] if LEDGER in summary else []
    if summary.get("nondeterministic"):
        parts.append(f"answers of {', '.join(summary['nondeterministic'])} move between identical requests beyond "
                     "the margin tolerance: its results may not repeat (no certificate is issued for it)")
    return "; ".join(parts) or None


def window_summary(run: Run) -> dict:
    """`beyond_window`: the words of the run's inputs beyond the model's window (`window` records:
    its size, the texts that reach beyond it, their words, those beyond, whether the spaces kept
    them, None for a run without spaces); nothing when no input reaches beyond it."""
    windows = [record[WINDOW_FIELD] for record in run.records if WINDOW_FIELD in record]
    if not windows:
        return {}
    space = run.header.get("space")
    return {"beyond_window": {"size": windows[0]["size"], "texts": len(windows),
                              "words": sum(w["words"] for w in windows), "beyond": sum(w["beyond"] for w in windows),
                              "kept": None if space is None else bool(space["filters"].get("keep_beyond_window"))}}


def window_line(summary: dict) -> str | None:
    """The summary's words beyond the model's window in one line, or None when there are none."""
    found = summary.get("beyond_window")
    if found is None:
        return None
    return window_note(found, found["kept"], f" (in {found['texts']} of the {summary['examples']} texts)")


def undecided_records(run: Run) -> list[tuple[dict, str]]:
    """The records whose search ended undecided, each with its reason (`Command.undecided`)."""
    command = command_named(run.header["command"])
    return [(record, found.reason) for record in run.records if (found := command.undecided(record)) is not None]


def decided_note(summary: dict) -> str:
    """How many of the run's examples were decided and how many not, and what the figures cover
    (`Command.undecided_note`)."""
    if not summary["undecided"]:
        return f"all {summary['examples']} examples decided"
    return command_named(summary["command"]).undecided_note(summary)


def summary_table(summary: dict) -> tuple[list[str], list[list]]:
    """The headers and rows of the table that sums up `summary` (its command's table)."""
    return command_named(summary["command"]).table(summary)


def total_queries(records) -> dict:
    """Sums of the per-example query counters."""
    total = Counter()
    for record in records:
        for queries in [record.get("queries")] + [m.get("queries") for m in record.get("models", [])]:
            total.update(queries or {})
    return dict(total)


def seconds_by_index(run: Run) -> dict[int, float]:
    """Wall seconds per example, from the timings (a chunk's time split evenly over its examples;
    the last timing of an example wins when a chunk was re-run)."""
    seconds = {}
    for timing in run.timings:
        if timing.get("record") == "chunk" and timing["indices"]:
            share = timing["seconds"] / len(timing["indices"])
            seconds.update((i, share) for i in timing["indices"])
    return seconds
