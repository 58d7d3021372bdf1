"""Coverage of the wide pool (synonyms + counter-fitted + wordnet) under the contextual filters
(issue 42), each alone and combined at three settings, on a seeded sample of demo:test.

Every substitute of the wide pool (no other filter) is scored once, as the builder scores it
(`models.context_models.ContextModels`: the LM's log-likelihood change over the word and 4 LM
tokens after it; the encoder's cosine of the 15 words around it); part of speech in context
(`same_pos`), names and expressions are decided as the builder decides them. Each setting's
space is then the pool's lists less what its filters remove (a candidate is kept when each of
its scores is at least its threshold), which is what `SpaceBuilder` builds (checked against the
builder on the first text of the sample for the combined settings). Writes `summary.txt` (one
row a setting: share of content words, alphabetic and not stop words, with a substitute;
substitutes per changeable word; median |Omega_1|, |Omega_2|, |Omega_3|; per filter what it
removed), `examples.txt` (30 seeded one-substitution pairs per setting, in context, with their
scores) and `scores.csv` to `--out`; the building time per text with the models loaded is in
`summary.txt` too:

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD .venv/bin/python experiments/contextual_filters.py --sample 20 --seed 0
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
import time
from pathlib import Path

from robustcount.data import DataSpec
from robustcount.models.context_models import context_models
from robustcount.spaces.build import Filters, SpaceBuilder, english_stop_words
from robustcount.spaces.context import expressions, names
from robustcount.spaces.pos import same_pos
from robustcount.spaces.space import Position, Space
from robustcount.text import tokenize

POOL = ("synonyms", "counter-fitted", "wordnet")
LM_WINDOW, SIMILARITY_WINDOW = 4, 15
SETTINGS = {  # name: (names and expressions, same POS, LM threshold, similarity threshold)
    "pool": (False, False, None, None),
    "names+expressions": (True, False, None, None),
    "same-pos": (False, True, None, None),
    "lm>=-2": (False, False, -2.0, None), "lm>=-4": (False, False, -4.0, None), "lm>=-6": (False, False, -6.0, None),
    "sim>=0.80": (False, False, None, 0.80), "sim>=0.90": (False, False, None, 0.90),
    "sim>=0.95": (False, False, None, 0.95),
    "loose: n+e, lm>=-6, sim>=0.80": (True, False, -6.0, 0.80),
    "middle: n+e, lm>=-4, sim>=0.85": (True, False, -4.0, 0.85),
    "strict: n+e, lm>=-2, sim>=0.90": (True, False, -2.0, 0.90),
}


def score_text(example, models, pool: SpaceBuilder) -> tuple[list[dict], set[int], float]:
    """Every substitute of the pool in `example` with its scores, the words names and expressions
    leave alone, and the seconds the scoring took."""
    tokens = tokenize(example.input)
    began, rows = time.process_time(), []
    for position in pool(example.input).positions:
        i, candidates = position.index, list(position.candidates[1:])
        lm = models.log_likelihood_changes(tokens, i, candidates, LM_WINDOW)
        similarity = models.similarities(tokens, i, candidates, SIMILARITY_WINDOW)
        variants = [[*tokens.words[:i], c, *tokens.words[i + 1:]] for c in candidates]
        pos = same_pos(tokens, i, variants)
        for c, score, sim, agrees in zip(candidates, lm, similarity, pos):
            marked = list(tokens.words)
            marked[i] = f"[[{tokens.words[i]} -> {c}]]"
            rows.append({"text_id": example.id, "position": i, "original": tokens.words[i], "candidate": c,
                         "lm": float(score), "similarity": float(sim), "same_pos": agrees,
                         "marked": tokens.join(marked)})
    return rows, names(tokens) | expressions(tokens), time.process_time() - began


def kept(row: dict, setting, alone: set[int]) -> bool:
    keep_ne, pos, lm, sim = setting
    return not ((keep_ne and row["position"] in alone) or (pos and not row["same_pos"])
                or (lm is not None and row["lm"] < lm) or (sim is not None and row["similarity"] < sim))


def coverage(examples, scored, setting) -> dict:
    stop = set(english_stop_words())
    content = changeable = substitutes = covered = 0
    sizes = {1: [], 2: [], 3: []}
    for example in examples:
        rows, alone, _ = scored[example.id]
        tokens = tokenize(example.input)
        lists: dict[int, list[str]] = {}
        for row in rows:
            if kept(row, setting, alone):
                lists.setdefault(row["position"], []).append(row["candidate"])
        words = [i for i, w in enumerate(tokens.words) if w.isalpha() and w.lower() not in stop]
        content += len(words)
        covered += sum(i in lists for i in words)
        changeable += len(lists)
        substitutes += sum(map(len, lists.values()))
        space = Space(example.input, tuple(Position("word", i, (tokens.words[i], *c)) for i, c in sorted(lists.items())),
                      {})
        for r in sizes:
            sizes[r].append(space.count(r))
    return {"content words with a substitute": covered / max(content, 1),
            "substitutes per changeable word": substitutes / max(changeable, 1),
            **{f"median |Omega_{r}|": statistics.median(v) for r, v in sizes.items()}}


def check_against_builder(example, scored, models) -> None:
    """The combined settings' lists as the builder builds them, on one text."""
    rows, alone, _ = scored[example.id]
    for name, (keep_ne, _, lm, sim) in SETTINGS.items():
        if not (keep_ne and lm is not None):
            continue
        built = SpaceBuilder(POOL, Filters(keep_names=True, keep_expressions=True, context_lm_min=lm,
                                           context_similarity_min=sim), context=models)(example.input)
        lists = {p.index: list(p.candidates[1:]) for p in built.positions}
        simulated: dict[int, list[str]] = {}
        for row in rows:
            if kept(row, SETTINGS[name], alone):
                simulated.setdefault(row["position"], []).append(row["candidate"])
        assert lists == simulated, (name, lists, simulated)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "contextual_filters_out")
    args = parser.parse_args()
    examples = DataSpec("demo:test", sample=args.sample).load(args.seed)
    models, pool = context_models(), SpaceBuilder(POOL)
    began = time.process_time()
    models.lm.digest(), models.encoder.embed(["warm up"])  # load both before timing
    load = time.process_time() - began
    scored = {}
    for k, example in enumerate(examples):
        scored[example.id] = score_text(example, models, pool)
        print(f"text {k + 1}/{len(examples)}: {len(scored[example.id][0])} substitutes, "
              f"{scored[example.id][2]:.1f} CPU s", flush=True)
    check_against_builder(examples[0], scored, models)
    args.out.mkdir(parents=True, exist_ok=True)
    write(args, examples, scored, load)


