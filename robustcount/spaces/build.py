"""Building a Space from composable candidate sources and filters.

Sources (by name, see `make_source`): the ten Zéroe perturbers, `synonyms` (the packaged
counter-fitted neighbour table, the default), `wordnet`, `glove-raw` (raw GloVe neighbours, not
meaning-preserving), `vectors:PATH[,VOCAB]`, `table:PATH`, `natural:PATH` (your own misspelling
table) and `zeroe` (all ten perturbers). The union of the sources gives each position its
candidates: the original first, then every source's candidates in source order, without
duplicates. Filters: skip stop words, skip words shorter than `min_length`, skip given word
positions, keep at most `max_candidates` substitutes per position (the first ones), and
optionally keep only substitutes with the word's part of speech in context. Positions left with
no substitute are dropped. Building is deterministic: seeded sources take `seed`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from robustcount.errors import RobustcountError
from robustcount.spaces.space import Position, Space
from robustcount.spaces.synonyms import CounterFittedSynonyms, NeighbourTable, VectorNeighbours, WordNetSynonyms
from robustcount.spaces.zeroe import PERTURBERS, Natural, get_perturber
from robustcount.text import Input, Tokens, perturbed_part, tokenize

SOURCE_NAMES = (*PERTURBERS, "zeroe", "synonyms", "wordnet", "glove-raw", "vectors:PATH[,VOCAB]",
                "table:PATH", "natural:PATH")
DEFAULT_SOURCE = "synonyms"
"""The source every command uses unless told otherwise: meaning-preserving word substitutions."""


def make_source(spec: str, seed: int = 0) -> list:
    """The source(s) a name stands for (a list: `zeroe` stands for ten)."""
    name, _, argument = spec.partition(":")
    if spec == "zeroe":
        return [make_source(n, seed)[0] for n in PERTURBERS]
    if name == "synonyms" and not argument:
        return [CounterFittedSynonyms()]
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


PACKAGED_SOURCES = (*PERTURBERS, "synonyms", "wordnet", "glove-raw")
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


def build_space(
    item: Input,
    sources: Sequence,
    *,
    stop_words: Iterable[str] | None = None,
    min_length: int = 0,
    max_candidates: int | None = None,
    skip_positions: Iterable[int] = (),
    same_pos: bool = False,
    seed: int = 0,
) -> Space:
    """Omega(item) from `sources` (objects with `kind` and `neighbours`/`gap_neighbours`, or
    names for `make_source`) under the filters of the module docstring."""
    resolved = []
    for source in sources:
        resolved.extend(make_source(source, seed) if isinstance(source, str) else [source])
    if not resolved:
        raise RobustcountError("a space needs at least one candidate source")
    if max_candidates is not None and max_candidates < 1:
        raise RobustcountError(f"max_candidates must be at least 1, got {max_candidates}")
    stop = {w.lower() for w in stop_words} if stop_words is not None else set()
    skip = set(skip_positions)
    tokens = tokenize(perturbed_part(item))
    word_sources = [s for s in resolved if s.kind == "word"]
    gap_sources = [s for s in resolved if s.kind == "gap"]
    positions: list[Position] = []
    for i, word in enumerate(tokens.words):
        if gap_sources and i > 0:
            gap = _union(tokens.separators[i], [(s.name, s.gap_neighbours(tokens.separators[i])) for s in gap_sources],
                         max_candidates)
            if gap:
                positions.append(Position("gap", i, *gap))
        if i in skip or word.lower() in stop or len(word) < min_length or not word_sources:
            continue
        found = _union(word, [(s.name, s.neighbours(word)) for s in word_sources], None)
        if found and same_pos:
            found = _same_pos(tokens, i, *found)
        if found:
            candidates, names = found
            if max_candidates is not None:
                candidates, names = candidates[: max_candidates + 1], names[: max_candidates + 1]
            positions.append(Position("word", i, candidates, names))
    definition = space_definition(resolved, stop_words=stop, min_length=min_length, max_candidates=max_candidates,
                                  skip_positions=skip, same_pos=same_pos, seed=seed)
    return Space(item, tuple(positions), definition)


def space_definition(
    sources: Sequence,
    *,
    stop_words: Iterable[str] | None = None,
    min_length: int = 0,
    max_candidates: int | None = None,
    skip_positions: Iterable[int] = (),
    same_pos: bool = False,
    seed: int = 0,
) -> dict:
    """How spaces are built from resolved `sources` and the filters (as `Space.definition`)."""
    return {
        "sources": [s.definition() for s in sources],
        "filters": {"stop_words": sorted({w.lower() for w in stop_words or ()}), "min_length": min_length,
                    "max_candidates": max_candidates, "skip_positions": sorted(set(skip_positions)),
                    "same_pos": same_pos},
        "seed": seed,
    }


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
