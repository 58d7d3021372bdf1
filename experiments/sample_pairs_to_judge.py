"""Draw the blind sample of (word, neighbour) pairs that readers judge (robustcount.spaces.judged).

For each source of the judged sample (`robustcount.spaces.sources.judged_sources`), `--pairs` of
the pairs it offers for the `--words` most frequent content words of the demo data (both splits),
drawn uniformly with a seed derived from `--seed` and the source's name; pairs offered by
several sources are judged once, and the pairs are shuffled. Writes the blind file (id, word, neighbour: no source) and the key
(robustcount/spaces/assets/judged_pairs/sources.tsv: the sources of each id, and each source's
definition). The readers' judgments go beside the key as reader_NAME.tsv.

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
import random
from pathlib import Path

from robustcount.data import load_demo
from robustcount.seeding import derive_seed
from robustcount.spaces.build import DEFAULT_SOURCE, english_stop_words
from robustcount.spaces.judged import PAIR_SOURCES, Key, SampledPair, draw_sample, read_key, resample, write_blind, write_key
from robustcount.spaces.quality import content_words, offered_pairs
from robustcount.spaces.sources import judged_sources, make_source
from robustcount.text import tokenize

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
