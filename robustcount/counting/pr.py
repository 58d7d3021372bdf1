"""Counting adversarial points (problem type 4): exact PR, and PR estimates with a guarantee.

PR(X, r) = |{X' in Omega_r(X) : F(X') = y*}| / |Omega_r(X)|: the share of the neighbourhood where
the model keeps the gold label. Estimates use exactly uniform samples of Omega_r
(`Space.sample`), evaluated in batches through the query engine.

Estimators (`ESTIMATORS`), each with the two-sided guarantee P(|PR_hat - PR| > eps) <= delta:

- `exact`: enumerate Omega_r (no sampling error).
- `hoeffding`: N = ceil(ln(2 / delta) / (2 eps^2)) samples (the PR paper's method), PR_hat their
  mean.
- `clopper-pearson`: the same N; the exact binomial interval at level 1 - delta is reported too.
- `adaptive`: an anytime-valid confidence sequence (the beta-binomial mixture martingale with
  Jeffreys' Beta(1/2, 1/2) prior: by Ville's inequality it holds at every sample count at once) at
  level delta / 2, sampling in batches until the estimate lies within eps of both ends of the
  interval; as the true PR lies in the interval, |PR_hat - PR| <= eps then. The estimate is the
  sample mean (`point="mean"`, the default: a region where every sample keeps the label reads
  1.0) or the interval's midpoint (`point="midpoint"`: it reaches the rule with about half the
  samples near PR = 0 or 1, but never reads 1.0: at most 0.977 at the paper's eps and delta).
  Near PR = 0 or 1 (the usual case) it stops far earlier than Hoeffding. If it has not stopped by
  the Hoeffding size for delta / 2, sampling stops there and the Hoeffding interval (at delta / 2)
  is intersected with the sequence's: so no example needs more than ln(4 / delta) / ln(2 / delta)
  times Hoeffding's N (1.12 at delta = 0.005).

A space with no more points than a method would sample is counted exactly instead. While it
samples, an estimate beats the samples drawn (`journal.current()`) and, when the journal keeps
checkpoints, hands one to `checkpoint` at most every 30 s: the samples drawn, how many kept the
label (all the confidence sequence needs) and the random generator's state, from which
`estimate_pr(resume=...)` draws on as if never stopped.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import betaln
from scipy.stats import binomtest

from robustcount import journal
from robustcount.errors import PointLimitReached, RobustcountError
from robustcount.goal import MAX_POINTS, evaluate_all, evaluate_points
from robustcount.models.engine import QueryEngine
from robustcount.options import one_of
from robustcount.spaces.space import Space

ESTIMATORS = ("exact", "hoeffding", "clopper-pearson", "adaptive")
"""The PR estimators, by name (see the module docstring)."""
PAPER_EPS, PAPER_DELTA = 0.025, 0.005


@dataclass
class PREstimate:
    """PR (or its estimate) for one input: `robust` of `samples` points kept the gold label; the
    true PR lies in [low, high] with probability >= 1 - delta (exactly, for `exact`). An exact
    count with bounds says how many of its points the bounds decided whole (`by_bounds`)."""

    method: str
    pr: float
    low: float
    high: float
    samples: int
    robust: int
    radius: int
    size: int
    eps: float | None
    delta: float | None
    seed: int | None
    by_bounds: int | None = None

    def as_dict(self) -> dict:
        record = asdict(self)
        record["size"] = str(self.size)
        if self.by_bounds is None:
            del record["by_bounds"]
        else:
            record["by_bounds"] = str(self.by_bounds)
        return record


def hoeffding_n(eps: float, delta: float) -> int:
    """The sample size for P(|PR_hat - PR| >= eps) <= delta by Hoeffding's inequality."""
    _check(eps, delta)
    return math.ceil(math.log(2 / delta) / (2 * eps**2))


