"""The query engine: the only way algorithms call a model, helper models included.

It wraps a classifier (`predict_proba`), a sentence encoder (`embed`, for attack constraints) or
a masked language model (`fill_masks`, for the candidates of BAE and BERT-Attack).
It batches, deduplicates and caches answers by input (an LRU cache with a bounded number of
entries), runs uncached inputs sorted by length (less padding), and counts honestly:

- `candidates`: inputs asked for, every repetition included;
- `duplicates`: repeats of an input within the same request, and, for a model given inputs as
  token ids (`predict_proba`'s `ids`), inputs whose ids an earlier input of the request has (two
  misspellings the model reads as the same unknown word): each such input is answered with that
  input's row and cached;
- `cache_hits`: inputs answered from the cache;
- `model_calls`: inputs actually run through the model (candidates = duplicates + cache_hits +
  model_calls for an example; the engine's totals also hold the batch probe's calls, below, and
  the digest's fingerprint);
- `model_batches`, `model_seconds`: forward batches and the wall time spent inside the model;
- `gradient_calls`: forward-and-backward passes for white-box sensitivities.

A budget caps the model calls (plus gradient calls) of one example. A request that would exceed it
raises `BudgetExhausted` before anything runs, so no partial answer escapes. A time limit is
checked before every forward batch, and a forward batch holds at most `batch_size` inputs and at
most MAX_BATCH_CHARACTERS characters (a fixed rule, so that batches, and their floating-point
results, are the same on every machine): a request of long texts (a leave-one-out of a long text)
is refused between its batches once the limit has passed, or when the model's measured speed
says that its next batch would end more than OVERRUN of the limit past it.

Batch invariance is checked at the first request (the batch probe): an input's answer must not
depend on the other inputs of its batch (padding bugs break that), or no proof about the model
holds. The probe runs inputs of very different lengths (PROBE_TEXTS, as pairs after the request's
premise when it holds pairs, and up to four of the request's own inputs) alone and in mixed-length
batches, in both orders. When a probability (an embedding coordinate, for a sentence encoder) moves by more
than BATCH_TOLERANCE, the engine says so in one warning line and from then on evaluates one input
at a time, so that every answer is the one the input gets alone. A model that refuses the probe
texts is probed with the request's own inputs alone; when those do not have two lengths, it too is
evaluated one input at a time, with a warning. `batching()` says which (run headers and
certificates record it). The probe's model calls are counted in the engine's totals and in
`probe`, never in an example's counters nor against its budget, so that an example's record does
not depend on whether it came first.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import cached_property

import numpy as np

from robustcount.errors import BudgetExhausted, RobustcountError, RobustcountWarning, TimeLimitReached
from robustcount.models.base import (
    Classifier,
    GradientClassifier,
    MaskedLanguageModel,
    MaskQuery,
    SentenceEncoder,
    Window,
    WordIdsClassifier,
    check_embeddings,
    check_fills,
    check_probabilities,
    model_digest,
)
from robustcount.text import Input

DEFAULT_BATCH_SIZE = 64
"""Inputs per forward batch unless told otherwise (`--batch-size`)."""
MAX_BATCH_CHARACTERS = 16_384
"""The most characters of input in one forward batch (about 3,000 words; one longer input runs
alone): the time limit is checked between batches, so a batch must stay short on slow models."""
OVERRUN = 0.1
"""The share of its time limit an example may run past it: a batch expected to end later is refused."""
FINGERPRINT_TEXTS = ("a good, gripping and well-made film", "a bad, dull and lifeless mess", "not bad at all",
                     "I would not watch it again", "the plot is thin but the cast is fun", "it was fine")
"""Texts whose answers identify a model known only by its code (see `QueryEngine.digest`)."""
PROBE_TEXTS = (
    "good",
    "a bad start, then a warm and moving film",
    "the story takes its time and a few scenes drag, but the two leads are good together and the quiet ending "
    "earns every one of its tears",
    "it opens with a long, dull wedding and a dozen characters we never get to know, and for most of its two hours "
    "the film seems unsure whether it wants to be a farce, a family drama or a thriller; the cast does what it can "
    "with thin material, the score is bad where it should be quiet, and by the time the plot finally moves, "
    "nobody in the audience still cares who took the money",
)
"""Texts of very different lengths (1 to 76 words) that the batch probe runs alone and together."""
BATCH_TOLERANCE = 1e-5
"""The most a probability (or an embedding coordinate) may move between batch compositions for the
engine to batch a model; beyond it, the model is evaluated one input at a time. The built-in models
move by at most 1.04e-6 in float32 (see `goal.MARGIN_TOLERANCE`, which is kept well above twice
this)."""
BATCH_INVARIANT = "batch-invariant: checked"
ONE_AT_A_TIME = "evaluated one text at a time"
"""The two answers of `QueryEngine.batching` (the second with its reason in parentheses)."""


def is_batching(value) -> bool:
    """Whether `value` is what `QueryEngine.batching` records: BATCH_INVARIANT, or ONE_AT_A_TIME
    with its reason."""
    return value == BATCH_INVARIANT or isinstance(value, str) and value.startswith(ONE_AT_A_TIME)


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
    """Batched, cached, counted access to `model` (a Classifier, a SentenceEncoder or a MaskedLanguageModel).

    `batch_size` inputs go to the model at a time (one, when the batch probe finds that answers
    depend on their batch); `cache_size` bounds the number of cached answers (0 disables the
    cache); `budget` is the default per-example cap on model calls.
    """

    def __init__(
        self,
        model: Classifier | SentenceEncoder | MaskedLanguageModel,
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
        self.default_budget = budget
        self.total = QueryStats()
        self.probe = QueryStats()
        """The batch probe's model calls, batches and seconds (in `total` too, never in an example's)."""
        self._example: QueryStats | None = None
        self._budget: int | None = None
        self._deadline: float | None = None
        self._time_limit: float | None = None
        self._cache: Answers | None = Answers(cache_size) if cache_size else None
        self._digest: tuple[str | None] | None = None
        self._batching: str | None = None
        self._began = 0.0
        self._speed = [0, 0.0]  # characters run through the model and seconds it took (forward batches)
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
        if self._example is not None:
            raise RuntimeError("examples do not nest")
        self._time_limit = time_limit or None
        spent = resumed.seconds if resumed is not None else 0.0
        self._began = time.monotonic() - spent
        self._deadline = None if self._time_limit is None else self._began + self._time_limit
        self._example = QueryStats(**resumed.stats) if resumed is not None else QueryStats()
        if resumed is not None and self._cache is not None:
            self._cache.clear()
            for item, row in resumed.cache:
                self._cache.put(_as_input(item), np.asarray(row, dtype=np.float64))
        self._budget = self.default_budget if budget is None else budget
        try:
            yield self._example
        finally:
            self._example, self._budget, self._deadline = None, None, None

    @property
    def current_example(self) -> QueryStats | None:
        """The live counters of the example under way, or None between examples."""
        return self._example

    def state(self) -> EngineState:
        """What `example(resumed=...)` needs to continue the example under way exactly: its
        counters, the cache in least-recently-used order (an example's cache holds only its own
        inputs: workers clear it between examples) and the seconds it has run."""
        if self._example is None:
            raise RuntimeError("no example under way")
        cache = [] if self._cache is None else [[_json_input(item), row.tolist()] for item, row in self._cache.items()]
        return EngineState(self._example.as_dict(), cache, time.monotonic() - self._began)

    def _count(self, probe: bool = False, **increments) -> None:
        for stats in (self.total, self.probe if probe else self._example):
            if stats is not None:
                for key, value in increments.items():
                    setattr(stats, key, getattr(stats, key) + value)

    def _check_budget(self, requested: int) -> None:
        if self._example is None or requested == 0:
            return
        used = self._example.model_calls + self._example.gradient_calls
        self._check_time(0)
        if self._budget is not None and used + requested > self._budget:
            raise BudgetExhausted(used, self._budget, requested)

    def _check_time(self, characters: int) -> None:
        """Refuse the next forward batch (of `characters`) once the example's time limit has
        passed, or when at the speed measured so far it would end more than OVERRUN of the limit
        past it. The example's first answer is free."""
        if self._example is None or self._deadline is None:
            return
        if not self._example.model_calls + self._example.gradient_calls:
            return
        run, seconds = self._speed
        expected = characters * seconds / run if run else 0.0
        now = time.monotonic()
        if now > self._deadline or now + expected > self._deadline + OVERRUN * self._time_limit:
            raise TimeLimitReached(self._time_limit)

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
            raise RobustcountError(f"{_name(self.model)} is not a sentence encoder")
        return self._answer(texts, self.model.dimensions, self._embed)

    def fill_masks(self, queries: Sequence[MaskQuery]) -> np.ndarray:
        """A masked language model's answers to `queries` (`MaskedLanguageModel.fill`)."""
        if not isinstance(self.model, MaskedLanguageModel):
            raise RobustcountError(f"{_name(self.model)} is not a masked language model")
        return self._answer(queries, self.model.max_pieces * len(self.model.pieces), self._fill)

    def _classify(self, chunk: list) -> np.ndarray:
        return check_probabilities(self.model.predict_proba(chunk), len(chunk), len(self.labels), _name(self.model))

    def _classify_ids(self, rows: list | np.ndarray) -> np.ndarray:
        return check_probabilities(self.model.predict_proba_ids(rows), len(rows), len(self.labels), _name(self.model))

    def _embed(self, chunk: list) -> np.ndarray:
        return check_embeddings(self.model.embed(chunk), len(chunk), self.model.dimensions, _name(self.model))

    def _fill(self, chunk: list) -> np.ndarray:
        width = self.model.max_pieces * len(self.model.pieces)
        return check_fills(self.model.fill(chunk), len(chunk), width, _name(self.model))

    def batching(self, like: Sequence[Input] = ()) -> str:
        """How this engine evaluates its model, as run headers and certificates record it:
        BATCH_INVARIANT, or ONE_AT_A_TIME with its reason. Runs the batch probe (module docstring)
        if no request has yet, with inputs of the kind of `like` (pairs when it holds pairs)."""
        if self._batching is None:
            run = (self._classify if isinstance(self.model, Classifier) else
                   self._fill if isinstance(self.model, MaskedLanguageModel) else self._embed)
            self._check_batches(list(like), run, request=False)
        return self._batching

    def _check_batches(self, inputs: list, run: Callable[[list], np.ndarray], request: bool = True) -> None:
        """The batch probe: decide, once, whether the model may be given batches (module docstring).
        When the probe texts fail, `inputs` are probed; their errors surface when they are a
        request's (which would fail on them anyway). The probe's time extends an example's time limit."""
        began = time.monotonic()
        try:
            self._decide_batching(inputs, run, request)
        finally:
            if self._deadline is not None:
                self._deadline += time.monotonic() - began

    def _decide_batching(self, inputs: list, run: Callable[[list], np.ndarray], request: bool) -> None:
        if self.batch_size == 1:
            self._batching = f"{ONE_AT_A_TIME} (batch size 1)"
            return
        try:
            difference = self._batch_difference(list(dict.fromkeys(_probe_inputs(inputs) + _spread(inputs))), run)
        except Exception:  # a model that takes other inputs: probe with those at hand
            probes, difference = _spread(inputs), None
            if len(probes) >= 2:
                try:
                    difference = self._batch_difference(probes, run)
                except Exception:
                    if request:
                        raise
            if difference is None:
                self._batching = f"{ONE_AT_A_TIME} (the model refuses the probe texts)"
                warnings.warn(f"{_name(self.model)} refuses the batch probe's texts, so whether its answers depend "
                              "on their batch is unknown: evaluating one input at a time", RobustcountWarning,
                              stacklevel=3)
                return
        if difference <= BATCH_TOLERANCE:
            self._batching = BATCH_INVARIANT
            return
        self._batching = f"{ONE_AT_A_TIME} (answers depend on their batch)"
        warnings.warn(f"{_name(self.model)}: answers depend on the other inputs of their batch (they moved by up to "
                      f"{difference:.3g} between batches, above the tolerance {BATCH_TOLERANCE:g}): evaluating one "
                      "input at a time", RobustcountWarning, stacklevel=3)

    def _batch_difference(self, probes: list, run: Callable[[list], np.ndarray]) -> float:
        """The largest difference between a probe's answer alone and in engine batches of the
        probes (mixed lengths, in either order), each call counted in `total` and `probe` only."""

        def counted(chunk: list) -> np.ndarray:
            began = time.perf_counter()
            try:
                return run(chunk)
            finally:
                self._count(probe=True, model_calls=len(chunk), model_batches=1,
                            model_seconds=time.perf_counter() - began)

        alone = np.concatenate([counted([probe]) for probe in probes])
        differences = []
        for order in (list(range(len(probes))), list(reversed(range(len(probes))))):
            batched = np.concatenate([counted([probes[i] for i in order[start : start + self.batch_size]])
                                      for start in range(0, len(order), self.batch_size)])
            differences.append(float(np.abs(alone[order] - batched).max()))
        return max(differences)  # finite: the answers were checked

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
        first = dict(zip(inputs, range(len(inputs))))  # each input at its place when none repeats
        if len(first) == len(inputs) and (cache is None or cache.misses_all(first)):
            repeats, hits = [], 0  # the common request: every input new, in one pass in C
        else:
            first, repeats, hits = self._sort_request(inputs, result)
        to_run, alike = first, []  # alike: (place, the place of an earlier input the model reads alike)
        if model_inputs is not None and len(first) > 1:
            to_run, alike = _read_alike(first, model_inputs)
        self._check_budget(len(to_run))
        if to_run and self._batching is None:
            self._check_batches(list(to_run), run)
        self._count(candidates=len(inputs), duplicates=len(repeats) + len(alike), cache_hits=hits)
        size = self.batch_size if self._batching == BATCH_INVARIANT else 1
        todo, at = list(to_run), list(to_run.values())
        lengths = list(map(_length, todo))
        for batch in _forward_batches(sorted(range(len(todo)), key=lengths.__getitem__), size, lengths.__getitem__):
            chunk, places = [todo[j] for j in batch], [at[j] for j in batch]
            characters = sum([lengths[j] for j in batch])
            self._check_time(characters)
            began = time.perf_counter()
            rows = run(chunk) if run_pending is None else run_pending(places)
            seconds = time.perf_counter() - began
            self._count(model_calls=len(chunk), model_batches=1, model_seconds=seconds)
            self._speed[0] += characters
            self._speed[1] += seconds
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

    def _sort_request(self, inputs: Sequence[Input], result: np.ndarray) -> tuple[dict[Input, int], list[int], int]:
        """A request's inputs sorted input by input: those to run (each at its first place), the
        places of repeats of an input already asked for, and the number of cache hits (their rows
        written into `result`; a lookup marks the entry most recently used)."""
        first: dict[Input, int] = {}
        repeats: list[int] = []
        cache, hits = self._cache, 0
        for i, item in enumerate(inputs):
            if item in first:
                repeats.append(i)
                continue
            row = None if cache is None else cache.lookup(item)
            if row is None:
                first[item] = i
            else:
                result[i] = row
                hits += 1
        return first, repeats, hits

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


