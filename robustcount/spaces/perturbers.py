"""The ten Zéroe perturbers (Eger & Benz 2020, section 3.2), each with two faces.

- `perturb(word, phi, rng)`: the paper's random perturbation of one word at character-level
  probability phi (the word-level protocol lives in `robustcount.attacks.zeroe_protocol`).
- `neighbours(word)`: a finite, deterministic neighbourhood of the word, for perturbation spaces.

| perturber | paper's rule (random face) | neighbourhood |
|---|---|---|
| inner-shuffle | shuffle all but the first and last character; words of length >= 3 | up to `max_shuffles` (10) distinct shuffles, seeded by (seed, word); all of them when there are fewer |
| full-shuffle | shuffle all characters; length >= 2 | the same, over all characters |
| intrude | pick one symbol of `INTRUDER_SYMBOLS` per word, insert it between each two characters with probability phi; length >= 3 | every single insertion of one symbol between two characters |
| disemvowel | remove a, e, i, o, u (either case); skip length <= 3 and all-vowel words | the disemvowelled word |
| truncate | remove the last character; length >= 3 | the truncated word |
| segment | join adjacent words (a gap source, see `Segment`) | the gap joined |
| keyboard | each letter with probability phi becomes a QWERTY neighbour, keeping case | every single-letter QWERTY slip |
| natural | a random listed misspelling (Belinkov & Bisk's format) | every listed misspelling |
| phonetic | a random phonetic neighbour | homophones and respellings (`robustcount.spaces.phonetic`) |
| visual | each character with probability phi becomes one of its (<= 20) look-alikes | every single-character look-alike replacement |

Each registers itself as a source (`robustcount.spaces.sources`), and `zeroe` stands for all ten.
Any other word source attacks under the same protocol through `RandomNeighbour`.
"""

from __future__ import annotations

import itertools
import math
import random
import string
from collections import Counter
from functools import lru_cache
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.spaces.casing import match_case
from robustcount.spaces.phonetic import MAX_DISTANCE, phonetic_neighbours
from robustcount.spaces.resources import misspellings, read_misspelling_table, visual_neighbours
from robustcount.spaces.sources import Source, SourceEntry, make_source, register

INTRUDER_SYMBOLS = string.punctuation + " "
"""The paper's intruders: the 32 ASCII punctuation characters and the space."""
VOWELS = frozenset("aeiouAEIOU")
QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _qwerty_neighbours() -> dict[str, str]:
    """Keys next to each letter on a QWERTY keyboard: same row left and right; key i of a row
    touches keys i and i + 1 of the row above and keys i - 1 and i of the row below."""
    neighbours: dict[str, list[str]] = {ch: [] for row in QWERTY_ROWS for ch in row}
    for r, row in enumerate(QWERTY_ROWS):
        for i, ch in enumerate(row):
            near = [(r, i - 1), (r, i + 1), (r - 1, i), (r - 1, i + 1), (r + 1, i - 1), (r + 1, i)]
            for rr, ii in near:
                if 0 <= rr < len(QWERTY_ROWS) and 0 <= ii < len(QWERTY_ROWS[rr]):
                    neighbours[ch].append(QWERTY_ROWS[rr][ii])
    return {ch: "".join(sorted(near)) for ch, near in neighbours.items()}


QWERTY = _qwerty_neighbours()


class Perturber:
    """A word source with a random face (see the module docstring); by default a word becomes one
    of its neighbours, drawn uniformly."""

    name = ""
    kind = "word"

    def perturb(self, word: str, phi: float, rng: random.Random) -> str:
        options = self.neighbours(word)
        return rng.choice(options) if options else word

    def neighbours(self, word: str) -> tuple[str, ...]:
        raise NotImplementedError

    def definition(self) -> dict:
        return {"source": self.name}


class _Shuffle(Perturber):
    min_length = 0

    def __init__(self, seed: int = 0, max_shuffles: int = 10):
        if max_shuffles < 1:
            raise RobustcountError("max_shuffles must be at least 1")
        self.seed, self.max_shuffles = seed, max_shuffles

    def _split(self, word: str) -> tuple[str, str, str]:
        raise NotImplementedError

    def perturb(self, word, phi, rng):
        if len(word) < self.min_length:
            return word
        head, middle, tail = self._split(word)
        chars = list(middle)
        rng.shuffle(chars)
        return head + "".join(chars) + tail

    def neighbours(self, word):
        return _shuffles(type(self), word, self.seed, self.max_shuffles)

    def definition(self):
        return {"source": self.name, "seed": self.seed, "max_shuffles": self.max_shuffles}


