"""harden --model on a user's models: a checkpoint, tfidf-rt, a pipeline (docs/hardening/user-models.md).

`user-models` hardens a user's own models with `robustcount harden --model`: a transformers
checkpoint (minilm-rt-ft written by `save-model`), tfidf-rt and a scikit-learn pipeline, and measures
each before and after (TextFooler, Zéroe) on the same seeded demo:test examples.

Run: `.venv/bin/python experiments/hardening_user_models.py`.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path

import numpy as np
from hardening_common import (
    write_page,
    DOCS,
    RUNS,
    SEED,
    USER_CHECKPOINT,
    machine,
    run,
)
from hardening_user_findings import (
    described,
    fine_tuning_costs,
    full_run_projection,
    harden_costs,
    interval,
    outcomes,
    paired_change,
    target_verdict,
    time_split,
    why_no_gain,
)
from paper_tables import attack_row, robustcount_ok

from robustcount.attacks.zeroe_protocol import LEVELS
from robustcount.commands import dataset_commands
from robustcount.runs import read_run
from robustcount.runs.tables import format_table

SKLEARN_PIPELINE = "py:experiments.sklearn_pipeline:char_tfidf"


def hardened_checkpoint(name: str, *arguments: str) -> str:
    """The output runs/hardening/NAME of `robustcount harden ARGUMENTS` (a user's model: its card is
    robustcount-card.json or robustcount-model.json), continued when interrupted."""
    directory = RUNS / name
    if not any((directory / card).exists() for card in ("robustcount-card.json", "robustcount-model.json")) \
            or (directory / ".harden").exists():
        seconds = summed_over_sittings(RUNS / f"{name}.seconds", lambda: robustcount_ok(
            "harden", *arguments, "--out", str(directory), *(["--resume"] if directory.exists() else [])))
        (directory / "seconds.txt").write_text(f"{seconds:.0f}\n")
    return str(directory)


def summed_over_sittings(ledger: Path, work) -> float:
    """Run `work()` and return the wall seconds it has taken over all its sittings: the earlier ones'
    are read from `ledger`, which this one keeps up to date every 30 s (a killed sitting counts up to
    its last 30 s; an interrupted one in full)."""
    earlier = float(ledger.read_text()) if ledger.exists() else 0.0
    started, done = time.time(), threading.Event()

    def keep() -> None:
        while not done.wait(30):
            ledger.write_text(f"{earlier + time.time() - started:.0f}\n")

    keeper = threading.Thread(target=keep, daemon=True)
    keeper.start()
    try:
        work()
    finally:
        done.set()
        keeper.join()
        ledger.write_text(f"{earlier + time.time() - started:.0f}\n")
    return earlier + time.time() - started


ZEROE_HEADING = "## tfidf-rt and an sklearn pipeline against Zéroe (Eger & Benz 2020)"


def zeroe_section(zeroe_test: int) -> list[str]:
    """user-models.md's Zéroe section: tfidf-rt and an sklearn pipeline, each refitted with Zéroe
    copies, measured by the `zeroe` command on `zeroe_test` seeded demo:test examples."""
    zeroe_rows = []
    for name, model, how in (("tfidf-rt", "tfidf-rt", None), ("sklearn pipeline (char TF-IDF)", SKLEARN_PIPELINE, None)):
        out = hardened_checkpoint(f"{model.rsplit(':', 1)[-1]}-zeroe", "--model", model, "--augment", "zeroe",
                                  "--threads", "1")
        for label, spec in (("", model), (" + Zéroe copies", out)):
            done = run(f"zeroe-{Path(spec).name.replace(':', '-')}-{zeroe_test}", "zeroe", "--model", spec, "--data",
                       "demo:test", "--sample", str(zeroe_test), "--seed", str(SEED), "--out", str(RUNS / f"zeroe-{Path(spec).name.replace(':', '-')}"))
            summary = dataset_commands()["zeroe"].summarise(done)
            by_level = {level: np.mean([r["accuracy"] for r in summary["rows"] if r["level"] == level])
                        for level in LEVELS}
            zeroe_rows.append([name + label, f"{100 * summary['clean_accuracy']:.1f}",
                               *(f"{100 * by_level[level]:.1f}" for level in LEVELS)])
    return [
        ZEROE_HEADING, "",
        format_table(["model", "clean acc.", *(f"mean acc. under Zéroe, {level}" for level in LEVELS)], zeroe_rows),
        "",
        "Refitted on demo:train plus one Zéroe copy of each example (attacker and level drawn per copy from all ten "
        "and low, mid, high: Eger & Benz 2020's mixed training); measured by the `zeroe` command (seed 0), the "
        f"mean over the ten attackers at each level, on {zeroe_test} seeded demo:test examples "
        f"(`--data demo:test --sample {zeroe_test} --seed {SEED}`). As for minilm-rt's head in zeroe-defence.md, "
        "mixed Zéroe training buys a linear model on these features almost nothing.", "",
    ]


def kept_zeroe_section() -> list[str]:
    """The Zéroe section of user-models.md as it stands (`--no-zeroe`: not measured again)."""
    text = (DOCS / "user-models.md").read_text()
    kept = text[text.index(ZEROE_HEADING):text.index("## One report of both models")].rstrip("\n").split("\n")
    note = "(This section is kept from its earlier measurement; `--no-zeroe` did not run it again.)"
    return [*kept, *([] if note in kept else ["", note]), ""]


def user_models(train: int, attack_sample: int, test: int, zeroe_test: int, epochs: int = 1,
                space_train: int | None = None, with_zeroe: bool = True) -> None:
    """docs/hardening/user-models.md: a user's transformers checkpoint (minilm-rt-ft from save-model)
    hardened by TextFooler's adversarial examples and by uniform synonym-space copies, measured by
    TextFooler on the same `test` seeded demo:test examples; tfidf-rt and an sklearn pipeline
    hardened by Zéroe copies, measured by the `zeroe` command (seed 0) on `zeroe_test` seeded
    demo:test examples. `train` 0: all of demo:train; `attack_sample` 0: all of the training examples;
    `epochs` of fine-tuning; the synonym-space model trains on `space_train` seeded demo:train
    examples (0: all; None: no such model); without `with_zeroe`, the Zéroe section of the page is
    kept as it is."""
    if not USER_CHECKPOINT.exists():
        robustcount_ok("save-model", "minilm-rt-ft", str(USER_CHECKPOINT))
    def common(size: int) -> list[str]:
        return [*(["--sample", str(size)] if size else []), "--epochs", str(epochs), "--threads", "1"]

    def named(size: int) -> str:
        return f"{size}-{attack_sample}" + (f"-{epochs}e" if epochs != 1 else "")

    checkpoints = {
        "minilm-rt-ft (the user's checkpoint)": (str(USER_CHECKPOINT), None),
        "+ TextFooler adversaries": (hardened_checkpoint(
            f"minilm-rt-ft-textfooler-{named(train)}", "--model", str(USER_CHECKPOINT), "--augment",
            "textfooler", "--attack-sample", str(attack_sample), *common(train)), "textfooler"),
    }
    if space_train is not None:
        checkpoints["+ uniform synonym-space copies (r = 1)"] = (hardened_checkpoint(
            f"minilm-rt-ft-space-{named(space_train)}", "--model", str(USER_CHECKPOINT), "--augment", "space",
            "--radius", "1", *common(space_train)), "space")
    data = ["--data", "demo:test", "--sample", str(test), "--seed", str(SEED)]
    rows, attacked, costs = [], {}, []
    for name, (model, how) in checkpoints.items():
        started = time.time()
        done = attacked[name] = run(f"textfooler-{Path(model).name}-{test}", "attack", "--method", "textfooler",
                                    "--model", model, *data)
        s = attack_row(done)
        clean, survived = outcomes(done)
        card = {} if how is None else json.loads((Path(model) / "robustcount-card.json").read_text())["hardened"]
        trained = "" if how is None else (f"{card['training']['epochs'][-1]['trained_on']} texts "
                                          f"({card['training']['epochs'][-1]['copies']} copies), "
                                          f"{float((Path(model) / 'seconds.txt').read_text()) / 60:.0f} min")
        rows.append([name, interval(clean), interval(survived), f"{100 * s['success_rate']:.1f}",
                     f"{100 * s['mean_perturbed_share']:.1f}", trained, f"{s['compute_seconds'] / 60:.0f} min"])
        costs.append([f"TextFooler on a test example (of {len(done.records)}), against {name}",
                      f"{s['compute_seconds'] / len(done.records):.2f}", f"{s['compute_seconds'] / 60:.0f} min"])
        if how is not None:
            costs += harden_costs(Path(model), card)
        print(rows[-1], f"({time.time() - started:.0f} s)")
    (_, before), *hardened_runs = attacked.items()
    paired_rows = [[f"{after_name} - checkpoint", *paired_change(before, after, 0), *paired_change(before, after, 1)]
                   for after_name, after in hardened_runs]
    zeroe = zeroe_section(zeroe_test) if with_zeroe else kept_zeroe_section()
    lines = [
        "# Hardening a user's own models", "",
        "## A transformers checkpoint against TextFooler (Jin et al. 2020, Table 12)", "",
        format_table(["model", "clean acc.", "after-attack acc.", "attack success", "% perturbed", "trained on",
                      "attack time"], rows), "",
        f"TextFooler (its default setting, the default `synonyms` space) on the same {test} seeded demo:test "
        f"examples (`--data demo:test --sample {test} --seed {SEED}`) for every model. The user's checkpoint is "
        f"`robustcount save-model minilm-rt-ft {USER_CHECKPOINT}` (a plain BertForSequenceClassification "
        f"directory); each hardened model is that checkpoint fine-tuned in full for {epochs} epoch(s) (AdamW 2e-5, "
        f"batch 32) on training examples (10% held out) plus their copies: {described(train)} with TextFooler's "
        "adversarial examples against the checkpoint on "
        f"{'every one of them' if not attack_sample else f'{attack_sample:,} of them'} (found once, before the "
        "first epoch)" + ("" if space_train is None else
                          f", or {described(space_train)} with one uniform point of each one's synonym space at r = 1")
        + ". Accuracies in % with their 95% Wilson interval. Paper (BERT on MR): after-attack accuracy 11.5 -> 18.7.",
        "",
        "Paired on the same examples (hardened minus checkpoint, in points; 95% interval over the discordant "
        "examples; +gained / -lost examples; exact McNemar p):", "",
        format_table(["models", "clean acc. change", "clean +/-", "clean p", "after-attack change", "after-attack +/-",
                      "after-attack p"], paired_rows), "",
        target_verdict(before, hardened_runs[0][1], checkpoints["+ TextFooler adversaries"][0], train, test), "",
        why_no_gain(before, hardened_runs[0][1], str(USER_CHECKPOINT), checkpoints["+ TextFooler adversaries"][0]), "",
        "Cost, stage by stage (seconds of wall time on the shared machine):", "",
        format_table(["stage", "seconds each", "in this run"], costs), "",
        full_run_projection(before, hardened_runs[0][1], checkpoints["+ TextFooler adversaries"][0], test),
        fine_tuning_costs(), "",
        time_split([*attacked.values(), read_run(Path(checkpoints["+ TextFooler adversaries"][0]) / "adversaries-1.jsonl")]),
        "",
        *zeroe,
        "## One report of both models: `harden --evaluate`", "",
        "[report-user-tfidf/report.html](report-user-tfidf/report.html) is `robustcount harden --model tfidf-rt "
        "--augment zeroe --threads 1 --out runs/hardening/tfidf-rt-zeroe --evaluate demo:test --evaluate-sample 50 "
        "--evaluate-time-limit 60` (the evaluation took 9 minutes here): clean accuracy 0.80 -> 0.76, attack "
        "success 0.38 -> 0.29, after-attack accuracy 0.48 -> 0.54, certified at r = 1 0.62 -> 0.66 and r = 2 "
        "0.52 -> 0.58, PR > 0.9 0.70 -> 0.84 (Wilcoxon p = 0.006 on the 37 examples both classify correctly), "
        "TextFooler and the certificates in the default synonyms space.", "",
        f"Command: `.venv/bin/python experiments/hardening_user_models.py --train {train} --attack-sample "
        f"{attack_sample} --test {test} --zeroe-test {zeroe_test} --epochs {epochs}"
        f"{' --no-space-copies' if space_train is None else '' if space_train == train else f' --space-train {space_train}'}"
        f"{'' if with_zeroe else ' --no-zeroe'}` (run files in runs/hardening/); machine: {machine()}, "
        "shared with other runs (load average 2 to 17 during these runs: times are upper bounds).",
    ]
    write_page("user-models.md", lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=0, help="demo:train examples (0: all)")
    parser.add_argument("--attack-sample", type=int, default=2000, help="examples TextFooler attacks")
    parser.add_argument("--test", type=int, default=200, help="demo:test examples attacked")
    parser.add_argument("--zeroe-test", type=int, default=1975, help="demo:test examples of `zeroe`")
    parser.add_argument("--epochs", type=int, default=1, help="epochs of fine-tuning the checkpoint")
    parser.add_argument("--no-zeroe", action="store_true", help="keep the page's Zéroe section")
    parser.add_argument("--no-space-copies", action="store_true", help="no synonym-space model")
    parser.add_argument("--space-train", type=int, help="the synonym-space model's demo:train examples (0: all; "
                        "default: --train's)")
    args = parser.parse_args()
    user_models(args.train, args.attack_sample, args.test, args.zeroe_test, args.epochs,
                None if args.no_space_copies else args.train if args.space_train is None else args.space_train,
                not args.no_zeroe)
