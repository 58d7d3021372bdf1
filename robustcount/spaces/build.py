"""Building a Space from composable candidate sources and filters.

Sources are named as their registry says (`robustcount.spaces.sources`; `robustcount space --help`
lists them). The union of the sources gives each position its candidates: the original first,
then every source's candidates in source order, without duplicates. Filters: skip stop words,
skip words shorter than `min_length`, skip given word positions, keep at most `max_candidates`
substitutes per position (the first ones), and optionally keep only substitutes with the word's
part of speech in context (`robustcount.spaces.pos`), and the contextual filters
(`robustcount.spaces.context`: names, titles and fixed expressions left alone; each substitute
judged in the original text by a language model and a sentence encoder's sentence and word
embeddings, which the builder is given as `context`, a `models.context_models.ContextModels`,
since spaces import no model). The cap applies before the language model and the encoder.
Positions left with no substitute are dropped. Building is deterministic: seeded sources take `seed`.

A model that reads only a prefix of a long input has a window (`models.base.Window`): built for
it, a space leaves out every word that ends beyond the window of the input, and every gap next to
such a word, and its definition records how many words that is (`window`: the window's size, the
input's words, those beyond), from which the same space is rebuilt without the model
(`RecordedWindow`). With `keep_beyond_window` (a user who truncates on purpose) they stay, and
the definition says so. Every point is still evaluated by the model on its whole text.

`Filters` declares the filters once; `SpaceSpec` (source names and filters) is what a run records
and the CLI's space options fill; `SpaceBuilder` resolves the sources once and builds each input's
space with the definition that certificates and run headers record.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property

from robustcount.errors import RobustcountError
from robustcount.options import option, options_dataclass
from robustcount.spaces.context import SCORES, TOLERANCES, expressions, judge, names
from robustcount.spaces.pos import same_pos
from robustcount.spaces.sources import make_source, source_help
from robustcount.spaces.space import Position, Space
from robustcount.text import Input, Tokens, perturbed_part, tokenize

DEFAULT_SOURCE = "synonyms"
"""The source every command uses unless told otherwise: the built-in synonym source whose pairs
readers judged substitutable most often (README, "Meaning-preserving neighbours")."""


def english_stop_words() -> tuple[str, ...]:
    """scikit-learn's English stop-word list, sorted."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return tuple(sorted(ENGLISH_STOP_WORDS))


@options_dataclass
class Filters:
    """Which words a space may change and how many candidates each keeps (the module docstring).
    Values are normalised (stop words lower-cased, sorted, without repeats), so equal filters
    compare, hash and record equal."""

    stop_words: tuple[str, ...] = field(default=(), metadata=option(
        "Leave English stop words (scikit-learn's list) alone.", flag=True, flag_value=english_stop_words))
    min_length: int = field(default=0, metadata=option("Leave words shorter than this alone.", minimum=0))
    max_candidates: int | None = field(default=None, metadata=option("Cap per position.", minimum=1, kind=int))
    skip_positions: tuple[int, ...] = field(default=(), metadata=option(
        "Word index to leave alone (repeatable).", names=("--skip",), multiple=True, kind=int))
    same_pos: bool = field(default=False, metadata=option(
        "Keep only substitutes with the word's POS in context (pos extra).", flag=True))
    keep_beyond_window: bool = field(default=False, metadata=option(
        "Keep the words beyond the model's window (its token limit) in the space, for inputs you truncate on "
        "purpose; outputs say so (default: left out, and counted).", flag=True))
    keep_names: bool = field(default=False, metadata=option(
        "Leave names and titles alone: capitalised words inside a sentence (contextual filter).", flag=True))
    keep_expressions: bool = field(default=False, metadata=option(
        "Leave the words of WordNet's multiword expressions alone, e.g. 'a mixed bag' (contextual filter).",
        flag=True))
    context_lm_min: float | None = field(default=None, metadata=option(
        "Keep a substitute only if the language model (SmolLM2-135M) finds the text at most this many nats "
        "less likely with it, over the word and --context-lm-window tokens after it, e.g. -4 (contextual filter).",
        kind=float))
    context_lm_window: int = field(default=4, metadata=option(
        "LM tokens after the word that --context-lm-min scores.", minimum=0, maximum=64))
    context_similarity_min: float | None = field(default=None, metadata=option(
        "Keep a substitute only if the sentence encoder's cosine of the words around it, with it and with the "
        "original, is at least this, e.g. 0.9 (contextual filter).", minimum=-1, maximum=1, kind=float))
    context_similarity_window: int = field(default=15, metadata=option(
        "Words around the position that --context-similarity-min compares.", minimum=1, maximum=201))
    context_word_similarity_min: float | None = field(default=None, metadata=option(
        "Keep a substitute only if the encoder's contextual embedding of it, in the words around it, has at least "
        "this cosine with the original word's, e.g. 0.6: removes wrong senses (contextual filter).",
        minimum=-1, maximum=1, kind=float))
    context_word_similarity_window: int = field(default=31, metadata=option(
        "Words around the position that --context-word-similarity-min reads.", minimum=1, maximum=101))

    def __post_init__(self):
        object.__setattr__(self, "stop_words", tuple(sorted({w.lower() for w in self.stop_words or ()})))
        object.__setattr__(self, "skip_positions", tuple(sorted(set(self.skip_positions or ()))))
        for name in (f"context_{score}_min" for score in SCORES):
            if (value := getattr(self, name)) is not None and not math.isfinite(value):
                raise RobustcountError(f"--{name.replace('_', '-')} must be a finite number, got {value}")

    @property
    def needs_models(self) -> tuple[bool, ...]:
        """Whether the filters need each score's model (`spaces.context.SCORES`, in its order: the
        language model, the sentence encoder, its word embeddings)."""
        return tuple(getattr(self, f"context_{score}_min") is not None for score in SCORES)

    def unscored(self) -> Filters:
        """These filters without the thresholds of the scores that need a model (`needs_models`):
        what the contextual scores then narrow, position by position."""
        return replace(self, **{f"context_{score}_min": None for score in SCORES})

    def definition(self) -> dict:
        """The filters as spaces record them; `keep_beyond_window` and the contextual filters only
        when set (a window with its threshold), so that a definition written before them (without
        them) is one of today's."""
        recorded = {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}
        unset = [name for name in ("keep_beyond_window", "keep_names", "keep_expressions") if not recorded[name]]
        for score in SCORES:
            if recorded[f"context_{score}_min"] is None:
                unset += [f"context_{score}_min", f"context_{score}_window"]
        for name in unset:
            del recorded[name]
        return recorded


