"""`estimate`: PR, the share of each example's neighbourhood that keeps the label, estimated with a
stated guarantee; the records and options it shares with `compare` (`commands/compare.py`), which
estimates it for two models on the same spaces and the same samples."""

from __future__ import annotations

from dataclasses import field, fields
from statistics import median_low

from robustcount import journal
from robustcount.counting.bound_count import count_with_bounds
from robustcount.counting.pr import (
    EstimateSettings,
    ESTIMATORS,
    PAPER_DELTA,
    PAPER_EPS,
    POINTS,
    PREstimate,
    default_radius,
    estimate_pr,
    hoeffding_n,
    planned_calls,
    pr_by_distance,
    share_of_words,
    summarise_pr,
)
from robustcount.data import label_index
from robustcount.errors import LimitReached
from robustcount.goal import correct_on_input, max_points_field
from robustcount.models.accounting import EngineState
from robustcount.options import option, options_dataclass, radius_field, time_limit_field
from robustcount.proofs.branch import bounds_pay
from robustcount.runs.command import Command, Planned, timings_apart, window_field
from robustcount.runs.figures import histogram_figure, share_figure
from robustcount.runs.report import Section
from robustcount.runs.summaries import total_queries
from robustcount.seeding import derive_seed
from robustcount.spaces.coverage import COVERAGE, space_coverage
from robustcount.status import undecided_search
from robustcount.text import perturbed_part, tokenize


@options_dataclass
class PROptions:
    radius: int | None = radius_field(None, "Radius r (default: --radius-share of each text's words, at least 1, at "
                                            "most its positions with candidates).", minimum=0)
    radius_share: float = field(default=0.25, metadata=option(
        "The default radius as a share of each text's words.", minimum=0, maximum=1, open_minimum=True))
    method: str = field(default="adaptive", metadata=option(
        "How PR is estimated; exact counts it (on cnn-rt and lstm-rt, an Omega_r above --max-points with bounds: "
        "boxes they prove all-robust or all-adversarial count whole, the rest is enumerated).", choices=ESTIMATORS))
    eps: float = field(default=PAPER_EPS, metadata=option(
        "Each PR lies within eps of its estimate ...", minimum=0, maximum=1, open_minimum=True, open_maximum=True))
    delta: float = field(default=PAPER_DELTA, metadata=option(
        "... with probability at least 1 - delta.", minimum=0, maximum=1, open_minimum=True, open_maximum=True))
    point: str = field(default="mean", metadata=option(
        "adaptive: report the sample mean (a fully robust region reads 1.0) or the interval's midpoint (about "
        "half the samples near PR 0 or 1, never reads 1.0).", choices=POINTS))
    max_points: int = max_points_field("--method exact: an Omega_r larger than this is undecided (with bounds: more "
                                       "points than this left to enumerate).")
    time_limit: float = time_limit_field()


@options_dataclass
class EstimateOptions(PROptions):
    distance_samples: int = field(default=0, metadata=option(
        "PR at exact distances from 1 to r from this many uniform points in all, whatever r (spread over up to "
        "one distance per 10 points, geometrically spaced; a shell no larger than its share is counted); 0: none.",
        minimum=0, maximum=1_000_000))


EARLIER_SHELL_SAMPLES = "shell_samples"
"""The option that run headers written before `distance_samples` hold: PR at every distance 1..r
from that many points each. Such a run reads back with `distance_samples` of the same value (its
records hold the shells it measured); resuming it is refused, since its header differs."""


def recorded_pr_options(options_class: type, recorded: dict):
    """`options_class` from a header's options, an earlier header's `shell_samples` read as
    `distance_samples` (estimate) or left out (compare, which never reported it)."""
    recorded = dict(recorded)
    earlier = recorded.pop(EARLIER_SHELL_SAMPLES, None)
    if earlier is not None and "distance_samples" in {f.name for f in fields(options_class)}:
        recorded.setdefault("distance_samples", earlier)
    return options_class(**recorded)


