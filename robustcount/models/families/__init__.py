"""Model families, declared once each: a family is a kind of model (an architecture with how it
trains), one module in this package.

A family subclasses `Family` with its `name` and `description` (subclassing registers it in
FAMILIES) and implements what it can do:

- `rebuild(tensors, options, labels, name, **settings)`: the classifier a model directory of the
  family holds (`models/model_dir.py` reads the card and the tensors, then calls this);
- `train(job)`: train on `job`'s texts and return the `Trained` tensors and options that
  `rebuild` takes back (`harden` calls it); a family with both is `hardenable`;
- `save(directory)`: write its built-in model as a plain checkpoint (`save-model`).

What a card of the family records as its `options` is declared by `card_options`, an
`@options_dataclass` whose fields' bounds and types `check_options` holds a card to before
`rebuild` sees it (a family that records what it does not read, as a LoRA adapter's whole saved
configuration, sets `other_options` and has only what it reads checked; one that declares
nothing, None, gets its cards' options unchecked).

A family that only rebuilds holds what `harden --model` trained for a user's model (`py-torch`,
`sklearn`): `harden` itself trains those (`training/trainees.py`).

The zoo's entries (`models/zoo.py`) name their family; `families()` imports every module here
once, so that each family is registered before it is looked up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.models.base import Classifier
from robustcount.options import option
from robustcount.registry import import_package, register

FAMILIES: dict[str, Family] = {}
"""Every registered family, by name."""
ASSETS = Path(__file__).parents[1] / "assets"
"""Where the built-in models' weights and cards ship."""


@dataclass(frozen=True)
class TrainingJob:
    """What a family trains on: `texts` with label indices `targets` over `n_labels` labels;
    `groups[i]` is the original example text i comes from (its own index when it is one, so that a
    held-out split keeps copies with their original); `epochs` (None: the family's own), `seed`;
    `work` is a folder of the family's own for checkpoints and saved work (so that a training
    resumes; None: a training that keeps none, as the built-in word networks were trained);
    `progress(stage, unit)` returns a factory `(total, done) -> bar` whose bars count with
    `update(n)` and end with `close()`; `log` takes a line."""

    texts: list[str]
    targets: list[int]
    groups: list[int]
    n_labels: int
    work: Path | None
    seed: int = 0
    epochs: int | None = None
    progress: Callable | None = None
    log: Callable[[str], None] = print

    def bar(self, stage: str, unit: str):
        """The progress factory for `stage` counted in `unit`, or None."""
        return self.progress(stage, unit) if self.progress else None


@dataclass
class Trained:
    """A training's result: the tensors a model directory keeps, the architecture `options` its card
    records (what `rebuild` needs besides the tensors), and `details` for the card's training part."""

    tensors: dict
    options: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)


class Family:
    """A model family (see the module docstring); subclasses set `name` and `description`."""

    name: str = ""
    description: str = ""
    epochs: int | None = None
    """The family's number of epochs (None: it has none)."""
    card_options: type | None = None
    """The options dataclass of what its cards record as `options` (see the module docstring)."""
    other_options: bool = False
    """Whether its cards' options hold more than `card_options` declares (left unchecked)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.name:
            register(FAMILIES, cls.name, cls(), "model family")

    def rebuild(self, tensors: dict, options: dict, labels: list[str], name: str, *,
                device: str, dtype: str, batch_size: int) -> Classifier:
        """The classifier called `name` over `labels` that `tensors` and the architecture `options`
        (what `train` returned) make, run on `device` at `dtype`, `batch_size` inputs a batch."""
        raise NotImplementedError

    def check_options(self, options: dict) -> None:
        """Refuse, in one line, a card's `options` that are not the family's: a name `card_options`
        does not declare (unless `other_options`), or a value out of its bounds or of another type."""
        if self.card_options is None:
            return
        declared = {f.name: f for f in dataclasses.fields(self.card_options)}
        unknown = sorted(set(options) - set(declared))
        if unknown and not self.other_options:
            raise RobustcountError(f"{', '.join(map(repr, unknown))} {'is not an option' if len(unknown) == 1 else 'are not options'}"
                                   f" of a {self.name} model (it has {', '.join(declared) or 'none'})")
        for name, value in options.items():
            kind = type(declared[name].default) if name in declared else None
            if kind is str and not isinstance(value, str):
                raise RobustcountError(f"{name} must be a string, got {value!r}")
        self.card_options(**{name: value for name, value in options.items() if name in declared})

    def train(self, job: TrainingJob) -> Trained:
        """A model trained on `job`, deterministic for its seed on a fixed number of threads."""
        raise NotImplementedError

    def save(self, directory: Path) -> None:
        """Write the family's built-in model into `directory` as a plain checkpoint."""
        raise NotImplementedError

    @property
    def hardenable(self) -> bool:
        """Whether `harden` can train it: it trains and rebuilds from a model directory."""
        return _implements(self, "train") and _implements(self, "rebuild")

    @property
    def rebuildable(self) -> bool:
        """Whether a model directory of the family loads: it rebuilds from its tensors and options."""
        return _implements(self, "rebuild")

    @property
    def savable(self) -> bool:
        """Whether `save-model` can write its built-in model as a checkpoint."""
        return _implements(self, "save")


ABLE = {"harden": "hardenable", "rebuild": "rebuildable", "save": "savable"}


def _implements(family: Family, method: str) -> bool:
    return getattr(type(family), method) is not getattr(Family, method)


def families() -> dict[str, Family]:
    """Every family: those of this package (imported here, once) and any registered elsewhere."""
    import_package(__name__)
    return FAMILIES


def family_named(name: str, *, can: str | None = None) -> Family:
    """The family called `name`; with `can` ("harden", "rebuild" or "save"), one that can do that."""
    known = families()
    able = [n for n, f in known.items() if can is None or getattr(f, ABLE[can])]
    if name not in known:
        raise RobustcountError(f"unknown family {name!r} (use {', '.join(able)})")
    if name not in able:
        raise RobustcountError(f"the family {name!r} cannot {can} (use {', '.join(able)})")
    return known[name]


def family_field(default: str = "minilm-head"):
    """The field naming the family a training trains (`harden --family`), declared once for every
    training that takes one."""
    hardenable = ", ".join(name for name, family in families().items() if family.hardenable)
    return field(default=default, metadata=option(
        f"The family to train ({hardenable}; `robustcount models` shows each built-in model's), when no --model "
        "is given.", kind=str))
