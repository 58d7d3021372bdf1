"""What an attack returns for one example, and how any attack runs on one example (`run_attack`):
skipping inputs the model already gets wrong, budgets, counters and wall time, the same for every
method."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from robustcount.errors import LimitReached
from robustcount.goal import Outcome, check_adversary, correct_on_input
from robustcount.models.engine import QueryEngine
from robustcount.spaces.space import Point, Space
from robustcount.text import Input

SUCCESS, FAILED, SKIPPED, BUDGET, REFUSED = "success", "failed", "skipped", "budget exhausted", "refused"


@dataclass
class AttackResult(Outcome):
    """One attack on one example.

    `status`: success (an adversary, re-checked), failed (none found), skipped (the model already
    gets the input wrong), budget exhausted (the model-call budget or the time limit ran out first) or refused
    (the attack declined, e.g. a space too large for the exhaustive oracle; see `reason`).
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
        record = asdict(self)
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
    seconds (either ends it as `budget exhausted`, the reason saying which); an input the model
    already misclassifies is skipped (never counted as a success)."""
    began = time.perf_counter()
    with engine.example(budget, time_limit) as stats:
        try:
            if not correct_on_input(engine, space.item, gold):
                result = AttackResult(method, SKIPPED, space.item, gold,
                                      reason="the model does not prefer the gold label on this input")
            else:
                result = attack(engine, space, gold, **options)
        except LimitReached as exhausted:
            result = AttackResult(method, BUDGET, space.item, gold, reason=str(exhausted))
    result.queries = stats.as_dict()
    result.seconds = time.perf_counter() - began
    return result
