"""Perturbed copies of training data, for adversarial training: one concept, three ways to make them.

- `space_copies`: copies drawn exactly uniformly from the points of a `SpaceSpec`'s space within a
  radius (the synonym space, any Zéroe source, their unions), the original itself excluded.
- `zeroe_copies`: as Eger & Benz 2020 shield their models, each copy is a training text attacked by one of
  the chosen Zéroe attackers at one of the chosen levels (both drawn with the copy's own seed, so
  every attacker and level is about equally frequent), under the paper's attack protocol.
- `adversarial_copies`: as Jin et al. 2020's adversarial training and A2T (Yoo & Qi 2021), the adversarial examples an
  attack recipe (TextFooler, PDP, any registered one) finds against a model on the training
  texts, through a resumable `attack` run whose file records how each was found.

A copy keeps its original's label as it is and says which original it comes from (`Copy.origin`,
its index), so that a held-out split never separates them. `CopiesFile` is where the `augment`
command writes them: claimed before any work, replaced whole at the end.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from robustcount.atomic import replaced_whole
from robustcount.attacks.recipe import recipes
from robustcount.attacks.result import SUCCESS
from robustcount.attacks.zeroe_protocol import LEVELS, zeroe_attack
from robustcount.commands.attack import AttackOptions
from robustcount.data import Example
from robustcount.errors import RobustcountError
from robustcount.models.spec import ModelSpec
from robustcount.runs.files import RunLock, check_writable
from robustcount.runs.runner import RunOutput, execute
from robustcount.runs.spec import RunSpec
from robustcount.seeding import derive_seed
from robustcount.spaces.build import SpaceSpec
from robustcount.spaces.perturbers import PERTURBERS, get_perturber


def attack_methods() -> tuple[str, ...]:
    """The attack recipes whose adversarial examples can be trained on (every registered one)."""
    return tuple(recipes())


@dataclass(frozen=True)
class Copy:
    """A perturbed training example and the index of the original it comes from."""

    example: Example
    origin: int


def space_copies(examples: Sequence[Example], space: SpaceSpec = SpaceSpec(), radius: int = 1, copies: int = 1,
                 seed: int = 0) -> list[Copy]:
    """`copies` points of each example's space within `radius` substitutions, each drawn exactly
    uniformly from Omega_r without the original (with replacement; copy k of example `id` is seeded
    by (seed, id, k)); an example whose space has no other point gets none."""
    builder = space.builder(seed)
    made = []
    for index, example in enumerate(examples):
        built = builder(example.input)
        others = built.count(radius) - 1  # index 0 is the original, the one point at distance 0
        for k in range(copies if others > 0 else 0):
            rng = random.Random(derive_seed(seed, "space-copy", example.id, k))
            point = built.point_at(1 + rng.randrange(others), radius)
            made.append(Copy(Example(f"{example.id}~space-{k}", built.apply(point), example.label), index))
    return made


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


def adversarial_copies(model: str, examples: Sequence[Example], method: str, *, seed: int, run_file: Path | None,
                       data: dict, space: SpaceSpec = SpaceSpec(), progress: bool = True) -> list[Copy]:
    """The adversarial examples the recipe `method` finds against `model` (anything `--model`
    takes) on `examples` in `space` (the recipe's own setting where it has one), from an `attack`
    run in `run_file` (continued when it exists: an interrupted attack loses only the examples in
    progress; None: a run kept in memory). The examples' labels must be the model's."""
    spec = RunSpec("attack", (ModelSpec(model, device="cpu"),), seed=seed, space=space,
                   options=AttackOptions(method=method))
    output = RunOutput(run_file, resume=run_file.exists()) if run_file is not None else None
    run = execute(spec, examples, data, output=output, progress=progress)
    return [Copy(Example(f"{examples[r['index']].id}~{method}", r["adversarial"], examples[r["index"]].label),
                 r["index"]) for r in run.records if r["status"] == SUCCESS]


class CopiesFile:
    """The file the `augment` command writes its copies to, claimed before any work is done:
    refused in one line when it is a directory, when it cannot be written, when a robustcount run
    is writing it (its run-file lock, `RunLock`, then held until `close`) or when it exists,
    unless `overwrite`. `write` replaces it whole (`atomic.replaced_whole`), so that a failure or
    an interruption leaves what was there as it was."""

    def __init__(self, path, *, overwrite: bool = False):
        self.path, self.overwrite = Path(path), overwrite
        if self.path.is_dir():
            raise RobustcountError(f"{self.path} is a directory: --out names a file")
        check_writable(self.path)
        self._lock = RunLock(self.path, option="--out")
        try:
            self._refuse_existing()
        except BaseException:
            self._lock.release()
            raise

    def _refuse_existing(self) -> None:
        if self.path.exists() and not self.overwrite:
            raise RobustcountError(f"{self.path} exists: pass --overwrite to replace it, or name another --out")

    def write(self, text: str) -> None:
        """Make `text` the file's whole content (refused if the file appeared since it was claimed)."""
        self._refuse_existing()
        with replaced_whole(self.path) as handle:
            handle.write(text.encode("utf-8"))

    def close(self) -> None:
        self._lock.release()
