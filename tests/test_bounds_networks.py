"""The bounds of cnn-rt and lstm-rt against brute force on the synonym space of demo sentences:
random boxes (forced positions with candidate subsets, free positions, a cap) whose every point
the model evaluates; its logit differences lie in the bounds, and no box the bounds certify holds
a point that leaves the gold label. Unsupported models and spaces are refused in one line."""

import random

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from robustcount.bounds.boxes import Box
from robustcount.bounds.decide import certifies, margin_lower_bound
from robustcount.bounds.intervals import Interval
from robustcount.bounds.layers import least_total, stacked
from robustcount.bounds.networks import bounds_for
from robustcount.bounds.slots import token_slots
from robustcount.data import label_index, load_demo
from robustcount.errors import RobustcountError
from robustcount.goal import MARGIN_TOLERANCE, keeps_label, margin
from robustcount.models.families.word_networks import GloveWords
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.models.zoo import load_model
from robustcount.spaces.build import build_space
from robustcount.spaces.space import Position, Space
from tests.factories import keyword_model

EXAMPLES = load_demo("test")[:8]


def synonym_problem(classifier, example):
    """The synonym space of `example`, its gold label for `classifier` and the space's token slots."""
    space = build_space(example.input, ["synonyms"])
    return space, label_index(example.label, classifier.labels), token_slots(classifier.tokenizer, space)


@pytest.fixture(scope="module")
def cnn_bounds(cnn_rt):
    return bounds_for(cnn_rt)


def random_box(space: Space, rng: random.Random) -> Box:
    positions = [p for p, m in enumerate(space.sizes) if m > 0]
    rng.shuffle(positions)
    forced_count = rng.randint(0, min(2, len(positions)))
    forced = tuple(sorted((p, tuple(sorted(rng.sample(range(1, space.sizes[p] + 1), rng.randint(1, space.sizes[p])))))
                          for p in positions[:forced_count]))
    free = tuple(sorted(positions[forced_count : forced_count + rng.randint(0, 3)]))
    return Box(forced, free, rng.randint(0, len(free)))


def logits(classifier, texts):
    with torch.inference_mode():
        ids = classifier.tokenizer(texts).inputs["input_ids"]
        return torch.cat([classifier.module(ids[i : i + 256]) for i in range(0, len(ids), 256)]).double()


@pytest.mark.parametrize("name, examples, per_example", [("cnn-rt", 6, 6), ("lstm-rt", 3, 3)])
def test_bounds_hold_every_point_of_random_boxes(name, examples, per_example):
    """Every point of random boxes (corners included: a box's points are its corners) inside the
    bounds, in the model's float32 logits; the LSTM's with a small noise budget, so that its
    reduction (boxing symbols) runs at every step."""
    classifier = load_model(name, device="cpu")
    bounds = bounds_for(classifier)
    if name == "lstm-rt":
        bounds.budget = 2 * bounds.hidden + 100
    rng = random.Random(0)
    bounded = certified = 0
    for example in EXAMPLES[:examples]:
        space, gold, slots = synonym_problem(classifier, example)
        boxes = [random_box(space, rng) for _ in range(per_example)]
        together = bounds.differences([box.slots(slots) for box in boxes], gold)
        for b, box in enumerate(boxes):
            points = list(box.points(space))
            assert len(points) == box.count(space) and len(set(points)) == len(points)
            differences = together[b]
            if b == 0 or name == "cnn-rt":  # the LSTM alone once per example (its pass is dear)
                alone = bounds.differences([box.slots(slots)], gold)[0]
                assert torch.allclose(alone.lo, differences.lo) and torch.allclose(alone.hi, differences.hi)
            texts = [space.apply(p) for p in points]
            z = logits(classifier, texts)
            assert differences.contains(z[:, gold : gold + 1] - z)
            margins = margin(classifier.predict_proba(texts), gold)
            assert margin_lower_bound(differences, gold) <= margins.min() + 1e-6
            if certifies(differences, gold, MARGIN_TOLERANCE):
                certified += 1
                assert keeps_label(classifier.predict_proba(texts), gold).all()
            bounded += 1
    assert bounded == examples * per_example and (certified > 0 or name == "lstm-rt")  # see the next test


