"""What hardening bought, measured by the same yardsticks on the same held-out examples: the model
given to `harden` and the hardened one, each attacked (clean accuracy, attack success, after-attack
accuracy), certified up to r = 2 (the share certified at r = 1, 2) and, together, compared by PR
(the share with PR > 0.9 and the paired Wilcoxon test of `compare`), written as one report with
both models side by side. Every figure but clean accuracy compares only the examples decided in
both models' runs (at that radius, for a share certified), and counts the rest: the examples
undecided for the input model, for the hardened one and for either (a limit reached on one side
is never a change).

Each measurement is an ordinary run of its command with its run file in the evaluation folder
(`attack-input.jsonl`, `certify-hardened.jsonl`, `compare.jsonl`, ...), continued where it
stopped when the folder is given again (kill -9 and Ctrl-C lose only the examples in progress), and
deterministic for the seed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from robustcount.commands.attack import AttackOptions, summarise_attacks
from robustcount.commands.certify import CertifyOptions, certified_at
from robustcount.commands.compare import paired_pr
from robustcount.commands.estimate import PROptions
from robustcount.data import Example
from robustcount.models.spec import ModelSpec
from robustcount.runs.files import Run
from robustcount.runs.registry import command_named
from robustcount.runs.report import Section, write_report
from robustcount.runs.runner import RunOutput, execute
from robustcount.runs.spec import RunSpec
from robustcount.runs.summaries import summarise_run
from robustcount.spaces.build import SpaceSpec

RADII = (1, 2)
ROLES = ("input", "hardened")
SUMMARY = "summary.json"


@dataclass(frozen=True)
class EvaluationSettings:
    """How `evaluate_hardening` measures both models: the runs' `seed`, the `attack` method, the
    perturbation `space`, and each example's `time_limit` in seconds (none when None)."""

    seed: int = 0
    attack: str = "textfooler"
    space: SpaceSpec = SpaceSpec()
    time_limit: float | None = None


