"""Boxes of a space's points: the regions branch and bound splits Omega_r into.

A box fixes every position at its original but the `forced` ones, which take one of their listed
candidates (never the original), and the `free` ones, which keep the original or take any of
their candidates, with at most `cap` free positions changed. Omega_r is the box with every
position free and cap r; `split` cuts a box into boxes that partition it, so the points a search
visits are exactly Omega_r's, each once.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from robustcount.bounds.slots import SlotBox, TokenSlots
from robustcount.errors import LimitReached, RobustcountError
from robustcount.spaces.space import Point, Space
from robustcount.status import POINT_LIMIT

BOUND_BATCH = 32
"""Boxes bounded in one pass (the networks' bounds are batched like forward passes)."""


class TooManyPoints(LimitReached):
    """More than `limit` points are left to enumerate (in the boxes bounds did not decide)."""

    kind = POINT_LIMIT

    def __init__(self, limit: int):
        super().__init__(f"more than {limit} points left to enumerate")


@dataclass(frozen=True)
class Box:
    """A box of points of one space (see the module docstring)."""

    forced: tuple[tuple[int, tuple[int, ...]], ...]
    """(position, candidate indices >= 1) pairs, by position."""
    free: tuple[int, ...]
    cap: int

    @classmethod
    def ball(cls, space: Space, radius: int) -> Box:
        """Omega_radius of `space` as one box."""
        return cls((), tuple(p for p, m in enumerate(space.sizes) if m > 0), radius)

    def count(self, space: Space) -> int:
        """The number of points in the box."""
        forced = 1
        for _, choices in self.forced:
            forced *= len(choices)
        shells = [1] + [0] * self.cap  # shells[k]: ways to change k of the free positions
        for p in self.free:
            for k in range(self.cap, 0, -1):
                shells[k] += shells[k - 1] * space.sizes[p]
        return forced * sum(shells)

    def points(self, space: Space) -> Iterator[Point]:
        """Every point of the box once."""
        for size in range(min(self.cap, len(self.free)) + 1):
            for changed in itertools.combinations(self.free, size):
                options = [[(p, c) for c in choices] for p, choices in self.forced]
                options += [[(p, c) for c in range(1, space.sizes[p] + 1)] for p in changed]
                for changes in itertools.product(*options):
                    yield tuple(sorted(changes))

    def split(self, space: Space, position: int) -> tuple[Box, ...]:
        """Boxes partitioning this one: a free `position` kept original / changed (the cap spent),
        or a forced one's candidates halved."""
        forced = dict(self.forced)
        if position in forced:
            choices = forced[position]
            half = len(choices) // 2
            return tuple(Box(_sorted({**forced, position: part}), self.free, self.cap)
                         for part in (choices[:half], choices[half:]))
        free = tuple(p for p in self.free if p != position)
        kept = Box(self.forced, free, min(self.cap, len(free)))
        if self.cap == 0:
            return (kept,)
        changed = Box(_sorted({**forced, position: tuple(range(1, space.sizes[position] + 1))}), free,
                      min(self.cap - 1, len(free)))
        return kept, changed

    def splittable(self) -> list[int]:
        """The positions `split` can cut on: free ones (when the cap allows a change) and forced
        ones with two or more candidates."""
        return [p for p in self.free if self.cap] + [p for p, choices in self.forced if len(choices) > 1]

    def slots(self, slots: TokenSlots) -> SlotBox:
        """The box as token ids (positions whose changes the model does not see drop out; the
        cap then bounds the changed visible free positions too: a superset, so sound)."""
        allowed = torch.zeros(slots.universe.shape, dtype=torch.bool)
        allowed[:, 0] = True
        free = torch.zeros(len(slots.ids), dtype=torch.bool)
        for p, choices in self.forced:
            if (column := slots.column[p]) is not None:
                allowed[column, 0] = False
                allowed[column, list(choices)] = True
        for p in self.free:
            if (column := slots.column[p]) is not None:
                allowed[column, : len(slots.candidate_ids[p])] = True
                free[column] = True
        return SlotBox(slots.universe, allowed, free, self.cap)


def _sorted(forced: dict[int, tuple[int, ...]]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    return tuple(sorted(forced.items()))


SPLIT, BOUND, ENUMERATE = "split", "bound", "enumerate"
"""The entries of a split tree (`SplitTree`): a box split on a position, a box its bound decided
whole (with the bound), a box enumerated point by point."""


class SplitTree:
    """How branch and bound cut Omega_r into boxes and decided each: node 0 is Omega_r, a split
    node's children are the parts `Box.split` gives, in its order, and every leaf records how it
    was decided. `preorder` writes it compactly as a certificate holds it: `["split", position]`,
    then each part's subtree; `["bound", margin lower bound]`; `["enumerate"]`."""

    def __init__(self):
        self._nodes: list[list | None] = [None]
        self._children: dict[int, list[int]] = {}

    def split(self, node: int, position: int, parts: int) -> list[int]:
        """Record that `node` was split on `position` into `parts` parts; their nodes."""
        self._nodes[node] = [SPLIT, position]
        self._children[node] = list(range(len(self._nodes), len(self._nodes) + parts))
        self._nodes.extend([None] * parts)
        return self._children[node]

    def leaf(self, node: int, *entry) -> None:
        """Record how the box of `node` was decided (`BOUND, lower_bound` or `ENUMERATE`)."""
        self._nodes[node] = list(entry)

    def preorder(self) -> list[list]:
        """The tree as a list in preorder (every node decided)."""
        written, stack = [], [0]
        while stack:
            node = stack.pop()
            if self._nodes[node] is None:
                raise RobustcountError(f"internal: box {node} of the split tree was never decided")
            written.append(self._nodes[node])
            stack.extend(reversed(self._children.get(node, [])))
        return written


def replay(space: Space, radius: int, tree) -> list[tuple[Box, list]]:
    """The leaves of a split tree written by `SplitTree.preorder` for Omega_radius of `space`,
    each with its entry, by replaying its splits from `Box.ball`: so they partition Omega_radius
    (`Box.split` partitions). Raises ValueError, saying where, for anything that is not such a
    tree: an entry of another shape, a split on a position its box cannot split, a box left
    without an entry (a box missing) or entries left over (a box twice)."""
    if not isinstance(tree, list):
        raise ValueError("the boxes must be a list")
    leaves, stack = [], [Box.ball(space, radius)]
    for k, entry in enumerate(tree):
        if not stack:
            raise ValueError(f"entry {k} and those after it belong to no box (every box was already decided)")
        box = stack.pop()
        kind = entry[0] if isinstance(entry, list) and entry else None
        if kind == SPLIT and len(entry) == 2 and type(entry[1]) is int:
            if entry[1] not in box.splittable():
                raise ValueError(f"entry {k} splits a box on position {entry[1]}, which it cannot split")
            stack.extend(reversed(box.split(space, entry[1])))
        elif kind == BOUND and len(entry) == 2 and type(entry[1]) in (int, float) and math.isfinite(entry[1]):
            leaves.append((box, entry))
        elif kind == ENUMERATE and len(entry) == 1:
            leaves.append((box, entry))
        else:
            raise ValueError(f"entry {k} is not [\"split\", position], [\"bound\", number] or [\"enumerate\"]")
    if stack:
        raise ValueError(f"{len(stack)} box(es) of the split tree have no entry (boxes missing)")
    return leaves
