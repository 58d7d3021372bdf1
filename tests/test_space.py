import itertools
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from robustcount.errors import RobustcountError
from robustcount.spaces.space import Position, Space


def make_space(sizes, with_gap=False):
    """A space over a text of len(sizes) words, word i having sizes[i] substitutes."""
    words = [f"w{i}" for i in range(len(sizes))]
    positions = [Position("word", i, (w, *(f"{w}_{j}" for j in range(m))))
                 for i, (w, m) in enumerate(zip(words, sizes)) if m > 0]
    if with_gap and len(words) > 1:
        positions.insert(1, Position("gap", 1, (" ", "")))
    return Space(" ".join(words), tuple(positions))


def brute_force(space, radius):
    """Every point of Omega_r by the definition: all choices, kept when at most r differ."""
    ranges = [range(len(p.candidates)) for p in space.positions]
    points = []
    for choice in itertools.product(*ranges):
        changes = tuple((i, c) for i, c in enumerate(choice) if c > 0)
        if len(changes) <= radius:
            points.append(changes)
    return points


sizes_strategy = st.lists(st.integers(min_value=0, max_value=3), min_size=0, max_size=6)


@settings(max_examples=200)
@given(sizes_strategy, st.integers(min_value=0, max_value=7), st.booleans())
def test_count_and_enumeration_equal_brute_force(sizes, radius, with_gap):
    space = make_space(sizes, with_gap)
    truth = brute_force(space, radius)
    points = list(space.points(radius))
    assert space.count(radius) == len(truth) == len(points)
    assert len(set(points)) == len(points)
    assert set(points) == set(truth)
    assert points == sorted(points, key=lambda p: (len(p), [x for pair in p for x in pair]))


@settings(max_examples=200)
@given(sizes_strategy, st.integers(min_value=0, max_value=7))
def test_point_at_and_index_of_are_inverse_and_follow_the_enumeration(sizes, radius):
    space = make_space(sizes)
    for i, point in enumerate(space.points(radius)):
        assert space.point_at(i, radius) == point
        assert space.index_of(point) == i


@settings(max_examples=100)
@given(sizes_strategy, st.integers(min_value=0, max_value=7), st.randoms(use_true_random=False))
def test_the_subset_enumeration_visits_each_point_once(sizes, radius, rnd):
    space = make_space(sizes, with_gap=True)
    order = list(range(len(space.positions)))
    rnd.shuffle(order)
    visited = list(space.points_by_subset(radius, order))
    assert len(visited) == len(set(visited))
    assert sorted(visited) == sorted(space.points(radius))


def test_subset_walk_puts_deep_sets_of_important_positions_first():
    space = make_space([1, 1, 1])
    first = next(space.points_by_subset(2, order=[2, 0, 1]))
    assert [p for p, _ in first] == [0, 2]


def test_counts_use_exact_integers_beyond_floats():
    space = make_space([50] * 400)
    assert space.count(200) == sum(math.comb(400, k) * 50**k for k in range(201))
    assert space.count(200) > 2**1100  # far beyond the largest float
    point = space.point_at(space.count(200) - 1, 200)
    assert len(point) == 200 and space.index_of(point) == space.count(200) - 1


def test_sampling_is_uniform_chi_square():
    space = make_space([1, 2, 3, 2])
    radius = 2
    total = space.count(radius)
    draws = space.sample(radius, 20_000, seed=7)
    counts = Counter(space.index_of(p) for p in draws)
    observed = [counts.get(i, 0) for i in range(total)]
    assert chisquare(observed).pvalue > 0.001
    # "Random positions, then random candidates" is not uniform: the same test rejects it.
    import random

    rng = random.Random(7)
    biased = Counter()
    for _ in range(20_000):
        k = rng.randint(0, radius)
        chosen = sorted(rng.sample(range(len(space.positions)), k))
        biased[space.index_of(tuple((p, rng.randint(1, space.sizes[p])) for p in chosen))] += 1
    assert chisquare([biased.get(i, 0) for i in range(total)]).pvalue < 1e-6


def test_sampling_is_reproducible_and_exact_for_huge_spaces():
    space = make_space([40] * 60)
    assert space.sample(20, 5, seed=1) == space.sample(20, 5, seed=1)
    assert space.sample(20, 5, seed=1) != space.sample(20, 5, seed=2)
    assert all(len(p) <= 20 for p in space.sample(20, 200, seed=3))


