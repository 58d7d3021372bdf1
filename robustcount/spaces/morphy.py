"""A word's dictionary forms as WordNet's morphy finds them, and a lemma's synonyms put back in
the word's inflection (the `wordnet` source's look-up).

WordNet lists lemmas (*movie*, *run*, *good*), so a text's *movies*, *ran* or *better* must be
reduced first. `dictionary_forms` does what nltk's `morphy` does for each part of speech: a form
in WordNet 3.0's exception lists (assets/wordnet_morphy: *ran* → *run*, *better* → *good*,
*well*) gives its lemmas, any other form the suffix-detachment rules of its part of speech
(*movies* → *movie*); the word itself and those candidates that the lexicon lists are its
dictionary forms. The lexicon here has no parts of speech, so a candidate counts when the word is
listed under any (nltk checks the part of speech whose rule made it).

`inflected` puts a lemma's synonym in the inflection the word has relative to that lemma, found
and made by lemminflect (its Penn tags: *movies* is *movie*'s NNS, so *film* becomes *films*); a
synonym lemminflect cannot inflect so is left out.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from functools import lru_cache

from lemminflect import getAllInflections, getInflection

from robustcount.spaces.resources import ASSETS

EXCEPTIONS = ASSETS / "wordnet_morphy" / "exceptions.tsv.gz"
SUBSTITUTIONS = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
"""WordNet's suffix-detachment rules (morphy(7WN)), per part of speech: (suffix, replacement)."""
GUESSED_TAG = "NNS"
"""The one inflection made by spelling rules, for a synonym lemminflect does not know at all (a
rare noun); any other is made only for a synonym lemminflect knows in that part of speech (no
*berylliums* for *is*, from *be*'s synonym *beryllium*, no *estimabler*)."""


@lru_cache(maxsize=1)
def exceptions() -> dict[str, dict[str, tuple[str, ...]]]:
    """Part of speech -> irregular form -> its lemmas (WordNet 3.0's *.exc files)."""
    table: dict[str, dict[str, tuple[str, ...]]] = {pos: {} for pos in SUBSTITUTIONS}
    with gzip.open(EXCEPTIONS, "rt", encoding="utf-8") as lines:
        for line in lines:
            pos, form, lemmas = line.rstrip("\n").split("\t")
            table[pos][form] = tuple(lemmas.split())
    return table


def dictionary_forms(word: str, listed: Callable[[str], bool]) -> tuple[str, ...]:
    """The dictionary forms of lower-case `word` that `listed` accepts, in morphy's order (parts of
    speech n, v, a, r; the word itself first), each once."""
    forms = []
    for pos, rules in SUBSTITUTIONS.items():
        irregular = exceptions()[pos].get(word)
        reduced = irregular if irregular else tuple(word[: -len(suffix)] + ending for suffix, ending in rules
                                                    if word.endswith(suffix) and len(word) > len(suffix))
        forms.extend(form for form in (word, *reduced) if listed(form))
    return tuple(dict.fromkeys(forms))


def inflections(word: str, lemma: str) -> tuple[str, ...]:
    """The Penn tags under which lemminflect inflects `lemma` as `word` (none when `word` is the
    lemma itself, or an inflection lemminflect does not make)."""
    if word == lemma:
        return ()
    return tuple(tag for tag, forms in getAllInflections(lemma).items() if word in forms and forms[0] != lemma)


def inflected(candidate: str, tags: tuple[str, ...]) -> tuple[str, ...]:
    """`candidate` in each inflection of `tags` (itself for none), as far as lemminflect makes it."""
    if not tags:
        return (candidate,)
    unknown = not getAllInflections(candidate)
    made = (getInflection(candidate, tag, inflect_oov=unknown and tag == GUESSED_TAG) for tag in tags)
    return tuple(dict.fromkeys(forms[0] for forms in made if forms))
