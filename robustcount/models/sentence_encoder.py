"""Sentence encoders for attack constraints (sentence similarity), as models the query engine runs.

The sentence encoder is the packaged all-MiniLM-L6-v2 (`models.minilm.MiniLMSentenceEncoder`),
offline; any `SentenceEncoder` of the user's runs the same way. `cosine` compares texts through
an engine, so that every sentence-encoder call is counted like any model call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robustcount.models.base import SentenceEncoder
from robustcount.models.engine import QueryEngine
from robustcount.models.minilm import MiniLMSentenceEncoder


def sentence_engine(sentence_encoder: SentenceEncoder | None = None, cache_size: int = 50_000) -> QueryEngine:
    """A query engine over `sentence_encoder` (default: all-MiniLM-L6-v2)."""
    return QueryEngine(sentence_encoder or MiniLMSentenceEncoder(), cache_size=cache_size)


def cosine(engine: QueryEngine, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Row-wise cosine similarity of the texts `a[i]` and `b[i]` (unit-norm embeddings)."""
    if not a:
        return np.zeros(0)
    return np.einsum("ij,ij->i", engine.embed(list(a)), engine.embed(list(b)))
