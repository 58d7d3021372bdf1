"""One rule: a point keeps the gold label only when its margin is above MARGIN_TOLERANCE, so an exact
tie, or a lead within float noise, is adversarial, in either label order and for every algorithm."""

import numpy as np
import pytest

from robustcount.attacks.exhaustive import exhaustive_attack
from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.result import SKIPPED, SUCCESS, run_attack
from robustcount.counting.pr import exact_pr
from robustcount.goal import MARGIN_TOLERANCE, is_adversarial, keeps_label, margin
from robustcount.models.engine import QueryEngine
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.proofs.certificate import make_certificate, verify_certificate
from robustcount.proofs.prover import ADVERSARIAL, prove
from robustcount.spaces.build import build_space
from robustcount.spaces.space import Position, Space
from robustcount.testing import assert_attack_valid, assert_certified


def tie_model(labels, sure_of: int = 0):
    """Sure of labels[sure_of] on any text without "tie"; exactly 0.5 / 0.5 on texts with it."""
    sure = [0.9, 0.1] if sure_of == 0 else [0.1, 0.9]

    def classify(batch):
        return np.array([[0.5, 0.5] if "tie" in text.split() else sure for text in batch])

    return FunctionClassifier(classify, labels, name="tie")


SPACE = Space("good film", (Position("word", 0, ("good", "tie")), Position("word", 1, ("film", "movie"))))


def test_the_rule_itself():
    probs = np.array([[0.5, 0.5], [0.6, 0.4], [0.4, 0.6], [0.50003, 0.49997], [0.5001, 0.4999]])
    assert margin(probs, 0).tolist() == pytest.approx([0.0, 0.2, -0.2, 6e-5, 2e-4])
    assert MARGIN_TOLERANCE == 1e-4
    assert keeps_label(probs, 0).tolist() == [False, True, False, False, True]
    assert keeps_label(probs, 1).tolist() == [False, False, True, False, False]
    assert keeps_label(probs, 0, tolerance=0).tolist() == [False, True, False, True, True]
    assert (is_adversarial(probs, 0) == ~keeps_label(probs, 0)).all()


def near_tie_model():
    """Sure of "positive" on any text without "near"; ahead by only 6e-5 on texts with it."""

    def classify(batch):
        return np.array([[0.49997, 0.50003] if "near" in text.split() else [0.1, 0.9] for text in batch])

    return FunctionClassifier(classify, ["negative", "positive"], name="near-tie")


def test_a_lead_within_the_tolerance_is_adversarial_for_every_algorithm(tmp_path):
    """A point the gold label wins by 6e-5 (float noise) is an adversary for the prover, both
    attacks, PR and the testing API; `verify` accepts no certificate that chooses another tolerance."""
    table = tmp_path / "table.json"
    table.write_text('{"good": ["near"], "film": ["movie"]}')
    space = build_space("good film", [f"table:{table}"])
    model = near_tie_model()
    engine = QueryEngine(model)
    proof = prove(engine, space, 1, 1)
    assert proof.status == ADVERSARIAL and proof.smallest_margin == pytest.approx(6e-5)
    certificate = make_certificate("x", space, 1, model.labels, proof, "near-tie", engine.digest(), engine.batching())
    assert certificate["margin_tolerance"] == MARGIN_TOLERANCE
    assert verify_certificate(certificate, engine, allow_files=True).holds
    strict = {**certificate, "margin_tolerance": 0.0}  # under which the witness would keep the label
    assert "margin_tolerance must be 0.0001" in verify_certificate(strict, engine, allow_files=True).reason
    for attack in (pdp_attack, exhaustive_attack):
        result = run_attack("x", attack, QueryEngine(model), space, 1)
        assert result.status == SUCCESS and result.point == ((0, 1),)
        assert_attack_valid(attack, model, "good film", space, label=1)
    assert exact_pr(QueryEngine(model), space, 1, 1).pr == pytest.approx(2 / 3)
    with pytest.raises(AssertionError, match="does not keep the label 'positive'"):
        assert_certified(model, "good film", space, 1)


@pytest.mark.parametrize("labels", [("negative", "positive"), ("positive", "negative")])
@pytest.mark.parametrize("gold_first", [True, False])
def test_a_tie_is_adversarial_in_either_label_order(tmp_path, labels, gold_first):
    """The clean text's label is gold; whether gold comes first or second, the tie is adversarial."""
    table = tmp_path / "table.json"
    table.write_text('{"good": ["tie"], "film": ["movie"]}')
    space = build_space("good film", [f"table:{table}"])
    gold = 0 if gold_first else 1
    model = tie_model(list(labels), sure_of=gold)
    engine = QueryEngine(model)
    proof = prove(engine, space, gold, 1)
    assert proof.status == ADVERSARIAL and proof.smallest_margin_point == ((0, 1),)
    certificate = make_certificate("x", space, gold, model.labels, proof, "tie", engine.digest(), engine.batching())
    assert verify_certificate(certificate, engine, allow_files=True).holds
    for attack in (pdp_attack, exhaustive_attack):
        result = run_attack("x", attack, QueryEngine(model), space, gold)
        assert result.status == SUCCESS and result.point == ((0, 1),) and result.margin == 0.0
    assert exact_pr(QueryEngine(model), space, gold, 1).pr == pytest.approx(2 / 3)


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_a_tied_clean_input_is_not_attacked(order):
    labels = ["negative", "positive"]
    model = FunctionClassifier(lambda batch: np.array([[0.5, 0.5]] * len(batch)), labels, name="flat")
    for gold in order:
        result = run_attack("x", pdp_attack, QueryEngine(model), SPACE, gold)
        assert result.status == SKIPPED


def test_judged_labels_call_a_tie_wrong_in_either_label_order_and_textfooler_asks_them():
    """TextFooler's label-flip case judges with the goal's rule (`judged_labels`): a tie, or a lead
    within the tolerance, is not the gold label (argmax called a tie the first label's)."""
    from robustcount.attacks.textfooler import _importance, get_setting
    from robustcount.goal import judged_labels

    probs = np.array([[0.5, 0.5], [0.50003, 0.49997], [0.9, 0.1], [0.1, 0.9]])
    assert judged_labels(probs, 0).tolist() == [1, 1, 0, 1]
    assert judged_labels(probs, 1).tolist() == [0, 0, 0, 1]
    assert judged_labels(probs, None).tolist() == [0, 0, 0, 1]  # no gold label: the most probable, nothing judged
    # TextFooler's importance: deleting "good" leaves a tie, a flip, so the other label's rise counts too
    engine = QueryEngine(FunctionClassifier(
        lambda batch: np.array([[0.9, 0.1] if "good" in t.split() else [0.5, 0.5] for t in batch]),
        ["negative", "positive"], name="good"))
    space = Space("good film", (Position("word", 0, ("good", "fine")),))
    base = engine.predict_proba([space.item])[0]
    assert _importance(engine, space, [0], 0, base, get_setting("paper")) == [pytest.approx(0.4 + 0.4)]
