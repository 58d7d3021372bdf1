"""Robustness checks for your own test suite: hypothesis strategies and pytest assertions.

Strategies (hypothesis):
    points(space, radius)            points of Omega_r, shrinking towards the fewest changes
    perturbed_inputs(space, radius)  the inputs those points describe
    small_spaces()                   random small spaces, for testing attackers
    zeroe_perturbed(text, attack, level)  texts under one Zéroe perturber at a level

Assertions (raise AssertionError with a readable message):
    assert_certified(model, text, space, radius)
    assert_pr_at_least(model, text, space, radius, threshold, eps, delta)
    assert_attack_valid(attack, model, text, space)
    assert_never_beats_exhaustive(attack, model, text, space)

`model` is any Classifier (or a QueryEngine); `label` defaults to the model's own prediction on
the unperturbed text. `space` is a Space, or a list of source names (its space is built within the
model's window). `budget` caps the model calls of one check (the pytest plugin's
`robustcount_budget` fixture).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

try:
    from hypothesis import strategies as st
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError("robustcount.testing needs hypothesis: pip install 'robustcount[testing]'") from err

from robustcount.attacks.exhaustive import exhaustive_attack
from robustcount.attacks.result import SUCCESS, AttackResult
from robustcount.attacks.zeroe_protocol import parse_level, zeroe_attack
from robustcount.counting.pr import EstimateSettings, estimate_pr
from robustcount.errors import LimitReached
from robustcount.goal import (
    MARGIN_TOLERANCE,
    MAX_POINTS,
    InvalidAdversary,
    check_adversary,
    correct_on_input,
    judged_labels,
)
from robustcount.models.engine import QueryEngine
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, prove
from robustcount.spaces.build import SpaceBuilder
from robustcount.spaces.perturbers import get_perturber
from robustcount.spaces.space import Position, Space
from robustcount.text import Input

__all__ = [
    "assert_attack_valid",
    "assert_certified",
    "assert_never_beats_exhaustive",
    "assert_pr_at_least",
    "perturbed_inputs",
    "points",
    "small_spaces",
    "zeroe_perturbed",
]


# -- strategies -----------------------------------------------------------------------------------

def points(space: Space, radius: int) -> st.SearchStrategy:
    """Points of Omega_r as lists of changes (at most `radius`, one per position), so that
    hypothesis shrinks a failing point by dropping changes, towards the fewest substitutions and
    the earliest candidates. (Not uniform: for PR use `Space.sample`.)"""
    movable = [i for i, m in enumerate(space.sizes) if m > 0]
    if radius < 0:
        raise ValueError(f"the radius must be non-negative, got {radius}")
    if not movable or radius == 0:
        return st.just(())
    change = st.sampled_from(movable).flatmap(lambda p: st.tuples(st.just(p), st.integers(1, space.sizes[p])))
    return st.lists(change, max_size=min(radius, len(movable)), unique_by=lambda c: c[0]).map(
        lambda changes: tuple(sorted(changes)))


def perturbed_inputs(space: Space, radius: int) -> st.SearchStrategy:
    """The inputs described by `points(space, radius)`."""
    return points(space, radius).map(space.apply)


@st.composite
def small_spaces(draw, max_positions: int = 5, max_candidates: int = 3) -> Space:
    """A random space over the text "w0 w1 ...": each word has 1 to `max_candidates` substitutes
    named "w<i>s<j>"."""
    n = draw(st.integers(min_value=1, max_value=max_positions))
    positions = tuple(
        Position("word", i, (f"w{i}", *(f"w{i}s{j}" for j in range(draw(st.integers(1, max_candidates))))))
        for i in range(n)
    )
    return Space(" ".join(f"w{i}" for i in range(n)), positions)


def zeroe_perturbed(text: Input, attack: str, level: str | float) -> st.SearchStrategy:
    """`text` under the Zéroe perturber `attack` at `level`, one seed per example."""
    perturber, p = get_perturber(attack), parse_level(level)
    return st.integers(min_value=0, max_value=2**32 - 1).map(lambda seed: zeroe_attack(text, perturber, p, seed))


# -- assertions -----------------------------------------------------------------------------------

def _setup(model, text: Input, space: Space | Sequence[str], label: int | None):
    engine = model if isinstance(model, QueryEngine) else QueryEngine(model)
    if not isinstance(space, Space):
        space = SpaceBuilder(list(space), window=engine.window)(text)  # within the model's window
    elif space.item != text:
        raise ValueError("the space was built for another text")
    gold = int(engine.predict([text])[0]) if label is None else label
    if not correct_on_input(engine, text, gold):
        raise AssertionError(f"the model does not prefer {engine.labels[gold]!r} on the text itself by more than the "
                             f"margin tolerance {MARGIN_TOLERANCE:g}, so there is no robustness to check")
    return engine, space, gold


def assert_certified(model, text: Input, space: Space | Sequence[str], radius: int, *,
                     label: int | None = None, max_points: int = MAX_POINTS, budget: int | None = None) -> None:
    """Every point within `radius` substitutions keeps the label (by more than the goal's margin
    tolerance); fails with the witness."""
    engine, space, gold = _setup(model, text, space, label)
    with engine.example(budget):
        proof = prove(engine, space, gold, radius, max_points=max_points)
    if proof.status == CERTIFIED:
        return
    if proof.status == ADVERSARIAL:
        judged = int(judged_labels(engine.predict_proba([proof.witness]), gold)[0])
        raise AssertionError(
            f"not robust within {radius} substitutions: {proof.witness!r} does not keep the label "
            f"{engine.labels[gold]!r} (the model says {engine.labels[judged]!r}; "
            f"{len(proof.smallest_margin_point)} change(s), margin {proof.smallest_margin:.3g}, at most the "
            f"tolerance {MARGIN_TOLERANCE:g})")
    raise AssertionError(f"could not decide robustness within {radius}: {proof.reason}")


def assert_pr_at_least(model, text: Input, space: Space | Sequence[str], radius: int, threshold: float,
                       eps: float = 0.025, delta: float = 0.005, *, label: int | None = None,
                       seed: int = 0, budget: int | None = None) -> None:
    """PR >= `threshold` with confidence 1 - delta: the estimate's whole interval lies at or
    above it. Fails with the interval (and says when the interval straddles the threshold)."""
    engine, space, gold = _setup(model, text, space, label)
    try:
        with engine.example(budget):
            found = estimate_pr(engine, space, gold, radius, EstimateSettings(eps=eps, delta=delta, seed=seed))
    except LimitReached as exhausted:
        raise AssertionError(f"could not estimate PR: {exhausted}") from None
    if found.low >= threshold:
        return
    verdict = "below" if found.high < threshold else "not shown to be at least"
    raise AssertionError(
        f"PR {verdict} {threshold}: PR_hat = {found.pr:.4f}, interval [{found.low:.4f}, {found.high:.4f}] "
        f"at confidence {1 - delta} ({found.method}, {found.samples} samples, radius {radius}, seed {seed})")


def assert_attack_valid(attack: Callable[..., AttackResult], model, text: Input, space: Space | Sequence[str],
                        *, label: int | None = None, **options) -> AttackResult:
    """Re-check what `attack(engine, space, gold, **options)` returns: a claimed adversary must be a
    point of the space (each substitute in its position's list), its distance the number of
    changed positions, its text the point's text, and the model's label on it not the gold one."""
    engine, space, gold = _setup(model, text, space, label)
    result = attack(engine, space, gold, **options)
    if result.status != SUCCESS:
        return result
    if result.point is None:
        raise AssertionError("the attack claims success without a point")
    if result.distance != len(result.point):
        raise AssertionError(f"the attack reports distance {result.distance} for {len(result.point)} changes")
    try:
        check_adversary(engine, space, tuple(tuple(c) for c in result.point), gold, name="the claimed adversary")
    except InvalidAdversary as invalid:
        raise AssertionError(str(invalid)) from None
    if result.adversarial != space.apply(result.point):
        raise AssertionError(f"the adversarial text {result.adversarial!r} is not the point's text")
    return result


def assert_never_beats_exhaustive(attack: Callable[..., AttackResult], model, text: Input,
                                  space: Space | Sequence[str], *, label: int | None = None,
                                  max_points: int = MAX_POINTS, **options) -> None:
    """An attack never claims fewer substitutions than the exhaustive minimum (small spaces)."""
    result = assert_attack_valid(attack, model, text, space, label=label, **options)
    engine, space, gold = _setup(model, text, space, label)
    oracle = exhaustive_attack(engine, space, gold, max_points=max_points)
    if oracle.status not in (SUCCESS, "failed"):
        raise AssertionError(f"the exhaustive oracle could not run: {oracle.reason}")
    if result.status == SUCCESS and (oracle.status != SUCCESS or result.distance < oracle.distance):
        minimum = "no adversary exists" if oracle.status != SUCCESS else f"the minimum is {oracle.distance}"
        raise AssertionError(f"the attack claims {result.distance} substitution(s) but {minimum}")
