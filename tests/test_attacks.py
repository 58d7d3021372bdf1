import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robustcount.attacks.exhaustive import exhaustive_attack
from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.result import FAILED, SKIPPED, SUCCESS, run_attack
from robustcount.errors import RobustcountError
from robustcount.goal import is_adversarial
from robustcount.models.engine import QueryEngine
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.spaces.space import Position, Space
from robustcount.status import BUDGET, POINT_LIMIT, UNDECIDED
from robustcount.text import tokenize
from tests.factories import SENTIMENT_TABLE


def weighted_model(weights, interaction=0.0):
    """A real toy classifier: the text is 'positive' when the sum of its words' weights (unknown
    words weigh 0), plus `interaction` times the number of pairs of negative words, is > 0."""

    def classify(batch):
        out = []
        for text in batch:
            values = [weights.get(w, 0.0) for w in tokenize(text).words]
            negatives = sum(v < 0 for v in values)
            score = sum(values) + interaction * negatives * (negatives - 1) / 2
            p = 1 / (1 + np.exp(-4 * score))
            out.append([1 - p, p])
        return np.array(out)

    model = FunctionClassifier(classify, ["negative", "positive"], name="weighted")
    model.additive = interaction == 0.0
    return model


@st.composite
def toy_problems(draw):
    """A random space of 1-5 words with 1-3 substitutes each, and random word weights such that
    the original is positive."""
    n = draw(st.integers(1, 5))
    positions, weights = [], {}
    for i in range(n):
        word = f"w{i}"
        weights[word] = draw(st.floats(0.05, 1.0))
        subs = [f"w{i}s{j}" for j in range(draw(st.integers(1, 3)))]
        for sub in subs:
            weights[sub] = draw(st.floats(-1.5, 1.0))
        positions.append(Position("word", i, (word, *subs)))
    space = Space(" ".join(f"w{i}" for i in range(n)), tuple(positions))
    interaction = draw(st.sampled_from([0.0, 0.6, -0.4]))
    return space, weighted_model(weights, interaction)


def brute_force_minimum(engine, space, gold):
    for k in range(1, space.max_radius() + 1):
        points = list(space.points_at_distance(k))
        if is_adversarial(engine.predict_proba([space.apply(p) for p in points]), gold).any():
            return k
    return None


def assert_valid_adversary(result, engine, space, gold):
    assert result.status == SUCCESS
    space.check_point(result.point)  # each substitute is in its position's list
    assert result.distance == len(result.point) == sum(
        1 for pos, c in result.point if space.positions[pos].candidates[c] != space.positions[pos].original)
    assert result.adversarial == space.apply(result.point)
    assert is_adversarial(engine.predict_proba([result.adversarial]), gold)[0]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(toy_problems(), st.integers(1, 4), st.sampled_from(["text", "leave-one-out"]))
def test_pdp_never_beats_the_oracle_and_matches_it_with_a_large_beam(problem, beam, order):
    space, model = problem
    engine = QueryEngine(model)
    gold = 1
    truth = brute_force_minimum(engine, space, gold)
    oracle = exhaustive_attack(engine, space, gold)
    small = pdp_attack(engine, space, gold, beam=beam, order=order)
    exact = pdp_attack(engine, space, gold, beam=10_000, order=order, prune=False)
    pruned = pdp_attack(engine, space, gold, beam=10_000, order=order)
    if truth is None:
        assert oracle.status == small.status == exact.status == pruned.status == FAILED
        return
    assert_valid_adversary(oracle, engine, space, gold)
    assert oracle.distance == truth
    assert_valid_adversary(exact, engine, space, gold)
    assert exact.distance == truth
    if model.additive:  # the pruning assumes additivity (in log-odds): then it loses nothing
        assert_valid_adversary(pruned, engine, space, gold)
        assert pruned.distance == truth
    if small.status == SUCCESS:
        assert_valid_adversary(small, engine, space, gold)
        assert small.distance >= truth


def test_pdp_finds_a_two_word_adversary_on_a_real_model(bow_rt):
    from robustcount.spaces.build import build_space

    engine = QueryEngine(bow_rt)
    space = build_space("a wonderful and moving film", [SENTIMENT_TABLE])
    result = run_attack("pdp", pdp_attack, engine, space, gold=1, beam=5)
    assert_valid_adversary(result, engine, space, 1)
    oracle = run_attack("exhaustive", exhaustive_attack, engine, space, gold=1)
    assert result.distance >= oracle.distance
    assert result.queries["model_calls"] > 0 and result.seconds > 0


