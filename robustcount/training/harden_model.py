"""`harden --model`: adversarial training of the user's own model (`training/trainees.py`: a
transformers checkpoint, a `py:` torch classifier, a scikit-learn estimator), written as a model of
the same kind with a card of how it was made.

The training examples are split once (with the seed) into those trained on and a held-out share,
measured after every epoch; no copy of a held-out example is made. Each epoch trains on the
training examples and that epoch's copies (`HardenSpec`): drawn once up front, or again at the
epoch's start against the model as it stands (`refresh` epoch, A2T). The labels are the model's
(a refitted estimator's: the data's, sorted), the data's matched to them by name as every command does.

The card (`robustcount-card.json` beside a transformers checkpoint; the model directory's own card
otherwise) records the data and its digest, the options, the copies and held-out accuracy of each
epoch, the versions, and the held-out accuracy and predictions of the saved model as it reloads.
Resumable: the work in progress (checkpoints, snapshots, attack run files) lives in DIR/.harden
until the model is written.
"""

from __future__ import annotations

import json
import platform
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from robustcount import __version__
from robustcount.atomic import replaced_whole
from robustcount.data import Example, examples_digest, label_index, sample_indices
from robustcount.errors import RobustcountError
from robustcount.models.cards import deterministic_torch
from robustcount.models.checkpoint import Checkpoint
from robustcount.models.model_dir import CARD_FILE
from robustcount.models.zoo import load_model
from robustcount.runs.progress import Progress
from robustcount.runs.provenance import dependency_versions
from robustcount.seeding import derive_seed
from robustcount.training.augment import Copy
from robustcount.training.copies import make_copies
from robustcount.training.harden import Sitting, prepare_work
from robustcount.training.spec import HardenSpec
from robustcount.training.trainees import SklearnTrainee, trainee_for, write_snapshot

HARDENING_CARD = "robustcount-card.json"
"""The card beside a hardened transformers checkpoint (which transformers itself ignores)."""
DEFAULT_EPOCHS = {"sklearn": 1}
TORCH_EPOCHS = 3


def card_path(directory: str | Path) -> Path:
    """Where the card of a hardened model in `directory` is."""
    directory = Path(directory)
    return directory / CARD_FILE if (directory / CARD_FILE).exists() else directory / HARDENING_CARD


def read_hardening_card(directory: str | Path) -> dict:
    """The card `harden --model` wrote for the model in `directory`."""
    path = card_path(directory)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise RobustcountError(f"{path}: not a readable hardening card ({err})") from None


@dataclass(frozen=True)
class Split:
    """The training `examples`, their label indices (`targets`), and which of them are trained on
    (`train`) and which held out (`held`)."""

    examples: Sequence[Example]
    targets: list[int]
    train: list[int]
    held: list[int]


