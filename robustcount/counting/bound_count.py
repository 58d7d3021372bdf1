"""Exact counting with bounds: |{X' in Omega_r : the model keeps the gold label}|, counting whole
the boxes that bounds prove all-robust (`decide.certifies`) or all-adversarial (`decide.refutes`:
some label's logit stays above gold's at every point), and enumerating the rest through the query
engine, so that PR is exact on spaces far larger than enumeration reaches.

Boxes are cut as branch and bound cuts them (`boxes.Box.split`, on the first splittable position
in the position order), so they partition Omega_r; a box of at most `enumerate_below` points is
enumerated (default COUNT_ENUMERATE_BELOW: counting with bounds runs where enumeration is refused, so
every box but the smallest is bounded, to keep the points enumerated under the limit). The count is exact: every point is either evaluated or in a box whose bound decides it
under the goal's rule, with the model's rounding (`decide`). A space bounds cannot take
(`slots.Unboundable`) is enumerated whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from robustcount.bounds.boxes import BOUND_BATCH, Box, TooManyPoints
from robustcount.bounds.decide import certifies, refutes
from robustcount.bounds.networks import bounds_for
from robustcount.bounds.slots import Unboundable, token_slots
from robustcount.errors import RobustcountError
from robustcount.goal import MARGIN_TOLERANCE, evaluate_points
from robustcount.models.engine import QueryEngine
from robustcount.orders import position_order
from robustcount.spaces.space import Space

COUNT_ENUMERATE_BELOW = 4
"""Boxes of at most this many points are enumerated when counting (see the module docstring)."""


@dataclass(frozen=True)
class BoundCount:
    """The points of Omega_r (`size`) that keep the gold label (`robust`): `robust_by_bounds` and
    `adversarial_by_bounds` of them counted in boxes the bounds decided, `enumerated` evaluated."""

    size: int
    robust: int
    robust_by_bounds: int
    adversarial_by_bounds: int
    enumerated: int
    boxes_bounded: int

    @property
    def by_bounds(self) -> int:
        """The points the bounds decided, either way."""
        return self.robust_by_bounds + self.adversarial_by_bounds


def count_with_bounds(engine: QueryEngine, space: Space, gold: int, radius: int, *,
                      order: str | Sequence[int] = "sensitivity", max_points: int | None = None,
                      enumerate_below: int = COUNT_ENUMERATE_BELOW) -> BoundCount:
    """Count the robust points of Omega_radius exactly (see the module docstring); the engine's
    model must be one `networks.bounds_for` supports. More than `max_points` points to enumerate
    raise `LimitReached` (the example is then undecided); limits of the engine end it likewise."""
    bounds = bounds_for(engine.model)
    try:
        slots = token_slots(engine.model.tokenizer, space)
    except Unboundable:  # bounds cannot take the space: every point is enumerated (within max_points)
        slots, enumerate_below = None, space.count(radius)
    size = space.count(radius)
    robust_by_bounds = adversarial_by_bounds = enumerated = robust_enumerated = bounded = 0
    rank, queue, pending = None, [Box.ball(space, radius)], []

    def evaluate(points) -> None:
        nonlocal enumerated, robust_enumerated
        for evaluated in evaluate_points(engine, space, points, gold):
            enumerated += len(evaluated.points)
            robust_enumerated += int(evaluated.kept.sum())

    while queue:
        batch = []
        while queue and len(batch) < BOUND_BATCH:
            box = queue.pop()
            count = box.count(space)
            if count > enumerate_below:
                batch.append((box, count))
                continue
            if max_points is not None and enumerated + len(pending) + count > max_points:
                raise TooManyPoints(max_points)
            pending.extend(box.points(space))
            if len(pending) >= engine.batch_size:
                evaluate(pending)
                pending = []
        if not batch:
            continue
        differences = bounds.differences([box.slots(slots) for box, _ in batch], gold)
        bounded += len(batch)
        for row, (box, count) in enumerate(batch):
            if certifies(differences[row], gold, MARGIN_TOLERANCE):
                robust_by_bounds += count
            elif refutes(differences[row], gold, MARGIN_TOLERANCE):
                adversarial_by_bounds += count
            else:
                if rank is None:  # the order costs model calls: only once a box needs splitting
                    rank = {p: i for i, p in enumerate(position_order(engine, space, gold, order))}
                queue.extend(box.split(space, min(box.splittable(), key=rank.__getitem__)))
    evaluate(pending)
    if enumerated + robust_by_bounds + adversarial_by_bounds != size:  # the boxes and the count disagree
        raise RobustcountError(f"internal: {enumerated} points enumerated and {robust_by_bounds + adversarial_by_bounds}"
                               f" decided by bounds, of {size}")
    return BoundCount(size, robust_enumerated + robust_by_bounds, robust_by_bounds, adversarial_by_bounds,
                      enumerated, bounded)
