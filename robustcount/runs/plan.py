"""A run's plan before the work (`--dry-run`): per example, |Omega_r| of the space the command
would build, the model calls its search would make (the command's own `Command.plan`), and the
time those calls would take at the speed of a short probe of real model calls on that example's
points; where that is above the example's time limit, what to change, each change measured on
the space it would give.

Nothing is searched and no run file is written. The probe sends up to PROBE_BATCHES batches of
uniform points of the example's Omega_r through the query engine, counted as the probe's (the
plan reports them), with the cache cleared before and after; the calls a served model's response
cache answers (points asked before, as a second dry run with the same seed asks them) are timed at
the cache's speed, and the plan says how many they were. The time is model time only: the
search's own work (enumerating points, ordering positions) and helper models (TextFooler's
sentence encoder, a masked LM) add to it.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from robustcount.data import Example, label_index
from robustcount.goal import evaluate_points
from robustcount.models.engine import QueryEngine
from robustcount.options import DEFAULT_TIME_LIMIT, option, options_dataclass
from robustcount.runs.command import Planned
from robustcount.runs.registry import command_named
from robustcount.runs.spec import RunSpec, Worker
from robustcount.seeding import derive_seed
from robustcount.spaces.build import english_stop_words
from robustcount.text import perturbed_part, tokenize

PROBE_BATCHES = 2
"""Engine batches of an example's points that the timing probe runs."""
FEWER_CANDIDATES = 2
"""The --max-candidates a plan suggests."""


@options_dataclass
class PlanOptions:
    dry_run: bool = field(default=False, metadata=option(
        "Search nothing and write no run file: print each example's |Omega_r|, the model calls the command would "
        "make at most and their time, from a short probe of real model calls on the example's points, "
        "and what to change where that is above --time-limit.", flag=True))


@dataclass(frozen=True)
class Suggestion:
    """A change of options (`change`, as the command line takes it) and the plan it gives."""

    change: str
    radius: int | None
    size: int | None
    calls: int | None
    seconds: float | None
    fits: bool
    """Whether the plan it gives is within the time limit and stops at nothing else."""

    def as_dict(self) -> dict:
        return {**dataclasses.asdict(self), "size": None if self.size is None else str(self.size)}


@dataclass(frozen=True)
class ExamplePlan:
    """One example's plan: what the command declares (`planned`), the probe's calls and seconds
    (every model's), the time the planned calls would take at the probe's speed (None when the
    command cannot say how many), the example's time limit (None: none) and the suggestions;
    `probe_cached`: the probe's calls a served model's response cache answered (timed as cached
    answers, not as the server's)."""

    id: str
    words: int
    positions: int | None
    planned: Planned
    probe_calls: int
    probe_seconds: float
    seconds: float | None
    limit: float | None
    suggestions: tuple[Suggestion, ...] = ()
    probe_cached: int = 0

    @property
    def over(self) -> bool:
        """Whether the planned time is above the time limit."""
        return self.seconds is not None and self.limit is not None and self.seconds > self.limit

    def as_dict(self) -> dict:
        p = self.planned
        return {"id": self.id, "words": self.words, "positions": self.positions, "radius": p.radius,
                "omega_r": None if p.size is None else str(p.size), "model_calls": p.calls,
                "basis": p.basis, "note": p.note,
                "seconds": self.seconds, "time_limit": self.limit, "over_time_limit": self.over,
                "probe": {"model_calls": self.probe_calls, "model_seconds": self.probe_seconds,
                          "response_cache_answers": self.probe_cached},
                "suggestions": [s.as_dict() for s in self.suggestions]}


