"""The word networks answer a text exactly as they answer it alone, and on them the prover and the
attacks agree with brute force computed one text at a time, under sources that change the number
of words (`segment` joins two words, `intrude` may insert a space)."""

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robustcount.attacks.exhaustive import exhaustive_attack
from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.result import FAILED, SUCCESS, run_attack
from robustcount.data import DEMO_LABELS, load_demo
from robustcount.goal import is_adversarial, keeps_label
from robustcount.models.batch_probe import BATCH_INVARIANT, BATCH_TOLERANCE
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, certify_radii
from robustcount.spaces.build import build_space
from robustcount.text import tokenize

TEST = {example.id: example for example in load_demo("test")}
SHORT = sorted(i for i, example in TEST.items() if len(tokenize(example.input).words) <= 7)
CHANGED_ON_OLD_CODE = ("rt-4989", "rt-3668", "rt-12645", "rt-10698")
"""Short demo:test texts on which the padding leak of the old cnn-rt gave a false certificate, a
witness that keeps the label alone, or a wrong radius (`segment`, radius 2)."""
SPACES = {"segment": {}, "intrude": {"max_candidates": 2}}
RADIUS = 2


@pytest.fixture(scope="module", params=["cnn-rt", "lstm-rt"])
def network(request):
    return load_model(request.param, device="cpu")


def test_a_text_beside_a_long_text_gets_its_answer_alone(network):
    short = "Nothing special but still good fun."
    longest = max((e.input for e in TEST.values()), key=lambda text: len(tokenize(text).words))
    alone = network.predict_proba([short])[0]
    assert np.abs(network.predict_proba([short, longest])[0] - alone).max() <= BATCH_TOLERANCE
    assert np.abs(network.predict_proba([longest, short, "fun"])[1] - alone).max() <= BATCH_TOLERANCE
    assert QueryEngine(network).batching() == BATCH_INVARIANT


def agrees_with_brute_force_alone(network, example_id: str, source: str) -> None:
    """The prover's radius and witness, the exhaustive oracle's distance and every PDP adversary
    agree with the model's answers on each point of Omega_RADIUS computed one text at a time."""
    example = TEST[example_id]
    gold = DEMO_LABELS.index(example.label)
    space = build_space(example.input, [source], **SPACES[source])
    points = list(space.points(RADIUS))

    def adversarial_alone(point) -> bool:
        return bool(is_adversarial(network.predict_proba([space.apply(point)]), gold)[0])

    assert keeps_label(network.predict_proba([example.input]), gold)[0] and space.positions, example_id
    distances = [len(point) for point in points if adversarial_alone(point)]
    minimum = min(distances, default=None)
    proofs = certify_radii(QueryEngine(network), space, gold, RADIUS)
    certified = sum(proof.status == CERTIFIED for proof in proofs)
    assert certified == min(RADIUS, space.max_radius()) if minimum is None else certified == minimum - 1
    if minimum is not None:
        witness = proofs[-1]
        assert witness.status == ADVERSARIAL and len(witness.smallest_margin_point) == minimum
        assert adversarial_alone(witness.smallest_margin_point)
    oracle = exhaustive_attack(QueryEngine(network), space, gold, radius=RADIUS)
    assert (oracle.status, oracle.distance) == ((FAILED, None) if minimum is None else (SUCCESS, minimum))
    for beam in (1, 10):
        found = run_attack("pdp", pdp_attack, QueryEngine(network), space, gold, beam=beam, radius=RADIUS)
        if found.status == SUCCESS:
            assert adversarial_alone(found.point) and found.distance >= minimum


@pytest.mark.parametrize("source", SPACES)
@pytest.mark.parametrize("example_id", CHANGED_ON_OLD_CODE)
def test_proofs_and_attacks_agree_with_brute_force_one_text_at_a_time(network, example_id, source):
    agrees_with_brute_force_alone(network, example_id, source)


@cache
def attackable(name: str, source: str) -> tuple[str, ...]:
    """The short demo:test texts that the network `name` classifies right and whose `source` space
    has a position to change: the texts there is something to compare on (79% of SHORT)."""
    network = load_model(name, device="cpu")
    return tuple(i for i in SHORT if build_space(TEST[i].input, [source], **SPACES[source]).positions
                 and keeps_label(network.predict_proba([TEST[i].input]), DEMO_LABELS.index(TEST[i].label))[0])


@settings(max_examples=6, derandomize=True)
@given(source=st.sampled_from(sorted(SPACES)), data=st.data())
def test_on_short_demo_texts_proofs_and_attacks_agree_with_brute_force(network, source, data):
    example_id = data.draw(st.sampled_from(attackable(network.name, source)), label="example_id")
    agrees_with_brute_force_alone(network, example_id, source)
