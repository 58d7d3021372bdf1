"""Interval bounds of the layers word models use, sound against floating point.

An `Interval` is a pair of float64 tensors (lo, hi). Every layer function here returns an interval
that contains (a) the exact real value of the layer at every point of its input interval and (b)
every value the model itself can compute there, in its own precision (unit roundoff `u`: 2^-24
for float32, 2^-53 for float64), with its sums in any order, fused or not:

- a sum of n products plus a bias, computed in floating point in any order, differs from the exact
  sum by at most gamma_n * sum |terms| (gamma_n = n u / (1 - n u); Higham, Accuracy and Stability
  of Numerical Algorithms, 3.1); each layer widens its interval by twice that, with the magnitudes
  taken over the whole input interval. The factor 2 also covers our own float64 arithmetic in
  computing the bound (never coarser than the model's);
- an elementwise function (tanh, sigmoid) or product is widened by ELEMENTWISE_ULPS * u of the
  largest magnitude it takes on the interval, assuming torch's kernels for these are accurate to
  a few ulps (their libraries document so; tests/test_bounds_layers.py checks it), and the
  interval's ends are exact images of monotone functions;
- ReLU, max and min are exact in floating point and widen nothing.

Inputs to a layer are themselves model-computed values, which (b) of the previous layer puts in
its interval, so the chain holds layer by layer. Assumed: kernels that are sums of products (not
Winograd or FFT convolutions). Refused (`Rounding.of`): reduced-precision math modes (TF32) and
dtypes other than float32 and float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from robustcount.errors import RobustcountError

ELEMENTWISE_ULPS = 16
"""Ulps of widening for an elementwise function or product (see the module docstring)."""
UNIT_ROUNDOFF = {torch.float32: 2.0**-24, torch.float64: 2.0**-53}
"""The model precisions bounds are sound for, with their unit roundoff."""


@dataclass(frozen=True)
class Rounding:
    """How much to widen for the rounding of a model computing in unit roundoff `u`."""

    u: float

    @classmethod
    def of(cls, dtype: torch.dtype, device: torch.device | str = "cpu") -> Rounding:
        """The rounding of a model evaluated at `dtype` on `device`; refuses what bounds cannot cover."""
        if dtype not in UNIT_ROUNDOFF:
            raise RobustcountError(f"bounds need a float32 or float64 model, not {dtype}")
        on_cuda = torch.device(device).type == "cuda"
        if on_cuda and dtype == torch.float32 and (torch.backends.cuda.matmul.allow_tf32
                                                   or torch.backends.cudnn.allow_tf32):
            raise RobustcountError("bounds do not cover TF32 arithmetic: set torch.backends.cuda.matmul.allow_tf32 "
                                   "and torch.backends.cudnn.allow_tf32 to False, or run the model on CPU")
        return cls(UNIT_ROUNDOFF[dtype])

    def gamma(self, n: int) -> float:
        if n * self.u >= 0.5:
            raise RobustcountError(f"bounds: a sum of {n} terms is too long for unit roundoff {self.u:g}")
        return n * self.u / (1 - n * self.u)

    def sum_slack(self, terms: int, magnitude: torch.Tensor) -> torch.Tensor:
        """The widening of a sum of `terms` products whose absolute values add up to at most `magnitude`."""
        return 2 * self.gamma(terms) * magnitude

    def elementwise_slack(self, magnitude: torch.Tensor) -> torch.Tensor:
        return ELEMENTWISE_ULPS * self.u * magnitude


@dataclass(frozen=True)
class Interval:
    """Elementwise lower and upper bounds (float64 tensors of one shape, lo <= hi)."""

    lo: torch.Tensor
    hi: torch.Tensor

    @classmethod
    def point(cls, value: torch.Tensor) -> Interval:
        value = value.to(torch.float64)
        return cls(value, value)

    @property
    def center(self) -> torch.Tensor:
        return (self.lo + self.hi) / 2

    @property
    def radius(self) -> torch.Tensor:
        return (self.hi - self.lo) / 2

    @property
    def magnitude(self) -> torch.Tensor:
        """The largest absolute value in the interval, elementwise."""
        return torch.maximum(self.lo.abs(), self.hi.abs())

    def widened(self, slack: torch.Tensor) -> Interval:
        return Interval(self.lo - slack, self.hi + slack)

    def contains(self, values: torch.Tensor) -> bool:
        values = values.to(torch.float64)
        return bool(((self.lo <= values) & (values <= self.hi)).all())

    def __add__(self, other: Interval) -> Interval:
        """The sum, not yet widened (callers widen once for the whole sum)."""
        return Interval(self.lo + other.lo, self.hi + other.hi)

    def __getitem__(self, index) -> Interval:
        return Interval(self.lo[index], self.hi[index])


def linear(x: Interval, weight: torch.Tensor, bias: torch.Tensor | None, rounding: Rounding) -> Interval:
    """x @ weight.T + bias over the interval x (last dimension: features)."""
    weight = weight.to(torch.float64)
    bias = torch.zeros(weight.shape[0], dtype=torch.float64) if bias is None else bias.to(torch.float64)
    center = x.center @ weight.T + bias
    spread = x.radius @ weight.abs().T
    magnitude = x.magnitude @ weight.abs().T + bias.abs()
    slack = rounding.sum_slack(weight.shape[1] + 1, magnitude)
    return Interval(center - spread - slack, center + spread + slack)


def conv1d(x: Interval, weight: torch.Tensor, bias: torch.Tensor | None, rounding: Rounding) -> Interval:
    """torch's conv1d (no padding, stride 1) over the interval x of shape (channels, time)."""
    weight = weight.to(torch.float64)
    out_channels, in_channels, width = weight.shape
    bias = torch.zeros(out_channels, dtype=torch.float64) if bias is None else bias.to(torch.float64)
    center = torch.conv1d(x.center[None], weight, bias)[0]
    spread = torch.conv1d(x.radius[None], weight.abs())[0]
    magnitude = torch.conv1d(x.magnitude[None], weight.abs(), bias.abs())[0]
    slack = rounding.sum_slack(in_channels * width + 1, magnitude)
    return Interval(center - spread - slack, center + spread + slack)


