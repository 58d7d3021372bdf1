"""Perturbed copies of texts from Python: a space or an attack in, texts out.

    from robustcount.augment import augment
    copies = augment(["a gorgeous, witty film"], copies=3, radius=2)          # uniform points of the synonym space
    copies = augment(texts, method="zeroe", attackers=("keyboard",))           # Zéroe attacks
    copies = augment(texts, labels=labels, method="textfooler", model="./my-checkpoint")  # adversarial examples

Each `Copy` holds the perturbed `example` (its `input` is the text, its label the original's, its
id `ORIGINAL~how`) and the index of the text it comes from (`origin`). The same copies as
`harden --augment` trains on and the `augment` command writes (`training/augment.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from robustcount.attacks.zeroe_protocol import LEVELS
from robustcount.data import Example
from robustcount.errors import RobustcountError
from robustcount.options import MAX_RADIUS, option, options_dataclass
from robustcount.spaces.build import SpaceSpec
from robustcount.spaces.perturbers import PERTURBERS
from robustcount.training.augment import Copy, adversarial_copies, attack_methods, space_copies, zeroe_copies

METHODS = ("space", "zeroe")
"""The methods that need no model; every attack recipe is one too (`attack_methods()`)."""

__all__ = ["AugmentOptions", "Copy", "augment", "METHODS", "attack_methods"]


@options_dataclass
class AugmentOptions:
    """What the `augment` command makes: the `method` (a space's points, Zéroe attacks or an attack
    recipe's adversarial examples against `model`), `radius`, `copies`, and the Zéroe `attackers`
    and `levels` (empty: all of them). Each field declares its command-line option (`cli/augment.py`)."""

    method: str = field(default="space", metadata=option(
        f"{', '.join(METHODS)}, or an attack recipe ({', '.join(attack_methods())}) against --model.", kind=str))
    radius: int = field(default=1, metadata=option("space: substitutions at most.", minimum=1, maximum=MAX_RADIUS))
    copies: int = field(default=1, metadata=option("space, zeroe: copies of each text.", minimum=1))
    attackers: tuple[str, ...] = field(default=(), metadata=option(
        "zeroe: an attacker to draw from (repeatable; default: all).", names=("--attacker",),
        choices=tuple(PERTURBERS), multiple=True))
    levels: tuple[str, ...] = field(default=(), metadata=option(
        "zeroe: a level to draw from (repeatable; default: all).", names=("--level",), choices=tuple(LEVELS),
        multiple=True))
    model: str | None = field(default=None, metadata=option(
        "attacks: the model attacked (anything --model takes elsewhere).", kind=str))


def augment(texts: Sequence[str], *, labels: Sequence[str] | None = None, method: str = "space",
            space: SpaceSpec | Sequence[str] = SpaceSpec(), radius: int = 1, copies: int = 1,
            attackers: Sequence[str] = tuple(PERTURBERS), levels: Sequence[str] = tuple(LEVELS),
            model: str | None = None, seed: int = 0, run_file: str | Path | None = None,
            ids: Sequence[str] | None = None, progress: bool = False) -> list[Copy]:
    """Copies of `texts`: `copies` points of each one's `space` (a SpaceSpec, or source names)
    within `radius` substitutions, drawn exactly uniformly without the original (`method` space);
    `copies` Zéroe attacks by `attackers` at `levels` (zeroe); or the adversarial examples the
    attack recipe `method` finds against `model` (anything `--model` takes), which needs each
    text's gold label in `labels` (its run kept in `run_file` when given, and continued there).
    Deterministic for `seed`; `ids` name the texts (default: their positions)."""
    if labels is not None and len(labels) != len(texts):
        raise RobustcountError(f"{len(labels)} labels for {len(texts)} texts")
    if ids is not None and len(ids) != len(texts):
        raise RobustcountError(f"{len(ids)} ids for {len(texts)} texts")
    examples = [Example(str(ids[i]) if ids is not None else str(i), text, labels[i] if labels is not None else "")
                for i, text in enumerate(texts)]
    space = space if isinstance(space, SpaceSpec) else SpaceSpec(tuple(space))
    if method == "space":
        return space_copies(examples, space, radius, copies, seed)
    if method == "zeroe":
        return zeroe_copies(examples, attackers, levels, copies, seed)
    if method not in attack_methods():
        raise RobustcountError(f"unknown augmentation {method!r} (use {', '.join((*METHODS, *attack_methods()))})")
    if model is None or labels is None:
        raise RobustcountError(f"the {method} attack needs a model and each text's label")
    return adversarial_copies(model, examples, method, seed=seed, run_file=None if run_file is None else Path(run_file),
                              data={"spec": "robustcount.augment", "examples": len(examples)}, space=space,
                              progress=progress)
