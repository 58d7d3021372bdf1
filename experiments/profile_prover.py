"""Where the prover's time goes on a torch model: its CPU seconds split into the network's forward
on the prover's own batches (the module's forward, timed inside the prover), the gradient passes
of `--order sensitivity` (none under the default order, margins), and everything else
(enumeration, texts, ids, encoding, the engine, the kernel, the prover), per point checked;
beside them the network alone on the same batches, encoded beforehand. The same problems as
`bench_prover.py` (20 demo:test sentences at r = 2, truncate + disemvowel), the fewest CPU seconds
of `--repeats` rounds for each figure. Two more figures say where "everything else" comes from:
the forward inside the prover against the network alone batch by batch (each batch's fewest
seconds over the rounds: is the network itself slower inside the prover?), and everything else
again with the network's answers replayed from a recording (the same answers, with no forward
between the batches; not under `--order sensitivity`).

Run: `.venv/bin/python experiments/profile_prover.py --model cnn-rt`
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
import torch

from robustcount.data import label_index, load_demo
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.orders import MARGINS, ORDERS
from robustcount.proofs.prover import prove
from robustcount.spaces.build import build_space

SOURCES = ["truncate", "disemvowel"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="cnn-rt")
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--radius", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--order", default=MARGINS, choices=ORDERS)
    args = parser.parse_args()
    model = load_model(args.model, device="cpu")
    chosen = random.Random(args.seed).sample(load_demo("test"), args.examples)
    problems = [(build_space(e.input, SOURCES), label_index(e.label, model.labels)) for e in chosen]
    engine = QueryEngine(model)
    seconds = {"module": 0.0, "gradients": 0.0}
    batches: list[dict] = []
    forward, saliency = model.module.forward, model.word_saliency

    per_batch: list[float] = []  # this round's forward seconds, batch by batch
    outputs: list[torch.Tensor] = []  # the recording's outputs, replayed by `replay`

    def timed_forward(**inputs):
        began = time.process_time()
        try:
            return forward(**inputs)
        finally:
            per_batch.append(time.process_time() - began)
            seconds["module"] += per_batch[-1]
            batches.append(inputs)

    def replay(**inputs):
        per_batch.append(0.0)  # counts the batches replayed
        return outputs[len(per_batch) - 1]

    def timed_saliency(*arguments):
        began, module = time.process_time(), seconds["module"]
        try:
            return saliency(*arguments)
        finally:  # its forward counts as the gradient pass's, not as the network's on a batch
            seconds["gradients"] += time.process_time() - began
            seconds["module"] = module
            batches.pop()

    def prover() -> int:
        engine.clear_cache()
        return sum(prove(engine, space, gold, args.radius, order=args.order).checked for space, gold in problems)

    model.module.forward, model.word_saliency = timed_forward, timed_saliency
    prover()
    batches.clear()
    checked = prover()
    recorded = list(batches)
    replayable = args.order != "sensitivity"
    if replayable:
        with torch.inference_mode():
            outputs.extend(forward(**inputs) for inputs in recorded)

    def network() -> None:  # as bench_prover.py's: the module and softmax on the encoded batches
        model.module.forward = timed_forward
        with torch.inference_mode():
            for inputs in recorded:
                torch.softmax(model.module(**inputs).float(), dim=-1).cpu().numpy()
                batches.pop()

    def replayed() -> None:  # the prover on the recording's answers: no forward between its batches
        model.module.forward = replay
        prover()
        model.module.forward = timed_forward

    least: dict[str, float] = {}
    inside, alone_batches = [], []
    for _ in range(args.repeats):
        seconds.update(module=0.0, gradients=0.0)
        per_batch.clear()
        began = time.process_time()
        prover()
        total = time.process_time() - began
        spent = dict(seconds)  # the prover's; the network alone's forwards are timed too
        inside.append(list(per_batch))
        per_batch.clear()
        began = time.process_time()
        network()
        alone = time.process_time() - began
        alone_batches.append(list(per_batch))
        per_batch.clear()
        began = time.process_time()
        if replayable:
            replayed()
        without = time.process_time() - began
        for name, value in (("prover", total), ("network alone", alone), *spent.items(), ("replayed", without)):
            least[name] = min(least.get(name, float("inf")), value)
    replayed_seconds = least.pop("replayed")
    rest = least["prover"] - least["module"] - least["gradients"]
    print(f"{args.model}: {checked} points in {len(recorded)} batches, CPU seconds (fewest of {args.repeats} rounds)")
    for name, value in (*least.items(), ("everything else", rest)):
        print(f"  {name:16s} {value:7.3f} s = {1e6 * value / checked:6.1f} us a point")
    print(f"ratio prover/network alone: {least['network alone'] / least['prover']:.2f}; with the gradient passes "
          f"counted as network time: {(least['network alone'] + least['gradients']) / least['prover']:.2f}")
    if replayable:
        fewest_inside, fewest_alone = np.min(inside, axis=0), np.min(alone_batches, axis=0)
        print(f"the forward inside the prover / alone, batch by batch (each batch's fewest seconds): "
              f"{fewest_inside.sum() / fewest_alone.sum():.3f} in all, median of the batches "
              f"{float(np.median(fewest_inside / fewest_alone)):.3f}")
        print(f"everything else with the network's answers replayed (no forward between batches): "
              f"{1e6 * replayed_seconds / checked:.1f} us a point")


if __name__ == "__main__":
    main()