def relu(x: Interval) -> Interval:
    return Interval(x.lo.clamp(min=0), x.hi.clamp(min=0))


def monotone(function, x: Interval, rounding: Rounding) -> Interval:
    """An increasing elementwise `function` (torch.tanh, torch.sigmoid) over x."""
    image = Interval(function(x.lo), function(x.hi))
    return image.widened(rounding.elementwise_slack(image.magnitude))


def tanh(x: Interval, rounding: Rounding) -> Interval:
    return monotone(torch.tanh, x, rounding)


def sigmoid(x: Interval, rounding: Rounding) -> Interval:
    return monotone(torch.sigmoid, x, rounding)


def product(a: Interval, b: Interval, rounding: Rounding) -> Interval:
    """The elementwise product a * b."""
    corners = torch.stack([a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi])
    image = Interval(corners.amin(dim=0), corners.amax(dim=0))
    return image.widened(rounding.elementwise_slack(image.magnitude))


def max_over_time(x: Interval, valid: torch.Tensor) -> Interval:
    """The max over the `valid` steps (a boolean mask of the last dimension, at least one True)."""
    if not bool(valid.any()):
        raise RobustcountError("bounds: a max over no steps")
    return Interval(x.lo[..., valid].amax(dim=-1), x.hi[..., valid].amax(dim=-1))


def mean_over_time(x: Interval, valid: torch.Tensor, rounding: Rounding) -> Interval:
    """The mean over the `valid` steps of the last dimension (a sum, then a division)."""
    count = int(valid.sum())
    if count == 0:
        raise RobustcountError("bounds: a mean over no steps")
    total = Interval(x.lo[..., valid].sum(dim=-1), x.hi[..., valid].sum(dim=-1))
    total = total.widened(rounding.sum_slack(count, x.magnitude[..., valid].sum(dim=-1)))
    mean = Interval(total.lo / count, total.hi / count)
    return mean.widened(rounding.elementwise_slack(mean.magnitude))


def embedding_over_candidates(table: torch.Tensor, candidates: list[torch.Tensor]) -> Interval:
    """The embedding of each step t ranging over the token ids `candidates[t]`: shape (steps, dim).
    Exact (a lookup rounds nothing)."""
    rows = [table[ids].to(torch.float64) for ids in candidates]
    return Interval(torch.stack([r.amin(dim=0) for r in rows]), torch.stack([r.amax(dim=0) for r in rows]))


def projected_candidates(table: torch.Tensor, ids: torch.Tensor, weight: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """For each token id in `ids`, the products weight @ embedding(id) (in float64) and the
    magnitudes |weight| @ |embedding(id)| that bound their rounding: shapes (len(ids), out).

    A linear layer applied to an embedding that ranges over a candidate set is bounded exactly
    per output by the min and max of these over the set (tighter than the interval of the
    embedding box pushed through `linear`, which `embedding_over_candidates` would give)."""
    vectors = table[ids].to(torch.float64)
    weight = weight.to(torch.float64)
    return vectors @ weight.T, vectors.abs() @ weight.abs().T