def estimate_records(worker, spec, examples, distance_samples: int | None = None):
    """PR estimates of each example by every model of the run on the same space and the same
    samples (one model: its fields in the record; several: a `models` list); with
    `distance_samples` (estimate's, not compare's), a `by_distance` list too, measured from that
    many points in all when it is not 0."""
    o: PROptions = spec.options
    for example in examples:
        space = worker.build(example.input)
        example_seed = derive_seed(spec.seed, example.id)
        r = o.radius if o.radius is not None else default_radius(space, o.radius_share)
        notes = journal.current()  # a checkpoint: the models done, and where the next one's estimate stood
        saved = notes.saved
        by_model = list(saved["by_model"]) if saved else []
        for options, engine in list(zip(spec.models, worker.engines))[len(by_model):]:
            gold = label_index(example.label, engine.labels)
            found, shells, stopped = None, [], None
            resumed = EngineState(**saved["engine"]) if saved else None
            with engine.example(time_limit=o.time_limit, resumed=resumed) as stats:
                correct = saved["correct"] if saved else None  # None: a limit met on the input itself

                def checkpoint(estimate: dict) -> None:
                    notes.save({"by_model": by_model, "correct": correct, "engine": engine.state().as_dict(),
                                "estimate": estimate})

                try:
                    if correct is None:
                        correct = correct_on_input(engine, example.input, gold)
                    if correct and o.method == "exact" and bounds_pay(engine.model, space.count(r), o.max_points):
                        found = exact_pr_by_bounds(engine, space, gold, r, o.max_points)
                    else:
                        found = estimate_pr(engine, space, gold, r, EstimateSettings(
                                                method=o.method, eps=o.eps, delta=o.delta, seed=example_seed,
                                                point=o.point, max_points=o.max_points),
                                            resume=saved["estimate"] if saved else None,
                                            checkpoint=checkpoint if notes.keeps else None) if correct else None
                    shells = pr_by_distance(engine, space, gold, r, distance_samples, delta=o.delta,
                                            seed=example_seed) if correct and distance_samples else []
                except LimitReached as limit:  # undecided: no estimate, and why
                    stopped = {"reason": str(limit), "limit": limit.kind}
            by_model.append({"model": options.spec, "correct": correct,
                             "estimate": None if found is None or stopped else found.as_dict(),
                             **({"by_distance": [s.as_dict() for s in shells]} if distance_samples is not None else {}),
                             "queries": stats.as_dict(), **(stopped or {})})
            saved = None  # the next model starts afresh
        labels = worker.engine.labels
        record = {"id": example.id, "input": example.input, "gold": labels[label_index(example.label, labels)],
                  "example_seed": example_seed, "space_digest": space.digest(), COVERAGE: space_coverage(space, r),
                  **window_field(space)}
        if len(by_model) == 1:
            record.update({k: v for k, v in by_model[0].items() if k != "model"})
        else:
            record["models"] = by_model
        yield record


def pr_plan(o: PROptions, space, distance_samples: int = 0) -> Planned:
    """The most model calls of one model's estimate (`counting.pr.planned_calls`), and the points
    by distance, at the radius the estimate takes."""
    r = o.radius if o.radius is not None else default_radius(space, o.radius_share)
    calls, note = planned_calls(space, r, method=o.method, eps=o.eps, delta=o.delta, max_points=o.max_points)
    basis = f"the {o.method} estimator's points at most" + (
        f", and {distance_samples} points by distance" if distance_samples else "")
    return Planned(calls + distance_samples, basis, radius=r, size=space.count(r), note=note)


def exact_pr_by_bounds(engine, space, gold: int, radius: int, max_points: int) -> PREstimate:
    """Exact PR counting whole the boxes bounds decide (`counting.bound_count`), where bounds pay
    (`branch.bounds_pay`); `max_points` caps the points enumerated, not |Omega_r|."""
    counted = count_with_bounds(engine, space, gold, radius, max_points=max_points)
    pr = counted.robust / counted.size
    return PREstimate("exact", pr, pr, pr, counted.size, counted.robust, radius, counted.size, None, None, None,
                      by_bounds=counted.by_bounds)


def _radius_capped(run) -> int:
    """The estimates whose default radius (`--radius-share` of the words) was capped at their
    space's positions with candidates (`default_radius`); none when the run gave `--radius`."""
    o: EstimateOptions = run.options
    if o.radius is not None:
        return 0
    return sum(r["estimate"]["radius"] < share_of_words(len(tokenize(perturbed_part(_input(r["input"]))).words),
                                                        o.radius_share) for r in run.records if r["estimate"])


def _input(recorded):
    return tuple(recorded) if isinstance(recorded, list) else recorded


