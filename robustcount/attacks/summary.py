"""The attacks by name, and a dataset's attack results summarised as TextFooler's Table 3:
original accuracy, accuracy under attack, share of perturbed words, queries per example."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from robustcount.attacks.exhaustive import exhaustive_attack
from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.result import BUDGET, REFUSED, SKIPPED, SUCCESS


def _textfooler(*args, **kwargs):
    from robustcount.attacks.textfooler import textfooler_attack

    return textfooler_attack(*args, **kwargs)


ATTACKS = {"pdp": pdp_attack, "textfooler": _textfooler, "exhaustive": exhaustive_attack}


def summarise(records: Sequence[dict]) -> dict:
    """Counts and means over a run's attack records (`AttackResult.as_dict()`).

    An attacked example is `broken` (an adversary), `survived` (the attack found none) or
    `undecided` (refused, or its budget ran out), which is neither: accuracy under attack counts
    the survivors only (it would be at most `undecided / examples` higher), the success rate
    divides the broken by the decided, and queries and seconds per example are means over the
    decided. Substitution means are over the broken, as in the paper's table."""
    n = len(records)
    attacked = [r for r in records if r["status"] != SKIPPED]
    broken = [r for r in records if r["status"] == SUCCESS]
    undecided = [r for r in attacked if r["status"] in (BUDGET, REFUSED)]
    decided = [r for r in attacked if r["status"] not in (BUDGET, REFUSED)]
    timed = [r["seconds"] for r in decided if r.get("seconds") is not None]
    return {
        "examples": n,
        "skipped": n - len(attacked),
        "attacked": len(attacked),
        "successes": len(broken),
        "survived": len(decided) - len(broken),
        "undecided": len(undecided),
        "budget_exhausted": sum(r["status"] == BUDGET for r in records),
        "refused": sum(r["status"] == REFUSED for r in records),
        "original_accuracy": len(attacked) / n if n else float("nan"),
        "accuracy_under_attack": (len(decided) - len(broken)) / n if n else float("nan"),
        "success_rate": len(broken) / len(decided) if decided else float("nan"),
        "mean_substitutions": fmean(r["distance"] for r in broken) if broken else float("nan"),
        "mean_perturbed_share": fmean(r["share"] for r in broken) if broken else float("nan"),
        "queries_per_example": fmean(r["queries"].get("model_calls", 0) + r["queries"].get("gradient_calls", 0)
                                     for r in decided) if decided else float("nan"),
        "seconds_per_example": fmean(timed) if timed and len(timed) == len(decided) else float("nan"),
    }
