"""The simple prover (SP, Yang et al. 2022): certify that no adversary lies within r substitutions
by checking every point of Omega_r.

Points are walked by changed-position sets, the largest sets of the first positions of the order
first (`Space.points_by_subset`), in batches through the query engine, stopping at the first
adversary. With the default order (`orders.MARGINS`) the points of at most one change come first,
in text order, then the rest in the order of the lowest margin each position's single
substitutions reached: the order costs no gradient pass and no model call of its own.
Three answers: `certified` (every point checked, none adversarial), `adversarial` (a witness,
re-checked) and `undecided` (a space over max_points, the time limit or the budget: the proof's
`limit`, with the reason; `status.py`). A partial check is
never `certified`.

While it goes, the prover beats the points checked of |Omega_r| (`journal.current()`) and, when
the journal keeps checkpoints, hands one to `checkpoint` at most every 30 s: the radii proved, the
position order and the points checked so far in the enumeration's fixed order, from which
`certify_radii(checkpointing=Checkpointing(resume=...))` continues as if never stopped.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from robustcount import journal
from robustcount.errors import LimitReached, RobustcountError
from robustcount.goal import MAX_POINTS, Evaluated, Outcome, check_adversary, evaluate_points
from robustcount.models.engine import QueryEngine
from robustcount.orders import MARGINS, margin_order, position_order
from robustcount.spaces.space import Point, Space
from robustcount.status import POINT_LIMIT, UNDECIDED
from robustcount.text import Input

CERTIFIED, ADVERSARIAL = "certified", "adversarial"


@dataclass
class Proof(Outcome):
    """The prover's answer for one input at one radius."""

    status: str
    """certified, adversarial or undecided (see the module docstring)."""
    radius: int
    total: int
    """|Omega_radius|, the points to check."""
    checked: int = 0
    """The points evaluated: whole batches, so an adversary ends the search at the end of its batch."""
    smallest_margin: float | None = None
    """The lowest p(gold) - max p(other) seen."""
    smallest_margin_point: Point | None = None
    """Where it was seen: the witness, when adversarial."""
    witness: Input | None = None
    """The witness's input, when adversarial."""

    def as_dict(self) -> dict:
        record = super().as_dict()
        record["total"] = str(self.total)
        if self.smallest_margin_point is not None:
            record["smallest_margin_point"] = [list(c) for c in self.smallest_margin_point]
        return record

    @classmethod
    def from_dict(cls, record: dict) -> Proof:
        """The proof `as_dict` wrote (a checkpoint's)."""
        point, witness = record["smallest_margin_point"], record["witness"]
        return cls(**{**record, "total": int(record["total"]),
                      "smallest_margin_point": None if point is None else tuple(tuple(c) for c in point),
                      "witness": tuple(witness) if isinstance(witness, list) else witness})


@dataclass(frozen=True)
class Checkpointing:
    """Where a proof starts (`resume`: a state `checkpoint` was given; None: its start) and what
    it hands its states to as it goes (`checkpoint`; None: nothing): of one radius for `prove` and
    `branch.prove_with_bounds` (taken alike, so that `certify_radii` drives either), of every
    radius for `certify_radii`."""

    resume: dict | None = None
    checkpoint: Callable[[dict | None], None] | None = None


def prove(
    engine: QueryEngine,
    space: Space,
    gold: int,
    radius: int,
    *,
    order: str | Sequence[int] = MARGINS,
    max_points: int | None = MAX_POINTS,
    checkpointing: Checkpointing = Checkpointing(),
) -> Proof:
    """Check Omega_radius exhaustively (see the module docstring). Refuses, before any model call,
    a space with more than `max_points` points, saying how large it is and, once throughput has
    been measured, how long it would take. Budgets and time limits are the engine's
    (`engine.example`): a request past either ends the proof undecided. `checkpointing.resume` (a
    state that `checkpointing.checkpoint` was given) continues a proof of this radius where it
    stood; under MARGINS a state is saved only once the order is known (after the points of at
    most one change)."""
    resume, checkpoint = checkpointing.resume, checkpointing.checkpoint
    total = space.count(radius)
    began = time.perf_counter() - (resume["seconds"] if resume else 0.0)
    if max_points is not None and total > max_points:
        return Proof(UNDECIDED, radius, total, reason=_too_large(engine, total, max_points, radius), limit=POINT_LIMIT)
    walk = _Walk(engine, space, gold, radius, total, began, checkpoint, resume)
    try:
        walk.beats.beat(walk.checked, total, "points")
        if order != MARGINS:
            walk.visit = position_order(engine, space, gold, order) if walk.visit is None else walk.visit
            found = walk.check(itertools.islice(space.points_by_subset(radius, walk.visit), walk.checked, None))
        else:
            near = space.count(min(radius, 1))  # the points of at most one change, checked first
            if walk.visit is None:
                seen: list[Evaluated] = []
                found = walk.check(space.points_by_subset(min(radius, 1)), seen)
                walk.visit = margin_order(space, seen) if found is None else None
            if walk.visit is not None:  # the points of two changes or more: those the enumeration yields first
                found = walk.check(itertools.islice(space.points_by_subset(radius, walk.visit), walk.checked - near,
                                                    total - near))
        if found is not None:
            return found
    except LimitReached as limit:
        return walk.proof(UNDECIDED, reason=f"{limit} (after {walk.checked} of {total} points)", limit=limit.kind)
    if walk.checked != total:  # the enumeration and the count disagree: never certify
        raise RobustcountError(f"internal: checked {walk.checked} points of {total}")
    return walk.proof(CERTIFIED)


