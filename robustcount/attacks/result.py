"""What an attack returns for one example, and the re-check every adversary goes through."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.goal import keeps_label, margin
from robustcount.models.engine import QueryEngine
from robustcount.spaces.space import Point, Space
from robustcount.text import Input

SUCCESS, FAILED, SKIPPED, BUDGET, REFUSED = "success", "failed", "skipped", "budget exhausted", "refused"


@dataclass
class AttackResult:
    """One attack on one example.

    `status`: success (an adversary, re-checked), failed (none found), skipped (the model already
    gets the input wrong), budget exhausted (the model-call budget ran out first) or refused
    (the attack declined, e.g. a space too large for the exhaustive oracle; see `reason`).
    `distance` counts the changed positions, `share` divides it by the number of words, `margin`
    is p(gold) - max p(other) at the adversary (negative there), `cleared` (the exhaustive
    oracle) the largest distance up to which every point was checked and none is adversarial,
    `queries` the engine's counters for this example."""

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
    queries: dict = field(default_factory=dict)
    seconds: float = 0.0
    reason: str | None = None

    @property
    def success(self) -> bool:
        return self.status == SUCCESS

    def as_dict(self) -> dict:
        record = asdict(self)
        record["point"] = None if self.point is None else [list(change) for change in self.point]
        return record


def check_adversary(engine: QueryEngine, space: Space, point: Point, gold: int) -> float:
    """Re-check an adversary: a valid point of `space` (each substitute in its position's list,
    distance = number of changed positions) on which the model's label differs from `gold`.
    Returns its margin; raises RobustcountError if any check fails."""
    try:
        space.check_point(point)
    except ValueError as err:
        raise RobustcountError(f"invalid adversary: {err}") from err
    probs = engine.predict_proba([space.apply(point)])
    if keeps_label(probs, gold)[0]:
        raise RobustcountError("invalid adversary: the model still prefers the gold label")
    return float(margin(probs, gold)[0])


def success(method: str, engine: QueryEngine, space: Space, point: Point, gold: int, **fields) -> AttackResult:
    """A re-checked successful result for `point`."""
    checked = check_adversary(engine, space, point, gold)
    words = max(1, len(space.tokens.words))
    return AttackResult(method, SUCCESS, space.item, gold, adversarial=space.apply(point), point=point,
                        distance=len(point), share=len(point) / words, margin=checked, **fields)
