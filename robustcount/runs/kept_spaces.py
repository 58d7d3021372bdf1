"""The spaces a run keeps while their examples are worked on (`runs.inflight.KeptSpaces`, beside
the run file), so that a resumed run reads a contextual space back instead of scoring its
candidates again (`KeptBuilder`): `kept_form` writes a built space as JSON, `restored` reads it
back for a builder and an input, or refuses it.

Only what the language model and the encoder decided is taken from the kept form. `restored`
builds the same space without the scored filters (sources, stop words, names, expressions, part
of speech, the cap: milliseconds) and accepts the kept form only when it is of this input and of
this builder's definition, every gap position is as built here, and every word position's list
is its pool here less some candidates (the original first, in the pool's order, with their
sources). A kept form that fails any check is not used: the space is built again. What the
scores decided is trusted as the run file's own records are: a certify run's spaces are checked
by `verify`, which rebuilds them in a fresh process; the other commands' results, which `verify`
does not take, rest on the kept file as on the run file, both written by the run itself.
"""

from __future__ import annotations

import json
from collections import Counter

from robustcount.runs.inflight import kept_spaces
from robustcount.spaces.build import Built, SpaceBuilder
from robustcount.spaces.space import Position, Space


class KeptBuilder:
    """A run's space builder (`spaces.build.SpaceBuilder`, its `definition` the same) whose spaces
    scored by contextual filters are kept beside the run file while their chunk runs
    (`runs.inflight.kept_spaces`) and read back by a resumed run, once `restored` finds
    them of this input and this definition, instead of scored again. Other spaces build in
    milliseconds, about what checking a kept one costs, so they are built each time."""

    def __init__(self, builder: SpaceBuilder):
        self.builder = builder

    @property
    def definition(self) -> dict:
        return self.builder.definition

    def __call__(self, item) -> Space:
        kept = kept_spaces()
        if kept is None or not any(self.builder.filters.needs_models):
            return self.builder(item)
        for form in kept.forms:
            if (found := restored(self.builder, item, form)) is not None:
                return found.space
        built = self.builder.build(item)
        kept.keep(kept_form(built))
        return built.space


def kept_form(built: Built) -> dict:
    """`built` as JSON: its input, definition, positions (kind, index, candidates, sources), the
    borderline candidates (word index, widest list, borderline ones) and what each filter removed."""
    item = built.space.item
    return {"item": list(item) if isinstance(item, tuple) else item, "definition": built.space.definition,
            "positions": [[p.kind, p.index, list(p.candidates), list(p.sources)] for p in built.space.positions],
            "borderline": [[index, list(widest), sorted(unsure)]
                           for index, (widest, unsure) in sorted(built.borderline.items())],
            "removed": dict(built.removed)}


def restored(builder: SpaceBuilder, item, kept) -> Built | None:
    """The space of `item` that `kept` (a `kept_form`) holds, when it is one `builder` may have
    built (the module docstring); else None."""
    try:
        return _restored(builder, item, kept)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _restored(builder: SpaceBuilder, item, kept: dict) -> Built | None:
    if (tuple(kept["item"]) if isinstance(kept["item"], list) else kept["item"]) != item:
        return None
    unscored = SpaceBuilder(builder.sources, builder.filters.unscored(),
                            builder.seed, builder.window).build(item).space
    window = unscored.definition.get("window")
    definition = {**builder.definition, "window": window} if window is not None else builder.definition
    if kept["definition"] != json.loads(json.dumps(definition)):
        return None
    positions = tuple(Position(kind, index, tuple(candidates), tuple(sources))
                      for kind, index, candidates, sources in kept["positions"])
    keys = [(p.index, p.kind == "word") for p in positions]
    pools = {(p.kind, p.index): p for p in unscored.positions}
    if keys != sorted(set(keys)) or not all(_within(p, pools.get((p.kind, p.index))) for p in positions):
        return None
    if {k for k, p in pools.items() if p.kind == "gap"} != {(p.kind, p.index) for p in positions if p.kind == "gap"}:
        return None
    borderline = {index: (tuple(widest), set(unsure)) for index, widest, unsure in kept["borderline"]}
    if not all(_sub_list(widest, pools.get(("word", i))) and set(unsure) <= set(widest[1:])
               for i, (widest, unsure) in borderline.items()):
        return None
    removed = Counter({name: count for name, count in kept["removed"].items() if type(count) is int})
    return Built(Space(item, positions, definition), borderline, removed)


def _within(position: Position, pool: Position | None) -> bool:
    """Whether `position` may come from `pool`, its position built without the scored filters: a
    gap position is its pool, a word position its pool less some substitutes, with their sources."""
    if pool is None or position.kind == "gap":
        return position == pool
    sources = dict(zip(pool.candidates, pool.sources))
    return _sub_list(position.candidates, pool) and list(position.sources) == [sources[c] for c in position.candidates]


def _sub_list(candidates, pool: Position | None) -> bool:
    """Whether `candidates` are the original and at least one substitute of `pool`, in its order."""
    if pool is None or len(candidates) < 2:
        return False
    order = {c: j for j, c in enumerate(pool.candidates)}
    ranks = [order.get(c, -1) for c in candidates]
    return ranks[0] == 0 and -1 not in ranks and ranks == sorted(set(ranks))