class Answers:
    """The cache: answers by input, at most `size` of them, the least recently used dropped first."""

    def __init__(self, size: int):
        self.size = size
        self._rows: OrderedDict = OrderedDict()

    def lookup(self, item) -> np.ndarray | None:
        """The answer for `item`, now the most recently used, or None when there is none."""
        row = self._rows.get(item)
        if row is not None:
            self._rows.move_to_end(item)
        return row

    def misses_all(self, items) -> bool:
        """Whether none of `items` has an answer here (nothing is marked used)."""
        return self._rows.keys().isdisjoint(items)

    def put(self, item, row: np.ndarray) -> None:
        self.put_all([item], [row])

    def put_all(self, items: Sequence, rows: Sequence[np.ndarray]) -> None:
        """The answers for `items` (distinct), now the most recently used in this order (as many `put`s)."""
        if self._rows.keys().isdisjoint(items):  # all new: each goes in last, in order
            self._rows.update(zip(items, rows))
        else:
            for item, row in zip(items, rows):
                self._rows[item] = row
                self._rows.move_to_end(item)
        while len(self._rows) > self.size:
            self._rows.popitem(last=False)

    def items(self) -> list:
        """(input, answer) pairs from the least to the most recently used."""
        return list(self._rows.items())

    def clear(self) -> None:
        self._rows.clear()


