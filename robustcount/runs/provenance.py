"""What a run's header records so that anyone can tell what produced its results."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from dataclasses import asdict
from functools import cache
from importlib import metadata

from packaging.requirements import Requirement

from robustcount import __version__
from robustcount.data import Example, examples_digest
from robustcount.goal import MARGIN_TOLERANCE
from robustcount.models.device import precision_of
from robustcount.models.spec import recorded_options
from robustcount.runs.files import FORMAT
from robustcount.runs.spec import RunSpec, Worker


@cache
def dependency_versions() -> dict[str, str]:
    """The installed version of each of robustcount's required dependencies (extras left out)."""
    try:
        required = metadata.requires("robustcount") or []
    except metadata.PackageNotFoundError:
        return {}
    versions = {}
    for line in required:
        requirement = Requirement(line)
        if requirement.marker is not None and "extra" in str(requirement.marker):
            continue
        try:
            versions[requirement.name] = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            versions[requirement.name] = "not installed"
    return dict(sorted(versions.items()))


def served_record(model) -> dict:
    """How a served model is asked and scored, the calibration it was given (`--calibration auto`
    names none), and whether its answers to identical requests kept within the goal's margin
    tolerance (`models/llm/determinism.py`: a margin moves by at most twice a probability's change)."""
    moved = model.determinism
    return {**model.served, "calibration": model.calibration.record(),
            "deterministic": moved is not None and 2 * moved <= MARGIN_TOLERANCE}


def run_header(spec: RunSpec, worker: Worker, examples: Sequence[Example], data: dict, chunk_size: int) -> dict:
    """The header line of a run file: the spec (without the model options that change no result:
    `models.spec.recorded_options`), each model's precision (the one it runs at, for a
    torch model that ignores the option), digest, labels and batching (whether the engine's batch
    probe found it batch-invariant, run here on inputs like the examples'), and its window when it
    reads only a prefix of long inputs, and how a served model is asked and scored; the margin tolerance of the goal, the space's definition,
    the data (with a digest of the examples), the chunking, and the versions."""
    inputs = [example.input for example in examples]
    models = [{**recorded_options(asdict(options)), "precision": precision_of(engine.model) or options.precision,
               "digest": engine.digest(), "labels": list(engine.labels), "batching": engine.batching(inputs),
               **({"window": engine.window.size} if engine.window else {}),
               **({"served": served_record(engine.model)} if hasattr(engine.model, "served") else {})}
              for options, engine in zip(spec.models, worker.engines)]
    return {
        "record": "run",
        "format": FORMAT,
        "command": spec.command,
        "seed": spec.seed,
        "options": worker.command.header_options(spec.options),
        "models": models,
        "margin_tolerance": MARGIN_TOLERANCE,
        "space": None if worker.build is None else worker.build.definition,
        "data": {**data, "examples": len(examples), "digest": examples_digest(examples)},
        "chunk_size": chunk_size,
        "robustcount": __version__,
        "python": platform.python_version(),
        "dependencies": dependency_versions(),
    }
