"""`compare`: two models' PR on the same spaces and the same samples (`estimate`'s records, one per
model), with a paired test and a violin plot.

The paired figures (the mean difference, the Wilcoxon signed-rank test) are over the examples
both models estimated: each classifies the input correctly and each estimate was decided. The
rest are counted and shown: the examples undecided for either model (by model), and those left
out because a model misclassifies the input."""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import field
from pathlib import Path

from scipy.stats import wilcoxon

from robustcount.commands.estimate import PROptions, estimate_records, pr_plan, recorded_pr_options
from robustcount.counting.pr import summarise_pr
from robustcount.errors import RobustcountError, RobustcountWarning
from robustcount.options import option, options_dataclass
from robustcount.runs.command import Command, timings_apart
from robustcount.runs.figures import save_figure, violin_figure
from robustcount.runs.files import check_writable
from robustcount.runs.report import Section
from robustcount.runs.summaries import total_queries
from robustcount.status import Undecided, undecided_search

MIN_PAIRS = 6
"""The fewest pairs with which a two-sided Wilcoxon signed-rank test can reach p < 0.05."""


@options_dataclass
class CompareOutputs:
    plot: Path | None = field(default=None, metadata=option(
        "Violin plot of PR_hat per model (none unless given: no file is written where you did not ask).", kind=Path))


def paired_pr(records: list[dict], specs: list[str]) -> dict:
    """The PR estimates of the examples both models estimated (`pairs`, one [a, b] per example),
    and what was left out: the examples undecided by each model and by either, and those decided
    by both but misclassified by either (no estimate to pair)."""
    pairs, undecided, either, misclassified = [], {spec: 0 for spec in specs}, 0, 0
    for record in records:  # a record's models are in the header's order
        reasons = [spec for spec, m in zip(specs, record["models"]) if undecided_search(m) is not None]
        for spec in reasons:
            undecided[spec] += 1
        if reasons:
            either += 1
        elif all(m["estimate"] for m in record["models"]):
            pairs.append([m["estimate"]["pr"] for m in record["models"]])
        else:
            misclassified += 1
    return {"pairs": pairs, "undecided_by_model": undecided, "undecided_either": either,
            "misclassified_either": misclassified}


def left_out(summary: dict) -> str:
    """The examples a paired comparison left out, as a clause ("" when none was undecided)."""
    if not summary["undecided_either"]:
        return ""
    by_model = ", ".join(f"{n} by {spec}" for spec, n in summary["undecided_by_model"].items())
    return (f"; left out: {summary['undecided_either']} undecided by either model ({by_model}) and "
            f"{summary['misclassified_either']} misclassified by either")


class Compare(Command, name="compare", options=PROptions, outputs=CompareOutputs, models=2):
    """Compare two models' PR on the same spaces and the same samples, with a paired test and a violin plot."""

    def plan(self, spec, space, example):
        """Each model's calls (`pr_plan`): the same samples for both."""
        planned = pr_plan(spec.options, space)
        return dataclasses.replace(planned, basis=f"each model's: {planned.basis}")

    def task(self, worker, spec, examples):
        yield from map(timings_apart, estimate_records(worker, spec, examples))

    def recorded_options(self, recorded: dict):
        return recorded_pr_options(self.Options, recorded)

    def undecided(self, record):
        """The models' limits and reasons, when a model's estimate of this example is undecided."""
        stopped = [(m["model"], found) for m in record["models"] if (found := undecided_search(m)) is not None]
        if not stopped:
            return None
        return Undecided(tuple(limit for _, found in stopped for limit in found.limits),
                         "; ".join(f"{model}: {found.reason}" for model, found in stopped))

    def summarise(self, run) -> dict:
        """Each model's PR over the examples it estimated, and the paired comparison over those
        both estimated (`paired_pr`), with what it left out."""
        specs = [m["spec"] for m in run.header["models"]]
        per_model = {spec: [m["estimate"]["pr"] for r in run.records for m in r["models"]
                            if m["model"] == spec and m["estimate"]] for spec in specs}
        paired = paired_pr(run.records, specs)
        differences = [a - b for a, b in paired.pop("pairs")]
        test = wilcoxon(differences) if any(differences) else None
        o: PROptions = run.options
        return {"method": o.method, "eps": o.eps, "delta": o.delta,
                "models_summary": {spec: summarise_pr(values) for spec, values in per_model.items()},
                "pr": per_model, "paired_examples": len(differences), **paired,
                "mean_difference": sum(differences) / len(differences) if differences else None,
                "wilcoxon_p": None if test is None else float(test.pvalue), "queries": total_queries(run.records)}

    def table(self, summary):
        """A row per model: its estimates, and the examples undecided by it."""
        return (["model", "estimated", "median PR", "PR > 0.9", "examples", "undecided"],
                [[spec, s["estimated"],
                  *((s["median"], s["share_above_0.9"]) if s["estimated"] else ["n/a (no estimate)"] * 2),
                  summary["examples"], summary["undecided_by_model"][spec]]
                 for spec, s in summary["models_summary"].items()])

    def sections(self, run, summary):
        figure = violin_figure(summary["pr"], f"PR per model ({summary['method']}, eps {summary['eps']})")
        p = summary["wilcoxon_p"]
        note = (f"Paired on {summary['paired_examples']} examples both models classify correctly: mean difference "
                f"{summary['mean_difference']:.4f}" if summary["paired_examples"] else "No example is paired") + \
            (f", Wilcoxon signed-rank p = {p:.4g}" if p is not None else "") + left_out(summary) + "."
        return [Section("PR per model", note=note, figures=[("violin", figure)])]

    def check(self, spec, outputs) -> None:
        if outputs.plot is not None:
            check_writable(outputs.plot)

    def finish(self, spec, summary, outputs, data_spec):
        if not summary["paired_examples"]:
            if summary["undecided_either"]:
                raise RobustcountError(f"no example is estimated by both models{left_out(summary)}")
            raise RobustcountError("no example is classified correctly by both models")
        if summary["paired_examples"] < MIN_PAIRS:
            warnings.warn(f"only {summary['paired_examples']} paired examples: the Wilcoxon signed-rank test needs "
                          f"at least {MIN_PAIRS} to reach p < 0.05 at all, so its p-value says little; compare more "
                          "examples", RobustcountWarning, stacklevel=2)
        o = spec.options
        if outputs.plot is not None:
            save_figure(violin_figure(summary["pr"], f"PR on {data_spec} ({o.method}, eps {o.eps}, delta {o.delta})"),
                        outputs.plot)
        a, b = (m.spec for m in spec.models)
        p_value = "n/a (no differences)" if summary["wilcoxon_p"] is None else f"{summary['wilcoxon_p']:.4g}"
        return [f"paired on {summary['paired_examples']} examples: mean PR({a}) - PR({b}) = "
                f"{summary['mean_difference']:.4f}, Wilcoxon signed-rank p = {p_value}{left_out(summary)}; "
                f"plot: {outputs.plot or 'none (give --plot FILE)'}"]