def test_misclassified_inputs_are_skipped(bow_rt):
    engine = QueryEngine(bow_rt)
    space = Space("a dull lifeless mess", (Position("word", 1, ("dull", "bright")),))
    result = run_attack("pdp", pdp_attack, engine, space, gold=1)
    assert result.status == SKIPPED and result.adversarial is None


def test_budgets_end_attacks_with_an_explicit_result():
    weights = {f"w{i}": 0.3 for i in range(6)}
    weights.update({f"w{i}s{j}": 0.2 for i in range(6) for j in range(3)})  # nothing flips
    space = Space(" ".join(f"w{i}" for i in range(6)),
                  tuple(Position("word", i, (f"w{i}", *(f"w{i}s{j}" for j in range(3)))) for i in range(6)))
    engine = QueryEngine(weighted_model(weights))
    for attack in (pdp_attack, exhaustive_attack):
        result = run_attack("x", attack, engine, space, gold=1, budget=20)
        assert result.status == UNDECIDED and result.limit == BUDGET and "budget exhausted" in result.reason
        assert result.queries["model_calls"] <= 20


def ten_word_space(candidates: int = 9) -> Space:
    return Space(" ".join(f"w{i}" for i in range(10)),
                 tuple(Position("word", i, (f"w{i}", *(f"w{i}s{j}" for j in range(candidates)))) for i in range(10)))


def test_the_oracle_refuses_at_the_distance_whose_shell_is_too_large():
    space = ten_word_space()  # 90 points at distance 1, 3,645 at distance 2
    engine = QueryEngine(weighted_model({f"w{i}": 0.1 for i in range(10)}))  # no substitution flips it
    with engine.example() as stats:
        result = exhaustive_attack(engine, space, gold=1, max_points=1000)
    assert result.status == UNDECIDED and result.limit == POINT_LIMIT and result.cleared == 1
    assert "3645 points at distance 2" in result.reason
    assert stats.model_calls == 90
    assert exhaustive_attack(engine, space, gold=1, max_points=50).cleared == 0


def test_the_oracle_finds_a_distance_one_adversary_in_a_space_too_large_to_enumerate():
    space = ten_word_space()
    engine = QueryEngine(weighted_model({"w3": 0.2, "w3s4": -1.0}))
    result = exhaustive_attack(engine, space, gold=1, max_points=1000)
    assert_valid_adversary(result, engine, space, 1)
    assert result.distance == 1 and result.point == ((3, 5),)


def test_pdp_stops_at_a_single_substitution_within_the_oracles_calls():
    """Level 1 tries single substitutions only, so a distance-1 adversary costs PDP no more than
    the oracle (plus the one call that scores the positions)."""
    space = ten_word_space(3)
    weights = {f"w{i}": 0.1 for i in range(10)} | {"w9s2": -2.0}
    pdp, oracle = QueryEngine(weighted_model(weights)), QueryEngine(weighted_model(weights))
    found = run_attack("pdp", pdp_attack, pdp, space, gold=1, order="text")
    truth = run_attack("exhaustive", exhaustive_attack, oracle, space, gold=1)
    assert found.distance == truth.distance == 1
    assert found.queries["model_calls"] <= truth.queries["model_calls"]


def test_leave_one_out_order_queries_only_words_with_candidates():
    from robustcount.orders import position_order

    text = "the film is a w1 and not a w2 at all"
    space = Space(text, (Position("word", 4, ("w1", "x")), Position("word", 8, ("w2", "y"))))
    engine = QueryEngine(weighted_model({"w1": 0.1, "w2": 0.5}))
    with engine.example() as stats:
        assert position_order(engine, space, 1, "leave-one-out") == [1, 0]
    assert stats.model_calls == 3  # the text and the two words with candidates


def test_summaries_count_refused_and_budget_ended_examples_as_undecided():
    from robustcount.commands.attack import summarise_attacks as summarise

    def record(status, distance=None, calls=10):
        return {"status": status, "distance": distance, "share": None if distance is None else distance / 5,
                "queries": {"model_calls": calls}, "seconds": 1.0}

    records = [record(SUCCESS, 1), record(FAILED), {**record(UNDECIDED, calls=1), "limit": POINT_LIMIT},
               {**record(UNDECIDED, calls=99), "limit": BUDGET}, record(SKIPPED, calls=1)]
    summary = summarise(records)
    assert (summary["attacked"], summary["successes"], summary["survived"], summary["undecided"]) == (4, 1, 1, 2)
    assert summary["accuracy_under_attack"] == 1 / 5 and summary["success_rate"] == 1 / 2
    assert summary["queries_per_example"] == 10  # over the two decided examples


