"""`zeroe`: accuracy under each of the ten Zéroe attacks at each level (the paper's Table 6),
relative to clean accuracy (s*(p) = s(p) / s(0), its eq. 1), and a plot as its Figure 1.

Each example is attacked with its own seed, derived from the run's seed, the attack, the level
and the example id, so any single cell can be reproduced alone.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from robustcount.attacks.zeroe_protocol import LEVELS, perturbed_inputs
from robustcount.commands.evaluate import BATCHES_PER_CHUNK
from robustcount.data import Example, label_index
from robustcount.models.engine import QueryEngine
from robustcount.options import option, options_dataclass
from robustcount.runs.command import Command, Planned
from robustcount.runs.figures import new_figure, save_figure
from robustcount.runs.files import check_writable
from robustcount.runs.report import Section
from robustcount.runs.tables import format_table
from robustcount.spaces.perturbers import PERTURBERS, get_perturber


@dataclass
class ZeroeRow:
    """Accuracy under one attack at one level."""

    attack: str
    level: str
    p: float
    examples: int
    accuracy: float
    relative: float
    changed: float  # share of inputs the attack changed at all


def zeroe_records(
    engine: QueryEngine,
    examples: Sequence[Example],
    attacks: Sequence[str] = tuple(PERTURBERS),
    levels: Sequence[str] = tuple(LEVELS),
    seed: int = 0,
) -> list[dict]:
    """One record per example: its gold label, the clean prediction and, for each attack and
    level, the attacked input and the prediction on it. Each (attack, level) goes to the model
    apart, so that a batch holds inputs of one kind and similar token lengths."""
    labels = engine.labels
    clean = engine.predict([e.input for e in examples])
    cells = []
    for attack in attacks:
        for level in levels:
            attacked = perturbed_inputs(examples, attack, level, seed)
            cells.append((attack, level, attacked, engine.predict(attacked)))
    records = []
    for k, example in enumerate(examples):
        gold = label_index(example.label, labels)
        records.append({
            "id": example.id, "input": example.input, "gold": labels[gold], "predicted": labels[clean[k]],
            "correct": int(clean[k]) == gold,
            "attacked": [{"attack": attack, "level": level, "input": attacked[k], "predicted": labels[predicted[k]],
                          "correct": int(predicted[k]) == gold, "changed": attacked[k] != example.input}
                         for attack, level, attacked, predicted in cells],
        })
    return records


def zeroe_rows(records: Sequence[dict]) -> tuple[float, list[ZeroeRow]]:
    """Clean accuracy and one row per (attack, level), in the records' order, from
    `zeroe_records` records."""
    n = len(records)
    clean = sum(r["correct"] for r in records) / n
    rows = []
    for j, cell in enumerate(records[0]["attacked"] if records else []):
        accuracy = sum(r["attacked"][j]["correct"] for r in records) / n
        changed = sum(r["attacked"][j]["changed"] for r in records) / n
        rows.append(ZeroeRow(cell["attack"], cell["level"], LEVELS[cell["level"]], n, accuracy,
                             accuracy / clean if clean else float("nan"), changed))
    return clean, rows


def rows_as_dicts(rows: Sequence[ZeroeRow]) -> list[dict]:
    return [asdict(r) for r in rows]


def zeroe_figure(clean: float, rows: Sequence[ZeroeRow], baseline: float, title: str):
    """Relative accuracy s*(p) per attack over none/low/mid/high, with the relative majority-class
    baseline as a red line (as the paper's Figure 1)."""
    figure, axes = new_figure(7, 4.5)
    attacks = list(dict.fromkeys(r.attack for r in rows))
    for attack in attacks:
        mine = [r for r in rows if r.attack == attack]
        axes.plot([0.0] + [r.p for r in mine], [1.0] + [r.relative for r in mine], marker="o", label=attack)
    if clean:
        axes.axhline(baseline / clean, color="red", linewidth=1.5, label="majority class")
    axes.set_xticks([0.0, *LEVELS.values()], ["none", *LEVELS])
    axes.set_xlabel("attack level p")
    axes.set_ylabel("relative accuracy s*(p)")
    axes.set_title(title)
    axes.set_ylim(0, 1.05)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, ncol=2, loc="lower left")
    figure.tight_layout()
    return figure


