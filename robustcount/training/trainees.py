"""What `harden --model` trains: the user's own model, trained one epoch at a time and saved as a
model of the same kind as it came.

- `TorchTrainee`: a transformers checkpoint (a local directory, or a hub name online), fine-tuned
  in full or through LoRA adapters (peft) merged back at the end, saved with `save_pretrained` (a
  transformers checkpoint directory again); or a `py:` factory's TorchClassifier, trained as
  `models/families/torch_factory.py`'s protocol says and saved as a `py-torch` model directory.
  AdamW at a constant learning rate on length-grouped batches (`models/batches.py`); a
  checkpoint every CHECKPOINT_STEPS steps and at each epoch's end holds the trained parameters, the
  optimiser, the random state and the step reached, so that an interrupted epoch continues exactly.
- `SklearnTrainee`: an estimator or pipeline, refitted (a clone, its parameters as they were) on
  each epoch's texts and saved as an `sklearn` model directory (skops, no pickle).

An epoch's texts are the training examples and that epoch's perturbed copies (`harden_model`).
"""

from __future__ import annotations

import copy
import os
import random
import shutil
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from robustcount.errors import RobustcountError
from robustcount.models.base import Classifier
from robustcount.models.batches import grouped_batches
from robustcount.models.checkpoint import Checkpoint
from robustcount.models.families.sklearn_skops import SKOPS_FILE, estimator_from, estimator_tensors
from robustcount.models.families.torch_factory import trainable
from robustcount.models.model_dir import is_model_dir, read_card, write_model_dir
from robustcount.models.sklearn_adapter import SklearnClassifier
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.transformers_adapter import hub_reachable, load_whole, quiet_transformers, transformers_classifier
from robustcount.models.zoo import MODELS, is_language_model, load_model
from robustcount.seeding import derive_seed
from robustcount.training.spec import ModelTraining

CHECKPOINT_STEPS = 50
GROUP = 20
"""Batches' worth of examples sorted by length together (`grouped_batches`)."""
LORA = {"r": 8, "lora_alpha": 16, "lora_dropout": 0.1}
"""The LoRA adapters of `--lora` (on the modules peft targets for the architecture)."""


def trainee_for(training: ModelTraining, seed: int):
    """The trainee of `training.model` (anything `--model` takes that can train), trained as
    `training` says, refused in one line otherwise; what it initialises fresh (LoRA adapters) is
    seeded by `seed`."""
    model, lora, batch_size, learning_rate = training.model, training.lora, training.batch_size, training.learning_rate
    torch.manual_seed(seed)
    if is_language_model(model):
        raise RobustcountError(f"{model} is a prompted language model: harden does not train language models "
                               "(their prompt, verbaliser and calibration are options: --prompt, --verbalizer, "
                               "--calibration)")
    if lora and (model.startswith("py:") or model in MODELS):
        raise RobustcountError("--lora fine-tunes a transformers checkpoint; this model is not one")
    if model.startswith("py:"):
        loaded = load_model(model)
        if isinstance(loaded, SklearnClassifier):
            return SklearnTrainee(model, loaded)
        return TorchTrainee("py-torch", model, trainable(loaded, model), batch_size=batch_size,
                            learning_rate=learning_rate or 1e-3, seed=seed)
    if model in MODELS:
        loaded = load_model(model, device="cpu")
        if isinstance(loaded, SklearnClassifier):
            return SklearnTrainee(model, loaded)
        raise RobustcountError(f"{model} is a built-in model of the family {MODELS[model].family}: retrain the family "
                               f"with --family {MODELS[model].family}, or save it with `robustcount save-model "
                               f"{model} DIR` and harden that checkpoint with --model DIR")
    if is_model_dir(model):
        family = read_card(model)["family"]
        if family in ("py-torch", "sklearn"):
            raise RobustcountError(f"{model} was hardened from {read_card(model)['options'].get('factory', 'a py: factory')}: "
                                   "harden that factory again")
        raise RobustcountError(f"{model} is a model directory of the family {family}: use --family {family}")
    from transformers import AutoModelForSequenceClassification

    local = Path(model).is_dir()
    if not local and Path(model).expanduser().exists():
        raise RobustcountError(f"{model}: not a transformers checkpoint directory")
    offline = local or os.environ.get("HF_HUB_OFFLINE") == "1" or not hub_reachable()  # a hub name: from the cache
    module, tokenizer = load_whole(model, AutoModelForSequenceClassification, local_files_only=offline)
    if lora:
        from peft import LoraConfig, get_peft_model

        with warnings.catch_warnings():  # peft asks transformers a deprecated question; nothing for users to do
            warnings.simplefilter("ignore", FutureWarning)
            module = get_peft_model(module, LoraConfig(task_type="SEQ_CLS", **LORA))
    classifier = transformers_classifier(module, tokenizer, model, device="cpu")
    return TorchTrainee("transformers-lora" if lora else "transformers", model, classifier, batch_size=batch_size,
                        learning_rate=learning_rate or (1e-3 if lora else 2e-5), seed=seed, tokenizer=tokenizer)


