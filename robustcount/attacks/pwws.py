"""PWWS, probability weighted word saliency (Ren et al. 2019), on any space of word substitutions.

Each word i scores H(i) = softmax(S)_i x dP*_i: its saliency S_i = p(gold | x) - p(gold | x with
word i replaced by an unknown token), softmax-normalised over the words, times dP*_i = p(gold | x)
- p(gold | x*_i), where x*_i puts in the candidate of word i that lowers p(gold) most (one query
per candidate). Words are then replaced in decreasing H until the label leaves the gold one.

| | `paper` (default) | `textattack` (TextAttack 0.3.11's `weighted-saliency` greedy search) |
|---|---|---|
| dP*_i | p(gold \\| x) - p(gold \\| x*_i) | 1 - p(gold \\| x*_i): dP*_i plus 1 - p(gold \\| x) for every word, which reorders the products |
| the replacement | w*_i, chosen once against the clean text, always put in | the best candidate of word i in the current text, put in only if it lowers p(gold) |

Both: WordNet synonyms (the `wordnet` source, Open English WordNet 2024; the paper and TextAttack
use NLTK's WordNet 3.0, and TextAttack lemmatises the word first, so it finds synonyms of
inflected forms that this lemma-keyed source does not), stop words left alone, the unknown token
`[UNK]`. The paper's named-entity substitution (which needs the entities of the whole data set
by label) is left out, as in TextAttack.
"""

from __future__ import annotations

import numpy as np

from robustcount.attacks.recipe import Recipe
from robustcount.attacks.result import FAILED, AttackResult, success
from robustcount.attacks.search import (UNKNOWN, RecipeSources, follow_field, greedy_calls, greedy_swap, leave_one_out,
                                        point_of, ranked, transformation_field, trials_at, word_positions)
from robustcount.goal import evaluate_all
from robustcount.options import options_dataclass

METHOD = "pwws"


@options_dataclass
class PWWSOptions:
    follow: str = follow_field()
    transformation: str = transformation_field()


def pwws_attack(engine, space, gold, follow: str = "paper") -> AttackResult:
    """PWWS on the word positions of `space` (see the module docstring)."""
    positions = word_positions(space)
    if not positions:
        return AttackResult(METHOD, FAILED, space.item, gold, reason="no word of the input can change")
    saliency = leave_one_out(engine, space, positions, gold, UNKNOWN)
    base = float(engine.predict_proba([space.item])[0][gold])
    best_candidate, drop = {}, []
    for position in positions:
        evaluated = evaluate_all(engine, space, trials_at({}, position, space), gold)
        pick = int(np.argmin(evaluated.probs[:, gold]))
        best_candidate[position] = pick + 1
        drop.append(base - evaluated.probs[pick, gold] if follow == "paper" else 1 - evaluated.probs[pick, gold])
    weights = np.exp(saliency - saliency.max())
    scores = weights / weights.sum() * np.array(drop)
    order = ranked(positions, scores)
    if follow == "textattack":
        return greedy_swap(METHOD, engine, space, gold, order)
    state = {}
    for position in order:
        state[position] = best_candidate[position]
        if evaluate_all(engine, space, [point_of(state)], gold).adversarial[0]:
            return success(METHOD, engine, space, point_of(state), gold)
    return AttackResult(METHOD, FAILED, space.item, gold, reason="every word replaced, the gold label kept")


class PWWS(RecipeSources, Recipe, name="pwws", options=PWWSOptions):
    """PWWS (Ren et al. 2019): WordNet synonyms, words by probability weighted saliency, greedily."""

    own_sources = ("wordnet",)

    def attack(self, engine, space, gold, options: PWWSOptions, sentence_encoder, masked_lm) -> AttackResult:
        return pwws_attack(engine, space, gold, options.follow)

    def planned_calls(self, space, options: PWWSOptions) -> int:
        """The saliencies and every single substitution (`greedy_calls`), then one point per word
        (the paper) or the greedy search again (textattack)."""
        words = len(word_positions(space))
        return greedy_calls(space, words) + (words if options.follow == "paper" else greedy_calls(space, 0) - 1)