@lru_cache(maxsize=100_000)
def _shuffles(kind: type, word: str, seed: int, cap: int) -> tuple[str, ...]:
    perturber = kind(seed, cap)
    if len(word) < perturber.min_length:
        return ()
    head, middle, tail = perturber._split(word)
    distinct = math.factorial(len(middle)) // math.prod(math.factorial(c) for c in Counter(middle).values())
    if distinct - 1 <= cap:
        variants = sorted({head + "".join(p) + tail for p in itertools.permutations(middle)} - {word})
        return tuple(variants)
    rng = random.Random(f"{perturber.name}:{seed}:{word}")
    found: list[str] = []
    chars = list(middle)
    while len(found) < cap:
        rng.shuffle(chars)
        variant = head + "".join(chars) + tail
        if variant != word and variant not in found:
            found.append(variant)
    return tuple(found)


class InnerShuffle(_Shuffle):
    name = "inner-shuffle"
    min_length = 3

    def _split(self, word):
        return word[0], word[1:-1], word[-1]


register(SourceEntry("inner-shuffle", "Zéroe: up to 10 shuffles of a word's inner letters, seeded",
                     lambda argument, seed: InnerShuffle(seed)))


class FullShuffle(_Shuffle):
    name = "full-shuffle"
    min_length = 2

    def _split(self, word):
        return "", word, ""


register(SourceEntry("full-shuffle", "Zéroe: up to 10 shuffles of all of a word's letters, seeded",
                     lambda argument, seed: FullShuffle(seed)))


class Intrude(Perturber):
    name = "intrude"

    def perturb(self, word, phi, rng):
        if len(word) < 3:
            return word
        symbol = rng.choice(INTRUDER_SYMBOLS)
        out = [word[0]]
        for ch in word[1:]:
            if rng.random() < phi:
                out.append(symbol)
            out.append(ch)
        return "".join(out)

    def neighbours(self, word):
        if len(word) < 3:
            return ()
        return tuple(word[:i] + s + word[i:] for s in INTRUDER_SYMBOLS for i in range(1, len(word)))


register(SourceEntry("intrude", "Zéroe: one punctuation mark or space inserted", lambda argument, seed: Intrude()))


class Disemvowel(Perturber):
    name = "disemvowel"

    def perturb(self, word, phi, rng):
        return self._apply(word)

    def neighbours(self, word):
        out = self._apply(word)
        return (out,) if out != word else ()

    @staticmethod
    def _apply(word: str) -> str:
        if len(word) <= 3 or all(ch in VOWELS for ch in word):
            return word
        return "".join(ch for ch in word if ch not in VOWELS)


register(SourceEntry("disemvowel", "Zéroe: the vowels removed", lambda argument, seed: Disemvowel()))


class Truncate(Perturber):
    name = "truncate"

    def perturb(self, word, phi, rng):
        return word[:-1] if len(word) >= 3 else word

    def neighbours(self, word):
        return (word[:-1],) if len(word) >= 3 else ()


register(SourceEntry("truncate", "Zéroe: the last letter removed", lambda argument, seed: Truncate()))


class Keyboard(Perturber):
    name = "keyboard"

    def perturb(self, word, phi, rng):
        out = []
        for ch in word:
            near = QWERTY.get(ch.lower())
            if near and rng.random() < phi:
                out.append(match_case(ch, rng.choice(near)))
            else:
                out.append(ch)
        return "".join(out)

    def neighbours(self, word):
        found = []
        for i, ch in enumerate(word):
            for near in QWERTY.get(ch.lower(), ""):
                found.append(word[:i] + match_case(ch, near) + word[i + 1 :])
        return tuple(dict.fromkeys(found))


register(SourceEntry("keyboard", "Zéroe: one QWERTY slip", lambda argument, seed: Keyboard()))


