"""What branch and bound costs against enumeration at one radius, on demo:test examples drawn with
a seed, synonym space unless --source says otherwise (docs/proofs/bounds.md, "Branch and bound"):

  python experiments/bench_bounds.py --model cnn-rt --radius 3 --examples 30 --seed 1 --enumerate-below 4 8 16
  python experiments/bench_bounds.py --model cnn-rt --radius 3 --examples 30 --seed 2 --verify
  python experiments/bench_bounds.py --model cnn-rt --radius 4 --source counter-fitted --examples 3 --seed 3 --count-above 1000000

Per example the model classifies correctly, with fresh engines: the simple prover (`prove`) and
branch and bound (`prove_with_bounds`) at each --enumerate-below; answers compared. Model
evaluations are the points the model evaluated plus 3 per gradient call (the position order's
forward and backward pass); a bound pass is counted at its cost in forward-pass equivalents (its
CPU time over one point's model CPU time in 64-point batches, measured here; process time, which
the shared machine's load inflates far less than wall time). First the ceiling (`ceiling`: what
bounds could save if every ball certified whole in one pass). Printed per setting, on the
examples enumeration certifies: both totals and their ratio, the share of points bounds decided,
the balls certified whole by their first bound pass; with --verify, `verify`'s CPU time on each
bound certificate against the proof's. With --count-above N, instead: exact counts with bounds
(`counting.bound_count`) of the first examples whose |Omega_r| exceeds N, with the share the bounds
decided, the evaluations and the time.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import time

from robustcount.bounds.boxes import Box
from robustcount.bounds.decide import certifies
from robustcount.bounds.networks import bounds_for
from robustcount.bounds.slots import token_slots
from robustcount.counting.bound_count import count_with_bounds
from robustcount.data import label_index, load_demo
from robustcount.errors import LimitReached
from robustcount.goal import MARGIN_TOLERANCE, correct_on_input
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.proofs.branch import prove_with_bounds
from robustcount.proofs.certificate import make_certificate, verify_certificate
from robustcount.proofs.prover import CERTIFIED, prove
from robustcount.spaces.build import build_space

GRADIENT_COST = 3
"""Forward-pass equivalents of one gradient call (a forward and a backward pass)."""


def point_seconds(classifier, spaces) -> float:
    """One point's model time in 64-point batches, the median over a few spaces."""
    times = []
    for space in spaces[:5]:
        texts = [space.apply(p) for p in itertools.islice(space.points(space.max_radius()), 64)]
        texts += texts[:1] * (64 - len(texts))
        classifier.predict_proba(texts)
        began = time.process_time()
        for _ in range(3):
            classifier.predict_proba(texts)
        times.append((time.process_time() - began) / 3 / 64)
    return statistics.median(times)


