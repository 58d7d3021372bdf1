"""Perturbed copies of training data, for adversarial training.

- `zeroe_copies`: as seed 000 shields its models, each copy is a training text attacked by one of
  the chosen Zéroe attackers at one of the chosen levels (both drawn with the copy's own seed, so
  every attacker and level is about equally frequent), under the paper's attack protocol.
- `adversarial_copies`: as seed 002's adversarial training, the adversarial examples an attack
  (TextFooler or PDP) finds against the model on the training texts, through a resumable `attack`
  run whose file records how each was found.

A copy keeps its original's label and says which original it comes from (`Copy.origin`, its
index), so that a held-out split never separates them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from robustcount.attacks.result import SUCCESS
from robustcount.attacks.zeroe_protocol import LEVELS, zeroe_attack
from robustcount.data import Example
from robustcount.models.spec import ModelSpec
from robustcount.seeding import derive_seed
from robustcount.spaces.build import SpaceSpec
from robustcount.spaces.perturbers import PERTURBERS, get_perturber

ADVERSARIAL_METHODS = ("textfooler", "pdp")


@dataclass(frozen=True)
class Copy:
    """A perturbed training example and the index of the original it comes from."""

    example: Example
    origin: int


def zeroe_copies(examples: Sequence[Example], attackers: Sequence[str] = tuple(PERTURBERS),
                 levels: Sequence[str] = tuple(LEVELS), copies: int = 1, seed: int = 0) -> list[Copy]:
    """`copies` attacked copies of each example, each by an attacker and a level drawn from
    `attackers` and `levels`; copy k of example `id` is seeded by (seed, id, k)."""
    perturbers = {name: get_perturber(name) for name in attackers}
    made = []
    for index, example in enumerate(examples):
        for k in range(copies):
            rng = random.Random(derive_seed(seed, "copy", example.id, k))
            attacker, level = rng.choice(list(attackers)), rng.choice(list(levels))
            text = zeroe_attack(example.input, perturbers[attacker], level,
                                derive_seed(seed, attacker, level, example.id, k))
            made.append(Copy(Example(f"{example.id}~{attacker}-{level}-{k}", text, example.label), index))
    return made


def adversarial_copies(model: str, examples: Sequence[Example], method: str, *, seed: int, run_file: Path,
                       data: dict, progress: bool = True) -> list[Copy]:
    """The adversarial examples `method` finds against `model` on `examples` (the default synonym
    space; TextFooler in its paper setting), from an `attack` run in `run_file` (continued when it
    exists: an interrupted attack loses only the examples in progress)."""
    from robustcount.commands.attack import AttackOptions
    from robustcount.runs.runner import execute
    from robustcount.runs.spec import RunSpec

    spec = RunSpec("attack", (ModelSpec(model, device="cpu"),), seed=seed, space=SpaceSpec(),
                   options=AttackOptions(method=method))
    run = execute(spec, examples, data, output=run_file, resume=run_file.exists(), progress=progress)
    return [Copy(Example(f"{examples[r['index']].id}~{method}", r["adversarial"], examples[r["index"]].label),
                 r["index"]) for r in run.records if r["status"] == SUCCESS]