def write(args, examples, scored, load: float) -> None:
    rows = [row for e in examples for row in scored[e.id][0]]
    with open(args.out / "scores.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[k for k in rows[0] if k != "marked"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    seconds = [scored[e.id][2] for e in examples]
    words = [len(tokenize(e.input).words) for e in examples]
    lines = [f"demo:test, --sample {args.sample} --seed {args.seed}: {len(examples)} texts, {statistics.mean(words):.1f} "
             f"words a text, {len(rows)} substitutes in the wide pool ({', '.join(POOL)})",
             f"CPU seconds to score a text's pool (LM, encoder, POS), models loaded: median "
             f"{statistics.median(seconds):.2f}, mean {statistics.mean(seconds):.2f}, max {max(seconds):.2f}; "
             f"loading both models {load:.1f}", ""]
    header = ["setting", "content words with a substitute", "substitutes per changeable word",
              "median |Omega_1|", "median |Omega_2|", "median |Omega_3|"]
    lines.append(" | ".join(header))
    examples_out = []
    for name, setting in SETTINGS.items():
        found = coverage(examples, scored, setting)
        lines.append(" | ".join([name, f"{found[header[1]]:.1%}", f"{found[header[2]]:.2f}",
                                 *(f"{found[h]:,}" for h in header[3:])]))
        alone = {e.id: scored[e.id][1] for e in examples}
        survivors = [row for row in rows if kept(row, setting, alone[row["text_id"]])]
        chosen = random.Random(f"{args.seed}/{name}").sample(survivors, min(30, len(survivors)))
        examples_out.append(f"## {name} ({len(survivors)} of {len(rows)} substitutes kept; 30 drawn)\n")
        examples_out += [f"lm {r['lm']:+.2f}  sim {r['similarity']:.3f}  pos {'=' if r['same_pos'] else 'x'}  "
                         f"{r['marked']}" for r in chosen] + [""]
    (args.out / "summary.txt").write_text("\n".join(lines) + "\n")
    (args.out / "examples.txt").write_text("\n".join(examples_out) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
