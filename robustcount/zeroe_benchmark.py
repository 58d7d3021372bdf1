"""The Zéroe benchmark: accuracy under each of the ten attacks at each level (the paper's Table 6),
relative to clean accuracy (s*(p) = s(p) / s(0), its eq. 1), and a plot as its Figure 1.

Each example is attacked with its own seed, derived from the run's seed, the attack, the level
and the example id, so any single cell can be reproduced alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from robustcount.attacks.zeroe import LEVELS, zeroe_attack
from robustcount.data import Example, label_index
from robustcount.models.engine import QueryEngine
from robustcount.seeding import derive_seed
from robustcount.spaces.zeroe import PERTURBERS, get_perturber


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


def attack_examples(
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
        perturber = get_perturber(attack)
        for level in levels:
            attacked = [zeroe_attack(e.input, perturber, level, derive_seed(seed, attack, level, e.id))
                        for e in examples]
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
    `attack_examples` records."""
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
    from robustcount.report import new_figure

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
