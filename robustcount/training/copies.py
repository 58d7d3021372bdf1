"""Which perturbed copies to make, declared once for `harden`, the `augment` command and
`robustcount.augment`: `CopiesSpec` (`TrainingCopies` in `harden`) chooses a method, holds that
method's own options (a variant: `SpaceCopies`, `ZeroeCopies`, `AttackCopies`, `NoCopies`) and the
whole space (`SpaceSpec`) the copies are drawn from or an attack searches; `make_copies` makes them
(`training/augment.py` says how each method draws them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, field
from pathlib import Path

from robustcount.attacks.zeroe_protocol import LEVELS
from robustcount.data import Example, sample_indices
from robustcount.errors import RobustcountError
from robustcount.models.zoo import is_served
from robustcount.options import option, options_dataclass, radius_field, settle_variant, variants
from robustcount.spaces.build import SpaceSpec
from robustcount.spaces.perturbers import PERTURBERS
from robustcount.training.augment import Copy, adversarial_copies, attack_methods, space_copies, zeroe_copies


def copies_field():
    return field(default=1, metadata=option("perturbed copies of each text.", minimum=1))


@options_dataclass
class SpaceCopies:
    """Points of each text's space within `radius`, drawn exactly uniformly without the original."""

    radius: int = radius_field(1, "substitutions at most.")
    copies: int = copies_field()


@options_dataclass
class ZeroeCopies:
    """Zéroe attacks (Eger & Benz 2020), each by one of `attackers` at one of `levels` (empty: all)."""

    attackers: tuple[str, ...] = field(default=(), metadata=option(
        "an attacker to draw from (repeatable; default: all).", names=("--attacker",), choices=tuple(PERTURBERS),
        multiple=True))
    levels: tuple[str, ...] = field(default=(), metadata=option(
        "a level to draw from (repeatable; default: all).", names=("--level",), choices=tuple(LEVELS), multiple=True))
    copies: int = copies_field()

    def __post_init__(self):
        """Empty means all of them."""
        object.__setattr__(self, "attackers", tuple(self.attackers) or tuple(PERTURBERS))
        object.__setattr__(self, "levels", tuple(self.levels) or tuple(LEVELS))


@options_dataclass
class AttackCopies:
    """The adversarial examples an attack recipe finds against `model` (anything --model takes
    but a served model, whose prompt, verbaliser and request options it does not take)."""

    model: str | None = field(default=None, metadata=option(
        "the model attacked (anything --model takes elsewhere but a served openai: model).", kind=str))

    def __post_init__(self):
        if self.model is not None and is_served(self.model):
            raise RobustcountError(
                f"augment cannot attack the served model {self.model}: it takes no --prompt, --verbalizer or "
                "request options; `robustcount attack` does, and its run's records hold the adversarial examples")

    def attacked(self, examples: int, seed: int) -> list[int]:
        """The indices of the examples attacked: all of them."""
        return list(range(examples))


@options_dataclass
class TrainingAttack:
    """The adversarial examples an attack recipe finds against the model being trained (a
    family's: its built-in model) on a seeded sample of `attack_sample` training examples."""

    attack_sample: int = field(default=2000, metadata=option(
        "attack a seeded sample of this many training examples (0: all of them).", minimum=0))

    def attacked(self, examples: int, seed: int) -> list[int]:
        """The indices of the examples attacked: a sample drawn with `seed` (all with 0)."""
        return sample_indices(examples, self.attack_sample or examples, seed)


@options_dataclass
class NoCopies:
    """No copies: the data alone."""


def copy_variants() -> dict[str, type]:
    """Each method's options: a space's points, Zéroe attacks, and every attack recipe's."""
    return {"space": SpaceCopies, "zeroe": ZeroeCopies, **{name: AttackCopies for name in attack_methods()}}


def training_copy_variants() -> dict[str, type]:
    """Each method's options in a training: an attack's on a sample of its examples, or none."""
    return {**copy_variants(), **{name: TrainingAttack for name in attack_methods()}, "none": NoCopies}


def copy_summaries() -> dict[str, str]:
    return {"space": "Points of each text's space (--source and the filters), drawn exactly uniformly without the "
                     "original.",
            "zeroe": "Zéroe attacks (Eger & Benz 2020), each by an attacker and a level drawn from those given.",
            **{name: "The adversarial examples of an attack recipe (in the space given, where the recipe has none "
                     "of its own)." for name in attack_methods()}}


@options_dataclass
class CopiesSpec:
    """Which copies (`method`, with its own options in `settings`: a dict or None is converted)
    of which space (`space`: its points, or the space an attack searches where the recipe has none
    of its own)."""

    method: str = field(default="space", metadata=option(
        "space, zeroe, or an attack recipe's adversarial examples against --model.", kind=str))
    settings: object = field(default=None, metadata=variants("method", copy_variants, copy_summaries))
    space: SpaceSpec = SpaceSpec()

    def __post_init__(self):
        settle_variant(self, "settings", "augmentation")


@options_dataclass
class TrainingCopies(CopiesSpec):
    """The copies `harden` trains on besides the data (`method` is its --augment): an attack's
    against the model being trained, on a sample of the training examples (`TrainingAttack`)."""

    method: str = field(default="zeroe", metadata=option(
        "Perturbed copies to train on besides the data: Zéroe attacks (Eger & Benz 2020), uniform points of a space "
        "(space: --source, --radius), the adversarial examples an attack recipe finds against the model being "
        "trained (Jin et al. 2020; A2T, Yoo & Qi 2021; a family's: its built-in model), or none.",
        names=("--augment",), kind=str))
    settings: object = field(default=None, metadata=variants("method", training_copy_variants, copy_summaries))

    def __post_init__(self):
        settle_variant(self, "settings", "augmentation")

    def recorded(self) -> dict:
        """What a hardened model's card records of its copies (as cards always have)."""
        space = {"sources": list(self.space.sources)} if isinstance(self.settings, SpaceCopies) else {}
        return {"augment": self.method, **space, **asdict(self.settings)}


def make_copies(spec: CopiesSpec, examples: Sequence[Example], *, seed: int, target: str | None = None,
                run_file: Path | None = None, data: dict | None = None, progress: bool = False) -> list[Copy]:
    """The copies `spec` asks for of `examples`, drawn with `seed`; an attack's against `target`
    (an `AttackCopies`' own model first) in a run kept in `run_file` (None: in memory) whose
    header records `data`."""
    settings = spec.settings
    if isinstance(settings, NoCopies):
        return []
    if isinstance(settings, ZeroeCopies):
        return zeroe_copies(examples, settings.attackers, settings.levels, settings.copies, seed)
    if isinstance(settings, SpaceCopies):
        return space_copies(examples, spec.space, settings.radius, settings.copies, seed)
    attacked = settings.attacked(len(examples), seed)
    recorded = {k: v for k, v in asdict(settings).items() if k != "model"}
    found = adversarial_copies(getattr(settings, "model", None) or target, [examples[i] for i in attacked],
                               spec.method, seed=seed, run_file=run_file, data={**(data or {}), **recorded},
                               space=spec.space, progress=progress)
    return [Copy(c.example, attacked[c.origin]) for c in found]