def test_lstm_bounds_are_tight_on_single_points_and_certify_level_one_boxes():
    """The LSTM's float32 rounding is not amplified through the recurrence: a single point's bound
    is narrow (interval propagation made it 3 to 49 wide), and boxes of one position changed to
    any of its candidates are certified where all their points keep the label by a margin."""
    classifier = load_model("lstm-rt", device="cpu")
    bounds = bounds_for(classifier)
    example = EXAMPLES[3]
    space, gold, slots = synonym_problem(classifier, example)
    changeable = [p for p, m in enumerate(space.sizes) if m > 0]
    singles = [Box(((p, (1,)),), (), 0) for p in changeable]
    whole = [Box(((p, tuple(range(1, space.sizes[p] + 1))),), (), 0) for p in changeable]
    differences = bounds.differences([box.slots(slots) for box in singles + whole], gold)
    z = logits(classifier, [space.apply(p) for box in singles + whole for p in box.points(space)])
    assert Interval(differences.lo.repeat_interleave(torch.tensor([box.count(space) for box in singles + whole]), 0),
                    differences.hi.repeat_interleave(torch.tensor([box.count(space) for box in singles + whole]), 0)
                    ).contains(z[:, gold : gold + 1] - z)
    assert float((differences.hi - differences.lo)[: len(singles)].max()) < 0.5
    assert sum(certifies(differences[len(singles) + b], gold, MARGIN_TOLERANCE) for b in range(len(whole))) >= 1


def test_the_cap_tightens_the_cnn_and_stays_sound():
    """A box of r free positions with cap 1 is bounded tighter than the same box with cap r (and
    the cap-1 bound holds every point at distance at most 1)."""
    classifier = load_model("cnn-rt", device="cpu")
    bounds = bounds_for(classifier)
    example = EXAMPLES[1]
    space, gold, slots = synonym_problem(classifier, example)
    free = tuple(p for p, m in enumerate(space.sizes) if m > 0)
    both = bounds.differences([Box((), free, cap).slots(slots) for cap in (1, len(free))], gold)
    one, every = both[0], both[1]
    assert bool((one.hi - one.lo <= every.hi - every.lo).all()) and bool((one.hi - one.lo < every.hi - every.lo).any())
    z = logits(classifier, [space.apply(p) for p in Box((), free, 1).points(space)])
    assert one.contains(z[:, gold : gold + 1] - z)


def test_the_cnns_two_lower_bounds_each_hold_and_each_is_sometimes_the_tighter():
    """The interval bound and the output layer back-substituted to the embeddings, each alone,
    against every point of boxes of free positions under a cap (and of forced positions)."""
    classifier = load_model("cnn-rt", device="cpu")
    bounds = bounds_for(classifier)
    rng = random.Random(2)
    tighter = {"interval": 0, "linear": 0}
    for example in EXAMPLES:
        space, gold, slots = synonym_problem(classifier, example)
        changeable = [p for p, m in enumerate(space.sizes) if m > 0]
        boxes = [Box((), tuple(sorted(rng.sample(changeable, min(len(changeable), 4)))), cap) for cap in (1, 2)]
        boxes += [random_box(space, rng) for _ in range(4)]
        intervals, linear = bounds.both([box.slots(slots) for box in boxes], gold)
        for b, box in enumerate(boxes):
            z = logits(classifier, [space.apply(p) for p in box.points(space)])
            lowest = (z[:, gold : gold + 1] - z).amin(dim=0)
            assert bool((intervals.lo[b] <= lowest).all()) and bool((linear[b] <= lowest).all())
            other = 1 - gold
            tighter["interval" if intervals.lo[b, other] > linear[b, other] else "linear"] += 1
    assert min(tighter.values()) > 0, tighter


def test_the_back_substituted_bound_is_minimised_exactly_over_each_box():
    """Its linear part, sum_t v_t . (embedding(id_t) - embedding(clean_t)), is minimised over the
    box exactly (cap included): equal to the minimum over the box's points."""
    classifier = load_model("cnn-rt", device="cpu")
    bounds = bounds_for(classifier)
    rng = random.Random(3)
    for example in EXAMPLES[:4]:
        space, gold, slots = synonym_problem(classifier, example)
        changeable = [p for p, m in enumerate(space.sizes) if m > 0]
        boxes = [Box((), tuple(changeable[:5]), cap) for cap in range(min(len(changeable), 5) + 1)]
        boxes += [random_box(space, rng) for _ in range(6)]
        prepared = bounds.prepared(slots.universe, gold)
        slot = {int(column): k for k, column in enumerate(prepared.changeable)}
        _, allowed, free, caps = stacked([box.slots(slots) for box in boxes])
        values = prepared.every_values
        least = least_total(values[None], allowed[:, prepared.changeable], free[:, prepared.changeable], caps)
        for b, box in enumerate(boxes):
            totals = [sum((values[slot[slots.column[p]], c] for p, c in point if slots.column[p] in slot),
                          torch.zeros(len(classifier.labels), dtype=torch.float64)) for point in box.points(space)]
            assert torch.allclose(least[b], torch.stack(totals).amin(dim=0), atol=1e-9)


@settings(max_examples=12, deadline=None)
@given(example=st.sampled_from(EXAMPLES), seed=st.integers(0, 10**6),
       shape=st.sampled_from(["clean", "one candidate", "all forced", "all free", "random"]))
