"""Bounds of the zoo's word networks over a box of token ids: for every label j, an interval
holding z_gold - z_j (logits) at every point of the box, as the model computes it.

`WordCNN` (cnn-rt, the word-cnn family): each window's pre-activation is a sum over its columns
of W_j @ embedding(id), bounded per filter exactly over each column's candidate ids, and with the
box's cap (at most k free columns changed) only the k largest rises (falls) within the window
count: exact per filter. Then ReLU, the max over the windows the network keeps (those within its
max(n, 5) columns), and the linear layer, bounded for each difference row W_gold - W_j at once.
The lower bound is also computed CROWN-style, the output layer back-substituted through the max
and the ReLU to the embeddings (`CNNLinearPlan`), and the larger of the two is kept.

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
    max_over_time,
    projected_candidates,
    relu,
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
        table = module.embedding.weight.detach()
        self.rounding = rounding
        self.convolutions = []
        for width, convolution in zip(WIDTHS, module.convolutions):
            weight = convolution.weight.detach().to(torch.float64)  # (filters, dim, width)
            by_offset = weight.permute(2, 0, 1).reshape(width * weight.shape[0], weight.shape[1])  # row o * filters + f
            self.convolutions.append((width, weight.shape[0], weight.shape[1], CandidateProjections(table, by_offset),
                                      convolution.bias.detach().to(torch.float64)))
        self.out = DifferenceLayer(module.out, rounding)

    def differences(self, boxes: Sequence[SlotBox], gold: int) -> Interval:
        """Intervals of z_gold - z_j for each box (of one input): shape (boxes, labels)."""
        intervals, linear = self.both(boxes, gold)
        return Interval(torch.maximum(intervals.lo, linear), intervals.hi)

    def both(self, boxes: Sequence[SlotBox], gold: int) -> tuple[Interval, torch.Tensor]:
        """The interval bound and the back-substituted lower bound, each sound alone."""
        _check_words_first(boxes, max(WIDTHS))
        universe, allowed, free, caps = stacked(boxes)
        parts = [self._filters(universe, allowed, free, caps, *convolution) for convolution in self.convolutions]
        pooled = Interval(torch.cat([p.lo for p, _ in parts], dim=1), torch.cat([p.hi for p, _ in parts], dim=1))
        linear = self._linear_lower_bound(universe, allowed, free, caps, gold, pooled, [slack for _, slack in parts])
        return self.out(pooled, gold), linear

    def _filters(self, universe, allowed, free, caps, width, filters, dim, projections, bias):
        """The max over windows of ReLU(convolution) for one width, shape (boxes, filters), and the
        rounding slack of each window's pre-activation, shape (boxes, windows, filters)."""
        boxes, columns = allowed.shape[:2]
        base, low, high, magnitude = projections.columns(universe, allowed)
        base = base.view(1, columns, width, filters).expand(boxes, -1, -1, -1)
        low, high, magnitude = (x.view(boxes, columns, width, filters) for x in (low, high, magnitude))
        windows = columns - width + 1  # all within the network's max(n, 5) columns
        rows = torch.arange(windows)[:, None] + torch.arange(width)[None, :]
        offsets = torch.arange(width)[None, :].expand(windows, width)
        base, low, high, magnitude = (x[:, rows, offsets] for x in (base, low, high, magnitude))  # (b, windows, width, f)
        is_free = free[:, rows][..., None]
        fixed_low = torch.where(is_free, base, low).sum(dim=2)
        fixed_high = torch.where(is_free, base, high).sum(dim=2)
        most = min(int(caps.max()), width)
        if most:
            within = (torch.arange(most)[None, :] < caps[:, None])[:, None, :, None]  # the k-th change within the cap
            falls = torch.where(is_free, low - base, 0.0).topk(most, dim=2, largest=False).values
            rises = torch.where(is_free, high - base, 0.0).topk(most, dim=2).values
            fixed_low = fixed_low + (falls * within).sum(dim=2)
            fixed_high = fixed_high + (rises * within).sum(dim=2)
        slack = self.rounding.sum_slack(dim * width + 1, magnitude.sum(dim=2) + bias.abs())
        activated = relu(Interval(fixed_low + bias - slack, fixed_high + bias + slack))  # (boxes, windows, filters)
        pooled = max_over_time(Interval(activated.lo.transpose(1, 2), activated.hi.transpose(1, 2)),
                               torch.ones(windows, dtype=torch.bool))
        return pooled, slack

    def _linear_lower_bound(self, universe, allowed, free, caps, gold, pooled: Interval, slacks) -> torch.Tensor:
        """A second lower bound of z_gold - z_j, shape (boxes, labels): the output layer
        back-substituted through the max and the ReLU to the embeddings (see `CNNLinearPlan`)."""
        plan = self.plan(universe, gold)
        rows, _ = self.out.rows(gold)
        chosen_slack = torch.cat([slack[:, star, torch.arange(len(star))] for slack, star in zip(slacks, plan.star)],
                                 dim=1)  # (boxes, features): the rounding of each filter's chosen window
        lower = plan.constant + pooled.hi @ rows.clamp(max=0).T - 2 * chosen_slack @ plan.coefficients.T
        lower = lower - self.out.slack(pooled, gold)
        return lower + plan.fall(allowed, free, caps)

    def plan(self, universe: torch.Tensor, gold: int) -> CNNLinearPlan:
        """The back-substitution for boxes of the input with this `universe` (the last one kept)."""
        plan = getattr(self, "_last_plan", None)
        if plan is None or plan.gold != gold or not torch.equal(plan.universe, universe):
            self._last_plan = plan = CNNLinearPlan(self, universe, gold)
        return plan


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

    def __init__(self, bounds: WordCNNBounds, universe: torch.Tensor, gold: int):
        self.universe, self.gold, ids = universe, gold, universe[:, 0]
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
        self.values = torch.einsum("tkd,ltd->tkl", self.table[universe], vectors)
        """v_t . embedding(universe[t, c]): shape (columns, K, labels)."""

    def fall(self, allowed: torch.Tensor, free: torch.Tensor, caps: torch.Tensor) -> torch.Tensor:
        """The exact minimum over each box of sum_t v_t . (embedding(id_t) - embedding(clean_t)),
        per label: shape (boxes, labels) (see `stacked` for the arguments)."""
        lowest = torch.where(allowed[..., None], self.values, torch.inf).amin(dim=2)  # (boxes, columns, labels)
        falls = lowest - self.values[:, 0]  # <= 0 on free columns (their clean id is allowed)
        total = torch.where(free[..., None], 0.0, falls).sum(dim=1)
        most = min(int(caps.max()), allowed.shape[1])
        if most:
            within = (torch.arange(most)[None, :] < caps[:, None])[..., None]
            largest = torch.where(free[..., None], falls, 0.0).topk(most, dim=1, largest=False).values
            total = total + (largest * within).sum(dim=1)
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
