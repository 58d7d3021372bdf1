"""How meaning-preserving a word source is (DESIGN section 9).

A synonym source claims that each neighbour it offers means what the word means. Measured over a
list of words (by default the most frequent non-stop words of some texts):

- coverage: the words with at least one neighbour, and the mean number of neighbours over those;
- polarity flips: of the (word, neighbour) pairs where both are in a sentiment lexicon (VADER's by
  default), the share whose polarities have opposite signs (*good* for *bad*);
- antonym pairs: pairs that Open English WordNet lists as antonyms (either direction);
- fragments: neighbours that are not one word by robustcount's word rule (such as "'m"), which
  change the text's word count when substituted;
- a seeded sample of pairs to read.

Words and neighbours are compared in lower case.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.spaces.resources import wordnet_antonyms
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
    flip_examples: tuple[tuple[str, str], ...] = field(default=())
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

    def as_dict(self) -> dict:
        return {"source": self.source, "words": self.words, "covered": self.covered,
                "coverage": self.coverage, "neighbours_per_word": self.neighbours_per_word,
                "neighbour_pairs": self.neighbour_pairs, "lexicon_pairs": self.lexicon_pairs,
                "polarity_flips": self.polarity_flips, "flip_share": self.flip_share,
                "antonym_pairs": self.antonym_pairs, "fragments": self.fragments,
                "flip_examples": [list(p) for p in self.flip_examples], "sample": [list(p) for p in self.sample]}


def frequent_words(texts: Iterable[str], count: int, stop_words: Iterable[str] = ()) -> list[str]:
    """The `count` most frequent lower-case words of `texts` that contain a letter and are not
    stop words, most frequent first (ties in order of first appearance)."""
    stop = {w.lower() for w in stop_words}
    counts = Counter(w for text in texts for w in (v.lower() for v in tokenize(text).words)
                     if w not in stop and any(ch.isalpha() for ch in w))
    return [w for w, _ in counts.most_common(count)]


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
            lexicon[parts[0].strip().lower()] = float(parts[1])
        except (IndexError, ValueError):
            raise RobustcountError(f"{path}:{number}: expected `word<TAB>score`, got {line[:60]!r}") from None
    if not lexicon:
        raise RobustcountError(f"lexicon {path} has no entries")
    return lexicon


def measure_source(source, words: Sequence[str], polarity: dict[str, float], *, name: str | None = None,
                   sample_size: int = 10, seed: int = 0) -> SourceQuality:
    """Measure `source` (an object with `neighbours(word)`) over `words` against the sentiment
    lexicon `polarity` (word -> score; a score of 0 has no sign) and WordNet's antonyms."""
    antonyms = wordnet_antonyms()
    covered = pairs = lexicon_pairs = flips = antonym_pairs = fragments = 0
    all_pairs, flip_pairs = [], []
    for word in dict.fromkeys(w.lower() for w in words):
        found = list(dict.fromkeys(c.lower() for c in source.neighbours(word)))
        covered += bool(found)
        pairs += len(found)
        for other in found:
            all_pairs.append((word, other))
            if tokenize(other).words != (other,):
                fragments += 1
            if other in antonyms.get(word, ()) or word in antonyms.get(other, ()):
                antonym_pairs += 1
            a, b = polarity.get(word, 0.0), polarity.get(other, 0.0)
            if a and b:
                lexicon_pairs += 1
                if (a > 0) != (b > 0):
                    flips += 1
                    flip_pairs.append((word, other))
    rng = random.Random(seed)
    take = lambda found: tuple(rng.sample(found, min(sample_size, len(found))))  # noqa: E731
    return SourceQuality(name or _name_of(source), len(dict.fromkeys(w.lower() for w in words)), covered, pairs,
                         lexicon_pairs, flips, antonym_pairs, fragments, take(flip_pairs), take(all_pairs))


def _name_of(source) -> str:
    definition = source.definition()
    extra = definition.get("path")
    return f"{definition['source']}:{extra}" if extra else definition["source"]
