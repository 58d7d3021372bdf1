"""What `harden` trains, declared once (`HardenSpec`): a variant for what is trained (a family's
own training, `FamilyTraining`; a certified training of a word network, `CertifiedTraining` of
`training/certified.py`; the user's model, `ModelTraining`), the copies it trains on besides the
data (`TrainingCopies`, a variant per method, with the whole space), and what every training
shares (epochs, seed, threads). Each part declares its own options and records itself in a card;
the command line groups each variant's options under its heading (`cli/training.py`).
"""

from __future__ import annotations

from dataclasses import asdict, field

from robustcount.errors import RobustcountError
from robustcount.models.families import family_field, family_named
from robustcount.models.zoo import built_in_of
from robustcount.options import option, options_dataclass, settle_variant, variants
from robustcount.spaces.build import Filters, SpaceSpec
from robustcount.training.certified import CertifiedTraining, learning_rate_field
from robustcount.training.copies import TrainingAttack, TrainingCopies

REFRESH = ("once", "epoch")
SPELLED = {"family": "--family", "certified": "--certified-training", "model": "--model"}
"""How the command line chooses what is trained."""


@options_dataclass
class FamilyTraining:
    """A new model of a hardenable family, trained as the family trains."""

    family: str = family_field()

    def __post_init__(self):
        family_named(self.family, can="harden")

    def recorded(self) -> dict:
        return asdict(self)


@options_dataclass
class ModelTraining:
    """Your model, trained as its kind trains: a transformers checkpoint (in full, or through LoRA
    adapters), a py: torch classifier or a scikit-learn estimator; the output is a model of the same
    kind."""

    model: str | None = field(default=None, metadata=option(
        "Your model to harden: a transformers checkpoint directory, a hub name (online), py:module:function "
        "(a TorchClassifier or a scikit-learn estimator or pipeline) or tfidf-rt; the output is a model of the "
        "same kind.", kind=str))
    lora: bool = field(default=False, metadata=option(
        "Fine-tune a transformers checkpoint through LoRA adapters (peft), merged into the saved checkpoint.",
        flag=True))
    refresh: str = field(default="once", metadata=option(
        "draw the copies once up front, or again at each epoch's start against the model as it stands (A2T).",
        choices=REFRESH))
    learning_rate: float | None = learning_rate_field(
        "AdamW's learning rate (default 2e-5 for a full fine-tuning, 1e-3 for LoRA and py: models).")
    batch_size: int = field(default=32, metadata=option("training batch size.", minimum=1))
    held_out: float = field(default=0.1, metadata=option(
        "the share of the training examples (with their copies) held out to measure each epoch.",
        minimum=0, maximum=0.5, open_minimum=True))

    def __post_init__(self):
        if self.model is None:
            raise RobustcountError("give the model to harden (--model)")

    def recorded(self) -> dict:
        return asdict(self)


def trainee_variants() -> dict[str, type]:
    return {"family": FamilyTraining, "certified": CertifiedTraining, "model": ModelTraining}


def trainee_summaries() -> dict[str, str]:
    return {"family": "A new model of a hardenable family, trained as the family trains.",
            "certified": "A word network (word-cnn, word-lstm) trained with an interval bound of the worst case "
                         "in its loss (docs/hardening/certified-training.md).",
            "model": "Your model, trained as its kind trains; the output is a model of the same kind."}


@options_dataclass
class HardenSpec:
    """What `harden` trains (`trainee`, the options of the variant `trains` names: given an
    object, its kind chooses), on the training data plus the perturbed `copies` of each example;
    `epochs` (None: the family's, or 3 for a torch model and 1 for an estimator); `seed` and
    `threads` fix the result. Each field declares its command-line option (`cli/training.py`)."""

    trainee: object = field(default=None, metadata=variants("trains", trainee_variants, trainee_summaries,
                                                            spelled=SPELLED.get))
    trains: str = field(default="family", metadata=option(
        "word-cnn, word-lstm: certified (IBP) training (Jia et al. 2019): the loss mixes in an interval bound of "
        "the worst cross-entropy over each text's whole space (--source), epsilon and its weight ramped up "
        "(docs/hardening/certified-training.md); the epoch kept is the one whose held-out texts the bound certifies "
        "most, never one no more accurate than always answering the most common label (no model when all are).",
        names=("--certified-training",), flag=True, flag_value=lambda: "certified"))
    copies: TrainingCopies = TrainingCopies()
    epochs: int | None = field(default=None, metadata=option(
        "Epochs (default: the family's, minilm-head has none; --model: 3 for a torch model, 1 for an estimator).",
        minimum=1, kind=int))
    seed: int = 0
    threads: int = field(default=2, metadata=option(
        "torch CPU threads (the result is reproducible for a fixed number).", minimum=1))

    def __post_init__(self):
        kinds = {kind: name for name, kind in trainee_variants().items()}
        object.__setattr__(self, "trains", kinds.get(type(self.trainee), self.trains))
        settle_variant(self, "trainee", "training")
        if isinstance(self.copies.settings, TrainingAttack) and self.model is None:
            if built_in_of(self.family) is None:
                raise RobustcountError(f"augment {self.copies.method} attacks the family's built-in model, and "
                                       f"{self.family} has none: use zeroe, space or none")

    @property
    def model(self) -> str | None:
        """The user's model trained (None: a family's)."""
        return self.trainee.model if isinstance(self.trainee, ModelTraining) else None

    @property
    def family(self) -> str | None:
        """The family trained (None: the user's model)."""
        return getattr(self.trainee, "family", None)

    @property
    def space(self) -> SpaceSpec:
        return self.copies.space

    def recorded(self) -> dict:
        """What applies to this training (what a card records, under the names cards always had)."""
        space = self.copies.space
        record = {**self.trainee.recorded(), **self.copies.recorded(), "epochs": self.epochs, "seed": self.seed,
                  "threads": self.threads}
        searched = isinstance(self.copies.settings, TrainingAttack)  # in the space given since it has one
        if self.trains == "certified" or (searched and space != SpaceSpec()):
            record["sources"] = list(space.sources)
        if space.filters != Filters() and (self.trains == "certified" or searched or "sources" in record):
            record["filters"] = space.filters.definition()
        return record


__all__ = ["CertifiedTraining", "FamilyTraining", "HardenSpec", "ModelTraining", "TrainingCopies"]
