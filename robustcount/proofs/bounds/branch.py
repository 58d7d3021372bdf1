"""Branch and bound over Omega_r: the simple prover's answers, enumerating only what bounds cannot
decide.

Omega_r starts as one box (`boxes.Box.ball`). A box of more than `enumerate_below` points is
bounded (`networks`); if the lower bound of its margin is above the tolerance (`decide`), all its
points keep the label and it is done; else it is split on the first position, in the prover's
visiting order (most sensitive first), that can be split (a free position: kept or changed; a
forced one: its candidates halved), and its parts go back to the queue, the lowest bound first
(where adversaries are likeliest), up to BOUND_BATCH boxes per bound pass. A box of at most `enumerate_below` points is enumerated through
the query engine (`goal.evaluate_points`, batches filled across small boxes), exactly as the
simple prover checks points; the first adversary found is re-checked (`goal.check_adversary`).

The boxes partition Omega_r, so `certified` means every point was either enumerated or in a box
the bounds certified, `adversarial` carries a re-checked witness, and a limit of the engine (or
more than `max_points` points left to enumerate) ends the proof `undecided` with its reason.
Bound passes make no model calls: the engine's time limit is checked at its next request.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robustcount.errors import LimitReached, RobustcountError
from robustcount.goal import MARGIN_TOLERANCE, MAX_POINTS, check_adversary, evaluate_points
from robustcount.models.engine import QueryEngine
from robustcount.orders import position_order
from robustcount.proofs.bounds.boxes import Box
from robustcount.proofs.bounds.decide import certifies, margin_lower_bound
from robustcount.proofs.bounds.networks import bounds_for
from robustcount.proofs.bounds.slots import token_slots
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, UNDECIDED, Proof
from robustcount.spaces.space import Point, Space

ENUMERATE_BELOW = 16
"""Boxes of at most this many points are enumerated rather than bounded (docs/proofs/bounds.md, cost)."""
BOUND_BATCH = 32
"""Boxes bounded in one pass (the networks' bounds are batched like forward passes)."""


@dataclass
class BoundProof(Proof):
    """A proof by branch and bound: the prover's answer, with how it was reached."""

    boxes_bounded: int = 0
    """Boxes bounded (`BOUND_BATCH` to a pass)."""
    certified_by_bounds: int = 0
    """Points in the boxes the bounds certified (never enumerated)."""
    bound_seconds: float = 0.0


def prove_with_bounds(
    engine: QueryEngine,
    space: Space,
    gold: int,
    radius: int,
    *,
    order: str | Sequence[int] = "sensitivity",
    max_points: int | None = MAX_POINTS,
    enumerate_below: int = ENUMERATE_BELOW,
) -> BoundProof:
    """Decide Omega_radius as `prover.prove` does (see the module docstring); the engine's model
    must be one `networks.bounds_for` supports. `max_points` caps the points enumerated."""
    began = time.perf_counter()
    total = space.count(radius)
    bounds = bounds_for(engine.model)
    slots = token_slots(engine.model.tokenizer, space)
    search = _Search(engine, space, gold, max_points)
    proof = BoundProof(UNDECIDED, radius, total)
    try:
        rank = {p: i for i, p in enumerate(position_order(engine, space, gold, order))}
        queue, tie = [(-np.inf, 0, Box.ball(space, radius))], itertools.count(1)
        while queue and search.witness is None:
            batch = []
            while queue and len(batch) < BOUND_BATCH and search.witness is None:
                _, _, box = heapq.heappop(queue)
                size = box.count(space)
                if size > enumerate_below:
                    batch.append((box, size))
                else:
                    search.enumerate(box.points(space), size)
            if not batch:
                continue
            started = time.perf_counter()
            differences = bounds.differences([box.slots(slots) for box, _ in batch], gold)
            proof.bound_seconds += time.perf_counter() - started
            proof.boxes_bounded += len(batch)
            for row, (box, size) in enumerate(batch):
                if certifies(differences[row], gold, MARGIN_TOLERANCE):
                    proof.certified_by_bounds += size
                    continue
                low = margin_lower_bound(differences[row], gold)
                position = min(box.splittable(), key=rank.__getitem__)
                for part in box.split(space, position):
                    heapq.heappush(queue, (low, next(tie), part))
        if search.witness is None:
            search.flush()
    except LimitReached as limit:
        proof.reason = f"{limit} (after {search.checked} of {total} points)"
    proof.checked, proof.smallest_margin, proof.smallest_margin_point = search.checked, search.smallest, search.where
    proof.seconds = time.perf_counter() - began
    if proof.reason is not None:
        return proof
    if search.witness is not None:
        proof.status, proof.smallest_margin, proof.smallest_margin_point = ADVERSARIAL, *search.witness
        proof.witness = space.apply(search.witness[1])
        return proof
    if search.checked + proof.certified_by_bounds != total:  # the boxes and the count disagree: never certify
        raise RobustcountError(f"internal: {search.checked} points checked and {proof.certified_by_bounds} "
                               f"certified by bounds, of {total}")
    proof.status = CERTIFIED
    return proof


class _Search:
    """The enumerated points: batched across boxes, with the lowest margin seen and the first
    re-checked adversary (`witness`: its margin and point)."""

    def __init__(self, engine: QueryEngine, space: Space, gold: int, max_points: int | None):
        self.engine, self.space, self.gold, self.max_points = engine, space, gold, max_points
        self.pending: list[Point] = []
        self.checked = 0
        self.smallest, self.where = None, None
        self.witness: tuple[float, Point] | None = None

    def enumerate(self, points, size: int) -> None:
        """Queue a box's points; evaluate them once they fill a batch."""
        if self.max_points is not None and self.checked + len(self.pending) + size > self.max_points:
            raise _TooMany(self.max_points)
        self.pending.extend(points)
        if len(self.pending) >= self.engine.batch_size:
            self.flush()

    def flush(self) -> None:
        """Evaluate the queued points, stopping at the first adversary (`witness`)."""
        points, self.pending = self.pending, []
        for evaluated in evaluate_points(self.engine, self.space, points, self.gold):
            self.checked += len(evaluated.points)
            low = int(evaluated.margins.argmin())
            if self.smallest is None or evaluated.margins[low] < self.smallest:
                self.smallest, self.where = float(evaluated.margins[low]), evaluated.points[low]
            found = evaluated.lowest_adversary()
            if found is not None:
                self.witness = (check_adversary(self.engine, self.space, found[0], self.gold), found[0])
                return


class _TooMany(LimitReached):
    def __init__(self, limit: int):
        super().__init__(f"more than {limit} points left to enumerate")
