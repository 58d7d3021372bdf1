"""The Zéroe benchmark: accuracy under each of the ten attacks at each level (the paper's Table 6),
relative to clean accuracy (s*(p) = s(p) / s(0), its eq. 1), and a plot as its Figure 1.

Each example is attacked with its own seed, derived from the run's seed, the attack, the level
and the example id, so any single cell can be reproduced alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

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


def run_zeroe(
    engine: QueryEngine,
    examples: Sequence[Example],
    attacks: Sequence[str] = tuple(PERTURBERS),
    levels: Sequence[str] = tuple(LEVELS),
    seed: int = 0,
    on_row: Callable[[ZeroeRow], None] | None = None,
) -> tuple[float, list[ZeroeRow]]:
    """Clean accuracy and one row per (attack, level), in that order."""
    gold = [label_index(e.label, engine.labels) for e in examples]
    clean = _accuracy(engine, [e.input for e in examples], gold)
    rows = []
    for attack in attacks:
        perturber = get_perturber(attack)
        for level in levels:
            attacked = [zeroe_attack(e.input, perturber, level, derive_seed(seed, attack, level, e.id))
                        for e in examples]
            accuracy = _accuracy(engine, attacked, gold)
            changed = sum(a != e.input for a, e in zip(attacked, examples)) / len(examples)
            row = ZeroeRow(attack, level, LEVELS[level], len(examples), accuracy,
                           accuracy / clean if clean else float("nan"), changed)
            rows.append(row)
            if on_row is not None:
                on_row(row)
    return clean, rows


def _accuracy(engine: QueryEngine, inputs, gold) -> float:
    predicted = engine.predict(inputs)
    return float(sum(int(p == g) for p, g in zip(predicted, gold)) / len(gold))


def rows_as_dicts(rows: Sequence[ZeroeRow]) -> list[dict]:
    return [asdict(r) for r in rows]


def plot_zeroe(clean: float, rows: Sequence[ZeroeRow], baseline: float, path: Path, title: str) -> None:
    """Relative accuracy s*(p) per attack over none/low/mid/high, with the relative majority-class
    baseline as a red line (as the paper's Figure 1)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    attacks = list(dict.fromkeys(r.attack for r in rows))
    for attack in attacks:
        mine = [r for r in rows if r.attack == attack]
        axes.plot([0.0] + [r.p for r in mine], [1.0] + [r.relative for r in mine], marker="o", label=attack)
    axes.axhline(baseline / clean, color="red", linewidth=1.5, label="majority class")
    axes.set_xticks([0.0, *LEVELS.values()], ["none", *LEVELS])
    axes.set_xlabel("attack level p")
    axes.set_ylabel("relative accuracy s*(p)")
    axes.set_title(title)
    axes.set_ylim(0, 1.05)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, ncol=2, loc="lower left")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
