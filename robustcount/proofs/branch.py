"""Branch and bound over Omega_r: the simple prover's answers, enumerating only what bounds cannot
decide.

Omega_r starts as one box (`boxes.Box.ball`), bounded first. A box of more than
`enumerate_below` points (default: the network's measured pass cost, `COSTS`) is bounded
(`networks`); if the lower bound of its margin is above the tolerance (`decide`), all its points
keep the label and it is done; else it is split on the first position, in the prover's visiting
order (most sensitive first; computed only once a box needs splitting, since it costs model
calls), that can be split (a free position: kept or changed; a forced one: its candidates
halved), and its parts go back to the queue, the lowest bound first (where adversaries are
likeliest), up to BOUND_BATCH boxes per bound pass. A box of at most `enumerate_below` points is
enumerated through the query engine (`goal.evaluate_points`, batches filled across small boxes),
exactly as the simple prover checks points; the first adversary found is re-checked
(`goal.check_adversary`). Every split and how each box was decided go into a `boxes.SplitTree`,
which a certified proof keeps (`BoundProof.boxes`) for its certificate.

A space whose changes bounds cannot take (`slots.Unboundable`: a candidate that changes the
number of tokens, as `segment` and `intrude` propose) is decided by the simple prover
(`prover.prove`, in the same order, within `max_points`) and recorded as branch and bound's proof
with Omega_r one enumerated box, so the run goes on with the simple prover's answer (undecided,
saying why, past `max_points`).

The boxes partition Omega_r, so `certified` means every point was either enumerated or in a box
the bounds certified, `adversarial` carries a re-checked witness, and a limit of the engine (or
more than `max_points` points left to enumerate) ends the proof `undecided` with its reason.
Bound passes make no model calls: the engine's time limit is checked at its next request.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from robustcount import journal
from robustcount.bounds.boxes import BOUND, BOUND_BATCH, ENUMERATE, Box, SplitTree, TooManyPoints
from robustcount.bounds.convolution import ConvolutionBounds
from robustcount.bounds.decide import certifies, margin_lower_bound
from robustcount.bounds.lstm import LSTMBounds
from robustcount.bounds.networks import bounds_for
from robustcount.bounds.slots import TokenSlots, Unboundable, token_slots
from robustcount.errors import LimitReached, RobustcountError
from robustcount.goal import MARGIN_TOLERANCE, MAX_POINTS, check_adversary, evaluate_points
from robustcount.models.engine import QueryEngine
from robustcount.options import one_of
from robustcount.orders import position_order
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, UNDECIDED, Checkpointing, Proof, prove
from robustcount.spaces.space import Point, Space

PROOF_METHODS = ("auto", "enumerate", "bound")
"""How `certify` proves: `auto` bounds where the model supports bounds and they were measured to
cost less than enumeration on it (`Cost.pays`), else enumerates; `enumerate` is the simple
prover; `bound` branch and bound."""


@dataclass(frozen=True)
class Cost:
    """What bounding costs on a network, measured by experiments/bench_bounds.py on a tuning
    sample (docs/proofs/bounds.md, "Branch and bound"): a bound pass per box in forward-pass
    equivalents as branch and bound batches them, which is also the size up to which a box is
    enumerated rather than bounded (a box of fewer points costs less to enumerate than to bound),
    and whether branch and bound cost less than enumeration in total at r = 3 (`pays`: only then
    does `method="auto"` bound, so that the default is never the slower one by design)."""

    pass_cost: int
    pays: bool


COSTS = {ConvolutionBounds: Cost(pass_cost=27, pays=False), LSTMBounds: Cost(pass_cost=93, pays=False)}


def bounds_pay(classifier, points: int, max_points: int) -> bool:
    """Whether counting `points` points exactly should use bounds on `classifier`: it supports
    bounds, and they pay on it (`Cost.pays`) or enumeration is refused (more than `max_points`)."""
    try:
        bounds = bounds_for(classifier)
    except RobustcountError:
        return False
    return COSTS[type(bounds)].pays or points > max_points


def chosen_method(method: str, classifier) -> str:
    """`enumerate` or `bound`: the method `method` (one of PROOF_METHODS) proves with on `classifier`;
    `bound` on a model bounds do not support is refused in one line (`bounds_for`'s)."""
    one_of(method, PROOF_METHODS, "proof method")
    if method == "enumerate":
        return method
    try:
        bounds = bounds_for(classifier)
    except RobustcountError:
        if method == "bound":
            raise
        return "enumerate"
    return "bound" if method == "bound" or COSTS[type(bounds)].pays else "enumerate"


@dataclass
class BoundProof(Proof):
    """A proof by branch and bound: the prover's answer, with how it was reached."""

    boxes_bounded: int = 0
    """Boxes bounded (`BOUND_BATCH` to a pass)."""
    certified_by_bounds: int = 0
    """Points in the boxes the bounds certified (never enumerated)."""
    boxes: list | None = None
    """The split tree (`boxes.SplitTree.preorder`) of a certified proof: what its certificate records."""
    bound_seconds: float = 0.0
    """CPU seconds of the bound passes (process time, which the shared machine's load does not inflate)."""

    def as_dict(self) -> dict:
        """As a checkpoint keeps it (`from_dict` reads it back); a run record leaves out `boxes`
        (`proofs.certify_record.proof_record`), which its certificate holds."""
        record = super().as_dict()
        record["certified_by_bounds"] = str(self.certified_by_bounds)
        del record["bound_seconds"]
        return record

    @classmethod
    def from_dict(cls, record: dict) -> BoundProof:
        return super().from_dict({**record, "certified_by_bounds": int(record["certified_by_bounds"])})


def prove_with_bounds(
    engine: QueryEngine,
    space: Space,
    gold: int,
    radius: int,
    *,
    order: str | Sequence[int] = "sensitivity",
    max_points: int | None = MAX_POINTS,
    enumerate_below: int | None = None,
    checkpointing: Checkpointing = Checkpointing(),
) -> BoundProof:
    """Decide Omega_radius as `prover.prove` does (see the module docstring); the engine's model
    must be one `networks.bounds_for` supports. Boxes of at most `enumerate_below` points (default:
    the network's `Cost.pass_cost`) are enumerated. `max_points` caps the points enumerated (so a
    space larger than it can still be certified by bounds). A bound proof keeps no checkpoint
    inside a radius: when one is due it hands `checkpointing.checkpoint` None before it starts (the
    radii before it are kept), so a resumed run proves this radius again from its start;
    `checkpointing.resume` is always None for it."""
    checkpoint = checkpointing.checkpoint
    began = time.perf_counter()
    if checkpoint is not None and journal.current().due():  # the radii before this one
        checkpoint(None)
    total = space.count(radius)
    bounds = bounds_for(engine.model)
    enumerate_below = COSTS[type(bounds)].pass_cost if enumerate_below is None else enumerate_below
    slots, unboundable = _slots(engine, space)
    if slots is None:
        return _enumerated(prove(engine, space, gold, radius, order=order, max_points=max_points), unboundable)
    search = _Search(engine, space, gold, max_points)
    proof = BoundProof(UNDECIDED, radius, total)
    tree, beats = SplitTree(), journal.current()
    # The order costs model calls: it is asked for only once a box needs splitting.
    rank = functools.cache(lambda: {p: i for i, p in enumerate(position_order(engine, space, gold, order))})
    try:
        queue, tie = [(-np.inf, 0, 0, Box.ball(space, radius))], itertools.count(1)
        while queue and search.witness is None:
            batch = _next_batch(queue, space, enumerate_below, search, tree)
            if not batch:
                continue
            differences = _bound(bounds, slots, batch, gold, proof)
            beats.beat(search.checked + proof.certified_by_bounds, total, "points")
            for row, (node, box, size) in enumerate(batch):
                low = margin_lower_bound(differences[row], gold)
                if certifies(differences[row], gold, MARGIN_TOLERANCE):
                    tree.leaf(node, BOUND, low)
                    proof.certified_by_bounds += size
                    continue
                position = min(box.splittable(), key=rank().__getitem__)
                parts = box.split(space, position)
                for child, part in zip(tree.split(node, position, len(parts)), parts):
                    heapq.heappush(queue, (low, next(tie), child, part))
        if search.witness is None:
            search.flush()
    except LimitReached as limit:
        proof.reason, proof.limit = f"{limit} (after {search.checked} of {total} points)", limit.kind
    proof.checked, proof.smallest_margin, proof.smallest_margin_point = search.checked, search.smallest, search.where
    proof.seconds = time.perf_counter() - began
    return _conclude(proof, search, space, tree, total)


def _next_batch(queue: list, space: Space, enumerate_below: int, search: _Search, tree: SplitTree) -> list:
    """Pop boxes off `queue` (lowest bound first) until BOUND_BATCH of them, each of more than
    `enumerate_below` points, are to be bounded (returned as (node, box, size)) or the queue is
    empty or a witness is found; the smaller boxes popped meanwhile are enumerated."""
    batch = []
    while queue and len(batch) < BOUND_BATCH and search.witness is None:
        _, _, node, box = heapq.heappop(queue)
        size = box.count(space)
        if size > enumerate_below:
            batch.append((node, box, size))
        else:
            tree.leaf(node, ENUMERATE)
            search.enumerate(box.points(space), size)
    return batch


def _bound(bounds, slots: TokenSlots, batch: list, gold: int, proof: BoundProof):
    """The intervals of the logit differences over each box of `batch` (`bounds.differences`),
    counted (boxes and process time) on `proof`."""
    started = time.process_time()
    differences = bounds.differences([box.slots(slots) for _, box, _ in batch], gold)
    proof.bound_seconds += time.process_time() - started
    proof.boxes_bounded += len(batch)
    return differences


def _conclude(proof: BoundProof, search: _Search, space: Space, tree: SplitTree, total: int) -> BoundProof:
    """The finished search's verdict on `proof`: undecided when it has a reason, adversarial with a
    witness, else certified with its split tree, but only when the points checked and those
    certified by bounds are exactly the `total` of the ball (else an internal error)."""
    if proof.reason is not None:
        return proof
    if search.witness is not None:
        proof.status, proof.smallest_margin, proof.smallest_margin_point = ADVERSARIAL, *search.witness
        proof.witness = space.apply(search.witness[1])
        return proof
    if search.checked + proof.certified_by_bounds != total:  # the boxes and the count disagree: never certify
        raise RobustcountError(f"internal: {search.checked} points checked and {proof.certified_by_bounds} "
                               f"certified by bounds, of {total}")
    proof.status, proof.boxes = CERTIFIED, tree.preorder()
    return proof


def _slots(engine: QueryEngine, space: Space) -> tuple[TokenSlots | None, str]:
    """The token slots of `space` for the engine's model, or None and what an undecided proof's
    reason adds when bounds cannot take the space (`slots.Unboundable`)."""
    try:
        return token_slots(engine.model.tokenizer, space), ""
    except Unboundable as refused:
        return None, f"; bounds cannot take this space ({str(refused).removeprefix('bounds: ')}), so its points " \
                     "are enumerated"


def _enumerated(proof: Proof, unboundable: str) -> BoundProof:
    """The simple prover's `proof` of a space bounds cannot take, as branch and bound records it:
    Omega_r one enumerated box, no box bounded; an undecided one's reason says why."""
    found = BoundProof(**{f.name: getattr(proof, f.name) for f in fields(Proof)})
    if found.status == CERTIFIED:
        found.boxes = [[ENUMERATE]]
    if found.reason is not None:
        found.reason += unboundable
    return found


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
            raise TooManyPoints(self.max_points)
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

