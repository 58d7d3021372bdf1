"""Affine forms over a batch of boxes: each value a network computes at a point of a box is written
as an affine function of that point's candidate choices and of noise symbols in [-1, 1] (a
zonotope whose first variables range over the box's candidate sets), so that correlations between
values survive a layer that mixes them (the recurrence's W_hh), which intervals lose.

`Choices` holds the boxes' candidate sets as variables: box b's slot q is one column it may change
(`column[b, q]`, -1 for none), and the point's choice there is one of the column's allowed
candidate ids k (k = 0 the clean one). A form's coefficient for (q, k) is what choosing k adds to
the value, 0 at k = 0; its exact minimum over a box is the sum over slots of each slot's lowest
allowed coefficient, with only the `cap` lowest (negative) ones among free slots
(`Choices.least`).

An `Affine` is `center + sum_{q,k} choices[q, k] [slot q holds k] + sum_s noise[s] xi_s + fresh
zeta`, per box and output coordinate: every point of the box has some xi (and zeta) in [-1, 1]
giving the value the model computes there. `fresh` is a radius per coordinate whose symbols no
other value uses yet (a layer's own error: relaxation remainder, rounding), so an elementwise
layer may merge it exactly; `promoted` turns it into noise rows before a mixing layer.

The layers: a linear map (`mapped`); sigmoid and tanh (`relaxed`: per coordinate the tighter of
DeepZ's parallel relaxation and one by vertices, which keeps each changed column's own effect
exact per candidate); the elementwise product (exact in its centre, linear and same-column parts,
its other terms within intervals). Each is widened for the model's rounding as `intervals` is.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import torch

from robustcount.bounds.intervals import Interval, Rounding

FLOAT64_MARGIN = 1e-12
"""An absolute margin for this module's own float64 evaluation of a relaxation's end values (on
values of magnitude below 1e3, float64 errs by less than 1e-12)."""


@dataclass(frozen=True)
class Choices:
    """The candidate choices of a batch of boxes (see the module docstring): `column` (boxes, Q),
    `allowed` (boxes, Q, K), `free` (boxes, Q), `caps` (boxes,)."""

    column: torch.Tensor
    allowed: torch.Tensor
    free: torch.Tensor
    caps: torch.Tensor

    @classmethod
    def of(cls, allowed: torch.Tensor, free: torch.Tensor, caps: torch.Tensor) -> Choices:
        """From every column's allowed ids (boxes, columns, K), free columns and caps: one slot per
        column a box may change (allows anything but its clean id alone)."""
        changed = allowed[..., 1:].any(dim=2) | ~allowed[..., 0]
        slots = max(1, int(changed.sum(dim=1).max()))
        order = torch.argsort((~changed).to(torch.int8), dim=1, stable=True)[:, :slots]  # changed columns first
        used = torch.gather(changed, 1, order)
        column = torch.where(used, order, -1)
        picked = torch.gather(allowed, 1, order[..., None].expand(-1, -1, allowed.shape[2]))
        clean_only = torch.zeros_like(picked)
        clean_only[..., 0] = True
        return cls(column, torch.where(used[..., None], picked, clean_only), torch.gather(free, 1, order) & used, caps)

    def rows(self, index: torch.Tensor) -> Choices:
        """The boxes `index` (a row beyond the last is the clean input alone: no slot changed)."""
        extra = Choices(torch.full_like(self.column[:1], -1), torch.zeros_like(self.allowed[:1]),
                        torch.zeros_like(self.free[:1]), torch.zeros_like(self.caps[:1]))
        extra.allowed[..., 0] = True
        return Choices(*(torch.cat([mine, theirs])[index] for mine, theirs in
                         zip((self.column, self.allowed, self.free, self.caps),
                             (extra.column, extra.allowed, extra.free, extra.caps))))

    def at(self, column: int) -> torch.Tensor:
        """Which slots hold `column`: (boxes, Q) booleans."""
        return self.column == column

    def least(self, coefficients: torch.Tensor) -> torch.Tensor:
        """The exact minimum over each box's points of sum_q coefficients[b, q, k_q] (coefficients
        (boxes, Q, K, D), 0 at k = 0): shape (boxes, D)."""
        lowest = torch.where(self.allowed[..., None], coefficients, torch.inf).amin(dim=2)  # (boxes, Q, D)
        total = torch.where(self.free[..., None], 0.0, lowest).sum(dim=1)
        most = min(int(self.caps.max()), self.free.shape[1])
        if most:
            within = (torch.arange(most)[None, :] < self.caps[:, None])[..., None]
            falls = torch.where(self.free[..., None], lowest, 0.0).topk(most, dim=1, largest=False).values
            total = total + (falls * within).sum(dim=1)
        return total

    def most(self, coefficients: torch.Tensor) -> torch.Tensor:
        return -self.least(-coefficients)


@dataclass(frozen=True)
class Affine:
    """Values as affine forms (see the module docstring): `center` (boxes, D), `choices` (boxes,
    Q, K, D), `noise` (boxes, S, D), `fresh` (boxes, D)."""

    center: torch.Tensor
    choices: torch.Tensor
    noise: torch.Tensor
    fresh: torch.Tensor

    @classmethod
    def constant(cls, value: torch.Tensor, slots: int, candidates: int) -> Affine:
        boxes, dim = value.shape
        return cls(value, value.new_zeros(boxes, slots, candidates, dim), value.new_zeros(boxes, 0, dim),
                   value.new_zeros(boxes, dim))

    @cached_property
    def noise_radius(self) -> torch.Tensor:
        """sum_s |noise[s]|: (boxes, D)."""
        return self.noise.abs().sum(dim=1)

    def spread(self) -> torch.Tensor:
        """The largest deviation the noise part (noise and fresh) reaches: (boxes, D)."""
        return self.noise_radius + self.fresh

    def bounds(self, choices: Choices) -> Interval:
        spread = self.spread()
        return Interval(self.center + choices.least(self.choices) - spread,
                        self.center + choices.most(self.choices) + spread)

    def mapped(self, weight: torch.Tensor) -> Affine:
        """x @ weight.T, exact (rounding is the caller's); needs no fresh radius (`promoted`)."""
        assert not bool(self.fresh.any()), "promote the fresh radius before a mixing layer"
        return Affine(self.center @ weight.T, self.choices @ weight.T, self.noise @ weight.T,
                      self.fresh.new_zeros(self.center.shape[0], weight.shape[0]))

    def __add__(self, other: Affine) -> Affine:
        return Affine(self.center + other.center, self.choices + other.choices, self.noise + other.noise,
                      self.fresh + other.fresh)

    def widened(self, radius: torch.Tensor) -> Affine:
        return Affine(self.center, self.choices, self.noise, self.fresh + radius)

    def __getitem__(self, index) -> Affine:
        """Output coordinates `index` (a slice of the last dimension)."""
        return Affine(self.center[:, index], self.choices[..., index], self.noise[..., index], self.fresh[:, index])

    def rows(self, index: torch.Tensor) -> Affine:
        """The boxes `index`."""
        return Affine(self.center[index], self.choices[index], self.noise[index], self.fresh[index])

    @staticmethod
    def stacked(forms: list[Affine]) -> Affine:
        """Forms of the same symbols, their boxes one after the other."""
        return Affine(*(torch.cat(parts) for parts in zip(*((f.center, f.choices, f.noise, f.fresh) for f in forms))))

    def padded(self, symbols: int) -> Affine:
        """With `symbols` more noise rows of zeros (symbols another value gained)."""
        extra = self.noise.new_zeros(self.noise.shape[0], symbols, self.noise.shape[2])
        return self._keeping_radius(Affine(self.center, self.choices, torch.cat([self.noise, extra], dim=1), self.fresh),
                                    0.0)

    def promoted(self) -> Affine:
        """The fresh radius as D new noise rows (one symbol per coordinate)."""
        return self._keeping_radius(Affine(self.center, self.choices, torch.cat([self.noise, torch.diag_embed(self.fresh)],
                                                                                dim=1), torch.zeros_like(self.fresh)),
                                    self.fresh)

    def _keeping_radius(self, other: Affine, added) -> Affine:
        """`other`, whose noise rows are this form's and rows adding `added` to their radius, with
        the noise radius carried over when this form has computed it (saving a pass over the rows)."""
        if "noise_radius" in self.__dict__:
            other.__dict__["noise_radius"] = self.noise_radius + added
        return other


def relaxed(function, derivative, x: Affine, choices: Choices, rounding: Rounding) -> Affine:
    """An increasing elementwise `function` with a bell-shaped `derivative` peaking at 0 (sigmoid,
    tanh) of x, per coordinate the tighter of two relaxations (each sound alone):

    - parallel (DeepZ): with s the smaller derivative at the interval's ends, f(x) - s x is
      nondecreasing on it, so f(x) = s x + (f(l) - s l + f(u) - s u) / 2 + e, |e| at most half
      their difference (the slope shrunk by 1e-12 relative so that its float64 rounding keeps that);
    - by vertices: x = c + sum_q A_q[k_q] + nu (nu the noise part); each slot's own effect
      f(c + A_q[k]) - f(c) is kept exactly as a choice coefficient, the interaction of two slots
      exactly over their pairs (within a mean-value bound for three or more), and the noise part
      as s nu plus (f'max - f'min) / 2 |nu| (s the middle of f' over the reachable range)."""
    span = x.bounds(choices)
    slope = torch.minimum(derivative(span.lo), derivative(span.hi)) * (1 - 1e-12)
    low, high = function(span.lo) - slope * span.lo, function(span.hi) - slope * span.hi
    image = Interval(function(span.lo), function(span.hi))
    slack = FLOAT64_MARGIN + rounding.elementwise_slack(image.magnitude)
    parallel_fresh = slope * x.fresh + (high - low) / 2 + slack
    center, effects, noise_slope, fresh = _by_vertices(function, derivative, x, choices, span)
    fresh = fresh + slack
    better = noise_slope * x.noise_radius + fresh < slope * x.noise_radius + parallel_fresh
    return Affine(torch.where(better, center, slope * x.center + (low + high) / 2),
                  torch.where(better[:, None, None], effects, slope[:, None, None] * x.choices),
                  torch.where(better, noise_slope, slope)[:, None] * x.noise,
                  torch.where(better, fresh, parallel_fresh))


def _derivative_range(derivative, lo: torch.Tensor, hi: torch.Tensor) -> Interval:
    """The range of a bell-shaped derivative peaking at 0 over [lo, hi]."""
    return Interval(torch.minimum(derivative(lo), derivative(hi)), derivative(torch.clamp(torch.zeros_like(lo), lo, hi)))


def _by_vertices(function, derivative, x: Affine, choices: Choices, span: Interval) -> tuple[torch.Tensor, ...]:
    """The vertex relaxation of `relaxed` (no rounding yet): its centre, choice coefficients, the
    slope applied to the noise rows, and its fresh radius."""
    c = x.center
    moved = c[:, None, None] + x.choices  # (boxes, Q, K, D): one slot changed
    effects = torch.where(choices.allowed[..., None], function(moved) - function(c)[:, None, None], 0.0)
    noise = x.spread()
    reach_lo, reach_hi = span.lo + noise, span.hi - noise  # every y
    slots = choices.allowed.shape[1]
    if slots == 1:
        interaction = Interval(torch.zeros_like(c), torch.zeros_like(c))
    elif slots == 2:
        pairs = c[:, None, None] + x.choices[:, 0, :, None] + x.choices[:, 1, None, :]  # (boxes, K, K, D)
        values = function(pairs) - function(c)[:, None, None] - effects[:, 0, :, None] - effects[:, 1, None, :]
        both = (choices.allowed[:, 0, :, None] & choices.allowed[:, 1, None, :])[..., None]
        interaction = Interval(torch.where(both, values, torch.inf).amin(dim=(1, 2)),
                               torch.where(both, values, -torch.inf).amax(dim=(1, 2)))
        reach_lo = torch.minimum(reach_lo, torch.where(both, pairs, torch.inf).amin(dim=(1, 2)))
        reach_hi = torch.maximum(reach_hi, torch.where(both, pairs, -torch.inf).amax(dim=(1, 2)))
    else:  # f(y) - f(c) - sum_q (f(c + d_q) - f(c)) = sum_q (f'(eta) - f'(eta_q)) d_q, eta and eta_q
        # between c and y or c + d_q: widen the reach to hold c and every c + d_q
        reach_lo = torch.minimum(torch.minimum(reach_lo, c),
                                 torch.where(choices.allowed[..., None], moved, torch.inf).amin(dim=(1, 2)))
        reach_hi = torch.maximum(torch.maximum(reach_hi, c),
                                 torch.where(choices.allowed[..., None], moved, -torch.inf).amax(dim=(1, 2)))
        spread = _derivative_range(derivative, reach_lo, reach_hi)
        largest = torch.where(choices.allowed[..., None], x.choices.abs(), 0.0).amax(dim=2).sum(dim=1)
        bound = (spread.hi - spread.lo) * largest
        interaction = Interval(-bound, bound)
    around = _derivative_range(derivative, reach_lo - noise, reach_hi + noise)
    slope = (around.lo + around.hi) / 2
    fresh = (around.hi - around.lo) / 2 * noise + slope * x.fresh + interaction.radius
    return function(c) + interaction.center, effects, slope, fresh


def sigmoid(x: Affine, choices: Choices, rounding: Rounding) -> Affine:
    return relaxed(torch.sigmoid, lambda v: torch.sigmoid(v) * torch.sigmoid(-v), x, choices, rounding)


def tanh(x: Affine, choices: Choices, rounding: Rounding) -> Affine:
    return relaxed(torch.tanh, lambda v: 1 / torch.cosh(v).square(), x, choices, rounding)


def product(a: Affine, b: Affine, choices: Choices, rounding: Rounding) -> Affine:
    """The elementwise product. With a = ca + alpha + nu_a (alpha its choice part, nu_a its noise
    part) and b alike, a b = ca cb + ca (beta + nu_b) + cb (alpha + nu_a) + alpha beta + alpha nu_b
    + nu_a beta + nu_a nu_b, where alpha beta's terms of one slot, alpha_q[k] beta_q[k], are exact
    choice coefficients, its terms across slots lie in their range (exact over pairs for two
    slots, by intervals for more), and the terms with noise lie in their intervals' products
    (a's and b's fresh symbols are used once here, so their terms merge into the result's fresh
    radius)."""
    noise_a, noise_b = a.spread(), b.spread()
    alpha = Interval(choices.least(a.choices), choices.most(a.choices))
    beta = Interval(choices.least(b.choices), choices.most(b.choices))
    at_a, at_b = a.center + alpha.center, b.center + beta.center  # the noise rows' coefficients
    rest = _times(Interval(-alpha.radius, alpha.radius), Interval(-noise_b, noise_b)) \
        + _times(Interval(-noise_a, noise_a), Interval(-beta.radius, beta.radius)) \
        + Interval(-noise_a * noise_b, noise_a * noise_b)
    remainder = rest + _across_slots(a.choices, b.choices, choices)
    magnitude = Interval(a.center + alpha.lo - noise_a, a.center + alpha.hi + noise_a).magnitude \
        * Interval(b.center + beta.lo - noise_b, b.center + beta.hi + noise_b).magnitude
    fresh = at_a.abs() * b.fresh + at_b.abs() * a.fresh + remainder.radius + FLOAT64_MARGIN \
        + rounding.elementwise_slack(magnitude)
    return Affine(a.center * b.center + remainder.center,
                  a.center[:, None, None] * b.choices + b.center[:, None, None] * a.choices + a.choices * b.choices,
                  at_a[:, None] * b.noise + at_b[:, None] * a.noise, fresh)


def _times(a: Interval, b: Interval) -> Interval:
    corners = torch.stack([a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi])
    return Interval(corners.amin(dim=0), corners.amax(dim=0))


def _across_slots(alpha: torch.Tensor, beta: torch.Tensor, choices: Choices) -> Interval:
    """The range of sum_{q != q'} alpha_q[k_q] beta_q'[k_q'] over the slots' allowed choices
    (the cap not used: a superset)."""
    boxes, slots, _, dim = alpha.shape
    if slots == 1:
        return Interval(alpha.new_zeros(boxes, dim), alpha.new_zeros(boxes, dim))
    allowed = choices.allowed[..., None]
    if slots == 2:
        values = alpha[:, 0, :, None] * beta[:, 1, None, :] + alpha[:, 1, None, :] * beta[:, 0, :, None]
        both = (choices.allowed[:, 0, :, None] & choices.allowed[:, 1, None, :])[..., None]
        return Interval(torch.where(both, values, torch.inf).amin(dim=(1, 2)),
                        torch.where(both, values, -torch.inf).amax(dim=(1, 2)))
    ranges = [Interval(torch.where(allowed, x, torch.inf).amin(dim=2), torch.where(allowed, x, -torch.inf).amax(dim=2))
              for x in (alpha, beta)]  # (boxes, Q, D) each
    others = Interval(ranges[1].lo.sum(dim=1, keepdim=True) - ranges[1].lo,
                      ranges[1].hi.sum(dim=1, keepdim=True) - ranges[1].hi)
    across = _times(ranges[0], others)
    return Interval(across.lo.sum(dim=1), across.hi.sum(dim=1))
