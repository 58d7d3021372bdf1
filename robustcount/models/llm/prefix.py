"""Reusing the key/value cache of what a batch's prompts share.

The points of a space differ from their original in a few words, so their prompts share long token
prefixes: the fixed part of the prompt before the text, and the text up to the first changed word.
A causal LM's keys and values at a position depend only on the tokens up to it, so the cache of an
`Anchor` sequence serves, up to floating-point noise, every prompt whose first p tokens are the
anchor's (compared as token ids: a change that alters the tokens before it is seen as such).

`choose_anchor` picks, for a batch, the heavy path of the batch's token trie (at each position,
the token most of the rows still on the path have), and keeps the current anchor unless the new
one saves more tokens than it costs to compute.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class Anchor:
    """A token sequence and its cache: per layer, keys and values of shape (1, heads, length, width)."""

    ids: np.ndarray
    layers: list[tuple[torch.Tensor, torch.Tensor]]


def common_prefix(row: np.ndarray, anchor: np.ndarray) -> int:
    """How many first tokens `row` and `anchor` share."""
    n = min(len(row), len(anchor))
    differ = np.flatnonzero(row[:n] != anchor[:n])
    return int(differ[0]) if len(differ) else n


def heavy_path(rows: Sequence[np.ndarray]) -> np.ndarray:
    """The longest sequence such that at each position it follows the token most of the rows
    agreeing with it so far have (ties: the smallest id), while at least two rows agree."""
    width = max(len(row) for row in rows)
    table = np.full((len(rows), width), -1, dtype=np.int64)
    for i, row in enumerate(rows):
        table[i, : len(row)] = row
    on_path = np.ones(len(rows), dtype=bool)
    path = []
    for position in range(width):
        tokens = table[on_path, position]
        tokens = tokens[tokens >= 0]
        if len(tokens) < 2:
            break
        values, counts = np.unique(tokens, return_counts=True)
        token = values[np.argmax(counts)]
        on_path &= table[:, position] == token
        if on_path.sum() < 2:
            break
        path.append(token)
    return np.asarray(path, dtype=np.int64)


def saved_tokens(rows: Sequence[np.ndarray], keep: Sequence[int], anchor: np.ndarray | None) -> int:
    """The tokens of `rows` the cache of `anchor` spares (each row still runs its last `keep` tokens)."""
    if anchor is None or not len(anchor):
        return 0
    return sum(min(common_prefix(row, anchor), len(row) - k) for row, k in zip(rows, keep))


def choose_anchor(rows: Sequence[np.ndarray], keep: Sequence[int], current: np.ndarray | None) -> np.ndarray | None:
    """The anchor for a batch: the batch's heavy path when it saves more tokens than the current
    anchor does plus its own length (it must be computed once), else None (keep the current one)."""
    if len(rows) < 2:
        return None
    path = heavy_path(rows)
    if saved_tokens(rows, keep, path) - len(path) > saved_tokens(rows, keep, current):
        return path
    return None


def starts(rows: Sequence[np.ndarray], keep: Sequence[int], anchor: Anchor | None) -> list[int]:
    """Where each row's computation starts: after its tokens shared with the anchor, leaving its
    last `keep` tokens to run."""
    if anchor is None:
        return [0] * len(rows)
    return [max(0, min(common_prefix(row, anchor.ids), len(row) - k)) for row, k in zip(rows, keep)]


GROUP_COST = 32
"""What one more forward call costs, in token positions, when `groups` weighs padding against calls."""


def groups(lengths: Sequence[int], cost: int = GROUP_COST) -> list[list[int]]:
    """The rows (indices into `lengths`) cut into forward calls of similar lengths, the cut that
    minimises the padded positions plus `cost` per call (rows sorted by length; exact, by dynamic
    programming)."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    best = [0] + [None] * len(order)  # best[j]: the cheapest cut of the j shortest rows
    cut = [0] * (len(order) + 1)
    for j in range(1, len(order) + 1):
        width = lengths[order[j - 1]]
        best[j], cut[j] = min((best[i] + (j - i) * width + cost, i) for i in range(j))
    found, j = [], len(order)
    while j:
        found.append(order[cut[j]:j])
        j = cut[j]
    return found[::-1]