class _Walk:
    """`prove`'s check of Omega_radius under way: the lowest margin seen and where, the points
    checked so far (in the enumeration's order) and the position order (None until known), from
    the start or from the state `resume` holds (one `checkpoint` was given)."""

    def __init__(self, engine: QueryEngine, space: Space, gold: int, radius: int, total: int, began: float,
                 checkpoint: Callable[[dict], None] | None, resume: dict | None):
        self.engine, self.space, self.gold, self.radius = engine, space, gold, radius
        self.total, self.began, self.checkpoint = total, began, checkpoint
        self.smallest, self.where, self.checked, self.visit = np.inf, None, 0, None
        if resume:
            self.smallest = np.inf if resume["smallest"] is None else resume["smallest"]
            self.where = None if resume["where"] is None else tuple(tuple(c) for c in resume["where"])
            self.checked, self.visit = resume["checked"], resume["order"]
        self.beats = journal.current()

    def check(self, points: Iterable[Point], seen: list[Evaluated] | None = None) -> Proof | None:
        """Evaluate `points` (kept in `seen` when given); the adversarial proof at the first batch
        that holds an adversary, else None. Hands `checkpoint` the state when one is due and the
        order is known."""
        engine, space, gold = self.engine, self.space, self.gold
        for evaluated in evaluate_points(engine, space, points, gold):
            low = int(evaluated.margins.argmin())
            if evaluated.margins[low] < self.smallest:
                self.smallest, self.where = float(evaluated.margins[low]), evaluated.points[low]
            self.checked += len(evaluated.points)
            self.beats.beat(self.checked, self.total, "points")
            if seen is not None:
                seen.append(evaluated)
            found = evaluated.lowest_adversary()
            if found is not None:
                witness = found[0]
                value = check_adversary(engine, space, witness, gold)
                return Proof(ADVERSARIAL, self.radius, self.total, self.checked, value, witness,
                             witness=space.apply(witness), seconds=time.perf_counter() - self.began)
            if self.checkpoint is not None and self.visit is not None and self.beats.due():
                self.checkpoint({"radius": self.radius, "order": list(self.visit), "checked": self.checked,
                                 "smallest": _finite(self.smallest), "where": self.where,
                                 "seconds": time.perf_counter() - self.began})
        return None

    def proof(self, status: str, **reason) -> Proof:
        """The proof as it stands, as `status` (certified, or undecided with its `reason` and `limit`)."""
        return Proof(status, self.radius, self.total, self.checked, _finite(self.smallest), self.where,
                     seconds=time.perf_counter() - self.began, **reason)


def _finite(value: float) -> float | None:
    return None if not np.isfinite(value) else value


def _too_large(engine: QueryEngine, total: int, limit: int, radius: int) -> str:
    message = f"|Omega_{radius}| = {total} points, above the limit of {limit}"
    stats = engine.total
    if stats.model_calls and stats.model_seconds > 0:
        rate = stats.model_calls / stats.model_seconds
        message += f" (about {total / rate:.3g} s at the {rate:.0f} points/s measured so far)"
    return message + "; try a smaller radius, fewer candidates, or a PR estimate"


def planned_points(space: Space, radius: int, max_points: int | None = MAX_POINTS) -> tuple[int, int | None]:
    """What `certify_radii` with these options spends at most on `space`, before any model call:
    the model calls (|Omega_r| at the largest radius r it would enumerate: the engine's cache
    makes each radius pay only for its new points, and the input is the point of no change) and
    the radius whose proof it would refuse for size (undecided, above `max_points`), or None. A
    certified run spends exactly these calls when no two points are the same text; an adversary
    ends it sooner."""
    reached = 0
    for r in range(1, min(radius, space.max_radius()) + 1):
        if max_points is not None and space.count(r) > max_points:
            return space.count(reached), r
        reached = r
    return space.count(reached), None


def certify_radii(engine: QueryEngine, space: Space, gold: int, radius: int, *,
                  checkpointing: Checkpointing = Checkpointing(), prover: Callable[..., Proof] = prove,
                  proof_type: type[Proof] = Proof, **options) -> list[Proof]:
    """Proofs at r = 1, 2, ... up to `radius` or the space's number of positions, whichever is
    smaller (Omega_r is the whole space from there on), stopping after the first radius that is
    not certified (an adversary within r lies within every larger radius too). An empty space
    gets no proof: it certifies nothing. The engine's cache makes each radius pay only for its
    new points. `checkpointing.checkpoint` gets, at most every 30 s, the state from which
    `checkpointing.resume` continues. `prover` proves one radius (`prove`, or branch and bound's,
    whose proofs are `proof_type`)."""
    resume, checkpoint = checkpointing.resume, checkpointing.checkpoint
    proofs = [proof_type.from_dict(p) for p in resume["proofs"]] if resume else []
    for r in range(len(proofs) + 1, min(radius, space.max_radius()) + 1):
        def save(position: dict) -> None:
            checkpoint({"proofs": [p.as_dict() for p in proofs], "position": position})

        proofs.append(prover(engine, space, gold, r, checkpointing=Checkpointing(
            resume["position"] if resume else None, save if checkpoint else None), **options))
        resume = None
        if proofs[-1].status != CERTIFIED:
            break
    return proofs
