import hashlib
import math

import numpy as np
import pytest
from scipy.stats import binom

from robustcount.counting.pr import (
    EstimateSettings,
    MIN_SHELL_SAMPLES,
    estimate_pr,
    exact_pr,
    hoeffding_n,
    mixture_interval,
    pr_by_distance,
    shell_distances,
)
from robustcount.errors import RobustcountError
from robustcount.goal import keeps_label
from robustcount.models.engine import QueryEngine
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.spaces.space import Position, Space


def known_pr_problem(n_positions: int, n_candidates: int, adversarial_per_mille: int):
    """A space and a model that is adversarial on a fixed, hash-chosen subset of texts: its exact PR
    is known by enumeration, and the adversarial texts are spread over the whole space."""
    space = Space(" ".join(f"w{i}" for i in range(n_positions)),
                  tuple(Position("word", i, (f"w{i}", *(f"w{i}s{j}" for j in range(n_candidates))))
                        for i in range(n_positions)))

    def classify(batch):
        labels = []
        for text in batch:
            bucket = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 1000
            labels.append(0 if bucket < adversarial_per_mille and text != space.item else 1)
        return labels

    return space, FunctionClassifier(classify, ["negative", "positive"], output="label")


def test_hoeffding_n_is_the_papers():
    assert hoeffding_n(0.025, 0.005) == 4794
    with pytest.raises(RobustcountError):
        hoeffding_n(0.0, 0.1)


def test_exact_counts_equal_brute_force():
    space, model = known_pr_problem(4, 3, 300)
    engine = QueryEngine(model)
    result = exact_pr(engine, space, 1, 2)
    points = list(space.points(2))
    truth = sum(keeps_label(engine.predict_proba([space.apply(p)]), 1)[0] for p in points)
    assert result.robust == truth and result.size == len(points) and result.pr == truth / len(points)
    assert result.low == result.high == result.pr
    with pytest.raises(RobustcountError, match="above the limit of 10"):
        exact_pr(engine, space, 1, 4, max_points=10)


def test_mixture_interval_contains_the_mle_and_shrinks():
    low, high = mixture_interval(95, 100, 0.01)
    assert low < 0.95 < high
    narrower = mixture_interval(950, 1000, 0.01)
    assert narrower[1] - narrower[0] < high - low
    assert mixture_interval(0, 0, 0.01) == (0.0, 1.0)
    assert mixture_interval(50, 50, 0.01)[1] == 1.0


@pytest.mark.parametrize("method", ["hoeffding", "clopper-pearson", "adaptive", "adaptive:midpoint"])
@pytest.mark.parametrize("per_mille", [0, 50, 500])
def test_coverage_over_many_seeds(method, per_mille):
    """Over 300 seeds the interval misses the exact PR, and the estimate lies more than eps from
    it, in no more runs than a Binomial(300, delta) count exceeds with probability 0.001."""
    eps, delta, runs = 0.1, 0.1, 300
    method, _, point = method.partition(":")
    space, model = known_pr_problem(6, 4, per_mille)
    engine = QueryEngine(model)
    truth = exact_pr(engine, space, 1, 3).pr
    misses = far = 0
    for seed in range(runs):
        result = estimate_pr(engine, space, 1, 3, EstimateSettings(method=method, eps=eps, delta=delta, seed=seed,
                             point=point or "mean"))
        assert result.method == method  # 1,545 points: sampled, not counted
        misses += not (result.low - 1e-12 <= truth <= result.high + 1e-12)
        far += abs(result.pr - truth) > eps + 1e-12
        assert abs(result.pr - truth) <= eps or not (result.low <= truth <= result.high)
        if method != "clopper-pearson":
            assert (result.high - result.low) / 2 <= eps + 1e-12  # never stops wider than eps
    assert misses <= binom.ppf(0.999, runs, delta) and far <= binom.ppf(0.999, runs, delta)


@pytest.mark.parametrize("point, near_one", [("midpoint", 0.1), ("mean", 0.2)])
def test_adaptive_needs_far_fewer_samples_near_one_and_never_much_more_than_hoeffding(point, near_one):
    """The mean reads 1.0 on a fully robust region, at about twice the midpoint's samples near 1."""
    eps, delta = 0.025, 0.005
    n = hoeffding_n(eps, delta)
    for per_mille, most in ((0, n * near_one), (10, n * near_one), (500, 1.15 * n)):
        space, model = known_pr_problem(12, 20, per_mille)
        settings = EstimateSettings(eps=eps, delta=delta, seed=1, point=point)
        result = estimate_pr(QueryEngine(model), space, 1, 4, settings)
        assert result.samples <= most, (per_mille, result.samples)


