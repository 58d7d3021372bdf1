"""Draw the blind sample of (word, neighbour) pairs that readers judge (robustcount.spaces.judged).

For each source of the judged sample (`robustcount.spaces.sources.judged_sources`), `--pairs` of
the pairs it offers for the `--words` most frequent content words of the demo data (both splits),
drawn uniformly with a seed derived from `--seed` and the source's name; pairs offered by
several sources are judged once, and the pairs are shuffled. Writes the blind file (id, word, neighbour: no source) and the key
(robustcount/spaces/assets/judged_pairs/sources.tsv: the sources of each id, and each source's
definition, so that a source whose table has changed since is not credited with another table's
judgments: `resample` draws it again). The readers' judgments go beside the key as reader_NAME.tsv.

A source whose table was rebuilt after judging is drawn again with `--resample NAME --seed S`
(a seed not used before, so that the new draw is independent of the judgments that may have
led to the rebuild): the key keeps every judged pair, the old draw stops counting for that
source, and the blind file holds only the pairs not judged yet. A source of yours is added the
same way (`--resample table:PATH`).

Run: `.venv/bin/python experiments/sample_pairs_to_judge.py --blind pairs_to_judge.tsv`
(round 2: `... --resample synonyms --seed 1 --blind pairs_to_judge_2.tsv`). `--extra-text TEXT`
adds the pairs the default source offers for TEXT's words (the README's example), judged blind
with the others and counted for no source.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from robustcount.data import load_demo
from robustcount.seeding import derive_seed
from robustcount.spaces.build import DEFAULT_SOURCE, english_stop_words
from robustcount.spaces.judged import PAIR_SOURCES, Key, SampledPair, read_key
from robustcount.spaces.quality import content_words, offered_pairs
from robustcount.spaces.sources import judged_sources, make_source
from robustcount.text import tokenize

JUDGING_RULE = ("A pair is judged yes when the neighbour is substitutable for the word in most contexts with "
                "the same meaning and part of speech: a reader who sees the word replaced by the neighbour in most "
                "sentences where it occurs would say the sentence still means the same. Otherwise no.")


def draw_sample(offered: dict[str, list[tuple[str, str]]], size: int, seed: int) -> list[SampledPair]:
    """For each source, `size` of its `offered` pairs drawn uniformly (all of them when it offers
    fewer) with a seed derived from `seed` and its name; the pairs drawn merged, shuffled and
    numbered p0001, p0002, ..."""
    drawn: dict[tuple[str, str], list[str]] = {}
    for name in sorted(offered):
        pairs = sorted(set(offered[name]))
        rng = random.Random(derive_seed(seed, "judge", name))
        for pair in rng.sample(pairs, min(size, len(pairs))):
            drawn.setdefault(pair, []).append(name)
    order = sorted(drawn)
    random.Random(derive_seed(seed, "judge", "shuffle")).shuffle(order)
    return [SampledPair(f"p{i:04d}", word, neighbour, tuple(drawn[word, neighbour]))
            for i, (word, neighbour) in enumerate(order, 1)]


def _rule_lines() -> list[str]:
    return [f"# {JUDGING_RULE}", "# Judge each pair on its own, without knowing where it came from."]


def write_blind(pairs: list[SampledPair], path: str | Path) -> None:
    """The file the reader judges: the rule, then id, word, neighbour (no source)."""
    lines = [*_rule_lines(), "id\tword\tneighbour", *(f"{p.id}\t{p.word}\t{p.neighbour}" for p in pairs)]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_key(key: Key, path: str | Path) -> None:
    """The key as a TSV: `#` lines (how it was drawn, each source's definition), then id, word,
    neighbour, sources."""
    lines = [*(f"# {d}" for d in key.descriptions),
             *(f"# source {name} {json.dumps(key.definitions[name], sort_keys=True)}" for name in sorted(key.definitions)),
             "id\tword\tneighbour\tsources",
             *(f"{p.id}\t{p.word}\t{p.neighbour}\t{','.join(p.sources)}" for p in key.pairs)]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def resample(key: Key, fresh: list[SampledPair], definitions: dict[str, dict], description: str) -> tuple[Key, list[SampledPair]]:
    """`key` with the sources of `definitions` drawn again as `fresh` (from `draw_sample`), for
    tables rebuilt since: their earlier pairs no longer count for them, a pair already in the key
    keeps its id (and its judgments), and new pairs get the next ids. Also the new pairs, to judge."""
    drawn = {(p.word, p.neighbour): p.sources for p in fresh}
    known = {(p.word, p.neighbour) for p in key.pairs}
    kept = [SampledPair(p.id, p.word, p.neighbour, tuple(sorted(
        {s for s in p.sources if s not in definitions} | set(drawn.get((p.word, p.neighbour), ())))))
        for p in key.pairs]
    new = [SampledPair(f"p{i:04d}", p.word, p.neighbour, p.sources)
           for i, p in enumerate((p for p in fresh if (p.word, p.neighbour) not in known), len(key.pairs) + 1)]
    return Key((*key.descriptions, description), {**key.definitions, **definitions}, (*kept, *new)), new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blind", type=Path, required=True, help="The file the readers judge.")
    parser.add_argument("--key", type=Path, default=PAIR_SOURCES)
    parser.add_argument("--pairs", type=int, default=300, help="Pairs drawn per source.")
    parser.add_argument("--words", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resample", action="append", metavar="SOURCE",
                        help="Draw only this source (again, or for the first time: any word source's name), keeping "
                             "the key's other draws and judged pairs (repeatable).")
    parser.add_argument("--extra-text", help="Also judge the default source's pairs for this text's words.")
    args = parser.parse_args()
    names = args.resample or judged_sources()
    texts = [e.input for split in ("train", "test") for e in load_demo(split)]
    words = content_words(texts, args.words, english_stop_words())
    sources = {name: make_source(name)[0] for name in names}
    drawn = draw_sample({name: offered_pairs(source, words) for name, source in sources.items()}, args.pairs, args.seed)
    definitions = {name: source.definition() for name, source in sources.items()}
    description = (f"{', '.join(names)}: {args.pairs} pairs a source of those offered for the {len(words)} most "
                   f"frequent content words of demo:train and demo:test, seed {args.seed}")
    if args.resample:
        key, blind = resample(read_key(args.key), drawn, definitions, description)
    else:
        key, blind = Key((description,), definitions, tuple(drawn)), drawn
    if args.extra_text:
        known = {(p.word, p.neighbour) for p in key.pairs}
        extra = [pair for pair in offered_pairs(make_source(DEFAULT_SOURCE)[0], tokenize(args.extra_text).words)
                 if pair not in known]
        extra = [SampledPair(f"p{i:04d}", word, other, ()) for i, (word, other) in enumerate(extra, len(key.pairs) + 1)]
        key = Key((*key.descriptions, f"extra, for no source: the pairs {DEFAULT_SOURCE} offers for {args.extra_text!r}"),
                  key.definitions, (*key.pairs, *extra))
        blind = [*blind, *extra]
        random.Random(derive_seed(args.seed, "judge", "extra")).shuffle(blind)
    write_key(key, args.key)
    write_blind(blind, args.blind)
    counts = {name: sum(name in p.sources for p in key.pairs) for name in key.definitions}
    print(f"{len(blind)} pairs to judge -> {args.blind}; key -> {args.key}; pairs per source: {counts}")


if __name__ == "__main__":
    main()