def _capped_note(summary: dict) -> str:
    return (f"On {summary['radius_capped']} of the {summary['estimated']} estimates the default radius (a share of "
            "the words) exceeded the positions with candidates: r is their number there (a larger r adds no point)")


def _by_distance(records: list[dict]) -> dict[str, dict]:
    """Per exact distance d: the examples whose shell at d was measured and their mean PR there."""
    shares: dict[int, list[float]] = {}
    for record in records:
        for shell in record.get("by_distance") or []:
            shares.setdefault(shell["distance"], []).append(shell["pr"])
    return {str(d): {"examples": len(values), "mean_pr": sum(values) / len(values)}
            for d, values in sorted(shares.items())}


class Estimate(Command, name="estimate", options=EstimateOptions):
    """Estimate PR, the share of each example's neighbourhood that keeps the label, with (eps, delta)."""

    def plan(self, spec, space, example):
        return pr_plan(spec.options, space, spec.options.distance_samples)

    def task(self, worker, spec, examples):
        yield from map(timings_apart, estimate_records(worker, spec, examples, spec.options.distance_samples))

    def recorded_options(self, recorded: dict):
        return recorded_pr_options(self.Options, recorded)

    def undecided(self, record):
        return undecided_search(record)

    def summarise(self, run) -> dict:
        o: EstimateOptions = run.options
        estimates = [r["estimate"] for r in run.records if r["estimate"]]
        return {"method": o.method, "eps": o.eps, "delta": o.delta,
                **summarise_pr([e["pr"] for e in estimates]),
                "misclassified": sum(r["correct"] is False for r in run.records),
                "median_samples": median_low(e["samples"] for e in estimates) if estimates else None,
                "hoeffding_n": hoeffding_n(o.eps, o.delta), "by_distance": _by_distance(run.records),
                "points_by_bounds": sum(int(e.get("by_bounds", 0)) for e in estimates),
                "points_counted": sum(int(e["size"]) for e in estimates if "by_bounds" in e),
                "radius_capped": _radius_capped(run), "queries": total_queries(run.records)}

    def table(self, summary):
        none = "n/a (no estimate)"
        return (["examples", "misclassified", "undecided", "median PR", "PR > 0.9", "median samples",
                 "Hoeffding N", "model calls", "estimated"],
                [[summary["examples"], summary["misclassified"], summary["undecided"],
                  summary["median"] if summary["estimated"] else none,
                  summary["share_above_0.9"] if summary["estimated"] else none,
                  summary["median_samples"] if summary["estimated"] else none, summary["hoeffding_n"],
                  summary["queries"].get("model_calls", 0), summary["estimated"]]])

    def sections(self, run, summary):
        values = [r["estimate"]["pr"] for r in run.records if r["estimate"]]
        figure = histogram_figure({"PR": values}, "PR estimate", bins=20, range=(0, 1))
        capped = f" {_capped_note(summary)}." if summary.get("radius_capped") else ""
        sections = [Section("PR distribution", note=f"Each PR lies within eps = {summary['eps']} of its estimate "
                            f"with probability at least {1 - summary['delta']} ({summary['method']}).{capped}",
                            figures=[("pr", figure)])]
        shells = summary["by_distance"]
        if shells:
            distances = [int(d) for d in shells]
            figure = share_figure(distances, [shells[str(d)]["mean_pr"] for d in distances],
                                  "exact distance d (substitutions)", "mean PR of the points at distance d")
            sections.append(Section(
                "PR by distance", note="The share of the points at each exact distance that keep the label (uniform "
                "within each distance), averaged over the examples: where robustness breaks.",
                tables=[("Mean PR per distance", ["distance", "examples", "mean PR"],
                         [[d, shells[str(d)]["examples"], shells[str(d)]["mean_pr"]] for d in distances])],
                figures=[("by-distance", figure)]))
        return sections

    def finish(self, spec, summary, outputs, data_spec):
        o = spec.options
        capped = [_capped_note(summary)] if summary["radius_capped"] else []
        if o.method == "exact":
            by_bounds = f"; bounds decided {summary['points_by_bounds']} of the {summary['points_counted']} points " \
                "they counted" if summary["points_counted"] else ""
            return [f"method exact: every PR is exact{by_bounds}", *capped]
        return [f"method {o.method}, eps {o.eps}, delta {o.delta}: each PR lies within eps of its estimate with "
                f"probability >= {1 - o.delta}", *capped]
