"""Bounds of the zoo's word networks over a box of token ids: for every label j, an interval
holding z_gold - z_j (logits) at every point of the box, as the model computes it.

`WordCNN` (cnn-rt, the word-cnn family), `CNNInput`: the three convolutions read as one of width
5 (narrower filters' weights padded with zeros). What the boxes of one input share is computed
once: the windows no changeable column reaches are the clean input's (their max of ReLU per
filter a constant), and each changeable column's change per candidate, offset and filter. For a
box, each window a changeable column reaches is the clean pre-activation plus its columns'
changes, bounded per filter exactly over each column's allowed ids, and with the box's cap (at
most k free columns changed) only the k largest rises (falls) within the window count: exact per
filter. Then ReLU, the max over the windows the network keeps (those within its max(n, 5)
columns), and the linear layer, bounded for each difference row W_gold - W_j at once. The lower
bound is also computed CROWN-style, the output layer back-substituted through the max and the
ReLU to the embeddings, with the filters it keeps linear chosen per box, and the larger of the
two is kept.

`WordLSTM` (lstm-rt, the word-lstm family): affine forms (`affine`) through both directions of
the LSTM over the n words (as the packed sequence runs): every state is an affine function of the
point's candidate choices (one coefficient per changed column and candidate id, exact through
W_ih and W_hh) and of noise symbols for what the relaxations of sigmoid, tanh and the products
leave, and for the float32 rounding of every operation. The rounding's symbols go through the
recurrence with W_hh's signs, so they are not amplified by |W_hh| at every step as intervals are;
each direction keeps at most NOISE_BUDGET symbols between steps (the smallest boxed). A box's
forward pass starts at its first changed column (before it, its states are the clean input's,
computed once per batch), the backward pass at its last. The max over time: a unit's state at
the clean input's peak step bounds the max from below (affine), the states' upper bounds bound it
from above; the output rows W_gold - W_j act on these, minimised exactly over each box's choices
(the cap included), and the interval of the pooled features bounds it too (the tighter kept).

Any other module is refused (`bounds_for`): attention, layer norm and the rest are not bounded.
Every interval is widened for the model's rounding (`intervals`); the final layer's also for
`TorchClassifier` casting logits to float32 before its softmax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from robustcount.errors import RobustcountError
from robustcount.models.families.word_networks import PAD, GloveWords, WordCNN, WordLSTM, WIDTHS
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.proofs.bounds import affine
from robustcount.proofs.bounds.affine import Affine, Choices
from robustcount.proofs.bounds.intervals import (
    UNIT_ROUNDOFF,
    Interval,
    Rounding,
    projected_candidates,
)
from robustcount.proofs.bounds.slots import SlotBox

SUPPORTED = "the word-cnn and word-lstm families (cnn-rt, lstm-rt)"

NOISE_BUDGET = 600
"""The most noise symbols an LSTM direction keeps per box between steps (see `_reduced`; None keeps
all). Chosen on demo:test examples 0-3: 600 keeps single points 0.03 to 0.2 wide in logit
difference; the cost grows with it (docs/proofs/bounds.md, measurements)."""


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

    def __init__(self, layer: torch.nn.Linear, rounding: Rounding):
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


def _check_words_first(boxes: Sequence[SlotBox], min_columns: int) -> int:
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


class WordCNNBounds:
    """Bounds of a `WordCNN` (see the module docstring)."""

    def __init__(self, module: WordCNN, rounding: Rounding):
        self.table = module.embedding.weight.detach()
        width = max(WIDTHS)
        weights, biases, widths = [], [], []
        for w, convolution in zip(WIDTHS, module.convolutions):
            weight = convolution.weight.detach().to(torch.float64)  # (filters, dim, w)
            weights.append(torch.nn.functional.pad(weight, (0, width - w)))
            biases.append(convolution.bias.detach().to(torch.float64))
            widths.append(torch.full((weight.shape[0],), w))
        self.weight, self.bias, self.widths = torch.cat(weights), torch.cat(biases), torch.cat(widths)
        """All filters as one convolution of width max(WIDTHS) (zero weights past a filter's own
        width), their biases and their own widths."""
        dim = self.weight.shape[1]
        self.gamma = torch.tensor([rounding.sum_slack(dim * int(w) + 1, torch.ones(())) for w in self.widths],
                                  dtype=torch.float64)
        """Each filter's rounding slack per unit of magnitude (its sum of dim * width products and a bias)."""
        self.out = DifferenceLayer(module.out, rounding)
        self._last: CNNInput | None = None

    def differences(self, boxes: Sequence[SlotBox], gold: int) -> Interval:
        """Intervals of z_gold - z_j for each box (of one input): shape (boxes, labels)."""
        intervals, linear = self.both(boxes, gold)
        return Interval(torch.maximum(intervals.lo, linear), intervals.hi)

    def both(self, boxes: Sequence[SlotBox], gold: int) -> tuple[Interval, torch.Tensor]:
        """The interval bound and the back-substituted lower bound, each sound alone."""
        _check_words_first(boxes, max(WIDTHS))
        universe, allowed, free, caps = stacked(boxes)
        return self.prepared(universe, gold).bounds(allowed, free, caps)

    def prepared(self, universe: torch.Tensor, gold: int) -> CNNInput:
        """What boxes of the input with this `universe` share (the last one kept)."""
        last = self._last
        if last is None or last.gold != gold or not torch.equal(last.universe, universe):
            self._last = last = CNNInput(self, universe, gold)
        return last


