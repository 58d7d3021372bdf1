"""Rebuilding a recorded space: the candidate lists its definition (sources, filters, seed, the
window, the contextual filters' models) builds here, compared with those a certificate or a run
record holds. A contextual filter's borderline candidates (`spaces.context`) may go either way;
nothing else may differ.
"""

from __future__ import annotations

import itertools

from robustcount.errors import RobustcountError
from robustcount.models.context_models import context_for
from robustcount.spaces.build import Built, Filters, RecordedWindow, SpaceBuilder
from robustcount.spaces.context import agreement_problem
from robustcount.spaces.sources import source_from_definition
from robustcount.spaces.space import Position, Space


def rebuilt_space(definition: dict, item, allow_files: bool = False) -> Space | str:
    """The space `definition` (sources, filters, seed) builds for `item` here, or why it cannot be
    rebuilt the same way. Sources that name a file of the certifier's (`table:`, a `natural:`
    table) are rebuilt only with `allow_files`, from the path recorded; `vectors:` sources never
    (see `source_from_definition`)."""
    built = _rebuilt(definition, item, allow_files)
    return built if isinstance(built, str) else built.space


def _rebuilt(definition: dict, item, allow_files: bool) -> Built | str:
    """`rebuilt_space`, with the borderline candidates of contextual filters."""
    try:
        seed, filters = definition["seed"], Filters(**definition["filters"])
        sources = [source_from_definition(d, seed, allow_files) for d in definition["sources"]]
        if None in sources:
            unknown = definition["sources"][sources.index(None)]
            hint = "; to rebuild it from the file it names, pass --allow-files" if not allow_files else ""
            return (f"the space's source {unknown} cannot be rebuilt here the same way, so its candidate lists "
                    f"cannot be checked{hint}")
        window = definition.get("window")
        builder = SpaceBuilder(sources, filters, seed, None if window is None else RecordedWindow(window),
                               context_for(filters))
        if builder.definition.get("context") != definition.get("context"):
            return (f"the space's contextual filters scored with {definition.get('context')}, the models here are "
                    f"{builder.definition.get('context')}")
        rebuilt = builder.build(item)
    except (KeyError, TypeError, ValueError, RobustcountError) as err:
        return f"the space's definition cannot be rebuilt: {err}"
    return rebuilt if rebuilt.space.definition == definition else "the space's definition is not one robustcount writes"


MAX_BORDERLINE_VARIANTS = 4096
"""The most lists `rebuilt_space_like` tries (its borderline candidates kept or not, each way)."""


def rebuilt_space_like(definition: dict, item, digest: str, allow_files: bool = False) -> Space | str:
    """`rebuilt_space`, for a record that keeps only its space's digest: among the lists that the
    rebuild's borderline candidates allow (each kept or not, at most MAX_BORDERLINE_VARIANTS), the
    one whose digest is `digest`; else the rebuild as decided here (which the record then fails)."""
    rebuilt = _rebuilt(definition, item, allow_files)
    if isinstance(rebuilt, str) or not rebuilt.borderline or rebuilt.space.digest() == digest:
        return rebuilt if isinstance(rebuilt, str) else rebuilt.space
    unsure = [(i, widest, sorted(borderline)) for i, (widest, borderline) in sorted(rebuilt.borderline.items())]
    if 2 ** sum(len(b) for _, _, b in unsure) > MAX_BORDERLINE_VARIANTS:
        return rebuilt.space
    fixed = [p for p in rebuilt.space.positions if not (p.kind == "word" and p.index in rebuilt.borderline)]
    choices = [(i, c) for i, _, borderline in unsure for c in borderline]
    for drops in itertools.product((False, True), repeat=len(choices)):
        dropped = {choice for choice, drop in zip(choices, drops) if drop}
        lists = [Position("word", i, kept) for i, widest, _ in unsure
                 if len(kept := tuple(c for c in widest if (i, c) not in dropped)) > 1]
        positions = sorted([*fixed, *lists], key=lambda p: (p.index, p.kind == "word"))
        variant = Space(rebuilt.space.item, tuple(positions), rebuilt.space.definition)
        if variant.digest() == digest:
            return variant
    return rebuilt.space


def rebuilt_space_problem(space: Space, allow_files: bool = False) -> str | None:
    """Why the candidate lists are not those the recorded definition builds (`rebuilt_space`), or
    None: compared list by list, so that no candidate or position can be dropped, added or changed,
    but for the borderline candidates of contextual filters, which may go either way
    (`spaces.context.agreement_problem`)."""
    rebuilt = _rebuilt(space.definition, space.item, allow_files)
    if isinstance(rebuilt, str):
        return rebuilt
    found = [(p.kind, p.index, p.candidates) for p in space.positions]
    expected = [(p.kind, p.index, p.candidates) for p in rebuilt.space.positions]
    if rebuilt.borderline:
        return agreement_problem(found, expected, rebuilt.borderline)
    if found != expected:
        differing = next((i for i, (a, b) in enumerate(zip(found, expected)) if a != b), min(len(found), len(expected)))
        return f"the candidate lists differ from those the space's definition builds (from position {differing} on)"
    return None
