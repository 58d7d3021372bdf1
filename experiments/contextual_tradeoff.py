"""Validity against coverage of the contextual filters (issue 42), old and new, on the judged set.

Every adversary of the judged set (robustcount/spaces/assets/judged_adversaries) is aligned word
by word with its original (`text.tokenize`); each substitution is scored alone in the ORIGINAL
text as the space builder scores it: the LM's log-likelihood change (over the word and 4 LM
tokens after it), the encoder's cosine of the 15 words around it, names and expressions (the word
left alone), the same part of speech in context, and two new scores: the **word-in-context
similarity** (the cosine of the encoder's contextual embeddings of the word and of the substitute,
mean over their word-pieces, in the 31 words around it: `models.minilm.MiniLMWordEncoder`, last
layer and layer 4, the one the filter `--context-word-similarity-min` uses) and the **polarity
change** (|valence(original) - valence(substitute)| in VADER's lexicon: `valence` below). An
adversary passes a setting when each of its substitutions does. The adversaries are split by original text (the example) into halves A and
B with `--seed`; thresholds are chosen on A, and B reports each setting's share kept, validity of
the kept with a Wilson 95% interval, and validity of the kept with >= 2 substitutions.
Coverage: the same scores over every substitute of the wide pool (synonyms + counter-fitted +
wordnet) on `--coverage-sample` seeded demo:test texts; each setting's share of content words
(alphabetic, not stop words) with a substitute and substitutes per changeable word, with the wide
pool and with `synonyms` alone as word sources.

Bias: a filter applied to adversaries found in an unfiltered space keeps those the filter lets
through; the attack in the filtered space finds others (the strongest the filtered space still
holds). This is a proxy for choosing a setting; the chosen one is judged on fresh adversaries.

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD .venv/bin/python experiments/contextual_tradeoff.py --seed 0
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from collections import defaultdict
from functools import lru_cache
from importlib import resources
from pathlib import Path

from lemminflect import getAllLemmas

from robustcount.data import DataSpec
from robustcount.models.context_models import ContextModels, context_models
from robustcount.models.minilm import MiniLMWordEncoder
from robustcount.models.sentence_encoder import sentence_engine
from robustcount.spaces.build import SpaceBuilder, english_stop_words
from robustcount.spaces.context import expressions, names
from robustcount.spaces.judged import Proportion
from robustcount.spaces.judged_adversaries import read_judged_set
from robustcount.spaces.pos import same_pos
from robustcount.text import tokenize

POOL = ("synonyms", "counter-fitted", "wordnet")
LM_WINDOW, SIMILARITY_WINDOW, WORD_WINDOW = 4, 15, 31
LAYERS = {"wic": -1, "wic4": 4}
GRID = {"ne": (False, True), "pos": (False, True), "lm": (None, -6.0, -4.0, -2.0), "sim": (None, 0.85, 0.90),
        "wic": (None, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8), "wic4": (None, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8),
        "pol": (None, 0.5, 1.0, 1.5, 2.0)}
MIN_KEPT_A = 15


@lru_cache(maxsize=1)
def vader_lexicon() -> dict[str, float]:
    """VADER's lexicon (Hutto & Gilbert 2014; vaderSentiment==3.3.2, MIT): token -> mean valence."""
    text = resources.files("vaderSentiment").joinpath("vader_lexicon.txt").read_text(encoding="utf-8")
    return {fields[0]: float(fields[1]) for line in text.splitlines() if len(fields := line.split("\t")) >= 2}


def valence(word: str) -> float:
    """The lexicon's valence of `word` in lower case, else of its first lemma the lexicon rates
    (lemminflect, parts of speech in alphabetical order), else 0 (unrated: neutral)."""
    rated, lower = vader_lexicon(), word.lower()
    if lower in rated:
        return rated[lower]
    lemmas = [lemma for _, found in sorted(getAllLemmas(lower).items()) for lemma in found if lemma in rated]
    return rated[lemmas[0]] if lemmas else 0.0


