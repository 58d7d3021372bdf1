"""Attacking a dataset and summarising it as TextFooler's Table 3: original accuracy, accuracy
under attack, share of perturbed words, queries per example."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean

from robustcount.attacks.exhaustive import exhaustive_attack
from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.result import BUDGET, REFUSED, SKIPPED, SUCCESS, AttackResult
from robustcount.attacks.run import attack_example
from robustcount.data import Example, label_index
from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.spaces.space import Space


def _textfooler(*args, **kwargs):
    from robustcount.attacks.textfooler import textfooler_attack

    return textfooler_attack(*args, **kwargs)


ATTACKS = {"pdp": pdp_attack, "textfooler": _textfooler, "exhaustive": exhaustive_attack}


def run_attacks(
    method: str,
    engine: QueryEngine,
    examples: Sequence[Example],
    build: Callable[[object], Space],
    options: dict,
    budget: int | None = None,
    on_result: Callable[[Example, AttackResult, Space], None] | None = None,
) -> list[AttackResult]:
    """Attack each example's space with `method`; `on_result` sees each result as it comes."""
    if method not in ATTACKS:
        raise RobustcountError(f"unknown attack method {method!r} (use {', '.join(ATTACKS)})")
    if method == "textfooler":
        from robustcount.similarity import SentenceEncoder

        options = {**options, "encoder": SentenceEncoder()}  # one encoder (and its cache) per run
    results = []
    for example in examples:
        space = build(example.input)
        gold = label_index(example.label, engine.labels)
        result = attack_example(method, ATTACKS[method], engine, space, gold, budget, **options)
        results.append(result)
        if on_result is not None:
            on_result(example, result, space)
    return results


def summarise(results: Sequence[AttackResult]) -> dict:
    """Counts and means over a run (means over successes where the paper's table does so)."""
    n = len(results)
    attacked = [r for r in results if r.status != SKIPPED]
    broken = [r for r in results if r.status == SUCCESS]
    return {
        "examples": n,
        "skipped": n - len(attacked),
        "attacked": len(attacked),
        "successes": len(broken),
        "budget_exhausted": sum(r.status == BUDGET for r in results),
        "refused": sum(r.status == REFUSED for r in results),
        "original_accuracy": len(attacked) / n if n else float("nan"),
        "accuracy_under_attack": (len(attacked) - len(broken)) / n if n else float("nan"),
        "success_rate": len(broken) / len(attacked) if attacked else float("nan"),
        "mean_substitutions": fmean(r.distance for r in broken) if broken else float("nan"),
        "mean_perturbed_share": fmean(r.share for r in broken) if broken else float("nan"),
        "queries_per_example": fmean(r.queries.get("model_calls", 0) + r.queries.get("gradient_calls", 0)
                                     for r in attacked) if attacked else float("nan"),
        "seconds_per_example": fmean(r.seconds for r in attacked) if attacked else float("nan"),
    }


def summary_row(summary: dict) -> dict:
    """The columns of the printed table."""
    return {
        "examples": summary["examples"],
        "orig. acc.": summary["original_accuracy"],
        "acc. under attack": summary["accuracy_under_attack"],
        "success": summary["success_rate"],
        "mean subs": summary["mean_substitutions"],
        "% perturbed": 100 * summary["mean_perturbed_share"],
        "queries/ex": summary["queries_per_example"],
        "s/ex": summary["seconds_per_example"],
        "budget/refused": f"{summary['budget_exhausted']}/{summary['refused']}",
    }
