"""The perturbation space Omega(X) of Yang et al. 2022: counted, enumerated and sampled exactly.

A space has perturbable positions: words (substituted) and gaps between words (the separator kept
or replaced, e.g. joined by segmentation). Each position has a candidate list whose first element
is the original. A *point* chooses one candidate per position and is stored sparsely as its
changes: a tuple of (position, candidate index >= 1) pairs sorted by position. Its L0 distance
is the number of changes.

With m_p = len(candidates_p) - 1, the number of points at distance exactly k is the elementary
symmetric polynomial e_k(m_1..m_n), and |Omega_r| = sum_{k<=r} e_k, computed with exact integers.

Canonical order of Omega_r: by distance k, then lexicographically by the change sequence
(p1, c1, p2, c2, ...). `point_at(i, r)` is the i-th point in this order and `index_of` its
inverse; `sample` draws uniform indices (Python integers, so any size) and unranks them, which is
exactly uniform over points.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from robustcount.errors import RobustcountError
from robustcount.text import Input, Tokens, perturbed_part, replace_perturbed_part, tokenize

MAX_TABLE_ENTRIES = 2_000_000
"""The largest counting table a space builds (under a second and about half a GB of exact
integers at the limit: 2,000 positions at r = 500 take 1,000,000); beyond it counting refuses
with the text's size."""

Change = tuple[int, int]
Point = tuple[Change, ...]


@dataclass(frozen=True)
class Position:
    """A perturbable position: word `index` (kind "word") or the separator before word `index`
    (kind "gap"); `candidates[0]` is the original; `sources[j]` names who proposed candidate j."""

    kind: str
    index: int
    candidates: tuple[str, ...]
    sources: tuple[str, ...] = ()

    @property
    def original(self) -> str:
        return self.candidates[0]


