"""Bounds of a recurrent text network's layers over boxes of token ids: an embedding, one
bidirectional LSTM layer, the max over time of its states and a linear output layer (the word
LSTM, lstm-rt: `networks.bounds_for`). Affine forms (`affine`) through both directions of
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
Every interval is widened for the model's rounding (`intervals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from robustcount.bounds import affine
from robustcount.bounds.affine import Affine, Choices
from robustcount.bounds.intervals import Interval, Rounding
from robustcount.bounds.layers import CandidateProjections, DifferenceLayer, check_words_first, stacked
from robustcount.bounds.slots import SlotBox
from robustcount.errors import RobustcountError

NOISE_BUDGET = 600
"""The most noise symbols an LSTM direction keeps per box between steps (see `_reduced`; None keeps
all). Chosen on demo:test examples 0-3: 600 keeps single points 0.03 to 0.2 wide in logit
difference; the cost grows with it (docs/proofs/bounds.md, measurements)."""


class LSTMBounds:
    """Bounds of an embedding, one bidirectional LSTM layer, the max over time and a linear layer
    (see the module docstring)."""

    def __init__(self, embedding: nn.Embedding, lstm: nn.LSTM, out: nn.Linear, rounding: Rounding,
                 budget: int | None = NOISE_BUDGET):
        if lstm.num_layers != 1 or not lstm.bidirectional or not lstm.batch_first or lstm.proj_size:
            raise RobustcountError("bounds: an LSTM of one bidirectional batch-first layer")
        table = embedding.weight.detach()
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
        self.out = DifferenceLayer(out, rounding)

    def differences(self, boxes: Sequence[SlotBox], gold: int) -> Interval:
        """Intervals of z_gold - z_j for each box (of one input): shape (boxes, labels)."""
        words = check_words_first(boxes, 1)
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