def evaluate_hardening(models: Sequence[str], examples: Sequence[Example], data: dict, folder: str | Path,
                       settings: EvaluationSettings = EvaluationSettings(), *, progress: bool = True) -> dict:
    """Measure the input model and the hardened one (`models`, in that order) on `examples` (described
    by `data`) into `folder` as `settings` say; returns the side-by-side summary (also
    `folder/summary.json`) and writes `folder/report.html` and `report.md`."""
    seed, attack, space, time_limit = settings.seed, settings.attack, settings.space, settings.time_limit
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    limits = {} if time_limit is None else {"time_limit": time_limit}

    def run(name: str, command: str, chosen: Sequence[str], options):
        spec = RunSpec(command, tuple(ModelSpec(m, device="cpu") for m in chosen), seed=seed, space=space,
                       options=options)
        path = folder / f"{name}.jsonl"
        return execute(spec, examples, data, output=RunOutput(path, resume=path.exists()), progress=progress)

    runs, labels = [], []
    for role, model in zip(ROLES, models):
        runs.append(run(f"attack-{role}", "attack", [model], AttackOptions(method=attack, **limits)))
        runs.append(run(f"certify-{role}", "certify", [model], CertifyOptions(radius=max(RADII), **limits)))
        labels += [f"{role} {attack}", f"{role} certify"]
    runs.append(run("compare", "compare", models, PROptions(**limits)))
    labels.append("PR compared")
    summary = side_by_side(models, runs, attack)
    (folder / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n")
    write_report(runs, folder, labels=labels, lead=[comparison_section(summary)])
    return summary


def side_by_side(models: Sequence[str], runs: Sequence[Run], attack: str) -> dict:
    """The figures of each model from its runs (attack and certify per model, then compare): clean
    accuracy over every example; each other figure over the examples decided in both models' runs
    (`paired`), with how many were undecided in the input's, in the hardened model's and in either
    (`compared`, by figure)."""
    attacked, certified = (runs[0], runs[2]), (runs[1], runs[3])
    per_model = {role: {"model": model, "examples": len(attacked[k].records),
                        "clean_accuracy": summarise_attacks(attacked[k].records)["original_accuracy"]}
                 for k, (role, model) in enumerate(zip(ROLES, models))}
    compared = {}

    def measure(key: str, pairs: list[tuple[dict, dict]], undecided: dict, figure) -> None:
        compared[key] = {"examples": len(pairs), **undecided}
        for k, role in enumerate(ROLES):
            per_model[role][key] = figure([pair[k] for pair in pairs])

    pairs, undecided = paired(*attacked, _decided(attacked[0]))
    measure("attack_success", pairs, undecided, lambda records: summarise_attacks(records)["success_rate"])
    measure("after_attack_accuracy", pairs, undecided,
            lambda records: summarise_attacks(records)["accuracy_under_attack"])
    for r in RADII:
        pairs, undecided = paired(*certified, lambda record, r=r: certified_at(record, r) is not None)
        measure(f"certified_r{r}", pairs, undecided, lambda records, r=r: _share([certified_at(x, r) for x in records]))
    pr = paired_pr(runs[4].records, list(models))
    pr_pairs = [({"pr": a}, {"pr": b}) for a, b in pr["pairs"]]
    by_model = pr["undecided_by_model"]
    measure("pr_above_0.9", pr_pairs, {"undecided_input": by_model[models[0]], "undecided_hardened":
                                       by_model[models[1]], "undecided_either": pr["undecided_either"]},
            lambda records: _share([x["pr"] > 0.9 for x in records]))
    summary = summarise_run(runs[4])
    return {"attack": attack, "models": per_model, "compared": compared, "paired_examples": summary["paired_examples"],
            "mean_pr_difference": summary["mean_difference"], "wilcoxon_p": summary["wilcoxon_p"]}


def paired(before: Run, after: Run, decided) -> tuple[list[tuple[dict, dict]], dict]:
    """The records of the examples `decided` in both runs, paired by example, and how many were
    undecided in `before`, in `after` and in either."""
    by_index = {record["index"]: record for record in after.records}
    pairs, undecided = [], {"undecided_input": 0, "undecided_hardened": 0, "undecided_either": 0}
    for record in before.records:
        other = by_index.get(record["index"])
        if other is None:
            continue
        left = [not decided(record), not decided(other)]
        undecided["undecided_input"] += left[0]
        undecided["undecided_hardened"] += left[1]
        undecided["undecided_either"] += any(left)
        if not any(left):
            pairs.append((record, other))
    return pairs, undecided


def _decided(run: Run):
    """Whether a record of `run`'s command was decided (`Command.undecided`)."""
    command = command_named(run.header["command"])
    return lambda record: command.undecided(record) is None


def _share(flags: list) -> float:
    return sum(map(bool, flags)) / len(flags) if flags else float("nan")


ROWS = (("clean accuracy", "clean_accuracy"), ("attack success", "attack_success"),
        ("after-attack accuracy", "after_attack_accuracy"),
        *((f"certified at r = {r}", f"certified_r{r}") for r in RADII), ("PR > 0.9", "pr_above_0.9"))
UNDECIDED = "undecided: input / hardened / either"


def comparison_table(summary: dict) -> tuple[list[str], list[list]]:
    """Each measure of both models, the change, the examples it compares (decided for both), and
    those left out as undecided in the input's runs, the hardened model's and either."""
    before, after = summary["models"]["input"], summary["models"]["hardened"]
    rows = []
    for what, key in ROWS:
        compared = summary["compared"].get(key)
        left = "-" if compared is None else \
            f"{compared['undecided_input']} / {compared['undecided_hardened']} / {compared['undecided_either']}"
        rows.append([what, before[key], after[key], _change(before[key], after[key]),
                     before["examples"] if compared is None else compared["examples"], left])
    return ["measure", f"input ({before['model']})", f"hardened ({after['model']})", "change", "compared on",
            UNDECIDED], rows


def comparison_section(summary: dict) -> Section:
    """The report's first section: both models' figures side by side, and the change."""
    before = summary["models"]["input"]
    p = summary["wilcoxon_p"]
    note = (f"The same {before['examples']} examples for both models, attack {summary['attack']}. Every figure but "
            "clean accuracy compares only the examples decided for both models (compared on); those undecided (a "
            "limit, never a result) in either model's run are left out and counted. PR is paired on "
            f"{summary['paired_examples']} examples both models classify correctly and both estimated: mean "
            f"PR(input) - PR(hardened) {_number(summary['mean_pr_difference'])}, Wilcoxon signed-rank p = "
            f"{_number(p)}.")
    return Section("Input and hardened model side by side", note=note,
                   tables=[("Before and after", *comparison_table(summary))])


def _change(before, after):
    return after - before if isinstance(before, float) and isinstance(after, float) else float("nan")


def _number(value) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4g}"
