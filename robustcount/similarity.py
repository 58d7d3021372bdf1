"""Sentence similarity for attack constraints: cosine of sentence embeddings.

The default encoder is the packaged all-MiniLM-L6-v2 (mean pooling, L2-normalised), offline.
The Universal Sentence Encoder that TextFooler's paper used loads through tensorflow-hub for users
who are online and install tensorflow and tensorflow-hub themselves.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from robustcount.errors import RobustcountError

USE_URL = "https://tfhub.dev/google/universal-sentence-encoder-large/3"


class SentenceEncoder:
    """Unit-norm sentence embeddings with a bounded cache; `cosine(a, b)` row by row."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, cache_size: int = 50_000):
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._model = None

    def _encode(self, texts: list[str]) -> np.ndarray:
        import torch

        from robustcount.models.minilm import MAX_LENGTH, MeanPooledClassifier, load_encoder

        if self._model is None:
            encoder, tokenizer = load_encoder()
            self._model = (MeanPooledClassifier(encoder, torch.nn.Identity()).eval(), tokenizer)
        model, tokenizer = self._model
        with torch.inference_mode():
            enc = tokenizer(texts, padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
            return model.embed(**enc).numpy()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        for start in range(0, len(missing), 64):
            chunk = missing[start : start + 64]
            for text, vector in zip(chunk, self._encode(chunk)):
                self._cache[text] = vector
                if len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 384))

    def clear_cache(self) -> None:
        self._cache.clear()

    def cosine(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        return np.einsum("ij,ij->i", self.embed(a), self.embed(b))


class UniversalSentenceEncoder(SentenceEncoder):
    """The Universal Sentence Encoder (large, v3, as TextFooler's code) through tensorflow-hub;
    needs network access on first use and `pip install tensorflow tensorflow-hub`."""

    name = "universal-sentence-encoder-large/3"

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self._model is None:
            try:
                import tensorflow_hub as hub
            except ImportError as err:
                raise RobustcountError("the Universal Sentence Encoder needs: pip install tensorflow tensorflow-hub") from err
            try:
                self._model = hub.load(USE_URL)
            except Exception as err:  # tensorflow-hub raises many kinds when offline
                raise RobustcountError(f"cannot load {USE_URL} (it needs network access): {err}") from err
        vectors = np.asarray(self._model(texts))
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
