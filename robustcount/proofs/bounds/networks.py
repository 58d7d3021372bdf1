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


class Projections:
    """weight @ embedding(id) and |weight| @ |embedding(id)| per token id, computed once per id."""

    def __init__(self, table: torch.Tensor, weight: torch.Tensor):
        self.table, self.weight = table, weight
        self._values: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def __call__(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Shapes (len(ids), out) each."""
        missing = sorted({int(i) for i in ids} - self._values.keys())
        if missing:
            values, magnitudes = projected_candidates(self.table, torch.tensor(missing), self.weight)
            self._values.update((i, (v, m)) for i, v, m in zip(missing, values, magnitudes))
        pairs = [self._values[int(i)] for i in ids]
        return torch.stack([v for v, _ in pairs]), torch.stack([m for _, m in pairs])


class DifferenceLayer:
    """The output layer as rows W_gold - W_j: intervals of z_gold - z_j from the pooled features."""

    def __init__(self, layer: torch.nn.Linear, rounding: Rounding):
        self.weight = layer.weight.detach().to(torch.float64)
        self.bias = layer.bias.detach().to(torch.float64)
        self.rounding = rounding

    def __call__(self, pooled: Interval, gold: int) -> Interval:
        rows = self.weight[gold] - self.weight
        offsets = self.bias[gold] - self.bias
        center = rows @ pooled.center + offsets
        spread = rows.abs() @ pooled.radius
        logit_magnitude = self.weight.abs() @ pooled.magnitude + self.bias.abs()
        pair = logit_magnitude[gold] + logit_magnitude  # z_gold and z_j are each rounded, then cast
        slack = self.rounding.sum_slack(self.weight.shape[1] + 1, pair) + 2 * UNIT_ROUNDOFF[torch.float32] * pair
        slack[gold] = 0.0
        return Interval(center - spread - slack, center + spread + slack)


class WordCNNBounds:
    """Bounds of a `WordCNN` (see the module docstring)."""

    def __init__(self, module: WordCNN, rounding: Rounding):
        table = module.embedding.weight.detach()
        self.rounding = rounding
        self.convolutions = []
        for width, convolution in zip(WIDTHS, module.convolutions):
            weight = convolution.weight.detach().to(torch.float64)  # (filters, dim, width)
            stacked = weight.permute(2, 0, 1).reshape(width * weight.shape[0], weight.shape[1])
            self.convolutions.append((width, weight.shape[0], weight.shape[1],
                                      Projections(table, stacked), convolution.bias.detach().to(torch.float64)))
        self.out = DifferenceLayer(module.out, rounding)

    def differences(self, box: SlotBox, gold: int) -> Interval:
        columns = len(box.ids)
        if columns < max(WIDTHS) or bool((box.ids[: int((box.ids != PAD).sum())] == PAD).any()):
            raise RobustcountError("bounds: a word-cnn input has its words first and at least "
                                   f"{max(WIDTHS)} columns")
        free = torch.tensor([t in box.free for t in range(columns)])
        pooled = [self._filters(box, free, *convolution) for convolution in self.convolutions]
        return self.out(Interval(torch.cat([p.lo for p in pooled]), torch.cat([p.hi for p in pooled])), gold)

    def _filters(self, box: SlotBox, free: torch.Tensor, width: int, filters: int, dim: int,
                 projections: Projections, bias: torch.Tensor) -> Interval:
        """The max over windows of ReLU(convolution) for one width: shape (filters,)."""
        columns = len(box.ids)
        lows, highs, bases, magnitudes = [], [], [], []
        for t in range(columns):
            values, abs_values = projections(box.choices(t))
            values = values.view(-1, width, filters)
            lows.append(values.amin(dim=0))
            highs.append(values.amax(dim=0))
            bases.append(projections(box.ids[t : t + 1])[0].view(width, filters))
            magnitudes.append(abs_values.view(-1, width, filters).amax(dim=0))
        low, high, base, magnitude = (torch.stack(x) for x in (lows, highs, bases, magnitudes))  # (columns, width, filters)
        windows = columns - width + 1  # all within the network's max(n, 5) columns
        at = lambda x: torch.stack([x[j : j + windows, j] for j in range(width)], dim=1)  # (windows, width, filters)
        low, high, base, magnitude = at(low), at(high), at(base), at(magnitude)
        is_free = torch.stack([free[j : j + windows] for j in range(width)], dim=1)[..., None]
        fixed_low = torch.where(is_free, base, low).sum(dim=1)
        fixed_high = torch.where(is_free, base, high).sum(dim=1)
        k = min(box.cap, width)
        if k:
            falls = torch.where(is_free, low - base, 0.0)
            rises = torch.where(is_free, high - base, 0.0)
            fixed_low = fixed_low + falls.topk(k, dim=1, largest=False).values.sum(dim=1)
            fixed_high = fixed_high + rises.topk(k, dim=1).values.sum(dim=1)
        slack = self.rounding.sum_slack(dim * width + 1, magnitude.sum(dim=1) + bias.abs())
        activated = relu(Interval(fixed_low + bias - slack, fixed_high + bias + slack))  # (windows, filters)
        return max_over_time(Interval(activated.lo.T, activated.hi.T), torch.ones(windows, dtype=torch.bool))


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
            self.directions.append((Projections(table, weight("weight_ih")), weight("weight_hh"),
                                    weight("bias_ih") + weight("bias_hh"),
                                    weight("bias_ih").abs() + weight("bias_hh").abs(), lstm.input_size))
        self.out = DifferenceLayer(module.out, rounding)

    def differences(self, box: SlotBox, gold: int) -> Interval:
        words = int((box.ids != PAD).sum())
        if words == 0 or bool((box.ids[:words] == PAD).any()):
            raise RobustcountError("bounds: a word-lstm input has at least one word, words first")
        forward = self._direction(box, range(words), *self.directions[0])
        backward = self._direction(box, range(words - 1, -1, -1), *self.directions[1])
        steps = Interval(torch.cat([forward.lo, backward.lo], dim=1).T, torch.cat([forward.hi, backward.hi], dim=1).T)
        return self.out(max_over_time(steps, torch.ones(words, dtype=torch.bool)), gold)

    def _direction(self, box: SlotBox, order, projections: Projections, recurrent: torch.Tensor,
                   bias: torch.Tensor, bias_magnitude: torch.Tensor, inputs: int) -> Interval:
        """The hidden states at each word (in text order) of one direction: shape (words, hidden)."""
        h = c = Interval.point(torch.zeros(self.hidden, dtype=torch.float64))
        states = {}
        for t in order:
            values, abs_values = projections(box.choices(t))
            center = (values.amin(dim=0) + values.amax(dim=0)) / 2 + recurrent @ h.center + bias
            spread = (values.amax(dim=0) - values.amin(dim=0)) / 2 + recurrent.abs() @ h.radius
            magnitude = abs_values.amax(dim=0) + recurrent.abs() @ h.magnitude + bias_magnitude
            slack = self.rounding.sum_slack(inputs + self.hidden + 3, magnitude)
            gates = Interval(center - spread - slack, center + spread + slack)
            i, f, g, o = (gates[k * self.hidden : (k + 1) * self.hidden] for k in range(4))
            i, f, g, o = sigmoid(i, self.rounding), sigmoid(f, self.rounding), tanh(g, self.rounding), sigmoid(o, self.rounding)
            c = product(f, c, self.rounding) + product(i, g, self.rounding)
            c = c.widened(self.rounding.elementwise_slack(c.magnitude))
            h = product(o, tanh(c, self.rounding), self.rounding)
            states[t] = h
        ordered = [states[t] for t in sorted(states)]
        return Interval(torch.stack([s.lo for s in ordered]), torch.stack([s.hi for s in ordered]))


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