def evaluations(engine: QueryEngine) -> int:
    return engine.total.model_calls + GRADIENT_COST * engine.total.gradient_calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="cnn-rt")
    parser.add_argument("--radius", type=int, default=3)
    parser.add_argument("--examples", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--largest", type=int, default=50_000, help="skip spaces with more points")
    parser.add_argument("--enumerate-below", type=int, nargs="+", default=[None])
    parser.add_argument("--verify", action="store_true")
    parser.add_argument("--count-above", type=int, default=None)
    parser.add_argument("--source", action="append", help="candidate source, repeatable (default: synonyms)")
    args = parser.parse_args()
    args.source = args.source or ["synonyms"]
    classifier = load_model(args.model, device="cpu")
    examples = load_demo("test")
    random.Random(args.seed).shuffle(examples)
    if args.count_above is not None:
        count_large(classifier, examples, args)
        return
    chosen = []
    for example in examples:
        if len(chosen) == args.examples:
            break
        gold = label_index(example.label, classifier.labels)
        space = build_space(example.input, args.source)
        if 0 < space.count(args.radius) <= args.largest and correct_on_input(QueryEngine(classifier), example.input,
                                                                             gold):
            chosen.append((example, gold, space))
    unit = point_seconds(classifier, [space for _, _, space in chosen])
    print(f"{args.model}, r = {args.radius}, {len(chosen)} examples (seed {args.seed}); a forward pass is "
          f"{unit * 1e3:.2f} ms per point; median |Omega_r| "
          f"{statistics.median(space.count(args.radius) for _, _, space in chosen):.0f}")
    simple = []
    for example, gold, space in chosen:
        engine = QueryEngine(classifier)
        simple.append((prove(engine, space, gold, args.radius), evaluations(engine)))
    ceiling(classifier, chosen, simple, args.radius, unit)
    for setting in args.enumerate_below:
        rows, disagreements, whole, verify_seconds, proof_seconds = [], 0, 0, 0.0, 0.0
        for (example, gold, space), (proved, enumerated) in zip(chosen, simple):
            engine = QueryEngine(classifier)
            began = time.process_time()
            bound = prove_with_bounds(engine, space, gold, args.radius, enumerate_below=setting)
            proved_in = time.process_time() - began
            disagreements += bound.status != proved.status
            if proved.status != CERTIFIED:
                continue
            whole += bound.certified_by_bounds == bound.total and bound.boxes == [["bound", bound.boxes[0][1]]]
            rows.append((enumerated, evaluations(engine), bound.bound_seconds / unit, bound.certified_by_bounds,
                         bound.total, bound.boxes_bounded))
            if args.verify and bound.status == CERTIFIED:
                certificate = make_certificate(example.id, space, gold, classifier.labels, bound, args.model,
                                               engine.digest(), engine.batching())
                began = time.process_time()
                verdict = verify_certificate(certificate, QueryEngine(classifier))
                verify_seconds += time.process_time() - began
                proof_seconds += proved_in
                assert verdict.holds, verdict.reason
        enumeration = sum(r[0] for r in rows)
        points, bound_cost = sum(r[1] for r in rows), sum(r[2] for r in rows)
        decided, total, boxes = sum(r[3] for r in rows), sum(r[4] for r in rows), sum(r[5] for r in rows)
        print(f"enumerate below {setting or 'default'}: {len(rows)} certified by enumeration, {disagreements} "
              f"disagreements; enumeration {enumeration} evaluations; branch and bound {points} evaluations + "
              f"{boxes} boxes bounded costing {bound_cost:.0f} ({bound_cost / max(boxes, 1):.1f} per box) = "
              f"{points + bound_cost:.0f}; ratio {enumeration / (points + bound_cost):.2f}x; bounds decided "
              f"{decided} of {total} points ({decided / max(total, 1):.1%}); {whole} balls certified whole")
        if args.verify:
            print(f"  verify: {verify_seconds:.2f} CPU s on the bound certificates, the proofs {proof_seconds:.2f} CPU s")


def ceiling(classifier, chosen, simple, radius: int, unit: float) -> None:
    """The oracle: what bounds could save on the examples enumeration certifies. Per example, a
    ball's one bound pass on a fresh bound engine (its per-input preparation included), in
    forward-pass equivalents, and whether it certifies the ball whole. Printed: the ratio if every
    ball certified whole in that one pass (examples whose |Omega_r| is below its cost enumerated:
    sum |Omega_r| / sum min(|Omega_r|, pass)), the same at a pass of 5 and of 1, the largest pass
    cost at which it would reach 10x, the ratio the balls certified whole today give alone (the rest
    enumerated), and how many of the largest balls would have to certify whole in one pass for 10x."""
    rows = []
    for (_, gold, space), (proved, enumerated) in zip(chosen, simple):
        if proved.status != CERTIFIED:
            continue
        bounds = bounds_for(classifier)
        began = time.process_time()
        differences = bounds.differences([Box.ball(space, radius).slots(token_slots(classifier.tokenizer, space))],
                                         gold)
        cost = (time.process_time() - began) / unit
        rows.append((enumerated, cost, certifies(differences[0], gold, MARGIN_TOLERANCE)))
    if not rows:
        return
    total = sum(r[0] for r in rows)
    mean_cost = statistics.mean(r[1] for r in rows)
    def ratio(costs):
        return total / sum(min(n, c) for (n, _, _), c in zip(rows, costs))
    today = ratio([r[1] if r[2] else math.inf for r in rows])
    needed, spent = None, float(total)
    for k, (n, c, _) in enumerate(sorted(rows, reverse=True), start=1):
        spent += min(n, c) - n
        if total / spent >= 10:
            needed = k
            break
    largest_pass = max((c for c in range(1, max(r[0] for r in rows) + 1) if ratio([c] * len(rows)) >= 10), default=0)
    print(f"ceiling on {len(rows)} certified examples ({total} evaluations by enumeration): a ball's lone pass "
          f"{mean_cost:.1f} forward-pass equivalents on average; every ball certified whole in it: "
          f"{ratio([r[1] for r in rows]):.1f}x (at a pass of 5: {ratio([5] * len(rows)):.1f}x, of 1: "
          f"{ratio([1] * len(rows)):.1f}x; 10x needs a pass of at most {largest_pass}); {sum(r[2] for r in rows)} balls "
          f"certify whole today: {today:.2f}x with the rest enumerated; "
          + (f"10x needs the {needed} largest balls certified whole" if needed else
             "not even every ball certified whole in its pass reaches 10x"))


def count_large(classifier, examples, args) -> None:
    """Exact PR with bounds on the first `args.examples` examples with |Omega_r| above `args.count_above`."""
    done = 0
    for example in examples:
        space = build_space(example.input, args.source)
        gold = label_index(example.label, classifier.labels)
        if done == args.examples or space.count(args.radius) <= args.count_above:
            continue
        engine = QueryEngine(classifier)
        began = time.process_time()
        try:
            counted = count_with_bounds(engine, space, gold, args.radius, max_points=1_000_000)
        except LimitReached as limit:
            print(f"{example.id}: |Omega_{args.radius}| = {space.count(args.radius)}: undecided ({limit})")
            done += 1
            continue
        print(f"{example.id}: |Omega_{args.radius}| = {counted.size}, PR = {counted.robust / counted.size:.6f} "
              f"exactly; bounds decided {counted.by_bounds / counted.size:.4%} ({counted.robust_by_bounds} robust, "
              f"{counted.adversarial_by_bounds} adversarial) in {counted.boxes_bounded} boxes; {evaluations(engine)} "
              f"evaluations; {time.process_time() - began:.1f} CPU s")
        done += 1


if __name__ == "__main__":
    main()