def test_the_cnn_bounds_hold_on_corner_boxes(cnn_rt, cnn_bounds, example, seed, shape):
    """cnn-rt's bounds (the windows no changeable column reaches computed once per input, the
    touched ones per box) against every point's float32 logits, on boxes with no free position
    and no change (the clean input), one position forced to one candidate, every changeable
    position forced to a random subset, every position free under a random cap, and random
    boxes; each box bounded alone and in a batch with the others alike."""
    rng = random.Random(seed)
    space = build_space(example.input, ["synonyms"])
    gold = label_index(example.label, cnn_rt.labels)
    slots = token_slots(cnn_rt.tokenizer, space)
    changeable = [p for p, m in enumerate(space.sizes) if m > 0]
    if shape == "clean" or not changeable:
        box = Box((), (), 0)
    elif shape == "one candidate":
        p = rng.choice(changeable)
        box = Box(((p, (rng.randint(1, space.sizes[p]),)),), (), 0)
    elif shape == "all forced":
        box = Box(tuple((p, tuple(sorted(rng.sample(range(1, space.sizes[p] + 1), rng.randint(1, min(2, space.sizes[p]))))))
                        for p in changeable[:8]), (), 0)
    elif shape == "all free":
        box = Box((), tuple(changeable), rng.randint(0, min(3, len(changeable))))
    else:
        box = random_box(space, rng)
    others = [random_box(space, rng) for _ in range(3)]
    together = cnn_bounds.differences([b.slots(slots) for b in [*others, box]], gold)[len(others)]
    alone = cnn_bounds.differences([box.slots(slots)], gold)[0]
    assert torch.allclose(alone.lo, together.lo, atol=1e-12) and torch.allclose(alone.hi, together.hi, atol=1e-12)
    points = list(box.points(space))
    z = logits(cnn_rt, [space.apply(p) for p in points])
    assert alone.contains(z[:, gold : gold + 1] - z)
    if certifies(alone, gold, MARGIN_TOLERANCE):
        assert keeps_label(cnn_rt.predict_proba([space.apply(p) for p in points]), gold).all()


def test_the_cnns_lower_bound_keeps_the_better_filters_linear():
    """The back-substituted bound takes the larger of two choices of filters kept linear (every
    active one; only those whose interval bound is no better than their peak window's), and the
    second is strictly the tighter on some boxes: the bound is at least the interval one and the
    first choice's, and above both somewhere."""
    classifier = load_model("cnn-rt", device="cpu")
    bounds = bounds_for(classifier)
    rng = random.Random(4)
    above = 0
    for example in EXAMPLES:
        space, gold, slots = synonym_problem(classifier, example)
        if not any(space.sizes):
            continue
        boxes = [Box.ball(space, r) for r in (1, 2, 3)] + [random_box(space, rng) for _ in range(6)]
        universe, allowed, free, caps = stacked([box.slots(slots) for box in boxes])
        prepared = bounds.prepared(universe, gold)
        intervals, linear = prepared.bounds(allowed, free, caps)
        pooled, _, star_slack = prepared._pooled(allowed[:, prepared.changeable], free[:, prepared.changeable], caps)
        every = prepared._linear_with((prepared.positive * prepared.active).expand(len(boxes), -1, -1),
                                      prepared.every_values.expand(len(boxes), -1, -1, -1),
                                      allowed[:, prepared.changeable], free[:, prepared.changeable], caps, pooled,
                                      star_slack) - prepared.out.slack(pooled, gold)
        other = 1 - gold
        assert bool((linear[:, other] >= every[:, other] - 1e-12).all())
        above += int((linear[:, other] > torch.maximum(every[:, other], intervals.lo[:, other]) + 1e-9).sum())
    assert above > 0


def test_unsupported_models_and_spaces_are_refused():
    with pytest.raises(RobustcountError, match="bounds support the word-cnn and word-lstm"):
        bounds_for(keyword_model())
    with pytest.raises(RobustcountError, match="bounds support the word-cnn and word-lstm"):
        bounds_for(TorchClassifier(nn.Linear(3, 2), GloveWords(["a"]), ["negative", "positive"]))
    classifier = load_model("cnn-rt", device="cpu")
    several_words = Space("a fine film about love today", (Position("word", 1, ("fine", "very good")),))
    with pytest.raises(RobustcountError, match="changes the number of tokens"):
        token_slots(classifier.tokenizer, several_words)


def test_positions_the_model_cannot_see_drop_out():
    """A candidate with another casing reads as the same token: its column is known, its id the
    original's; a gap (separator) change reaches no token at all."""
    classifier = load_model("cnn-rt", device="cpu")
    space = Space("a fine film .", (Position("word", 1, ("fine", "Fine", "good")), Position("gap", 2, (" ", "  "))))
    slots = token_slots(classifier.tokenizer, space)
    assert slots.column == (1, None)
    assert slots.candidate_ids[0][0] == slots.candidate_ids[0][1] != slots.candidate_ids[0][2]
    assert np.isfinite(margin_lower_bound(bounds_for(classifier).differences([Box.ball(space, 2).slots(slots)], 0)[0], 0))
