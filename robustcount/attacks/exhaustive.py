"""The exhaustive minimal-adversary oracle: ground truth for small spaces."""

from __future__ import annotations

import dataclasses
from dataclasses import field

import numpy as np

from robustcount.attacks.recipe import Recipe
from robustcount.attacks.result import FAILED, AttackResult, success
from robustcount.goal import MAX_POINTS, evaluate_points
from robustcount.models.engine import QueryEngine
from robustcount.options import option, options_dataclass, radius_field
from robustcount.spaces.space import Space
from robustcount.status import POINT_LIMIT, UNDECIDED

METHOD = "exhaustive"


def exhaustive_attack(
    engine: QueryEngine,
    space: Space,
    gold: int,
    radius: int | None = None,
    max_points: int = MAX_POINTS,
) -> AttackResult:
    """Check Omega_k distance by distance (k = 1, 2, ...) up to `radius` (default: every
    position) and return, at the first distance holding an adversary, the one with the lowest
    margin. The points checked in all may not exceed `max_points`: at the first distance whose
    shell would pass that bound, the oracle refuses before querying it, saying which distance it
    cleared (`cleared`: every point up to that distance checked, none adversarial). Skipping
    misclassified inputs and budgets are the caller's (see `result.run_attack`)."""
    depth = space.max_radius() if radius is None else min(radius, space.max_radius())
    checked = 0
    for k in range(1, depth + 1):
        shell = space.count_at(k)
        if checked + shell > max_points:
            return AttackResult(METHOD, UNDECIDED, space.item, gold, cleared=k - 1, limit=POINT_LIMIT,
                                reason=f"no adversary within distance {k - 1}; the {shell} points at distance "
                                       f"{k} would pass the bound of {max_points} points")
        checked += shell
        best_point, best_margin = None, np.inf
        for evaluated in evaluate_points(engine, space, space.points_at_distance(k), gold):
            found = evaluated.lowest_adversary()
            if found is not None and found[1] < best_margin:
                best_point, best_margin = found
        if best_point is not None:
            return success(METHOD, engine, space, best_point, gold)
    return AttackResult(METHOD, FAILED, space.item, gold, cleared=depth, reason=f"no adversary within distance {depth}")


@options_dataclass
class ExhaustiveOptions:
    radius: int | None = radius_field(None, "Look no further than this many substitutions (default: every position).",
                                      names=("--radius", "--max-substitutions"))
    max_points: int = field(default=MAX_POINTS, metadata=option(
        "Check at most this many points, refusing at the first distance that would pass it.", minimum=1))


def exhaustive_calls(space: Space, radius: int | None = None, max_points: int = MAX_POINTS) -> int:
    """The most model calls `exhaustive_attack` makes: the input and every shell it would check
    (up to the first one that would pass `max_points`)."""
    depth = space.max_radius() if radius is None else min(radius, space.max_radius())
    checked = 0
    for k in range(1, depth + 1):
        if checked + space.count_at(k) > max_points:
            break
        checked += space.count_at(k)
    return 1 + checked


class Exhaustive(Recipe, name="exhaustive", options=ExhaustiveOptions):
    """The exhaustive oracle: the true minimum, distance by distance, for small spaces."""

    def attack(self, engine, space, gold, options: ExhaustiveOptions, sentence_encoder, masked_lm) -> AttackResult:
        return exhaustive_attack(engine, space, gold, **dataclasses.asdict(options))

    def planned_calls(self, space, options: ExhaustiveOptions) -> int:
        return exhaustive_calls(space, **dataclasses.asdict(options))
