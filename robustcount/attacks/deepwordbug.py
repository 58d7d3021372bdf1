"""DeepWordBug (Gao et al. 2018): character edits to the most important words, black-box.

| | `paper` (default) | `textattack` (TextAttack 0.3.11's `deepwordbug`) |
|---|---|---|
| word score | combined score THS + TTS (temporal head: p(gold) of the words up to i minus up to i - 1; temporal tail: from i on minus from i + 1 on) | replace-1: p(gold) drop when the word becomes `[UNK]` |
| edits | substitution of one letter (the paper's experiments: "Combined Score and the Substitution Transformer", `char-substitute`) | the best of swap, substitution, deletion and insertion (`deepwordbug`) |
| search | the words in score order, each edited (the candidate with the lowest p(gold)) until the label leaves the gold one | greedy: an edit is kept only if it lowers p(gold) |

Both: the edit distance to the original at most `max_edit_distance` (30, the paper's epsilon;
summed over the changed words, which bounds the whole text's Levenshtein distance that TextAttack
measures from above), stop words left alone (TextAttack's `StopwordModification`; the paper edits
any word). The random letters are seeded (`spaces/char_edits.py`).
"""

from __future__ import annotations

from dataclasses import field

import numpy as np

from robustcount.attacks.recipe import Recipe
from robustcount.attacks.result import FAILED, AttackResult
from robustcount.attacks.search import (UNKNOWN, RecipeSources, SwapRules, follow_field, greedy_calls, greedy_swap,
                                        leave_one_out, ranked, transformation_field, word_positions)
from robustcount.options import option, options_dataclass
from robustcount.spaces.space import Point, Space
from robustcount.text import Tokens, replace_perturbed_part

METHOD = "deepwordbug"
SOURCES = {"paper": ("char-substitute",), "textattack": ("deepwordbug",)}


def levenshtein(a: str, b: str) -> int:
    """The edit distance between `a` and `b` (insertions, deletions, substitutions)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            row.append(min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = row
    return previous[-1]


def edit_distance(space: Space, point: Point) -> int:
    """The edit distances of the changed words of `point`, summed."""
    return sum(levenshtein(space.positions[p].original, space.positions[p].candidates[c]) for p, c in point)


def combined_scores(engine, space: Space, positions: list[int], gold: int) -> np.ndarray:
    """The paper's combined score of each position's word: THS + TTS (lambda = 1), from the
    model's p(gold) on every prefix and suffix of the words (2n + 2 texts, one engine batch)."""
    tokens = space.tokens
    n = len(tokens.words)
    prefixes = [Tokens(tokens.words[:i], (*tokens.separators[:i], "")).join() for i in range(n + 1)]
    suffixes = [Tokens(tokens.words[i:], ("", *tokens.separators[i + 1:])).join() for i in range(n + 1)]
    probs = engine.predict_proba([replace_perturbed_part(space.item, t) for t in prefixes + suffixes])[:, gold]
    head, tail = probs[:n + 1], probs[n + 1:]
    scores = []
    for position in positions:
        i = space.positions[position].index
        scores.append((head[i + 1] - head[i]) + (tail[i] - tail[i + 1]))
    return np.array(scores)


def deepwordbug_attack(engine, space, gold, follow: str = "paper", max_edit_distance: int = 30) -> AttackResult:
    """DeepWordBug on the word positions of `space` (see the module docstring)."""
    positions = word_positions(space)
    if not positions:
        return AttackResult(METHOD, FAILED, space.item, gold, reason="no word of the input can change")
    if follow == "paper":
        scores = combined_scores(engine, space, positions, gold)
    else:
        scores = leave_one_out(engine, space, positions, gold, UNKNOWN)

    def allowed(position, trials):
        return np.array([edit_distance(space, t) <= max_edit_distance for t in trials], dtype=bool)

    return greedy_swap(METHOD, engine, space, gold, ranked(positions, scores),
                       SwapRules(allowed, always_commit=follow == "paper"))


@options_dataclass
class DeepWordBugOptions:
    follow: str = follow_field()
    transformation: str = transformation_field()
    max_edit_distance: int = field(default=30, metadata=option(
        "The most character edits in all (the paper's epsilon).", minimum=1))


class DeepWordBug(RecipeSources, Recipe, name="deepwordbug", options=DeepWordBugOptions):
    """DeepWordBug (Gao et al. 2018): character edits to the words that score highest, greedily."""

    def sources(self, options: DeepWordBugOptions) -> tuple[str, ...]:
        return SOURCES[options.follow]

    def attack(self, engine, space, gold, options: DeepWordBugOptions, sentence_encoder, masked_lm) -> AttackResult:
        return deepwordbug_attack(engine, space, gold, options.follow, options.max_edit_distance)

    def planned_calls(self, space, options: DeepWordBugOptions) -> int:
        """The word scores (every prefix and suffix of the words in the paper's combined score, a
        leave-one-out per word position in textattack's), then the greedy search."""
        if options.follow == "paper":
            return greedy_calls(space, 2 * len(space.tokens.words) + 2)
        return greedy_calls(space, len(word_positions(space)))
