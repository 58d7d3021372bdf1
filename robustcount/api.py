"""The dataset commands from Python: `attack`, `certify` and `estimate`, each a run of the command of
that name with the same option objects and the same run machinery as the command line
(`runs.launch.launch`: a run file written, resumable and byte for byte the CLI's), returning the
run's records as typed dataclasses beside its summary.

    import robustcount

    proven = robustcount.certify("bow-rt", "demo:test", first=20, radius=2, output="certify.jsonl")
    for record in proven.records:
        print(record.id, record.certified_radius)

A keyword is a field of the command's options (`CertifyOptions`, `EstimateOptions`,
`AttackOptions` and, for `attack`, the chosen recipe's options), of `RunOptions` (`output`,
`resume`, `overwrite`, `workers`, `cluster`, `seed`) or of `DataSpec` (`first`, `sample`, ...);
`options=`, `run=` and `data=` take those objects whole, the keywords then replacing their fields. Each is checked when built, as on the command
line. Without `output`, the run goes to a new file in $ROBUSTCOUNT_RUNS or ./runs, as the CLI's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from robustcount.attacks.recipe import recipe_named
from robustcount.commands.attack import AttackOptions
from robustcount.commands.estimate import EstimateOptions
from robustcount.data import DataSpec
from robustcount.errors import RobustcountError
from robustcount.models.spec import ModelSpec
from robustcount.proofs.options import CertifyOptions
from robustcount.runs.launch import RunOptions, default_run_file, launch
from robustcount.runs.registry import command_named
from robustcount.runs.spec import RunSpec
from robustcount.runs.summaries import summarise_run
from robustcount.spaces.build import SpaceSpec
from robustcount.text import Input

__all__ = ["AttackRecord", "CertifyRecord", "EstimateRecord", "Results", "attack", "certify", "estimate"]


@dataclass(frozen=True)
class AttackRecord:
    """One example of an attack run: its `status` (success, failed, skipped or undecided, with the
    `limit` and `reason`), the adversary found (`adversarial`, changed at `distance` positions, a
    `share` of the words, with the gold `margin` there), and the model calls (`queries`). `record`
    is the whole JSON record the run file holds."""

    index: int
    id: str
    input: Input
    gold: str
    method: str
    status: str
    adversarial: Input | None
    distance: int | None
    share: float | None
    margin: float | None
    limit: str | None
    reason: str | None
    queries: dict
    record: dict


@dataclass(frozen=True)
class CertifyRecord:
    """One example of a certify run: whether the model keeps its gold label on the input
    (`correct`), the largest radius certified, whether that is the whole space, whether a limit
    stopped the search (`undecided`), the proof of each radius and the certificates `verify`
    re-checks. `record` is the whole JSON record the run file holds."""

    index: int
    id: str
    input: Input
    gold: str
    correct: bool
    certified_radius: int | None
    whole_space_certified: bool | None
    undecided: bool | None
    proofs: list
    certificates: list | None
    queries: dict
    record: dict


@dataclass(frozen=True)
class EstimateRecord:
    """One example of an estimate run: `estimate`, PR with its bounds, method and guarantee (None
    when the model gets the input wrong or a limit stopped it), and PR by distance
    (`by_distance`). `record` is the whole JSON record the run file holds."""

    index: int
    id: str
    input: Input
    gold: str
    correct: bool
    estimate: dict | None
    by_distance: list
    queries: dict
    record: dict


R = TypeVar("R")


@dataclass(frozen=True)
class Results(Generic[R]):
    """A finished run: its file (`run_file`, which `report` and `verify` read), its command's
    options as the run used them, its summary (`runs.summaries.summarise_run`: what the command
    line prints, the run's header under `run`) and one typed record per example, in data order."""

    run_file: Path
    options: object
    summary: dict
    records: tuple[R, ...]


RECORD_TYPES = {"attack": AttackRecord, "certify": CertifyRecord, "estimate": EstimateRecord}
"""The type of each command's records in its `Results`."""


def attack(model: str | ModelSpec | None = None, data: str | DataSpec = "demo:test", *, recipe: str = "pdp",
           space: SpaceSpec | None = None, options: AttackOptions | None = None, run: RunOptions | None = None,
           progress: bool = False, **fields) -> Results[AttackRecord]:
    """`robustcount attack`: the attack `recipe` (unless `options` name one) on every example of
    `data` against `model` (a name as --model takes it, or a ModelSpec; default the CLI's), over
    each input's `space` (default the CLI's). Keywords: `AttackOptions`' fields, the recipe's own
    (its `settings`: `beam=5` for pdp), `RunOptions`' and `DataSpec`'s (module docstring)."""
    chosen = options or AttackOptions(method=recipe)
    own = {f.name for f in dataclasses.fields(recipe_named(chosen.method).Options)}
    settings = {name: fields.pop(name) for name in list(fields) if name in own}
    if settings:
        fields["settings"] = dataclasses.replace(chosen.settings, **settings)
    return _run("attack", model, data, space, chosen, run, progress, fields)


def certify(model: str | ModelSpec | None = None, data: str | DataSpec = "demo:test", *,
            space: SpaceSpec | None = None, options: CertifyOptions | None = None, run: RunOptions | None = None,
            progress: bool = False, **fields) -> Results[CertifyRecord]:
    """`robustcount certify`: proofs r = 1, 2, ... up to `radius` on every example of `data`,
    with their certificates (`verify` re-checks the run file). Keywords: `CertifyOptions`' fields,
    `RunOptions`' and `DataSpec`'s (module docstring)."""
    return _run("certify", model, data, space, options or CertifyOptions(), run, progress, fields)


def estimate(model: str | ModelSpec | None = None, data: str | DataSpec = "demo:test", *,
             space: SpaceSpec | None = None, options: EstimateOptions | None = None, run: RunOptions | None = None,
             progress: bool = False, **fields) -> Results[EstimateRecord]:
    """`robustcount estimate`: PR, the share of Omega_r that keeps the label, on every example of
    `data`, with its guarantee. Keywords: `EstimateOptions`' fields, `RunOptions`' and `DataSpec`'s
    (module docstring)."""
    return _run("estimate", model, data, space, options or EstimateOptions(), run, progress, fields)


def _run(command: str, model, data, space, options, run, progress: bool, fields: dict) -> Results:
    """The run of `command` the arguments name (`fields` replacing those of `options`, `run` and `data`),
    through `launch` as the command line runs it, with its records as the command's `RECORD_TYPES`."""
    own = {f.name for f in dataclasses.fields(options)}
    running = {f.name for f in dataclasses.fields(RunOptions)} - {"as_json"}
    reading = {f.name for f in dataclasses.fields(DataSpec)} - {"spec"}
    unknown = sorted(set(fields) - own - running - reading)
    if unknown:
        raise RobustcountError(f"{command} takes no option {unknown[0]!r} (its options: "
                               f"{', '.join(sorted(own | running | reading))})")
    options = dataclasses.replace(options, **{k: v for k, v in fields.items() if k in own})
    run = dataclasses.replace(run or RunOptions(), **{k: v for k, v in fields.items() if k in running})
    data = data if isinstance(data, DataSpec) else DataSpec(data)
    data = dataclasses.replace(data, **{k: v for k, v in fields.items() if k in reading})
    if run.output is None:
        run = dataclasses.replace(run, output=default_run_file(command))
    model = model if isinstance(model, ModelSpec) else ModelSpec() if model is None else ModelSpec(model)
    space = (space or SpaceSpec()) if command_named(command).needs_space else None
    spec = RunSpec(command, (model,), run.seed, space, options)
    done = launch(spec, data, run, progress=progress)
    records = tuple(_typed(RECORD_TYPES[command], r) for r in done.records)
    return Results(run.output, done.options, summarise_run(done), records)


def _typed(record_type: type, record: dict):
    """`record` as `record_type`: its fields of those names (None where the record has none; an
    input, a (premise, hypothesis) pair in JSON's list, as the tuple `Input` is), and the whole."""
    found = {f.name: record.get(f.name) for f in dataclasses.fields(record_type) if f.name != "record"}
    found.update({name: tuple(value) for name, value in found.items()
                  if name in ("input", "adversarial") and isinstance(value, list)})
    return record_type(**found, record=record)
