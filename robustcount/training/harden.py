"""`harden`: train a model of a family on training data plus perturbed copies (adversarial
training) and write the result as a model directory that `--model DIR` loads.

A user's own model (`--model`) trains in `harden_model.py`; this module declares the options both
share (`HardenSpec`) and trains the families.

Any family that trains and rebuilds from a model directory (`Family.hardenable`): the built-in
ones are `minilm-head` (its head only; the encoder stays frozen), `word-cnn` and `word-lstm` (the
networks; GloVe stays frozen) and `minilm-lora` (its LoRA adapters and classifier); the family's
own module says how it trains (`Family.train`). The copies: Zéroe attackers at a mix of levels
(Eger & Benz 2020), the adversarial examples TextFooler or PDP finds against the family's built-in
model on the training texts (Jin et al. 2020), or none (plain retraining). The word networks also train
certified (`certified`, `training/certified.py`: an interval bound of the worst case over each
text's space in the loss, Jia et al. 2019), with or without copies.

Deterministic for a seed on a fixed number of threads: two runs write the same bytes. Resumable:
the work in progress (the attack's run file, embeddings, checkpoints) lives in DIR/.harden until
the model is written, and `resume=True` continues it exactly.
"""

from __future__ import annotations

import json
import platform
import shutil
from collections.abc import Sequence
from dataclasses import asdict, field
from datetime import datetime, timezone
from pathlib import Path

from robustcount import __version__
from robustcount.attacks.zeroe_protocol import LEVELS
from robustcount.data import DEMO_LABELS, Example, examples_digest, label_index
from robustcount.errors import RobustcountError
from robustcount.models.cards import demo_test_card, deterministic_torch
from robustcount.models.families import TrainingJob, families, family_named
from robustcount.models.model_dir import CARD_FILE, load_model_dir, read_card, write_model_dir
from robustcount.models.zoo import built_in_of
from robustcount.options import MAX_RADIUS, option, options_dataclass
from robustcount.runs.progress import Progress
from robustcount.runs.provenance import dependency_versions
from robustcount.spaces.perturbers import PERTURBERS
from robustcount.spaces.build import DEFAULT_SOURCE, SpaceSpec
from robustcount.training.augment import Copy, attack_methods, training_copies
from robustcount.training.certified import KAPPA, initial_weights, train_certified, word_network

AUGMENTS = ("zeroe", "space", *attack_methods(), "none")
REFRESH = ("once", "epoch")
WORK = ".harden"
"""The folder inside the output directory that holds a training in progress."""
ADVERSARIES = "adversaries.jsonl"
"""The attack's run file, kept in the model directory as the record of what was trained on."""


HARDENABLE = tuple(name for name, family in families().items() if family.hardenable)
"""The built-in families `harden` trains (a family registered later is accepted too)."""
MODEL_FIELDS = ("model", "lora", "refresh", "learning_rate", "batch_size", "held_out")
"""The fields that apply to a user's model (`--model`) only."""


