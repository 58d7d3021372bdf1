"""Every layer's interval contains the layer's exact outputs, in float32 (as models compute) and in
float64, at every point of random boxes: corners and random interior points; the affine forms'
layers (`affine`) hold every point of random boxes of candidate choices at corner and random values
of their noise symbols."""

import itertools

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from robustcount.bounds import affine
from robustcount.bounds.affine import Affine, Choices
from robustcount.bounds.intervals import (
    Interval,
    Rounding,
    conv1d,
    embedding_over_candidates,
    linear,
    max_over_time,
    mean_over_time,
    product,
    projected_candidates,
    relu,
    sigmoid,
    tanh,
)

FLOAT32 = Rounding.of(torch.float32)
seeds = st.integers(0, 2**31 - 1)


def random_box(generator, *shape, scale=3.0):
    a = torch.randn(*shape, generator=generator, dtype=torch.float64) * scale
    b = a + torch.rand(*shape, generator=generator, dtype=torch.float64) * scale
    return Interval(a, b)


def points_in(box: Interval, generator, n=64):
    """Random float32 points of the box (as a float32 model's inputs are), near its two extreme
    corners among them; returned as float64 tensors holding float32 values."""
    t = torch.rand(n, *box.lo.shape, generator=generator, dtype=torch.float64)
    t[0], t[1] = 0.0, 1.0
    points = (box.lo + t * (box.hi - box.lo)).float()
    points = torch.where(points.double() < box.lo, torch.nextafter(points, torch.tensor(torch.inf)), points)
    points = torch.where(points.double() > box.hi, torch.nextafter(points, torch.tensor(-torch.inf)), points)
    inside = ((points.double() >= box.lo) & (points.double() <= box.hi)).flatten(1).all(dim=1)
    return points[inside].double()


def check(bound: Interval, outputs):
    for out in outputs:
        assert bound.contains(out), f"{(bound.lo - out.double()).max():.3g} {(out.double() - bound.hi).max():.3g}"


@settings(max_examples=40, deadline=None)
@given(seeds, st.integers(1, 40), st.integers(1, 8))
def test_linear(seed, inputs, outputs):
    g = torch.Generator().manual_seed(seed)
    weight, bias = torch.randn(outputs, inputs, generator=g), torch.randn(outputs, generator=g)
    box = random_box(g, inputs)
    bound = linear(box, weight, bias, FLOAT32)
    xs = points_in(box, g)
    check(bound, [torch.nn.functional.linear(xs.float(), weight, bias), xs @ weight.double().T + bias.double()])


@settings(max_examples=30, deadline=None)
@given(seeds, st.integers(1, 6), st.integers(1, 5), st.integers(0, 6))
def test_conv1d(seed, channels, width, extra):
    g = torch.Generator().manual_seed(seed)
    weight, bias = torch.randn(4, channels, width, generator=g), torch.randn(4, generator=g)
    box = random_box(g, channels, width + extra)
    bound = conv1d(box, weight, bias, FLOAT32)
    xs = points_in(box, g)
    check(bound, [torch.conv1d(xs.float(), weight, bias), torch.conv1d(xs, weight.double(), bias.double())])


@settings(max_examples=30, deadline=None)
@given(seeds, st.sampled_from(["relu", "tanh", "sigmoid"]))
def test_activations(seed, name):
    g = torch.Generator().manual_seed(seed)
    box = random_box(g, 50, scale=6.0)
    layer = {"relu": lambda x: relu(x), "tanh": lambda x: tanh(x, FLOAT32), "sigmoid": lambda x: sigmoid(x, FLOAT32)}
    exact = getattr(torch, name)
    xs = points_in(box, g)
    check(layer[name](box), [exact(xs.float()), exact(xs)])


@settings(max_examples=30, deadline=None)
@given(seeds)
def test_product(seed):
    g = torch.Generator().manual_seed(seed)
    a, b = random_box(g, 30), random_box(g, 30)
    xs, ys = points_in(a, g), points_in(b, g)
    check(product(a, b, FLOAT32), [xs.float() * ys.float(), xs * ys])


@settings(max_examples=30, deadline=None)
@given(seeds, st.integers(1, 9))
def test_pooling_over_masked_time(seed, steps):
    g = torch.Generator().manual_seed(seed)
    box = random_box(g, 5, steps)
    valid = torch.rand(steps, generator=g) < 0.7
    valid[int(torch.randint(steps, (1,), generator=g))] = True
    xs = points_in(box, g)
    check(max_over_time(box, valid), [xs[..., valid].amax(dim=-1)])
    check(mean_over_time(box, valid, FLOAT32), [xs.float()[..., valid].mean(dim=-1), xs[..., valid].mean(dim=-1)])


@settings(max_examples=30, deadline=None)
@given(seeds, st.integers(1, 6))
def test_embeddings_over_candidate_sets(seed, steps):
    """Each step ranges over its own set of token ids: the lookup's box, and a linear layer over the
    set bounded exactly per output (the tight first layer), against every combination's outputs."""
    g = torch.Generator().manual_seed(seed)
    table = torch.randn(30, 8, generator=g).half().float()
    weight = torch.randn(5, 8, generator=g)
    candidates = [torch.randperm(30, generator=g)[: int(torch.randint(1, 4, (1,), generator=g))]
                  for _ in range(steps)]
    box = embedding_over_candidates(table, candidates)
    for t, ids in enumerate(candidates):
        for i in ids:
            assert box[t].contains(table[i])
        values, magnitudes = projected_candidates(table, ids, weight)
        slack = FLOAT32.sum_slack(8, magnitudes.amax(dim=0))
        bound = Interval(values.amin(dim=0) - slack, values.amax(dim=0) + slack)
        check(bound, [table[ids] @ weight.T, table[ids].double() @ weight.double().T])
        assert bool((bound.hi - bound.lo <= linear(box[t], weight, None, FLOAT32).hi
                     - linear(box[t], weight, None, FLOAT32).lo + 1e-9).all())


