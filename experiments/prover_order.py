"""The prover's position orders side by side: the margins of the points of one change (the default,
no gradients) against gradient sensitivities, on the same examples, each on a fresh engine.

`certify_radii` (r = 1, 2, ... up to `--radius`, stopping at the first radius not certified) on a
seeded sample of `--examples` demo:test sentences (seed `--seed`, drawn apart from
`bench_prover.py`'s seed 0) in a Zéroe space (truncate + disemvowel), on `--model`. Printed: whether
every proof's status is the same under both orders (it must be: only the witness may differ), and
on the examples that end adversarial, the model calls and gradient passes until the adversary
(the points evaluated before it, the cache sparing repeats across radii), mean and median, with
the CPU seconds of the whole sample.

Run: `.venv/bin/python experiments/prover_order.py --model cnn-rt`
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from robustcount.data import label_index, load_demo
from robustcount.goal import correct_on_input
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.orders import MARGINS
from robustcount.proofs.prover import ADVERSARIAL, certify_radii
from robustcount.spaces.build import build_space

SOURCES = ["truncate", "disemvowel"]
COMPARED = (MARGINS, "sensitivity")
"""The orders side by side: the default and the gradient order it replaced."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="cnn-rt")
    parser.add_argument("--examples", type=int, default=60)
    parser.add_argument("--radius", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    model = load_model(args.model, device="cpu")
    chosen = random.Random(args.seed).sample(load_demo("test"), args.examples)
    problems = [(build_space(e.input, SOURCES), label_index(e.label, model.labels)) for e in chosen]
    problems = [(space, gold) for space, gold in problems if correct_on_input(QueryEngine(model), space.item, gold)]
    calls = {order: [] for order in COMPARED}
    statuses = {order: [] for order in COMPARED}
    seconds = dict.fromkeys(COMPARED, 0.0)
    for space, gold in problems:
        for order in COMPARED:
            engine = QueryEngine(model)
            began = time.process_time()
            with engine.example() as stats:
                proofs = certify_radii(engine, space, gold, args.radius, order=order)
            seconds[order] += time.process_time() - began
            statuses[order].append([p.status for p in proofs])
            if proofs and proofs[-1].status == ADVERSARIAL:
                calls[order].append((stats.model_calls, stats.gradient_calls))
    same = sum(a == b for a, b in zip(*statuses.values()))
    print(f"{args.model}: {len(problems)} of {args.examples} demo:test sentences (seed {args.seed}) kept gold; "
          f"r <= {args.radius}, {SOURCES}")
    print(f"  the same status at every radius under both orders: {same} of {len(problems)}")
    for order in COMPARED:
        found = calls[order]
        model_calls = [c for c, _ in found]
        print(f"  {order:12s} {len(found)} adversarial; until the adversary: model calls mean "
              f"{statistics.mean(model_calls):.1f}, median {statistics.median(model_calls):.0f}; gradient passes "
              f"{sum(g for _, g in found)}; whole sample {seconds[order]:.2f} CPU s")


if __name__ == "__main__":
    main()