@options_dataclass
class HardenSpec:
    """What `harden` trains: the user's `model` (anything `--model` takes that trains: a
    transformers checkpoint, in full or through LoRA adapters with `lora`, a `py:` torch classifier
    or scikit-learn estimator, an sklearn built-in), or else a model of `family`, on the training
    data plus perturbed copies of each example: `copies` points of its space within `radius`
    (`augment` space, the space of `sources`), `copies` Zéroe attacks by `attackers` at `levels`
    (zeroe), or the adversarial examples the attack recipe `augment` finds on `attack_sample`
    training examples (0: all of them) against the model being trained (a family's: its built-in
    model), drawn again at each epoch's start (`refresh` epoch, as A2T) or once up front; with
    `certified`, a word network's loss bounds the worst case over each text's space of `sources`
    (`training/certified.py`: `kappa`, `ramp`, from the weights of `init_from`, the embeddings
    trained with `train_embeddings`); `epochs`
    (None: the family's, or 3 for a torch model and 1 for an estimator); `seed` and `threads` fix
    the result. Each field declares its command-line option (`cli/training.py`)."""

    family: str = field(default="minilm-head", metadata=option(
        f"The family to train ({', '.join(HARDENABLE)}; `robustcount models` shows each built-in model's), "
        "when no --model is given.", kind=str))
    model: str | None = field(default=None, metadata=option(
        "Your model to harden: a transformers checkpoint directory, a hub name (online), py:module:function "
        "(a TorchClassifier or a scikit-learn estimator or pipeline) or tfidf-rt; the output is a model of the "
        "same kind.", kind=str))
    lora: bool = field(default=False, metadata=option(
        "Fine-tune a transformers checkpoint through LoRA adapters (peft), merged into the saved checkpoint.",
        flag=True))
    augment: str = field(default="zeroe", metadata=option(
        "Perturbed copies to train on besides the data: Zéroe attacks (Eger & Benz 2020), uniform points of a space "
        "(space: --source, --radius), the adversarial examples an attack recipe finds against the model being "
        "trained (Jin et al. 2020; A2T, Yoo & Qi 2021; a family's: its built-in model), or none.", choices=AUGMENTS))
    sources: tuple[str, ...] = field(default=(DEFAULT_SOURCE,), metadata=option(
        "space: a candidate source of the space (repeatable; `robustcount space --help` lists them).",
        names=("--source",), multiple=True, kind=str))
    radius: int = field(default=1, metadata=option("space: substitutions at most.", minimum=1, maximum=MAX_RADIUS))
    attackers: tuple[str, ...] = field(default=tuple(PERTURBERS), metadata=option(
        "zeroe: an attacker to draw from (repeatable).", names=("--attacker",), choices=tuple(PERTURBERS),
        multiple=True))
    levels: tuple[str, ...] = field(default=tuple(LEVELS), metadata=option(
        "zeroe: a level to draw from (repeatable).", names=("--level",), choices=tuple(LEVELS), multiple=True))
    copies: int = field(default=1, metadata=option("zeroe, space: perturbed copies of each training example.",
                                                   minimum=1))
    certified: bool = field(default=False, metadata=option(
        "word-cnn, word-lstm: certified (IBP) training (Jia et al. 2019): the loss mixes in an interval bound of "
        "the worst cross-entropy over each text's whole space (--source), epsilon and its weight ramped up "
        "(docs/hardening/certified-training.md); the epoch kept is the one whose held-out texts the bound certifies "
        "most, never one no more accurate than always answering the most common label (no model when all are).",
        names=("--certified-training",), flag=True))
    kappa: float = field(default=KAPPA, metadata=option(
        "--certified-training: the worst-case loss's final weight (the clean loss gets 1 - kappa).",
        names=("--certified-kappa",), minimum=0, maximum=1, open_minimum=True))
    ramp: float | None = field(default=None, metadata=option(
        "--certified-training: epochs over which epsilon and kappa rise linearly from 0 (default: half the epochs).",
        names=("--certified-ramp",), minimum=0, kind=float))
    box_words: int | None = field(default=None, metadata=option(
        "--certified-training: let only this many of a text's changeable words range over their candidates in a "
        "training box, drawn afresh for each text at each step (default: all of them, the whole space).",
        names=("--certified-box-words",), minimum=1, kind=int))
    init_from: str | None = field(default=None, metadata=option(
        "--certified-training: start from this trained network of the family (cnn-rt, lstm-rt or a model directory) "
        "instead of random weights.", kind=str))
    train_embeddings: bool = field(default=False, metadata=option(
        "--certified-training: train the GloVe embeddings too (saved in the model directory) instead of keeping "
        "them frozen.", flag=True))
    embeddings_only: bool = field(default=False, metadata=option(
        "--certified-training with --init-from and --train-embeddings: train the embeddings only; the network's own "
        "weights stay those it starts from.", flag=True))
    attack_sample: int = field(default=2000, metadata=option(
        "attacks: attack a seeded sample of this many training examples (0: all of them).", minimum=0))
    refresh: str = field(default="once", metadata=option(
        "--model: draw the copies once up front, or again at each epoch's start against the model as it "
        "stands (A2T).", choices=REFRESH))
    epochs: int | None = field(default=None, metadata=option(
        "Epochs (default: the family's, minilm-head has none; --model: 3 for a torch model, 1 for an estimator).",
        minimum=1, kind=int))
    learning_rate: float | None = field(default=None, metadata=option(
        "--model: AdamW's learning rate (default 2e-5 for a full fine-tuning, 1e-3 for LoRA and py: models); "
        "--certified-training: Adam's (default 1e-3).",
        minimum=0, open_minimum=True, kind=float))
    batch_size: int = field(default=32, metadata=option("--model: training batch size.", minimum=1))
    held_out: float = field(default=0.1, metadata=option(
        "--model: the share of the training examples (with their copies) held out to measure each epoch.",
        minimum=0, maximum=0.5, open_minimum=True))
    seed: int = 0
    threads: int = field(default=2, metadata=option(
        "torch CPU threads (the result is reproducible for a fixed number).", minimum=1))

    def __post_init__(self):
        if self.model is None:
            family_named(self.family, can="harden")
            if self.augment in attack_methods() and built_in_of(self.family) is None:
                raise RobustcountError(f"augment {self.augment} attacks the family's built-in model, and "
                                       f"{self.family} has none: use zeroe, space or none")
            if self.lora:
                raise RobustcountError("--lora fine-tunes a transformers checkpoint: give it with --model")
            if self.certified:
                word_network(self.family)
                if self.embeddings_only and not (self.init_from and self.train_embeddings):
                    raise RobustcountError("--embeddings-only trains the embeddings of a warm start: give --init-from "
                                           "and --train-embeddings too")
            else:
                given = [name for name, value in (("init-from", self.init_from), ("train-embeddings",
                         self.train_embeddings), ("certified-box-words", self.box_words),
                         ("embeddings-only", self.embeddings_only)) if value not in (None, False)]
                if given:
                    raise RobustcountError(f"--{given[0]} applies to a certified training (--certified-training)")
                if self.learning_rate is not None:
                    raise RobustcountError("--learning-rate applies to --model or --certified-training; a family's "
                                           "own training uses its fixed rate")
        elif self.certified:
            raise RobustcountError("--certified-training trains a word-cnn or word-lstm family (--family), "
                                   "not a --model")
        for name in ("attackers", "levels", "sources"):
            if not getattr(self, name):
                raise RobustcountError(f"give at least one {name.removesuffix('s')}")

    def recorded(self) -> dict:
        """The fields that apply to this model and augmentation (what a card records)."""
        ignored = {"zeroe": ("attack_sample", "sources", "radius"), "space": ("attack_sample", "attackers", "levels"),
                   "none": ("attackers", "levels", "copies", "attack_sample", "sources", "radius")}.get(
            self.augment, ("attackers", "levels", "copies", "sources", "radius"))
        ignored += ("family",) if self.model is not None else tuple(
            name for name in MODEL_FIELDS if not (self.certified and name == "learning_rate"))
        ignored += () if self.certified else ("certified", "kappa", "ramp", "box_words", "init_from",
                                              "train_embeddings", "embeddings_only")
        if self.certified:  # its spaces come from the sources
            ignored = tuple(name for name in ignored if name != "sources")
        return {k: v for k, v in asdict(self).items() if k not in ignored}

    def space(self) -> SpaceSpec:
        return SpaceSpec(self.sources)


