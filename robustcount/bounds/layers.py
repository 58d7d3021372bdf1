"""Bounds of the layers the word networks share, over boxes of token ids (`slots.SlotBox`): the
embedding followed by a linear map, over each column's candidate ids (`CandidateProjections`),
the output layer as the differences z_gold - z_j (`DifferenceLayer`), and the exact extreme of a
sum of per-column changes under a box's cap (`least_total`). Each is written against a torch
layer (`nn.Embedding`'s table, `nn.Linear`), never a network; `convolution` and `lstm` compose
them, and `networks.bounds_for` says which layers a network is."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from robustcount.bounds.intervals import UNIT_ROUNDOFF, Interval, Rounding, projected_candidates
from robustcount.bounds.slots import SlotBox
from robustcount.errors import RobustcountError
from robustcount.models.families.word_networks import PAD


class CandidateProjections:
    """A linear map applied to the embedding of each column of a box, over the ids the column may
    hold: per output, the lowest and highest value and the largest magnitude
    |weight| @ |embedding(id)| (which bounds its rounding). The products are computed once per
    input (for its `universe` of ids) and reduced over each box's allowed ids in one operation."""

    def __init__(self, table: torch.Tensor, weight: torch.Tensor):
        self.table, self.weight = table, weight
        self._last: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None

    def values(self, universe: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The products and magnitudes for every id of `universe` (columns, K): shapes (columns, K, out)."""
        if self._last is None or not torch.equal(self._last[0], universe):
            values, magnitudes = projected_candidates(self.table, universe.flatten(), self.weight)
            self._last = (universe, values.view(*universe.shape, -1), magnitudes.view(*universe.shape, -1))
        return self._last[1], self._last[2]

    def columns(self, universe: torch.Tensor, allowed: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """For every box (`allowed`: boxes, columns, K) and column: the clean input's value, shape
        (columns, out), and the low, high and magnitude over the allowed ids, (boxes, columns, out)."""
        values, magnitudes = self.values(universe)
        boxes = allowed.shape[0]
        low, high = (values[:, 0].expand(boxes, -1, -1).clone() for _ in range(2))
        magnitude = magnitudes[:, 0].expand(boxes, -1, -1).clone()
        changed = allowed[..., 1:].any(dim=2) | ~allowed[..., 0]  # anything but the clean id alone
        b, t = changed.nonzero(as_tuple=True)
        if len(b):
            mask = allowed[b, t][..., None]
            low[b, t] = torch.where(mask, values[t], torch.inf).amin(dim=1)
            high[b, t] = torch.where(mask, values[t], -torch.inf).amax(dim=1)
            magnitude[b, t] = torch.where(mask, magnitudes[t], 0.0).amax(dim=1)
        return values[:, 0], low, high, magnitude


class DifferenceLayer:
    """The output layer as rows W_gold - W_j: intervals of z_gold - z_j from the pooled features."""

    def __init__(self, layer: nn.Linear, rounding: Rounding):
        self.weight = layer.weight.detach().to(torch.float64)
        self.bias = layer.bias.detach().to(torch.float64)
        self.rounding = rounding

    def rows(self, gold: int) -> tuple[torch.Tensor, torch.Tensor]:
        """W_gold - W_j and b_gold - b_j: shapes (labels, features) and (labels,)."""
        return self.weight[gold] - self.weight, self.bias[gold] - self.bias

    def slack(self, pooled: Interval, gold: int) -> torch.Tensor:
        """The rounding of z_gold - z_j as the model computes it (each logit rounded, then cast to
        float32 for the softmax): shape (boxes, labels), 0 at `gold`."""
        logit_magnitude = pooled.magnitude @ self.weight.abs().T + self.bias.abs()
        pair = logit_magnitude[:, gold : gold + 1] + logit_magnitude
        slack = self.rounding.sum_slack(self.weight.shape[1] + 1, pair) + 2 * UNIT_ROUNDOFF[torch.float32] * pair
        slack[:, gold] = 0.0
        return slack

    def __call__(self, pooled: Interval, gold: int) -> Interval:
        """`pooled`: (boxes, features); returns (boxes, labels), 0 at `gold`."""
        rows, offsets = self.rows(gold)
        center = pooled.center @ rows.T + offsets
        spread = pooled.radius @ rows.abs().T
        slack = self.slack(pooled, gold)
        return Interval(center - spread - slack, center + spread + slack)


def check_words_first(boxes: Sequence[SlotBox], min_columns: int) -> int:
    """The number of words the boxes' input has; refuses boxes of several inputs, padding before a
    word, and columns beyond max(words, min_columns) (the encoding of the input alone)."""
    ids = boxes[0].ids
    words = int((ids != PAD).sum())
    if words == 0 or len(ids) != max(words, min_columns) or bool((ids[:words] == PAD).any()) \
            or any(not torch.equal(box.universe, boxes[0].universe) for box in boxes):
        raise RobustcountError("bounds: boxes of one input, encoded alone (words first, no extra padding)")
    return words


def stacked(boxes: Sequence[SlotBox]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The boxes' shared universe, their allowed ids (boxes, columns, K), free columns (boxes,
    columns) and caps (boxes,; 0 without free columns)."""
    free = torch.stack([box.free for box in boxes])
    caps = torch.tensor([box.cap for box in boxes]) * free.any(dim=1)
    return boxes[0].universe, torch.stack([box.allowed for box in boxes]), free, caps


def least_total(values: torch.Tensor, allowed: torch.Tensor, free: torch.Tensor, caps: torch.Tensor) -> torch.Tensor:
    """The exact minimum over each box of sum_t values[t, c_t] (c_t the candidate column t holds;
    values[:, 0] = 0, the clean id's), per output: `values` (boxes or 1, columns, K, outputs),
    `allowed` (boxes, columns, K), `free` (boxes, columns), `caps` (boxes,); shape (boxes, outputs).
    Columns are independent in a box, so each fixed column adds its own minimum, and the free ones
    (whose clean id is allowed, so their minimum is at most 0) the `cap` most negative of theirs."""
    lowest = torch.where(allowed[..., None], values, torch.inf).amin(dim=2)  # (boxes, columns, outputs)
    return (lowest * ~free[..., None]).sum(dim=1) + capped_sum(lowest * free[..., None], free, caps, lowest=True, dim=1)


def capped_sum(changes: torch.Tensor, free: torch.Tensor, caps: torch.Tensor, lowest: bool, dim: int = 2) -> torch.Tensor:
    """The sum over `dim` of `changes` (zero outside the free entries; `free`'s last dimension is
    `dim`), keeping only the `caps[b]` lowest (or highest) where more free entries than that lie
    along `dim`: the extreme total of at most `cap` changes."""
    total = changes.sum(dim=dim)
    binding = free.sum(dim=-1) > caps.view(-1, *([1] * (free.dim() - 2)))
    if bool(binding.any()):
        where = binding.nonzero(as_tuple=True)
        chosen = changes[where].sort(dim=1, descending=not lowest).values  # (N, along, ...)
        within = torch.arange(chosen.shape[1])[None, :] < caps[where[0]][:, None]
        total[where] = (chosen * within.view(*within.shape, *([1] * (chosen.dim() - 2)))).sum(dim=1)
    return total