def valence_change(word: str, substitute: str) -> float:
    return round(abs(valence(substitute) - valence(word)), 6)


class Scorer:
    """Every score of one substitution (or of several candidates of one word) in its original text."""

    def __init__(self):
        self.models = context_models()
        self.layers = {}  # one ContextModels a layer, its word encoder at that layer
        for name, layer in LAYERS.items():
            self.layers[name] = ContextModels()
            self.layers[name].word_encoder = sentence_engine(MiniLMWordEncoder(layer), cache_size=0)

    def __call__(self, text: str, index: int, candidates: list[str]) -> list[dict]:
        tokens, m, words = tokenize(text), self.models, list(tokenize(text).words)
        lm = m.log_likelihood_changes(tokens, index, candidates, LM_WINDOW)
        sim = m.similarities(tokens, index, candidates, SIMILARITY_WINDOW)
        wic = {name: models.word_similarities(tokens, index, candidates, WORD_WINDOW)
               for name, models in self.layers.items()}
        pos = same_pos(tokens, index, [[*words[:index], c, *words[index + 1:]] for c in candidates])
        alone = index in names(tokens) | expressions(tokens)
        return [{"lm": float(lm[k]), "sim": float(sim[k]), **{n: float(v[k]) for n, v in wic.items()},
                 "pol": valence_change(words[index], c), "alone": alone, "pos": pos[k]} for k, c in enumerate(candidates)]


def substitutions(original: str, adversary: str) -> list[tuple[int, str]] | None:
    """The (word index, substitute) pairs that turn `original` into `adversary`, or None when
    they do not align word for word with the same separators."""
    a, b = tokenize(original), tokenize(adversary)
    if len(a.words) != len(b.words) or a.separators != b.separators:
        return None
    return [(i, w) for i, (v, w) in enumerate(zip(a.words, b.words)) if v != w]


def score_judged(scorer: Scorer, out: Path) -> list[dict]:
    """One row per judged adversary (unique id) with its substitutions' scores (cached in `out`)."""
    cache = out / "judged_scores.jsonl"
    if cache.exists():
        return [json.loads(line) for line in cache.read_text().splitlines()]
    judged = read_judged_set()
    unique = {a.id: a for a in judged.adversaries}
    spaces = defaultdict(set)
    for a in judged.adversaries:
        spaces[a.id].add(a.space)
    rows = []
    for k, a in enumerate(unique.values()):
        found = substitutions(a.original, a.adversary)
        scores = [] if not found else [scorer(a.original, i, [w])[0] | {"index": i, "word": tokenize(a.original).words[i],
                                                                       "substitute": w} for i, w in found]
        rows.append({"id": a.id, "original": a.original, "adversary": a.adversary, "valid": a.valid,
                     "spaces": sorted(spaces[a.id]), "aligned": found is not None, "substitutions": scores})
        if k % 50 == 0:
            print(f"judged {k}/{len(unique)}", flush=True)
    cache.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def score_pool(scorer: Scorer, sample: int, seed: int, out: Path) -> list[dict]:
    """One row per substitute of the wide pool on `sample` seeded demo:test texts (cached in `out`)."""
    cache = out / f"pool_scores_sample{sample}_seed{seed}.jsonl"
    if cache.exists():
        return [json.loads(line) for line in cache.read_text().splitlines()]
    pool, synonyms = SpaceBuilder(POOL), SpaceBuilder(["synonyms"])
    rows = []
    for example in DataSpec("demo:test", sample=sample).load(seed):
        own = {p.index: set(p.candidates[1:]) for p in synonyms(example.input).positions}
        for p in pool(example.input).positions:
            candidates = list(p.candidates[1:])
            for c, scores in zip(candidates, scorer(example.input, p.index, candidates)):
                rows.append({"text": example.id, "index": p.index, "substitute": c,
                             "synonyms": c in own.get(p.index, ()), **scores})
        print(f"pool text {example.id}: {len(rows)} substitutes so far", flush=True)
    cache.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def word_similarity_noise(sample: int, seed: int, texts: int = 4) -> float:
    """The largest change of a word-in-context similarity between a position's batch and the
    candidate scored alone, over the wide pool of the first `texts` texts of the coverage sample
    (what the borderline tolerance of `spaces.context.TOLERANCES` must exceed)."""
    models, pool, largest = context_models(), SpaceBuilder(POOL), 0.0
    for example in DataSpec("demo:test", sample=sample).load(seed)[:texts]:
        tokens = tokenize(example.input)
        for p in pool(example.input).positions:
            together = models.word_similarities(tokens, p.index, list(p.candidates[1:]), WORD_WINDOW)
            for c, score in zip(p.candidates[1:], together):
                largest = max(largest, abs(float(models.word_similarities(tokens, p.index, [c], WORD_WINDOW)[0]) - score))
    return largest


