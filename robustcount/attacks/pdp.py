"""PDP, the pseudo-dynamic-programming attacker (Yang et al. 2022).

PDP looks for the fewest substitutions level by level: every single substitution first (level 1,
position by position in an order, most sensitive first by default, up to the first position
holding an adversary, so that an adversary at distance 1 is the true minimum), then states of j
substitutions built from the best states of j - 1, stopping at the first level holding an
adversary and returning its lowest-margin adversary found. Margins are in log-odds
(`log_margin`), where a logistic model's word contributions add up. Two searches fill the levels:

- **Guided** (the default, `prune=True`). Level 1 measures each substitution's drop, how far it
  lowers the margin of the input. A child of a state (one more substitution, at a position the
  state leaves alone) has a predicted margin, its parent's margin less the child's drop, which is
  exact were the model additive in log-odds. Each level takes the K lowest-margin states of the
  level before, ranks their children by predicted margin, the nearest the boundary first, and
  evaluates them CHUNK at a time, stopping at the first chunk holding an adversary and after at
  most LEVEL_CAP times level 1's substitutions. Only substitutions that lowered the margin at
  level 1 are tried; a child is kept for the next level only if its margin fell below its parent's;
  and a state (evaluated or predicted) is given up once the largest level-1 drops of the positions
  it leaves alone, with the substitutions left and a slack of SLACK, could not take its margin to
  the goal's adversarial boundary (`_adversarial_log_margin`). The search ends when no state is
  left. With K as large as the space and an additive model it finds the true minimum; on
  networks it can miss it, and K, LEVEL_CAP and SLACK trade queries for quality
  (docs/attacks/pdp-cost.md).
- **Tables** (`prune=False`). T_i[j] holds the K lowest-margin states among those that use
  exactly j substitutions within the first i positions visited, whatever their margins:

      T_i[j] = topK( T_{i-1}[j]  U  { s + (p_i -> c) : s in T_{i-1}[j-1], c a substitute at p_i } )

  Every T_i[j] is finished before any T_i[j+1] is grown; within a level the search stops at the
  first position whose new states hold an adversary. With K as large as the space it is an
  exhaustive search whatever the model.

It is "pseudo" because a network is not additive over positions.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import field

import numpy as np

from robustcount.attacks.recipe import Recipe
from robustcount.attacks.result import FAILED, AttackResult, success
from robustcount.errors import RobustcountError
from robustcount.goal import MARGIN_TOLERANCE, evaluate_all
from robustcount.models.engine import QueryEngine
from robustcount.options import option, options_dataclass, radius_field
from robustcount.orders import ORDERS, order_calls, position_order
from robustcount.spaces.space import Point, Space

METHOD = "pdp"
LEVEL_CAP = 0.5
"""The guided search evaluates at most this share of level 1's substitutions at each deeper level:
chosen on the tuning sample of docs/attacks/pdp-cost.md (seed 0, lstm-rt, cnn-rt and bow-rt, 20
examples per length bucket), where 1.0 cost up to 3.4 times the greedy search's calls, 0.5 up to
2.7 and 0.3 up to 2.4, reaching the oracle's minimum on 98.7%, 98.7% and 98.1% of the examples."""
CHUNK = 16
"""Children evaluated at a time: a level ends at the first chunk holding an adversary."""
SLACK = 3.0
"""A state is extended while its margin is at most SLACK times what the positions it leaves alone
could take off were the model additive: networks are not (chosen for the earlier search, where at
1 the bound cut the minimum on 3 of 46 benchmark sentences and at 3 on none; CHANGELOG)."""


def log_margin(probs, gold: int):
    """log p(gold) - log max p(other), row-wise: the margin in log-odds, where a logistic model's
    word contributions add up."""
    probs = np.clip(np.atleast_2d(probs), 1e-12, 1.0)
    return np.log(probs[:, gold]) - np.log(np.delete(probs, gold, axis=1).max(axis=1))


def _adversarial_log_margin(labels: int) -> float:
    """The largest log-odds margin of a point the goal's rule calls adversarial (probability margin
    at most MARGIN_TOLERANCE) among `labels` labels: log(1 + tolerance / p_other), where the most
    probable other label has p_other >= (1 - tolerance) / labels. States that could fall to it
    are kept."""
    return math.log1p(labels * MARGIN_TOLERANCE / (1 - MARGIN_TOLERANCE))


def pdp_attack(
    engine: QueryEngine,
    space: Space,
    gold: int,
    beam: int = 10,
    radius: int | None = None,
    order: str = "sensitivity",
    prune: bool = True,
) -> AttackResult:
    """The adversary with the fewest substitutions PDP finds within `radius` substitutions (default:
    every position; see the module docstring). With `prune=False` tables keep their K lowest-margin
    states whatever the margins, so that a K as large as the space makes PDP an exhaustive search."""
    if beam < 1:
        raise RobustcountError(f"the beam K must be at least 1, got {beam}")
    limit = space.max_radius() if radius is None else min(radius, space.max_radius())
    visit = position_order(engine, space, gold, order)
    clean = float(log_margin(engine.predict_proba([space.item]), gold)[0])
    search = _guided if prune else _tables
    found = search(engine, space, gold, beam, limit, visit, clean)
    if found is not None:
        return success(METHOD, engine, space, found, gold)
    return AttackResult(METHOD, FAILED, space.item, gold,
                        reason=f"no adversary found within {limit} substitutions (K = {beam})")


def _adversary(engine, space, gold, states: list[Point]) -> tuple[np.ndarray, Point | None]:
    """The log-odds margins of `states`, and the lowest-margin adversary among them (or None)."""
    evaluated = evaluate_all(engine, space, states, gold)
    margins = log_margin(evaluated.probs, gold)
    found = [(float(m), state) for m, state, adv in zip(margins, states, evaluated.adversarial) if adv]
    return margins, (min(found)[1] if found else None)