def test_apply_builds_texts_for_words_and_gaps():
    space = make_space([1, 1], with_gap=True)
    assert space.apply(()) == "w0 w1"
    assert space.apply(((0, 1), (1, 1), (2, 1))) == "w0_0w1_0"


def test_pairs_perturb_only_the_hypothesis():
    space = Space(("premise text", "good film"), (Position("word", 1, ("film", "movie")),))
    assert space.apply(((0, 1),)) == ("premise text", "good movie")


def test_invalid_spaces_radii_and_points_are_refused():
    with pytest.raises(ValueError, match="distinct"):
        Position("word", 0, ("a", "a"))
        Space("a", (Position("word", 0, ("a", "a")),))
    space = make_space([2, 2])
    with pytest.raises(RobustcountError, match="radius"):
        space.count(-1)
    with pytest.raises(IndexError):
        space.point_at(space.count(1), 1)
    with pytest.raises(ValueError):
        space.index_of(((1, 1), (0, 1)))
    with pytest.raises(RobustcountError, match="permutation"):
        list(space.points_by_subset(1, order=[0, 0]))


def test_empty_space_holds_only_the_original():
    space = make_space([])
    assert space.count(3) == 1 and list(space.points(3)) == [()]
    assert space.sample(3, 2, seed=0) == [(), ()]


def test_digest_changes_with_any_candidate():
    a = make_space([2, 1])
    b = Space(a.item, (a.positions[0], Position("word", 1, ("w1", "w1_x"))))
    assert a.digest() == make_space([2, 1]).digest()
    assert a.digest() != b.digest()


def test_describe_lists_every_position_and_the_size():
    text = make_space([2, 0, 1]).describe(1)
    assert "word 0 'w0': 2 -> 'w0_0', 'w0_1'" in text
    assert "|Omega_1| = 4" in text


def test_counting_long_texts_is_exact_and_refuses_beyond_its_table():
    from math import comb

    from robustcount.errors import RobustcountError

    def uniform(n: int) -> Space:
        return Space(" ".join(f"w{i}" for i in range(n)),
                     tuple(Position("word", i, (f"w{i}", "a", "b", "c")) for i in range(n)))

    space = uniform(2000)
    assert space.count(500) == sum(comb(2000, k) * 3**k for k in range(501))
    assert space.index_of(space.point_at(space.count(500) - 1, 500)) == space.count(500) - 1
    with pytest.raises(RobustcountError, match="10000 positions needs a table"):
        uniform(10_000).count(2500)


@st.composite
def spaces_in_any_order(draw):
    """Spaces over a text of 1 to 5 words whose positions (words and gaps, a word twice at times)
    come in any order, candidates of any characters."""
    words = draw(st.lists(st.sampled_from(["a", "bb", "c-d", "é"]), min_size=1, max_size=5))
    separators = [""] + [draw(st.sampled_from([" ", "  ", ", "])) for _ in words[1:]] + [draw(st.sampled_from(["", "."]))]
    text = "".join(s + w for s, w in zip(separators, words)) + separators[-1]
    candidate = st.text(st.sampled_from("xy ,"), max_size=3)
    positions = []
    for kind, index in draw(st.lists(st.tuples(st.sampled_from(["word", "gap"]), st.integers(0, len(words) - 1)),
                                     max_size=5)):
        original = words[index] if kind == "word" else separators[index]
        extra = draw(st.lists(candidate.filter(lambda c, o=original: c != o), min_size=1, max_size=2, unique=True))
        positions.append(Position(kind, index, (original, *extra)))
    return Space(text, tuple(positions))


@settings(max_examples=300, deadline=None)
@given(spaces_in_any_order())
def test_apply_is_the_texts_pieces_with_each_change_in_place(space):
    """On every point: the text's separators and words with each change's candidate at its
    position's piece, a later change of a piece winning (the definition, piece by piece)."""
    tokens = space.tokens
    for point in space.points(len(space.positions)):
        pieces = [[separator] for separator in tokens.separators]
        for word, slot in zip(tokens.words, pieces):
            slot.append(word)
        for position, choice in point:
            p = space.positions[position]
            pieces[p.index][p.kind == "word"] = p.candidates[choice]
        assert space.apply(point) == "".join(piece for slot in pieces for piece in slot), point
