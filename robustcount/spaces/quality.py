"""How meaning-preserving a word source is (docs/spaces.md, "Meaning-preserving neighbours").

A synonym source claims that each neighbour it offers means what the word means. Measured over a
list of words (by default the 1,500 most frequent content words of the demo data), on the
(word, neighbour) pairs it offers for them, compared in lower case:

- judged precision: the share of a seeded sample of its pairs that readers judged substitutable
  (most of them, and each reader's own; `robustcount.spaces.judged`: only for the sources of the
  judged sample, as their tables were when it was drawn);
- coverage: the words with at least one neighbour, and the mean number of neighbours over those;
- agreement with curated resources: the share of its pairs that Open English WordNet (synset
  co-members), PPDB 2.0 (lexical paraphrases) or Jia et al.'s counter-fitted table list, in either
  direction, as written (WordNet lists lemmas: *films*/*movies* is not found there);
- dissimilar pairs: of SimLex-999's pairs that people rated at most `SIMLEX_DISSIMILAR` of 10
  (*dog*/*cat*, *winter*/*summer*), the share the source offers in either direction, over the
  whole list of pairs, not only the words measured;
- polarity flips: of the pairs where both words are in a sentiment lexicon (VADER's by default),
  the share whose polarities have opposite signs (*good* for *bad*);
- antonym pairs: pairs that a curated list calls antonyms (Open English WordNet, PPDB 2.0's
  exclusion pairs, WordNet 3.0's antonyms);
- fragments: neighbours that are not one word by robustcount's word rule (such as "'s"), which
  change the text's word count when substituted;
- a seeded sample of pairs to read;
- coverage in the text (`text_coverage`): over every occurrence in a list of texts, the content
  words with a candidate, candidates per changeable word, and the median |Omega_1..3| of the
  source's spaces (in-context validity, readers' judgments of adversaries in those spaces, is
  `robustcount.spaces.judged_adversaries`).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.spaces.judged import Judgments, Proportion
from robustcount.spaces.resources import SIMLEX_DISSIMILAR, curated_antonyms, ppdb_synonyms, simlex, wordnet_synonyms
from robustcount.text import tokenize


@dataclass(frozen=True)
class SourceQuality:
    """The measures of one source over `words` (see the module docstring)."""

    source: str
    words: int
    covered: int
    neighbour_pairs: int
    lexicon_pairs: int
    polarity_flips: int
    antonym_pairs: int
    fragments: int
    in_wordnet: int
    in_ppdb: int
    in_counter_fitted: int
    simlex_offered: int
    simlex_dissimilar: int
    precision: Proportion | None = None
    reader_precision: dict[str, Proportion] = field(default_factory=dict)
    flip_examples: tuple[tuple[str, str], ...] = field(default=())
    simlex_examples: tuple[tuple[str, str], ...] = field(default=())
    sample: tuple[tuple[str, str], ...] = field(default=())

    @property
    def coverage(self) -> float:
        return self.covered / self.words if self.words else 0.0

    @property
    def neighbours_per_word(self) -> float:
        """Mean number of neighbours over the words that have any."""
        return self.neighbour_pairs / self.covered if self.covered else 0.0

    @property
    def flip_share(self) -> float | None:
        """Share of lexicon pairs with opposite polarity (None when no pair is in the lexicon)."""
        return self.polarity_flips / self.lexicon_pairs if self.lexicon_pairs else None

    @property
    def simlex_share(self) -> float:
        """Share of SimLex-999's dissimilar pairs that the source offers."""
        return self.simlex_offered / self.simlex_dissimilar if self.simlex_dissimilar else 0.0

    def share(self, count: int) -> float | None:
        """`count` as a share of the source's pairs (None when it offers none)."""
        return count / self.neighbour_pairs if self.neighbour_pairs else None

    def as_dict(self) -> dict:
        return {"source": self.source, "precision": None if self.precision is None else self.precision.as_dict(),
                "reader_precision": {reader: p.as_dict() for reader, p in self.reader_precision.items()},
                "words": self.words, "covered": self.covered, "coverage": self.coverage,
                "neighbours_per_word": self.neighbours_per_word, "neighbour_pairs": self.neighbour_pairs,
                "in_wordnet": self.share(self.in_wordnet), "in_ppdb": self.share(self.in_ppdb),
                "in_counter_fitted": self.share(self.in_counter_fitted),
                "simlex_dissimilar_offered": self.simlex_offered, "simlex_dissimilar_pairs": self.simlex_dissimilar,
                "simlex_share": self.simlex_share, "lexicon_pairs": self.lexicon_pairs,
                "polarity_flips": self.polarity_flips, "flip_share": self.flip_share,
                "antonym_pairs": self.antonym_pairs, "fragments": self.fragments,
                "flip_examples": [list(p) for p in self.flip_examples],
                "simlex_examples": [list(p) for p in self.simlex_examples], "sample": [list(p) for p in self.sample]}


