"""TextBugger's five bugs (Li et al. 2019, section III-B), as word sources.

| source | bug |
|---|---|
| bug-insert | a space inserted inside the word (not before its first or after its last character) |
| bug-delete | one character deleted, not the first or the last |
| bug-swap | two adjacent letters swapped, neither the first nor the last |
| bug-sub-c | Sub-C: one character replaced by a visual look-alike or a QWERTY neighbour (the Zéroe `visual` and `keyboard` neighbourhoods) |
| bug-homoglyph | TextAttack's Sub-C: each character replaced by its first look-alike (one variant per character) |
| glove-top5 | Sub-W as the paper: the 5 nearest words in GloVe (GloVe 6B 50d from the `vectors` extra; the paper's GloVe is 300d) |
| counter-fitted-top5 | Sub-W as TextAttack: the 5 nearest in counter-fitted vectors (Jia et al.'s table, nearest first) |

The paper draws one bug of each kind at random for a word (its Algorithm 3); so do `bug-insert`,
`bug-delete`, `bug-swap` and `bug-sub-c` here, the draw seeded by (bug, seed, word) and recorded
by the seed in the definition. Words of fewer than three characters, or without a letter, get no
character bug.
"""

from __future__ import annotations

import random

from robustcount.spaces.perturbers import Keyboard, Visual
from robustcount.spaces.resources import visual_neighbours
from robustcount.spaces.sources import SeededVariant, SourceEntry, register
from robustcount.spaces.synonyms import CounterFittedNeighbours, VectorNeighbours

BUGS = ("insert", "delete", "swap", "sub-c")


class CharacterBug(SeededVariant):
    """One of TextBugger's character bugs (`bug`, one of BUGS): a word's one seeded variant (words
    of three characters or more)."""

    def __init__(self, bug: str, seed: int = 0):
        super().__init__(f"bug-{bug}", seed)
        self.bug = bug

    def applies(self, word: str) -> bool:
        return len(word) >= 3 and super().applies(word)

    def variant(self, word: str, rng: random.Random) -> str | None:
        if self.bug == "insert":
            i = rng.randrange(1, len(word))
            variant = word[:i] + " " + word[i:]
        elif self.bug == "delete":
            i = rng.randrange(1, len(word) - 1)
            variant = word[:i] + word[i + 1:]
        elif self.bug == "swap":
            places = [i for i in range(1, len(word) - 2) if word[i] != word[i + 1]]
            if not places:
                return None
            i = rng.choice(places)
            variant = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        else:
            found = (*Visual().neighbours(word), *Keyboard().neighbours(word))
            if not found:
                return None
            variant = rng.choice(found)
        return variant


class Homoglyphs:
    """Each character replaced by its first look-alike of the visual table, one variant per character."""

    kind, name = "word", "bug-homoglyph"

    def neighbours(self, word: str) -> tuple[str, ...]:
        table = visual_neighbours()
        found = (word[:i] + table[ch][0] + word[i + 1:] for i, ch in enumerate(word) if table.get(ch))
        return tuple(dict.fromkeys(v for v in found if v != word))

    def definition(self) -> dict:
        return {"source": self.name}


class GloveTop5(VectorNeighbours):
    """Sub-W as the paper: the 5 nearest words in raw GloVe, whatever their cosine."""

    def __init__(self):
        super().__init__(top_n=5, min_cosine=-1.0)
        self.name = "glove-top5"


class CounterFittedTop5(CounterFittedNeighbours):
    """Sub-W as TextAttack (`WordSwapEmbedding(max_candidates=5)`): the 5 nearest counter-fitted neighbours."""

    name = "counter-fitted-top5"

    def neighbours(self, word: str) -> tuple[str, ...]:
        return super().neighbours(word)[:5]


for _bug, _summary in zip(BUGS, ("a space inserted inside the word", "an inner character deleted",
                                 "two inner letters swapped", "a look-alike or QWERTY neighbour")):
    register(SourceEntry(f"bug-{_bug}", f"TextBugger: {_summary}, one seeded variant a word",
                         lambda argument, seed, bug=_bug: CharacterBug(bug, seed)))
register(SourceEntry("bug-homoglyph", "TextBugger as TextAttack: each character's first look-alike",
                     lambda argument, seed: Homoglyphs()))
register(SourceEntry("glove-top5", "TextBugger's Sub-W: the 5 nearest raw GloVe words (vectors extra)",
                     lambda argument, seed: GloveTop5()))
register(SourceEntry("counter-fitted-top5", "TextBugger's Sub-W as TextAttack: the 5 nearest counter-fitted words",
                     lambda argument, seed: CounterFittedTop5()))
