"""A2T (Yoo & Qi 2021, "Towards Improving Adversarial Training of NLP Models"): the cheap attack
for adversarial training, as the paper and TextAttack 0.3.11's `a2t` (its authors' code) run it.

Words are ranked by gradient times input (white boxes; a black box by the p(gold) drop when the
word is deleted), then the greedy search of `search.greedy_swap`: a candidate is sent to the
model only if it keeps the word's part of speech (nouns and verbs not interchangeable), the
input keeps at most max(4, 10% of its words) changed, and the sentence similarity to the
original is at least 0.9; of several adversaries, the most similar.

What differs offline: candidates come from the `counter-fitted` table (at most 8 neighbours,
Euclidean distance 0.5 in the counter-fitted vectors) instead of the 20 nearest counter-fitted
words with cosine >= 0.8, which need the vectors themselves; similarity is the cosine of
all-MiniLM-L6-v2 embeddings (its own query engine) instead of stsb-distilbert-base's; stop words
are scikit-learn's list. A2T-MLM (masked-LM candidates) is not offered here.
"""

from __future__ import annotations

from dataclasses import field

import numpy as np

from robustcount.attacks.recipe import Recipe
from robustcount.attacks.result import FAILED, AttackResult
from robustcount.attacks.search import (RecipeSources, SwapRules, gradient_or_deletion, greedy_calls, greedy_swap,
                                        pos_agrees, ranked, similarity, transformation_field, within_rate,
                                        word_positions)
from robustcount.models.sentence_encoder import sentence_engine
from robustcount.options import option, options_dataclass

METHOD = "a2t"


def a2t_attack(engine, space, gold, max_rate: float = 0.1, min_changes: int = 4, threshold: float = 0.9,
               encoder=None) -> AttackResult:
    """A2T on the word positions of `space` (see the module docstring)."""
    positions = word_positions(space)
    if not positions:
        return AttackResult(METHOD, FAILED, space.item, gold, reason="no word of the input can change")
    encoder = encoder or sentence_engine()
    order = ranked(positions, gradient_or_deletion(engine, space, positions, gold))

    def allowed(position, trials):
        ok = within_rate(space, trials, max_rate, min_changes) & pos_agrees(space, position, trials)
        passing = [t for t, good in zip(trials, ok) if good]
        if passing:
            ok[np.flatnonzero(ok)] = similarity(encoder, space, passing) >= threshold
        return ok

    return greedy_swap(METHOD, engine, space, gold, order, SwapRules(
        allowed, similarity_of=lambda points: similarity(encoder, space, points)))


@options_dataclass
class A2TOptions:
    transformation: str = transformation_field()
    max_rate: float = field(default=0.1, metadata=option(
        "The largest share of words changed (at least --min-changes words).", minimum=0.0, maximum=1.0))
    min_changes: int = field(default=4, metadata=option("Words an input may always change.", minimum=1))
    threshold: float = field(default=0.9, metadata=option("The least sentence similarity (cosine).",
                                                          minimum=-1.0, maximum=1.0))


class A2T(RecipeSources, Recipe, name="a2t", options=A2TOptions):
    """A2T (Yoo & Qi 2021): gradient-ranked words, greedily, under POS, a 10% budget and similarity 0.9."""

    needs_sentence_encoder = True

    own_sources = ("counter-fitted",)

    def attack(self, engine, space, gold, options: A2TOptions, sentence_encoder, masked_lm) -> AttackResult:
        return a2t_attack(engine, space, gold, options.max_rate, options.min_changes, options.threshold,
                          sentence_encoder)

    def planned_calls(self, space, options: A2TOptions) -> int:
        """A gradient pass or a leave-one-out per word position, then the greedy search."""
        return greedy_calls(space, len(word_positions(space)))
