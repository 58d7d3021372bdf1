"""`attack`: PDP (fewest substitutions), TextFooler (the baseline) or the exhaustive oracle on every
example, each adversary re-checked, summed up as TextFooler's Table 3."""

from __future__ import annotations

import contextlib
import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import field
from statistics import fmean

from robustcount.attacks.exhaustive import exhaustive_attack
from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.result import BUDGET, REFUSED, SKIPPED, SUCCESS, attack_example
from robustcount.attacks.textfooler import SETTINGS, WORD_ORDERS, textfooler_attack
from robustcount.data import label_index
from robustcount.errors import RobustcountError
from robustcount.models.sensitivity import ORDERS
from robustcount.options import option, options_dataclass
from robustcount.runs.command import Command, budget_field, max_points_field, radius_field, time_limit_field, timings_apart
from robustcount.runs.figures import histogram_figure
from robustcount.runs.report import Section, changed_words, report_text
from robustcount.runs.summaries import seconds_by_index, total_queries
from robustcount.spaces.build import english_stop_words
from robustcount.spaces.synonyms import VECTOR_MIN_COSINE

ATTACKS = {"pdp": pdp_attack, "textfooler": textfooler_attack, "exhaustive": exhaustive_attack}
SETTINGS_OF = {"pdp": ("beam", "radius", "order", "prune"), "textfooler": ("setting", "pos_check", "similarity_check", "word_order"),
               "exhaustive": ("radius", "max_points")}
"""The options each method reads (the run header records only those of the method run)."""


@options_dataclass
class AttackOptions:
    method: str = field(default="pdp", metadata=option("The attack.", choices=tuple(ATTACKS)))
    beam: int = field(default=10, metadata=option("PDP's K.", minimum=1))
    radius: int | None = radius_field(
        None, "PDP and the oracle look no further than this many substitutions (default: every position).",
        names=("--radius", "--max-substitutions"))
    order: str = field(default="sensitivity", metadata=option("PDP's position order.", choices=ORDERS))
    prune: bool = field(default=True, metadata=option(
        "PDP keeps its K lowest-margin states whatever their margins (no additivity pruning).",
        names=("--no-pruning",), flag=True, invert=True))
    setting: str = field(default="paper", metadata=option("TextFooler's setting.", choices=tuple(SETTINGS)))
    pos_check: bool = field(default=True, metadata=option(
        "TextFooler without its part-of-speech check.", names=("--no-pos-check",), flag=True, invert=True))
    similarity_check: bool = field(default=True, metadata=option(
        "TextFooler without its sentence-similarity check (with --no-pos-check: its pure greedy search).",
        names=("--no-similarity-check",), flag=True, invert=True))
    word_order: str = field(default="importance", metadata=option(
        "TextFooler's word order: its importance ranking, or random (the paper's Table 8 ablation).",
        choices=WORD_ORDERS))
    max_points: int = max_points_field(
        "The oracle checks at most this many points, refusing at the first distance that would pass it.")
    budget: int | None = budget_field()
    time_limit: float = time_limit_field()

    @property
    def settings(self) -> dict:
        """The options the chosen method reads."""
        return {name: getattr(self, name) for name in SETTINGS_OF[self.method]}


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
        "mean subs": summary["mean_substitutions"],
        "% perturbed": 100 * summary["mean_perturbed_share"],
        "queries/ex": summary["queries_per_example"],
        "s/ex": summary["seconds_per_example"],
        "budget/refused": f"{summary['budget_exhausted']}/{summary['refused']}",
    }


class Attack(Command, name="attack", options=AttackOptions):
    """Attack every example: PDP (fewest substitutions), TextFooler (baseline) or the exhaustive oracle."""

    def space_for(self, options: AttackOptions, space):
        """TextFooler's settings leave stop words alone (scikit-learn's English list); a space
        without that filter gets it, and the run header's space definition records it."""
        if options.method != "textfooler" or space is None or space.filters.stop_words:
            return space
        return dataclasses.replace(space, filters=dataclasses.replace(space.filters, stop_words=english_stop_words()))

    def check(self, spec, outputs) -> None:
        """Refuse a space that contradicts the TextFooler setting: word-vector sources here keep
        neighbours with cosine >= 0.5 (the official code's), the paper's setting names 0.7."""
        o: AttackOptions = spec.options
        vector_sources = [s for s in spec.space.sources if s == "glove-raw" or s.startswith("vectors:")]
        cosine = SETTINGS[o.setting].synonym_cosine
        if o.method == "textfooler" and vector_sources and cosine != VECTOR_MIN_COSINE:
            raise RobustcountError(
                f"TextFooler's {o.setting} setting takes word-vector neighbours with cosine >= {cosine}, but "
                f"{vector_sources[0]} keeps those >= {VECTOR_MIN_COSINE}: use --setting official-code, the default "
                "synonyms source, or a VectorNeighbours(PATH, min_cosine=0.7) source in Python for the paper's space")

    def header_options(self, options: AttackOptions) -> dict:
        return {"method": options.method, "settings": options.settings, "budget": options.budget,
                "time_limit": options.time_limit}

    def recorded_options(self, recorded: dict) -> AttackOptions:
        return AttackOptions(**{k: v for k, v in recorded.items() if k != "settings"}, **recorded["settings"])

    def task(self, worker, spec, examples):
        o: AttackOptions = spec.options
        settings = o.settings
        encoder = None
        if o.method == "textfooler" and o.similarity_check:
            encoder = settings["encoder"] = worker.sentence_encoder()
        engine = worker.engine
        for example in examples:
            space = worker.build(example.input)
            gold = label_index(example.label, engine.labels)
            with encoder.example() if encoder else contextlib.nullcontext() as encoder_stats:
                result = attack_example(o.method, ATTACKS[o.method], engine, space, gold, o.budget, o.time_limit,
                                        **settings)
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
