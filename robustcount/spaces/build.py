"""Building a Space from composable candidate sources and filters.

Sources (by name, see `make_source`): the ten Zéroe perturbers, `synonyms` (robustcount's
synonym table), `counter-fitted` (Jia et al.'s counter-fitted neighbour table), `wordnet`,
`glove-raw` (raw GloVe neighbours, not meaning-preserving), `vectors:PATH[,VOCAB]`, `table:PATH`, `natural:PATH` (your own misspelling
table) and `zeroe` (all ten perturbers). The union of the sources gives each position its
candidates: the original first, then every source's candidates in source order, without
duplicates. Filters: skip stop words, skip words shorter than `min_length`, skip given word
positions, keep at most `max_candidates` substitutes per position (the first ones), and
optionally keep only substitutes with the word's part of speech in context. Positions left with
no substitute are dropped. Building is deterministic: seeded sources take `seed`.

`Filters` declares the filters once; `SpaceSpec` (source names and filters) is what a run records
and the CLI's space options fill; `SpaceBuilder` resolves the sources once and builds each input's
space with the definition that certificates and run headers record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field, fields
from functools import cached_property

from robustcount.errors import RobustcountError
from robustcount.options import option, options_dataclass
from robustcount.spaces.perturbers import PERTURBERS, Natural, get_perturber
from robustcount.spaces.space import Position, Space
from robustcount.spaces.synonyms import (
    CounterFittedNeighbours,
    NeighbourTable,
    SynonymTable,
    VectorNeighbours,
    WordNetSynonyms,
)
from robustcount.text import Input, Tokens, perturbed_part, tokenize

SOURCE_NAMES = (*PERTURBERS, "zeroe", "synonyms", "counter-fitted", "wordnet", "glove-raw", "vectors:PATH[,VOCAB]",
                "table:PATH", "natural:PATH")
DEFAULT_SOURCE = "synonyms"
"""The source every command uses unless told otherwise: the built-in synonym source whose pairs
readers judged substitutable most often (README, "Meaning-preserving neighbours")."""


def make_source(spec: str, seed: int = 0) -> list:
    """The source(s) a name stands for (a list: `zeroe` stands for ten)."""
    name, _, argument = spec.partition(":")
    if spec == "zeroe":
        return [make_source(n, seed)[0] for n in PERTURBERS]
    if name == "synonyms" and not argument:
        return [SynonymTable()]
    if spec == "counter-fitted":
        return [CounterFittedNeighbours()]
    if name == "wordnet" and not argument:
        return [WordNetSynonyms()]
    if spec == "glove-raw":
        return [VectorNeighbours()]
    if name == "vectors" and argument:
        path, _, vocabulary = argument.partition(",")
        return [VectorNeighbours(path, vocabulary or None)]
    if spec == "vectors":
        raise RobustcountError("source vectors needs a path (vectors:PATH[,VOCAB]); raw GloVe is glove-raw, "
                               "which is not meaning-preserving")
    if name == "table" and argument:
        return [NeighbourTable(argument)]
    if name == "natural" and argument:
        return [Natural(argument)]
    if name in ("inner-shuffle", "full-shuffle") and not argument:
        return [get_perturber(name, seed=seed)]
    if name in PERTURBERS and not argument:
        return [get_perturber(name)]
    raise RobustcountError(f"unknown source {spec!r} (use: {', '.join(SOURCE_NAMES)})")


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

    def __post_init__(self):
        object.__setattr__(self, "stop_words", tuple(sorted({w.lower() for w in self.stop_words or ()})))
        object.__setattr__(self, "skip_positions", tuple(sorted(set(self.skip_positions or ()))))

    def definition(self) -> dict:
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}


@options_dataclass
class SpaceSpec:
    """How each input's space is built: candidate sources by name (their union) and filters."""

    sources: tuple[str, ...] = field(default=(DEFAULT_SOURCE,), metadata=option(
        "Candidate source, repeatable (union): synonyms (the default; readers judged 34% of a sample of its pairs "
        "substitutable), counter-fitted (Jia et al.'s table, 11%), wordnet (5%), glove-raw (raw GloVe, 1%: not "
        "meaning-preserving), vectors:PATH[,VOCAB], table:PATH, the ten Zéroe names, zeroe (all ten), "
        "natural:PATH. Measure one with `robustcount source-quality`.",
        names=("--source",), multiple=True, kind=str))
    filters: Filters = Filters()

    def builder(self, seed: int = 0) -> SpaceBuilder:
        return SpaceBuilder(self.sources, self.filters, seed)


