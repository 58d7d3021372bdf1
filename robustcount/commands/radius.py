"""`radius`: each example's robust radius bracketed, from below by the prover's certified r and
from above by PDP's adversary."""

from __future__ import annotations

from collections import Counter
from dataclasses import field

from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.result import SUCCESS
from robustcount.data import label_index
from robustcount.errors import LimitReached
from robustcount.goal import correct_on_input
from robustcount.options import option, options_dataclass, radius_field
from robustcount.proofs.prover import CERTIFIED, certify_radii
from robustcount.runs.command import Command, budget_field, max_points_field, time_limit_field, timings_apart
from robustcount.runs.figures import histogram_figure
from robustcount.runs.report import Section
from robustcount.runs.summaries import total_queries

KINDS = ("exact", "bracketed", "misclassified")


@options_dataclass
class RadiusOptions:
    radius: int = radius_field(3, "The prover certifies up to this radius.")
    beam: int = field(default=10, metadata=option("PDP's K.", minimum=1))
    max_points: int = max_points_field()
    budget: int | None = budget_field()
    time_limit: float = time_limit_field()


class Radius(Command, name="radius", options=RadiusOptions):
    """Bracket each example's robust radius: the prover's certified r (lower) and PDP's adversary (upper)."""

    def task(self, worker, spec, examples):
        engine, o = worker.engine, spec.options
        for example in examples:
            space = worker.build(example.input)
            gold = label_index(example.label, engine.labels)
            record = {"id": example.id, "input": example.input, "gold": engine.labels[gold], "lower": None,
                      "upper": None, "space_digest": space.digest()}
            with engine.example(o.budget, o.time_limit) as stats:
                try:
                    correct = correct_on_input(engine, example.input, gold)
                    if correct:
                        proofs = certify_radii(engine, space, gold, o.radius, max_points=o.max_points)
                        record["lower"] = sum(p.status == CERTIFIED for p in proofs)
                        found = pdp_attack(engine, space, gold, beam=o.beam)
                        record["upper"] = found.distance - 1 if found.status == SUCCESS else None
                except LimitReached as exhausted:
                    correct, record["reason"] = True, str(exhausted)
            record["queries"] = stats.as_dict()
            if not correct:
                record["kind"] = "misclassified"
            elif record["upper"] is not None and record["lower"] == record["upper"]:
                record["kind"] = "exact"
            else:
                record["kind"] = "bracketed"
            yield timings_apart(record)

    def undecided(self, record):
        return record.get("reason")

    def summarise(self, run) -> dict:
        kinds = Counter(r["kind"] for r in run.records)
        return {**{k: kinds[k] for k in KINDS}, "queries": total_queries(run.records)}

    def table(self, summary):
        return (["examples", "exact radius", "bracketed only", "misclassified", "undecided"],
                [[summary["examples"], summary["exact"], summary["bracketed"], summary["misclassified"],
                  summary["undecided"]]])

    def sections(self, run, summary):
        bracketed = [r for r in run.records if r["kind"] != "misclassified"]
        lower = [r["lower"] for r in bracketed if r["lower"] is not None]
        upper = [r["upper"] for r in bracketed if r["upper"] is not None]
        figure = histogram_figure({"certified (lower)": lower, "adversary - 1 (upper)": upper}, "robust radius",
                                  bins=range(0, max(lower + upper + [1]) + 2), align="left")
        pairs = Counter((r["lower"], r["upper"]) for r in bracketed)
        return [Section("Radius brackets", tables=[("Brackets", ["lower", "upper", "examples"],
                                                    [[lo, up, n] for (lo, up), n in sorted(pairs.items(), key=str)])],
                        figures=[("radius", figure)])]