@dataclass
class EngineState:
    """An example's engine state at a checkpoint (see `QueryEngine.state`), JSON-able with `as_dict`."""

    stats: dict
    cache: list
    """[input, probabilities] pairs, least recently used first (an input pair as a list of two)."""
    seconds: float

    def as_dict(self) -> dict:
        return asdict(self)


def _json_input(item: Input):
    return list(item) if isinstance(item, tuple) else item


def _as_input(value) -> Input:
    return tuple(value) if isinstance(value, list) else value


def _read_alike(first: dict[Input, int], model_inputs: Callable[[list[int]], list]) -> tuple[dict[Input, int],
                                                                                            list[tuple[int, int]]]:
    """Of `first` (inputs to run, at their places), those whose model input (`model_inputs` of
    their places) no earlier one has, and each other's place with the place of that earlier one."""
    runs: dict[Input, int] = {}
    alike: list[tuple[int, int]] = []
    seen: dict = {}
    for (item, place), read in zip(first.items(), model_inputs(list(first.values()))):
        earlier = seen.setdefault(read, place)
        if earlier == place:
            runs[item] = place
        else:
            alike.append((place, earlier))
    return (first if not alike else runs), alike


def _forward_batches(todo: list, size: int, length_of: Callable[[Input], int] | None = None) -> Iterator[list]:
    """`todo` cut in order into batches of at most `size` inputs and MAX_BATCH_CHARACTERS
    characters (an input longer than that alone); `length_of` gives an input's characters
    (default `_length`)."""
    lengths = list(map(length_of or _length, todo))
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


