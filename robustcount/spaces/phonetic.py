"""Phonetic neighbours: homophones and respellings that sound (almost) the same.

Pronunciations come from CMUdict (stress removed), or, for words it lacks, from the g2p_en neural
model. Similarity is the paper's normalised phoneme edit distance (Zéroe appendix, eq. 3):
d(pi1, pi2) / min(|pi1|, |pi2|). The paper bins it as identical (0), very similar (< 0.1), similar
(< 0.3) and different (> 0.3); a candidate is kept when its distance to some pronunciation of
the word is at most `max_distance`. The default, 0.2, admits one phoneme edit in five and keeps
"great" -> "greet" (0.25) out; the paper's "similar" bin would reach 0.3.

Candidates are (1) CMUdict homophones (distance 0) and (2) respellings made by applying one
sound-preserving spelling rule (RULES) at one place in the word; every respelling is pronounced
and filtered, so a rule that changes the sound in some word is harmless.
"""

from __future__ import annotations

import re
from functools import lru_cache

from robustcount.spaces.casing import match_case
from robustcount.spaces.resources import cmudict, g2p, homophone_index

MAX_DISTANCE = 0.2

RULES: tuple[tuple[str, str], ...] = (
    ("ph", "f"), ("f", "ph"), ("ck", "k"), ("c", "k"), ("k", "c"), ("qu", "kw"), ("x", "ks"),
    ("ks", "x"), ("cks", "x"), ("ee", "ea"), ("ea", "ee"), ("oo", "u"), ("ew", "oo"), ("ou", "ow"),
    ("igh", "i"), ("ight", "ite"), ("ite", "ight"), ("tion", "shun"), ("sion", "shun"),
    ("s", "z"), ("z", "s"), ("ce", "se"), ("y", "i"), ("i", "y"), ("ie", "y"), ("ey", "y"),
    ("ai", "ay"), ("ay", "ai"), ("wr", "r"), ("kn", "n"), ("wh", "w"), ("gh", ""), ("ough", "o"),
    ("ough", "uff"), ("er", "a"), ("or", "a"), ("th", "d"), ("you", "u"), ("are", "r"),
    ("ll", "l"), ("ss", "s"), ("tt", "t"), ("pp", "p"), ("mm", "m"), ("nn", "n"), ("rr", "r"),
    ("dd", "d"), ("ff", "f"), ("e", ""), ("ed", "d"),
    ("ed", "t"), ("ing", "in"), ("own", "one"), ("one", "own"), ("ue", "oo"), ("oe", "o"),
)
_G2P_WORD = re.compile(r"^[a-z]+(?:['-][a-z]+)*$")


def pronunciations(word: str) -> tuple[tuple[str, ...], ...]:
    """Stress-free pronunciations of a lower-case word (CMUdict, else g2p_en; () if neither)."""
    known = cmudict().get(word)
    if known:
        return known
    if _G2P_WORD.fullmatch(word) and len(word) <= 64:
        pron = _g2p(word)
        return (pron,) if pron else ()
    return ()


@lru_cache(maxsize=200_000)
def _g2p(word: str) -> tuple[str, ...]:
    """The model's pronunciation, or () when it has none (it gives up on some long words)."""
    try:
        phones = g2p().pronounce(word)
    except ValueError:  # EnglishG2PError: no end of sequence within its 20-phone limit
        return ()
    return tuple(re.sub(r"\d", "", p) for p in phones)


def phoneme_distance(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """Levenshtein distance of two phoneme sequences over the shorter length (eq. 3)."""
    if not a or not b:
        return float("inf")
    previous = list(range(len(b) + 1))
    for i, pa in enumerate(a, start=1):
        current = [i]
        for j, pb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (pa != pb)))
        previous = current
    return previous[-1] / min(len(a), len(b))


def respellings(word: str) -> list[str]:
    """Every string made by applying one rule at one place in `word`, in rule order."""
    found: list[str] = []
    for old, new in RULES:
        for match in re.finditer(re.escape(old), word):
            variant = word[: match.start()] + new + word[match.end() :]
            if len(variant) >= 1 and variant != word and variant not in found:
                found.append(variant)
    return found


@lru_cache(maxsize=100_000)
def phonetic_neighbours(word: str, max_distance: float = MAX_DISTANCE) -> tuple[str, ...]:
    """Homophones, then respellings, of `word` within `max_distance`, in `word`'s case; sorted
    by distance, then alphabetically."""
    lower = word.lower()
    prons = pronunciations(lower)
    if not prons:
        return ()
    scored: dict[str, float] = {}
    for pron in prons:
        for homophone in homophone_index().get(pron, ()):
            if homophone != lower:
                scored[homophone] = 0.0
    for variant in respellings(lower):
        if variant in scored:
            continue
        variant_prons = pronunciations(variant)
        best = min((phoneme_distance(p, q) for p in prons for q in variant_prons), default=float("inf"))
        if best <= max_distance:
            scored[variant] = best
    ordered = sorted(scored, key=lambda v: (scored[v], v))
    return tuple(dict.fromkeys(match_case(word, v) for v in ordered if match_case(word, v) != word))
