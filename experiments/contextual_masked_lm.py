"""Could the packaged masked LM (`minilm-mlm`) judge substitutions in context in place of SmolLM2,
for speed? For every substitute `experiments/contextual_filters.py` scored (its `scores.csv`),
the masked LM's change log p(candidate's first word piece) - log p(original's first word piece)
at the masked word (one `fill_masks` query a position, both sides as context), against SmolLM2's
windowed log-likelihood change: Spearman correlation, and how many of the substitutes each keeps
at the same keep rate agree. Prints the figures and the masked LM's CPU seconds a position:

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD .venv/bin/python experiments/contextual_masked_lm.py --sample 12 --seed 0
"""

from __future__ import annotations

import argparse
import csv
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from robustcount.data import DataSpec
from robustcount.models.base import MaskQuery
from robustcount.models.masked_lm import masked_lm_engine
from robustcount.text import tokenize

SCORES = Path(__file__).parent / "contextual_filters_out" / "scores.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    texts = {e.id: e.input for e in DataSpec("demo:test", sample=args.sample).load(args.seed)}
    rows = list(csv.DictReader(open(SCORES)))
    by_position = defaultdict(list)
    for row in rows:
        by_position[(row["text_id"], int(row["position"]))].append(row)
    engine = masked_lm_engine()
    model = engine.model
    index = {piece: k for k, piece in enumerate(model.pieces)}
    engine.fill_masks([MaskQuery("warm up", 0, 4, True)])
    began, masked, causal = time.process_time(), [], []
    for (text_id, position), found in by_position.items():
        tokens = tokenize(texts[text_id])
        start, end = tokens.spans()[position]
        probs = engine.fill_masks([MaskQuery(texts[text_id], start, end, True)])[0][: len(model.pieces)]
        first = lambda word: index.get(model.word_pieces(word.lower())[0], 0)  # noqa: E731
        base = np.log(max(probs[first(tokens.words[position])], 1e-300))
        for row in found:
            masked.append(float(np.log(max(probs[first(row["candidate"])], 1e-300)) - base))
            causal.append(float(row["lm"]))
    seconds = (time.process_time() - began) / len(by_position)
    masked, causal = np.array(masked), np.array(causal)
    print(f"{len(causal)} substitutes at {len(by_position)} positions; masked LM {seconds * 1000:.0f} ms CPU a position")
    print(f"Spearman(masked LM change, SmolLM2 windowed change) = {spearmanr(masked, causal).statistic:.3f}")
    for threshold in (-2.0, -4.0, -6.0):
        kept = causal >= threshold
        top = np.zeros_like(kept)
        top[np.argsort(-masked)[: kept.sum()]] = True
        print(f"SmolLM2 >= {threshold:g} keeps {kept.sum()}; the masked LM's top {kept.sum()} share "
              f"{(kept & top).sum()} of them ({(kept & top).sum() / max(kept.sum(), 1):.0%})")


if __name__ == "__main__":
    main()
