"""The polarity filter's lexicon: a word's sentiment valence from VADER's lexicon (Hutto & Gilbert
2014; the `vaderSentiment` package, MIT), so that a substitute that shifts what a text says, or
how strongly (*worst* -> *toughest*, *compelling* -> *conclusive*), can be told apart from one that
keeps it (docs/spaces.md, "Contextual filters").

A word's valence is the lexicon's mean rating (-4 to 4) of the word in lower case; else of its
first lemma (lemminflect, by part of speech in alphabetical order) the lexicon rates; else 0: a
word the lexicon does not rate counts as neutral, so that replacing a rated word by an unrated one
changes the valence by the rated one's. Lexicon values are exact decimals, so the change is
decided alike on every machine (no borderline band).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources

from robustcount.errors import RobustcountError

LEXICON = "vader_lexicon.txt"


@lru_cache(maxsize=1)
def _lexicon_text() -> str:
    try:
        return resources.files("vaderSentiment").joinpath(LEXICON).read_text(encoding="utf-8")
    except ModuleNotFoundError as err:
        raise RobustcountError("the polarity filter needs VADER's lexicon: pip install 'robustcount[vader]'") from err


@lru_cache(maxsize=1)
def lexicon() -> dict[str, float]:
    """VADER's lexicon: token -> mean valence."""
    return {fields[0]: float(fields[1]) for line in _lexicon_text().splitlines()
            if len(fields := line.split("\t")) >= 2}


def lexicon_identity() -> dict:
    """What a space's definition records of the lexicon: its name and SHA-256."""
    return {"name": f"vaderSentiment {LEXICON}",
            "digest": hashlib.sha256(_lexicon_text().encode("utf-8")).hexdigest()}


@lru_cache(maxsize=100_000)
def valence(word: str) -> float:
    """The valence of `word` (the module docstring)."""
    from lemminflect import getAllLemmas

    rated, lower = lexicon(), word.lower()
    if lower in rated:
        return rated[lower]
    for _, lemmas in sorted(getAllLemmas(lower).items()):
        for lemma in lemmas:
            if lemma in rated:
                return rated[lemma]
    return 0.0


def valence_change(word: str, substitute: str) -> float:
    """|valence(substitute) - valence(word)|, rounded to 6 decimals (exact for the lexicon's values)."""
    return round(abs(valence(substitute) - valence(word)), 6)