def sample_cap(method: str, eps: float, delta: float) -> int:
    """The most samples `estimate_pr` draws with `method`: Hoeffding's N at (eps, delta), at
    (eps, delta / 2) for the adaptive method, which may stop sooner."""
    return hoeffding_n(eps, delta / 2) if method == "adaptive" else hoeffding_n(eps, delta)


def planned_calls(space: Space, radius: int, *, method: str, eps: float, delta: float,
                  max_points: int = MAX_POINTS) -> tuple[int, str | None]:
    """The most model calls `estimate_pr` makes on `space` at `radius`, before any: every point
    when it counts exactly (`exact`, or a space no larger than the samples it would draw; with the
    input, which is a point of the space), else the input and `sample_cap` samples (repeats are
    answered from the cache). With it, why the estimate would be undecided before any sample (an
    exact count above `max_points`), or None."""
    size = space.count(radius)
    if method == "exact" or size <= sample_cap(method, eps, delta):
        if size > max_points:
            return 1, f"|Omega_{radius}| = {size} points, above --max-points {max_points}: undecided"
        return size, None
    return 1 + sample_cap(method, eps, delta), None


def _check(eps: float, delta: float) -> None:
    if not 0 < eps < 1 or not 0 < delta < 1:
        raise RobustcountError(f"eps and delta must lie in (0, 1), got eps={eps}, delta={delta}")


def exact_pr(engine: QueryEngine, space: Space, gold: int, radius: int, max_points: int = MAX_POINTS) -> PREstimate:
    """PR by enumerating Omega_r; a space larger than `max_points` raises `PointLimitReached`
    before any model call (the example is then undecided, as a proof over the limit is)."""
    size = space.count(radius)
    if size > max_points:
        raise PointLimitReached(f"|Omega_{radius}|", size, max_points)
    robust = sum(int(e.kept.sum()) for e in evaluate_points(engine, space, space.points(radius), gold))
    pr = robust / size
    return PREstimate("exact", pr, pr, pr, size, robust, radius, size, None, None, None)


PRIOR = (0.5, 0.5)


def mixture_interval(robust: int, n: int, alpha: float) -> tuple[float, float]:
    """The beta-binomial mixture confidence sequence at sample count `n`: every p at which the
    mixture martingale B(a + robust, b + failures) / (B(a, b) L(p)) stays below 1 / alpha, with
    L(p) = p^robust (1 - p)^failures and Beta(a, b) = PRIOR. Valid at every n at once (Ville)."""
    if n == 0:
        return 0.0, 1.0
    failures = n - robust
    a, b = PRIOR
    threshold = math.log(1 / alpha) - (betaln(a + robust, b + failures) - betaln(a, b))

    def log_likelihood(p: float) -> float:
        left = robust * math.log(p) if robust else 0.0
        right = failures * math.log1p(-p) if failures else 0.0
        return left + right

    def outside(p: float) -> float:  # > 0 inside the set, < 0 outside
        return log_likelihood(p) + threshold

    mle = robust / n
    tiny = 1e-15
    low = 0.0 if robust == 0 or outside(tiny) > 0 else brentq(outside, tiny, mle)
    high = 1.0 if failures == 0 or outside(1 - tiny) > 0 else brentq(outside, mle, 1 - tiny)
    return low, high


POINTS = ("mean", "midpoint")
"""How the adaptive method reads its estimate: `mean` (the share of robust samples; a region where
every sample keeps the label reads 1.0) or `midpoint` (of the confidence interval; cheaper, see
the module docstring)."""


@dataclass(frozen=True)
class EstimateSettings:
    """How `estimate_pr` estimates: the estimator (`method`, one of `ESTIMATORS`), the guarantee
    P(|PR_hat - PR| > eps) <= delta, the sampling `seed`, samples drawn `batch` at a time, the
    adaptive estimate's reading (`point`, one of `POINTS`) and the most points `exact` counts."""

    method: str = "adaptive"
    eps: float = PAPER_EPS
    delta: float = PAPER_DELTA
    seed: int = 0
    batch: int = 32
    point: str = "mean"
    max_points: int = MAX_POINTS