def content_words(texts: Iterable[str], count: int, stop_words: Iterable[str] = ()) -> list[str]:
    """The `count` most frequent lower-case content words of `texts` (alphabetic, not stop
    words), most frequent first (ties in order of first appearance)."""
    stop = {w.lower() for w in stop_words}
    counts = Counter(w for text in texts for w in (v.lower() for v in tokenize(text).words)
                     if w.isalpha() and w not in stop)
    return [w for w, _ in counts.most_common(count)]


def offered_pairs(source, words: Sequence[str]) -> list[tuple[str, str]]:
    """The (word, neighbour) pairs `source` offers for `words`, lower case, without repeats."""
    pairs = {}
    for word in dict.fromkeys(w.lower() for w in words):
        for other in source.neighbours(word):
            if other.lower() != word:
                pairs[word, other.lower()] = None
    return list(pairs)


def vader_polarity() -> dict[str, float]:
    """VADER's lexicon: word -> mean valence (the `vader` extra)."""
    try:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
    except ImportError as err:
        raise RobustcountError("the VADER lexicon needs: pip install vaderSentiment==3.3.2") from err
    return dict(SentimentIntensityAnalyzer().lexicon)


def read_lexicon(path: str | Path) -> dict[str, float]:
    """A sentiment lexicon file: one `word<TAB>score` per line (VADER's and AFINN's format; further
    columns are ignored)."""
    lexicon = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise RobustcountError(f"cannot read lexicon {path}: {err}") from err
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        try:
            score = float(parts[1])
        except (IndexError, ValueError):
            raise RobustcountError(f"{path}:{number}: expected `word<TAB>score`, got {line[:60]!r}") from None
        if not math.isfinite(score):
            raise RobustcountError(f"{path}:{number}: the score of {parts[0].strip()!r} is {parts[1].strip()}, "
                                   "not a finite number")
        lexicon[parts[0].strip().lower()] = score
    if not lexicon:
        raise RobustcountError(f"lexicon {path} has no entries")
    return lexicon


def _listed(relation, a: str, b: str) -> bool:
    return b in relation.get(a, ()) or a in relation.get(b, ())


def measure_source(source, words: Sequence[str], polarity: dict[str, float], counter_fitted: dict[str, list[str]],
                   *, judgments: Judgments | None = None, name: str | None = None, sample_size: int = 10,
                   seed: int = 0) -> SourceQuality:
    """Measure `source` (an object with `neighbours(word)` and `definition()`) over `words`
    against the sentiment lexicon `polarity` (word -> score; a score of 0 has no sign), the
    curated resources, the counter-fitted table `counter_fitted` and, when given, `judgments`."""
    antonyms, wordnet, ppdb = curated_antonyms(), wordnet_synonyms(), ppdb_synonyms()
    words = list(dict.fromkeys(w.lower() for w in words))
    pairs = offered_pairs(source, words)
    counts = Counter()
    flip_pairs = []
    for word, other in pairs:
        counts["fragments"] += tokenize(other).words != (other,)
        counts["antonyms"] += other in antonyms.get(word, ())
        counts["wordnet"] += _listed(wordnet, word, other)
        counts["ppdb"] += _listed(ppdb, word, other)
        counts["counter_fitted"] += _listed(counter_fitted, word, other)
        a, b = polarity.get(word, 0.0), polarity.get(other, 0.0)
        if a and b:
            counts["lexicon"] += 1
            if (a > 0) != (b > 0):
                flip_pairs.append((word, other))
    dissimilar = [(a, b) for a, b, score in simlex() if score <= SIMLEX_DISSIMILAR]
    offered = [(a, b) for a, b in dissimilar if _offers(source, a, b) or _offers(source, b, a)]
    rng = random.Random(seed)
    take = lambda found: tuple(rng.sample(found, min(sample_size, len(found))))  # noqa: E731
    name = name or _name_of(source)
    judged = {} if judgments is None else {
        reader: p for reader in (None, *judgments.readers)
        if (p := judgments.precision(name, source.definition(), reader)) is not None}
    return SourceQuality(
        name, len(words), len({word for word, _ in pairs}), len(pairs), counts["lexicon"],
        len(flip_pairs), counts["antonyms"], counts["fragments"], counts["wordnet"], counts["ppdb"],
        counts["counter_fitted"], len(offered), len(dissimilar),
        precision=judged.pop(None, None), reader_precision=judged,
        flip_examples=take(flip_pairs), simlex_examples=tuple(offered[:sample_size]), sample=take(pairs))