def training_labels(family: str, examples: Sequence[Example]) -> list[str]:
    """The labels a model of `family` gets: those of its built-in model (from its card) when they
    hold every label of the data, else the data's, sorted (a data set of other or more classes)."""
    built_in = built_in_of(family)
    found = sorted({e.label for e in examples})
    if built_in is not None and built_in.card is not None:
        labels = json.loads(built_in.card.read_text())["labels"]
        if set(found) <= set(labels):
            return labels
    if len(found) < 2:
        held = f"one label only ({found[0]!r})" if found else "no labelled example"
        theirs = f", not one of the model's labels ({family}'s built-in model's)" if found and built_in is not None else ""
        raise RobustcountError(f"the data hold {held}{theirs}: a classifier needs at least two labels")
    return found


def harden(spec: HardenSpec, examples: Sequence[Example], data: dict, directory: str | Path, *,
           resume: bool = False, evaluate: bool = True, progress: bool = True, log=print,
           command_line: str | None = None) -> dict:
    """Train as `spec` says on `examples` (described by `data`, recorded in the card) and write the
    model directory `directory` (new or empty; with `resume`, the one an interrupted call left).
    With `evaluate` (and the demo labels), the card gets the model's demo:test accuracy and
    predictions as `--model DIRECTORY` reproduces them. Returns the card."""
    directory, labels = Path(directory), training_labels(spec.family, examples)
    if any(not isinstance(e.input, str) for e in examples):
        raise RobustcountError("harden trains on single texts; this data has (premise, hypothesis) pairs")
    targets = [label_index(e.label, labels) for e in examples]
    missing = [label for i, label in enumerate(labels) if i not in set(targets)]
    if missing:
        raise RobustcountError(f"the training data has no example labelled {missing[0]!r}")
    data = {**data, "examples": len(examples), "digest": examples_digest(examples)}
    initial = (initial_weights(spec.family, spec.init_from, labels, spec.train_embeddings)
               if spec.certified and spec.init_from else None)
    work = prepare_work(directory, {"spec": spec.recorded(), "data": data}, resume)
    started = _saved_spec(work)["started"]

    def bar(stage: str, unit: str):
        return lambda total, done: Progress(f"harden {stage}", total, done, enabled=progress, unit=unit)

    copies = _copies(spec, examples, data, work, progress)  # a run like any other: its own reproducibility
    with deterministic_torch(spec.threads):
        job = TrainingJob([e.input for e in examples] + [c.example.input for c in copies],
                          targets + [targets[c.origin] for c in copies],
                          list(range(len(examples))) + [c.origin for c in copies], len(labels), work,
                          seed=spec.seed, epochs=spec.epochs, progress=bar, log=log)
        trained = (train_certified(spec.family, job, spec.sources, kappa=spec.kappa, ramp=spec.ramp, initial=initial,
                                   train_embeddings=spec.train_embeddings, learning_rate=spec.learning_rate,
                                   box_words=spec.box_words, embeddings_only=spec.embeddings_only)
                   if spec.certified else family_named(spec.family).train(job))
    card = {"family": spec.family, "labels": labels, "options": trained.options,
            "training": {**spec.recorded(), "data": data, "copies_made": len(copies), "trained_on": len(job.texts),
                         **trained.details},
            "provenance": {"robustcount": __version__, "python": platform.python_version(),
                           "dependencies": dependency_versions(), "command": command_line, "started": started,
                           "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}}
    write_model_dir(directory, card, trained.tensors)
    if evaluate and set(labels) == set(DEMO_LABELS):
        card["demo_test"] = demo_test_card(load_model_dir(directory, device="cpu"))
        write_model_dir(directory, card, trained.tensors)
    if (work / ADVERSARIES).exists():
        for kept in work.glob(f"{Path(ADVERSARIES).stem}*"):
            kept.replace(directory / kept.name)
    shutil.rmtree(work)
    return read_card(directory)


def prepare_work(directory: Path, identity: dict, resume: bool) -> Path:
    """The work folder of `directory`, checked against `identity` (the spec and the data)."""
    work = directory / WORK
    if resume:
        if not (work / "spec.json").is_file():
            finished = (directory / CARD_FILE).exists()
            raise RobustcountError(f"{directory}: {'the model there is finished' if finished else 'no training to resume'}"
                                   f" (start a new one in an empty directory)")
        saved = _saved_spec(work)
        if {k: saved.get(k) for k in identity} != json.loads(json.dumps(identity)):
            raise RobustcountError(f"{directory}: the training there was started with other options or data; "
                                   "resume it with the same ones, or start a new one in an empty directory")
        return work
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise RobustcountError(f"{directory} is not an empty directory: pass --resume to continue the training "
                               "there, or choose a new one")
    work.mkdir(parents=True, exist_ok=True)
    (work / "spec.json").write_text(json.dumps(
        {**identity, "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}, indent=2) + "\n")
    return work


def _saved_spec(work: Path) -> dict:
    """The spec.json of work folder `work`, refused in one line when it is not one a training wrote."""
    path = work / "spec.json"
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        saved = err
    if not isinstance(saved, dict) or not isinstance(saved.get("started"), str):
        problem = f" ({saved})" if isinstance(saved, Exception) else ""
        raise RobustcountError(f"{path}: not the record of a training (damaged{problem}), so it cannot be resumed: "
                               "start a new training in an empty directory")
    return saved


def _copies(spec: HardenSpec, examples: Sequence[Example], data: dict, work: Path, progress: bool) -> list[Copy]:
    built_in = built_in_of(spec.family)
    return training_copies(spec, examples, seed=spec.seed, target=built_in.name if built_in else "",
                           run_file=work / ADVERSARIES, data=data, progress=progress)
