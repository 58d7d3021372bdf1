"""Interval bounds for training, differentiable and without the rounding widening of the sound
bounds (`intervals.Rounding(0.0)`: training needs no proof; certification always goes through
`networks.bounds_for`), written against layer types: an embedding's candidates per column
(`CandidateChanges`), embeddings through convolutions, ReLU and the max over time
(`convolution_max_pool`), through a bidirectional LSTM and the max over time (`lstm_max_pool`), and
the output layer's differences (`output_lower_bounds`). As the sound bounds do, the first
layer over a word's candidates is bounded exactly per output. epsilon scales the box towards the
clean text: a column's bound is the clean value plus epsilon times the candidates' lowest
(highest) change. Certified training (`training.certified`) composes them per network."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from robustcount.bounds.intervals import Interval, Rounding, product, relu, sigmoid, tanh
from robustcount.models.families.word_networks import PAD

NO_WIDENING = Rounding(0.0)
"""Exact arithmetic assumed: the interval layers widen nothing (training needs no soundness)."""


class CandidateChanges:
    """The candidates of a batch's box: for each candidate id (M of them, padding left out) the
    change of its embedding from the clean word's (M, dim), and which (text, column) it belongs to
    (`group`, an index into `texts` and `columns`, the N changeable pairs)."""

    def __init__(self, embedding: nn.Module, ids: torch.Tensor, universe: torch.Tensor):
        self.shape = ids.shape
        text, column, candidate = (universe != ids[..., None]).nonzero(as_tuple=True)
        keys, self.group = torch.unique_consecutive(text * ids.shape[1] + column, return_inverse=True)
        self.texts, self.columns = keys // ids.shape[1], keys % ids.shape[1]
        self.moved = embedding(universe[text, column, candidate]) - embedding(ids[text, column])

    def spread(self, weight: torch.Tensor, epsilon: float) -> tuple[torch.Tensor, torch.Tensor]:
        """epsilon times the lowest and highest change of moved @ weight.T (an output per row of
        `weight`) over each column's candidates and its clean word (change 0): two tensors of shape
        (texts, width, outputs), zero where nothing changes."""
        changes = self.moved @ weight.T
        index = self.group[:, None].expand_as(changes)
        per_column = torch.zeros(len(self.texts), weight.shape[0], dtype=changes.dtype)
        full = (*self.shape, weight.shape[0])
        return tuple(torch.zeros(full, dtype=changes.dtype).index_put(
            (self.texts, self.columns), epsilon * per_column.scatter_reduce(0, index, changes, reduce, include_self=True))
            for reduce in ("amin", "amax"))


def convolution_max_pool(embedding: nn.Module, convolutions: Sequence[nn.Conv1d], ids: torch.Tensor,
                         universe: torch.Tensor, epsilon: float) -> Interval:
    """The interval of the features pooled from `convolutions` over the embedded texts (texts,
    all their filters): each window's pre-activation bounded exactly per filter over each column's
    candidates, then ReLU and the max over the windows within max(words, widest) columns."""
    changes = CandidateChanges(embedding, ids, universe)
    embedded = embedding(ids).transpose(1, 2)
    kept = (ids != PAD).sum(dim=1, keepdim=True).clamp(min=max(c.kernel_size[0] for c in convolutions))
    lows, highs = [], []
    for convolution in convolutions:
        width = convolution.kernel_size[0]
        centre = convolution(embedded)  # (texts, filters, windows)
        filters, windows = centre.shape[1:]
        by_offset = convolution.weight.permute(2, 0, 1).reshape(width * filters, -1)  # row o * filters + f
        falls, rises = (x.view(*ids.shape, width, filters) for x in changes.spread(by_offset, epsilon))
        fall = sum(falls[:, o : o + windows, o] for o in range(width)).transpose(1, 2)
        rise = sum(rises[:, o : o + windows, o] for o in range(width)).transpose(1, 2)
        activated = relu(Interval(centre + fall, centre + rise))
        beyond = (torch.arange(width, windows + width) > kept)[:, None, :]
        lows.append(activated.lo.masked_fill(beyond, -torch.inf).amax(dim=2))
        highs.append(activated.hi.masked_fill(beyond, -torch.inf).amax(dim=2))
    return Interval(torch.cat(lows, dim=1), torch.cat(highs, dim=1))


def lstm_max_pool(embedding: nn.Module, lstm: nn.LSTM, ids: torch.Tensor, universe: torch.Tensor,
                  epsilon: float) -> Interval:
    """The interval of the max over each text's words of both directions' hidden states of a
    bidirectional `lstm` over the embedded texts (texts, 2 * hidden): the input projection bounded
    exactly per gate over each column's candidates, then interval propagation through the cells,
    both directions at once (the backward one over each text's words reversed)."""
    steps, hidden = ids.shape[1], lstm.hidden_size
    changes = CandidateChanges(embedding, ids, universe)
    lengths = (ids != PAD).sum(dim=1, keepdim=True).clamp(min=1)
    time = torch.arange(steps)[None, :]
    backwards = torch.where(time < lengths, lengths - 1 - time, time)  # each text's words reversed, padding kept
    embedded = embedding(ids)
    lows, highs, recurrent = [], [], []
    for suffix in ("", "_reverse"):
        weight = lambda name: getattr(lstm, f"{name}_l0{suffix}")  # noqa: E731
        centre = embedded @ weight("weight_ih").T + weight("bias_ih") + weight("bias_hh")
        falls, rises = changes.spread(weight("weight_ih"), epsilon)
        lows.append(centre + falls)
        highs.append(centre + rises)
        recurrent.append(weight("weight_hh").T)
    index = backwards[..., None].expand_as(lows[1])
    low = torch.stack([lows[0], lows[1].gather(1, index)])  # (directions, texts, steps, 4 * hidden)
    high = torch.stack([highs[0], highs[1].gather(1, index)])
    recurrent = torch.stack(recurrent)  # (directions, hidden, 4 * hidden)
    zeros = torch.zeros(2, ids.shape[0], hidden, dtype=low.dtype)
    h, c, outputs = Interval(zeros, zeros), Interval(zeros, zeros), []
    for low_t, high_t in zip(low.unbind(2), high.unbind(2)):  # unbound once: a step's slice is no full copy
        middle, spread = torch.bmm(h.center, recurrent), torch.bmm(h.radius, recurrent.abs())
        gates = zip((low_t + middle - spread).split(hidden, dim=-1), (high_t + middle + spread).split(hidden, dim=-1))
        i, f, g, o = (Interval(*bounds) for bounds in gates)
        i, f, g, o = (sigmoid(i, NO_WIDENING), sigmoid(f, NO_WIDENING), tanh(g, NO_WIDENING),
                      sigmoid(o, NO_WIDENING))
        c = product(f, c, NO_WIDENING) + product(i, g, NO_WIDENING)
        h = product(o, tanh(c, NO_WIDENING), NO_WIDENING)
        outputs.append(h)
    lo, hi = torch.stack([s.lo for s in outputs], dim=2), torch.stack([s.hi for s in outputs], dim=2)
    index = backwards[..., None].expand_as(lo[1])
    beyond = (time >= lengths)[..., None]
    lo = torch.cat([lo[0], lo[1].gather(1, index)], dim=2).masked_fill(beyond, -torch.inf).amax(dim=1)
    hi = torch.cat([hi[0], hi[1].gather(1, index)], dim=2).masked_fill(beyond, -torch.inf).amax(dim=1)
    return Interval(lo, hi)


def output_lower_bounds(out: nn.Linear, pooled: Interval, targets: torch.Tensor) -> torch.Tensor:
    """Lower bounds of z_gold - z_j through the output layer `out` from the interval of its input
    `pooled` (texts, features), through the rows W_gold - W_j: shape (texts, labels), 0 at gold."""
    weight, bias = out.weight, out.bias
    rows = weight[targets][:, None, :] - weight[None]  # (texts, labels, features)
    offsets = bias[targets][:, None] - bias[None]
    return (torch.einsum("bf,blf->bl", pooled.center, rows) + offsets
            - torch.einsum("bf,blf->bl", pooled.radius, rows.abs()))