def _offers(source, word: str, other: str) -> bool:
    return other in (n.lower() for n in source.neighbours(word))


def _name_of(source) -> str:
    definition = source.definition()
    extra = definition.get("path")
    return f"{definition['source']}:{extra}" if extra else definition["source"]


COVERAGE_RADII = (1, 2, 3)
"""The radii whose median |Omega_r| `TextCoverage` reports."""


@dataclass(frozen=True)
class TextCoverage:
    """How much of its texts a source's spaces can change, counted in context: `content_words`
    (alphabetic words that are not stop words, every occurrence), of which `covered` have a
    candidate; `changeable` positions with a candidate, offering `candidates` in all; and the
    median |Omega_r| over the `texts` for each of `COVERAGE_RADII`."""

    texts: int
    content_words: int
    covered: int
    changeable: int
    candidates: int
    median_sizes: dict[int, float | None]

    @property
    def content_share(self) -> float | None:
        return self.covered / self.content_words if self.content_words else None

    @property
    def candidates_per_word(self) -> float | None:
        """Mean number of candidates (the original not counted) over the changeable words."""
        return self.candidates / self.changeable if self.changeable else None

    def as_dict(self) -> dict:
        return {"texts": self.texts, "content_words": self.content_words, "covered_content_words": self.covered,
                "content_share": self.content_share, "changeable_words": self.changeable,
                "candidates_per_changeable_word": self.candidates_per_word,
                "median_sizes": {str(r): size for r, size in self.median_sizes.items()}}


class Remembered:
    """A word source whose answers are remembered, each word looked up once (a vectors source
    takes a product with every vector a lookup); the same kind, name and definition."""

    def __init__(self, source):
        self.source, self.kind, self.name = source, source.kind, source.name
        self._answers: dict[str, tuple[str, ...]] = {}

    def definition(self) -> dict:
        return self.source.definition()

    def neighbours(self, word: str) -> tuple[str, ...]:
        if word not in self._answers:
            self._answers[word] = tuple(self.source.neighbours(word))
        return self._answers[word]


def text_coverage(build, texts: Sequence[str], stop_words: Iterable[str] = ()) -> TextCoverage:
    """The `TextCoverage` of the spaces `build` (text -> `Space`) gives `texts`."""
    stop = {w.lower() for w in stop_words}
    counts, sizes = Counter(), {r: [] for r in COVERAGE_RADII}
    for text in texts:
        space = build(text)
        words = tokenize(text).words
        changed = {p.index for p in space.positions if p.kind == "word" and len(p.candidates) > 1}
        content = [i for i, w in enumerate(words) if w.isalpha() and w.lower() not in stop]
        counts["content"] += len(content)
        counts["covered"] += sum(i in changed for i in content)
        counts["changeable"] += len(changed)
        counts["candidates"] += sum(len(p.candidates) - 1 for p in space.positions if p.kind == "word")
        for r in COVERAGE_RADII:
            sizes[r].append(space.count(r))
    return TextCoverage(len(texts), counts["content"], counts["covered"], counts["changeable"], counts["candidates"],
                        {r: _median(found) for r, found in sizes.items()})


def _median(values: list[int]) -> float | None:
    """The median of exact counts (the mean of the middle two for an even number; None of none)."""
    ordered = sorted(values)
    if not ordered:
        return None
    middle = len(ordered) // 2
    return float(ordered[middle]) if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
