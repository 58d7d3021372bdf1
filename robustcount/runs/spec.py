"""What a dataset run computes, as a picklable value, and the worker state it needs.

A `RunSpec` names the command, its options, the model(s) and the space; every worker (this
process, a joblib worker, a Dask worker) turns it and its command into a `Worker` once with
`worker_for` and keeps it for every later chunk of the same run: each worker loads its model once.
"""

from __future__ import annotations

import json
import multiprocessing
from dataclasses import asdict, dataclass, field
from functools import cached_property

import torch

from robustcount.models.context_models import context_for
from robustcount.models.engine import QueryEngine
from robustcount.models.masked_lm import masked_lm_engine
from robustcount.models.sentence_encoder import sentence_engine
from robustcount.models.spec import ModelSpec
from robustcount.options import NoOptions
from robustcount.runs.registry import command_named
from robustcount.runs.kept_spaces import KeptBuilder
from robustcount.spaces.build import SpaceSpec


@dataclass(frozen=True)
class RunSpec:
    """One dataset run: `command` (a registered dataset command's name) with its `options` (that
    command's Options dataclass; a dict of its fields is converted), applied to every example with
    `models` and (for the commands that need one) each input's space. `seed` fixes every random
    choice."""

    command: str
    models: tuple[ModelSpec, ...]
    seed: int = 0
    space: SpaceSpec | None = None
    options: object = field(default_factory=NoOptions)

    def __post_init__(self):
        command = command_named(self.command)
        if isinstance(self.options, dict):
            object.__setattr__(self, "options", command.Options(**self.options))
        object.__setattr__(self, "space", command.space_for(self.options, self.space))

    def as_dict(self) -> dict:
        return asdict(self)

    @cached_property
    def key(self) -> str:
        """A canonical string naming everything a worker loads for this run."""
        return json.dumps(self.as_dict(), sort_keys=True)


class Worker:
    """The command, the models (one query engine each) and the space builder of one run, in one
    process."""

    def __init__(self, spec: RunSpec, command, device: str | None = None):
        self.spec = spec
        self.command = command
        self.engines = [options.engine(device) for options in spec.models]
        builder = self.space_builder(spec.space)
        self.build = None if builder is None else KeptBuilder(builder)
        self._encoder = None
        self._masked_lms: dict[str, QueryEngine] = {}
        self.examples_started = False
        """Whether a chunk has run in this worker (`runs.backends.run_chunk` starts the served models' limits then)."""
        self.ledgers_reported: list[dict] | None = None
        """Its served models' ledger records when last reported (`runs.served_ledgers.unreported_ledger`)."""

    def space_builder(self, space: SpaceSpec | None):
        """What builds each input's space for a run of this worker's models with `space` (None
        when the command builds none), within the window of the run's (first) model: `build` is
        `space_builder(spec.space)` with its contextual spaces kept (`KeptBuilder`), and a plan's
        suggestions build the spaces their changes would give with it (`runs.plan`)."""
        if space is None:
            return None
        return space.builder(self.spec.seed, self.engine.window, context_for(space.filters))

    @property
    def engine(self):
        """The engine of the run's (first) model."""
        return self.engines[0]

    def sentence_encoder(self):
        """The query engine of TextFooler's sentence encoder, loaded on first use."""
        if self._encoder is None:
            self._encoder = sentence_engine()
        return self._encoder

    def masked_lm(self, name: str) -> QueryEngine:
        """The query engine of the masked LM `name` (a recipe's, `Recipe.uses_masked_lm`), loaded on
        first use."""
        if name not in self._masked_lms:
            self._masked_lms[name] = masked_lm_engine(name)
        return self._masked_lms[name]

    def start_chunk(self) -> None:
        """Forget cached predictions, embeddings and masked-LM answers, so that a chunk's query counts and answers do
        not depend on which chunks this worker ran before."""
        for engine in self.engines:
            engine.clear_cache()
        for helper in ([self._encoder] if self._encoder is not None else []) + list(self._masked_lms.values()):
            helper.clear_cache()


_WORKERS: dict[str, Worker] = {}


def worker_for(spec: RunSpec, command) -> Worker:
    """This process's worker for `spec` and its `command` (a `Command` object), loaded on first
    use (one run's worker is kept at a time)."""
    if spec.key not in _WORKERS:
        _WORKERS.clear()
        _WORKERS[spec.key] = Worker(spec, command, device=_local_device(spec))
    return _WORKERS[spec.key]


def _local_device(spec: RunSpec) -> str | None:
    """With `auto` and several GPUs, a worker process takes GPU (rank mod count), by its rank
    among the run's workers; otherwise the run's own device option applies."""
    if any(m.device != "auto" for m in spec.models):
        return None
    rank = _worker_rank()
    if rank is None:
        return None
    count = torch.cuda.device_count()
    return f"cuda:{rank % count}" if count > 1 else None


def _worker_rank() -> int | None:
    """A Dask worker's name when it is a number (a local cluster's are 0, 1, ...), else a pool
    worker's position among its siblings; None in the main process."""
    try:
        from distributed import get_worker

        name = str(get_worker().name)
        if name.isdigit():
            return int(name)
    except (ImportError, ValueError):
        pass
    identity = multiprocessing.current_process()._identity  # (n,) for the n-th child process
    return identity[-1] - 1 if identity else None
