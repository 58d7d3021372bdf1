"""The candidate sources: the `Source` protocol and the one registry of the sources `--source` names.

A source proposes candidates for a position of a text: a word source (`kind` "word") replacements
for a word, a gap source (`kind` "gap") replacements for the separator between two words. Its
`definition()` is the JSON-able dict that spaces, run headers and certificates record; its
`"source"` is the name of the registration that built it, so that `source_from_definition` can
rebuild it for `verify`.

A module registers each of its sources with `register(SourceEntry(...))`, beside the source's
class; every module of `robustcount.spaces` is imported (by name, once) before the registry is
read, so a new source is one new module. From the registry come: the source a name stands for
(`make_source`), the source a recorded definition stands for (`source_from_definition`), the
`--source` help (`source_help`) and the sources readers judged (`judged_sources`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from robustcount.errors import RobustcountError
from robustcount.registry import import_package


class Source(Protocol):
    """A candidate source: a word source also has `neighbours(word) -> tuple[str, ...]`, a gap
    source `gap_neighbours(separator) -> tuple[str, ...]`; both deterministic, the original left out."""

    kind: str
    name: str

    def definition(self) -> dict: ...


class SeededVariant:
    """A word source that offers one variant of each word it `applies` to, drawn by `variant(word,
    rng)` (None: no variant) with a random source seeded by (name, seed, word), so that a space
    holds the same candidates wherever it is built; its definition records the seed."""

    kind = "word"

    def __init__(self, name: str, seed: int):
        self.name, self.seed = name, seed

    def applies(self, word: str) -> bool:
        return any(ch.isalpha() for ch in word)

    def variant(self, word: str, rng: random.Random) -> str | None:
        raise NotImplementedError

    def neighbours(self, word: str) -> tuple[str, ...]:
        if not self.applies(word):
            return ()
        variant = self.variant(word, random.Random(f"{self.name}:{self.seed}:{word}"))
        return (variant,) if variant is not None and variant != word else ()

    def definition(self) -> dict:
        return {"source": self.name, "seed": self.seed}


@dataclass(frozen=True)
class SourceEntry:
    """One name that `--source` accepts.

    `build(argument, seed)` makes the source; `argument` says what follows `name:` ("PATH"), None
    when the name takes none (`argument_optional`: it may be given or not). `summary` is its help.
    `recorded_file`: the key of its definition that records a file of its maker's, from which
    `verify --allow-files` rebuilds it. `judged`: (pairs judged substitutable, pairs judged) by
    readers of the packaged judged sample (`robustcount source-quality` measures it; a test
    checks it). `members`: the names a group stands for (`zeroe`), instead of `build`."""

    name: str
    summary: str
    build: Callable[[str | None, int], Source] | None = None
    argument: str | None = None
    argument_optional: bool = False
    recorded_file: str | None = None
    judged: tuple[int, int] | None = None
    members: tuple[str, ...] = ()

    @property
    def spelling(self) -> str:
        """How the command line names it: `name`, `name:ARGUMENT` or `name[:ARGUMENT]`."""
        if self.argument is None:
            return self.name
        return f"{self.name}[:{self.argument}]" if self.argument_optional else f"{self.name}:{self.argument}"

    @property
    def precision(self) -> float | None:
        """The share of its judged pairs that readers judged substitutable."""
        return None if self.judged is None else self.judged[0] / self.judged[1]


SOURCES: dict[str, SourceEntry] = {}
"""Every registered source by name, in registration order."""
_discovered = False


def register(entry: SourceEntry) -> SourceEntry:
    """Add `entry` to the registry; a name is registered once."""
    if entry.name in SOURCES:
        raise ValueError(f"source {entry.name!r} is registered twice")
    if (entry.build is None) == (not entry.members):
        raise ValueError(f"source {entry.name!r} needs either build or members")
    SOURCES[entry.name] = entry
    return entry


def registered() -> dict[str, SourceEntry]:
    """Every source: those of the modules of `robustcount.spaces` (imported here, once) and any
    registered elsewhere."""
    global _discovered
    if not _discovered:
        _discovered = True
        import_package("robustcount.spaces")
    return SOURCES


def make_source(spec: str, seed: int = 0) -> list[Source]:
    """The source(s) `spec` names (`name` or `name:argument`; a list, since a group stands for
    several); seeded sources take `seed`."""
    name, colon, argument = spec.partition(":")
    entry = registered().get(name)
    if entry is None:
        raise RobustcountError(f"unknown source {spec!r} (use: {', '.join(e.spelling for e in _ordered())})")
    if colon and entry.argument is None:
        raise RobustcountError(f"source {name} takes no argument, got {spec!r}")
    if colon and not argument or not colon and entry.argument is not None and not entry.argument_optional:
        raise RobustcountError(f"source {name} needs {entry.spelling}: {entry.summary}")
    if entry.members:
        return [source for member in entry.members for source in make_source(member, seed)]
    return [entry.build(argument or None, seed)]


def source_from_definition(definition: dict, seed: int, allow_files: bool = False) -> Source | None:
    """The source whose `definition()` is `definition`, rebuilt here, or None: when it differs
    from what this installation builds (another table, other parameters), or names a file of its
    maker's (`recorded_file`) unless `allow_files` and that path is a regular file here."""
    name = definition.get("source") if isinstance(definition, dict) else None
    entry = registered().get(name) if isinstance(name, str) else None
    if entry is None or entry.members:
        return None
    arguments = [None] if entry.argument is None or entry.argument_optional else []
    path = definition.get(entry.recorded_file) if entry.recorded_file else None
    if allow_files and isinstance(path, str) and Path(path).is_file():
        arguments.append(path)
    for argument in arguments:
        source = entry.build(argument, seed)
        if source.definition() == definition:
            return source
    return None


def source_help(default: str) -> str:
    """The `--source` help: every registered source with its summary and judged precision, the
    judged ones first (most precise first), `default` marked."""
    def described(entry: SourceEntry) -> str:
        judged = "" if entry.judged is None else f"; precision {entry.precision:.0%}"
        return f"{entry.spelling} ({'the default: ' if entry.name == default else ''}{entry.summary}{judged})"

    return ("Candidate source, repeatable (their union): " + "; ".join(described(e) for e in _ordered())
            + ". Precision: the share of a sample of the source's pairs that readers judged substitutable; measure "
              "any source with `robustcount source-quality`.")


def judged_sources() -> tuple[str, ...]:
    """The sources of the readers' judged sample, most precise first: what `source-quality`
    measures by default."""
    return tuple(e.name for e in _ordered() if e.judged is not None)


def _ordered() -> list[SourceEntry]:
    """Every source, the judged ones first (most precise first), then in registration order."""
    return sorted(registered().values(), key=lambda e: -e.precision if e.judged is not None else 1.0)
