"""What an attack returns for one example, and how any attack runs on one example (`run_attack`):
skipping inputs the model already gets wrong, budgets, time limits, counters and wall time, the same
for every method."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from robustcount.errors import LimitReached
from robustcount.goal import Outcome, check_adversary, correct_on_input
from robustcount.models.engine import QueryEngine
from robustcount.spaces.space import Point, Space
from robustcount.status import POINT_LIMIT, UNDECIDED, limit_of
from robustcount.text import Input

SUCCESS, FAILED, SKIPPED = "success", "failed", "skipped"
EARLIER_STATUSES = {"budget exhausted": None, "refused": POINT_LIMIT}
"""The statuses of undecided attacks in run files written before `status.UNDECIDED`, each with its
limit: `refused` was the exhaustive oracle's shell over its max points, and `budget exhausted`
meant the budget or the time limit (None: the one its reason names)."""


@dataclass
class AttackResult(Outcome):
    """One attack on one example.

    `status`: success (an adversary, re-checked), failed (none found), skipped (the model already
    gets the input wrong) or undecided, with the `limit` that stopped it (`status.LIMITS`: the
    model-call budget, the time limit, or max points: a shell too large for the exhaustive oracle)
    and the `reason` in words.
    `distance` counts the changed positions, `share` divides it by the number of words, `margin`
    is p(gold) - max p(other) at the adversary (at most `goal.MARGIN_TOLERANCE` there), `cleared`
    (the exhaustive oracle) the largest distance up to which every point was checked and none is
    adversarial."""

    method: str
    status: str
    input: Input
    gold: int
    adversarial: Input | None = None
    point: Point | None = None
    distance: int | None = None
    share: float | None = None
    margin: float | None = None
    similarity: float | None = None
    cleared: int | None = None

    @property
    def success(self) -> bool:
        return self.status == SUCCESS

    def as_dict(self) -> dict:
        record = super().as_dict()
        record["point"] = None if self.point is None else [list(change) for change in self.point]
        return record


def success(method: str, engine: QueryEngine, space: Space, point: Point, gold: int, **fields) -> AttackResult:
    """A re-checked successful result for `point`."""
    checked = check_adversary(engine, space, point, gold)
    words = max(1, len(space.tokens.words))
    return AttackResult(method, SUCCESS, space.item, gold, adversarial=space.apply(point), point=point,
                        distance=len(point), share=len(point) / words, margin=checked, **fields)


def run_attack(
    method: str,
    attack: Callable[..., AttackResult],
    engine: QueryEngine,
    space: Space,
    gold: int,
    budget: int | None = None,
    time_limit: float | None = None,
    **options,
) -> AttackResult:
    """`attack(engine, space, gold, **options)` under a budget of model calls and a time limit in
    seconds (either ends it undecided, its `limit` saying which); an input the model already
    misclassifies is skipped (never counted as a success)."""
    began = time.perf_counter()
    with engine.example(budget, time_limit) as stats:
        try:
            if not correct_on_input(engine, space.item, gold):
                result = AttackResult(method, SKIPPED, space.item, gold,
                                      reason="the model does not prefer the gold label on this input")
            else:
                result = attack(engine, space, gold, **options)
        except LimitReached as exhausted:
            result = AttackResult(method, UNDECIDED, space.item, gold, reason=str(exhausted), limit=exhausted.kind)
    result.queries = stats.as_dict()
    result.seconds = time.perf_counter() - began
    return result


def recorded_status(record: dict) -> tuple[str, str | None]:
    """The status of an attack record and, when undecided, its limit (an earlier record's through
    EARLIER_STATUSES)."""
    status = record["status"]
    if status in EARLIER_STATUSES:
        return UNDECIDED, limit_of(EARLIER_STATUSES[status], record.get("reason"))
    return status, record.get("limit") if status == UNDECIDED else None
