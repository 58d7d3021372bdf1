"""`harden`: train a model family of the zoo on its training data plus perturbed copies
(adversarial training) and write the result as a model directory that `--model DIR` loads.

The families: `minilm-rt` (its head only; the encoder stays frozen), `cnn-rt` and `lstm-rt` (the
networks; GloVe stays frozen) and `minilm-rt-ft` (its LoRA adapters and classifier). The copies:
Zéroe attackers at a mix of levels (seed 000), the adversarial examples TextFooler or PDP finds
against the built-in model on the training texts (seed 002), or none (plain retraining).

Deterministic for a seed on a fixed number of threads: two runs write the same bytes. Resumable:
the work in progress (the attack's run file, embeddings, checkpoints) lives in DIR/.harden until
the model is written, and `resume=True` continues it exactly.
"""

from __future__ import annotations

import json
import platform
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from robustcount import __version__
from robustcount.attacks.zeroe_protocol import LEVELS
from robustcount.data import DEMO_LABELS, Example, examples_digest, label_index, sample_indices
from robustcount.errors import RobustcountError
from robustcount.models.cards import demo_test_card, deterministic_torch
from robustcount.models.model_dir import ARCHITECTURES, CARD_FILE, load_model_dir, read_card, write_model_dir
from robustcount.models.zoo import MODELS
from robustcount.runs.progress import Progress
from robustcount.runs.provenance import dependency_versions
from robustcount.spaces.perturbers import PERTURBERS
from robustcount.training.augment import ADVERSARIAL_METHODS, Copy, adversarial_copies, zeroe_copies
from robustcount.training.checkpoint import Checkpoint

AUGMENTS = ("zeroe", *ADVERSARIAL_METHODS, "none")
WORK = ".harden"
"""The folder inside the output directory that holds a training in progress."""
ADVERSARIES = "adversaries.jsonl"
"""The attack's run file, kept in the model directory as the record of what was trained on."""