def estimate_pr(
    engine: QueryEngine,
    space: Space,
    gold: int,
    radius: int,
    settings: EstimateSettings = EstimateSettings(),
    *,
    resume: dict | None = None,
    checkpoint: Callable[[dict], None] | None = None,
) -> PREstimate:
    """PR_hat of `space` at `radius` as `settings` say (see the module docstring). Samples are
    drawn `settings.batch` at a time; the adaptive method checks its interval after each batch and
    reads its estimate as `settings.point` says. A space no larger than the samples a method would
    draw is counted exactly instead (method `exact` in the result); `exact` refuses a space larger
    than `settings.max_points` (`PointLimitReached`). `resume` (a state `checkpoint` was given)
    continues the sampling where it stood."""
    method, eps, delta, seed = settings.method, settings.eps, settings.delta, settings.seed
    batch, point, max_points = settings.batch, settings.point, settings.max_points
    _check(eps, delta)
    one_of(method, ESTIMATORS, "PR estimator")
    one_of(point, POINTS, "PR point estimate")
    size = space.count(radius)
    cap = sample_cap(method, eps, delta)
    if method == "exact" or size <= cap:
        return exact_pr(engine, space, gold, radius, max_points)
    rng = random.Random(seed)
    robust, n = (resume["robust"], resume["samples"]) if resume else (0, 0)
    if resume:
        _restore_rng(rng, resume["rng"])
    beats = journal.current()

    def draw(count: int) -> None:
        nonlocal robust, n
        robust += int(evaluate_all(engine, space, space.sample(radius, count, rng), gold).kept.sum())
        n += count
        beats.beat(n, cap, "samples")
        if checkpoint is not None and beats.due():
            checkpoint({"samples": n, "robust": robust, "rng": list(rng.getstate())})

    if method in ("hoeffding", "clopper-pearson"):
        while n < cap:
            draw(min(batch, cap - n))
        pr = robust / n
        low, high = _fixed_interval(method, robust, n, eps, delta)
        return PREstimate(method, pr, low, high, n, robust, radius, size, eps, delta, seed)
    while True:  # the rule is checked after every batch (and first thing when resumed after one)
        if n:
            low, high = mixture_interval(robust, n, delta / 2)
            estimate = robust / n if point == "mean" else (low + high) / 2
            if max(abs(estimate - low), abs(high - estimate)) <= eps:
                break
        if n >= cap:
            estimate, low, high = _at_the_cap(robust, n, eps, (low, high), point)
            break
        draw(min(batch, cap - n))
    return PREstimate("adaptive", estimate, low, high, n, robust, radius, size, eps, delta, seed)


def _restore_rng(rng: random.Random, state: list) -> None:
    """Set `rng` to the state a checkpoint kept (`list(rng.getstate())`, read back from JSON)."""
    version, internal, gauss = state
    rng.setstate((version, tuple(internal), gauss))


def _fixed_interval(method: str, robust: int, n: int, eps: float, delta: float) -> tuple[float, float]:
    """The interval of a fixed-sample `method` (hoeffding: the mean +- eps clipped to [0, 1];
    clopper-pearson: the exact binomial interval at level 1 - delta) on `robust` of `n` samples."""
    if method == "hoeffding":
        pr = robust / n
        return max(0.0, pr - eps), min(1.0, pr + eps)
    interval = binomtest(robust, n).proportion_ci(1 - delta, method="exact")
    return interval.low, interval.high


