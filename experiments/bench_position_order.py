"""Does testing sensitive positions first make the prover find adversaries sooner (seed 001's claim)?

For each model, a seeded sample of demo:test sentences, the default space (`synonyms`) and r = 2:
the prover (`prove`) runs once per position order on every correctly classified sentence, and on
the sentences with an adversary within r (the same set for every order: the prover is exhaustive)
the table reports its own counters: the points it checked up to and including the first
adversary (`checked`, batches of one point) and the model queries it made (`candidates` asked of
the engine plus gradient calls, counted as if nothing were cached). Orders: `sensitivity`
(gradient times input for white boxes), `gradient-norm` (the gradient's L1 norm alone, the
previous method: the model asked through a query engine of its own, `GradientNorm`),
`leave-one-out`, `text` and `random`.

A first pass at batch size 64 in text order fills the engine's cache, so that the measured passes
(batch size one, for exact counts) cost little; counts do not depend on the cache.

Run: `.venv/bin/python experiments/bench_position_order.py [--examples 100] [--models ...]`
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from robustcount.data import label_index, load_demo
from robustcount.goal import correct_on_input
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.orders import position_order
from robustcount.proofs.prover import ADVERSARIAL, prove
from robustcount.runs.tables import format_table, markdown_table
from robustcount.spaces.build import DEFAULT_SOURCE, build_space

ORDERS = ("sensitivity", "gradient-norm", "leave-one-out", "text", "random")
RADIUS = 2


class GradientNorm:
    """A torch model whose saliency is the L1 norm of d p_label / d e_t summed over each word's
    tokens (the previous `gradient` sensitivity), so that its `sensitivity` order is the
    gradient-norm order, asked through a query engine like every other model call."""

    def __init__(self, model):
        self.model, self.labels, self.has_gradients = model, model.labels, model.has_gradients

    def predict_proba(self, batch):
        return self.model.predict_proba(batch)

    def word_saliency(self, item, spans, label):
        return self.model.word_saliency(item, spans, label, times_input=False)


def measure(name: str, examples, max_points: int) -> dict:
    model = load_model(name, device="cpu")
    engine, norms = QueryEngine(model), QueryEngine(GradientNorm(model))
    found = {order: [] for order in ORDERS}
    sentences = adversarial = 0
    began = time.perf_counter()
    for example in examples:
        gold = label_index(example.label, engine.labels)
        space = build_space(example.input, [DEFAULT_SOURCE])
        if not space.positions or space.count(RADIUS) > max_points or not correct_on_input(engine, example.input, gold):
            continue
        sentences += 1
        engine.batch_size = 64
        if prove(engine, space, gold, RADIUS, order="text").status != ADVERSARIAL:
            continue
        adversarial += 1
        engine.batch_size = 1
        for order in ORDERS:
            with engine.example() as stats, norms.example() as norm_stats:
                visit = position_order(norms, space, gold, "sensitivity") if order == "gradient-norm" else order
                proof = prove(engine, space, gold, RADIUS, order=visit)
            assert proof.status == ADVERSARIAL
            queries = stats.candidates + stats.gradient_calls + norm_stats.gradient_calls
            found[order].append({"checked": proof.checked, "queries": queries})
    rows = {order: {"mean_checked": statistics.fmean(r["checked"] for r in v),
                    "median_checked": statistics.median(r["checked"] for r in v),
                    "mean_queries": statistics.fmean(r["queries"] for r in v),
                    "median_queries": statistics.median(r["queries"] for r in v)}
            for order, v in found.items() if v}
    return {"model": name, "sentences": sentences, "adversarial": adversarial, "orders": rows, "per_example": found,
            "seconds": round(time.perf_counter() - began)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", nargs="+", default=["minilm-rt-ft", "lstm-rt", "cnn-rt", "bow-rt"])
    parser.add_argument("--max-points", type=int, default=20_000, help="skip sentences with a larger Omega_2")
    parser.add_argument("--out", type=Path, default=Path("docs/attacks/position-order"))
    args = parser.parse_args()
    test = load_demo("test")
    examples = [test[i] for i in sorted(random.Random(args.seed).sample(range(len(test)), args.examples))]
    results = [measure(name, examples, args.max_points) for name in args.models]
    headers = ["model", "sentences", "with an adversary", "order", "mean points", "median points", "mean queries",
               "median queries", "points vs random"]
    rows = []
    for r in results:
        random_mean = r["orders"].get("random", {}).get("mean_checked")
        for order, o in r["orders"].items():
            rows.append([r["model"], r["sentences"], r["adversarial"], order, o["mean_checked"], o["median_checked"],
                         o["mean_queries"], o["median_queries"],
                         o["mean_checked"] / random_mean if random_mean else None])
    print(format_table(headers, rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    command = "python experiments/bench_position_order.py " + " ".join(
        f"--{k.replace('_', '-')} {' '.join(v) if isinstance(v, list) else v}" for k, v in vars(args).items()
        if k != "out")
    args.out.with_suffix(".md").write_text(f"Made by `{command}`.\n\n{markdown_table(headers, rows)}\n",
                                           encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps({"command": command, "results": results}, indent=1) + "\n",
                                             encoding="utf-8")


if __name__ == "__main__":
    main()
