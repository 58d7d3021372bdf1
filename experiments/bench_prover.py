"""The prover's speed on the default model, and the time to certify a demo:test sample.

1. Throughput: the prover (default order: gradient sensitivities) certifies `--examples` demo:test sentences at r = `--radius` in a Zéroe
   space (truncate + disemvowel); every text it sends to the model is recorded, then a bare batched
   forward pass runs over the same texts in the same order and batch size. The figure is the
   ratio of points checked per second (prover, all its work included) to texts per second (bare).
2. Certification: `robustcount certify` semantics (r = 1, 2, 3, stopping at the first radius not
   certified) on a seeded sample of `--sample` demo:test examples, with the time per radius.

Run: `.venv/bin/python experiments/bench_prover.py --examples 20 --radius 2 --sample 100`
"""

from __future__ import annotations

import argparse
import random
import time

import torch

from robustcount.data import label_index, load_demo
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.proofs.prover import CERTIFIED, certify_radii, prove
from robustcount.spaces.build import build_space

SOURCES = ["truncate", "disemvowel"]


class Recording:
    """The default model, recording every batch the prover sends it (gradients pass through)."""

    def __init__(self, model):
        self.model, self.labels, self.batches = model, model.labels, []
        self.has_gradients = model.has_gradients

    def predict_proba(self, batch):
        self.batches.append(list(batch))
        return self.model.predict_proba(batch)

    def word_saliency(self, item, spans, label):
        return self.model.word_saliency(item, spans, label)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--radius", type=int, default=2)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    model = load_model("minilm-rt", device="cpu")
    test = load_demo("test")
    chosen = random.Random(args.seed).sample(test, args.examples)
    recording = Recording(model)
    engine = QueryEngine(recording)
    checked = 0
    began = time.perf_counter()
    for example in chosen:
        space = build_space(example.input, SOURCES)
        gold = label_index(example.label, model.labels)
        checked += prove(engine, space, gold, args.radius).checked
    prover_seconds = time.perf_counter() - began
    texts = [t for batch in recording.batches for t in batch]
    began = time.perf_counter()
    with torch.inference_mode():
        for batch in recording.batches:
            model.predict_proba(batch)
    bare_seconds = time.perf_counter() - began
    print(f"prover: {checked} points in {prover_seconds:.1f} s = {checked / prover_seconds:.1f} points/s "
          f"({len(texts)} texts and {engine.total.gradient_calls} gradient passes run)")
    print(f"bare forward pass over the same {len(texts)} texts and batches: {len(texts) / bare_seconds:.1f} texts/s")
    print(f"ratio prover/bare: {(checked / prover_seconds) / (len(texts) / bare_seconds):.2f}")

    sample = random.Random(args.seed + 1).sample(test, args.sample)
    engine = QueryEngine(model)
    certified = [0, 0, 0, 0]
    per_radius_seconds = [0.0, 0.0, 0.0, 0.0]
    misclassified = 0
    began = time.perf_counter()
    for example in sample:
        space = build_space(example.input, SOURCES)
        gold = label_index(example.label, model.labels)
        if int(engine.predict([example.input])[0]) != gold:
            misclassified += 1
            continue
        for proof in certify_radii(engine, space, gold, 3):
            per_radius_seconds[proof.radius] += proof.seconds
            certified[proof.radius] += proof.status == CERTIFIED
    total = time.perf_counter() - began
    print(f"certify {len(sample)} demo:test examples ({misclassified} misclassified), {SOURCES}: {total:.1f} s")
    for r in (1, 2, 3):
        print(f"  r = {r}: certified {certified[r]} ({certified[r] / len(sample):.2f}), "
              f"{per_radius_seconds[r]:.1f} s proving at this radius")


if __name__ == "__main__":
    main()