def _at_the_cap(robust: int, n: int, eps: float, mixture: tuple[float, float], point: str):
    """The adaptive method's (estimate, low, high) once it has drawn its cap of samples: the
    `mixture` interval intersected with Hoeffding's (Hoeffding's alone when they are disjoint), the
    estimate read as `point` says."""
    mean = robust / n
    hoeffding = (max(0.0, mean - eps), min(1.0, mean + eps))
    low, high = max(mixture[0], hoeffding[0]), min(mixture[1], hoeffding[1])
    if low > high:  # the two intervals disagree (an event of probability <= delta)
        low, high = hoeffding
    return (mean if point == "mean" else (low + high) / 2), low, high


@dataclass
class ShellPR:
    """The share of the points at distance exactly `distance` that keep the gold label: `robust`
    of `samples` points (all `points` of the shell when `exact`), with the exact binomial interval
    [low, high] at level 1 - delta."""

    distance: int
    points: int
    samples: int
    robust: int
    pr: float
    low: float
    high: float
    exact: bool

    def as_dict(self) -> dict:
        record = asdict(self)
        record["points"] = str(self.points)
        return record


MIN_SHELL_SAMPLES = 10
"""The fewest points `pr_by_distance` gives one distance: a budget of N points measures at most
N // MIN_SHELL_SAMPLES distances (one, below that)."""


def shell_distances(radius: int, samples: int) -> list[int]:
    """The distances among 1..`radius` that a budget of `samples` points in all measures: every
    one when the budget gives each MIN_SHELL_SAMPLES points, else at most samples //
    MIN_SHELL_SAMPLES of them (at least one), spaced geometrically from 1 to `radius` (both
    included), since robustness breaks at small distances first."""
    if radius < 1 or samples < 1:
        return []
    most = max(1, samples // MIN_SHELL_SAMPLES)
    if most >= radius:
        return list(range(1, radius + 1))
    if most == 1:
        return [1]
    return sorted({round(radius ** (i / (most - 1))) for i in range(most)})


def pr_by_distance(engine: QueryEngine, space: Space, gold: int, radius: int, samples: int, *,
                   delta: float = PAPER_DELTA, seed: int = 0) -> list[ShellPR]:
    """PR at exact distances d from 1 to `radius` within a budget of `samples` points in all,
    whatever the radius: the budget is spread evenly over `shell_distances` (the first distances
    take the remainder), each shell counted exactly when it holds no more points than its share,
    else that many exactly uniform points of it (`Space.sample_at_distance`). Where robustness
    breaks shows as the distance where the share falls."""
    rng = random.Random(seed)
    distances = shell_distances(min(radius, space.max_radius()), samples)
    shells = []
    for i, d in enumerate(distances):
        share = samples // len(distances) + (i < samples % len(distances))
        size = space.count_at(d)
        exact = size <= share
        points = list(space.points_at_distance(d)) if exact else space.sample_at_distance(d, share, rng)
        robust = int(evaluate_all(engine, space, points, gold).kept.sum())
        if exact:
            low = high = robust / len(points)
        else:
            interval = binomtest(robust, len(points)).proportion_ci(1 - delta, method="exact")
            low, high = interval.low, interval.high
        shells.append(ShellPR(d, size, len(points), robust, robust / len(points), low, high, exact))
    return shells


def default_radius(space: Space, share: float = 0.25) -> int:
    """The PR paper's radius, `share` (25%) of the text's words (`share_of_words`), capped at the
    space's positions with candidates (a larger radius holds no more points), at least 1."""
    return max(1, min(share_of_words(len(space.tokens.words), share), space.max_radius()))


def share_of_words(words: int, share: float = 0.25) -> int:
    """`share` of `words`, rounded, at least 1: the PR paper's radius before any cap."""
    return max(1, round(share * words))


def summarise_pr(values: list[float], threshold: float = 0.9) -> dict:
    """Median PR and the share of regions with PR above `threshold`."""
    array = np.asarray(values, dtype=float)
    return {"estimated": len(array), "median": float(np.median(array)) if len(array) else float("nan"),
            f"share_above_{threshold}": float((array > threshold).mean()) if len(array) else float("nan")}
