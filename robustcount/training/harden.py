"""`harden`: train a model of a family on training data plus perturbed copies (adversarial
training) and write the result as a model directory that `--model DIR` loads.

A user's own model (`--model`) trains in `harden_model.py`; this module trains the families, as
`HardenSpec` (`training/spec.py`) says.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from robustcount import __version__
from robustcount.data import DEMO_LABELS, Example, examples_digest, label_index
from robustcount.errors import RobustcountError
from robustcount.models.cards import demo_test_card, deterministic_torch
from robustcount.models.families import TrainingJob, family_named
from robustcount.models.model_dir import CARD_FILE, load_model_dir, read_card, write_model_dir
from robustcount.models.zoo import built_in_of
from robustcount.runs.progress import Progress
from robustcount.runs.provenance import dependency_versions
from robustcount.training.augment import Copy
from robustcount.training.certified import CertifiedTraining, initial_weights, train_certified
from robustcount.training.copies import make_copies, training_copy_variants
from robustcount.training.spec import HardenSpec

AUGMENTS = tuple(training_copy_variants())
"""What `harden --augment` takes: zeroe, space, an attack recipe, none."""
WORK = ".harden"
"""The folder inside the output directory that holds a training in progress."""
ADVERSARIES = "adversaries.jsonl"
"""The attack's run file, kept in the model directory as the record of what was trained on."""


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


@dataclass(frozen=True)
class Sitting:
    """How one call of `harden` (or `harden_model`) runs: continuing the training an interrupted
    call left (`resume`), with progress bars (`progress`), its lines to `log`, and the
    `command_line` its card records as how it was made (None: from Python)."""

    resume: bool = False
    progress: bool = True
    log: Callable[[str], None] = print
    command_line: str | None = None


def harden(spec: HardenSpec, examples: Sequence[Example], data: dict, directory: str | Path,
           sitting: Sitting = Sitting(), *, evaluate: bool = True) -> dict:
    """Train as `spec` says on `examples` (described by `data`, recorded in the card) and write the
    model directory `directory` (new or empty; with `sitting.resume`, the one an interrupted call
    left). With `evaluate` (and the demo labels), the card gets the model's demo:test accuracy and
    predictions as `--model DIRECTORY` reproduces them. Returns the card."""
    resume, progress, log = sitting.resume, sitting.progress, sitting.log
    directory, labels = Path(directory), training_labels(spec.family, examples)
    if any(not isinstance(e.input, str) for e in examples):
        raise RobustcountError("harden trains on single texts; this data has (premise, hypothesis) pairs")
    targets = [label_index(e.label, labels) for e in examples]
    missing = [label for i, label in enumerate(labels) if i not in set(targets)]
    if missing:
        raise RobustcountError(f"the training data has no example labelled {missing[0]!r}")
    data = {**data, "examples": len(examples), "digest": examples_digest(examples)}
    certified = spec.trainee if isinstance(spec.trainee, CertifiedTraining) else None
    initial = initial_weights(certified, labels) if certified else None
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
        trained = (train_certified(job, spec.space, certified, initial) if certified
                   else family_named(spec.family).train(job))
    card = {"family": spec.family, "labels": labels, "options": trained.options,
            "training": {**spec.recorded(), "data": data, "copies_made": len(copies), "trained_on": len(job.texts),
                         **trained.details},
            "provenance": {"robustcount": __version__, "python": platform.python_version(),
                           "dependencies": dependency_versions(), "command": sitting.command_line, "started": started,
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
    return make_copies(spec.copies, examples, seed=spec.seed, target=built_in.name if built_in else "",
                       run_file=work / ADVERSARIES, data=data, progress=progress)
