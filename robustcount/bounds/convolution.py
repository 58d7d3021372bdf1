"""Bounds of a convolutional text network's layers over boxes of token ids: an embedding, 1-d
convolutions of any widths over it (no padding, stride 1), ReLU, the max over the windows the
network keeps (those within max(words, widest) columns), and a linear output layer: for every
label j an interval holding z_gold - z_j at every point of the box, as the model computes it
(the word CNN, cnn-rt: `networks.bounds_for`).

The convolutions are read as one of the widest one's width (narrower filters' weights padded with
zeros). What the boxes of one input share is computed once (`ConvolutionInput`): the windows no
changeable column reaches are the clean input's (their max of ReLU per filter a constant), and each
changeable column's change per candidate, offset and filter. For a box, each window a changeable
column reaches is the clean pre-activation plus its columns' changes, bounded per filter exactly
over each column's allowed ids, and with the box's cap (at most k free columns changed) only the k
largest rises (falls) within the window count: exact per filter. Then ReLU, the max over the
windows, and the linear layer, bounded for each difference row W_gold - W_j at once. The lower
bound is also computed CROWN-style, the output layer back-substituted through the max and the ReLU
to the embeddings, with the filters it keeps linear chosen per box, and the larger of the two is
kept. Every interval is widened for the model's rounding (`intervals`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from robustcount.bounds.intervals import Interval, Rounding, projected_candidates
from robustcount.bounds.layers import DifferenceLayer, capped_sum, check_words_first, least_total, stacked
from robustcount.bounds.slots import SlotBox


class ConvolutionBounds:
    """Bounds of embeddings, convolutions, ReLU, max over time and a linear layer (see the module
    docstring)."""

    def __init__(self, embedding: nn.Embedding, convolutions: Sequence[nn.Conv1d], out: nn.Linear, rounding: Rounding):
        self.table = embedding.weight.detach()
        self.width = width = max(c.kernel_size[0] for c in convolutions)
        self.narrowest = min(c.kernel_size[0] for c in convolutions)
        weights, biases, widths = [], [], []
        for convolution in convolutions:
            weight = convolution.weight.detach().to(torch.float64)  # (filters, dim, w)
            w = weight.shape[2]
            weights.append(torch.nn.functional.pad(weight, (0, width - w)))
            biases.append(convolution.bias.detach().to(torch.float64))
            widths.append(torch.full((weight.shape[0],), w))
        self.weight, self.bias, self.widths = torch.cat(weights), torch.cat(biases), torch.cat(widths)
        """All filters as one convolution of the widest's width (zero weights past a filter's own
        width), their biases and their own widths."""
        dim = self.weight.shape[1]
        self.gamma = torch.tensor([rounding.sum_slack(dim * int(w) + 1, torch.ones(())) for w in self.widths],
                                  dtype=torch.float64)
        """Each filter's rounding slack per unit of magnitude (its sum of dim * width products and a bias)."""
        self.out = DifferenceLayer(out, rounding)
        self._last: ConvolutionInput | None = None

    def differences(self, boxes: Sequence[SlotBox], gold: int) -> Interval:
        """Intervals of z_gold - z_j for each box (of one input): shape (boxes, labels)."""
        intervals, linear = self.both(boxes, gold)
        return Interval(torch.maximum(intervals.lo, linear), intervals.hi)

    def both(self, boxes: Sequence[SlotBox], gold: int) -> tuple[Interval, torch.Tensor]:
        """The interval bound and the back-substituted lower bound, each sound alone."""
        check_words_first(boxes, self.width)
        universe, allowed, free, caps = stacked(boxes)
        return self.prepared(universe, gold).bounds(allowed, free, caps)

    def prepared(self, universe: torch.Tensor, gold: int) -> ConvolutionInput:
        """What boxes of the input with this `universe` share (the last one kept)."""
        last = self._last
        if last is None or last.gold != gold or not torch.equal(last.universe, universe):
            self._last = last = ConvolutionInput(self, universe, gold)
        return last


