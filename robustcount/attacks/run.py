"""Running one attack on one example: skipping inputs the model already gets wrong, budgets,
counters and wall time, the same for every method."""

from __future__ import annotations

import time
from collections.abc import Callable

from robustcount.attacks.result import BUDGET, SKIPPED, AttackResult
from robustcount.errors import BudgetExhausted
from robustcount.goal import keeps_label
from robustcount.models.engine import QueryEngine
from robustcount.spaces.space import Space


def attack_example(
    method: str,
    attack: Callable[..., AttackResult],
    engine: QueryEngine,
    space: Space,
    gold: int,
    budget: int | None = None,
    **options,
) -> AttackResult:
    """`attack(engine, space, gold, **options)` under a budget of model calls; an input the model
    already misclassifies is skipped (never counted as a success)."""
    began = time.perf_counter()
    with engine.example(budget) as stats:
        try:
            if not keeps_label(engine.predict_proba([space.item]), gold)[0]:
                result = AttackResult(method, SKIPPED, space.item, gold,
                                      reason="the model does not prefer the gold label on this input")
            else:
                result = attack(engine, space, gold, **options)
        except BudgetExhausted as exhausted:
            result = AttackResult(method, BUDGET, space.item, gold, reason=str(exhausted))
    result.queries = stats.as_dict()
    result.seconds = time.perf_counter() - began
    return result