def plan_run(spec: RunSpec, examples: Sequence[Example], check=None) -> Iterator[ExamplePlan]:
    """Each example's plan for `spec` (see the module docstring), in order, as it is made;
    `check(engines)`, when given, first sees the models' engines (the labels' check of a run)."""
    command = command_named(spec.command)
    worker = Worker(spec, command)
    if check is not None:
        check(worker.engines)
    limit = getattr(spec.options, "time_limit", DEFAULT_TIME_LIMIT) or None
    changes = _space_changes(spec, worker)
    for example in examples:
        space = worker.build(example.input) if worker.build is not None else None
        planned = command.plan(spec, space, example)
        probes = [probe(engine, space, example, planned.radius, spec.seed) for engine in worker.engines]
        per_call = sum(seconds / calls for calls, seconds, _ in probes if calls)
        seconds = _seconds(planned.calls, per_call)
        words = len(tokenize(perturbed_part(example.input)).words)
        plan = ExamplePlan(str(example.id), words, None if space is None else len(space.positions), planned,
                           sum(c for c, _, _ in probes), sum(s for _, s, _ in probes), seconds, limit,
                           probe_cached=sum(cached for _, _, cached in probes))
        if plan.over:
            plan = dataclasses.replace(plan, suggestions=tuple(_suggestions(spec, command, changes, example, space,
                                                                            planned, per_call, limit)))
        yield plan


def probe(engine: QueryEngine, space, example: Example, radius: int | None, seed: int) -> tuple[int, float, int]:
    """The model calls and model seconds of up to PROBE_BATCHES engine batches of uniform points
    of `space`'s Omega_radius (the example's input alone without a space), run as one example of
    the engine with its cache cleared before and after, and how many of those calls a served
    model's response cache answered (its ledger's cache hits; 0 for any other model)."""
    ledger = getattr(engine.model, "ledger", None)
    if ledger is not None:  # the engine's batch probe (once, at its first request) before the cache hits count
        engine.batching([example.input])
    hits_before = ledger.cache_hits if ledger is not None else 0
    engine.clear_cache()
    with engine.example() as stats:
        if space is None:
            engine.predict_proba([example.input])
        else:
            r = space.max_radius() if radius is None else radius
            n = min(PROBE_BATCHES * engine.batch_size, space.count(r))
            points = space.sample(r, n, random.Random(derive_seed(seed, "plan", example.id)))
            gold = label_index(example.label, engine.labels) if example.label is not None else 0
            for _ in evaluate_points(engine, space, points, gold):
                pass
    engine.clear_cache()
    cached = ledger.cache_hits - hits_before if ledger is not None else 0
    return stats.model_calls + stats.gradient_calls, stats.model_seconds, cached


def _space_changes(spec: RunSpec, worker: Worker) -> list[tuple[str, RunSpec, object]]:
    """The changes of the space a plan may suggest, each as its options, the run spec it gives
    and the builder of that spec's spaces (`Worker.space_builder`, as a run would build them)."""
    if spec.space is None:
        return []
    filters = spec.space.filters
    changed = []
    if not filters.stop_words:
        changed.append(("--stop-words", {"stop_words": english_stop_words()}))
    if filters.max_candidates is None or filters.max_candidates > FEWER_CANDIDATES:
        changed.append((f"--max-candidates {FEWER_CANDIDATES}", {"max_candidates": FEWER_CANDIDATES}))
    if len(changed) == 2:
        changed.append((f"{changed[0][0]} {changed[1][0]}", {**changed[0][1], **changed[1][1]}))
    specs = []
    for change, fields in changed:
        space = dataclasses.replace(spec.space, filters=dataclasses.replace(filters, **fields))
        changed_spec = dataclasses.replace(spec, space=space)
        specs.append((change, changed_spec, worker.space_builder(changed_spec.space)))
    return specs


def _suggestions(spec, command, changes, example, space, planned: Planned, per_call: float,
                 limit: float) -> Iterator[Suggestion]:
    """Each change of the space that lowers the calls, the largest smaller radius that fits (for
    a command with a `radius` option) and a time limit the plan fits in, each with the plan it
    gives."""
    def suggestion(change: str, changed: Planned) -> Suggestion:
        seconds = _seconds(changed.calls, per_call)
        return Suggestion(change, changed.radius, changed.size, changed.calls, seconds,
                          seconds is not None and seconds <= limit and changed.note is None)

    fewer = set()  # the calls of the changes suggested so far: a combination that adds nothing is left out
    for change, changed_spec, build in changes:
        changed = command.plan(changed_spec, build(example.input), example)
        if changed.calls is not None and planned.calls is not None and changed.calls < planned.calls \
                and changed.calls not in fewer:
            fewer.add(changed.calls)
            yield suggestion(change, changed)
    if planned.radius is not None and hasattr(spec.options, "radius"):
        for r in range(planned.radius - 1, 0, -1):
            smaller = dataclasses.replace(spec, options=dataclasses.replace(spec.options, radius=r))
            found = suggestion(f"--radius {r}", command.plan(smaller, space, example))
            if found.fits:
                yield found
                break
    needed = _seconds(planned.calls, per_call)
    if hasattr(spec.options, "time_limit") and needed is not None and math.isfinite(needed):
        yield dataclasses.replace(suggestion(f"--time-limit {_round_up(needed):g}", planned),
                                  fits=planned.note is None)


