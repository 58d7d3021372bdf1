"""What a dataset run computes, as a picklable value, and the worker state it needs.

A `RunSpec` names the command, its options, the model(s) and the space; every worker (this
process, a joblib worker, a Dask worker) turns it into a `Worker` once with `worker_for` and keeps
it for every later chunk of the same run: each worker loads its model once.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import cached_property


@dataclass(frozen=True)
class ModelOptions:
    """How to load one model (the CLI's model options)."""

    spec: str
    device: str = "auto"
    precision: str = "float32"
    batch_size: int = 64
    trust_remote_code: bool = False

    def load(self, device: str | None = None):
        """The classifier these options name, on `device` when given (else on `self.device`)."""
        from robustcount.models.zoo import load_model

        return load_model(self.spec, device=device or self.device, dtype=self.precision, batch_size=self.batch_size,
                          trust_remote_code=self.trust_remote_code)


@dataclass(frozen=True)
class SpaceOptions:
    """How to build each input's space (the CLI's space options)."""

    sources: tuple[str, ...]
    stop_words: bool = False
    min_length: int = 0
    max_candidates: int | None = None
    skip_positions: tuple[int, ...] = ()
    same_pos: bool = False


@dataclass(frozen=True)
class RunSpec:
    """One dataset run: `command` with its JSON-able `options`, applied to every example with
    `models` and (for the commands that need one) each input's space. `seed` fixes every random
    choice."""

    command: str
    models: tuple[ModelOptions, ...]
    seed: int = 0
    space: SpaceOptions | None = None
    options: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)

    @cached_property
    def key(self) -> str:
        """A canonical string naming everything a worker loads for this run."""
        return json.dumps(self.as_dict(), sort_keys=True)


class Worker:
    """The models (one query engine each) and the space builder of one run, in one process."""

    def __init__(self, spec: RunSpec, device: str | None = None):
        from robustcount.models.engine import QueryEngine

        self.spec = spec
        self.engines = [QueryEngine(options.load(device), batch_size=options.batch_size) for options in spec.models]
        self.build = space_builder(spec.space, spec.seed) if spec.space is not None else None
        self._encoder = None

    @property
    def engine(self):
        """The engine of the run's (first) model."""
        return self.engines[0]

    def sentence_encoder(self):
        """The sentence encoder of TextFooler's similarity check, loaded on first use."""
        if self._encoder is None:
            from robustcount.similarity import SentenceEncoder

            self._encoder = SentenceEncoder()
        return self._encoder

    def start_chunk(self) -> None:
        """Forget cached predictions and embeddings, so that a chunk's query counts and answers do
        not depend on which chunks this worker ran before."""
        for engine in self.engines:
            engine.clear_cache()
        if self._encoder is not None:
            self._encoder.clear_cache()


_WORKERS: dict[str, Worker] = {}


def worker_for(spec: RunSpec) -> Worker:
    """This process's worker for `spec`, loaded on first use (one run's worker is kept at a time)."""
    if spec.key not in _WORKERS:
        _WORKERS.clear()
        _WORKERS[spec.key] = Worker(spec, device=_local_device(spec))
    return _WORKERS[spec.key]


def _local_device(spec: RunSpec) -> str | None:
    """With `auto` and several GPUs, a worker process takes GPU (rank mod count), by its rank
    among the run's workers; otherwise the run's own device option applies."""
    if any(m.device != "auto" for m in spec.models):
        return None
    rank = _worker_rank()
    if rank is None:
        return None
    import torch

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
    import multiprocessing

    identity = multiprocessing.current_process()._identity  # (n,) for the n-th child process
    return identity[-1] - 1 if identity else None


def space_builder(options: SpaceOptions, seed: int):
    """A function from an input to its space (sources and their resources loaded once)."""
    from robustcount.spaces.build import build_space, make_source, space_definition

    resolved = [s for spec in options.sources for s in make_source(spec, seed)]
    filters = dict(stop_words=english_stop_words() if options.stop_words else None, min_length=options.min_length,
                   max_candidates=options.max_candidates, skip_positions=options.skip_positions,
                   same_pos=options.same_pos, seed=seed)

    def build(item):
        return build_space(item, resolved, **filters)

    build.definition = space_definition(resolved, **filters)
    return build


def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop-word list."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return ENGLISH_STOP_WORDS
