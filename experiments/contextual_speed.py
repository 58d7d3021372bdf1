"""CPU time to build a contextual space once the models are loaded (issue 42's target: a 20-word
text under 1 s, a 400-word text under 20 s), for the wide pool (synonyms + counter-fitted +
wordnet) under names, expressions, --context-lm-min and --context-similarity-min, and the same
with the narrow default pool (synonyms). Texts: the first seeded demo:test text of about 20
words, and seeded demo:test texts joined until they hold at least `--long` words. Prints CPU
seconds (process time: every thread), of which the language model's and the encoder's forward
batches (their engines' clocks read process time here), positions scored and model calls. A
first text warms up the word sources (WordNet, inflections), as the models are loaded before.
`--forwards` prints instead the LM's CPU seconds for one forward pass of 8, 64 and 512 tokens:

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD .venv/bin/python experiments/contextual_speed.py --seed 0
"""

from __future__ import annotations

import argparse
import random
import time

import torch

from robustcount.data import load_data
from robustcount.models.context_models import ContextModels
from robustcount.models.engine import QueryEngine
from robustcount.models.llm.substitution import substitution_lm
from robustcount.models.minilm import MiniLMSentenceEncoder
from robustcount.spaces.build import Filters, SpaceBuilder
from robustcount.text import tokenize

FILTERS = Filters(keep_names=True, keep_expressions=True, context_lm_min=-4, context_similarity_min=0.85)
POOLS = {"wide": ("synonyms", "counter-fitted", "wordnet"), "synonyms": ("synonyms",)}


def texts(seed: int, long: int) -> dict[str, str]:
    examples = [e.input for e in load_data("demo:test")]
    random.Random(seed).shuffle(examples)
    short = next(t for t in examples if 18 <= len(tokenize(t).words) <= 22)
    joined = []
    while len(tokenize(" ".join(joined)).words) < long:
        joined.append(examples[len(joined)])
    return {"short": short, "long": " ".join(joined)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--long", type=int, default=400)
    parser.add_argument("--pools", nargs="+", default=list(POOLS))
    parser.add_argument("--forwards", action="store_true")
    args = parser.parse_args()
    if args.forwards:
        return forward_costs()
    models = cpu_clocked(ContextModels())
    models.lm.digest(), models.encoder.embed(["warm up"])
    SpaceBuilder(POOLS["wide"], FILTERS, context=models).build("A warm up, of every word source.")
    for pool in args.pools:
        builder = SpaceBuilder(POOLS[pool], FILTERS, context=models)
        for name, text in texts(args.seed, args.long).items():
            lm, encoder = models.lm.total.as_dict(), models.encoder.total.as_dict()
            began = time.process_time()
            built = builder.build(text)
            seconds = time.process_time() - began
            lm_seconds = models.lm.total.model_seconds - lm["model_seconds"]
            encoder_seconds = models.encoder.total.model_seconds - encoder["model_seconds"]
            print(f"{pool} pool, {name} text ({len(tokenize(text).words)} words): {seconds:.2f} CPU s (LM "
                  f"{lm_seconds:.2f}, encoder {encoder_seconds:.2f}, the rest {seconds - lm_seconds - encoder_seconds:.2f}), "
                  f"{len(built.space.positions)} positions kept, LM calls (positions scored) "
                  f"{models.lm.total.model_calls - lm['model_calls']}, encoder calls "
                  f"{models.encoder.total.model_calls - encoder['model_calls']}, removed {dict(built.removed)}", flush=True)


@torch.no_grad()
def forward_costs() -> None:
    """CPU seconds of SmolLM2's layers and output layer on one pass of n tokens (the best of 3)."""
    lm = substitution_lm().lm
    for n in (8, 64, 512):
        tokens = torch.arange(1000, 1000 + n)[None]
        layers, head = [], []
        for _ in range(3):
            began = time.process_time()
            hidden = lm.model(input_ids=tokens).last_hidden_state
            middle = time.process_time()
            lm.lm_head(hidden)
            layers.append(middle - began)
            head.append(time.process_time() - middle)
        print(f"one pass of {n} tokens: layers {min(layers):.3f} CPU s ({1000 * min(layers) / n:.1f} ms a token), "
              f"output layer {min(head):.3f} CPU s ({1000 * min(head) / n:.2f} ms a token)", flush=True)


def cpu_clocked(models: ContextModels) -> ContextModels:
    """`models` with engines like its own (`context_models.py`) whose clocks read process time."""
    models.lm = QueryEngine(substitution_lm(), batch_size=1, cache_size=50_000, clock=time.process_time)
    models.encoder = QueryEngine(MiniLMSentenceEncoder(), cache_size=0, clock=time.process_time)
    return models


if __name__ == "__main__":
    main()
