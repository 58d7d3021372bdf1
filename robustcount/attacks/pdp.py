"""PDP, the pseudo-dynamic-programming attacker (DESIGN section 3).

Positions are visited in an order (most sensitive first, by default). T[j] holds the K states with
the lowest margin among those that use exactly j substitutions within the positions seen so far:

    T[j] <- topK( T[j]  U  { s + (p -> c) : s in T[j-1], c a substitute at p } )

Only new states cost model queries. Once an adversary with j substitutions is known, tables at j
and above stop growing: the search goes on only for a smaller one. The result is the adversary
with the fewest substitutions found (lowest margin among those). It is "pseudo" because a network
is not additive over positions: the table can miss the true minimum; K trades queries for quality.
"""

from __future__ import annotations


from robustcount.attacks.result import FAILED, AttackResult, margin, success
from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.models.sensitivity import word_sensitivities
from robustcount.spaces.space import Point, Space

METHOD = "pdp"
ORDERS = ("sensitivity", "importance", "text")


def position_order(engine: QueryEngine, space: Space, gold: int, order: str) -> list[int]:
    """Positions most influential first: `sensitivity` (gradients when the model has them, else
    leave-one-out), `importance` (leave-one-out), or `text` order. A gap takes the larger score of
    its two neighbouring words."""
    if order not in ORDERS:
        raise RobustcountError(f"unknown position order {order!r} (use {', '.join(ORDERS)})")
    if order == "text" or not space.positions:
        return list(range(len(space.positions)))
    method = "auto" if order == "sensitivity" else "leave-one-out"
    words = word_sensitivities(engine, space.item, gold, method=method)
    scores = []
    for p in space.positions:
        if p.kind == "word":
            scores.append(words[p.index])
        else:
            scores.append(max(words[p.index - 1], words[p.index]))
    return sorted(range(len(space.positions)), key=lambda i: (-scores[i], i))


def pdp_attack(
    engine: QueryEngine,
    space: Space,
    gold: int,
    beam: int = 10,
    max_substitutions: int | None = None,
    order: str = "sensitivity",
) -> AttackResult:
    """The adversary with the fewest substitutions PDP finds (see the module docstring)."""
    if beam < 1:
        raise RobustcountError(f"the beam K must be at least 1, got {beam}")
    limit = space.max_radius() if max_substitutions is None else min(max_substitutions, space.max_radius())
    visit = position_order(engine, space, gold, order)
    original = float(margin(engine.predict_proba([space.item]), gold)[0])
    tables: list[list[tuple[float, Point]]] = [[(original, ())]] + [[] for _ in range(limit)]
    best: tuple[int, float, Point] | None = None
    for seen, position in enumerate(visit):
        top = min(limit, seen + 1) if best is None else min(limit, best[0] - 1, seen + 1)
        for j in range(top, 0, -1):  # downwards, so T[j-1] is still the table before this position
            fresh = [tuple(sorted(state + ((position, c),)))
                     for _, state in tables[j - 1] for c in range(1, space.sizes[position] + 1)]
            if not fresh:
                continue
            probs = engine.predict_proba([space.apply(s) for s in fresh])
            margins = margin(probs, gold)
            adversarial = probs.argmax(axis=1) != gold
            for state, value, is_adv in zip(fresh, margins, adversarial):
                if is_adv and (best is None or (j, value) < (best[0], best[1])):
                    best = (j, float(value), state)
            merged = tables[j] + list(zip(margins.tolist(), fresh))
            merged.sort(key=lambda pair: (pair[0], pair[1]))
            tables[j] = merged[:beam]
        if best is not None and best[0] == 1:
            break
    if best is None:
        return AttackResult(METHOD, FAILED, space.item, gold,
                            reason=f"no adversary found within {limit} substitutions (K = {beam})")
    return success(METHOD, engine, space, best[2], gold)
