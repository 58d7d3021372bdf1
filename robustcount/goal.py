"""The untargeted goal every robustness question shares, and the one way algorithms evaluate it.

One tie rule everywhere (prover, attacks, PR, `verify`, the testing API): a point keeps the gold
label only when p(gold) is strictly above every other label's probability. At an exact tie
(0.5 / 0.5) the model does not prefer the gold label, so the point is adversarial, and a clean
input at a tie counts as not correctly classified, whatever the order of the labels. (Accuracy
in `evaluate` and `zeroe` reports the label the model outputs, its argmax.)

`evaluate_points` is the evaluation kernel: every algorithm (attacks, prover, PR, certificate
checks) sends its points of a space to the model through it, one engine batch at a time.
`Outcome` holds what every search reports about itself for one example.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.spaces.space import Point, Space
from robustcount.text import Input

MAX_POINTS = 1_000_000
"""The most points one exhaustive enumeration (prover, oracle, exact PR) checks unless told
otherwise: about a minute on the default model on a laptop CPU."""
MAX_RADIUS = 10_000
"""The largest radius an option accepts: no space that can be counted has more positions."""


def margin(probs: np.ndarray, gold: int) -> np.ndarray:
    """p(gold) - max p(other label), row-wise: zero or below where the point is adversarial."""
    probs = np.atleast_2d(probs)
    others = np.delete(probs, gold, axis=1)
    return probs[:, gold] - others.max(axis=1)


def keeps_label(probs: np.ndarray, gold: int) -> np.ndarray:
    """Row-wise: whether the model strictly prefers `gold` (margin > 0)."""
    return margin(probs, gold) > 0


def is_adversarial(probs: np.ndarray, gold: int) -> np.ndarray:
    """Row-wise: whether the point leaves `gold` (margin <= 0, ties included)."""
    return ~keeps_label(probs, gold)


def correct_on_input(engine: QueryEngine, item: Input, gold: int) -> bool:
    """Whether the model keeps `gold` on the clean input (only then is there robustness to ask about)."""
    return bool(keeps_label(engine.predict_proba([item]), gold)[0])


@dataclass(kw_only=True)
class Outcome:
    """What a search on one example reports besides its answer: why it stopped short of one
    (`reason`), the engine's counters for the example (`queries`) and its wall time (`seconds`,
    logged apart from results in run files)."""

    reason: str | None = None
    queries: dict = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class Evaluated:
    """A batch of points of a space with the model's probabilities on them."""

    points: list[Point]
    probs: np.ndarray
    gold: int

    @cached_property
    def margins(self) -> np.ndarray:
        return margin(self.probs, self.gold)

    @cached_property
    def kept(self) -> np.ndarray:
        """Whether each point keeps the gold label (the tie rule above)."""
        return self.margins > 0

    @property
    def adversarial(self) -> np.ndarray:
        return ~self.kept

    def lowest_adversary(self) -> tuple[Point, float] | None:
        """The adversarial point with the lowest margin in this batch, with its margin, or None."""
        found = np.flatnonzero(self.adversarial)
        if not found.size:
            return None
        best = int(found[self.margins[found].argmin()])
        return self.points[best], float(self.margins[best])


def evaluate_points(engine: QueryEngine, space: Space, points: Iterable[Point], gold: int) -> Iterator[Evaluated]:
    """The model's answers on `points` of `space`, one engine batch at a time (so that a caller
    can stop after any batch and the rest is never queried)."""
    points = iter(points)
    while batch := list(itertools.islice(points, engine.batch_size)):
        yield Evaluated(batch, engine.predict_proba([space.apply(p) for p in batch]), gold)


def evaluate_all(engine: QueryEngine, space: Space, points: Iterable[Point], gold: int) -> Evaluated:
    """`evaluate_points` gathered into one batch."""
    parts = list(evaluate_points(engine, space, points, gold))
    if not parts:
        return Evaluated([], np.zeros((0, len(engine.labels))), gold)
    return Evaluated([p for part in parts for p in part.points], np.concatenate([part.probs for part in parts]), gold)


def check_adversary(engine: QueryEngine, space: Space, point: Point, gold: int) -> float:
    """Re-check an adversary: a valid point of `space` (each substitute in its position's list,
    distance = number of changed positions) on which the model leaves `gold`. Returns its margin;
    raises RobustcountError if any check fails."""
    try:
        space.check_point(point)
    except ValueError as err:
        raise RobustcountError(f"invalid adversary: {err}") from err
    (evaluated,) = evaluate_points(engine, space, [point], gold)
    if not evaluated.adversarial[0]:
        raise RobustcountError("invalid adversary: the model still prefers the gold label")
    return float(evaluated.margins[0])
