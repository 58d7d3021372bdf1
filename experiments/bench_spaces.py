"""Speed of building and sampling perturbation spaces.

1. Build the union space of the ten Zéroe perturbers plus WordNet synonyms for the first
   `--sentences` demo:test sentences, twice: the first pass includes loading every resource
   (CMUdict, the G2P model, WordNet, the misspelling and look-alike tables), the second shows
   the per-sentence cost once they are loaded (resources load once per process).
2. Draw `--samples` exactly uniform points from Omega_r of one long sentence (r = 25% of its
   words, the PR paper's setting) and compare with the naive non-uniform sampler "random
   positions, then random candidates" on the same space, as a ratio.

Run: `.venv/bin/python experiments/bench_spaces.py --sentences 1000 --samples 10000`
"""

from __future__ import annotations

import argparse
import random
import time

from robustcount.data import load_demo
from robustcount.spaces.build import build_space


def naive_sample(space, radius: int, n: int, seed: int):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randint(0, radius)
        chosen = sorted(rng.sample(range(len(space.positions)), k))
        out.append(tuple((p, rng.randint(1, space.sizes[p])) for p in chosen))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=10_000)
    args = parser.parse_args()
    texts = [e.input for e in load_demo("test")[: args.sentences]]
    sources = ["zeroe", "wordnet"]
    for label in ("first pass (loads resources)", "second pass"):
        began = time.perf_counter()
        spaces = [build_space(t, sources, seed=0) for t in texts]
        elapsed = time.perf_counter() - began
        print(f"build {len(texts)} union spaces, {label}: {elapsed:6.1f} s ({1000 * elapsed / len(texts):.1f} ms/sentence)")
    longest = max(spaces, key=lambda s: len(s.positions))
    radius = max(1, round(0.25 * len(longest.tokens.words)))
    print(f"sampling space: {len(longest.tokens.words)} words, {len(longest.positions)} positions, "
          f"r = {radius}, |Omega_r| = {longest.count(radius):.3e}")
    began = time.perf_counter()
    longest.sample(radius, args.samples, seed=0)
    uniform = time.perf_counter() - began
    began = time.perf_counter()
    naive_sample(longest, radius, args.samples, seed=0)
    naive = time.perf_counter() - began
    print(f"{args.samples} uniform samples: {uniform:.2f} s; naive (non-uniform) sampler: {naive:.2f} s; "
          f"ratio uniform/naive: {uniform / naive:.1f}")


if __name__ == "__main__":
    main()
