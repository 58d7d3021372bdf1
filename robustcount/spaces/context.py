"""Contextual filters: each candidate judged in the original text, one substitution at a time, so
that a space stays a product of per-position candidate lists (docs/spaces.md, "Contextual filters").

- **names and titles** (`keep_names`): a word that starts with a capital letter and does not
  start a sentence (the text's first word, or one after a separator holding `.`, `!` or `?`) is
  left alone, and so is a sentence's first word when the word after it (one space apart) is
  left alone so ("Spy Kids", "Adam Sandler").
- **fixed expressions** (`keep_expressions`): the words of a run of two to five words, one space
  apart, that is a multiword lemma of WordNet 3.0 in lower case (assets/wordnet_multiword: *a
  mixed bag*, *kind of*) are left alone.
- **fluency and sense** (`context_lm_min`): the language model's log-likelihood change of the
  substitution (over the word and a window of LM tokens after it) is at least the threshold.
- **meaning** (`context_similarity_min`): the sentence encoder's cosine of the words around the
  position with and without the substitution is at least the threshold.
- **sense** (`context_word_similarity_min`): the cosine of the same encoder's contextual
  embeddings of the word and of the substitute, each in the words around the position
  (`models.minilm.MiniLMWordEncoder`, as BERTScore, Zhang et al. 2020), is at least the threshold.

The three scores are floating-point results that may move slightly with the machine, its thread
count or the other inputs of a batch (by up to 3.1e-5 nats measured for the LM). So a candidate
whose score lies within TOLERANCES of its threshold is **borderline**: the builder decides it as
its own score says, and `verify` accepts either decision for it (`agreement_problem`), never a
different decision on a candidate outside the band. A space is so defined up to its borderline
candidates, which `robustcount space` counts.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from robustcount.spaces.resources import ASSETS
from robustcount.text import Tokens

MULTIWORD = ASSETS / "wordnet_multiword" / "multiword.txt.gz"
LONGEST_EXPRESSION = 5
SCORES = {"lm": "log_likelihood_changes", "similarity": "similarities", "word_similarity": "word_similarities"}
"""The contextual scores, in the order `judge` applies them: each is a `Filters` pair
`context_<score>_min` and `context_<score>_window`, and the `ContextModels` method that scores."""
TOLERANCES = {"lm": 1e-3, "similarity": 1e-4, "word_similarity": 1e-4}
"""Half the width of the band around each threshold within which a candidate is borderline
(nats; cosine; cosine): well above the noise measured (3.1e-5 nats; 1e-6 for the encoder; 2.8e-7
for its word embeddings, experiments/contextual_tradeoff_out/word_similarity_noise.txt)."""
SENTENCE_END = ".!?"


@lru_cache(maxsize=1)
def multiword_expressions() -> frozenset[tuple[str, ...]]:
    with gzip.open(MULTIWORD, "rt", encoding="utf-8") as lines:
        return frozenset(tuple(line.split()) for line in lines if line.strip())


def names(tokens: Tokens) -> set[int]:
    """The word indices `keep_names` leaves alone (the module docstring)."""
    words, separators = tokens.words, tokens.separators
    starts = {i for i in range(len(words)) if i == 0 or any(c in separators[i] for c in SENTENCE_END)}
    found = {i for i, word in enumerate(words) if word[:1].isupper() and i not in starts}
    found |= {i for i in starts if words[i][:1].isupper() and i + 1 in found and separators[i + 1] == " "}
    return found


def expressions(tokens: Tokens) -> set[int]:
    """The word indices `keep_expressions` leaves alone (the module docstring)."""
    lexicon, lower, found = multiword_expressions(), [w.lower() for w in tokens.words], set()
    for start in range(len(lower)):
        for length in range(2, LONGEST_EXPRESSION + 1):
            stop = start + length
            if stop > len(lower) or any(tokens.separators[k] != " " for k in range(start + 1, stop)):
                break
            if tuple(lower[start:stop]) in lexicon:
                found.update(range(start, stop))
    return found


@dataclass
class Judged:
    """One position's candidates after the scores: `kept` (indices into the candidates, this
    machine's decision), `borderline` (those within the tolerance of a threshold, kept or not,
    that no score removes by more than its tolerance), and how many each score removed
    (`removed`: filter name -> count)."""

    kept: list[int] = field(default_factory=list)
    borderline: set[int] = field(default_factory=set)
    removed: dict[str, int] = field(default_factory=dict)


def judge(models, tokens: Tokens, index: int, candidates: Sequence[str], filters) -> Judged:
    """Judge the substitutes `candidates` of word `index` under the thresholds of `filters`
    (a `Filters`) with `models` (a `models.context_models.ContextModels`): the LM first, then
    the encoder's sentence and then word similarity, each on those no score before surely removes."""
    judged, alive = Judged(), list(range(len(candidates)))
    failed: set[int] = set()
    surely: set[int] = set()  # failed by more than the tolerance: removed on any machine
    for name, method in SCORES.items():
        threshold = getattr(filters, f"context_{name}_min")
        if threshold is None or not alive:
            continue
        tolerance, before = TOLERANCES[name], len(failed)
        scores = getattr(models, method)(tokens, index, [candidates[j] for j in alive],
                                         getattr(filters, f"context_{name}_window"))
        for j, score in zip(alive, scores):
            if abs(score - threshold) <= tolerance:
                judged.borderline.add(j)
            elif score < threshold:
                surely.add(j)
            if score < threshold:
                failed.add(j)
        judged.removed[name] = len(failed) - before
        alive = [j for j in alive if j not in surely]
    judged.borderline -= surely
    judged.kept = [j for j in range(len(candidates)) if j not in failed]
    return judged


def agreement_problem(found: Sequence[tuple], built: Sequence[tuple],
                      borderline: dict[int, tuple[tuple[str, ...], set[str]]]) -> str | None:
    """Why the recorded positions `found` ((kind, index, candidates) each, in text order) are not
    those `built` here up to borderline candidates, or None. `borderline` maps a word index to
    (its candidates with every borderline one kept, in the pool's order; the borderline ones): a
    recorded list there must be that list less some borderline candidates, and a position whose
    substitutes are all borderline may be missing. Every other position must be as built."""
    keys = [(index, kind == "word") for kind, index, _ in found]
    if keys != sorted(set(keys)):
        return "the recorded positions are not in text order, once each"
    recorded = {(kind, index): tuple(candidates) for kind, index, candidates in found}
    rebuilt = {(kind, index): tuple(candidates) for kind, index, candidates in built}
    rebuilt.update({("word", index): widest for index, (widest, _) in borderline.items()})
    for key in set(recorded) | set(rebuilt):
        widest, theirs = rebuilt.get(key, ()), recorded.get(key, ())
        unsure = borderline[key[1]][1] if key[0] == "word" and key[1] in borderline else set()
        sure = [c for c in widest if c not in unsure]
        if key not in recorded and len(sure) <= 1:
            continue
        if [c for c in widest if c in theirs] != list(theirs) or not set(sure) <= set(theirs):
            return f"the candidates of {key[0]} {key[1]} differ from those the space's definition builds"
    return None