def test_textfooler_flips_a_real_model_with_valid_substitutions(bow_rt):
    from robustcount.attacks.textfooler import textfooler_attack
    from robustcount.spaces.build import build_space

    engine = QueryEngine(bow_rt)
    space = build_space("a wonderful and moving film", [SENTIMENT_TABLE])
    for setting in ("paper", "official-code"):
        result = run_attack("textfooler", textfooler_attack, engine, space, gold=1, setting=setting)
        assert_valid_adversary(result, engine, space, 1)
        assert 0 < result.similarity <= 1


def test_textfooler_without_similarity_check_needs_no_encoder(bow_rt):
    from robustcount.attacks.textfooler import textfooler_attack
    from robustcount.spaces.build import build_space

    engine = QueryEngine(bow_rt)
    space = build_space("a wonderful and moving film", [SENTIMENT_TABLE])
    result = run_attack("textfooler", textfooler_attack, engine, space, gold=1, pos_check=False,
                            similarity_check=False)
    assert_valid_adversary(result, engine, space, 1)
    assert result.similarity is None


def test_textfooler_in_random_word_order_spends_no_importance_queries(bow_rt):
    from robustcount.attacks.textfooler import textfooler_attack
    from robustcount.orders import position_order
    from robustcount.spaces.build import build_space

    space = build_space("a wonderful and moving film , truly good", [SENTIMENT_TABLE])
    words = [i for i, p in enumerate(space.positions) if p.kind == "word"]
    calls = {}
    for word_order in ("importance", "random"):
        engine = QueryEngine(bow_rt)
        result = run_attack("textfooler", textfooler_attack, engine, space, gold=1, pos_check=False,
                                similarity_check=False, word_order=word_order)
        assert_valid_adversary(result, engine, space, 1)
        calls[word_order] = result.queries["model_calls"]
        if word_order == "random":
            # the input, then every candidate of each word visited up to the one that flipped the label
            order = [i for i in position_order(engine, space, 1, "random") if i in words]
            last = max(order.index(i) for i, _ in result.point)
            assert calls["random"] == 1 + sum(len(space.positions[i].candidates) - 1 for i in order[:last + 1])
    # the importance ranking queries each word's deletion before any candidate
    assert calls["importance"] >= 1 + len(words) + 1
    with pytest.raises(RobustcountError, match="unknown word order"):
        textfooler_attack(QueryEngine(bow_rt), space, 1, word_order="sensitivity")


def test_textfooler_settings_are_named():
    from robustcount.attacks.textfooler import SETTINGS, get_setting
    from robustcount.errors import RobustcountError

    assert get_setting("paper").deletion_importance and not get_setting("official-code").deletion_importance
    assert set(SETTINGS) == {"paper", "official-code"}
    with pytest.raises(RobustcountError):
        get_setting("fast")


def test_pdp_levels_cost_at_most_their_cap_and_keep_the_minimum():
    """Ten words, three substitutes each, an additive model: each word has one substitute that
    lowers the score by 0.3 - 0.005 i and the others by 0.01, so from the score of 1 three take
    off at most 0.885 and four flip it. Level 1 costs its 30 substitutions, every deeper level
    at most LEVEL_CAP times that, and PDP still finds the minimum."""
    from robustcount.attacks import pdp

    space = ten_word_space(3)
    weights = {f"w{i}s{j}": 0.09 for i in range(10) for j in range(3)} | {f"w{i}": 0.1 for i in range(10)}
    weights |= {f"w{i}s{i % 3}": -0.2 + 0.005 * i for i in range(10)}
    engine = QueryEngine(weighted_model(weights))
    result = run_attack("pdp", pdp_attack, engine, space, gold=1, order="text")
    assert_valid_adversary(result, engine, space, 1)
    assert result.distance == 4
    levels = result.distance - 1
    assert result.queries["model_calls"] <= 1 + 30 + levels * math.ceil(pdp.LEVEL_CAP * 30)
