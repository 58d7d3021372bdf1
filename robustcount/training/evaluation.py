"""What hardening bought, measured by the same yardsticks on the same held-out examples: the model
given to `harden` and the hardened one, each attacked (clean accuracy, attack success, after-attack
accuracy), certified up to r = 2 (the share certified at r = 1, 2) and, together, compared by PR
(the share with PR > 0.9 and the paired Wilcoxon test of `compare`), written as one report with
both models side by side.

Each measurement is an ordinary run of its command with its run file in the evaluation folder
(`attack-input.jsonl`, `certify-hardened.jsonl`, `compare.jsonl`, ...), continued where it
stopped when the folder is given again (kill -9 and Ctrl-C lose only the examples in progress), and
deterministic for the seed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from robustcount.commands.attack import AttackOptions
from robustcount.commands.certify import CertifyOptions
from robustcount.commands.estimate import PROptions
from robustcount.data import Example
from robustcount.models.spec import ModelSpec
from robustcount.runs.report import Section, write_report
from robustcount.runs.runner import execute
from robustcount.runs.spec import RunSpec
from robustcount.runs.summaries import summarise_run
from robustcount.spaces.build import SpaceSpec

RADII = (1, 2)
ROLES = ("input", "hardened")
SUMMARY = "summary.json"


def evaluate_hardening(models: Sequence[str], examples: Sequence[Example], data: dict, folder: str | Path, *,
                       seed: int = 0, attack: str = "textfooler", space: SpaceSpec = SpaceSpec(),
                       time_limit: float | None = None, progress: bool = True) -> dict:
    """Measure the input model and the hardened one (`models`, in that order) on `examples` (described
    by `data`) into `folder`; returns the side-by-side summary (also `folder/summary.json`) and
    writes `folder/report.html` and `report.md`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    limits = {} if time_limit is None else {"time_limit": time_limit}

    def run(name: str, command: str, chosen: Sequence[str], options):
        spec = RunSpec(command, tuple(ModelSpec(m, device="cpu") for m in chosen), seed=seed, space=space,
                       options=options)
        path = folder / f"{name}.jsonl"
        return execute(spec, examples, data, output=path, resume=path.exists(), progress=progress)

    runs, labels = [], []
    for role, model in zip(ROLES, models):
        runs.append(run(f"attack-{role}", "attack", [model], AttackOptions(method=attack, **limits)))
        runs.append(run(f"certify-{role}", "certify", [model], CertifyOptions(radius=max(RADII), **limits)))
        labels += [f"{role} {attack}", f"{role} certify"]
    runs.append(run("compare", "compare", models, PROptions(**limits)))
    labels.append("PR compared")
    summary = side_by_side(models, [summarise_run(r) for r in runs], attack)
    (folder / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n")
    write_report(runs, folder, labels=labels, lead=[comparison_section(summary)])
    return summary


def side_by_side(models: Sequence[str], summaries: list[dict], attack: str) -> dict:
    """The figures of each model from its runs' summaries (attack, certify per model, then compare)."""
    compared = summaries[-1]
    per_model = {}
    for k, (role, model) in enumerate(zip(ROLES, models)):
        attacked, certified = summaries[2 * k], summaries[2 * k + 1]
        per_model[role] = {
            "model": model, "examples": attacked["examples"], "clean_accuracy": attacked["original_accuracy"],
            "attack_success": attacked["success_rate"], "after_attack_accuracy": attacked["accuracy_under_attack"],
            **{f"certified_r{r}": certified["certified_share"].get(r, float("nan")) for r in RADII},
            "pr_above_0.9": compared["models_summary"][model]["share_above_0.9"]}
    return {"attack": attack, "models": per_model, "paired_examples": compared["paired_examples"],
            "mean_pr_difference": compared["mean_difference"], "wilcoxon_p": compared["wilcoxon_p"]}


ROWS = (("clean accuracy", "clean_accuracy"), ("attack success", "attack_success"),
        ("after-attack accuracy", "after_attack_accuracy"),
        *((f"certified at r = {r}", f"certified_r{r}") for r in RADII), ("PR > 0.9 (of those estimated)", "pr_above_0.9"))


def comparison_section(summary: dict) -> Section:
    """The report's first section: both models' figures side by side, and the change."""
    before, after = summary["models"]["input"], summary["models"]["hardened"]
    rows = [[what, before[key], after[key], _change(before[key], after[key])] for what, key in ROWS]
    p = summary["wilcoxon_p"]
    note = (f"The same {before['examples']} examples for both models, attack {summary['attack']}. PR is paired on "
            f"{summary['paired_examples']} examples both models classify correctly: mean PR(input) - PR(hardened) "
            f"{_number(summary['mean_pr_difference'])}, Wilcoxon signed-rank p = {_number(p)}.")
    return Section("Input and hardened model side by side", note=note,
                   tables=[("Before and after", ["measure", f"input ({before['model']})",
                                                 f"hardened ({after['model']})", "change"], rows)])


def _change(before, after):
    return after - before if isinstance(before, float) and isinstance(after, float) else float("nan")


def _number(value) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4g}"