@options_dataclass
class SpaceSpec:
    """How each input's space is built: candidate sources by name (their union) and filters."""

    sources: tuple[str, ...] = field(default=(DEFAULT_SOURCE,), metadata=option(
        source_help(DEFAULT_SOURCE), names=("--source",), multiple=True, kind=str))
    filters: Filters = Filters()

    def builder(self, seed: int = 0, window=None, context=None) -> SpaceBuilder:
        return SpaceBuilder(self.sources, self.filters, seed, window, context)


class RecordedWindow:
    """The window a space's definition records (`{"size", "words", "beyond"}`): it ends where the
    input's last word before the `beyond` last ones ends, so that a space rebuilds as it was built."""

    def __init__(self, recorded: dict):
        self.size, self.words, self.beyond = recorded["size"], recorded["words"], recorded["beyond"]
        if not (isinstance(self.size, str) and type(self.words) is int and type(self.beyond) is int
                and 0 < self.beyond <= self.words):
            raise ValueError(f"a window record needs a size and 0 < beyond <= words, got {recorded}")

    def end(self, item: Input) -> int:
        spans = tokenize(perturbed_part(item)).spans()
        visible = len(spans) - self.beyond
        if visible < 0:
            raise ValueError(f"the window leaves {self.beyond} words out of a text of {len(spans)}")
        return spans[visible - 1][1] if visible else 0


def words_beyond(window, item: Input, tokens: Tokens) -> int:
    """How many of the words of `item` (split as `tokens`) end beyond `window` (none without one)."""
    end = None if window is None else window.end(item)
    return 0 if end is None else sum(stop > end for _, stop in tokens.spans())


@dataclass
class Built:
    """A space as built (`SpaceBuilder.build`), with what its contextual filters decided:
    `borderline` (word index -> its candidates with every borderline one kept, in order; the
    borderline ones: `spaces.context`), and `removed` (filter name -> positions or candidates
    it removed)."""

    space: Space
    borderline: dict[int, tuple[tuple[str, ...], set[str]]]
    removed: Counter