def test_estimates_come_from_uniform_samples():
    # Thirty positions of two substitutes: Omega_2 holds 1 + 60 + 1,740 = 1,801 points (more than
    # the 1,060 samples drawn), and the model is adversarial exactly at distance 2, so
    # PR = 61/1801. "Random distance, then random positions and candidates" would see adversaries
    # a third of the time (PR near 2/3) instead.
    words = [f"w{i}" for i in range(30)]
    space = Space(" ".join(words), tuple(Position("word", i, (w, w + "x", w + "y")) for i, w in enumerate(words)))
    model = FunctionClassifier(lambda batch: [0 if sum(w[-1] in "xy" for w in t.split()) == 2 else 1 for t in batch],
                               ["neg", "pos"], output="label")
    engine = QueryEngine(model)
    truth = exact_pr(engine, space, 1, 2).pr
    assert truth == pytest.approx(61 / 1801)
    result = estimate_pr(engine, space, 1, 2, EstimateSettings(method="hoeffding", eps=0.05, delta=0.01, seed=3))
    assert result.method == "hoeffding" and result.samples == 1060 and abs(result.pr - truth) <= 0.05


def test_a_region_where_every_sample_keeps_the_label_reads_one():
    space, model = known_pr_problem(12, 20, 0)
    mean = estimate_pr(QueryEngine(model), space, 1, 4, EstimateSettings(seed=0))
    midpoint = estimate_pr(QueryEngine(model), space, 1, 4, EstimateSettings(seed=0, point="midpoint"))
    assert mean.pr == 1.0 and mean.robust == mean.samples and 1 - mean.low <= 0.025
    assert midpoint.pr < 0.98 and midpoint.samples < mean.samples


def test_spaces_no_larger_than_the_samples_are_counted_exactly():
    space, model = known_pr_problem(3, 1, 500)  # 1 + 3 + 3 = 7 points at r = 2
    for method in ("adaptive", "hoeffding", "clopper-pearson"):
        result = estimate_pr(QueryEngine(model), space, 1, 2, EstimateSettings(method=method))
        assert (result.method, result.samples, result.size) == ("exact", 7, 7)
        assert result.low == result.pr == result.high


def test_unknown_methods_and_bad_parameters():
    space, model = known_pr_problem(2, 2, 0)
    with pytest.raises(RobustcountError, match="unknown PR estimator"):
        estimate_pr(QueryEngine(model), space, 1, 1, EstimateSettings(method="magic"))
    with pytest.raises(RobustcountError):
        estimate_pr(QueryEngine(model), space, 1, 1, EstimateSettings(eps=2.0))


def test_one_seed_gives_one_estimate():
    space, model = known_pr_problem(8, 5, 100)
    a = estimate_pr(QueryEngine(model), space, 1, 3, EstimateSettings(seed=7))
    b = estimate_pr(QueryEngine(model), space, 1, 3, EstimateSettings(seed=7))
    assert a == b
    assert math.isclose(a.pr, a.robust / a.samples)  # the sample mean
    midpoint = estimate_pr(QueryEngine(model), space, 1, 3, EstimateSettings(seed=7, point="midpoint"))
    assert math.isclose(midpoint.pr, (midpoint.low + midpoint.high) / 2)
    assert np.isfinite(a.pr)


def test_pr_by_distance_is_exact_on_small_shells_and_uniform_on_large_ones():
    # adversarial exactly at distance 2 (see test_estimates_come_from_uniform_samples)
    words = [f"w{i}" for i in range(30)]
    space = Space(" ".join(words), tuple(Position("word", i, (w, w + "x", w + "y")) for i, w in enumerate(words)))
    model = FunctionClassifier(lambda batch: [0 if sum(w[-1] in "xy" for w in t.split()) == 2 else 1 for t in batch],
                               ["neg", "pos"], output="label")
    one, two, three = pr_by_distance(QueryEngine(model), space, 1, 3, samples=300, seed=0)  # 100 a distance
    assert (one.distance, one.points, one.exact, one.pr) == (1, 60, True, 1.0)
    assert (two.points, two.samples, two.exact, two.pr) == (1740, 100, False, 0.0) and two.high < 0.06
    assert three.pr == 1.0 and three.low > 0.94
    assert all(len(p) == 2 for p in space.sample_at_distance(2, 50, 1))


def test_pr_by_distance_spends_its_budget_in_all_whatever_the_radius():
    words = [f"w{i}" for i in range(200)]
    space = Space(" ".join(words), tuple(Position("word", i, (w, w + "x", w + "y")) for i, w in enumerate(words)))
    model = FunctionClassifier(lambda batch: [int(sum(w[-1] in "xy" for w in t.split()) < 20) for t in batch],
                               ["neg", "pos"], output="label")
    engine = QueryEngine(model)
    for radius in (5, 50, 150):
        with engine.example() as stats:
            shells = pr_by_distance(engine, space, 1, radius, samples=100, seed=radius)
        assert sum(s.samples for s in shells) == 100 and stats.candidates == 100  # never more as r grows
        distances = [s.distance for s in shells]
        assert distances == shell_distances(radius, 100) and distances[0] == 1 and distances[-1] == radius
        assert all(s.samples >= MIN_SHELL_SAMPLES for s in shells)
        assert all(s.pr == 1.0 for s in shells if s.distance < 20) and all(s.pr == 0.0 for s in shells if s.distance >= 20)
    assert shell_distances(3, 100) == [1, 2, 3] and shell_distances(125, 100) == [1, 2, 3, 5, 9, 15, 25, 43, 73, 125]
    assert shell_distances(40, 5) == [1] and shell_distances(0, 100) == shell_distances(4, 0) == []
