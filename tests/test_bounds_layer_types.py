"""Each bound of `robustcount.bounds` written against layer types holds, by brute force, on layers
of random weights built from torch's own (not a zoo network): every point of a random box of
token ids, evaluated one input at a time by those layers' forward pass, lies within the bound.
The sound bounds (`ConvolutionBounds`, `LSTMBounds`, through `CandidateProjections`,
`DifferenceLayer` and `least_total`) hold for the float32 model with no tolerance; the training
bounds (`relaxed`, no rounding widening) for the same layers in float64."""

import itertools

import pytest
import torch
from torch import nn

from robustcount.bounds.convolution import ConvolutionBounds
from robustcount.bounds.intervals import Rounding
from robustcount.bounds.layers import CandidateProjections, least_total
from robustcount.bounds.lstm import LSTMBounds
from robustcount.bounds.relaxed import convolution_max_pool, lstm_max_pool, output_lower_bounds
from robustcount.bounds.slots import SlotBox
from robustcount.models.families.word_networks import PAD

VOCABULARY, DIM, LABELS, CANDIDATES = 40, 5, 3, 3


def convolution_layers(seed: int, dtype=torch.float32):
    torch.manual_seed(seed)
    embedding = nn.Embedding(VOCABULARY, DIM)
    with torch.no_grad():
        embedding.weight[PAD] = 0.0
    convolutions = nn.ModuleList(nn.Conv1d(DIM, 4, width) for width in (2, 3))
    return embedding.to(dtype), convolutions.to(dtype), nn.Linear(8, LABELS).to(dtype)


def lstm_layers(seed: int, dtype=torch.float32):
    torch.manual_seed(seed)
    lstm = nn.LSTM(DIM, 3, batch_first=True, bidirectional=True)
    return nn.Embedding(VOCABULARY, DIM).to(dtype), lstm.to(dtype), nn.Linear(6, LABELS).to(dtype)


@torch.no_grad()
def convolution_logits(embedding, convolutions, out, ids: torch.Tensor) -> torch.Tensor:
    """The logits of one input (a row of ids, words first then padding) as the word CNN computes
    them: ReLU and the max over the windows within max(words, widest) columns."""
    x = embedding(ids[None]).transpose(1, 2)
    columns = max(int((ids != PAD).sum()), max(c.kernel_size[0] for c in convolutions))
    pooled = []
    for convolution in convolutions:
        h = torch.relu(convolution(x))
        ends = torch.arange(convolution.kernel_size[0], h.shape[2] + convolution.kernel_size[0])
        pooled.append(h.masked_fill(ends > columns, float("-inf")).amax(dim=2))
    return out(torch.cat(pooled, dim=1))[0]


@torch.no_grad()
def lstm_logits(embedding, lstm, out, ids: torch.Tensor) -> torch.Tensor:
    """The logits of one input (words only) as the word LSTM computes them: the max over time."""
    outputs, _ = lstm(embedding(ids[None]))
    return out(outputs.amax(dim=1))[0]


def random_box(generator: torch.Generator, words: int, columns: int) -> SlotBox:
    """A box over `columns` token columns (the first `words` words, then padding): each word
    column's clean id and two candidates, a random allowed subset, some columns free (clean id
    allowed) under a random cap."""
    universe = torch.full((columns, CANDIDATES), PAD)
    universe[:words] = torch.randint(1, VOCABULARY, (words, CANDIDATES), generator=generator)
    allowed = torch.zeros(columns, CANDIDATES, dtype=torch.bool)
    allowed[:, 0] = True
    allowed[:words] = torch.rand(words, CANDIDATES, generator=generator) < 0.6
    allowed[:words, 0] |= ~allowed[:words].any(dim=1)
    free = torch.zeros(columns, dtype=torch.bool)
    free[:words] = (torch.rand(words, generator=generator) < 0.5) & allowed[:words, 0]
    cap = int(torch.randint(0, words + 1, (), generator=generator))
    return SlotBox(universe, allowed, free, cap)


def points(box: SlotBox):
    """Every id sequence of the box, one at a time."""
    choices = [[c for c in range(CANDIDATES) if box.allowed[t, c]] for t in range(len(box.universe))]
    for picked in itertools.product(*choices):
        ids = box.universe[torch.arange(len(picked)), torch.tensor(picked)]
        changed_free = sum(bool(box.free[t]) and bool(ids[t] != box.universe[t, 0]) for t in range(len(picked)))
        if changed_free <= box.cap:
            yield ids