@dataclass(frozen=True)
class Space:
    """Omega(X) for one input. `definition` records how the space was built (sources, filters,
    seed) so that it can be rebuilt and its digest checked."""

    item: Input
    positions: tuple[Position, ...]
    definition: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_tables", {})
        for p in self.positions:
            if not p.candidates or len(set(p.candidates)) != len(p.candidates):
                raise ValueError(f"position {p.kind} {p.index}: candidates must be distinct and non-empty")

    @cached_property
    def tokens(self) -> Tokens:
        return tokenize(perturbed_part(self.item))

    @cached_property
    def sizes(self) -> tuple[int, ...]:
        """m_p: the number of non-original candidates of each position."""
        return tuple(len(p.candidates) - 1 for p in self.positions)

    def _suffix(self, depth: int) -> list[list[int]]:
        """table[j][k] = e_k(m_j, ..., m_{n-1}) for k <= depth: the points at distance k that use
        positions j.. only. O(n * depth) exact integers, cached for the deepest depth asked."""
        n = len(self.sizes)
        depth = min(depth, n)
        cached = self._tables.get("suffix")
        if cached is not None and len(cached[0]) > depth:
            return cached
        if (n + 1) * (depth + 1) > MAX_TABLE_ENTRIES:
            raise RobustcountError(
                f"counting Omega_{depth} of a space with {n} positions needs a table of {(n + 1) * (depth + 1):,} "
                f"exact integers (at most {MAX_TABLE_ENTRIES:,}): lower the radius or split the text")
        table = [[0] * (depth + 1) for _ in range(n + 1)]
        table[n][0] = 1
        for j in range(n - 1, -1, -1):
            table[j][0] = 1
            for k in range(1, depth + 1):
                table[j][k] = table[j + 1][k] + self.sizes[j] * table[j + 1][k - 1]
        self._tables["suffix"] = table
        return table

    def max_radius(self) -> int:
        """The largest useful radius: the number of positions with at least one alternative."""
        return sum(1 for m in self.sizes if m > 0)

    def count_at(self, k: int) -> int:
        """e_k: the number of points at distance exactly k."""
        return self._suffix(k)[0][k] if 0 <= k <= len(self.sizes) else 0

    def count(self, radius: int) -> int:
        """|Omega_r|: the number of points at distance at most `radius` (the original included)."""
        _check_radius(radius)
        depth = min(radius, len(self.sizes))
        table = self._suffix(depth)  # built once, for the deepest distance
        return sum(table[0][:depth + 1])

    # -- points and texts --------------------------------------------------------------------

    @cached_property
    def _pieces(self) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """The perturbed part as separators and words interleaved (separator 0, word 0, separator
        1, ...; they join into it) and each position's place among them."""
        pieces = [piece for pair in zip(self.tokens.separators, self.tokens.words) for piece in pair]
        places = tuple(2 * p.index + 1 if p.kind == "word" else 2 * p.index for p in self.positions)
        return (*pieces, self.tokens.separators[-1]), places

    def apply(self, point: Point) -> Input:
        """The input that `point` describes."""
        text, starts, places = self._joined
        candidates = self._candidates
        pieces, at, last = [], 0, -1
        for position, choice in point:
            place = places[position]
            if place <= last:  # changes out of text order: piece by piece
                return self._apply_by_pieces(point)
            pieces += (text[at : starts[place]], candidates[position][choice])
            at, last = starts[place + 1], place
        pieces.append(text[at:])
        return replace_perturbed_part(self.item, "".join(pieces))

    def _apply_by_pieces(self, point: Point) -> Input:
        """`apply`, for changes in any order (a later change of a piece wins)."""
        original, places = self._pieces
        pieces = list(original)
        for position, choice in point:
            pieces[places[position]] = self._candidates[position][choice]
        return replace_perturbed_part(self.item, "".join(pieces))

    @cached_property
    def _candidates(self) -> tuple[tuple[str, ...], ...]:
        """Each position's candidates (the original first)."""
        return tuple(p.candidates for p in self.positions)

    @cached_property
    def _joined(self) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
        """The perturbed part, where each of its pieces (`_pieces`) starts in it (and its end),
        and each position's place among the pieces."""
        original, places = self._pieces
        starts = tuple(itertools.accumulate(map(len, original), initial=0))
        return "".join(original), starts, places

    def check_point(self, point: Point) -> None:
        """Raise ValueError unless `point` is a valid sparse point of this space."""
        previous = -1
        for position, choice in point:
            if not previous < position < len(self.positions):
                raise ValueError(f"positions must be increasing and in range: {point}")
            if not 1 <= choice <= self.sizes[position]:
                raise ValueError(f"candidate {choice} out of range at position {position}")
            previous = position

    # -- enumeration in canonical order ------------------------------------------------------

    def points(self, radius: int) -> Iterator[Point]:
        """Every point of Omega_r once, in canonical order."""
        _check_radius(radius)
        table = self._suffix(radius)
        for k in range(min(radius, len(self.sizes)) + 1):
            yield from self._points_at(k, 0, table)

    def _points_at(self, k: int, start: int, table: list[list[int]]) -> Iterator[Point]:
        if k == 0:
            yield ()
            return
        for j in range(start, len(self.sizes)):
            if table[j + 1][k - 1] == 0:
                continue
            for c in range(1, self.sizes[j] + 1):
                for rest in self._points_at(k - 1, j + 1, table):
                    yield ((j, c), *rest)

    def points_at_distance(self, k: int) -> Iterator[Point]:
        """Every point at distance exactly `k`, in canonical order."""
        _check_radius(k)
        if k <= len(self.sizes):
            yield from self._points_at(k, 0, self._suffix(k))

    def point_at(self, index: int, radius: int) -> Point:
        """The `index`-th point of Omega_r in canonical order (0 is the original)."""
        total = self.count(radius)
        if not 0 <= index < total:
            raise IndexError(f"index {index} outside Omega_{radius} of size {total}")
        k = 0
        while index >= self.count_at(k):
            index -= self.count_at(k)
            k += 1
        table = self._suffix(k)
        changes, start = [], 0
        while k > 0:
            j = start
            while True:
                block = self.sizes[j] * table[j + 1][k - 1]
                if index < block:
                    break
                index -= block
                j += 1
            rest = table[j + 1][k - 1]
            changes.append((j, 1 + index // rest))
            index %= rest
            start, k = j + 1, k - 1
        return tuple(changes)

    def sample_at_distance(self, k: int, n: int, seed: int | random.Random) -> list[Point]:
        """`n` points drawn independently and exactly uniformly from the points at distance
        exactly `k` (with replacement); `seed` as in `sample`."""
        rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        shell = self.count_at(k)
        if shell == 0:
            raise ValueError(f"no point lies at distance {k}")
        before = self.count(k - 1) if k > 0 else 0
        return [self.point_at(before + rng.randrange(shell), k) for _ in range(n)]

    def index_of(self, point: Point) -> int:
        """The canonical index of `point` (inverse of `point_at`)."""
        self.check_point(point)
        k = len(point)
        index = sum(self.count_at(d) for d in range(k))
        table = self._suffix(k)
        start = 0
        for step, (j, c) in enumerate(point):
            remaining = k - step
            for skipped in range(start, j):
                index += self.sizes[skipped] * table[skipped + 1][remaining - 1]
            index += (c - 1) * table[j + 1][remaining - 1]
            start = j + 1
        return index

    def sample(self, radius: int, n: int, seed: int | random.Random) -> list[Point]:
        """`n` points drawn independently and exactly uniformly from Omega_r (with replacement);
        `seed` is a seed, or a random.Random to continue drawing from."""
        rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        total = self.count(radius)
        return [self.point_at(rng.randrange(total), radius) for _ in range(n)]

    # -- enumeration by position subsets (for provers) ---------------------------------------

    def points_by_subset(self, radius: int, order: Sequence[int] | None = None) -> Iterator[Point]:
        """Every point of Omega_r once, grouped by its set C of changed positions: subsets of
        size min(r, |P|) first, then smaller ones, each size in lexicographic order of `order`
        (a permutation of the positions, most important first)."""
        order = self._order(order)
        _check_radius(radius)
        for size in range(min(radius, len(order)), -1, -1):
            for subset in itertools.combinations(order, size):
                yield from self._products(sorted(subset))

    def _products(self, positions: list[int]) -> Iterator[Point]:
        return itertools.product(*[self._changes[p] for p in positions])

    @cached_property
    def _changes(self) -> tuple[tuple[Change, ...], ...]:
        """Per position, its changes: (position, c) for each candidate c >= 1."""
        return tuple(tuple((p, c) for c in range(1, m + 1)) for p, m in enumerate(self.sizes))

    def _order(self, order: Sequence[int] | None) -> list[int]:
        n = len(self.positions)
        if order is None:
            return list(range(n))
        if sorted(order) != list(range(n)):
            raise RobustcountError(f"the position order must be a permutation of 0..{n - 1}")
        return list(order)

    # -- description ----------------------------------------------------------------------------

    def describe(self, radius: int | None = None) -> str:
        """A readable listing of every position's candidates (and |Omega_r| if `radius` given)."""
        lines = []
        for i, p in enumerate(self.positions):
            where = f"word {p.index}" if p.kind == "word" else f"gap {p.index}"
            shown = ", ".join(repr(c) for c in p.candidates[1:]) or "(none)"
            lines.append(f"[{i}] {where} {p.original!r}: {len(p.candidates) - 1} -> {shown}")
        if radius is not None:
            lines.append(f"|Omega_{radius}| = {self.count(radius)}")
        if self.window is not None:
            lines.append(window_note(self.window, self.definition["filters"].get("keep_beyond_window", False)))
        return "\n".join(lines)

    @property
    def window(self) -> dict | None:
        """The model's window as the definition records it when words of the input lie beyond it
        (`{"size", "words", "beyond"}`: `spaces.build`), else None."""
        return self.definition.get("window")

    @property
    def changeable_words(self) -> int:
        """How many of the input's words, the first ones, the space may change: all but those
        beyond the model's window, unless it keeps them (`keep_beyond_window`)."""
        kept = self.definition.get("filters", {}).get("keep_beyond_window", False)
        return len(self.tokens.words) - (self.window["beyond"] if self.window is not None and not kept else 0)

    def digest(self) -> str:
        """SHA-256 of the input, the definition and every candidate list."""
        return _sha256({**self._points_payload(), "definition": self.definition})

    def points_digest(self) -> str:
        """SHA-256 of the input and every candidate list only: equal for spaces with the same points
        however they were defined (a table's definition names where its file lies)."""
        return _sha256(self._points_payload())

    def _points_payload(self) -> dict:
        return {"item": list(self.item) if isinstance(self.item, tuple) else self.item,
                "positions": [[p.kind, p.index, list(p.candidates)] for p in self.positions]}


def window_note(window: dict, kept: bool | None, texts: str = "") -> str:
    """"N of M words beyond the model's K-token window", and what became of them: left out of
    the space, or kept (`keep_beyond_window`), or, with `kept` None (no space), unread; `texts`
    says over which texts, for a run's."""
    spaces = "their spaces" if texts else "the space"
    fate = "the model does not read them" if kept is None else \
        f"kept in {spaces} (--keep-beyond-window: truncated on purpose)" if kept else \
        f"left out of {spaces} (--keep-beyond-window keeps them)"
    return f"{window['beyond']} of {window['words']} words{texts} beyond the model's {window['size']} window: {fate}"


def _sha256(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _check_radius(radius: int) -> None:
    if not isinstance(radius, int) or radius < 0:
        raise RobustcountError(f"the radius must be a non-negative integer, got {radius!r}")
