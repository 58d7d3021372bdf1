"""The prover's default order (`orders.MARGINS`): the points of at most one change first, in text
order, then the rest by the lowest margin each position's single substitutions reached. Its
answers are brute force's, it is deterministic, costs no gradient pass, and resumes from any
checkpoint to the proofs of a run never stopped."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robustcount.cli import main
from robustcount.data import label_index
from robustcount.goal import evaluate_all, is_adversarial
from robustcount.journal import Journal, keeping
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.orders import MARGINS, margin_order, position_order
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, Checkpointing, certify_radii, prove
from robustcount.spaces.build import build_space
from robustcount.spaces.space import Position, Space
from tests.test_attacks import toy_problems, weighted_model


def _untimed(proofs) -> list[dict]:
    return [{k: v for k, v in p.as_dict().items() if k != "seconds"} for p in proofs]


def _truth(space, model, radius) -> bool:
    points = list(space.points(radius))
    return bool(is_adversarial(QueryEngine(model).predict_proba([space.apply(p) for p in points]), 1).any())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(toy_problems(), st.integers(0, 5), st.integers(1, 7))
def test_margin_order_proofs_are_brute_forces(problem, radius, batch_size):
    space, model = problem
    engine = QueryEngine(model, batch_size=batch_size)
    with engine.example() as stats:
        proof = prove(engine, space, 1, radius)
    assert proof.status == (ADVERSARIAL if _truth(space, model, radius) else CERTIFIED)
    if proof.status == CERTIFIED:
        assert proof.checked == proof.total == space.count(radius)
    else:
        assert len(proof.smallest_margin_point) <= radius
        assert is_adversarial(engine.predict_proba([space.apply(proof.smallest_margin_point)]), 1)[0]
    assert stats.model_calls <= space.count(radius) and stats.gradient_calls == 0  # each point once


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(toy_problems(), st.integers(1, 4), st.integers(1, 5))
def test_a_margin_order_proof_resumed_from_any_checkpoint_gives_the_same_proofs(problem, radius, batch_size):
    space, model = problem
    saved = []
    with keeping(Journal(save_to=saved.append, interval=0.0)):
        whole = certify_radii(QueryEngine(model, batch_size=batch_size), space, 1, radius,
                              checkpointing=Checkpointing(checkpoint=saved.append))
    for state in saved:
        state = json.loads(json.dumps(state))  # as a checkpoint file holds it
        assert state["position"]["checked"] >= space.count(min(state["position"]["radius"], 1))
        resumed = certify_radii(QueryEngine(model, batch_size=batch_size), space, 1, radius,
                                checkpointing=Checkpointing(resume=state))
        assert _untimed(resumed) == _untimed(whole)


def test_the_margin_order_puts_the_lowest_single_substitution_margins_first():
    weights = {"w0": 0.3, "w0s0": 0.2, "w1": 0.3, "w1s0": -0.2, "w1s1": 0.25, "w2": 0.3, "w2s0": 0.0,
               "w3": 0.3, "w3s0": 0.3}
    space = Space("w0 w1 w2 w3", tuple(Position("word", i, (f"w{i}", *sorted(k for k in weights
                                                                                if k.startswith(f"w{i}s"))))
                                       for i in range(4)))
    engine = QueryEngine(weighted_model(weights))
    order = position_order(engine, space, 1, MARGINS)
    assert order == [1, 2, 0, 3]  # w1 -> w1s0 drops the most, then w2 -> w2s0, w0 -> w0s0; w3 ties the input
    singles = evaluate_all(QueryEngine(weighted_model(weights)), space, space.points_at_distance(1), 1)
    assert margin_order(space, [singles]) == order == position_order(engine, space, 1, MARGINS)


def test_a_margin_order_proof_tries_first_the_pairs_of_the_position_whose_single_substitution_drops_most():
    # No single substitution breaks the input; every pair with the last word does, no other pair:
    # text order meets such a pair after 4 others, the margin order at once.
    n = 6
    weights = {f"w{i}": 0.1 for i in range(n)} | {f"w{i}s0": -0.15 for i in range(n - 1)}
    weights.update({f"w{n - 1}": 0.2, f"w{n - 1}s0": -0.3})
    space = Space(" ".join(f"w{i}" for i in range(n)),
                  tuple(Position("word", i, (f"w{i}", f"w{i}s0")) for i in range(n)))
    proof = prove(QueryEngine(weighted_model(weights), batch_size=1), space, 1, 2)
    assert proof.status == ADVERSARIAL and proof.checked == space.count(1) + 1
    assert proof.smallest_margin_point == ((0, 1), (n - 1, 1))
    by_text = prove(QueryEngine(weighted_model(weights), batch_size=1), space, 1, 2, order="text")
    assert by_text.status == ADVERSARIAL and by_text.checked == n - 1


def test_certify_by_margins_runs_no_gradient_pass_and_is_deterministic():
    model = load_model("cnn-rt", device="cpu")
    space = build_space("a gentle and moving film", ["truncate", "disemvowel"])
    gold = label_index("positive", model.labels)
    runs = []
    for _ in range(2):
        engine = QueryEngine(model)
        with engine.example() as stats:
            runs.append(_untimed(certify_radii(engine, space, gold, 2)))
        assert stats.gradient_calls == 0 and stats.model_calls <= space.count(2)  # each point once
    assert runs[0] == runs[1]
    by_gradients = certify_radii(QueryEngine(model), space, gold, 2, order="sensitivity")
    assert [p["status"] for p in runs[0]] == [p.status for p in by_gradients]


def test_a_run_written_under_another_order_resumes_only_with_that_order(tmp_path, capsys):
    data, out = tmp_path / "two.csv", tmp_path / "run.jsonl"
    data.write_text("id,text,label\n0,a good film,positive\n1,a fine cast,positive\n")

    def certify(*more):
        return main(["certify", "--model", "py:tests.factories:keyword_model", "--radius", "1", "--data", str(data),
                     "--output", str(out), *more])

    assert certify("--order", "sensitivity") == 0
    capsys.readouterr()
    assert certify("--resume") != 0
    error = capsys.readouterr().err
    assert 'options.order: "sensitivity" in the file, "margins" now' in error and "Traceback" not in error
    assert certify("--resume", "--order", "sensitivity") == 0