class SpaceBuilder:
    """Builds Omega(item) for any input from `sources` (names for `make_source`, or `Source`
    objects) under `filters`, within the model's `window` (a `models.base.Window`, or
    None: every word), with `context` (a `models.context_models.ContextModels`) when the filters
    score substitutes; the sources are resolved once."""

    def __init__(self, sources: Sequence, filters: Filters = Filters(), seed: int = 0, window=None, context=None):
        self.sources = [s for source in sources
                        for s in (make_source(source, seed) if isinstance(source, str) else [source])]
        if not self.sources:
            raise RobustcountError("a space needs at least one candidate source")
        if any(filters.needs_models) and context is None:
            raise RobustcountError("the contextual filters --context-lm-min, --context-similarity-min and "
                                   "--context-word-similarity-min need their models, which this command does not load")
        self.filters, self.seed, self.window, self.context = filters, seed, window, context

    @cached_property
    def definition(self) -> dict:
        """How these spaces are built (as `Space.definition`): sources, filters, seed, and, with
        scored contextual filters, the models that score (names and digests) and the tolerances."""
        recorded = {"sources": [s.definition() for s in self.sources], "filters": self.filters.definition(),
                    "seed": self.seed}
        used = dict(zip(SCORES, self.filters.needs_models))
        if any(used.values()):
            recorded["context"] = {**self.context.identity(*used.values()),
                                   "tolerances": {name: TOLERANCES[name] for name, on in used.items() if on}}
        return recorded

    def __call__(self, item: Input) -> Space:
        return self.build(item).space

    def build(self, item: Input) -> Built:
        """The space of `item`, with its borderline candidates and what each filter removed."""
        f = self.filters
        tokens = tokenize(perturbed_part(item))
        beyond = words_beyond(self.window, item, tokens)
        visible = len(tokens.words) - (0 if f.keep_beyond_window else beyond)
        gap_sources = [s for s in self.sources if s.kind == "gap"]
        built = Built(None, {}, Counter())
        alone = self._left_alone(tokens, built.removed)
        positions: list[Position] = []
        for i, word in enumerate(tokens.words[:visible]):  # a gap i lies between words i - 1 and i
            if gap_sources and i > 0:
                gap = _union(tokens.separators[i],
                             [(s.name, s.gap_neighbours(tokens.separators[i])) for s in gap_sources], f.max_candidates)
                if gap:
                    positions.append(Position("gap", i, *gap))
            if i not in alone and (found := self._word(tokens, i, built)):
                positions.append(Position("word", i, *found))
        window = {"size": self.window.size, "words": len(tokens.words), "beyond": beyond} if beyond else None
        built.space = Space(item, tuple(positions), {**self.definition, "window": window} if window else self.definition)
        return built

    def _left_alone(self, tokens: Tokens, removed: Counter) -> set[int]:
        """The word indices no source is asked about: skipped, stop and short words, and the
        names and expressions of the contextual filters (counted in `removed`)."""
        f, stop = self.filters, set(self.filters.stop_words)
        alone = {i for i, word in enumerate(tokens.words)
                 if i in f.skip_positions or word.lower() in stop or len(word) < f.min_length}
        for name, wanted, rule in (("names", f.keep_names, names), ("expressions", f.keep_expressions, expressions)):
            if wanted:
                found = rule(tokens) - alone
                removed[name] += len(found)
                alone |= found
        return alone

    def _word(self, tokens: Tokens, i: int, built: Built):
        """Word `i`'s candidates and their sources after the filters, or None (no substitute)."""
        f = self.filters
        word_sources = [s for s in self.sources if s.kind == "word"]
        found = _union(tokens.words[i], [(s.name, s.neighbours(tokens.words[i])) for s in word_sources], None) \
            if word_sources else None
        if found and f.same_pos:
            found = _same_pos(tokens, i, *found)
        if found and f.max_candidates is not None:
            found = found[0][: f.max_candidates + 1], found[1][: f.max_candidates + 1]
        if found and any(f.needs_models):
            candidates, names_ = found
            judged = judge(self.context, tokens, i, candidates[1:], f)
            built.removed.update(judged.removed)
            if judged.borderline:
                widest = [0, *(j + 1 for j in sorted(set(judged.kept) | judged.borderline))]
                built.borderline[i] = (tuple(candidates[j] for j in widest),
                                       {candidates[j + 1] for j in judged.borderline})
            kept = [0, *(j + 1 for j in judged.kept)]
            found = (tuple(candidates[j] for j in kept), tuple(names_[j] for j in kept)) if len(kept) > 1 else None
        return found


def build_space(item: Input, sources: Sequence, *, seed: int = 0, **filters) -> Space:
    """Omega(item) from `sources` under `Filters(**filters)` (see `SpaceBuilder`)."""
    return SpaceBuilder(sources, Filters(**filters), seed)(item)


def _union(original: str, proposals, cap: int | None):
    candidates, names = [original], ["original"]
    for name, found in proposals:
        for candidate in found:
            if candidate not in candidates:
                candidates.append(candidate)
                names.append(name)
    if len(candidates) == 1:
        return None
    if cap is not None:
        candidates, names = candidates[: cap + 1], names[: cap + 1]
    return tuple(candidates), tuple(names)


def _same_pos(tokens: Tokens, index: int, candidates: tuple[str, ...], names: tuple[str, ...]):
    words = list(tokens.words)
    variants = [[*words[:index], candidate, *words[index + 1:]] for candidate in candidates[1:]]
    kept = [0, *(j for j, agrees in enumerate(same_pos(tokens, index, variants), 1) if agrees)]
    if len(kept) == 1:
        return None
    return tuple(candidates[j] for j in kept), tuple(names[j] for j in kept)
