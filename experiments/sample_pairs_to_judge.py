"""Draw the blind sample of (word, neighbour) pairs that a reader judges (robustcount.spaces.judged).

For each built-in synonym source, `--pairs` of the pairs it offers for the `--words` most frequent
content words of the demo data (both splits), drawn uniformly with a seed derived from `--seed`
and the source's name; pairs offered by several sources are judged once, and the pairs are
shuffled. Writes the blind file (id, word, neighbour: no source) and the key
(robustcount/spaces/assets/judged_pairs/sources.tsv: the sources of each id, and each source's
definition). The readers' judgments go beside the key as reader_NAME.tsv.

Run: `.venv/bin/python experiments/sample_pairs_to_judge.py --blind pairs_to_judge.tsv`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from robustcount.data import load_demo
from robustcount.spaces.build import english_stop_words, make_source
from robustcount.spaces.judged import PAIR_SOURCES, draw_sample, write_blind, write_key
from robustcount.spaces.quality import content_words, offered_pairs

SOURCES = ("synonyms", "counter-fitted", "wordnet", "glove-raw")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blind", type=Path, required=True, help="The file the reader judges.")
    parser.add_argument("--key", type=Path, default=PAIR_SOURCES)
    parser.add_argument("--pairs", type=int, default=300, help="Pairs drawn per source.")
    parser.add_argument("--words", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    texts = [e.input for split in ("train", "test") for e in load_demo(split)]
    words = content_words(texts, args.words, english_stop_words())
    sources = {name: make_source(name)[0] for name in SOURCES}
    sample = draw_sample({name: offered_pairs(source, words) for name, source in sources.items()}, args.pairs, args.seed)
    description = (f"{args.pairs} pairs per source of those offered for the {len(words)} most frequent content words "
                   f"of demo:train and demo:test, seed {args.seed}")
    definitions = {name: source.definition() for name, source in sources.items()}
    write_key(sample, definitions, description, args.key)
    write_blind(sample, args.blind)
    counts = {name: sum(name in p.sources for p in sample) for name in SOURCES}
    print(f"{len(sample)} pairs to judge -> {args.blind}; key -> {args.key}; per source: {counts}")


if __name__ == "__main__":
    main()
