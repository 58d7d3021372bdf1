"""Sentence encoders for attack constraints (sentence similarity), as models the query engine runs.

The default encoder is the packaged all-MiniLM-L6-v2 (mean pooling, L2-normalised), offline.
The Universal Sentence Encoder that TextFooler's paper used loads through tensorflow-hub for users
who are online and install tensorflow and tensorflow-hub themselves. `cosine` compares texts
through an engine, so that every encoder call is counted like any model call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine

USE_URL = "https://tfhub.dev/google/universal-sentence-encoder-large/3"


class MiniLMSentenceEncoder:
    """all-MiniLM-L6-v2 sentence embeddings (the packaged weights), loaded on first use."""

    name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self):
        self._model = None

    def embed(self, batch: Sequence[str]) -> np.ndarray:
        import torch

        from robustcount.models.minilm import MAX_LENGTH, MeanPooledClassifier, load_encoder

        if self._model is None:
            encoder, tokenizer = load_encoder()
            self._model = (MeanPooledClassifier(encoder, torch.nn.Identity()).eval(), tokenizer)
        model, tokenizer = self._model
        with torch.inference_mode():
            encoded = tokenizer(list(batch), padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
            return model.embed(**encoded).numpy()


class UniversalSentenceEncoder:
    """The Universal Sentence Encoder (large, v3, as TextFooler's code) through tensorflow-hub;
    needs network access on first use and `pip install tensorflow tensorflow-hub`."""

    name = "universal-sentence-encoder-large/3"
    dimensions = 512

    def __init__(self):
        self._model = None

    def embed(self, batch: Sequence[str]) -> np.ndarray:
        if self._model is None:
            try:
                import tensorflow_hub as hub
            except ImportError as err:
                raise RobustcountError("the Universal Sentence Encoder needs: pip install tensorflow tensorflow-hub") from err
            try:
                self._model = hub.load(USE_URL)
            except Exception as err:  # tensorflow-hub raises many kinds when offline
                raise RobustcountError(f"cannot load {USE_URL} (it needs network access): {err}") from err
        vectors = np.asarray(self._model(list(batch)))
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def sentence_engine(encoder=None, cache_size: int = 50_000) -> QueryEngine:
    """A query engine over `encoder` (default: all-MiniLM-L6-v2)."""
    return QueryEngine(encoder or MiniLMSentenceEncoder(), cache_size=cache_size)


def cosine(engine: QueryEngine, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Row-wise cosine similarity of the texts `a[i]` and `b[i]` (unit-norm embeddings)."""
    if not a:
        return np.zeros(0)
    return np.einsum("ij,ij->i", engine.embed(list(a)), engine.embed(list(b)))
