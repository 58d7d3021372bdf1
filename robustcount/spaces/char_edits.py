"""DeepWordBug's four character edits (Gao et al. 2018, section 3.3), one word source each.

| source | edit (one per word, at a seeded random place) |
|---|---|
| char-swap | two adjacent characters swapped (they differ) |
| char-substitute | one letter replaced by another random letter of the same case |
| char-delete | one character deleted (words of two characters or more) |
| char-insert | one random letter inserted anywhere |

As in the paper and in TextAttack's recipe (its `random_one` transformations), each edit offers one
variant of a word, drawn at random; here the draw is seeded by (edit, seed, word), so a space holds
the same candidates wherever it is built and its definition records the seed. Words without a
letter are left alone. `deepwordbug` stands for the four.
"""

from __future__ import annotations

import random
import string

from robustcount.spaces.sources import SeededVariant, SourceEntry, register

EDITS = ("swap", "substitute", "delete", "insert")


class CharacterEdit(SeededVariant):
    """One of DeepWordBug's edits (`edit`, one of EDITS): a word's one seeded variant."""

    def __init__(self, edit: str, seed: int = 0):
        super().__init__(f"char-{edit}", seed)
        self.edit = edit

    def variant(self, word: str, rng: random.Random) -> str | None:
        return getattr(self, "_" + self.edit)(word, rng)

    @staticmethod
    def _swap(word: str, rng: random.Random) -> str | None:
        places = [i for i in range(len(word) - 1) if word[i] != word[i + 1]]
        if not places:
            return None
        i = rng.choice(places)
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]

    @staticmethod
    def _substitute(word: str, rng: random.Random) -> str | None:
        i = rng.choice([i for i, ch in enumerate(word) if ch.isalpha()])
        letter = rng.choice([c for c in string.ascii_lowercase if c != word[i].lower()])
        return word[:i] + (letter.upper() if word[i].isupper() else letter) + word[i + 1:]

    @staticmethod
    def _delete(word: str, rng: random.Random) -> str | None:
        if len(word) < 2:
            return None
        i = rng.randrange(len(word))
        return word[:i] + word[i + 1:]

    @staticmethod
    def _insert(word: str, rng: random.Random) -> str | None:
        i = rng.randrange(len(word) + 1)
        return word[:i] + rng.choice(string.ascii_lowercase) + word[i:]


for _edit, _summary in zip(EDITS, ("two adjacent characters swapped", "one letter replaced by a random one",
                                   "one character deleted", "one random letter inserted")):
    register(SourceEntry(f"char-{_edit}", f"DeepWordBug: {_summary}, one seeded variant a word",
                         lambda argument, seed, edit=_edit: CharacterEdit(edit, seed)))
register(SourceEntry("deepwordbug", "DeepWordBug's four character edits", members=tuple(f"char-{e}" for e in EDITS)))
