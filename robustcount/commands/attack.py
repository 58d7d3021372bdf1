"""`attack`: one attack recipe (PDP, TextFooler, the exhaustive oracle, or any other in
`robustcount.attacks`) on every example, each adversary re-checked, summed up as TextFooler's Table 3."""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import field
from statistics import fmean

from robustcount.attacks.recipe import recipe_named, recipe_options, recipe_summaries
from robustcount.attacks.result import BUDGET, REFUSED, SKIPPED, SUCCESS, run_attack
from robustcount.data import label_index
from robustcount.errors import RobustcountError
from robustcount.options import option, options_dataclass, variants
from robustcount.runs.command import Command, budget_field, time_limit_field, timings_apart
from robustcount.runs.figures import histogram_figure
from robustcount.runs.report import Section, changed_words, report_text
from robustcount.runs.summaries import seconds_by_index, total_queries


@options_dataclass
class AttackOptions:
    """The recipe (`method`), its own options (`settings`, the recipe's options dataclass; a dict
    of its fields is converted, None is its defaults) and the limits every recipe shares."""

    method: str = field(default="pdp", metadata=option("The attack recipe; each one's options follow.",
                                                        names=("--method",)))
    settings: object = field(default=None, metadata=variants("method", recipe_options, recipe_summaries))
    budget: int | None = budget_field()
    time_limit: float = time_limit_field()

    def __post_init__(self):
        options = recipe_named(self.method).Options
        settings = {} if self.settings is None else self.settings
        if isinstance(settings, dict):
            try:
                settings = options(**settings)
            except TypeError as err:
                raise RobustcountError(f"bad settings for the {self.method} recipe: {err}") from None
        if not isinstance(settings, options):
            raise RobustcountError(f"the {self.method} recipe's settings are a {options.__name__}, "
                                   f"not a {type(settings).__name__}")
        object.__setattr__(self, "settings", settings)


def summarise_attacks(records: Sequence[dict]) -> dict:
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


def attack_row(summary: dict) -> dict:
    """The columns of the attack table (TextFooler's Table 3)."""
    return {
        "examples": summary["examples"],
        "orig. acc.": summary["original_accuracy"],
        "acc. under attack": summary["accuracy_under_attack"],
        "success": summary["success_rate"],
        "undecided": summary["undecided"],
        "mean subs": summary["mean_substitutions"] if summary["successes"] else "n/a (no example broken)",
        "% perturbed": 100 * summary["mean_perturbed_share"] if summary["successes"] else "n/a",
        "queries/ex": summary["queries_per_example"],
        "s/ex": "n/a (no timings)" if math.isnan(summary["seconds_per_example"]) else summary["seconds_per_example"],
        "budget/refused": f"{summary['budget_exhausted']}/{summary['refused']}",
    }


class Attack(Command, name="attack", options=AttackOptions):
    """Attack every example with one recipe: PDP (fewest substitutions), TextFooler (the baseline),
    the exhaustive oracle, ..."""

    def space_for(self, options: AttackOptions, space):
        """The recipe's space preset (the run header records the space it gives)."""
        return None if space is None else recipe_named(options.method).space(space, options.settings)

    def task(self, worker, spec, examples):
        o: AttackOptions = spec.options
        recipe = recipe_named(o.method)
        encoder = worker.sentence_encoder() if recipe.uses_sentence_encoder(o.settings) else None
        engine = worker.engine
        for example in examples:
            space = worker.build(example.input)
            gold = label_index(example.label, engine.labels)
            with encoder.example() if encoder else contextlib.nullcontext() as encoder_stats:
                result = run_attack(o.method, recipe.attack, engine, space, gold, o.budget, o.time_limit,
                                    options=o.settings, sentence_encoder=encoder)
            encoder_queries = {"similarity_queries": encoder_stats.as_dict()} if encoder else {}
            yield timings_apart({"id": example.id, **result.as_dict(), "gold": engine.labels[result.gold],
                                 "space_digest": space.digest(), "space_positions": len(space.positions),
                                 **encoder_queries})

    def undecided(self, record):
        return record["reason"] if record["status"] in (BUDGET, REFUSED) else None

    def summarise(self, run) -> dict:
        seconds = seconds_by_index(run)
        timed = [{**r, "seconds": seconds.get(r["index"])} for r in run.records]
        return {"method": run.options.method, **summarise_attacks(timed),
                "queries": total_queries(run.records)}

    def table(self, summary):
        row = attack_row(summary)
        return list(row), [list(row.values())]

    def sections(self, run, summary):
        statuses = Counter(r["status"] for r in run.records)
        broken = [r for r in run.records if r["status"] == SUCCESS]
        figures = []
        if broken:
            distances = [r["distance"] for r in broken]
            figures.append(("substitutions", histogram_figure(
                {"adversaries": distances}, "substitutions in the adversary",
                bins=range(min(distances), max(distances) + 2), align="left")))
        shown = broken[:20]
        return [Section(f"Attack ({summary['method']})",
                        tables=[("Outcomes", ["status", "examples"], sorted(statuses.items())),
                                (f"Adversaries (first {len(shown)} of {len(broken)})",
                                 ["id", "substitutions", "original", "adversarial"],
                                 [[r["id"], r["distance"], report_text(r["input"]), changed_words(r["input"], r["adversarial"])]
                                  for r in shown])],
                        figures=figures)]
