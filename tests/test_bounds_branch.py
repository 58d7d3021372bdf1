"""Branch and bound gives the simple prover's answers (certified / adversarial with a re-checked
witness / undecided), on cnn-rt and lstm-rt over the synonym space of demo:test sentences; its
boxes partition Omega_r."""

import random

import pytest

from robustcount.bounds.boxes import Box
from robustcount.data import label_index, load_demo
from robustcount.goal import check_adversary, correct_on_input
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.proofs.branch import prove_with_bounds
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, UNDECIDED, prove
from robustcount.spaces.build import build_space

EXAMPLES = load_demo("test")[:12]


def test_splits_partition_their_box():
    rng = random.Random(1)
    space = build_space(EXAMPLES[1].input, ["synonyms"])
    box = Box.ball(space, 3)
    assert set(box.points(space)) == set(space.points(3)) and box.count(space) == space.count(3)
    for _ in range(30):
        parts = box.split(space, rng.choice(box.splittable()))
        points = [p for part in parts for p in part.points(space)]
        assert sorted(points) == sorted(box.points(space)) and sum(p.count(space) for p in parts) == box.count(space)
        box = max((p for p in parts if p.splittable()), key=lambda p: p.count(space), default=None)
        if box is None:
            break


@pytest.mark.parametrize("name, radii, largest, enumerate_below", [("cnn-rt", (1, 2, 3), 250, 4),
                                                                    ("lstm-rt", (1, 2), 60, 16)])
def test_answers_are_the_simple_provers(name, radii, largest, enumerate_below):
    classifier = load_model(name, device="cpu")
    statuses, by_bounds = set(), 0
    for example in EXAMPLES:
        engine = QueryEngine(classifier)
        gold = label_index(example.label, classifier.labels)
        if not correct_on_input(engine, example.input, gold):
            continue
        space = build_space(example.input, ["synonyms"])
        for radius in radii:
            if space.count(radius) > largest:
                break
            simple = prove(engine, space, gold, radius)
            bound = prove_with_bounds(engine, space, gold, radius, enumerate_below=enumerate_below)
            assert bound.status == simple.status, (example.id, radius)
            statuses.add(bound.status)
            by_bounds += bound.certified_by_bounds
            if bound.status == CERTIFIED:
                assert bound.checked + bound.certified_by_bounds == bound.total
            if bound.status == ADVERSARIAL:
                assert check_adversary(engine, space, bound.smallest_margin_point, gold, radius=radius) \
                    == bound.smallest_margin and bound.witness == space.apply(bound.smallest_margin_point)
                break
    assert statuses == {CERTIFIED, ADVERSARIAL}
    assert by_bounds > 0 or name == "lstm-rt"


def test_limits_leave_the_proof_undecided():
    classifier = load_model("cnn-rt", device="cpu")
    example = EXAMPLES[1]
    space = build_space(example.input, ["synonyms"])
    gold = label_index(example.label, classifier.labels)
    engine = QueryEngine(classifier)
    too_many = prove_with_bounds(engine, space, gold, 3, max_points=10, enumerate_below=64)
    assert too_many.status == UNDECIDED and "more than 10 points left to enumerate" in too_many.reason
    with engine.example(budget=5):
        spent = prove_with_bounds(engine, space, gold, 3, enumerate_below=64)
    assert spent.status == UNDECIDED and "budget" in spent.reason