def _seconds(calls: int | None, per_call: float) -> float | None:
    """The time of `calls` model calls at `per_call` seconds each (None when the calls are
    unknown; infinite past what a float holds, as a count of points can be)."""
    if calls is None:
        return None
    try:
        return calls * per_call
    except OverflowError:
        return math.inf


def _round_up(seconds: float) -> float:
    """`seconds` rounded up to two significant figures."""
    if seconds <= 0:
        return 1.0
    step = 10 ** (math.floor(math.log10(seconds)) - 1)
    return math.ceil(seconds / step) * step


HEADERS = ("id", "words", "positions", "r", "|Omega_r|", "model calls", "time")
WIDTHS = (8, 6, 10, 4, 14, 18)


def plan_rows(plan: ExamplePlan, first: bool) -> list[str]:
    """The lines that show one example's plan (after the column headers when `first`): its row,
    what would stop it, and, above its time limit, the suggestions."""
    p = plan.planned
    calls = "unknown" if p.calls is None else f"at most {p.calls}"
    values = (plan.id, plan.words, "-" if plan.positions is None else plan.positions,
              "-" if p.radius is None else p.radius, "-" if p.size is None else p.size, calls, _time(plan.seconds))
    lines = [_row(HEADERS)] if first else []
    lines.append(_row(values))
    if p.note:
        lines.append(f"      {p.note}")
    if plan.over:
        offered = "; try" if plan.suggestions else " (no option of this command shortens it)"
        lines.append(f"      {_time(plan.seconds)} is above the time limit of {plan.limit:g} s{offered}")
        lines += [f"        {s.change}: |Omega_{s.radius}| = {s.size}, at most {s.calls} model calls, "
                  f"{_time(s.seconds)}{' (within the limit)' if s.fits else ''}" for s in plan.suggestions]
    return lines


def total_line(plans: Sequence[ExamplePlan]) -> str:
    """The plan's total: the model calls and time of the examples whose calls are known, the
    examples above their time limit, and the probe's own calls (those a served model's response
    cache answered said apart: the time measured on them is not the server's)."""
    known = [p for p in plans if p.planned.calls is not None]
    over = sum(p.over for p in plans)
    unknown = f" ({len(plans) - len(known)} examples whose calls the command cannot say left out)" \
        if len(known) < len(plans) else ""
    examples = f"{len(plans)} example{'s' if len(plans) != 1 else ''}"
    cached = sum(p.probe_cached for p in plans)
    cached = f" ({cached} of them answered by a served model's response cache, so the times above count " \
             "those answers at the cache's speed, not the server's)" if cached else ""
    return (f"plan of {examples}: {sum(p.planned.calls for p in known)} model calls, "
            f"{_time(sum(p.seconds for p in known))}{unknown}; {over} above their time limit; the timing probe "
            f"made {sum(p.probe_calls for p in plans)} model calls{cached}. Nothing was searched and no run file written.")


def _row(values) -> str:
    return " ".join(str(v).ljust(w) for v, w in zip(values, WIDTHS + (0,))).rstrip()


def _time(seconds: float | None) -> str:
    """A time as people read it: about N s, min or h."""
    if seconds is None:
        return "unknown"
    if not math.isfinite(seconds):
        return "longer than anyone can wait"
    if seconds < 120:
        return f"about {seconds:.2g} s" if seconds < 10 else f"about {seconds:.0f} s"
    if seconds < 7200:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"