class Natural(Perturber):
    """Misspellings from a misspelling table: the packaged one (nlpaug's spelling_en.txt), or the
    file `misspellings_path` in Belinkov and Bisk's `word variant1 variant2 ...` format. A word
    missing from the table is looked up in lower case and the variants take its case."""

    name = "natural"

    def __init__(self, misspellings_path: str | Path | None = None):
        self.misspellings_path = None if misspellings_path is None else str(misspellings_path)
        if self.misspellings_path is not None:
            self._misspellings()  # a table of yours is read now, so that a bad one fails before any work

    def _misspellings(self) -> dict[str, tuple[str, ...]]:
        if self.misspellings_path is None:
            return misspellings()
        return read_misspelling_table(Path(self.misspellings_path))

    def neighbours(self, word):
        table = self._misspellings()
        if word in table:
            variants = table[word]
        else:
            variants = tuple(match_case(word, v) for v in table.get(word.lower(), ()))
        return tuple(v for v in dict.fromkeys(variants) if v != word and not any(c.isspace() for c in v))

    def definition(self):
        return {"source": self.name, "table": self.misspellings_path or "nlpaug==1.1.11 spelling_en.txt"}


register(SourceEntry("natural", "Zéroe: listed misspellings, from nlpaug's table or your `word variant ...` file",
                     lambda argument, seed: Natural(argument), argument="PATH", argument_optional=True,
                     recorded_file="table"))


class Phonetic(Perturber):
    name = "phonetic"

    def __init__(self, max_distance: float = MAX_DISTANCE):
        self.max_distance = max_distance

    def neighbours(self, word):
        return phonetic_neighbours(word, self.max_distance)

    def definition(self):
        return {"source": self.name, "max_distance": self.max_distance}


register(SourceEntry("phonetic", "Zéroe: homophones and respellings", lambda argument, seed: Phonetic()))


class Visual(Perturber):
    name = "visual"

    def perturb(self, word, phi, rng):
        table = visual_neighbours()
        return "".join(
            rng.choice(table[ch]) if ch in table and rng.random() < phi else ch for ch in word
        )

    def neighbours(self, word):
        table = visual_neighbours()
        found = []
        for i, ch in enumerate(word):
            for other in table.get(ch, ()):
                found.append(word[:i] + other + word[i + 1 :])
        return tuple(dict.fromkeys(found))


register(SourceEntry("visual", "Zéroe: one character replaced by a look-alike", lambda argument, seed: Visual()))


class Segment:
    """Joins words by removing the whitespace between them (a gap source).

    Random face (`join_gaps`): walking the gaps left to right, the first gap of a run is joined
    with probability phi, the next with phi^2 and so on (the paper's phi, phi^2, ..., phi^n that
    prevents giant words); a gap left open starts a new run. Neighbourhood: each whitespace-only
    gap between two words can be joined."""

    name = "segment"
    kind = "gap"

    def gap_neighbours(self, separator: str) -> tuple[str, ...]:
        return ("",) if separator and separator.isspace() else ()

    def join_gaps(self, separators: list[str], phi: float, rng: random.Random) -> list[str]:
        """The inner separators (between words) with some whitespace gaps joined."""
        out, run = list(separators), 0
        for i, sep in enumerate(separators):
            if self.gap_neighbours(sep) and rng.random() < phi ** (run + 1):
                out[i], run = "", run + 1
            else:
                run = 0
        return out

    def definition(self) -> dict:
        return {"source": self.name}


register(SourceEntry("segment", "Zéroe: two words joined, a gap source", lambda argument, seed: Segment()))


PERTURBERS: dict[str, type[Perturber] | type[Segment]] = {
    cls.name: cls
    for cls in (InnerShuffle, FullShuffle, Intrude, Disemvowel, Truncate, Segment, Keyboard, Natural,
                Phonetic, Visual)
}
"""The ten Zéroe perturbers by name, in the paper's order."""


register(SourceEntry("zeroe", "all ten Zéroe perturbers", members=tuple(PERTURBERS)))


class RandomNeighbour(Perturber):
    """A word source without a random face of its own as a perturber: a word becomes one of its
    neighbours, drawn uniformly."""

    def __init__(self, source: Source):
        self.source, self.name = source, source.name

    def neighbours(self, word):
        return self.source.neighbours(word)

    def definition(self):
        return self.source.definition()


def get_perturber(name: str, seed: int = 0) -> Perturber | Segment:
    """The one source `name` stands for (`robustcount.spaces.sources`) with its random face: a
    perturber's own, `RandomNeighbour` for any other word source."""
    found = make_source(name, seed)
    if len(found) != 1:
        raise RobustcountError(f"{name} stands for {len(found)} sources; attack with one of them at a time")
    (source,) = found
    return source if isinstance(source, (Perturber, Segment)) else RandomNeighbour(source)
