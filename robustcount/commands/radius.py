"""`radius`: each example's robust radius bracketed, from below by the prover's certified r and
from above by the nearest adversary found: the prover's witness, else PDP's.

The prover proves r = 1, 2, ... up to `--radius` and stops at the first radius it does not
certify. Where that proof found an adversary, its witness lies at distance lower + 1 (every
smaller distance was certified), so the radius is exactly `lower`. Otherwise (every radius
certified, or the next proof undecided) PDP's guided search looks for an adversary; if it finds
none at distance lower + 1, PDP's unpruned tables search distance lower + 1 again, which finds an
adversary that the guided search's additivity bound gives up on (one far adversary behind robust
levels). A space certified whole has no adversary at all: its radius is known too (`exact`, with
no upper bound)."""

from __future__ import annotations

from collections import Counter
from dataclasses import field

from robustcount.attacks.pdp import pdp_attack, pdp_calls
from robustcount.attacks.result import SUCCESS
from robustcount.data import label_index
from robustcount.errors import LimitReached
from robustcount.goal import correct_on_input, max_points_field
from robustcount.options import budget_field, option, options_dataclass, radius_field, time_limit_field
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, certify_radii, planned_points
from robustcount.runs.command import (
    Command,
    Planned,
    capped,
    timings_apart,
    window_field,
)
from robustcount.runs.figures import histogram_figure
from robustcount.runs.report import Section
from robustcount.runs.summaries import total_queries
from robustcount.spaces.coverage import COVERAGE, space_coverage
from robustcount.status import undecided_search

KINDS = ("exact", "bracketed", "misclassified")


@options_dataclass
class RadiusOptions:
    radius: int = radius_field(3, "The prover certifies up to this radius.")
    beam: int = field(default=10, metadata=option("PDP's K.", minimum=1))
    max_points: int = max_points_field()
    budget: int | None = budget_field()
    time_limit: float = time_limit_field()


class Radius(Command, name="radius", options=RadiusOptions):
    """Bracket each example's robust radius: the prover's certified r (lower) and the nearest adversary found (upper)."""

    def task(self, worker, spec, examples):
        engine, o = worker.engine, spec.options
        for example in examples:
            space = worker.build(example.input)
            gold = label_index(example.label, engine.labels)
            record = {"id": example.id, "input": example.input, "gold": engine.labels[gold], "lower": None,
                      "upper": None, "upper_from": None, "whole_space": False, "space_digest": space.digest(),
                      COVERAGE: space_coverage(space, o.radius), **window_field(space)}
            with engine.example(o.budget, o.time_limit) as stats:
                try:
                    correct = correct_on_input(engine, example.input, gold)
                    if correct:
                        record.update(bracket(engine, space, gold, o.radius, o.beam, o.max_points))
                except LimitReached as exhausted:
                    correct, record["reason"], record["limit"] = True, str(exhausted), exhausted.kind
            record["queries"] = stats.as_dict()
            if not correct:
                record["kind"] = "misclassified"
            elif record["whole_space"] or (record["upper"] is not None and record["lower"] == record["upper"]):
                record["kind"] = "exact"
            else:
                record["kind"] = "bracketed"
            yield timings_apart(record)

    def plan(self, spec, space, example):
        """The prover's points (as `certify`'s plan), then PDP's guided search and its tables one
        distance further, at most."""
        o: RadiusOptions = spec.options
        proved, refused = planned_points(space, o.radius, o.max_points)
        reached = min(o.radius, space.max_radius()) if refused is None else refused - 1
        calls = proved + pdp_calls(space, beam=o.beam) + pdp_calls(space, beam=o.beam, radius=reached + 1, prune=False)
        note = f"|Omega_{refused}| = {space.count(refused)} points, above --max-points {o.max_points}: the prover " \
            f"stops at r = {refused}" if refused is not None else None
        return capped(Planned(calls, "the prover's points of Omega_r, then PDP's guided search and its tables",
                              radius=o.radius, size=space.count(o.radius), note=note), o.budget)

    def undecided(self, record):
        return undecided_search(record)

    def summarise(self, run) -> dict:
        kinds = Counter(r["kind"] for r in run.records)
        queries = total_queries(run.records)
        classified = kinds["exact"] + kinds["bracketed"]
        return {**{k: kinds[k] for k in KINDS}, "queries": queries,
                "exact_share": kinds["exact"] / classified if classified else None,
                "bracketed_share": kinds["bracketed"] / classified if classified else None,
                "model_calls_per_exact": queries.get("model_calls", 0) / kinds["exact"] if kinds["exact"] else None}

    def table(self, summary):
        return (["examples", "exact radius", "bracketed only", "misclassified", "undecided",
                 "model calls per exact radius"],
                [[summary["examples"], summary["exact"], summary["bracketed"], summary["misclassified"],
                  summary["undecided"], summary["model_calls_per_exact"]]])

    def sections(self, run, summary):
        bracketed = [r for r in run.records if r["kind"] != "misclassified" and not r.get("whole_space")]
        lower = [r["lower"] for r in bracketed if r["lower"] is not None]
        upper = [r["upper"] for r in bracketed if r["upper"] is not None]
        figure = histogram_figure({"certified (lower)": lower, "adversary - 1 (upper)": upper}, "robust radius",
                                  bins=range(0, max(lower + upper + [1]) + 2), align="left")
        pairs = Counter((r["lower"], r["upper"]) for r in bracketed)
        return [Section("Radius brackets", tables=[("Brackets", ["lower", "upper", "examples"],
                                                    [[lo, up, n] for (lo, up), n in sorted(pairs.items(), key=str)])],
                        figures=[("radius", figure)])]


def bracket(engine, space, gold: int, radius: int, beam: int, max_points: int) -> dict:
    """The bracket of one correctly classified input (module docstring): `lower`, the largest radius
    certified; `upper`, the nearest adversary's distance less one (None when none was found);
    `upper_from`, which search found it; `whole_space`, whether every point of the space was
    certified."""
    proofs = certify_radii(engine, space, gold, radius, max_points=max_points)
    lower = sum(p.status == CERTIFIED for p in proofs)
    if proofs and proofs[-1].status == ADVERSARIAL:
        return {"lower": lower, "upper": lower, "upper_from": "prover"}
    if proofs and lower == space.max_radius():
        return {"lower": lower, "whole_space": True}
    found, upper_from = pdp_attack(engine, space, gold, beam=beam), "pdp"
    if found.status != SUCCESS or found.distance > lower + 1:
        tables = pdp_attack(engine, space, gold, beam=beam, radius=lower + 1, prune=False)
        if tables.status == SUCCESS:
            found, upper_from = tables, "pdp-tables"
    if found.status != SUCCESS:
        return {"lower": lower}
    return {"lower": lower, "upper": found.distance - 1, "upper_from": upper_from}
