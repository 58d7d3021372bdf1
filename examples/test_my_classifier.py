"""A worked example: robustness checks for your own classifier and attacker, in your own suite.

Run it like any test file: `pytest examples/test_my_classifier.py` (robustcount's pytest plugin is
active once robustcount is installed; `--robustness-skip` skips the slow checks).
"""

from pathlib import Path

import pytest
from hypothesis import given, settings

from robustcount.attacks.pdp import pdp_attack
from robustcount.models import FunctionClassifier
from robustcount.spaces import build_space
from robustcount.testing import (
    assert_attack_valid,
    assert_certified,
    assert_never_beats_exhaustive,
    assert_pr_at_least,
    perturbed_inputs,
    small_spaces,
)

NEGATIVE = {"bad", "awful", "dull", "boring"}


def my_classifier():
    """Your model: anything with labels and predict_proba, or a function wrapped like this."""
    def classify(texts):
        return ["negative" if NEGATIVE & set(t.lower().split()) else "positive" for t in texts]
    return FunctionClassifier(classify, ["negative", "positive"], output="label")


TEXT = "a great and moving film"


def test_typos_cannot_flip_it():
    # Every way of truncating or disemvowelling up to two words keeps the label.
    assert_certified(my_classifier(), TEXT, ["truncate", "disemvowel"], radius=2)


@pytest.mark.robustness
def test_most_keyboard_slips_keep_the_label(robustcount_seed, robustcount_budget):
    assert_pr_at_least(my_classifier(), TEXT, ["keyboard"], radius=2, threshold=0.95, eps=0.02, delta=0.01,
                       seed=robustcount_seed, budget=robustcount_budget)


def test_my_attacker_reports_honestly():
    space = build_space(TEXT, [f"table:{Path(__file__).with_name('neighbours.json')}"])
    assert_attack_valid(pdp_attack, my_classifier(), TEXT, space)
    assert_never_beats_exhaustive(pdp_attack, my_classifier(), TEXT, space)


@settings(max_examples=25, deadline=None)
@given(space=small_spaces(max_positions=4))
def test_my_attacker_on_random_spaces(space):
    assert_never_beats_exhaustive(pdp_attack, my_classifier(), space.item, space)


@settings(max_examples=50)
@given(text=perturbed_inputs(build_space(TEXT, ["truncate"]), radius=2))
def test_truncations_stay_positive(text):
    assert my_classifier().predict_proba([text])[0].argmax() == 1
