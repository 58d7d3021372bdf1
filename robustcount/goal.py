"""The untargeted goal every robustness question shares, and the one way algorithms evaluate it.

One rule everywhere (prover, attacks, PR, the exhaustive oracle, `verify`, the testing API): a
point keeps the gold label only when its margin, p(gold) - max p(other label), is above
MARGIN_TOLERANCE. A point whose margin is at most MARGIN_TOLERANCE is adversarial: the model does
not prefer the gold label by more than float noise, so an exact tie (0.5 / 0.5) is adversarial and
so is a point the gold label wins by 1e-6, whatever the order of the labels; a clean input within
the tolerance counts as not correctly classified. Certificates record the tolerance they were
decided with, and `verify` accepts only this one; `judged_labels` gives the label a prediction is
judged to give under it (TextFooler's label-flip case, the testing API). (Accuracy in `evaluate`
and `zeroe`, and the model cards', is still the label the model outputs, its argmax.)

`evaluate_points` is the evaluation kernel: every algorithm (attacks, prover, PR, certificate
checks) sends its points of a space to the model through it, one engine batch at a time.
`Outcome` holds what every search reports about itself for one example.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from functools import cached_property, lru_cache

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.options import option
from robustcount.spaces.space import Point, Space
from robustcount.text import Input, tokenize

MAX_POINTS = 1_000_000
"""The most points one exhaustive enumeration (prover, oracle, exact PR) checks unless told
otherwise: about a minute on the default model on a laptop CPU."""


def max_points_field(help: str = "Refuse (undecided) an Omega_r larger than this."):
    """The option of the most points one exhaustive enumeration checks."""
    return field(default=MAX_POINTS, metadata=option(help, minimum=1))


MARGIN_TOLERANCE = 1e-4
"""The margin a point must exceed to keep the gold label. The built-in models' float32 answers move
by at most 1.04e-6 in probability (2.1e-6 in margin) between batch compositions (each demo:test
text alone against length-sorted and shuffled batches of 64; all 1,975 texts, the MiniLM models
400; `experiments/batch_noise.py`), and the query engine batches no model whose probabilities
move by more than `engine.BATCH_TOLERANCE` (1e-5, so 2e-5 in margin): float noise between the
batches of a proof and those of its check does not decide a point."""


def margin(probs: np.ndarray, gold: int) -> np.ndarray:
    """p(gold) - max p(other label), row-wise: at most the tolerance where the point is adversarial."""
    probs = np.atleast_2d(probs)
    if probs.shape[1] == 2:  # the other label's column itself: the same values, without a copy
        return probs[:, gold] - probs[:, 1 - gold]
    others = np.delete(probs, gold, axis=1)
    return probs[:, gold] - others.max(axis=1)


def keeps_label(probs: np.ndarray, gold: int, tolerance: float = MARGIN_TOLERANCE) -> np.ndarray:
    """Row-wise: whether the model prefers `gold` by more than `tolerance` (the rule above)."""
    return margin(probs, gold) > tolerance


def is_adversarial(probs: np.ndarray, gold: int, tolerance: float = MARGIN_TOLERANCE) -> np.ndarray:
    """Row-wise: whether the point leaves `gold` (margin at most `tolerance`, ties included)."""
    return ~keeps_label(probs, gold, tolerance)


def judged_labels(probs: np.ndarray, gold: int | None) -> np.ndarray:
    """Row-wise, the label the model is judged to give against `gold` by the rule above: `gold`
    where it keeps it, else the most probable other label (the first of them on a tie). Without a
    gold label (None) nothing is judged: the most probable label, the first on a tie."""
    probs = np.atleast_2d(probs)
    if gold is None:
        return probs.argmax(axis=1)
    others = probs.copy()
    others[:, gold] = -np.inf
    return np.where(keeps_label(probs, gold), gold, others.argmax(axis=1))


def correct_on_input(engine: QueryEngine, item: Input, gold: int) -> bool:
    """Whether the model keeps `gold` on the clean input (only then is there robustness to ask about)."""
    return bool(keeps_label(engine.predict_proba([item]), gold)[0])


@dataclass(kw_only=True)
class Outcome:
    """What a search on one example reports besides its answer: why it stopped short of one
    (`reason`, and when a limit stopped it undecided, which: `limit`, one of `status.LIMITS`), the
    engine's counters for the example (`queries`) and its wall time (`seconds`, logged apart from
    results in run files)."""

    reason: str | None = None
    limit: str | None = None
    queries: dict = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        """The fields as a record holds them: `limit` only on an undecided search."""
        record = asdict(self)
        if self.limit is None:
            del record["limit"]
        return record


@dataclass
class Evaluated:
    """A batch of points of a space with the model's probabilities on them."""

    points: list[Point]
    probs: np.ndarray
    gold: int
    tolerance: float = MARGIN_TOLERANCE

    @cached_property
    def margins(self) -> np.ndarray:
        return margin(self.probs, self.gold)

    @cached_property
    def kept(self) -> np.ndarray:
        """Whether each point keeps the gold label (margin above the tolerance: the rule above)."""
        return self.margins > self.tolerance

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


