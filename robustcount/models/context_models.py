"""The helper models of the contextual space filters (`spaces/context.py`), each behind a query
engine of its own, so that their calls are counted apart from the attacked model's: the packaged
SmolLM2-135M as a substitution scorer (`llm/substitution.py`), the packaged sentence encoder, and the
same encoder's contextual word embeddings (`minilm.MiniLMWordEncoder`).
Each is loaded on first use; `identity` is what a space's definition records of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property, lru_cache

import numpy as np

from robustcount.models.base import SubstitutionQuery
from robustcount.models.engine import QueryEngine
from robustcount.models.minilm import WORD_MARK, MiniLMSentenceEncoder, MiniLMWordEncoder, mark, weights_digest
from robustcount.models.llm.substitution import substitution_engine
from robustcount.models.sentence_encoder import sentence_engine
from robustcount.text import Tokens, words_between


class ContextModels:
    """A language model's and a sentence encoder's judgement of one substitution in its text."""

    @cached_property
    def lm(self) -> QueryEngine:
        return substitution_engine()

    @cached_property
    def encoder(self) -> QueryEngine:
        """Without a cache, so that the batches of a position's texts, and their floating-point
        results, depend on that position alone (the LM's answer to a query does already)."""
        return sentence_engine(cache_size=0)

    @cached_property
    def word_encoder(self) -> QueryEngine:
        """Without a cache, as `encoder`."""
        return sentence_engine(MiniLMWordEncoder(), cache_size=0)

    def log_likelihood_changes(self, tokens: Tokens, index: int, candidates: Sequence[str], window: int) -> np.ndarray:
        """log p(text with word `index` replaced by each candidate) - log p(text), over the word
        and the `window` LM tokens after it (`llm/substitution.py`)."""
        pieces = (*(s + w for s, w in zip(tokens.separators, tokens.words)), tokens.separators[-1])
        separator = tokens.separators[index]
        return self.lm.substitution_scores(
            SubstitutionQuery(pieces, index, tuple(separator + c for c in candidates), window))

    def similarities(self, tokens: Tokens, index: int, candidates: Sequence[str], window: int) -> np.ndarray:
        """Cosine similarity of the `window` words centred on word `index` (the text's words
        `index - window // 2` to `index + window // 2`) with the same words, word `index`
        replaced by each candidate: the original and the variants embedded in one request (one
        forward batch up to the engine's batch size)."""
        start, stop = max(0, index - window // 2), min(len(tokens.words), index + window // 2 + 1)
        words = list(tokens.words)
        original = words_between(tokens, words, start, stop)
        variants = [words_between(tokens, [*words[:index], c, *words[index + 1:]], start, stop) for c in candidates]
        if not variants:
            return np.zeros(0)
        embeddings = self.encoder.embed([original, *variants])
        return embeddings[1:] @ embeddings[0]

    def word_similarities(self, tokens: Tokens, index: int, candidates: Sequence[str], window: int) -> np.ndarray:
        """Cosine of the encoder's contextual embedding of word `index` in the `window` words centred
        on it (as `similarities`) with that of each candidate in the same words, the word replaced
        by it (`minilm.MiniLMWordEncoder`), embedded in one request as `similarities` does. A
        `WORD_MARK` the text itself holds is read as a space, so that it marks nothing."""
        start, stop = max(0, index - window // 2), min(len(tokens.words), index + window // 2 + 1)
        unmarked = Tokens(*(tuple(part.replace(WORD_MARK, " ") for part in parts)
                            for parts in (tokens.words, tokens.separators)))
        words = list(unmarked.words)

        def text(word: str) -> str:
            return words_between(unmarked, [*words[:index], mark(word.replace(WORD_MARK, " ")), *words[index + 1:]],
                                 start, stop)

        if not candidates:
            return np.zeros(0)
        embeddings = self.word_encoder.embed([text(words[index]), *map(text, candidates)])
        return embeddings[1:] @ embeddings[0]

    def identity(self, lm: bool, encoder: bool, word_encoder: bool = False) -> dict:
        """The models a space's definition records (name and digest), those asked for only."""
        found = {}
        if lm:
            found["lm"] = {"name": self.lm.model.name, "digest": self.lm.digest()}
        for key, used in (("encoder", encoder), ("word_encoder", word_encoder)):
            if used:
                model = getattr(self, key).model
                digest = getattr(self, key).digest() or (
                    weights_digest() if isinstance(model, (MiniLMSentenceEncoder, MiniLMWordEncoder)) else None)
                found[key] = {"name": model.name, "digest": digest}
        return found


@lru_cache(maxsize=1)
def context_models() -> ContextModels:
    """This process's helper models of the contextual filters (loaded on first use)."""
    return ContextModels()


def context_for(filters) -> ContextModels | None:
    """The helper models that `filters` (a `spaces.build.Filters`) score with, or None when they
    score nothing."""
    return context_models() if any(filters.needs_models) else None