@dataclass(frozen=True)
class HardenSpec:
    """What `harden` trains: `architecture` (a family of ARCHITECTURES) on the training data plus
    `copies` perturbed copies of each example (`augment` zeroe: by `attackers` at `levels`) or the
    adversarial examples `augment` (textfooler, pdp) finds on `attack_sample` training examples
    (None: all of them); `epochs` (None: the family's); `seed` and `threads` fix the result."""

    architecture: str
    augment: str = "zeroe"
    attackers: tuple[str, ...] = tuple(PERTURBERS)
    levels: tuple[str, ...] = tuple(LEVELS)
    copies: int = 1
    attack_sample: int | None = 2000
    epochs: int | None = None
    seed: int = 0
    threads: int = 2

    def __post_init__(self):
        if self.architecture not in ARCHITECTURES:
            raise RobustcountError(f"cannot harden {self.architecture!r}: use one of {', '.join(ARCHITECTURES)}")
        if self.augment not in AUGMENTS:
            raise RobustcountError(f"unknown augmentation {self.augment!r} (use {', '.join(AUGMENTS)})")
        for name, chosen, known in (("attacker", self.attackers, PERTURBERS), ("level", self.levels, LEVELS)):
            unknown = [c for c in chosen if c not in known]
            if unknown or not chosen:
                raise RobustcountError(f"unknown {name} {unknown[0]!r} (use {', '.join(known)})" if unknown
                                       else f"give at least one {name}")
        for name in ("copies", "threads"):
            if getattr(self, name) < 1:
                raise RobustcountError(f"{name} must be at least 1")
        for name in ("attack_sample", "epochs"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise RobustcountError(f"{name} must be at least 1")

    def recorded(self) -> dict:
        """The fields that apply to this augmentation (what a card records)."""
        ignored = {"zeroe": ("attack_sample",), "none": ("attackers", "levels", "copies", "attack_sample")}.get(
            self.augment, ("attackers", "levels", "copies"))
        return {k: v for k, v in asdict(self).items() if k not in ignored}


def base_labels(architecture: str) -> list[str]:
    """The labels of the built-in model of that architecture (from its card)."""
    return json.loads(MODELS[architecture].card.read_text())["labels"]


def harden(spec: HardenSpec, examples: Sequence[Example], data: dict, directory: str | Path, *,
           resume: bool = False, evaluate: bool = True, progress: bool = True, log=print,
           command_line: str | None = None) -> dict:
    """Train as `spec` says on `examples` (described by `data`, recorded in the card) and write the
    model directory `directory` (new or empty; with `resume`, the one an interrupted call left).
    With `evaluate` (and the demo labels), the card gets the model's demo:test accuracy and
    predictions as `--model DIRECTORY` reproduces them. Returns the card."""
    directory, labels = Path(directory), base_labels(spec.architecture)
    if any(not isinstance(e.input, str) for e in examples):
        raise RobustcountError("harden trains on single texts; this data has (premise, hypothesis) pairs")
    targets = [label_index(e.label, labels) for e in examples]
    missing = [label for i, label in enumerate(labels) if i not in set(targets)]
    if missing:
        raise RobustcountError(f"the training data has no example labelled {missing[0]!r}")
    data = {**data, "examples": len(examples), "digest": examples_digest(examples)}
    work = _prepare(directory, {"spec": spec.recorded(), "data": data}, resume)
    started = json.loads((work / "spec.json").read_text())["started"]

    def bar(stage: str, unit: str):
        return lambda total, done: Progress(f"harden {stage}", total, done, enabled=progress, unit=unit)

    copies = _copies(spec, examples, data, work, progress)  # a run like any other: its own reproducibility
    with deterministic_torch(spec.threads):
        texts = [e.input for e in examples] + [c.example.input for c in copies]
        all_targets = targets + [targets[c.origin] for c in copies]
        tensors, options, details = _train(spec, texts, all_targets, list(range(len(examples))) +
                                           [c.origin for c in copies], len(labels), work, bar, log)
    card = {"architecture": spec.architecture, "labels": labels, "options": options,
            "training": {**spec.recorded(), "data": data, "copies_made": len(copies), "trained_on": len(texts),
                         **details},
            "provenance": {"robustcount": __version__, "python": platform.python_version(),
                           "dependencies": dependency_versions(), "command": command_line, "started": started,
                           "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}}
    write_model_dir(directory, card, tensors)
    if evaluate and set(labels) == set(DEMO_LABELS):
        card["demo_test"] = demo_test_card(load_model_dir(directory, device="cpu"))
        write_model_dir(directory, card, tensors)
    if (work / ADVERSARIES).exists():
        for kept in work.glob(f"{Path(ADVERSARIES).stem}*"):
            kept.replace(directory / kept.name)
    shutil.rmtree(work)
    return read_card(directory)


def _prepare(directory: Path, identity: dict, resume: bool) -> Path:
    """The work folder of `directory`, checked against `identity` (the spec and the data)."""
    work = directory / WORK
    if resume:
        if not (work / "spec.json").is_file():
            finished = (directory / CARD_FILE).exists()
            raise RobustcountError(f"{directory}: {'the model there is finished' if finished else 'no training to resume'}"
                                   f" (start a new one in an empty directory)")
        saved = json.loads((work / "spec.json").read_text())
        if {k: saved[k] for k in identity} != json.loads(json.dumps(identity)):
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


def _copies(spec: HardenSpec, examples: Sequence[Example], data: dict, work: Path, progress: bool) -> list[Copy]:
    if spec.augment == "none":
        return []
    if spec.augment == "zeroe":
        return zeroe_copies(examples, spec.attackers, spec.levels, spec.copies, spec.seed)
    attacked = sample_indices(len(examples), spec.attack_sample or len(examples), spec.seed)
    found = adversarial_copies(spec.architecture, [examples[i] for i in attacked], spec.augment, seed=spec.seed,
                               run_file=work / ADVERSARIES, data={**data, "attack_sample": spec.attack_sample},
                               progress=progress)
    return [Copy(c.example, attacked[c.origin]) for c in found]


def _train(spec: HardenSpec, texts: list[str], targets: list[int], groups: list[int], n_labels: int, work: Path,
           bar, log) -> tuple[dict, dict, dict]:
    """The trained tensors, the architecture options and what the card says of the training."""
    if spec.architecture == "minilm-rt":
        from robustcount.training.head import embed_texts, fit_head

        embeddings = embed_texts(texts, work / "embeddings", progress=bar("embedding", "texts"))
        tensors, c = fit_head(embeddings, targets, n_labels)
        return tensors, {}, {"C": c}
    if spec.architecture == "minilm-rt-ft":
        from robustcount.training.lora import EPOCHS, train_lora

        adapters, config, trainable = train_lora(texts, targets, seed=spec.seed, epochs=spec.epochs or EPOCHS,
                                                 checkpoint=Checkpoint(work / "lora.pt"),
                                                 progress=bar("fine-tuning", "steps"), log=log)
        return adapters, config, {"trainable_parameters": trainable}
    from robustcount.training.word_network import RECIPES, train_word_network

    trained = train_word_network(spec.architecture, texts, targets, groups, n_labels=n_labels, seed=spec.seed,
                                 epochs=spec.epochs, checkpoint=Checkpoint(work / "network.pt"),
                                 progress=bar("training", "batches"), log=log)
    return trained.state, RECIPES[spec.architecture].options, {"kept_epoch": trained.epoch,
                                                              "held_out_accuracy": trained.held_out_accuracy}