def _singles(engine, space, gold, visit, clean) -> tuple[dict[tuple[int, int], float], Point | None]:
    """Level 1: every single substitution, position by position in the visiting order, up to the
    first position holding an adversary. Returns each substitution's margin drop from the input."""
    drops = {}
    for position in visit:
        states = [((position, c),) for c in range(1, space.sizes[position] + 1)]
        margins, found = _adversary(engine, space, gold, states)
        if found is not None:
            return drops, found
        drops.update({state[0]: clean - float(m) for state, m in zip(states, margins)})
    return drops, None


def _guided(engine, space, gold, beam, limit, visit, clean) -> Point | None:
    """The pruned search (module docstring): level 1 whole, then at each level j the children of
    the K lowest-margin states of level j - 1, evaluated in the order of their predicted margins
    (the parent's margin less the substitution's drop at level 1), at most LEVEL_CAP times level
    1's substitutions a level, each child only while it could reach the boundary."""
    drops, found = _singles(engine, space, gold, visit, clean)
    if found is not None or limit < 2:
        return found
    boundary = _adversarial_log_margin(len(engine.labels))
    best = {}  # each position's largest drop
    for (position, _), drop in drops.items():
        best[position] = max(best.get(position, 0.0), drop)
    useful = sorted(((d, pc) for pc, d in drops.items() if d > 0), reverse=True)
    cap = max(beam, math.ceil(LEVEL_CAP * len(drops)))

    def reachable(margin: float, used: set[int], more: int) -> bool:
        ahead = sorted((d for p, d in best.items() if p not in used), reverse=True)[:more]
        return margin <= SLACK * sum(ahead) + boundary

    parents = sorted((clean - d, ((position, c),)) for d, (position, c) in useful
                     if reachable(clean - d, {position}, limit - 1))[:beam]
    for j in range(2, limit + 1):
        children: dict[Point, tuple[float, float]] = {}  # child: (predicted margin, its parent's margin)
        for margin, state in parents:
            used = {p for p, _ in state}
            for d, (position, c) in useful:
                if position not in used:
                    child = tuple(sorted(state + ((position, c),)))
                    predicted = margin - d
                    if predicted < children.get(child, (math.inf,))[0] and reachable(predicted, used | {position},
                                                                                       limit - j):
                        children[child] = (predicted, margin)
        ranked = sorted(children, key=lambda child: (children[child][0], child))[:cap]
        kept = []
        for start in range(0, len(ranked), CHUNK):
            chunk = ranked[start : start + CHUNK]
            margins, found = _adversary(engine, space, gold, chunk)
            if found is not None:
                return found
            kept += [(float(m), child) for m, child in zip(margins, chunk)
                     if m < children[child][1] and reachable(float(m), {p for p, _ in child}, limit - j)]
        parents = sorted(kept)[:beam]
        if not parents:
            return None
    return None


def _tables(engine, space, gold, beam, limit, visit, clean) -> Point | None:
    """The unpruned search: T_i[j] holds the K lowest-margin states of j substitutions within the
    first i positions visited, whatever their margins (exhaustive when K is as large as the space)."""
    # parents[k]: the finished T_k[j-1] for k = 0..n (level 0: the input itself at every prefix)
    parents: list[list[tuple[float, Point]]] = [[(clean, ())] for _ in range(len(visit) + 1)]
    for j in range(1, limit + 1):
        table: list[tuple[float, Point]] = []
        finished = [table]
        for i, position in enumerate(visit):
            fresh = [tuple(sorted(state + ((position, c),)))
                     for _, state in parents[i] for c in range(1, space.sizes[position] + 1)]
            if fresh:
                margins, found = _adversary(engine, space, gold, fresh)
                if found is not None:
                    return found
                table = sorted(table + [(float(m), state) for m, state in zip(margins, fresh)])[:beam]
            finished.append(table)
        parents = finished
    return None


def pdp_calls(space: Space, beam: int = 10, radius: int | None = None, order: str = "sensitivity",
              prune: bool = True) -> int:
    """The most model calls `pdp_attack` makes with these options (module docstring): the input,
    the position order, every single substitution (level 1), then at each deeper level at most
    max(K, LEVEL_CAP x level 1's substitutions) children (guided) or K times level 1's
    substitutions (tables)."""
    limit = space.max_radius() if radius is None else min(radius, space.max_radius())
    if limit == 0:
        return 1
    singles = sum(space.sizes)
    level = max(beam, math.ceil(LEVEL_CAP * singles)) if prune else beam * singles
    return 1 + order_calls(space, order) + singles + (limit - 1) * level


@options_dataclass
class PDPOptions:
    beam: int = field(default=10, metadata=option("PDP's K.", minimum=1))
    radius: int | None = radius_field(None, "Look no further than this many substitutions (default: every position).",
                                      names=("--radius", "--max-substitutions"))
    order: str = field(default="sensitivity", metadata=option("The position order.", choices=ORDERS))
    prune: bool = field(default=True, metadata=option(
        "Fill PDP's tables (the K lowest-margin states whatever their margins) instead of the guided search.",
        names=("--no-pruning",), flag=True, invert=True))


class PDP(Recipe, name="pdp", options=PDPOptions):
    """PDP: the fewest substitutions, level by level over the positions in an order."""

    def attack(self, engine, space, gold, options: PDPOptions, sentence_encoder, masked_lm) -> AttackResult:
        return pdp_attack(engine, space, gold, **dataclasses.asdict(options))

    def planned_calls(self, space, options: PDPOptions) -> int:
        return pdp_calls(space, **dataclasses.asdict(options))
