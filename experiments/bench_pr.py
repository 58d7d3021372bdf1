"""Samples (model queries) the adaptive PR estimator needs, against Hoeffding's N.

1. Synthetic models of known PR (0.5, 0.9, 0.95, 0.99, 1.0): a space of 12 positions with 20
   substitutes each at r = 4 (|Omega_4| = 8.0e9, so samples practically never repeat) and a model
   adversarial on a hash-chosen share of its points. For each point estimate of the adaptive
   method (`mean`, the default, and `midpoint`): median and largest samples over `--seeds` runs at
   eps = 0.025, delta = 0.005 (the paper's), against Hoeffding's N = 4,794, the median PR_hat, and
   the runs whose PR_hat lay more than eps from the true PR.
2. The default model on a seeded sample of demo:test: the PR paper's radius (25% of the words),
   truncate + disemvowel + keyboard space, adaptive estimator (mean): median PR_hat, median
   samples and model calls (the engine's count; repeated points cost nothing).
3. PR by distance on a long text: demo:test's positive sentences (shuffled with seed 0) joined
   until they pass `--words` words (500), the default space, the PR paper's radius (25% of the
   words), `--long-model` (bow-rt). In one process, each with a fresh engine: the CPU seconds of
   the estimate alone, then of the estimate with `pr_by_distance` at `--distance-samples` points
   in all (estimate's option), and with 100 points at every distance (the per-distance budget of
   `--shell-samples` before 0.1.0); each as a ratio to the estimate alone.

Run: `.venv/bin/python experiments/bench_pr.py --seeds 20 --examples 30` (`--long-only`: part 3)
"""

from __future__ import annotations

import argparse
import hashlib
import random
import time
from statistics import median

from robustcount.counting.pr import EstimateSettings, default_radius, estimate_pr, hoeffding_n, pr_by_distance
from robustcount.data import label_index, load_demo
from robustcount.goal import correct_on_input, keeps_label
from robustcount.models.engine import QueryEngine
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.zoo import load_model
from robustcount.spaces.build import build_space
from robustcount.spaces.space import Position, Space

EPS, DELTA = 0.025, 0.005


def synthetic(pr: float):
    space = Space(" ".join(f"w{i}" for i in range(12)),
                  tuple(Position("word", i, (f"w{i}", *(f"w{i}s{j}" for j in range(20)))) for i in range(12)))
    cut = round((1 - pr) * 1_000_000)

    def classify(batch):
        return [0 if int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) % 1_000_000 < cut else 1 for t in batch]

    return space, FunctionClassifier(classify, ["negative", "positive"], output="label")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--words", type=int, default=500)
    parser.add_argument("--long-model", default="bow-rt")
    parser.add_argument("--distance-samples", type=int, default=100)
    parser.add_argument("--long-only", action="store_true", help="part 3 only")
    args = parser.parse_args()
    if not args.long_only:
        synthetic_table(args)
        default_model(args)
    long_text(args)


def synthetic_table(args) -> None:
    n = hoeffding_n(EPS, DELTA)
    print(f"eps {EPS}, delta {DELTA}: Hoeffding N = {n}")
    print("point     true PR  median samples  Hoeffding N / samples  max samples  median PR_hat  off by > eps")
    for point in ("mean", "midpoint"):
        for pr in (0.5, 0.9, 0.95, 0.99, 1.0):
            space, model = synthetic(pr)
            runs = [estimate_pr(QueryEngine(model), space, 1, 4, EstimateSettings(eps=EPS, delta=DELTA, seed=s, point=point))
                    for s in range(args.seeds)]
            samples = [r.samples for r in runs]
            off = sum(abs(r.pr - pr) > EPS for r in runs)
            print(f"{point:8}  {pr:7.2f}  {median(samples):14.0f}  {n / median(samples):21.1f}  "
                  f"{max(samples):11d}  {median(r.pr for r in runs):13.4f}  {off:12d}")


def default_model(args) -> None:
    n = hoeffding_n(EPS, DELTA)
    model = load_model("minilm-rt", device="cpu")
    engine = QueryEngine(model)
    sample = random.Random(0).sample(load_demo("test"), args.examples)
    estimates, calls = [], []
    for example in sample:
        gold = label_index(example.label, model.labels)
        if not keeps_label(engine.predict_proba([example.input]), gold)[0]:
            continue
        space = build_space(example.input, ["truncate", "disemvowel", "keyboard"])
        radius = default_radius(space)
        with engine.example() as stats:
            estimates.append(estimate_pr(engine, space, gold, radius, EstimateSettings(eps=EPS, delta=DELTA, seed=0)))
        calls.append(stats.model_calls)
    print(f"default model, {len(estimates)} correctly classified of {args.examples} demo:test examples:")
    print(f"  median PR_hat {median(e.pr for e in estimates):.3f}, share PR_hat > 0.9 "
          f"{sum(e.pr > 0.9 for e in estimates) / len(estimates):.2f}")
    print(f"  median samples {median(e.samples for e in estimates):.0f} (Hoeffding N {n}), "
          f"median model calls {median(calls):.0f}, mean {sum(calls) / len(calls):.0f}")


def long_text(args) -> None:
    """Part 3 of the module docstring."""
    positives = [e.input for e in load_demo("test") if e.label == "positive"]
    random.Random(0).shuffle(positives)
    parts, words = [], 0
    while words < args.words:
        parts.append(positives[len(parts)])
        words += len(parts[-1].split())
    text = " ".join(parts)
    space = build_space(text, ["synonyms"])
    radius = default_radius(space)
    model = load_model(args.long_model, device="cpu")
    gold = label_index("positive", model.labels)
    if not correct_on_input(QueryEngine(model), text, gold):
        raise SystemExit(f"{args.long_model} misclassifies the long text")
    print(f"{args.long_model}, a text of {len(space.tokens.words)} words, r = {radius} "
          f"({space.max_radius()} positions with candidates):")
    per_distance = 100 * min(radius, space.max_radius())
    baseline = None
    for name, samples in (("estimate alone", 0), (f"--distance-samples {args.distance_samples}", args.distance_samples),
                          ("100 at every distance (before)", per_distance)):
        engine = QueryEngine(model)
        began = time.process_time()
        estimate = estimate_pr(engine, space, gold, radius, EstimateSettings(eps=EPS, delta=DELTA, seed=0))
        shells = pr_by_distance(engine, space, gold, radius, samples, delta=DELTA, seed=0) if samples else []
        seconds = time.process_time() - began
        baseline = baseline or seconds
        print(f"  {name:32} {seconds:6.2f} CPU s = {seconds / baseline:5.2f}x  ({engine.total.model_calls} model calls, "
              f"{estimate.samples} estimate samples, {len(shells)} distances)")


if __name__ == "__main__":
    main()