class SpaceBuilder:
    """Builds Omega(item) for any input from `sources` (names for `make_source`, or source objects
    with `kind`, `name`, `definition()` and `neighbours`/`gap_neighbours`) under `filters`; the
    sources are resolved once."""

    def __init__(self, sources: Sequence, filters: Filters = Filters(), seed: int = 0):
        self.sources = [s for source in sources
                        for s in (make_source(source, seed) if isinstance(source, str) else [source])]
        if not self.sources:
            raise RobustcountError("a space needs at least one candidate source")
        self.filters, self.seed = filters, seed

    @cached_property
    def definition(self) -> dict:
        """How these spaces are built (as `Space.definition`): sources, filters, seed."""
        return {"sources": [s.definition() for s in self.sources], "filters": self.filters.definition(),
                "seed": self.seed}

    def __call__(self, item: Input) -> Space:
        f = self.filters
        stop, skip = set(f.stop_words), set(f.skip_positions)
        tokens = tokenize(perturbed_part(item))
        word_sources = [s for s in self.sources if s.kind == "word"]
        gap_sources = [s for s in self.sources if s.kind == "gap"]
        positions: list[Position] = []
        for i, word in enumerate(tokens.words):
            if gap_sources and i > 0:
                gap = _union(tokens.separators[i],
                             [(s.name, s.gap_neighbours(tokens.separators[i])) for s in gap_sources], f.max_candidates)
                if gap:
                    positions.append(Position("gap", i, *gap))
            if i in skip or word.lower() in stop or len(word) < f.min_length or not word_sources:
                continue
            found = _union(word, [(s.name, s.neighbours(word)) for s in word_sources], None)
            if found and f.same_pos:
                found = _same_pos(tokens, i, *found)
            if found:
                candidates, names = found
                if f.max_candidates is not None:
                    candidates, names = candidates[: f.max_candidates + 1], names[: f.max_candidates + 1]
                positions.append(Position("word", i, candidates, names))
        return Space(item, tuple(positions), self.definition)


def build_space(item: Input, sources: Sequence, *, seed: int = 0, **filters) -> Space:
    """Omega(item) from `sources` under `Filters(**filters)` (see `SpaceBuilder`)."""
    return SpaceBuilder(sources, Filters(**filters), seed)(item)


PACKAGED_SOURCES = (*PERTURBERS, "synonyms", "counter-fitted", "wordnet", "glove-raw")
"""Sources that need nothing but installed packages, so anyone can rebuild them."""


def source_from_definition(definition: dict, seed: int, allow_files: bool = False):
    """The source whose `definition()` is `definition`, rebuilt here, or None: when it differs
    from what this installation builds (another table, other parameters), or names a file of its
    maker's (`table:`, a `natural:` table) unless `allow_files` and that path is a regular file
    here. `vectors:` definitions record only the file's name and are never rebuilt."""
    from pathlib import Path

    name = definition.get("source") if isinstance(definition, dict) else None
    if name in PACKAGED_SOURCES:
        (source,) = make_source(name, seed)
        if source.definition() == definition:
            return source
    if name in ("table", "natural") and allow_files:
        path = definition.get("path" if name == "table" else "table")
        if isinstance(path, str) and Path(path).is_file():
            (source,) = make_source(f"{name}:{path}", seed)
            if source.definition() == definition:
                return source
    return None


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
    from robustcount.spaces.pos import tags_at

    start = tokens.spans()[index][0]
    words = list(tokens.words)
    texts = []
    for candidate in candidates:
        words[index] = candidate
        texts.append(tokens.join(words))
    tags = tags_at(texts, [start] * len(texts))
    kept = [j for j in range(len(candidates)) if j == 0 or tags[j] == tags[0]]
    if len(kept) == 1:
        return None
    return tuple(candidates[j] for j in kept), tuple(names[j] for j in kept)