def random_choices(generator, boxes, slots, candidates):
    """Random candidate sets: each slot free (the clean id allowed) or forced (not), a random cap."""
    allowed = torch.rand(boxes, slots, candidates, generator=generator) < 0.6
    free = torch.rand(boxes, slots, generator=generator) < 0.5
    allowed[..., 0] = free
    allowed[..., 1] |= ~allowed[..., 1:].any(dim=2) & ~free
    caps = torch.randint(0, slots + 1, (boxes,), generator=generator)
    return Choices(torch.arange(slots).expand(boxes, -1), allowed, free, caps)


def box_points(choices: Choices, b: int):
    """Every choice of box b (a candidate per slot) within its cap."""
    options = [[k for k in range(choices.allowed.shape[2]) if choices.allowed[b, q, k]]
               for q in range(choices.allowed.shape[1])]
    for point in itertools.product(*options):
        if sum(k != 0 for q, k in enumerate(point) if choices.free[b, q]) <= int(choices.caps[b]):
            yield point


def random_form(generator, boxes, slots, candidates, dim, symbols=3, scale=2.0):
    choices = torch.randn(boxes, slots, candidates, dim, generator=generator, dtype=torch.float64) * scale
    choices[:, :, 0] = 0.0
    return Affine(torch.randn(boxes, dim, generator=generator, dtype=torch.float64) * scale, choices,
                  torch.randn(boxes, symbols, dim, generator=generator, dtype=torch.float64) * 0.3,
                  torch.rand(boxes, dim, generator=generator, dtype=torch.float64) * 0.1)


def value_at(form: Affine, b: int, point, xi, zeta=None):
    """The form of box b at a choice, its noise symbols `xi` and fresh symbols `zeta` (None: 0)."""
    value = form.center[b] + sum(form.choices[b, q, k] for q, k in enumerate(point)) + xi @ form.noise[b]
    return value if zeta is None else value + zeta * form.fresh[b]


def symbol_samples(generator, symbols, dim, n=6):
    """Noise and fresh symbol values: the corners -1 and 1, then random ones."""
    for j in range(n):
        if j < 2:
            yield torch.full((symbols,), 2.0 * j - 1, dtype=torch.float64), torch.full((dim,), 1.0 - 2.0 * j,
                                                                                        dtype=torch.float64)
        else:
            yield (torch.rand(symbols, generator=generator, dtype=torch.float64) * 2 - 1,
                   torch.rand(dim, generator=generator, dtype=torch.float64) * 2 - 1)


@settings(max_examples=40, deadline=None)
@given(seeds, st.integers(1, 3), st.sampled_from(["sigmoid", "tanh"]))
def test_affine_relaxations_hold_at_every_point(seed, slots, name):
    """At every choice of a box and every value of the input's symbols, f(x) differs from the output
    form (same choice, same noise symbols) by at most its fresh radius: the output's new symbols
    can take f(x). Also f(x) lies in the output's bounds."""
    g = torch.Generator().manual_seed(seed)
    choices = random_choices(g, 2, slots, 4)
    x = random_form(g, 2, slots, 4, 5)
    y = getattr(affine, name)(x, choices, FLOAT32)
    bounds = y.bounds(choices)
    exact = getattr(torch, name)
    for b in range(2):
        for point in box_points(choices, b):
            for xi, zeta in symbol_samples(g, 3, 5):
                value = exact(value_at(x, b, point, xi, zeta))
                residual = (value - value_at(y, b, point, xi)).abs()
                assert bool((residual <= y.fresh[b]).all()), float((residual - y.fresh[b]).max())
                assert bool((bounds.lo[b] <= value).all() and (value <= bounds.hi[b]).all())


@settings(max_examples=40, deadline=None)
@given(seeds, st.integers(1, 3))
def test_affine_product_holds_at_every_point(seed, slots):
    g = torch.Generator().manual_seed(seed)
    choices = random_choices(g, 2, slots, 4)
    a, c = random_form(g, 2, slots, 4, 5), random_form(g, 2, slots, 4, 5, scale=1.0)
    y = affine.product(a, c, choices, FLOAT32)
    for b in range(2):
        for point in box_points(choices, b):
            for xi, zeta in symbol_samples(g, 3, 5):
                value = value_at(a, b, point, xi, zeta) * value_at(c, b, point, xi, -zeta)
                residual = (value - value_at(y, b, point, xi)).abs()
                assert bool((residual <= y.fresh[b]).all()), float((residual - y.fresh[b]).max())


@settings(max_examples=40, deadline=None)
@given(seeds, st.integers(1, 4))
def test_choices_minimise_exactly_over_each_box(seed, slots):
    g = torch.Generator().manual_seed(seed)
    choices = random_choices(g, 3, slots, 3)
    coefficients = torch.randn(3, slots, 3, 2, generator=g, dtype=torch.float64)
    coefficients[:, :, 0] = 0.0
    least, most = choices.least(coefficients), choices.most(coefficients)
    for b in range(3):
        values = torch.stack([sum(coefficients[b, q, k] for q, k in enumerate(p)) for p in box_points(choices, b)])
        assert torch.allclose(least[b], values.amin(dim=0)) and torch.allclose(most[b], values.amax(dim=0))
