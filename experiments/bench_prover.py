"""The prover's speed, and the time to certify a demo:test sample.

1. Throughput on `--model` (default: the default model; lstm-rt, cnn-rt, bow-rt...): the prover
   (in `--order`, default the prover's: margins) certifies those of `--examples` demo:test
   sentences it classifies correctly at r = `--radius` in a Zéroe space (truncate + disemvowel;
   `--sources synonyms` for the default synonym space, where hardly two points share their word
   ids); every text it sends to the model is
   recorded (the prover runs on texts there, then again on the model itself, on word ids where
   it reads them). Then, over the same texts in the same order and batches: a bare batched forward
   (`predict_proba` on the texts: tokenizing included), and, for a torch model, the network alone
   (its module and softmax on the inputs encoded beforehand), then, under `--order sensitivity`,
   with the gradient passes of that order added (one `word_saliency` an example). On word ids the
   prover runs each distinct ids once a request (a Zéroe space's misspellings are often the same
   unknown word), so it may make fewer model calls than the texts it checks. The figures are the ratios of
   points checked per second (prover, all its work included) to texts per second of each, in
   CPU seconds of this process. Every work is timed the same way (the machine may be shared):
   with `--interleave round` (the default), every work runs whole, one after the other, in
   `--repeats` rounds, and its time is its fewest; with `--interleave example`, each example's
   part of every work (its proof, the cache cleared first; its batches through the bare forward
   and the network alone; its gradient pass) runs `--repeats` times, the works one after the
   other, and a work's time is the sum over the examples of each part's fewest CPU seconds.
2. Certification: `robustcount certify` semantics (r = 1, 2, 3, stopping at the first radius not
   certified) on a seeded sample of `--sample` demo:test examples, with the time per radius
   (`--sample 0`: none).

Run: `.venv/bin/python experiments/bench_prover.py --examples 20 --radius 2 --sample 100`
(`--model lstm-rt --sample 0`: the word networks' throughput)
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import torch

from robustcount.data import label_index, load_demo
from robustcount.goal import correct_on_input
from robustcount.models.engine import QueryEngine
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.zoo import load_model
from robustcount.orders import MARGINS, ORDERS
from robustcount.proofs.prover import CERTIFIED, certify_radii, prove
from robustcount.spaces.build import build_space

SOURCES = ["truncate", "disemvowel"]


class Recording:
    """A model, recording every batch the prover sends it (gradients pass through)."""

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
    parser.add_argument("--model", default="minilm-rt")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--order", default=MARGINS, choices=ORDERS)
    parser.add_argument("--interleave", default="round", choices=["round", "example"])
    parser.add_argument("--sources", nargs="+", default=SOURCES, help="the space's sources (default: %(default)s)")
    args = parser.parse_args()
    model = load_model(args.model, device="cpu")
    test = load_demo("test")
    chosen = random.Random(args.seed).sample(test, args.examples)
    problems = [(build_space(e.input, args.sources), label_index(e.label, model.labels)) for e in chosen]
    problems = [(space, gold) for space, gold in problems  # a misclassified text has nothing to prove
                if correct_on_input(QueryEngine(model), space.item, gold)]

    def least(parts: list[dict[str, Callable[[], object]]]) -> dict[str, float]:
        """Per work, the sum over `parts` (each a part of every work) of the part's fewest CPU
        seconds in `--repeats` rounds, each round running the part of every work once, one after
        the other (the machine may be shared: a busy spell then slows the works alike)."""
        total: dict[str, float] = {}
        for works in parts:
            seconds = {name: [] for name in works}
            for _ in range(args.repeats):
                for name, work in works.items():
                    began = time.process_time()
                    work()
                    seconds[name].append(time.process_time() - began)
            for name, values in seconds.items():
                total[name] = total.get(name, 0.0) + min(values)
        return total

    def proof(engine: QueryEngine, space, gold) -> int:
        return prove(engine, space, gold, args.radius, order=args.order).checked

    def prover(engine: QueryEngine) -> int:
        engine.clear_cache()
        return sum(proof(engine, space, gold) for space, gold in problems)

    recording = Recording(model)  # reads texts only
    on_texts, on_model = QueryEngine(recording), QueryEngine(model)  # on_model: word ids where the model reads them
    prover(on_texts), prover(on_model)  # warm up the model, and each engine's batch probe
    recording.batches.clear()
    on_texts.clear_cache()
    checked, bounds = 0, [0]  # example i's batches: batches[bounds[i] : bounds[i + 1]]
    for space, gold in problems:
        checked += proof(on_texts, space, gold)
        bounds.append(len(recording.batches))
    batches = list(recording.batches)
    texts = [t for batch in batches for t in batch]
    encoded = [{k: v.to(model.device) for k, v in model.tokenizer(batch).inputs.items()} for batch in batches] \
        if isinstance(model, TorchClassifier) else []

    def bare(chosen: slice) -> None:
        with torch.inference_mode():
            for batch in batches[chosen]:
                model.predict_proba(batch)

    def network(chosen: slice) -> None:
        with torch.inference_mode():
            for inputs in encoded[chosen]:
                torch.softmax(model.module(**inputs).float(), dim=-1).cpu().numpy()

    def gradients(chosen: list) -> None:  # the sensitivity order's passes, one per example (run only under that order)
        for space, gold in chosen:
            model.word_saliency(space.item, space.tokens.spans(), gold)

    def works(chosen: list, at: slice) -> dict[str, Callable[[], object]]:
        """Every work on the problems `chosen`, whose batches are `batches[at]`."""
        def proofs(engine: QueryEngine) -> int:
            engine.clear_cache()
            return sum(proof(engine, space, gold) for space, gold in chosen)

        part = {"texts": lambda: proofs(on_texts), "model": lambda: proofs(on_model), "bare": lambda: bare(at)}
        if encoded:
            part["network"] = lambda: network(at)
            if model.has_gradients and args.order == "sensitivity":
                part["gradients"] = lambda: gradients(chosen)
        return part

    parts = [works(problems, slice(None))] if args.interleave == "round" else \
        [works([problem], slice(bounds[i], bounds[i + 1])) for i, problem in enumerate(problems)]
    took = least(parts)
    seconds, text_seconds, bare_seconds = took["model"], took["texts"], took["bare"]
    rate, text_rate = checked / seconds, checked / text_seconds
    with on_model.example() as calls:  # the model calls of one pass (prover() clears the cache first)
        prover(on_model)
    print(f"prover ({'word ids' if on_model.reads_word_ids else 'texts'}, order {args.order}): {checked} points in {seconds:.2f} CPU s = "
          f"{rate:.1f} points/s ({calls.model_calls} model calls; on texts {len(texts)}); on texts: {text_rate:.1f} points/s")
    print(f"bare forward pass over the same {len(texts)} texts and batches: {len(texts) / bare_seconds:.1f} texts/s")
    print(f"ratio prover/bare: {rate / (len(texts) / bare_seconds):.2f}")
    if encoded:
        network_seconds, gradient_seconds = took["network"], took.get("gradients", 0.0)
        print(f"the network alone on the same batches, encoded beforehand: {len(texts) / network_seconds:.1f} texts/s")
        print(f"ratio prover/network alone: {rate / (len(texts) / network_seconds):.2f} "
              f"(on texts: {text_rate / (len(texts) / network_seconds):.2f})")
        both = len(texts) / (network_seconds + gradient_seconds)
        print(f"with its {len(problems) if gradient_seconds else 0} gradient passes ({gradient_seconds:.3f} CPU s): "
              f"ratio {rate / both:.2f} (on texts: {text_rate / both:.2f})")
    if not args.sample:
        return

    sample = random.Random(args.seed + 1).sample(test, args.sample)
    engine = QueryEngine(model)
    certified = [0, 0, 0, 0]
    per_radius_seconds = [0.0, 0.0, 0.0, 0.0]
    misclassified = 0
    began = time.perf_counter()
    for example in sample:
        space = build_space(example.input, args.sources)
        gold = label_index(example.label, model.labels)
        if int(engine.predict([example.input])[0]) != gold:
            misclassified += 1
            continue
        for proof in certify_radii(engine, space, gold, 3):
            per_radius_seconds[proof.radius] += proof.seconds
            certified[proof.radius] += proof.status == CERTIFIED
    total = time.perf_counter() - began
    print(f"certify {len(sample)} demo:test examples ({misclassified} misclassified), {args.sources}: {total:.1f} s")
    for r in (1, 2, 3):
        print(f"  r = {r}: certified {certified[r]} ({certified[r] / len(sample):.2f}), "
              f"{per_radius_seconds[r]:.1f} s proving at this radius")


if __name__ == "__main__":
    main()
