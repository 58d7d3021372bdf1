"""Length-grouped batches, the one batching rule of every training loop: shuffle the examples,
sort them by length within groups of `group` batches' worth (so that a batch holds similar
lengths and little padding), cut the batches, shuffle the batches."""

from __future__ import annotations

import random
from collections.abc import Sequence


def grouped_batches(indices: Sequence[int], lengths: Sequence[int], size: int, group: int,
                    rng: random.Random) -> list[list[int]]:
    """One epoch's batches of `size` over `indices` (`lengths[i]` is example i's length)."""
    order = list(indices)
    rng.shuffle(order)
    formed = []
    for start in range(0, len(order), size * group):
        grouped = sorted(order[start : start + size * group], key=lambda i: lengths[i])
        formed += [grouped[k : k + size] for k in range(0, len(grouped), size)]
    rng.shuffle(formed)
    return formed


def batches_per_epoch(examples: int, size: int, group: int) -> int:
    """How many batches `grouped_batches` cuts from `examples` examples."""
    return sum(-(-min(size * group, examples - s) // size) for s in range(0, examples, size * group))