def assert_holds(bound, logits_of, box: SlotBox, gold: int) -> None:
    """Every point's z_gold - z_j (from its float logits) lies in `bound` (labels,), finite."""
    assert torch.isfinite(bound.lo).all() and torch.isfinite(bound.hi).all()
    seen = 0
    for ids in points(box):
        logits = logits_of(ids).to(torch.float64)
        differences = logits[gold] - logits
        assert bool((bound.lo <= differences).all()) and bool((differences <= bound.hi).all()), \
            (ids.tolist(), differences.tolist(), bound.lo.tolist(), bound.hi.tolist())
        seen += 1
    assert seen >= 1


@pytest.mark.parametrize("seed", range(12))
def test_the_convolution_layers_bound_holds_at_every_point_of_random_boxes(seed):
    generator = torch.Generator().manual_seed(seed)
    embedding, convolutions, out = convolution_layers(seed)
    words = 1 + seed % 6
    box = random_box(generator, words, max(words, 3))
    bounds = ConvolutionBounds(embedding, convolutions, out, Rounding.of(torch.float32))
    gold = seed % LABELS
    intervals, linear = bounds.both([box], gold)
    for lower in (intervals.lo, linear):  # each of the two lower bounds is sound alone
        assert_holds(type(intervals)(lower[0], intervals.hi[0]),
                     lambda ids: convolution_logits(embedding, convolutions, out, ids), box, gold)


@pytest.mark.parametrize("seed", range(8))
def test_the_lstm_layers_bound_holds_at_every_point_of_random_boxes(seed):
    generator = torch.Generator().manual_seed(seed)
    embedding, lstm, out = lstm_layers(seed)
    words = 1 + seed % 5
    box = random_box(generator, words, words)
    bounds = LSTMBounds(embedding, lstm, out, Rounding.of(torch.float32))
    gold = seed % LABELS
    assert_holds(bounds.differences([box], gold)[0], lambda ids: lstm_logits(embedding, lstm, out, ids), box, gold)


@pytest.mark.parametrize("seed", range(6))
def test_an_embedding_through_a_linear_map_is_bounded_by_its_candidates_and_least_total_is_exact(seed):
    """`CandidateProjections`: each column's low and high are the extremes of its allowed ids'
    projections; `least_total`: the minimum over the box's points of their summed changes."""
    generator = torch.Generator().manual_seed(seed)
    table, weight = torch.randn(VOCABULARY, DIM, generator=generator), torch.randn(4, DIM, generator=generator)
    box = random_box(generator, 5, 5)
    clean, low, high, _ = CandidateProjections(table, weight).columns(box.universe, box.allowed[None])
    projected = table.to(torch.float64)[box.universe] @ weight.to(torch.float64).T  # (columns, K, out)
    for t in range(5):
        reached = projected[t][box.allowed[t]]
        assert torch.allclose(low[0, t], reached.amin(dim=0), rtol=0, atol=1e-12)
        assert torch.allclose(high[0, t], reached.amax(dim=0), rtol=0, atol=1e-12)
        assert torch.allclose(clean[t], projected[t, 0], rtol=0, atol=1e-12)
    changes = (projected - projected[:, :1])[None]
    least = least_total(changes, box.allowed[None], box.free[None], torch.tensor([box.cap]))[0]
    totals = [sum(changes[0, t, int((box.universe[t] == ids[t]).nonzero()[0])] for t in range(5))
              for ids in points(box)]
    assert torch.allclose(least, torch.stack(totals).amin(dim=0), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("network", ["convolution", "lstm"])
def test_the_training_bounds_hold_at_every_point_of_random_boxes(seed, network):
    """`relaxed` (certified training's bounds, no rounding widening) on float64 layers: every
    column ranging over all its candidates at once."""
    generator = torch.Generator().manual_seed(seed)
    words = 1 + seed % 5
    columns = max(words, 3) if network == "convolution" else words
    box = random_box(generator, words, columns)
    box = SlotBox(box.universe, box.universe != PAD, torch.zeros(columns, dtype=torch.bool), 0)
    box.allowed[words:, 0] = True
    ids, universe = box.universe[None, :, 0], box.universe[None]
    gold = seed % LABELS
    if network == "convolution":
        embedding, convolutions, out = convolution_layers(seed, torch.float64)
        pooled = convolution_max_pool(embedding, convolutions, ids, universe, 1.0)
        logits_of = lambda point: convolution_logits(embedding, convolutions, out, point)  # noqa: E731
    else:
        embedding, lstm, out = lstm_layers(seed, torch.float64)
        pooled = lstm_max_pool(embedding, lstm, ids, universe, 1.0)
        logits_of = lambda point: lstm_logits(embedding, lstm, out, point)  # noqa: E731
    with torch.no_grad():
        lower = output_lower_bounds(out, pooled, torch.tensor([gold]))[0]
    for point in points(box):
        logits = logits_of(point)
        assert bool((lower <= logits[gold] - logits + 1e-9).all()), (point.tolist(), lower.tolist())
