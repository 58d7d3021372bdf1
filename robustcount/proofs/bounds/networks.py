"""Bounds of the zoo's word networks over a box of token ids: for every label j, an interval
holding z_gold - z_j (logits) at every point of the box, as the model computes it.

`WordCNN` (cnn-rt, the word-cnn family): each window's pre-activation is a sum over its columns
of W_j @ embedding(id), bounded per filter exactly over each column's candidate ids, and with the
box's cap (at most k free columns changed) only the k largest rises (falls) within the window
count: exact per filter. Then ReLU, the max over the windows the network keeps (those within its
max(n, 5) columns), and the linear layer, bounded for each difference row W_gold - W_j at once.

`WordLSTM` (lstm-rt, the word-lstm family): interval propagation through both directions of the
LSTM over the n words (as the packed sequence runs), the input projection of each column bounded
exactly over its candidate ids; the cap is not used (each free column ranges over all its ids,
a superset of the box: sound, looser). Then the max over time and the difference rows.

Any other module is refused (`bounds_for`): attention, layer norm and the rest are not bounded.
Every interval is widened for the model's rounding (`intervals`); the final layer's also for
`TorchClassifier` casting logits to float32 before its softmax.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch

from robustcount.errors import RobustcountError
from robustcount.models.families.word_networks import PAD, GloveWords, WordCNN, WordLSTM, WIDTHS
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.proofs.bounds.intervals import (
    UNIT_ROUNDOFF,
    Interval,
    Rounding,
    max_over_time,
    product,
    projected_candidates,
    relu,
    sigmoid,
    tanh,
)
from robustcount.proofs.bounds.slots import SlotBox

SUPPORTED = "the word-cnn and word-lstm families (cnn-rt, lstm-rt)"


class CandidateProjections:
    """A linear map applied to the embedding of a column that holds one of a set of token ids: per
    output, the lowest and highest value over the set and the largest magnitude
    |weight| @ |embedding(id)| (which bounds its rounding), computed once per set (cached)."""

    def __init__(self, table: torch.Tensor, weight: torch.Tensor):
        self.table, self.weight = table, weight
        self._reduced: dict[tuple[int, ...], tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}

    def __call__(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Shapes (out,) each."""
        key = tuple(sorted({int(i) for i in ids}))
        if key not in self._reduced:
            values, magnitudes = projected_candidates(self.table, torch.tensor(key), self.weight)
            self._reduced[key] = values.amin(dim=0), values.amax(dim=0), magnitudes.amax(dim=0)
        return self._reduced[key]

    def columns(self, boxes: Sequence[SlotBox]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """For every box and column: the clean input's value and the low, high and magnitude over
        the column's choices: shapes (boxes, columns, out) each (the boxes share their `ids`)."""
        ids = boxes[0].ids
        base = torch.stack([self(ids[t : t + 1])[0] for t in range(len(ids))])
        low, high = base.expand(len(boxes), *base.shape).clone(), base.expand(len(boxes), *base.shape).clone()
        magnitude = torch.stack([self(ids[t : t + 1])[2] for t in range(len(ids))]).expand_as(low).clone()
        where = [(b, t) for b, box in enumerate(boxes) for t in itertools.chain(box.forced, box.free)]
        if where:
            reduced = [self(boxes[b].choices(t)) for b, t in where]
            index = tuple(torch.tensor(i) for i in zip(*where))
            for target, k in ((low, 0), (high, 1), (magnitude, 2)):
                target[index] = torch.stack([r[k] for r in reduced])
        return base.expand_as(low), low, high, magnitude


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
    """The number of words (non-padding columns, which come first) the boxes' inputs share."""
    ids = boxes[0].ids
    words = int((ids != PAD).sum())
    if words == 0 or len(ids) < min_columns or bool((ids[:words] == PAD).any()) \
            or any(not torch.equal(box.ids, ids) for box in boxes):
        raise RobustcountError(f"bounds: boxes of one input of at least {min_columns} columns, words first")
    return words


class WordCNNBounds:
    """Bounds of a `WordCNN` (see the module docstring)."""

    def __init__(self, module: WordCNN, rounding: Rounding):
        table = module.embedding.weight.detach()
        self.rounding = rounding
        self.convolutions = []
        for width, convolution in zip(WIDTHS, module.convolutions):
            weight = convolution.weight.detach().to(torch.float64)  # (filters, dim, width)
            stacked = weight.permute(2, 0, 1).reshape(width * weight.shape[0], weight.shape[1])
            self.convolutions.append((width, weight.shape[0], weight.shape[1], CandidateProjections(table, stacked),
                                      convolution.bias.detach().to(torch.float64)))
        self.out = DifferenceLayer(module.out, rounding)

    def differences(self, boxes: Sequence[SlotBox], gold: int) -> Interval:
        """Intervals of z_gold - z_j for each box (of one input): shape (boxes, labels)."""
        _check_words_first(boxes, max(WIDTHS))
        free = torch.zeros(len(boxes), len(boxes[0].ids), dtype=torch.bool)
        for b, box in enumerate(boxes):
            free[b, list(box.free)] = True
        caps = torch.tensor([box.cap if box.free else 0 for box in boxes])
        parts = [self._filters(boxes, free, caps, *convolution) for convolution in self.convolutions]
        pooled = Interval(torch.cat([p.lo for p, _ in parts], dim=1), torch.cat([p.hi for p, _ in parts], dim=1))
        intervals = self.out(pooled, gold)
        linear = self._linear_lower_bound(boxes, gold, pooled, [slack for _, slack in parts])
        return Interval(torch.maximum(intervals.lo, linear), intervals.hi)

    def _filters(self, boxes, free, caps, width, filters, dim, projections, bias) -> tuple[Interval, torch.Tensor]:
        """The max over windows of ReLU(convolution) for one width, shape (boxes, filters), and the
        rounding slack of each window's pre-activation, shape (boxes, windows, filters)."""
        columns = len(boxes[0].ids)
        base, low, high, magnitude = (x.reshape(len(boxes), columns, width, filters)
                                      for x in projections.columns(boxes))
        windows = columns - width + 1  # all within the network's max(n, 5) columns
        rows = torch.arange(windows)[:, None] + torch.arange(width)[None, :]
        offsets = torch.arange(width)[None, :].expand(windows, width)
        base, low, high, magnitude = (x[:, rows, offsets] for x in (base, low, high, magnitude))  # (b, windows, width, f)
        is_free = free[:, rows][..., None]
        fixed_low = torch.where(is_free, base, low).sum(dim=2)
        fixed_high = torch.where(is_free, base, high).sum(dim=2)
        most = min(int(caps.max()), width)
        if most:
            allowed = (torch.arange(most)[None, :] < caps[:, None])[:, None, :, None]  # the k-th change within the cap
            falls = torch.where(is_free, low - base, 0.0).topk(most, dim=2, largest=False).values
            rises = torch.where(is_free, high - base, 0.0).topk(most, dim=2).values
            fixed_low = fixed_low + (falls * allowed).sum(dim=2)
            fixed_high = fixed_high + (rises * allowed).sum(dim=2)
        slack = self.rounding.sum_slack(dim * width + 1, magnitude.sum(dim=2) + bias.abs())
        activated = relu(Interval(fixed_low + bias - slack, fixed_high + bias + slack))  # (boxes, windows, filters)
        pooled = max_over_time(Interval(activated.lo.transpose(1, 2), activated.hi.transpose(1, 2)),
                               torch.ones(windows, dtype=torch.bool))
        return pooled, slack

    def _linear_lower_bound(self, boxes, gold, pooled: Interval, slacks: list[torch.Tensor]) -> torch.Tensor:
        """A second lower bound of z_gold - z_j, shape (boxes, labels): the output layer
        back-substituted through the max and the ReLU to the embeddings (see `CNNLinearPlan`)."""
        plan = self._plan(boxes[0].ids, gold)
        rows, _ = self.out.rows(gold)
        chosen_slack = torch.cat([slack[:, star, torch.arange(len(star))] for slack, star in zip(slacks, plan.star)],
                                 dim=1)  # (boxes, features): the rounding of each filter's chosen window
        lower = plan.constant + pooled.hi @ rows.clamp(max=0).T - 2 * chosen_slack @ plan.coefficients.T
        lower = lower - self.out.slack(pooled, gold)
        for b, box in enumerate(boxes):
            for t, choices in box.forced.items():
                lower[b] += plan.lowest(t, choices) - plan.lowest(t, box.ids[t : t + 1])
            if box.free and box.cap:
                falls = torch.stack([plan.lowest(t, choices) - plan.lowest(t, box.ids[t : t + 1])
                                     for t, choices in box.free.items()])  # (free columns, labels), <= 0
                lower[b] += falls.sort(dim=0).values[: box.cap].sum(dim=0)
        return lower

    def _plan(self, ids: torch.Tensor, gold: int) -> CNNLinearPlan:
        key = (tuple(ids.tolist()), gold)
        if getattr(self, "_last_plan", (None,))[0] != key:
            self._last_plan = (key, CNNLinearPlan(self, ids, gold))
        return self._last_plan[1]


class CNNLinearPlan:
    """The linear lower bound of a `WordCNN`'s z_gold - z_j on boxes of one input (CROWN-style
    back-substitution of the output layer): with rows r = W_gold - W_j,

        z_gold - z_j = sum_f r_f pooled_f + (b_gold - b_j),  pooled_f = max_s ReLU(pre_{f,s}),

    and pooled_f >= pre_{f,s*} (ReLU(x) >= x, and the max is at least any window's value) for the
    window s* where filter f peaks on the clean input, when f is active there and r_f > 0;
    pooled_f >= 0 for the other filters with r_f > 0; pooled_f <= its interval's upper end where
    r_f < 0. The kept pre-activations are linear in the embeddings, so the bound is
    sum_t v_t . embedding(id_t) + constant with one vector v_t per column and label: minimised
    exactly over each column's choices, and jointly over all filters (which the intervals are
    not). With the cap, only the `cap` largest falls among free columns count. The model's
    rounding of each kept pre-activation and of the output layer is subtracted."""

    def __init__(self, bounds: WordCNNBounds, ids: torch.Tensor, gold: int):
        rows, offsets = bounds.out.rows(gold)
        self.table = bounds.convolutions[0][3].table.to(torch.float64)
        columns, dim = len(ids), self.table.shape[1]
        vectors = torch.zeros(rows.shape[0], columns, dim, dtype=torch.float64)
        self.star, coefficients, constant, start = [], [], offsets.clone(), 0
        for width, filters, _, projections, bias in bounds.convolutions:
            weight = projections.weight.view(width, filters, dim)  # weight[o, f] = W_f[:, o]
            values, _ = projected_candidates(projections.table, ids, projections.weight)
            values = values.view(columns, width, filters)
            windows = columns - width + 1
            clean = sum(values[o : o + windows, o] for o in range(width)) + bias  # (windows, filters)
            star = clean.argmax(dim=0)
            active = clean.amax(dim=0) > 0
            c = (rows[:, start : start + filters] * active).clamp(min=0)  # (labels, filters)
            for o in range(width):
                vectors.index_add_(1, star + o, c[:, :, None] * weight[o][None])
            constant += c @ bias
            self.star.append(star)
            coefficients.append(c)
            start += filters
        self.coefficients = torch.cat(coefficients, dim=1)  # (labels, features)
        self.vectors = vectors
        self.constant = constant + (self.table[ids][None] * vectors).sum(dim=(1, 2))  # at the clean input
        self._lowest: dict[tuple[int, tuple[int, ...]], torch.Tensor] = {}

    def lowest(self, column: int, ids: torch.Tensor) -> torch.Tensor:
        """min over `ids` of v_column . embedding(id), per label."""
        key = (column, tuple(sorted({int(i) for i in ids})))
        if key not in self._lowest:
            self._lowest[key] = (self.table[list(key[1])] @ self.vectors[:, column].T).amin(dim=0)
        return self._lowest[key]


class WordLSTMBounds:
    """Bounds of a `WordLSTM` (see the module docstring)."""

    def __init__(self, module: WordLSTM, rounding: Rounding):
        lstm = module.lstm
        if lstm.num_layers != 1 or not lstm.bidirectional or not lstm.batch_first or lstm.proj_size:
            raise RobustcountError("bounds: a word-lstm has one bidirectional batch-first layer")
        table = module.embedding.weight.detach()
        self.rounding = rounding
        self.hidden = lstm.hidden_size
        self.directions = []
        for suffix in ("", "_reverse"):
            weight = lambda name: getattr(lstm, f"{name}_l0{suffix}").detach().to(torch.float64)
            self.directions.append((CandidateProjections(table, weight("weight_ih")), weight("weight_hh"),
                                    weight("bias_ih") + weight("bias_hh"),
                                    weight("bias_ih").abs() + weight("bias_hh").abs(), lstm.input_size))
        self.out = DifferenceLayer(module.out, rounding)

    def differences(self, boxes: Sequence[SlotBox], gold: int) -> Interval:
        """Intervals of z_gold - z_j for each box (of one input): shape (boxes, labels)."""
        words = _check_words_first(boxes, 1)
        forward = self._direction(boxes, range(words), *self.directions[0])
        backward = self._direction(boxes, range(words - 1, -1, -1), *self.directions[1])
        steps = Interval(torch.cat([forward.lo, backward.lo], dim=2).transpose(1, 2),
                         torch.cat([forward.hi, backward.hi], dim=2).transpose(1, 2))
        return self.out(max_over_time(steps, torch.ones(words, dtype=torch.bool)), gold)

    def _direction(self, boxes, order, projections, recurrent, bias, bias_magnitude, inputs) -> Interval:
        """The hidden states at each word (in text order) of one direction: shape (boxes, words, hidden)."""
        _, low, high, magnitude = projections.columns(boxes)
        h = c = Interval.point(torch.zeros(len(boxes), self.hidden, dtype=torch.float64))
        states = {}
        for t in order:
            center = (low[:, t] + high[:, t]) / 2 + h.center @ recurrent.T + bias
            spread = (high[:, t] - low[:, t]) / 2 + h.radius @ recurrent.abs().T
            total = magnitude[:, t] + h.magnitude @ recurrent.abs().T + bias_magnitude
            slack = self.rounding.sum_slack(inputs + self.hidden + 3, total)
            gates = Interval(center - spread - slack, center + spread + slack)
            i, f, g, o = (gates[:, k * self.hidden : (k + 1) * self.hidden] for k in range(4))
            i, f, g, o = (sigmoid(i, self.rounding), sigmoid(f, self.rounding), tanh(g, self.rounding),
                          sigmoid(o, self.rounding))
            c = product(f, c, self.rounding) + product(i, g, self.rounding)
            c = c.widened(self.rounding.elementwise_slack(c.magnitude))
            h = product(o, tanh(c, self.rounding), self.rounding)
            states[t] = h
        ordered = [states[t] for t in sorted(states)]
        return Interval(torch.stack([s.lo for s in ordered], dim=1), torch.stack([s.hi for s in ordered], dim=1))


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
