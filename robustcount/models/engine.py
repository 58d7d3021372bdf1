"""The query engine: the only way algorithms call a model, helper models included.

It wraps a classifier (`predict_proba`), a sentence encoder (`embed`, for attack constraints), a
masked language model (`fill_masks`, for the candidates of BAE and BERT-Attack) or a substitution
scorer (`substitution_scores`, for the contextual space filters). It
deduplicates and caches answers by input (`answers.py`), runs uncached inputs sorted by length
(less padding) in forward batches of at most `batch_size` inputs and MAX_BATCH_CHARACTERS
characters (a fixed rule, so that batches, and their floating-point results, are the same on every
machine), and counts honestly, per engine and per example, under an example's budget and time
limit (`accounting.py`: the counters, and how a request of long texts, a leave-one-out of a long
text, is refused between its batches once the limit has passed). At its first request it checks
that an input's answer does not depend on the other inputs of its batch (`batch_probe.py`), and
otherwise evaluates one input at a time; `batching()` says which (run headers and certificates
record it). `digest()` is the model's identity (`identity.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.models.accounting import Accounting, EngineState, QueryStats, input_characters
from robustcount.models.answers import Answers, read_alike, sort_request
from robustcount.models.base import (
    Classifier,
    GradientClassifier,
    MaskedLanguageModel,
    MaskQuery,
    SentenceEncoder,
    SubstitutionQuery,
    SubstitutionScorer,
    Window,
    WordIdsClassifier,
    check_embeddings,
    check_fills,
    check_probabilities,
    check_scores,
)
from robustcount.models.batch_probe import BATCH_INVARIANT, decide_batching
from robustcount.models.identity import identity_digest, model_name
from robustcount.text import Input

DEFAULT_BATCH_SIZE = 64
"""Inputs per forward batch unless told otherwise (`--batch-size`)."""
MAX_BATCH_CHARACTERS = 16_384
"""The most characters of input in one forward batch (about 3,000 words; one longer input runs
alone): the time limit is checked between batches, so a batch must stay short on slow models."""


class QueryEngine:
    """Batched, cached, counted access to `model` (a Classifier, a SentenceEncoder or a MaskedLanguageModel).

    `batch_size` inputs go to the model at a time (one, when the batch probe finds that answers
    depend on their batch); `cache_size` bounds the number of cached answers (0 disables the
    cache); `budget` is the default per-example cap on model calls; `clock` gives the seconds
    that time limits and `model_seconds` read (`time.perf_counter`).
    """

    def __init__(
        self,
        model: Classifier | SentenceEncoder | MaskedLanguageModel,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        cache_size: int = 100_000,
        budget: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ):
        if batch_size < 1:
            raise RobustcountError(f"batch size must be at least 1, got {batch_size}")
        if cache_size < 0:
            raise RobustcountError(f"cache size must be non-negative, got {cache_size}")
        self.model = model
        self.batch_size = batch_size
        self.default_budget = budget
        self._accounts = Accounting(clock)
        self.total = self._accounts.total
        self.probe = self._accounts.probe
        """The batch probe's model calls, batches and seconds (in `total` too, never in an example's)."""
        self._cache: Answers | None = Answers(cache_size) if cache_size else None
        self._digest: tuple[str | None] | None = None
        self._batching: str | None = None
        self._word_ids: dict[str, tuple[int, ...]] = {}

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.model.labels)

    @property
    def window(self) -> Window | None:
        """How much of an input the model reads (`Window`, the classifier's optional `window`),
        or None: all of it. Asking where it ends calls the tokenizer, never the model."""
        return getattr(self.model, "window", None)

    @property
    def supports_gradients(self) -> bool:
        return self._gradient_classifier and bool(self.model.has_gradients)

    @cached_property
    def _gradient_classifier(self) -> bool:
        """Whether the model is a `GradientClassifier` (a protocol check, slow: made once)."""
        return isinstance(self.model, GradientClassifier)

    @cached_property
    def reads_word_ids(self) -> bool:
        """Whether the model may be given inputs as word ids (`WordIdsClassifier`, `predict_proba`'s `ids`)."""
        return isinstance(self.model, WordIdsClassifier) and bool(self.model.reads_word_ids)

    def word_ids(self, word: str) -> tuple[int, ...]:
        """The model's token ids of one word (when it `reads_word_ids`), remembered; no model call."""
        found = self._word_ids.get(word)
        if found is None:
            found = self._word_ids[word] = tuple(self.model.word_ids(word))
        return found

    @contextmanager
    def example(self, budget: int | None = None, time_limit: float | None = None,
                resumed: EngineState | None = None) -> Iterator[QueryStats]:
        """Count the work of one example apart, under `budget` model calls (default: the engine's)
        and `time_limit` seconds (None or 0: none; the example's first request always runs): a
        request after either is refused before it runs (`BudgetExhausted`, `TimeLimitReached`).
        `resumed` (from `state()`) continues an example where a checkpoint left it: its counters,
        its cache and the time it had already spent."""
        stats = QueryStats(**resumed.stats) if resumed is not None else QueryStats()
        with self._accounts.counting(self.default_budget if budget is None else budget, time_limit, stats,
                                     resumed.seconds if resumed is not None else 0.0):
            if resumed is not None and self._cache is not None:
                self._cache.restore(resumed.cache)
            yield stats

    @property
    def current_example(self) -> QueryStats | None:
        """The live counters of the example under way, or None between examples."""
        return self._accounts.example

    def state(self) -> EngineState:
        """What `example(resumed=...)` needs to continue the example under way exactly: its
        counters, the cache in least-recently-used order (an example's cache holds only its own
        inputs: workers clear it between examples) and the seconds it has run."""
        example = self._accounts.example
        if example is None:
            raise RuntimeError("no example under way")
        cache = [] if self._cache is None else self._cache.as_json()
        return EngineState(example.as_dict(), cache, self._accounts.seconds())

    def predict_proba(self, inputs: Sequence[Input], ids: Sequence[Sequence[int]] | np.ndarray | None = None) -> np.ndarray:
        """Probabilities for `inputs`, shape (len(inputs), len(labels)). `ids`, for a model that
        `reads_word_ids`: each input's token ids (rows of a list, or of one integer array), which
        the model then runs on in place of the input's text (the same answers, without
        tokenizing); the cache, the counters, the budget and the batch probe are the inputs' all
        the same."""
        if ids is None:
            return self._answer(inputs, len(self.labels), self._classify)
        if isinstance(ids, np.ndarray):
            return self._answer(inputs, len(self.labels), self._classify, lambda places: self._classify_ids(ids[places]),
                                lambda places: [row.tobytes() for row in ids[places]])
        return self._answer(inputs, len(self.labels), self._classify,
                            lambda places: self._classify_ids([ids[i] for i in places]),
                            lambda places: [tuple(ids[i]) for i in places])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm sentence embeddings of `texts`, shape (len(texts), dimensions), from a sentence encoder."""
        if not isinstance(self.model, SentenceEncoder):
            raise RobustcountError(f"{model_name(self.model)} is not a sentence encoder")
        return self._answer(texts, self.model.dimensions, self._embed)

    def fill_masks(self, queries: Sequence[MaskQuery]) -> np.ndarray:
        """A masked language model's answers to `queries` (`MaskedLanguageModel.fill`)."""
        if not isinstance(self.model, MaskedLanguageModel):
            raise RobustcountError(f"{model_name(self.model)} is not a masked language model")
        return self._answer(queries, self.model.max_pieces * len(self.model.pieces), self._fill)

    def substitution_scores(self, query: SubstitutionQuery) -> np.ndarray:
        """A substitution scorer's answer to one query (`SubstitutionScorer.score`): one score per
        replacement, one model call."""
        if not isinstance(self.model, SubstitutionScorer):
            raise RobustcountError(f"{model_name(self.model)} is not a substitution scorer")
        return self._answer([query], len(query.replacements), self._score)[0]

    def _classify(self, chunk: list) -> np.ndarray:
        return check_probabilities(self.model.predict_proba(chunk), len(chunk), len(self.labels), model_name(self.model))

    def _classify_ids(self, rows: list | np.ndarray) -> np.ndarray:
        return check_probabilities(self.model.predict_proba_ids(rows), len(rows), len(self.labels), model_name(self.model))

    def _embed(self, chunk: list) -> np.ndarray:
        return check_embeddings(self.model.embed(chunk), len(chunk), self.model.dimensions, model_name(self.model))

    def _fill(self, chunk: list) -> np.ndarray:
        width = self.model.max_pieces * len(self.model.pieces)
        return check_fills(self.model.fill(chunk), len(chunk), width, model_name(self.model))

    def _score(self, chunk: list) -> np.ndarray:
        return check_scores(self.model.score(chunk), len(chunk), len(chunk[0].replacements), model_name(self.model))

    def batching(self, like: Sequence[Input] = ()) -> str:
        """How this engine evaluates its model, as run headers and certificates record it:
        BATCH_INVARIANT, or ONE_AT_A_TIME with its reason. Runs the batch probe (`batch_probe.py`)
        if no request has yet, with inputs like `like` (pairs when it holds pairs)."""
        if self._batching is None:
            run = (self._classify if isinstance(self.model, Classifier) else
                   self._fill if isinstance(self.model, MaskedLanguageModel) else
                   self._score if isinstance(self.model, SubstitutionScorer) else self._embed)
            self._check_batches(list(like), run, request=False)
        return self._batching

    def _check_batches(self, inputs: list, run: Callable[[list], np.ndarray], request: bool = True) -> None:
        """The batch probe, once, with `inputs` (a request's, or inputs like them)."""
        self._batching = decide_batching(model_name(self.model), inputs, self._accounts.timed(run, probe=True),
                                         self.batch_size, request)

    def _answer(self, inputs: Sequence[Input], width: int, run: Callable[[list], np.ndarray],
                run_pending: Callable[[list[int]], np.ndarray] | None = None,
                model_inputs: Callable[[list[int]], list] | None = None) -> np.ndarray:
        """Rows for `inputs` from the cache or from `run` (the model on a batch, as the batch probe
        runs it), counted; `run_pending`, when given, runs the inputs instead, given their places
        in `inputs` (the same answers), and `model_inputs` gives what the model reads of each
        (hashable: two inputs it reads alike get the same answer).
        The bookkeeping is per request: one pass sorts the inputs into cache hits, repeats of an
        input already asked for in the request, and inputs to run (at their first place); of those,
        one the model reads as it reads an earlier one is a repeat too, answered with its row."""
        result = np.empty((len(inputs), width))
        cache = self._cache
        first, repeats, hits = sort_request(inputs, cache, result)
        to_run, alike = first, []  # alike: (place, the place of an earlier input the model reads alike)
        if model_inputs is not None and len(first) > 1:
            to_run, alike = read_alike(first, model_inputs)
        self._accounts.check_budget(len(to_run))
        if to_run and self._batching is None:
            self._check_batches(list(to_run), run)
        self._accounts.count(candidates=len(inputs), duplicates=len(repeats) + len(alike), cache_hits=hits)
        size = self.batch_size if self._batching == BATCH_INVARIANT else 1
        todo, at = list(to_run), list(to_run.values())
        lengths = list(map(input_characters, todo))
        for batch in _forward_batches(sorted(range(len(todo)), key=lengths.__getitem__), size, lengths.__getitem__):
            chunk, places = [todo[j] for j in batch], [at[j] for j in batch]
            rows = self._accounts.forward(lambda: run(chunk) if run_pending is None else run_pending(places),
                                          len(chunk), sum([lengths[j] for j in batch]))
            result[places] = rows
            if cache is not None:
                cache.put_all(chunk, list(np.array(rows)))  # rows of one copy, apart from the model's
        if alike:
            places, sources = zip(*alike)
            result[list(places)] = result[list(sources)]
            if cache is not None:
                cache.put_all([inputs[i] for i in places], list(result[list(places)]))
        for i in repeats:
            result[i] = result[first[inputs[i]]]
        return result

    def digest(self) -> str | None:
        """The model's identity in run headers and certificates: the digest of its weights (torch and
        scikit-learn models); for a model known only by its code (a function), that code's digest
        combined with the model's answers on FINGERPRINT_TEXTS, so that the same code loading other
        weights differs (the answers are counted as model calls, never cached; `identity.py`). None
        when unknown."""
        if self._digest is None:
            self._digest = (identity_digest(self.model, self._accounts.timed(self._classify)),)
        return self._digest[0]

    def predict(self, inputs: Sequence[Input]) -> np.ndarray:
        """The index of the most probable label of each input."""
        return self.predict_proba(inputs).argmax(axis=1)

    def word_saliency(self, item: Input, spans, label: int) -> np.ndarray:
        """The model's per-span gradient saliency (see `GradientClassifier`), counted and budgeted."""
        if not self.supports_gradients:
            raise RobustcountError(f"{model_name(self.model)} does not expose gradients; use leave-one-out")
        self._accounts.check_budget(1)
        clock = self._accounts.clock
        began = clock()
        scores = self.model.word_saliency(item, spans, label)
        self._accounts.count(gradient_calls=1, model_seconds=clock() - began)
        return np.asarray(scores, dtype=np.float64)

    def clear_cache(self) -> None:
        if self._cache is not None:
            self._cache.clear()


def _forward_batches(todo: list, size: int, length_of: Callable[[Input], int] | None = None) -> Iterator[list]:
    """`todo` cut in order into batches of at most `size` inputs and MAX_BATCH_CHARACTERS
    characters (an input longer than that alone); `length_of` gives an input's characters
    (default `input_characters`)."""
    lengths = list(map(length_of or input_characters, todo))
    if len(todo) <= size and sum(lengths) <= MAX_BATCH_CHARACTERS:  # all in one batch
        if todo:
            yield list(todo)
        return
    batch, characters = [], 0
    for item, length in zip(todo, lengths):
        if batch and (len(batch) == size or characters + length > MAX_BATCH_CHARACTERS):
            yield batch
            batch, characters = [], 0
        batch.append(item)
        characters += length
    if batch:
        yield batch
