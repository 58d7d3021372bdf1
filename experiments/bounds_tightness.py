"""How tight the bounds of robustcount.bounds are, and what branch and bound saves, on the
first demo:test examples the model classifies correctly, over the synonym space
(docs/proofs/bounds.md, measurements).

  python experiments/bounds_tightness.py --model cnn-rt --examples 30 --radius 3 [--enumerate-below 16]
      [--sample-seed S]  (a held-out draw; --radius 0: tightness and cost only)

Prints, per model: how wide the bound of a single point is (the rounding widening alone), the share of level-1 boxes (one position changed, to any of its candidates)
and level-2 boxes (two positions, any candidates each) whose bound certifies them; the cost of a
bound pass per box in forward-pass equivalents (its CPU time over one point's CPU time in 64-point
batches); and, for r = 1..radius where |Omega_r| <= --largest, the simple prover against branch
and bound: identical answers, points the model evaluated, boxes bounded, and both costs in
forward-pass equivalents.
"""

from __future__ import annotations

import argparse
import itertools
import random
import time

from bench_bounds import point_seconds

from robustcount.bounds.boxes import Box
from robustcount.bounds.decide import certifies
from robustcount.bounds.networks import bounds_for
from robustcount.bounds.slots import token_slots
from robustcount.data import label_index, load_demo
from robustcount.goal import MARGIN_TOLERANCE, correct_on_input
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.proofs.branch import prove_with_bounds
from robustcount.proofs.prover import CERTIFIED, prove
from robustcount.spaces.build import build_space

TIGHTNESS_ENUMERATE_BELOW = 16
"""The size up to which a box is enumerated in these measurements (the prover's own default is
the network's `Cost.pass_cost`; counting with bounds enumerates boxes of at most
`count.COUNT_ENUMERATE_BELOW` points)."""

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="cnn-rt")
    parser.add_argument("--examples", type=int, default=30)
    parser.add_argument("--radius", type=int, default=3)
    parser.add_argument("--largest", type=int, default=20_000)
    parser.add_argument("--enumerate-below", type=int, default=TIGHTNESS_ENUMERATE_BELOW)
    parser.add_argument("--sample-seed", type=int, default=None,
                        help="draw the examples in an order shuffled with this seed (default: demo:test's order)")
    args = parser.parse_args()
    classifier = load_model(args.model, device="cpu")
    bounds = bounds_for(classifier)
    levels = {1: [0, 0], 2: [0, 0]}
    widths = []  # the bound's width on single points (one position changed to its first candidate)
    bound_time = bound_boxes = point_time = 0.0
    rows, used = [], 0
    examples = list(load_demo("test"))
    if args.sample_seed is not None:
        random.Random(args.sample_seed).shuffle(examples)
    for example in examples:
        if used == args.examples:
            break
        engine = QueryEngine(classifier)
        gold = label_index(example.label, classifier.labels)
        if not correct_on_input(engine, example.input, gold):
            continue
        used += 1
        space = build_space(example.input, ["synonyms"])
        slots = token_slots(classifier.tokenizer, space)
        point_time += point_seconds(classifier, [space])
        changeable = [p for p, m in enumerate(space.sizes) if m > 0]
        if changeable:
            singles = bounds.differences([Box(((p, (1,)),), (), 0).slots(slots) for p in changeable], gold)
            widths += (singles.hi - singles.lo).amax(dim=1).tolist()
        for level in (1, 2):
            boxes = [Box(tuple((p, tuple(range(1, space.sizes[p] + 1))) for p in chosen), (), 0)
                     for chosen in itertools.combinations(changeable, level)]
            if not boxes:
                continue
            began = time.process_time()
            differences = bounds.differences([box.slots(slots) for box in boxes], gold)
            bound_time += time.process_time() - began
            bound_boxes += len(boxes)
            levels[level][0] += sum(certifies(differences[b], gold, MARGIN_TOLERANCE) for b in range(len(boxes)))
            levels[level][1] += len(boxes)
        for radius in range(1, args.radius + 1):
            if space.count(radius) > args.largest:
                break
            simple = prove(QueryEngine(classifier, cache_size=0), space, gold, radius)
            bound = prove_with_bounds(QueryEngine(classifier, cache_size=0), space, gold, radius,
                                      enumerate_below=args.enumerate_below)
            rows.append((example.id, radius, simple, bound))
            if simple.status != CERTIFIED:
                break
    point_time /= used
    per_box = bound_time / bound_boxes / point_time
    print(f"{args.model}: {used} examples; one point {point_time * 1e3:.3f} ms; a bound pass per box "
          f"{per_box:.1f} forward-pass equivalents (in batches of a level's boxes)")
    print(f"a single point's bound: {min(widths):.3g} to {max(widths):.3g} wide in logit difference")
    for level, (decided, total) in levels.items():
        print(f"level {level}: {decided} of {total} boxes certified by bounds ({decided / max(total, 1):.1%})")
    disagreements = sum(simple.status != bound.status for _, _, simple, bound in rows)
    print(f"answers compared: {len(rows)}, disagreements: {disagreements}")
    for radius in range(1, args.radius + 1):
        done = [(s, b) for _, r, s, b in rows if r == radius and s.status == CERTIFIED]
        if not done:
            continue
        enumerated = sum(s.checked for s, _ in done)
        evaluated = sum(b.checked for _, b in done)
        boxes = sum(b.boxes_bounded for _, b in done)
        bounded_cost = sum(b.bound_seconds for _, b in done) / point_time
        by_bounds = sum(b.certified_by_bounds for _, b in done)
        print(f"r={radius}, {len(done)} certified: simple prover {enumerated} points; branch and bound {evaluated} "
              f"points + {boxes} boxes bounded ({bounded_cost:.0f} forward-pass equivalents), "
              f"{by_bounds / enumerated:.1%} of the points certified by bounds; total cost ratio "
              f"{enumerated / (evaluated + bounded_cost):.2f}x")


if __name__ == "__main__":
    main()