class ConvolutionInput:
    """`ConvolutionBounds` on boxes of one input, with what its boxes share computed once.

    The convolutions are read as one of the widest one's width (the narrower filters' weights
    padded with zeros, their windows past the text's end left out of their max). Only the windows
    that touch a changeable column (one whose candidate ids are not all the clean one) depend on
    the box; the others are the clean input's, their max of ReLU per filter a constant computed
    here. For a box, each touched window's pre-activation is the clean one plus, per column, the
    change its candidate makes (`delta`), bounded per filter exactly: the fixed columns' lowest
    (highest) change over their allowed ids, the free columns' with the cap (only the `cap`
    largest falls or rises within the window count when more free columns lie in it). ReLU and the
    max over windows are exact per filter.

    The lower bound is also back-substituted (CROWN-style) through the output layer: with rows
    r = W_gold - W_j, z_gold - z_j = sum_f r_f pooled_f + (b_gold - b_j), and pooled_f =
    max_s ReLU(pre_{f,s}) >= pre_{f,s*} at the window s* where filter f peaks on the clean input.
    For filters active there (whose s* a changeable column touches) with r_f > 0, the term
    r_f pre_{f,s*} is kept linear in the columns' candidates, and these terms are minimised jointly
    over the box (`least_total`: per column exactly, the cap over the free columns' largest falls):
    the filters' worst cases need not be at one choice, which the intervals assume. Every other
    filter contributes r_f times its interval's lower (r_f > 0) or upper (r_f < 0) end. Two choices
    of the filters kept, the larger bound taken: every active one, and per box only those whose
    own interval bound is no better than their peak window's (a filter whose max lies elsewhere
    then enters by its interval). Any choice is sound. The model's rounding of each kept
    pre-activation (twice its slack) and of the output layer is subtracted."""

    def __init__(self, bounds: ConvolutionBounds, universe: torch.Tensor, gold: int):
        self.universe, self.gold, self.out = universe, gold, bounds.out
        ids, width = universe[:, 0], bounds.width
        columns, candidates = universe.shape
        weight, bias = bounds.weight, bounds.bias  # (filters, dim, width), (filters,)
        filters = len(bias)
        self.changeable = (universe != ids[:, None]).any(dim=1).nonzero().flatten()
        m = len(self.changeable)
        by_offset = weight.permute(2, 0, 1).reshape(width * filters, -1)  # row o * filters + f
        values, magnitudes = (x.view(columns, width, filters) for x in projected_candidates(bounds.table, ids, by_offset))
        beyond = torch.zeros(width - 1, width, filters, dtype=torch.float64)  # past the end: only zero weights reach
        values, magnitudes = torch.cat([values, beyond]), torch.cat([magnitudes, beyond])
        count = columns - bounds.narrowest + 1
        starts = torch.arange(count)
        self.valid = starts[:, None] <= columns - bounds.widths[None, :]  # (windows, filters)
        clean = sum(values[o : o + count, o] for o in range(width)) + bias
        magnitude = sum(magnitudes[o : o + count, o] for o in range(width)) + bias.abs()
        self.gamma = bounds.gamma  # (filters,): twice gamma of each filter's number of terms
        clean_slack = self.gamma * magnitude
        reach = starts[:, None] + torch.arange(width)[None, :]
        slot_of = torch.full((columns + width,), m)
        slot_of[self.changeable] = torch.arange(m)
        slot = slot_of[reach]  # (windows, width): the changeable column each offset reads, m for none
        is_touched = (slot < m).any(dim=1)
        untouched = self.valid & ~is_touched[:, None]
        self.rest = Interval(torch.where(untouched, (clean - clean_slack).clamp(min=0), -torch.inf).amax(dim=0),
                             torch.where(untouched, (clean + clean_slack).clamp(min=0), -torch.inf).amax(dim=0))
        changed, changed_magnitude = (x.view(m, candidates, width, filters) for x in projected_candidates(
            bounds.table, universe[self.changeable].flatten(), by_offset))
        zero = torch.zeros(1, candidates, width, filters, dtype=torch.float64)
        self.delta = torch.cat([changed - changed[:, :1], zero])  # (m + 1, K, width, filters), slot m zero
        self.delta_magnitude = torch.cat([changed_magnitude - changed_magnitude[:, :1], zero])
        self.touched = is_touched.nonzero().flatten()
        self.slot, self.offsets = slot[self.touched], torch.arange(width)[None, :]
        self.clean, self.magnitude = clean[self.touched], magnitude[self.touched]
        self.touched_valid = self.valid[self.touched]
        self.rows, self.row_offsets = bounds.out.rows(gold)
        # the back-substitution: each filter's clean peak window s*, and each candidate's change to it
        star = clean.masked_fill(~self.valid, -torch.inf).argmax(dim=0)
        every = torch.arange(filters)
        where = torch.full((count,), -1)
        where[self.touched] = torch.arange(len(self.touched))
        self.star_at = where[star]  # its row among the touched windows, -1 if untouched
        self.star_clean, self.star_clean_slack = clean[star, every], clean_slack[star, every]
        self.active = (self.star_clean > 0) & (self.star_at >= 0)
        offset = self.changeable[:, None] - star[None, :]  # (m, filters)
        inside = (offset >= 0) & (offset < width)
        picked = torch.gather(self.delta[:m], 2, offset.clamp(0, width - 1)[:, None, None, :].expand(-1, candidates, 1, -1))
        self.star_delta = torch.where(inside[:, None, :], picked[:, :, 0], 0.0)  # (m, K, filters)
        self.positive = self.rows.clamp(min=0)  # (labels, filters)
        self.every_values = torch.einsum("lf,ckf->ckl", self.positive * self.active, self.star_delta)

    def bounds(self, allowed: torch.Tensor, free: torch.Tensor, caps: torch.Tensor) -> tuple[Interval, torch.Tensor]:
        """The interval bound of z_gold - z_j (boxes, labels) and the back-substituted lower bound
        (boxes, labels) for boxes given as `stacked` gives them."""
        allowed, free = allowed.index_select(1, self.changeable), free.index_select(1, self.changeable)
        if bool((caps == 0).any()):  # free columns no change may reach: their clean id alone
            frozen = free & (caps == 0)[:, None]
            allowed = torch.where(frozen[..., None], torch.arange(allowed.shape[2]) == 0, allowed)
            free = free & ~frozen
        pooled, star_low, star_slack = self._pooled(allowed, free, caps)
        return self.out(pooled, self.gold), self._linear(allowed, free, caps, pooled, star_low, star_slack)

    def _pooled(self, allowed, free, caps) -> tuple[Interval, torch.Tensor, torch.Tensor]:
        """The max over windows of ReLU(pre-activation) per box and filter, and the lower end and
        the rounding slack of each filter's peak-window pre-activation (all (boxes, filters))."""
        boxes = allowed.shape[0]
        if len(self.touched) == 0:
            expand = [boxes, -1]
            return (Interval(self.rest.lo.expand(*expand), self.rest.hi.expand(*expand)),
                    (self.star_clean - self.star_clean_slack).expand(*expand), self.star_clean_slack.expand(*expand))
        pad = torch.zeros(boxes, 1, dtype=torch.bool)
        # each column's lowest and highest change and largest magnitude over its allowed ids, one
        # candidate at a time (a tensor of all candidates at once is large enough to be slow)
        mask = torch.cat([allowed, pad[:, :, None].expand(-1, -1, allowed.shape[2])], dim=1)[..., None, None]
        low = high = grown = None
        for k in range(allowed.shape[2]):
            ids = [torch.where(mask[:, :, k], x[:, k], fill) for x, fill in
                   ((self.delta, torch.inf), (self.delta, -torch.inf), (self.delta_magnitude, -torch.inf))]
            low, high, grown = ids if low is None else (torch.minimum(low, ids[0]), torch.maximum(high, ids[1]),
                                                        torch.maximum(grown, ids[2]))
        low[:, -1], high[:, -1], grown[:, -1] = 0.0, 0.0, 0.0  # the slot of no changeable column
        reads = (self.slot * self.slot.shape[1] + self.offsets).flatten()  # (S * width,): slot, offset
        low, high, grown = (x.flatten(1, 2).index_select(1, reads).view(boxes, *self.slot.shape, -1)
                            for x in (low, high, grown))  # (boxes, S, width, filters)
        is_free = torch.cat([free, pad], dim=1).index_select(1, self.slot.flatten()).view(boxes, *self.slot.shape)
        fixed = ~is_free[..., None]
        lo = (low * fixed).sum(dim=2) + capped_sum(low * ~fixed, is_free, caps, lowest=True)
        hi = (high * fixed).sum(dim=2) + capped_sum(high * ~fixed, is_free, caps, lowest=False)
        slack = self.gamma * (self.magnitude + grown.sum(dim=2))
        lo, hi = self.clean + lo - slack, self.clean + hi + slack  # (boxes, S, filters)
        pooled = Interval(torch.maximum(self.rest.lo, torch.where(self.touched_valid, lo.clamp(min=0), 0.0).amax(dim=1)),
                          torch.maximum(self.rest.hi, torch.where(self.touched_valid, hi.clamp(min=0), 0.0).amax(dim=1)))
        at = self.star_at.clamp(min=0)[None, None, :].expand(boxes, 1, -1)
        touched_star = self.star_at >= 0
        star_slack = torch.where(touched_star, torch.gather(slack, 1, at)[:, 0], self.star_clean_slack)
        star_low = torch.where(touched_star, torch.gather(lo, 1, at)[:, 0], self.star_clean - self.star_clean_slack)
        return pooled, star_low, star_slack

    def _linear(self, allowed, free, caps, pooled: Interval, star_low, star_slack) -> torch.Tensor:
        """The back-substituted lower bound (see the class docstring): shape (boxes, labels), the
        larger of two choices of the filters kept linear: every active one, and only those whose
        interval bound is no better than their peak window's (per box). Both in one pass: the
        label rows twice over."""
        boxes, labels = allowed.shape[0], len(self.row_offsets)
        every = (self.positive * self.active).expand(boxes, -1, -1)  # (boxes, labels, filters)
        chosen = self.positive[None] * (self.active & (pooled.lo <= star_low))[:, None, :]
        values = torch.cat([self.every_values.expand(boxes, -1, -1, -1),
                            torch.einsum("blf,ckf->bckl", chosen, self.star_delta)], dim=3)  # (boxes, m, K, 2 labels)
        lower = self._linear_with(torch.cat([every, chosen], dim=1), values, allowed, free, caps, pooled, star_slack)
        return torch.maximum(lower[:, :labels], lower[:, labels:]) - self.out.slack(pooled, self.gold)

    def _linear_with(self, kept, values, allowed, free, caps, pooled: Interval, star_slack) -> torch.Tensor:
        """The lower bound with the filters `kept` linear, before the output layer's rounding:
        `kept` (boxes, outputs, filters) the coefficients of rows r (the label rows, repeated
        along outputs), `values` their changes per column and candidate (boxes, m, K, outputs)."""
        repeat = kept.shape[1] // len(self.row_offsets)
        rows, offsets = self.rows.repeat(repeat, 1), self.row_offsets.repeat(repeat)
        positive = rows.clamp(min=0)
        lower = offsets + pooled.hi @ rows.clamp(max=0).T + ((positive[None] - kept) * pooled.lo[:, None, :]).sum(dim=2) \
            + (kept * (self.star_clean - 2 * star_slack)[:, None, :]).sum(dim=2)
        if len(self.changeable):
            lower = lower + least_total(values, allowed, free, caps)
        return lower
