"""Old against new contextual scores: the language model's log-likelihood changes and the encoder's
similarities of every candidate of every word of seeded demo:test texts, wide pool, no filter,
written by one checkout and compared with another's (a change that moves the scores must stay
well inside spaces/context.py TOLERANCES and say so in substitution.py's SCORING):

    git archive OLD | tar -x -C /tmp/old
    OMP_NUM_THREADS=1 PYTHONPATH=/tmp/old .venv/bin/python experiments/contextual_scores_check.py --dump old.json
    OMP_NUM_THREADS=1 PYTHONPATH=$PWD .venv/bin/python experiments/contextual_scores_check.py --dump new.json
    .venv/bin/python experiments/contextual_scores_check.py --compare old.json new.json
"""

from __future__ import annotations

import argparse
import json
import random

import numpy as np

LM_MIN, LM_WINDOW, SIMILARITY_MIN, SIMILARITY_WINDOW = -4.0, 4, 0.85, 15
TOLERANCES = {"lm": 1e-3, "similarity": 1e-4}  # spaces/context.py's, fixed here to compare versions alike
WIDE = ("synonyms", "counter-fitted", "wordnet")


def dump(path: str, seed: int, count: int) -> None:
    from robustcount.data import load_data
    from robustcount.models.context_models import ContextModels
    from robustcount.spaces.build import SpaceBuilder
    from robustcount.text import tokenize

    examples = [e.input for e in load_data("demo:test")]
    random.Random(seed).shuffle(examples)
    models, builder, scores = ContextModels(), SpaceBuilder(WIDE), {}
    for number, text in enumerate(examples[:count]):
        tokens = tokenize(text)
        for position in builder(text).positions:
            if position.kind == "word" and len(position.candidates) > 1:
                chosen = list(position.candidates[1:])
                lm = models.log_likelihood_changes(tokens, position.index, chosen, LM_WINDOW)
                similarity = models.similarities(tokens, position.index, chosen, SIMILARITY_WINDOW)
                scores[f"{number}:{position.index}"] = {"candidates": chosen, "lm": lm.tolist(),
                                                        "similarity": similarity.tolist()}
    with open(path, "w") as out:
        json.dump({"seed": seed, "texts": count, "scores": scores}, out)


def compare(old_path: str, new_path: str) -> None:
    with open(old_path) as old_file, open(new_path) as new_file:
        old, new = json.load(old_file), json.load(new_file)
    if old["scores"].keys() != new["scores"].keys():
        raise SystemExit("the two files score different positions")
    print(f"{len(old['scores'])} positions of {old['texts']} demo:test texts (seed {old['seed']}), "
          f"{sum(len(v['candidates']) for v in old['scores'].values())} candidates")
    for name, threshold in (("lm", LM_MIN), ("similarity", SIMILARITY_MIN)):
        a = np.concatenate([old["scores"][key][name] for key in old["scores"]])
        b = np.concatenate([new["scores"][key][name] for key in old["scores"]])
        flipped = int(((a >= threshold) != (b >= threshold)).sum())
        band = int((np.abs(a - threshold) <= TOLERANCES[name]).sum())
        print(f"{name}: largest difference {np.abs(a - b).max():.3g} (tolerance {TOLERANCES[name]}), decisions at "
              f"{threshold} that differ {flipped}, old scores within the tolerance of it {band}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", metavar="OUT")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--texts", type=int, default=12)
    args = parser.parse_args()
    if args.dump:
        dump(args.dump, args.seed, args.texts)
    if args.compare:
        compare(*args.compare)


if __name__ == "__main__":
    main()