def harden_model(spec: HardenSpec, examples: Sequence[Example], data: dict, directory: str | Path,
                 sitting: Sitting = Sitting()) -> dict:
    """Train `spec.model` as `spec` says on `examples` (described by `data`) and write it into
    `directory` (new or empty; with `sitting.resume`, the one an interrupted call left). Returns the card."""
    directory = Path(directory)
    if any(not isinstance(e.input, str) for e in examples):
        raise RobustcountError("harden trains on single texts; this data has (premise, hypothesis) pairs")
    data = {**data, "examples": len(examples), "digest": examples_digest(examples)}
    with deterministic_torch(spec.threads):
        trainee = trainee_for(spec.trainee, spec.seed)
        work = prepare_work(directory, {"spec": spec.recorded(), "data": data}, sitting.resume)
        started = json.loads((work / "spec.json").read_text())["started"]
        if isinstance(trainee, SklearnTrainee):
            trainee.set_labels(sorted({str(e.label) for e in examples}))
        labels = trainee.labels
        held = sample_indices(len(examples), max(1, round(spec.trainee.held_out * len(examples))),
                              derive_seed(spec.seed, "held-out"))
        held_set = set(held)
        split = Split(examples, [label_index(e.label, labels) for e in examples],
                      [i for i in range(len(examples)) if i not in held_set], held)
        if not split.train:
            raise RobustcountError("too few examples: every one is held out")
        history = _train_epochs(spec, trainee, split, work, data, sitting)
        card = {"hardened": {
            "kind": trainee.kind, "input": spec.model, "labels": labels, "options": spec.recorded(),
            "training": {**trainee.options, "epochs": history, "data": data,
                         "held_out": {"examples": len(held), "ids": [examples[i].id for i in held]}},
            "provenance": {"robustcount": __version__, "python": platform.python_version(),
                           "dependencies": dependency_versions(), "command": sitting.command_line,
                           "started": started, "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}}}
        shutil.rmtree(work / "output", ignore_errors=True)
        write_snapshot(trainee, work / "output", card)
        reloaded = load_model(str(work / "output"), device="cpu")
        accuracy, predictions = held_out_accuracy(reloaded, examples, held, split.targets)
    card["hardened"]["held_out"] = {"accuracy": accuracy, "predictions": predictions}
    (work / "output" / card_path(work / "output").name).write_text(
        json.dumps({**read_card_file(work / "output"), **card}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for item in (work / "output").iterdir():
        item.replace(directory / item.name)
    for kept in work.glob("adversaries-*"):
        kept.replace(directory / kept.name)
    shutil.rmtree(work)
    return read_hardening_card(directory)


def _train_epochs(spec: HardenSpec, trainee, split: Split, work: Path, data: dict, sitting: Sitting) -> list[dict]:
    """Train `trainee` for the epochs `spec` asks for (those `work` has not done yet), each on the
    training examples of `split` and that epoch's copies; returns each epoch's record."""
    examples, train = split.examples, split.train
    epochs = spec.epochs or DEFAULT_EPOCHS.get(trainee.kind, TORCH_EPOCHS)
    checkpoint = Checkpoint(work / "training.pt")
    state = trainee.resume(checkpoint) or {"epoch": 0, "step_in_epoch": 0}
    history_file = work / "epochs.json"
    history = json.loads(history_file.read_text()) if history_file.exists() else []
    copies: list[Copy] | None = None
    for epoch in range(len(history), epochs):
        drawn = 0 if spec.trainee.refresh == "once" else epoch  # whose copies this epoch trains on
        if copies is None or spec.trainee.refresh == "epoch":
            target = spec.model if drawn == 0 else str(
                write_snapshot(trainee, work / f"snapshot-{epoch}", {"training": {"snapshot_of_epoch": epoch}}))
            copies = [Copy(c.example, train[c.origin]) for c in
                      epoch_copies(spec, [examples[i] for i in train], drawn, target, work, data, sitting.progress)]
        texts = [examples[i].input for i in train] + [c.example.input for c in copies]
        goals = [split.targets[i] for i in train] + [split.targets[c.origin] for c in copies]
        if epoch >= state["epoch"]:
            skip = state["step_in_epoch"] if epoch == state["epoch"] else 0
            bar = Progress(f"harden epoch {epoch + 1} of {epochs}", trainee.batches(len(texts)), 0,
                           enabled=sitting.progress, unit="batches")
            try:
                trainee.train_epoch(epoch, texts, goals, checkpoint, skip=skip, bar=bar)
            finally:
                bar.close()
        accuracy = held_out_accuracy(trainee.current(), examples, split.held, split.targets)[0]
        history.append({"epoch": epoch + 1, "copies": len(copies), "trained_on": len(texts),
                        "held_out_accuracy": accuracy})
        with replaced_whole(history_file, "w") as out:
            json.dump(history, out, indent=2)
        sitting.log(f"epoch {epoch + 1} of {epochs}: {len(texts)} texts ({len(copies)} copies), held-out accuracy "
                    f"{accuracy:.4f}")
    return history


def read_card_file(directory: Path) -> dict:
    """What the card file of `directory` holds already (a model directory's card), else nothing."""
    path = card_path(directory)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def held_out_accuracy(classifier, examples: Sequence[Example], held: Sequence[int], targets: Sequence[int]):
    """The accuracy of `classifier` on the held-out examples and its predicted label indices, as a string."""
    predicted = classifier.predict_proba([examples[i].input for i in held]).argmax(axis=1)
    correct = sum(int(p) == targets[i] for p, i in zip(predicted, held))
    return correct / len(held), "".join(str(int(p)) if p < 10 else f"[{int(p)}]" for p in predicted)


def epoch_copies(spec: HardenSpec, train: Sequence[Example], epoch: int, target: str, work: Path, data: dict,
                 progress: bool) -> list[Copy]:
    """The perturbed copies of epoch `epoch` (origins index `train`): the first epoch's with the
    seed itself, later ones with a seed of their own; an attack's against `target`."""
    return make_copies(spec.copies, train, seed=spec.seed if epoch == 0 else derive_seed(spec.seed, "epoch", epoch),
                       target=target, run_file=work / f"adversaries-{epoch + 1}.jsonl",
                       data={**data, "epoch": epoch + 1}, progress=progress)