def _probe_inputs(like: Sequence[Input]) -> list:
    """PROBE_TEXTS as inputs of the kind of `like`'s first: texts, pairs after its premise, or
    mask queries of their first word."""
    if like and isinstance(like[0], MaskQuery):
        return [MaskQuery(text, 0, len(text.split(" ")[0]), like[0].masked) for text in PROBE_TEXTS]
    return [(like[0][0], text) for text in PROBE_TEXTS] if like and isinstance(like[0], tuple) else list(PROBE_TEXTS)


def _spread(inputs: Sequence[Input], most: int = len(PROBE_TEXTS)) -> list:
    """Up to `most` of `inputs` with distinct lengths, from the shortest to the longest (the first
    input of each length)."""
    by_length: dict[int, Input] = {}
    for item in inputs:
        by_length.setdefault(_length(item), item)
    lengths = sorted(by_length)
    if not lengths:
        return []
    chosen = sorted({lengths[round(i * (len(lengths) - 1) / max(1, most - 1))] for i in range(most)})
    return [by_length[n] for n in chosen]


def _length(item: Input | MaskQuery) -> int:
    if type(item) is str:
        return len(item)
    if isinstance(item, MaskQuery):
        return len(item.text)
    return len(item[0]) + len(item[1]) if isinstance(item, tuple) else len(item)


def _name(model) -> str:
    return getattr(model, "name", type(model).__name__)