def passes(s: dict, setting: dict) -> bool:
    return not ((setting["ne"] and s["alone"]) or (setting["pos"] and not s["pos"])
                or any(setting[n] is not None and s[n] < setting[n] for n in ("lm", "sim", "wic", "wic4"))
                or (setting["pol"] is not None and s["pol"] > setting["pol"]))


def validity(rows: list[dict], setting: dict) -> dict:
    kept = [r for r in rows if all(passes(s, setting) for s in r["substitutions"])]
    many = [r for r in kept if len(r["substitutions"]) >= 2]
    return {"kept": Proportion(len(kept), len(rows)),
            "valid": Proportion(sum(r["valid"] for r in kept), len(kept)) if kept else None,
            "valid2": Proportion(sum(r["valid"] for r in many), len(many)) if many else None}


def coverage(pool: list[dict], texts: dict, setting: dict, synonyms_only: bool) -> tuple[float, float]:
    """Share of content words with a kept substitute; kept substitutes per changeable word."""
    stop = set(english_stop_words())
    lists = defaultdict(int)
    for r in pool:
        if (r["synonyms"] or not synonyms_only) and passes(r, setting):
            lists[(r["text"], r["index"])] += 1
    content = [(t, i) for t, words in texts.items() for i, w in enumerate(words) if w.isalpha() and w.lower() not in stop]
    return sum(key in lists for key in content) / len(content), sum(lists.values()) / max(len(lists), 1)


def name(setting: dict) -> str:
    parts = [k for k in ("ne", "pos") if setting[k]]
    parts += [f"{k}>={v:g}" for k in ("lm", "sim", "wic", "wic4") if (v := setting[k]) is not None]
    parts += [f"pol<={setting['pol']:g}"] if setting["pol"] is not None else []
    return "+".join(parts) or "none"