class TorchTrainee:
    """A TorchClassifier trained in place (see the module docstring); `kind` says how it saves."""

    def __init__(self, kind: str, model: str, classifier: TorchClassifier, *, batch_size: int, learning_rate: float,
                 seed: int, tokenizer=None):
        self.kind, self.model, self.classifier, self.tokenizer = kind, model, classifier, tokenizer
        self.labels = list(classifier.labels)
        self.batch_size, self.learning_rate, self.seed = batch_size, learning_rate, seed
        module = classifier.module
        self.trained = [name for name, p in module.named_parameters() if p.requires_grad]
        if not self.trained:
            raise RobustcountError(f"{model}: the module has no parameter that requires gradients (nothing to train)")
        torch.manual_seed(seed)
        self.optimiser = torch.optim.AdamW([p for p in module.parameters() if p.requires_grad], lr=learning_rate)

    @property
    def options(self) -> dict:
        """What the card records of how it trains."""
        return {"batch_size": self.batch_size, "learning_rate": self.learning_rate,
                "trained_parameters": sum(p.numel() for p in self.classifier.module.parameters() if p.requires_grad),
                **({"lora": LORA} if self.kind == "transformers-lora" else {})}

    def _state(self) -> dict:
        params = dict(self.classifier.module.named_parameters())
        return {name: params[name].detach().clone() for name in self.trained}

    def resume(self, checkpoint: Checkpoint) -> dict | None:
        """Restore the last saved state; returns where it was (epoch, step in epoch) or None."""
        saved = checkpoint.load()
        if saved is None:
            return None
        self.classifier.module.load_state_dict(saved["trained"], strict=False)
        self.optimiser.load_state_dict(saved["optimiser"])
        torch.set_rng_state(saved["torch_now"])
        return {"epoch": saved["epoch"], "step_in_epoch": saved["step_in_epoch"]}

    def train_epoch(self, epoch: int, texts: Sequence[str], targets: Sequence[int], checkpoint: Checkpoint,
                    skip: int = 0, bar=None) -> None:
        """One epoch on `texts` (batches drawn with the seed and the epoch), from batch `skip` on."""
        module, encode = self.classifier.module, self.classifier.tokenizer
        lengths = [len(t) for t in texts]
        formed = grouped_batches(range(len(texts)), lengths, self.batch_size, GROUP,
                                 random.Random(derive_seed(self.seed, "batches", epoch)))
        goal = torch.tensor(list(targets))
        module.train()
        own_loss = getattr(self.classifier, "loss", None)
        if bar:
            bar.update(skip)
        for k, batch in enumerate(formed):
            if k < skip:
                continue
            chosen = [texts[i] for i in batch]
            if own_loss is not None:
                loss = own_loss(chosen, goal[batch])
            else:
                inputs = {key: value.to(self.classifier.device) for key, value in encode(chosen).inputs.items()}
                out = module(**inputs)
                loss = torch.nn.functional.cross_entropy(getattr(out, "logits", out).float(),
                                                         goal[batch].to(self.classifier.device))
            self.optimiser.zero_grad()
            loss.backward()
            self.optimiser.step()
            if bar:
                bar.update(1)
            last = k == len(formed) - 1
            if last or (k + 1) % CHECKPOINT_STEPS == 0:
                checkpoint.save({"trained": self._state(), "optimiser": self.optimiser.state_dict(),
                                 "torch_now": torch.get_rng_state(), "epoch": epoch + 1 if last else epoch,
                                 "step_in_epoch": 0 if last else k + 1})
        module.eval()

    def batches(self, n: int) -> int:
        return -(-n // self.batch_size)

    def current(self) -> Classifier:
        self.classifier.module.eval()
        return self.classifier

    def save(self, directory: Path, card: dict) -> None:
        """Write the model into `directory` (which exists): a transformers checkpoint, or a model directory."""
        if self.kind.startswith("transformers"):
            quiet_transformers()
            module = self.classifier.module
            if self.kind == "transformers-lora":
                module = copy.deepcopy(module).merge_and_unload()
            module.save_pretrained(directory, safe_serialization=True)
            self.tokenizer.save_pretrained(directory)
        else:
            write_model_dir(directory, {"family": "py-torch", "labels": self.labels,
                                        "options": {"factory": self.model}, **card},
                            self.classifier.module.state_dict())


class SklearnTrainee:
    """A scikit-learn estimator refitted on each epoch's texts (see the module docstring)."""

    kind = "sklearn"
    options: dict = {}

    def __init__(self, model: str, loaded: SklearnClassifier):
        from sklearn.base import clone

        self.model, self.estimator, self.fitted = model, clone(loaded.estimator), None
        self.labels: list[str] = []

    def set_labels(self, labels: Sequence[str]) -> None:
        self.labels = list(labels)

    def resume(self, checkpoint: Checkpoint) -> dict | None:
        """The estimator of the last finished epoch (an interrupted refit starts again)."""
        saved = checkpoint.load()
        if saved is None:
            return None
        self.fitted = estimator_from(saved["estimator"].numpy().tobytes(), str(checkpoint.path))
        return {"epoch": saved["epoch"], "step_in_epoch": 0}

    def train_epoch(self, epoch: int, texts: Sequence[str], targets: Sequence[int], checkpoint: Checkpoint,
                    skip: int = 0, bar=None) -> None:
        from sklearn.base import clone

        self.fitted = clone(self.estimator).fit(list(texts), np.asarray([self.labels[t] for t in targets]))
        if [str(c) for c in self.fitted.classes_] != self.labels:
            raise RobustcountError(f"{self.model}: refitted, its classes are {list(self.fitted.classes_)}, "
                                   f"not the data's labels {self.labels}")
        checkpoint.save({"estimator": estimator_tensors(self.fitted)["skops"], "epoch": epoch + 1})
        if bar:
            bar.update(1)

    def batches(self, n: int) -> int:
        return 1

    def current(self) -> Classifier:
        return SklearnClassifier(self.fitted, labels=self.labels, name=self.model)

    def save(self, directory: Path, card: dict) -> None:
        tensors = estimator_tensors(self.fitted)
        write_model_dir(directory, {"family": "sklearn", "labels": self.labels,
                                    "options": {"refitted_from": self.model}, **card}, tensors)
        (directory / SKOPS_FILE).write_bytes(tensors["skops"].numpy().tobytes())


def write_snapshot(trainee, directory: Path, card: dict) -> Path:
    """The trainee as it stands, saved whole into `directory` (staged, then renamed: a snapshot
    that exists is complete)."""
    if directory.exists():
        return directory
    staged = directory.with_name(directory.name + ".partial")
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    trainee.save(staged, card)
    staged.rename(directory)
    return directory
