"""BERT-Attack (Li et al. 2020): each word, by importance, replaced by the candidates a masked LM
reads at the word itself, unmasked (TextAttack's `BERTAttackLi2020`).

| | `textattack` (default) | `paper` |
|---|---|---|
| candidates | the whole words among the 48 most probable pieces at the word, the text unmasked; a word of several pieces: combinations of each piece's 48 best, in product order | the same, the combinations ranked by perplexity |
| importance | replace the word by `[UNK]` | replace it by `[MASK]` |
| words changed | at most 40% | the same |
| similarity | cosine >= 0.2 of the whole texts, against the original, at every candidate | the same threshold, checked once, on the adversary found (the authors filter finished adversaries) |
| part of speech | no check | no check |

The search is `masked_lm_swap`'s; the masked LM and the sentence encoder are BAE's (bae.py), each
with a query engine of its own. TextAttack means to rank the combinations by perplexity too, but
its code sorts a copy it throws away, so its order is the product's.
"""

from __future__ import annotations

from dataclasses import field

from robustcount.attacks.bae import candidates_field, masked_lm_field, similarity_check_field
from robustcount.attacks.masked_lm_swap import MaskedLMRecipe, SwapRules
from robustcount.attacks.recipe import Recipe
from robustcount.attacks.search import follow_field
from robustcount.options import option, options_dataclass


@options_dataclass
class BertAttackOptions:
    follow: str = follow_field("textattack",
        "textattack: as TextAttack runs it ([UNK] importance, similarity at every candidate, sub-word combinations "
        "unranked); paper: [MASK] importance, similarity on the adversary, combinations by perplexity.")
    candidates: int = candidates_field(48)
    masked_lm: str = masked_lm_field()
    max_share: float = field(default=0.4, metadata=option(
        "The most words changed, as a share of the text's words.", minimum=0.0, maximum=1.0, open_minimum=True))
    similarity_check: bool = similarity_check_field()


class BertAttack(MaskedLMRecipe, Recipe, name="bert-attack", options=BertAttackOptions):
    """BERT-Attack: words by importance, each replaced by what a masked LM reads at it, unmasked (TextAttack's bert-attack)."""

    def rules(self, options: BertAttackOptions) -> SwapRules:
        paper = options.follow == "paper"
        return SwapRules(masked=False, candidates=options.candidates, min_confidence=0.0,
                         importance="[MASK]" if paper else "[UNK]", pos_check=False,
                         similarity=0.2 if options.similarity_check else None, window=None, final_similarity=paper,
                         max_share=options.max_share, rank_pieces=paper)
