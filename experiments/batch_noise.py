"""How far the built-in models' answers move between batch compositions: the measurement behind
`goal.MARGIN_TOLERANCE` and `engine.BATCH_TOLERANCE`.

Each of the first `--texts` demo:test texts is run alone (batch size 1), then all of them in the
model's own batches of `--batch-size`, once sorted by length (as the query engine sends them) and
once shuffled (seed 0, so short texts sit beside long ones). Printed per model and batch order:
the largest and the median absolute difference of a probability from its value alone, and how many
labels (argmax) differ. Float32, on the CPU. Run:

    .venv/bin/python experiments/batch_noise.py --models cnn-rt,lstm-rt,bow-rt,tfidf-rt,vader
    .venv/bin/python experiments/batch_noise.py --models minilm-rt,minilm-rt-ft --texts 400
"""

from __future__ import annotations

import argparse
import random

import numpy as np

from robustcount.data import load_demo
from robustcount.models.zoo import load_model


def answers_in_order(model, texts: list[str], order: list[int]) -> np.ndarray:
    """The model's probabilities for `texts`, run in the order `order`, put back in text order."""
    probs = np.empty((len(texts), len(model.labels)))
    probs[order] = model.predict_proba([texts[i] for i in order])
    return probs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="cnn-rt,lstm-rt,bow-rt,tfidf-rt,vader")
    parser.add_argument("--texts", type=int, default=1975)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    texts = [e.input for e in load_demo("test")][: args.texts]
    shuffled = list(range(len(texts)))
    random.Random(0).shuffle(shuffled)
    orders = {"sorted by length": sorted(range(len(texts)), key=lambda i: len(texts[i])), "shuffled": shuffled}
    for name in args.models.split(","):
        model = load_model(name, device="cpu", batch_size=args.batch_size)
        alone = np.concatenate([model.predict_proba([text]) for text in texts])
        for kind, order in orders.items():
            batched = answers_in_order(model, texts, order)
            moved = np.abs(batched - alone).max(axis=1)
            changed = int((batched.argmax(axis=1) != alone.argmax(axis=1)).sum())
            print(f"{name} ({len(texts)} texts, {kind}): largest {moved.max():.3g}, median {np.median(moved):.3g}, "
                  f"labels changed {changed}", flush=True)


if __name__ == "__main__":
    main()