def evaluate_points(engine: QueryEngine, space: Space, points: Iterable[Point], gold: int,
                    tolerance: float = MARGIN_TOLERANCE) -> Iterator[Evaluated]:
    """The model's answers on `points` of `space`, one engine batch at a time (so that a caller
    can stop after any batch and the rest is never queried), decided with `tolerance` (the rule
    above; `verify` passes the one a certificate records). Where `point_ids` gives the points'
    token ids, the model runs on those instead of re-tokenizing each text (the same answers); a
    point is still its text to the engine's cache and counters."""
    points = iter(points)
    ids = point_ids(engine, space)
    while batch := list(itertools.islice(points, engine.batch_size)):
        inputs = list(map(space.apply, batch))
        probs = engine.predict_proba(inputs, None if ids is None else ids.rows(batch))
        yield Evaluated(batch, probs, gold, tolerance)


_LAST_POINT_IDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per engine, the space `point_ids` answered last and its answer: a search asks again for every
run of points of one space (the prover's two stages, its witness's re-check)."""


class PointIds:
    """The token ids of the points of one space (see `point_ids`), from `pieces` (the ids of each
    word of the text) and `changed` (per position: the index of its word and the ids of each
    candidate, or None for a gap, which changes no word). `rows(points)` gives a batch's rows at
    once: one int64 array when every word is one id (the text's ids with each point's changes),
    else a list of lists."""

    def __init__(self, pieces: list[tuple[int, ...]], changed: list[tuple[int, list[tuple[int, ...]]] | None]):
        self.pieces, self.changed = pieces, changed
        self.one_id_a_word = all(len(p) == 1 for p in pieces) and all(
            len(ids) == 1 for c in changed if c is not None for ids in c[1])
        if self.one_id_a_word:
            self.original = np.array([p[0] for p in pieces], dtype=np.int64)
            self.swaps = {(position, choice): (c[0], ids[0]) for position, c in enumerate(changed) if c is not None
                          for choice, ids in enumerate(c[1])}
            """(position, choice) to (the word's column, its id)."""

    def __call__(self, point: Point) -> list[int]:
        """The ids of `point`."""
        chosen = list(self.pieces)
        for position, choice in point:
            if self.changed[position] is not None:  # a gap changes no word
                index, options = self.changed[position]
                chosen[index] = options[choice]
        return list(itertools.chain.from_iterable(chosen))

    def rows(self, points: list[Point]) -> np.ndarray | list[list[int]]:
        """The ids of each of `points`, one row each."""
        if not self.one_id_a_word:
            return list(map(self, points))
        rows = np.repeat(self.original[np.newaxis], len(points), axis=0)
        swaps, width = self.swaps, len(self.original)
        found = {i * width + f[0]: f[1] for i, point in enumerate(points) for change in point
                 if (f := swaps.get(change)) is not None}  # a gap changes no word; a later change of a word wins
        if found:
            rows.put(list(found), list(found.values()))
        return rows


def point_ids(engine: QueryEngine, space: Space) -> PointIds | None:
    """For a model that reads word ids (`engine.reads_word_ids`: a word-level tokenizer), the
    token ids of the points of `space`: the ids of a point's candidates' words one after the
    other, each candidate's found once. Only where every separator that a point may hold (the
    text's, and every gap candidate) holds no word and, between two words, keeps them apart
    (`_separates`): then whatever lies between two words of a point's text (the end of one
    candidate that is no word, separators, the start of the next) is such a separator with more
    non-word characters around it at most, which keeps them apart too, so the text splits into
    exactly its candidates' words. None otherwise (the text path). Made once for the space asked
    about last on each engine."""
    last = _LAST_POINT_IDS.get(engine)
    if last is None or last[0] is not space:
        last = _LAST_POINT_IDS[engine] = (space, _point_ids(engine, space))
    return last[1]


def _point_ids(engine: QueryEngine, space: Space) -> PointIds | None:
    """`point_ids`, made anew."""
    if not engine.reads_word_ids:
        return None
    n = len(space.tokens.words)
    separators = [(s, 0 < i < n) for i, s in enumerate(space.tokens.separators)]
    separators += [(c, 0 < p.index < n) for p in space.positions if p.kind == "gap" for c in p.candidates]
    if not all(_separates(s, inner) for s, inner in separators):
        return None
    words = set(space.tokens.words).union(*(p.candidates for p in space.positions if p.kind == "word"))
    found = {c: tuple(itertools.chain.from_iterable(map(engine.word_ids, _tokenized(c).words))) for c in words}
    return PointIds([found[word] for word in space.tokens.words],
                    [(p.index, [found[c] for c in p.candidates]) if p.kind == "word" else None for p in space.positions])


_tokenized = lru_cache(maxsize=1 << 16)(tokenize)


@lru_cache(maxsize=1 << 16)
def _separates(separator: str, inner: bool) -> bool:
    """Whether `separator` holds no word and, between two words (`inner`), keeps them two: it is
    not empty nor a lone apostrophe or hyphen, which would join them (any longer string of
    non-word characters keeps them apart, as the word rule joins over one character only)."""
    return tokenize(f"a{separator}a").words == ("a", "a") if inner else not tokenize(separator).words


def evaluate_all(engine: QueryEngine, space: Space, points: Iterable[Point], gold: int,
                 tolerance: float = MARGIN_TOLERANCE) -> Evaluated:
    """`evaluate_points` gathered into one batch."""
    parts = list(evaluate_points(engine, space, points, gold, tolerance))
    if not parts:
        return Evaluated([], np.zeros((0, len(engine.labels))), gold, tolerance)
    return Evaluated([p for part in parts for p in part.points], np.concatenate([part.probs for part in parts]), gold,
                     tolerance)


class InvalidAdversary(RobustcountError):
    """A claimed adversary that fails `check_adversary`; the message says which check."""


def check_adversary(engine: QueryEngine, space: Space, point: Point, gold: int, tolerance: float = MARGIN_TOLERANCE,
                    radius: int | None = None, name: str = "the adversary") -> float:
    """Re-check a claimed adversary, the one way every caller does (attacks, the prover,
    `verify`, the testing API): a point of `space` (each substitute in its position's list), not
    the input itself, within `radius` changes when one is given, on which the model leaves
    `gold` (margin at most `tolerance`). Returns its margin; raises InvalidAdversary, a sentence
    about `name`, if a check fails."""
    try:
        space.check_point(point)
    except ValueError as err:
        raise InvalidAdversary(f"{name} is not a point of the space: {err}") from err
    if not point:
        raise InvalidAdversary(f"{name} is the clean input itself (distance 0), never an adversary")
    if radius is not None and len(point) > radius:
        raise InvalidAdversary(f"{name} is at distance {len(point)}, beyond the radius {radius}")
    (evaluated,) = evaluate_points(engine, space, [point], gold, tolerance)
    if not evaluated.adversarial[0]:
        raise InvalidAdversary(f"{name} keeps the label {engine.labels[gold]!r} (margin {evaluated.margins[0]:.6f}, "
                               f"above the tolerance {tolerance:g})")
    return float(evaluated.margins[0])
