"""PDP, the pseudo-dynamic-programming attacker (DESIGN section 3).

Positions are visited in an order (most sensitive first, by default). T_i[j] holds at most K
states with the lowest margin (in log-odds, `log_margin`) among those that use exactly j
substitutions within the first i positions visited:

    T_i[j] = topK( T_{i-1}[j]  U  { s + (p_i -> c) : s in T_{i-1}[j-1], c a substitute at p_i } )

The tables are filled level by level: every T_i[j] is finished before any T_i[j+1] is grown, so
the search stops at the first level j holding an adversary, which is then the fewest
substitutions PDP can find (level 1 tries every single substitution, so an adversary at distance
1 is the true minimum). Within a level, the search stops at the first position whose new states
hold an adversary, returning that position's lowest-margin adversary.

K adapts to the margins (unless `prune=False`), under the additivity PDP assumes: a state enters
a table only if its substitution lowered the margin below its parent's (a substitution that makes
the model surer of the gold label leads nowhere), and once a level is finished a state is
extended only if the largest single-substitution drops of the positions still ahead of it
(measured at level 1), with a slack of SLACK, could take its margin to the goal's adversarial
boundary (`_adversarial_log_margin`) with the substitutions left. Tables hold at most K states
and often none, and the search ends when no state can reach the boundary. Only new states cost
model queries. It is "pseudo" because a network is not additive over positions: the tables can
miss the true minimum; K (and SLACK) trade queries for quality.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from robustcount.attacks.recipe import Recipe
from robustcount.attacks.result import FAILED, AttackResult, success
from robustcount.errors import RobustcountError
from robustcount.goal import MARGIN_TOLERANCE, evaluate_all
from robustcount.models.engine import QueryEngine
from robustcount.options import option, radius_field
from robustcount.orders import ORDERS, position_order
from robustcount.spaces.space import Point, Space

METHOD = "pdp"
SLACK = 3.0
"""A state is extended while its margin is at most SLACK times what the positions ahead could
take off were the model additive: networks are not, and at 1 the bound cut the minimum on 3 of
46 benchmark sentences (README, "Attacks"); at 3, none, for 2.5 times the greedy search's calls."""


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


def _reach(drops: list[float], start: int, substitutions: int) -> float:
    """The most the log-odds margin can fall, were the model additive in it, with `substitutions`
    more single substitutions at the positions visited from `start` on."""
    return sum(sorted(drops[start:], reverse=True)[:substitutions])


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
    every position; see the module docstring). With
    `prune=False` tables keep their K lowest-margin states whatever the margins, so that a K as
    large as the space makes PDP an exhaustive search."""
    if beam < 1:
        raise RobustcountError(f"the beam K must be at least 1, got {beam}")
    limit = space.max_radius() if radius is None else min(radius, space.max_radius())
    visit = position_order(engine, space, gold, order)
    boundary = _adversarial_log_margin(len(engine.labels))
    clean = float(log_margin(engine.predict_proba([space.item]), gold)[0])
    # parents[k]: the finished T_k[j-1] for k = 0..n (level 0: the input itself at every prefix)
    parents: list[list[tuple[float, Point]]] = [[(clean, ())] for _ in range(len(visit) + 1)]
    drops = [0.0] * len(visit)  # the largest margin drop of a single substitution at each position
    for j in range(1, limit + 1):
        table: list[tuple[float, Point]] = []
        finished = [table]
        for i, position in enumerate(visit):
            fresh = [(value, tuple(sorted(state + ((position, c),))))
                     for value, state in parents[i] for c in range(1, space.sizes[position] + 1)]
            if fresh:
                evaluated = evaluate_all(engine, space, [state for _, state in fresh], gold)
                margins = log_margin(evaluated.probs, gold)
                found = [(float(m), state) for m, (_, state), adv in zip(margins, fresh, evaluated.adversarial) if adv]
                if found:
                    return success(METHOD, engine, space, min(found)[1], gold)
                if j == 1:
                    drops[i] = max(0.0, clean - float(margins.min()))
                kept = [(float(m), state) for m, (parent, state) in zip(margins, fresh) if m < parent or not prune]
                table = sorted(table + kept)[:beam]
            finished.append(table)
        if prune:
            finished = [[(value, state) for value, state in states
                         if value <= SLACK * _reach(drops, k, limit - j) + boundary]
                        for k, states in enumerate(finished)]
        parents = finished
        if not any(parents):
            break
    return AttackResult(METHOD, FAILED, space.item, gold,
                        reason=f"no adversary found within {limit} substitutions (K = {beam})")


@dataclass(frozen=True)
class PDPOptions:
    beam: int = field(default=10, metadata=option("PDP's K.", minimum=1))
    radius: int | None = radius_field(None, "Look no further than this many substitutions (default: every position).",
                                      names=("--radius", "--max-substitutions"))
    order: str = field(default="sensitivity", metadata=option("The position order.", choices=ORDERS))
    prune: bool = field(default=True, metadata=option(
        "Keep the K lowest-margin states whatever their margins (no additivity pruning).",
        names=("--no-pruning",), flag=True, invert=True))


class PDP(Recipe, name="pdp", options=PDPOptions):
    """PDP: the fewest substitutions, level by level over the positions in an order."""

    def attack(self, engine, space, gold, options: PDPOptions, sentence_encoder) -> AttackResult:
        return pdp_attack(engine, space, gold, **dataclasses.asdict(options))