class CNNInput:
    """A `WordCNN`'s bounds on boxes of one input, with what its boxes share computed once.

    The three convolutions are read as one of width max(WIDTHS) (the narrower filters' weights
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

    def __init__(self, bounds: WordCNNBounds, universe: torch.Tensor, gold: int):
        self.universe, self.gold, self.out = universe, gold, bounds.out
        ids, width = universe[:, 0], max(WIDTHS)
        columns, candidates = universe.shape
        weight, bias = bounds.weight, bounds.bias  # (filters, dim, width), (filters,)
        filters = len(bias)
        self.changeable = (universe != ids[:, None]).any(dim=1).nonzero().flatten()
        m = len(self.changeable)
        by_offset = weight.permute(2, 0, 1).reshape(width * filters, -1)  # row o * filters + f
        values, magnitudes = (x.view(columns, width, filters) for x in projected_candidates(bounds.table, ids, by_offset))
        beyond = torch.zeros(width - 1, width, filters, dtype=torch.float64)  # past the end: only zero weights reach
        values, magnitudes = torch.cat([values, beyond]), torch.cat([magnitudes, beyond])
        count = columns - min(WIDTHS) + 1
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
        lo = (low * fixed).sum(dim=2) + _capped(low * ~fixed, is_free, caps, lowest=True)
        hi = (high * fixed).sum(dim=2) + _capped(high * ~fixed, is_free, caps, lowest=False)
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


def least_total(values: torch.Tensor, allowed: torch.Tensor, free: torch.Tensor, caps: torch.Tensor) -> torch.Tensor:
    """The exact minimum over each box of sum_t values[t, c_t] (c_t the candidate column t holds;
    values[:, 0] = 0, the clean id's), per output: `values` (boxes or 1, columns, K, outputs),
    `allowed` (boxes, columns, K), `free` (boxes, columns), `caps` (boxes,); shape (boxes, outputs).
    Columns are independent in a box, so each fixed column adds its own minimum, and the free ones
    (whose clean id is allowed, so their minimum is at most 0) the `cap` most negative of theirs."""
    lowest = torch.where(allowed[..., None], values, torch.inf).amin(dim=2)  # (boxes, columns, outputs)
    return (lowest * ~free[..., None]).sum(dim=1) + _capped(lowest * free[..., None], free, caps, lowest=True, dim=1)


def _capped(changes: torch.Tensor, free: torch.Tensor, caps: torch.Tensor, lowest: bool, dim: int = 2) -> torch.Tensor:
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


class WordLSTMBounds:
    """Bounds of a `WordLSTM` (see the module docstring)."""

    def __init__(self, module: WordLSTM, rounding: Rounding, budget: int | None = NOISE_BUDGET):
        lstm = module.lstm
        if lstm.num_layers != 1 or not lstm.bidirectional or not lstm.batch_first or lstm.proj_size:
            raise RobustcountError("bounds: a word-lstm has one bidirectional batch-first layer")
        table = module.embedding.weight.detach()
        self.table = table.to(torch.float64)
        self.rounding, self.budget = rounding, budget
        self.hidden = lstm.hidden_size
        self.directions = []
        for suffix in ("", "_reverse"):
            def weight(name, suffix=suffix):
                return getattr(lstm, f"{name}_l0{suffix}").detach().to(torch.float64)
            self.directions.append(_Direction(CandidateProjections(table, weight("weight_ih")), weight("weight_hh"),
                                              weight("bias_ih") + weight("bias_hh"),
                                              weight("bias_ih").abs() + weight("bias_hh").abs(), lstm.input_size))
        self.out = DifferenceLayer(module.out, rounding)

    def differences(self, boxes: Sequence[SlotBox], gold: int) -> Interval:
        """Intervals of z_gold - z_j for each box (of one input): shape (boxes, labels)."""
        words = _check_words_first(boxes, 1)
        universe, allowed, free, caps = stacked(boxes)
        choices = Choices.of(allowed, free, caps)
        rows, offsets = self.out.rows(gold)
        orders = (range(words), range(words - 1, -1, -1))
        labels = rows.shape[0]
        lower = upper = offsets.expand(len(boxes), -1)
        pooled, forms = [], []
        for k, (direction, order) in enumerate(zip(self.directions, orders)):
            part = rows[:, k * self.hidden : (k + 1) * self.hidden]
            functional = torch.cat([part.clamp(min=0), part.clamp(max=0)]).T  # (hidden, 2 labels)
            peaks = self._clean_peaks(direction, universe[:, 0], order)
            pool, form = self._scan(direction, order, universe, allowed, choices, peaks, functional)
            pooled.append(pool)
            forms.append(form)
            lower = lower + pool.hi @ part.clamp(max=0).T
            upper = upper + pool.hi @ part.clamp(min=0).T
        form = _summed(forms)
        spread = sum(f.spread() for f in forms)
        lower = lower + form.center[:, :labels] + choices.least(form.choices[..., :labels]) - spread[:, :labels]
        upper = upper + form.center[:, labels:] + choices.most(form.choices[..., labels:]) + spread[:, labels:]
        pooled = Interval(torch.cat([p.lo for p in pooled], dim=1), torch.cat([p.hi for p in pooled], dim=1))
        intervals = self.out(pooled, gold)
        slack = self.out.slack(pooled, gold)
        return Interval(torch.maximum(intervals.lo, lower - slack), torch.minimum(intervals.hi, upper + slack))

    def _clean_peaks(self, direction: _Direction, ids: torch.Tensor, order) -> torch.Tensor:
        """For each hidden unit, the step (in text order) where the clean input's state peaks."""
        weight_ih = direction.projections.weight.to(torch.float64)
        h = c = torch.zeros(self.hidden, dtype=torch.float64)
        states = {}
        for t in order:
            gates = weight_ih @ self.table[ids[t]] + direction.recurrent @ h + direction.bias
            i, f, g, o = gates.split(self.hidden)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            states[t] = h
        return torch.stack([states[t] for t in sorted(states)]).argmax(dim=0)

    def _scan(self, direction: _Direction, order, universe, allowed, choices: Choices, peaks, functional):
        """One direction over the words in `order`: the interval of the max over time of its
        states (boxes, hidden), and the affine form of `functional` (hidden, outputs) applied to
        each unit's state at its clean peak step (boxes, outputs).

        The clean input runs as one extra row from the start; a box joins as a copy of it at the
        first step that reaches a column it changes (before that, its states are the clean ones)."""
        rounding, hidden = self.rounding, self.hidden
        values, _ = direction.projections.values(universe)  # (columns, K, 4 hidden)
        boxes, slots, candidates = choices.allowed.shape
        clean_only = torch.zeros_like(allowed[:1])
        clean_only[..., 0] = True
        _, _, _, magnitude = direction.projections.columns(universe, torch.cat([allowed, clean_only]))
        step_of = torch.full((len(universe) + 1,), len(order))
        step_of[torch.tensor(list(order))] = torch.arange(len(order))
        joins = step_of[choices.column].amin(dim=1)  # an unused slot's column -1 maps to len(order): never
        live = torch.tensor([boxes])  # the clean row
        zero = torch.zeros(1, hidden, dtype=torch.float64)
        h = c = Affine.constant(zero, slots, candidates)
        form = Affine.constant(torch.zeros(1, functional.shape[1], dtype=torch.float64), slots, candidates)
        low = high = torch.full((1, hidden), -torch.inf, dtype=torch.float64)
        recurrent_abs = direction.recurrent.abs()
        for step, t in enumerate(order):
            joining = (joins == step).nonzero().flatten()
            if len(joining):
                copies = torch.zeros(len(joining), dtype=torch.long)  # row 0 is the clean row
                h, c, form = (Affine.stacked([x, x.rows(copies)]) for x in (h, c, form))
                low, high = torch.cat([low, low[copies]]), torch.cat([high, high[copies]])
                live = torch.cat([live, joining])
            rows = choices.rows(live)
            span = h.bounds(rows)
            pre = h.mapped(direction.recurrent)
            injected = rows.at(t).to(torch.float64)[..., None, None] * (values[t] - values[t, :1])[None, None]
            total = magnitude[live, t] + span.magnitude @ recurrent_abs.T + direction.bias_magnitude
            pre = Affine(pre.center + values[t, 0] + direction.bias, pre.choices + injected, pre.noise,
                         rounding.sum_slack(direction.inputs + hidden + 3, total))
            i, f, g, o = (pre[k * hidden : (k + 1) * hidden] for k in range(4))
            i, f, g, o = (affine.sigmoid(i, rows, rounding), affine.sigmoid(f, rows, rounding),
                          affine.tanh(g, rows, rounding), affine.sigmoid(o, rows, rounding))
            c = affine.product(f, c, rows, rounding) + affine.product(i, g, rows, rounding)
            c = c.widened(rounding.elementwise_slack(c.bounds(rows).magnitude)).promoted()
            h = affine.product(o.padded(hidden), affine.tanh(c, rows, rounding), rows, rounding).promoted()
            c = c.padded(hidden)
            form = form.padded(2 * hidden)
            at_peak = functional * (peaks == t)[:, None]
            form = form + Affine(h.center @ at_peak, h.choices @ at_peak, h.noise @ at_peak,
                                 torch.zeros_like(form.fresh))
            if self.budget is not None and h.noise.shape[1] > self.budget:
                h, c, form = _reduced(h, c, form, self.budget)
            span = h.bounds(rows)
            low, high = torch.maximum(low, span.lo), torch.maximum(high, span.hi)
        row = torch.zeros(boxes + 1, dtype=torch.long)
        row[live] = torch.arange(len(live))
        row = row[:boxes]  # a box that never joined changes nothing here: the clean row 0
        return Interval(low[row], high[row]), form.rows(row)


@dataclass(frozen=True)
class _Direction:
    projections: CandidateProjections
    recurrent: torch.Tensor
    bias: torch.Tensor
    bias_magnitude: torch.Tensor
    inputs: int


def _summed(forms: list[Affine]) -> Affine:
    """The sum of forms over disjoint noise symbols (their choices add, their noise rows stack)."""
    return Affine(sum(f.center for f in forms), sum(f.choices for f in forms), torch.cat([f.noise for f in forms], dim=1),
                  sum(f.fresh for f in forms))


def _reduced(h: Affine, c: Affine, form: Affine, budget: int) -> tuple[Affine, Affine, Affine]:
    """Keep the `budget` noise symbols of largest weight in (h, c); box the others: their
    contributions to each coordinate of h, c and the functional become fresh radii (then new
    symbols of h and c): a box containing what they spanned, so sound, looser."""
    weight = h.noise.abs().sum(dim=2) + c.noise.abs().sum(dim=2)  # (boxes, S)
    keep = weight.topk(budget - 2 * h.center.shape[1], dim=1).indices.sort(dim=1).values
    drop = torch.ones_like(weight, dtype=torch.bool).scatter(1, keep, False)
    def split(x: Affine) -> Affine:
        kept = torch.gather(x.noise, 1, keep[..., None].expand(-1, -1, x.noise.shape[2]))
        boxed = (x.noise.abs() * drop[..., None]).sum(dim=1)
        return Affine(x.center, x.choices, kept, x.fresh + boxed)
    h, c, form = split(h), split(c), split(form)
    hidden = h.center.shape[1]
    h, c = h.promoted().padded(hidden), c.padded(hidden).promoted()
    return h, c, form.padded(2 * hidden)


def bounds_for(classifier) -> WordCNNBounds | WordLSTMBounds:
    """The bounds of `classifier`'s network, or a one-line refusal saying what is supported."""
    module = getattr(classifier, "module", None)
    if not isinstance(classifier, TorchClassifier) or not isinstance(module, (WordCNN, WordLSTM)):
        raise RobustcountError(f"bounds support {SUPPORTED}; {getattr(classifier, 'name', classifier)!r} is "
                               f"a {type(module if module is not None else classifier).__name__} "
                               "(attention, layer norm and other layers are not bounded)")
    if not isinstance(classifier.tokenizer, GloveWords):
        raise RobustcountError(f"bounds support {SUPPORTED} with their GloVe word tokenizer")
    if module.training:
        raise RobustcountError("bounds: the network is in training mode (dropout on)")
    rounding = Rounding.of(classifier.dtype, classifier.device)
    return (WordCNNBounds if isinstance(module, WordCNN) else WordLSTMBounds)(module, rounding)
