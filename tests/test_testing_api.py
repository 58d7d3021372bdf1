import random

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.result import SUCCESS, AttackResult
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.spaces.space import Position, Space
from robustcount.testing import (
    assert_attack_valid,
    assert_certified,
    assert_never_beats_exhaustive,
    assert_pr_at_least,
    perturbed_inputs,
    points,
    small_spaces,
    zeroe_perturbed,
)
from robustcount.text import tokenize

NEGATIVE = {"dull", "awful", "bad"}


def keyword_model():
    """A real rule-based sentiment classifier: negative when it sees a negative word."""
    def classify(batch):
        return [0 if NEGATIVE & {w.lower() for w in tokenize(t).words} else 1 for t in batch]
    return FunctionClassifier(classify, ["negative", "positive"], output="label", name="keywords")


def review_space(with_bad_word: bool) -> Space:
    text = "a great fun film"
    great = ("great", "fine", "dull") if with_bad_word else ("great", "fine", "grand")
    return Space(text, (Position("word", 1, great), Position("word", 2, ("fun", "enjoyable")),
                        Position("word", 3, ("film", "movie", "picture"))))


def test_assert_certified_passes_on_a_robust_case():
    assert_certified(keyword_model(), "a great fun film", review_space(False), radius=3)


def test_assert_certified_fails_with_the_witness():
    with pytest.raises(AssertionError, match=r"not robust within 2 substitutions: 'a dull .*' does not keep the label "
                                               r"'positive' \(the model says 'negative'"):
        assert_certified(keyword_model(), "a great fun film", review_space(True), radius=2)


def test_assert_certified_reports_a_budget_that_ran_out():
    with pytest.raises(AssertionError, match="budget exhausted"):
        assert_certified(keyword_model(), "a great fun film", review_space(False), radius=3, budget=3)


def test_assert_pr_at_least_passes_and_fails_with_the_interval():
    assert_pr_at_least(keyword_model(), "a great fun film", review_space(False), 3, threshold=0.9, eps=0.05, delta=0.05)
    with pytest.raises(AssertionError, match=r"PR below 0.9: PR_hat = 0\.\d+, interval \[0\.\d+, 0\.\d+\]"):
        assert_pr_at_least(keyword_model(), "a great fun film", review_space(True), 3, threshold=0.9,
                           eps=0.05, delta=0.05)


def test_assert_attack_valid_accepts_pdp_and_catches_a_lying_attack():
    result = assert_attack_valid(pdp_attack, keyword_model(), "a great fun film", review_space(True))
    assert result.status == SUCCESS and result.distance == 1

    def liar(engine, space, gold):
        point = ((0, 1),)  # "fine" keeps the label
        return AttackResult("liar", SUCCESS, space.item, gold, adversarial=space.apply(point), point=point,
                            distance=1)

    with pytest.raises(AssertionError, match="keeps the label 'positive'"):
        assert_attack_valid(liar, keyword_model(), "a great fun film", review_space(True))

    def outside(engine, space, gold):
        point = ((0, 7),)
        return AttackResult("outside", SUCCESS, space.item, gold, adversarial="a x fun film", point=point,
                            distance=1)

    with pytest.raises(AssertionError, match="not a point of the space"):
        assert_attack_valid(outside, keyword_model(), "a great fun film", review_space(True))


def test_assert_never_beats_exhaustive_catches_an_understated_distance():
    assert_never_beats_exhaustive(pdp_attack, keyword_model(), "a great fun film", review_space(True))
    # The model turns negative only on two negative words, so an adversary needs two changes.
    text = "a great fine film"
    space = Space(text, (Position("word", 1, ("great", "bad")), Position("word", 2, ("fine", "awful"))))
    two_words = FunctionClassifier(
        lambda batch: [0 if len(NEGATIVE & set(t.split())) >= 2 else 1 for t in batch], ["negative", "positive"],
        output="label")

    def understates(engine, space, gold):
        point = ((0, 1), (1, 1))
        return AttackResult("understates", SUCCESS, space.item, gold, adversarial=space.apply(point), point=point,
                            distance=1)

    with pytest.raises(AssertionError, match="reports distance 1 for 2 changes"):
        assert_never_beats_exhaustive(understates, two_words, text, space)


def test_source_names_build_the_space():
    assert_certified(keyword_model(), "a great film", ["truncate"], radius=1)


@settings(max_examples=50)
@given(st_space=small_spaces())
def test_small_spaces_are_valid(st_space):
    assert st_space.count(1) >= 2
    assert all(p.candidates[0] == f"w{p.index}" for p in st_space.positions)


def test_points_shrink_to_the_smallest_counterexample():
    space = review_space(True)
    for seed in range(5):
        found = find(points(space, 3), lambda p: keyword_model().predict_proba([space.apply(p)])[0].argmax() == 0,
                     settings=settings(database=None), random=random.Random(seed))
        assert found == ((0, 2),)  # one change: "great" -> "dull"


@settings(max_examples=100)
@given(data=st.data())
def test_points_are_points_of_the_space(data):
    space = data.draw(small_spaces())
    radius = data.draw(st.integers(0, 4))
    point = data.draw(points(space, radius))
    space.check_point(point)
    assert len(point) <= radius


@settings(max_examples=30)
@given(text=perturbed_inputs(review_space(False), 2))
def test_perturbed_inputs_stay_in_the_space(text):
    assert text.startswith("a ") and len(tokenize(text).words) == 4


@settings(max_examples=20)
@given(text=zeroe_perturbed("adversarial attacks are harmless", "truncate", "high"))
def test_zeroe_perturbed_texts(text):
    words = text.split()
    assert len(words) == 4 and all(len(w) >= 2 for w in words)


def test_plugin_options_and_marker(pytester):
    pytester.makepyfile(
        """
        import pytest

        def test_seed(robustcount_seed, robustcount_budget):
            assert robustcount_seed == 7 and robustcount_budget == 100

        @pytest.mark.robustness
        def test_slow():
            pass
        """
    )
    # The plugin loads through its pytest11 entry point, as in a user's project.
    result = pytester.runpytest("--robustcount-seed", "7",
                                "--robustcount-budget", "100", "--robustness-skip")
    result.assert_outcomes(passed=1, skipped=1)


def test_the_documented_example_passes(pytester):
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    pytester.makepyfile(test_example=(root / "examples" / "test_my_classifier.py").read_text())
    (pytester.path / "neighbours.json").write_text((root / "examples" / "neighbours.json").read_text())
    pytester.runpytest("-q").assert_outcomes(passed=5)
    pytester.runpytest("-q", "--robustness-skip").assert_outcomes(passed=4, skipped=1)


def test_assertions_refuse_a_text_the_model_does_not_label_beyond_the_tolerance():
    """Gold is the model's own label on the text; at a tie there is none, and no proof is attempted."""
    tie = FunctionClassifier(lambda texts: [[0.5, 0.5] for _ in texts], ["negative", "positive"], name="tie")
    with pytest.raises(AssertionError, match="no robustness to check"):
        assert_certified(tie, "good film", ["truncate"], 1)
