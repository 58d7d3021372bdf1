"""The query engine: the only way algorithms call a model, helper models included.

It wraps a classifier (`predict_proba`) or a sentence encoder (`embed`, for attack constraints).
It batches, deduplicates and caches answers by input (an LRU cache with a bounded number of
entries), runs uncached inputs sorted by length (less padding), and counts honestly:

- `candidates`: inputs asked for, every repetition included;
- `duplicates`: repeats of an input within the same request;
- `cache_hits`: inputs answered from the cache;
- `model_calls`: inputs actually run through the model (candidates = duplicates + cache_hits +
  model_calls);
- `model_batches`, `model_seconds`: forward batches and the wall time spent inside the model;
- `gradient_calls`: forward-and-backward passes for white-box sensitivities.

A budget caps the model calls (plus gradient calls) of one example. A request that would exceed it
raises `BudgetExhausted` before anything runs, so no partial answer escapes.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np
from cachetools import LRUCache

from robustcount.errors import BudgetExhausted, RobustcountError, TimeLimitReached
from robustcount.models.base import (
    Classifier,
    GradientClassifier,
    SentenceEncoder,
    check_embeddings,
    check_probabilities,
    model_digest,
)
from robustcount.text import Input

DEFAULT_BATCH_SIZE = 64
"""Inputs per forward batch unless told otherwise (`--batch-size`)."""
FINGERPRINT_TEXTS = ("a good, gripping and well-made film", "a bad, dull and lifeless mess", "not bad at all",
                     "I would not watch it again", "the plot is thin but the cast is fun", "it was fine")
"""Texts whose answers identify a model known only by its code (see `QueryEngine.digest`)."""


@dataclass
class QueryStats:
    """Counters of one engine, or of one example (see the module docstring)."""

    candidates: int = 0
    duplicates: int = 0
    cache_hits: int = 0
    model_calls: int = 0
    model_batches: int = 0
    model_seconds: float = 0.0
    gradient_calls: int = 0

    def as_dict(self) -> dict:
        return asdict(self)

    def __add__(self, other: QueryStats) -> QueryStats:
        return QueryStats(**{k: v + getattr(other, k) for k, v in asdict(self).items()})

    def __sub__(self, other: QueryStats) -> QueryStats:
        return QueryStats(**{k: v - getattr(other, k) for k, v in asdict(self).items()})


class QueryEngine:
    """Batched, cached, counted access to `model` (a Classifier or a SentenceEncoder).

    `batch_size` inputs go to the model at a time; `cache_size` bounds the number of cached
    answers (0 disables the cache); `budget` is the default per-example cap on model calls.
    """

    def __init__(
        self,
        model: Classifier | SentenceEncoder,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        cache_size: int = 100_000,
        budget: int | None = None,
    ):
        if batch_size < 1:
            raise RobustcountError(f"batch size must be at least 1, got {batch_size}")
        if cache_size < 0:
            raise RobustcountError(f"cache size must be non-negative, got {cache_size}")
        self.model = model
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.default_budget = budget
        self.total = QueryStats()
        self._example: QueryStats | None = None
        self._budget: int | None = None
        self._deadline: float | None = None
        self._time_limit: float | None = None
        self._cache: LRUCache | None = LRUCache(maxsize=cache_size) if cache_size else None
        self._digest: tuple[str | None] | None = None

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.model.labels)

    @property
    def supports_gradients(self) -> bool:
        return isinstance(self.model, GradientClassifier) and bool(self.model.has_gradients)

    @contextmanager
    def example(self, budget: int | None = None, time_limit: float | None = None) -> Iterator[QueryStats]:
        """Count the work of one example apart, under `budget` model calls (default: the engine's)
        and `time_limit` seconds (None or 0: none; the example's first request always runs): a
        request after either is refused before it runs (`BudgetExhausted`, `TimeLimitReached`)."""
        if self._example is not None:
            raise RuntimeError("examples do not nest")
        self._time_limit = time_limit or None
        self._deadline = None if self._time_limit is None else time.monotonic() + self._time_limit
        self._example = QueryStats()
        self._budget = self.default_budget if budget is None else budget
        try:
            yield self._example
        finally:
            self._example, self._budget, self._deadline = None, None, None

    def _count(self, **increments) -> None:
        for stats in (self.total, self._example):
            if stats is not None:
                for key, value in increments.items():
                    setattr(stats, key, getattr(stats, key) + value)

    def _check_budget(self, requested: int) -> None:
        if self._example is None or requested == 0:
            return
        used = self._example.model_calls + self._example.gradient_calls
        if self._deadline is not None and used and time.monotonic() > self._deadline:  # the first answer is free
            raise TimeLimitReached(self._time_limit)
        if self._budget is not None and used + requested > self._budget:
            raise BudgetExhausted(used, self._budget, requested)

    def predict_proba(self, inputs: Sequence[Input]) -> np.ndarray:
        """Probabilities for `inputs`, shape (len(inputs), len(labels))."""
        k, who = len(self.labels), _name(self.model)
        return self._answer(inputs, k, lambda chunk: check_probabilities(self.model.predict_proba(chunk), len(chunk),
                                                                          k, who))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm sentence embeddings of `texts`, shape (len(texts), dimensions), from an encoder."""
        if not isinstance(self.model, SentenceEncoder):
            raise RobustcountError(f"{_name(self.model)} is not a sentence encoder")
        width, who = self.model.dimensions, _name(self.model)
        return self._answer(texts, width, lambda chunk: check_embeddings(self.model.embed(chunk), len(chunk), width,
                                                                          who))

    def _answer(self, inputs: Sequence[Input], width: int, run: Callable[[list], np.ndarray]) -> np.ndarray:
        """Rows for `inputs` from the cache or from `run` (the model on a batch), counted."""
        result = np.empty((len(inputs), width))
        pending: dict[Input, list[int]] = {}
        hits = duplicates = 0
        for i, item in enumerate(inputs):
            if item in pending:
                pending[item].append(i)
                duplicates += 1
            elif self._cache is not None and item in self._cache:
                result[i] = self._cache[item]  # a lookup marks the entry most recently used
                hits += 1
            else:
                pending[item] = [i]
        self._check_budget(len(pending))
        self._count(candidates=len(inputs), duplicates=duplicates, cache_hits=hits)
        todo = sorted(pending, key=_length)
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start : start + self.batch_size]
            began = time.perf_counter()
            rows = run(chunk)
            self._count(model_calls=len(chunk), model_batches=1, model_seconds=time.perf_counter() - began)
            for item, row in zip(chunk, rows):
                result[pending[item]] = row
                if self._cache is not None:
                    self._cache[item] = row.copy()
        return result

    def digest(self) -> str | None:
        """The model's identity in run headers and certificates: the digest of its weights (torch and
        scikit-learn models); for a model known only by its code (a function), that code's digest
        combined with the model's answers on FINGERPRINT_TEXTS, so that the same code loading other
        weights differs (the answers are counted as model calls, never cached). None when unknown."""
        if self._digest is None:
            self._digest = (model_digest(self.model),)
            if self._digest[0] is not None and not getattr(self.model, "digest_covers_weights", True):
                self._digest = (self._fingerprint(self._digest[0]),)
        return self._digest[0]

    def _fingerprint(self, code_digest: str) -> str:
        texts = list(FINGERPRINT_TEXTS)
        began = time.perf_counter()
        try:
            probs = check_probabilities(self.model.predict_proba(texts), len(texts), len(self.labels), _name(self.model))
        except Exception:  # a model for pairs only, say: its code alone names it
            return code_digest
        finally:
            self._count(model_calls=len(texts), model_batches=1, model_seconds=time.perf_counter() - began)
        return hashlib.sha256(code_digest.encode() + np.round(probs, 6).tobytes()).hexdigest()

    def predict(self, inputs: Sequence[Input]) -> np.ndarray:
        """The index of the most probable label of each input."""
        return self.predict_proba(inputs).argmax(axis=1)

    def word_saliency(self, item: Input, spans, label: int) -> np.ndarray:
        """The model's per-span gradient saliency (see `GradientClassifier`), counted and budgeted."""
        if not self.supports_gradients:
            raise RobustcountError(f"{_name(self.model)} does not expose gradients; use leave-one-out")
        self._check_budget(1)
        began = time.perf_counter()
        scores = self.model.word_saliency(item, spans, label)
        self._count(gradient_calls=1, model_seconds=time.perf_counter() - began)
        return np.asarray(scores, dtype=np.float64)

    def clear_cache(self) -> None:
        if self._cache is not None:
            self._cache.clear()


def _length(item: Input) -> int:
    return len(item[0]) + len(item[1]) if isinstance(item, tuple) else len(item)


def _name(model) -> str:
    return getattr(model, "name", type(model).__name__)