@options_dataclass
class ZeroeOptions:
    attacks: tuple[str, ...] = field(default=(), metadata=option(
        "Attack to run (repeatable; default: all ten): a Zéroe perturber's name, natural:PATH (the natural "
        "perturber over your misspelling table) or table:PATH (your neighbour table).", names=("--attack",),
        multiple=True, kind=str))
    levels: tuple[str, ...] = tuple(LEVELS)

    def __post_init__(self):
        object.__setattr__(self, "attacks", tuple(self.attacks) or tuple(PERTURBERS))
        object.__setattr__(self, "levels", tuple(self.levels))
        for name in self.attacks:
            get_perturber(name)  # an unknown name fails here, before any work


@options_dataclass
class ZeroeOutputs:
    out_dir: Path = field(default=Path("zeroe-results"), metadata=option(
        "Directory for zeroe.json, zeroe.md and zeroe.png.", names=("--out",), kind=Path))


class Zeroe(Command, name="zeroe", options=ZeroeOptions, outputs=ZeroeOutputs, space=False):
    """Accuracy under the ten Zéroe attacks at low, mid and high (the paper's Table 6 and Figure 1)."""

    def examples_per_chunk(self, spec) -> int:
        return BATCHES_PER_CHUNK * spec.models[0].batch_size

    def plan(self, spec, space, example):
        o: ZeroeOptions = spec.options
        return Planned(1 + len(o.attacks) * len(o.levels), "the input, then each attack at each level (an input an "
                       "attack leaves as it was comes from the cache)")

    def task(self, worker, spec, examples):
        yield from zeroe_records(worker.engine, examples, spec.options.attacks, spec.options.levels, spec.seed)

    def summarise(self, run) -> dict:
        records = run.records
        if not records:
            return {"clean_accuracy": None, "majority_baseline": None, "rows": []}
        clean, rows = zeroe_rows(records)
        majority = max(Counter(r["gold"] for r in records).values()) / len(records)
        return {"clean_accuracy": clean, "majority_baseline": majority, "rows": rows_as_dicts(rows)}

    def table(self, summary):
        return (["attack", "level", "accuracy", "relative", "changed"],
                [["none", "-", summary["clean_accuracy"], 1.0, 0.0]]
                + [[r["attack"], r["level"], r["accuracy"], r["relative"], r["changed"]] for r in summary["rows"]])

    def sections(self, run, summary):
        rows = [ZeroeRow(**row) for row in summary["rows"]]
        if not rows:
            return []
        figure = zeroe_figure(summary["clean_accuracy"], rows, summary["majority_baseline"],
                              "Relative accuracy under each Zéroe attack")
        return [Section("Robustness curves", note=f"Accuracy relative to the clean accuracy "
                        f"({summary['clean_accuracy']:.4f}) at each attack level; red: the majority-class baseline "
                        f"({summary['majority_baseline']:.4f}).", figures=[("zeroe", figure)])]

    def check(self, spec, outputs) -> None:
        check_writable(outputs.out_dir, directory=True)

    def finish(self, spec, summary, outputs, data_spec):
        out_dir = outputs.out_dir
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "zeroe.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        (out_dir / "zeroe.md").write_text(format_table(*self.table(summary)) + "\n", encoding="utf-8")
        save_figure(zeroe_figure(summary["clean_accuracy"], [ZeroeRow(**row) for row in summary["rows"]],
                                 summary["majority_baseline"],
                                 f"{spec.models[0].spec} on {data_spec} ({summary['examples']} examples)"),
                    out_dir / "zeroe.png")
        return [f"written: {out_dir / 'zeroe.json'}, {out_dir / 'zeroe.md'}, {out_dir / 'zeroe.png'}"]
