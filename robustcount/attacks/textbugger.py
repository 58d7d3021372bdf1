"""TextBugger (Li et al. 2019), black-box: character bugs and word substitutions to the most
important words, under a sentence-similarity check.

| | `paper` (default) | `textattack` (TextAttack 0.3.11's `textbugger`) |
|---|---|---|
| word score | p(gold) drop when the word is deleted (Algorithm 2, one sentence) | the same (`wir_method="delete"`) |
| bugs | insert a space, delete, swap (inner characters), Sub-C (a look-alike or QWERTY neighbour), Sub-W (5 nearest GloVe words): `bug-*`, `glove-top5` | the same three, Sub-C as one look-alike per character (its homoglyph table; here the visual table's first), Sub-W the 5 nearest counter-fitted words: `bug-homoglyph`, `counter-fitted-top5` |
| choice | the bug that lowers p(gold) most is put in; the attack fails as soon as the text's similarity to the original drops to epsilon or below | bugs below the similarity threshold are dropped first; the best is kept only if it lowers p(gold); of several adversaries, the most similar |
| similarity | cosine of sentence embeddings, epsilon = 0.8 | angular similarity 1 - arccos(cosine) / pi >= 0.8 (cosine >= 0.81) |

Both: all-MiniLM-L6-v2 sentence embeddings instead of the Universal Sentence Encoder, through
their own query engine; stop words left alone (TextAttack's `StopwordModification`). The paper's
white-box variant (words ranked by the Jacobian) is not offered.
"""

from __future__ import annotations

from dataclasses import field

from robustcount.attacks.recipe import Recipe
from robustcount.attacks.result import FAILED, AttackResult
from robustcount.attacks.search import (RecipeSources, SwapRules, follow_field, greedy_calls, greedy_swap,
                                        leave_one_out, ranked, similarity, transformation_field, word_positions)
from robustcount.models.sentence_encoder import sentence_engine
from robustcount.options import option, options_dataclass

METHOD = "textbugger"
SOURCES = {"paper": ("bug-insert", "bug-delete", "bug-swap", "bug-sub-c", "glove-top5"),
           "textattack": ("bug-insert", "bug-delete", "bug-swap", "bug-homoglyph", "counter-fitted-top5")}


def textbugger_attack(engine, space, gold, follow: str = "paper", epsilon: float = 0.8, encoder=None) -> AttackResult:
    """TextBugger on the word positions of `space` (see the module docstring); `encoder` is the
    sentence encoder's query engine (default: a new one over all-MiniLM-L6-v2)."""
    encoder = encoder or sentence_engine()
    positions = word_positions(space)
    if not positions:
        return AttackResult(METHOD, FAILED, space.item, gold, reason="no word of the input can change")
    order = ranked(positions, leave_one_out(engine, space, positions, gold, None))
    angular = follow == "textattack"

    def similar(points):
        return similarity(encoder, space, points, angular)

    if follow == "paper":
        def give_up(point):
            value = float(similar([point])[0])
            return None if value > epsilon else f"the similarity fell to {value:.3f}, at most epsilon {epsilon}"

        return greedy_swap(METHOD, engine, space, gold, order, SwapRules(always_commit=True, give_up=give_up))
    return greedy_swap(METHOD, engine, space, gold, order, SwapRules(
        lambda position, trials: similar(trials) >= epsilon, similarity_of=similar))


@options_dataclass
class TextBuggerOptions:
    follow: str = follow_field()
    transformation: str = transformation_field()
    epsilon: float = field(default=0.8, metadata=option(
        "The sentence-similarity threshold (cosine for the paper, angular for textattack).", minimum=-1.0,
        maximum=1.0))


class TextBugger(RecipeSources, Recipe, name="textbugger", options=TextBuggerOptions):
    """TextBugger (Li et al. 2019): character bugs and nearest words, greedily, under sentence similarity."""

    needs_sentence_encoder = True

    def sources(self, options: TextBuggerOptions) -> tuple[str, ...]:
        return SOURCES[options.follow]

    def attack(self, engine, space, gold, options: TextBuggerOptions, sentence_encoder, masked_lm) -> AttackResult:
        return textbugger_attack(engine, space, gold, options.follow, options.epsilon, sentence_encoder)

    def planned_calls(self, space, options: TextBuggerOptions) -> int:
        """A leave-one-out per word, then the greedy search."""
        return greedy_calls(space, len(word_positions(space)))