def fmt(p: Proportion | None) -> str:
    if p is None:
        return "-"
    low, high = p.interval
    return f"{p.estimate:.1%} [{low:.0%}, {high:.0%}] of {p.trials}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="the split into halves A and B")
    parser.add_argument("--coverage-sample", type=int, default=12)
    parser.add_argument("--coverage-seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "contextual_tradeoff_out")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    scorer = Scorer()
    judged = score_judged(scorer, args.out)
    pool = score_pool(scorer, args.coverage_sample, args.coverage_seed, args.out)
    texts = {e.id: tokenize(e.input).words for e in DataSpec("demo:test", sample=args.coverage_sample).load(args.coverage_seed)}
    noise = args.out / "word_similarity_noise.txt"
    if not noise.exists():
        noise.write_text(f"largest change of a word-in-context similarity between its position's batch and alone "
                         f"(4 texts of the coverage sample, wide pool): "
                         f"{word_similarity_noise(args.coverage_sample, args.coverage_seed):.3g}\n")
    report(args, judged, pool, texts)


def report(args, judged, pool, texts) -> None:
    aligned = [r for r in judged if r["aligned"] and r["substitutions"]]
    originals = sorted({r["original"] for r in aligned})
    random.Random(args.seed).shuffle(originals)
    half_a = set(originals[: len(originals) // 2])
    a = [r for r in aligned if r["original"] in half_a]
    b = [r for r in aligned if r["original"] not in half_a]
    settings = [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]
    settings = [s for s in settings if s["wic"] is None or s["wic4"] is None]  # one layer at a time
    rows = []
    for s in settings:
        va = validity(a, s)
        wide = coverage(pool, texts, s, False)
        rows.append((s, va, wide))
    write(args, judged, aligned, a, b, pool, texts, rows)


def frontier(rows) -> list:
    """The settings of the A-half Pareto front (validity on A against wide-pool coverage), each kept
    adversaries >= MIN_KEPT_A on A."""
    usable = [r for r in rows if r[1]["valid"] is not None and r[1]["valid"].trials >= MIN_KEPT_A]
    front = []
    for s, va, wide in usable:
        if not any(o[1]["valid"].estimate >= va["valid"].estimate and o[2][0] >= wide[0] and o[2][1] >= wide[1]
                   and (o[1]["valid"].estimate, o[2]) != (va["valid"].estimate, wide) for o in usable):
            front.append((s, va, wide))
    return sorted(front, key=lambda r: -r[2][0])


def write(args, judged, aligned, a, b, pool, texts, rows) -> None:
    base = dict.fromkeys(GRID)
    base.update(ne=False, pos=False)
    alone = [dict(base)] + [dict(base, ne=True), dict(base, pos=True)] + [
        dict(base, **{k: v}) for k in ("lm", "sim", "wic", "wic4", "pol") for v in GRID[k] if v is not None]
    front = frontier(rows)
    header = ("setting", "A: kept", "A: valid", "B: kept", "B: valid [95%]", "B: valid, >=2 subs",
              "wide: content words", "wide: cands/word", "synonyms: content words", "synonyms: cands/word")
    lines = [f"judged set: {len(judged)} adversaries, {len(aligned)} aligned word for word with a substitution; "
             f"split by original text with seed {args.seed}: A {len(a)} adversaries, B {len(b)}",
             f"coverage: demo:test --sample {args.coverage_sample} --seed {args.coverage_seed}, {len(texts)} texts, "
             f"{len(pool)} substitutes in the wide pool ({', '.join(POOL)})", ""]

    def table(title, chosen):
        out = [f"## {title}", " | ".join(header)]
        for s in chosen:
            va, vb = validity(a, s), validity(b, s)
            wide, syn = coverage(pool, texts, s, False), coverage(pool, texts, s, True)
            out.append(" | ".join([name(s), f"{va['kept'].estimate:.0%}", fmt(va["valid"]), f"{vb['kept'].estimate:.0%}",
                                   fmt(vb["valid"]), fmt(vb["valid2"]), f"{wide[0]:.1%}", f"{wide[1]:.2f}",
                                   f"{syn[0]:.1%}", f"{syn[1]:.2f}"]))
        return out + [""]

    lines += table("each filter alone", alone)
    lines += table(f"the A-half Pareto front (validity on A vs wide-pool coverage; >= {MIN_KEPT_A} kept on A), "
                   f"reported on B", [r[0] for r in front])
    for target in (0.85, 0.75):
        reaching = sorted((r for r in rows if r[1]["valid"] is not None and r[1]["valid"].trials >= MIN_KEPT_A
                           and r[1]["valid"].estimate >= target), key=lambda r: (-r[2][0], -r[2][1]))[:8]
        lines += table(f"the 8 settings of widest wide-pool coverage with validity >= {target:.0%} on A "
                       f"(>= {MIN_KEPT_A} kept on A), reported on B", [r[0] for r in reaching])
    (args.out / "tables.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
