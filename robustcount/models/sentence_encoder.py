"""Sentence encoders for attack constraints (sentence similarity), as models the query engine runs.

The default encoder is the packaged all-MiniLM-L6-v2 (mean pooling, L2-normalised), offline.
The Universal Sentence Encoder that TextFooler's paper used loads through tensorflow-hub for users
who are online and install tensorflow and tensorflow-hub themselves. `cosine` compares texts
through an engine, so that every encoder call is counted like any model call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine

USE_URL = "https://tfhub.dev/google/universal-sentence-encoder-large/3"


class _LazyEncoder:
    """A sentence encoder whose weights load on its first batch."""

    def __init__(self):
        self._model = None

    def embed(self, batch: Sequence[str]) -> np.ndarray:
        if self._model is None:
            self._model = self._load()
        return self._encode(self._model, list(batch))


class MiniLMSentenceEncoder(_LazyEncoder):
    """all-MiniLM-L6-v2 sentence embeddings (the packaged weights)."""

    name, dimensions = "all-MiniLM-L6-v2", 384

    def _load(self):
        from robustcount.models.minilm import MeanPooledClassifier, load_encoder

        encoder, tokenizer = load_encoder()
        return MeanPooledClassifier(encoder, torch.nn.Identity()).eval(), tokenizer

    @staticmethod
    def _encode(model, batch: list[str]) -> np.ndarray:
        from robustcount.models.minilm import MAX_LENGTH

        network, tokenizer = model
        with torch.inference_mode():
            encoded = tokenizer(batch, padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
            return network.embed(**encoded).numpy()


class UniversalSentenceEncoder(_LazyEncoder):
    """The Universal Sentence Encoder (large, v3, as TextFooler's code) through tensorflow-hub;
    needs network access on first use and `pip install tensorflow tensorflow-hub`."""

    name, dimensions = "universal-sentence-encoder-large/3", 512

    def _load(self):
        try:
            import tensorflow_hub as hub
        except ImportError as err:
            raise RobustcountError("the Universal Sentence Encoder needs: pip install tensorflow tensorflow-hub") from err
        try:
            return hub.load(USE_URL)
        except Exception as err:  # tensorflow-hub raises many kinds when offline
            raise RobustcountError(f"cannot load {USE_URL} (it needs network access): {err}") from err

    @staticmethod
    def _encode(model, batch: list[str]) -> np.ndarray:
        vectors = np.asarray(model(batch))
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def sentence_engine(encoder=None, cache_size: int = 50_000) -> QueryEngine:
    """A query engine over `encoder` (default: all-MiniLM-L6-v2)."""
    return QueryEngine(encoder or MiniLMSentenceEncoder(), cache_size=cache_size)


def cosine(engine: QueryEngine, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Row-wise cosine similarity of the texts `a[i]` and `b[i]` (unit-norm embeddings)."""
    if not a:
        return np.zeros(0)
    return np.einsum("ij,ij->i", engine.embed(list(a)), engine.embed(list(b)))
