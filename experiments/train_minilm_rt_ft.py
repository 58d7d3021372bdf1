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

The training loop is `robustcount.models.families.minilm_lora` (which `robustcount harden` uses too).
Run: `.venv/bin/python experiments/train_minilm_rt_ft.py [--threads 2]`
"""

from __future__ import annotations

import json
import time

import torch

from robustcount.data import DEMO_LABELS, load_demo
from robustcount.models.cards import demo_test_card, reproducible_torch, save_weights
from robustcount.models.families.minilm_lora import (
    ADAPTER_CARD,
    ADAPTER_CONFIG,
    ADAPTER_WEIGHTS,
    BASE,
    BATCH,
    EPOCHS,
    LEARNING_RATE,
    LORA,
    MAX_LENGTH,
    WARMUP,
    WEIGHT_DECAY,
    train_lora,
)
from robustcount.models.zoo import load_model

SEED = 0


def main() -> None:
    args = reproducible_torch(__doc__.splitlines()[0])
    began = time.time()
    train = load_demo("train")
    adapters, config, trainable = train_lora([e.input for e in train], [DEMO_LABELS.index(e.label) for e in train],
                                             seed=SEED)
    trained = time.time() - began
    save_weights(adapters, ADAPTER_WEIGHTS)
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
