"""The query engine's cache and de-duplication: answers by input (an LRU cache with a bounded
number of entries), and a request sorted into the inputs it must run, the repeats of an input it
already asked for, and the inputs the cache answers."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from robustcount.text import Input


class Answers:
    """The cache: answers by input, at most `size` of them, the least recently used dropped first."""

    def __init__(self, size: int):
        self.size = size
        self._rows: OrderedDict = OrderedDict()

    def lookup(self, item) -> np.ndarray | None:
        """The answer for `item`, now the most recently used, or None when there is none."""
        row = self._rows.get(item)
        if row is not None:
            self._rows.move_to_end(item)
        return row

    def misses_all(self, items) -> bool:
        """Whether none of `items` has an answer here (nothing is marked used)."""
        return self._rows.keys().isdisjoint(items)

    def put(self, item, row: np.ndarray) -> None:
        self.put_all([item], [row])

    def put_all(self, items: Sequence, rows: Sequence[np.ndarray]) -> None:
        """The answers for `items` (distinct), now the most recently used in this order (as many `put`s)."""
        if self._rows.keys().isdisjoint(items):  # all new: each goes in last, in order
            self._rows.update(zip(items, rows))
        else:
            for item, row in zip(items, rows):
                self._rows[item] = row
                self._rows.move_to_end(item)
        while len(self._rows) > self.size:
            self._rows.popitem(last=False)

    def items(self) -> list:
        """(input, answer) pairs from the least to the most recently used."""
        return list(self._rows.items())

    def clear(self) -> None:
        self._rows.clear()

    def as_json(self) -> list:
        """The cache as a checkpoint keeps it: [input, answer] pairs, least recently used first
        (an input pair as a list of two)."""
        return [[list(item) if isinstance(item, tuple) else item, row.tolist()] for item, row in self._rows.items()]

    def restore(self, saved: list) -> None:
        """The cache `as_json` saved, in place of this one's answers."""
        self.clear()
        for item, row in saved:
            self.put(tuple(item) if isinstance(item, list) else item, np.asarray(row, dtype=np.float64))


def sort_request(inputs: Sequence[Input], cache: Answers | None,
                 result: np.ndarray) -> tuple[dict[Input, int], list[int], int]:
    """A request's inputs sorted: those to run (each at its first place), the places of repeats
    of an input already asked for, and the number of cache hits (their rows written into
    `result`; a lookup marks the entry most recently used)."""
    first = dict(zip(inputs, range(len(inputs))))  # each input at its place when none repeats
    if len(first) == len(inputs) and (cache is None or cache.misses_all(first)):
        return first, [], 0  # the common request: every input new, in one pass in C
    first, repeats, hits = {}, [], 0
    for i, item in enumerate(inputs):
        if item in first:
            repeats.append(i)
            continue
        row = None if cache is None else cache.lookup(item)
        if row is None:
            first[item] = i
        else:
            result[i] = row
            hits += 1
    return first, repeats, hits


def read_alike(first: dict[Input, int], model_inputs: Callable[[list[int]], list]) -> tuple[dict[Input, int],
                                                                                           list[tuple[int, int]]]:
    """Of `first` (inputs to run, at their places), those whose model input (`model_inputs` of
    their places) no earlier one has, and each other's place with the place of that earlier one."""
    runs: dict[Input, int] = {}
    alike: list[tuple[int, int]] = []
    seen: dict = {}
    for (item, place), read in zip(first.items(), model_inputs(list(first.values()))):
        earlier = seen.setdefault(read, place)
        if earlier == place:
            runs[item] = place
        else:
            alike.append((place, earlier))
    return (first if not alike else runs), alike
