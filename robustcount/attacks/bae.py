"""BAE-R (Garg & Ramakrishnan 2020), the word replacement of BAE, as TextAttack implements it
(`BAEGarg2019`): each word, by importance, masked and replaced by the masked LM's candidates.

| | `textattack` (default) | `paper` |
|---|---|---|
| candidates | the 50 most probable whole words at the mask (probability at least 5e-4) | the same |
| importance | delete the word | the same |
| part of speech | same tag, NOUN and VERB compatible | the same |
| similarity | cosine >= 0.936 over the 15 words around the change, against the original; texts under 15 words pass (the authors' code, after TextFooler's, per their correspondence with TextAttack) | cosine >= 0.8 of the whole texts, against the original (the paper's text) |
| a flip | the most similar flipping candidate | the same |

The search is `masked_lm_swap`'s. The masked LM is `--masked-lm` (default the packaged
`minilm-mlm`, in place of the paper's BERT-base), sentence embeddings come from all-MiniLM-L6-v2
in place of the Universal Sentence Encoder; both have query engines of their own, counted apart
from the attacked model's. The paper's insertion modes (BAE-I, R/I, R+I) are not offered: a space
of robustcount changes positions, and an insertion adds one.
"""

from __future__ import annotations

from dataclasses import field

from robustcount.attacks.masked_lm_swap import MaskedLMRecipe, SwapRules
from robustcount.attacks.recipe import Recipe
from robustcount.attacks.search import follow_field
from robustcount.models.masked_lm import DEFAULT_MASKED_LM
from robustcount.options import option, options_dataclass


def candidates_field(default: int):
    return field(default=default, metadata=option("Candidates the masked LM proposes per word (K).", minimum=1))


def masked_lm_field():
    return field(default=DEFAULT_MASKED_LM, metadata=option(
        f"The masked LM: {DEFAULT_MASKED_LM} (packaged), a transformers checkpoint directory, or a hub name in "
        "the local Hugging Face cache.", names=("--masked-lm",)))


def similarity_check_field(help: str = "Without the sentence-similarity check."):
    return field(default=True, metadata=option(help, names=("--no-similarity-check",), flag=True, invert=True))


@options_dataclass
class BAEOptions:
    follow: str = follow_field("textattack",
        "textattack: as TextAttack (and the authors' code) runs it (windowed similarity >= 0.936); paper: as the "
        "paper says (whole-text similarity >= 0.8).")
    candidates: int = candidates_field(50)
    masked_lm: str = masked_lm_field()
    pos_check: bool = field(default=True, metadata=option(
        "Without the part-of-speech check.", names=("--no-pos-check",), flag=True, invert=True))
    similarity_check: bool = similarity_check_field(
        "Without the sentence-similarity check (with --no-pos-check: the pure greedy search).")


class BAE(MaskedLMRecipe, Recipe, name="bae", options=BAEOptions):
    """BAE-R: words by importance, each masked and replaced by a masked LM's candidates (TextAttack's bae)."""

    def rules(self, options: BAEOptions) -> SwapRules:
        paper = options.follow == "paper"
        return SwapRules(masked=True, candidates=options.candidates, min_confidence=5e-4, importance="",
                         pos_check=options.pos_check,
                         similarity=(0.8 if paper else 0.936338023) if options.similarity_check else None,
                         window=None if paper else 15, final_similarity=False, max_share=None, rank_pieces=True)
