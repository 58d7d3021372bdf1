import numpy as np
import pytest

from robustcount.errors import BudgetExhausted, RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.orders import word_sensitivities


def test_gradient_sensitivity_has_one_score_per_word(bow_rt):
    engine = QueryEngine(bow_rt)
    scores = word_sensitivities(engine, "a truly wonderful film", label=1)
    assert scores.shape == (4,)
    assert np.all(scores >= 0) and scores.max() > 0
    assert engine.total.gradient_calls == 1 and engine.total.model_calls == 0


def test_a_word_the_model_cannot_see_scores_zero(bow_rt):
    # bow-rt drops words outside its vocabulary, so it cannot see "zqxjvw".
    scores = word_sensitivities(QueryEngine(bow_rt), "wonderful zqxjvw film", label=1, method="gradient")
    assert scores[1] == 0.0 and scores[0] > 0 and scores[2] > 0


def test_leave_one_out_on_a_black_box(vader):
    engine = QueryEngine(vader)
    with engine.example() as stats:
        scores = word_sensitivities(engine, "the film is great", label=1)
    assert engine.supports_gradients is False
    assert scores.shape == (4,)
    assert scores[0] == pytest.approx(0.0)  # VADER gives "the" no valence
    assert scores[3] > 0  # removing "great" lowers P(positive)
    assert stats.model_calls == 5


def test_leave_one_out_on_a_pair_perturbs_only_the_hypothesis(vader):
    engine = QueryEngine(vader)
    scores = word_sensitivities(engine, ("awful premise", "great"), label=1, method="leave-one-out")
    assert scores.shape == (1,)


def test_gradients_refused_for_black_boxes_and_budget_counts(vader, bow_rt):
    with pytest.raises(RobustcountError, match="does not expose gradients"):
        word_sensitivities(QueryEngine(vader), "good", label=1, method="gradient")
    engine = QueryEngine(vader)
    with engine.example(budget=3):
        with pytest.raises(BudgetExhausted):
            word_sensitivities(engine, "a b c d", label=1)
    assert word_sensitivities(QueryEngine(bow_rt), "", label=0).shape == (0,)


def test_unknown_method_and_label(vader):
    with pytest.raises(RobustcountError, match="unknown sensitivity method"):
        word_sensitivities(QueryEngine(vader), "good", label=1, method="magic")
    with pytest.raises(RobustcountError, match="out of range"):
        word_sensitivities(QueryEngine(vader), "good", label=5)


@pytest.mark.slow
def test_minilm_words_after_truncation_score_zero(minilm_rt):
    text = "a wonderful film " + "so " * 300 + "awful"
    scores = word_sensitivities(QueryEngine(minilm_rt), text, label=1)
    assert scores.shape == (304,)
    assert scores[1] > 0
    assert scores[-1] == 0.0  # beyond the encoder's 256 tokens


@pytest.mark.slow
def test_minilm_pairs_give_hypothesis_scores(minilm_rt):
    scores = word_sensitivities(QueryEngine(minilm_rt), ("the acting is dreadful", "a great film"), label=1)
    assert scores.shape == (3,) and np.all(scores > 0)


def test_gradient_times_input_tells_the_words_of_a_mean_pooled_model_apart(bow_rt):
    # d p / d e_t is the same vector for every word of a mean of embeddings, so its norm alone
    # would rank all words alike; gradient times input is each word's linear contribution.
    scores = word_sensitivities(QueryEngine(bow_rt), "the wonderful film", label=1, method="gradient")
    assert len(set(np.round(scores, 12))) == 3
    assert scores.argmax() == 1  # "wonderful" moves P(positive) most


@pytest.mark.parametrize("model", ["minilm-rt-ft", "lstm-rt"])
def test_fine_tuned_and_recurrent_words_after_the_end_or_truncation(model):
    from robustcount.models.zoo import load_model

    engine = QueryEngine(load_model(model, device="cpu"))
    text = "a wonderful film " + "so " * 600 + "awful"
    scores = word_sensitivities(engine, text, label=1)
    assert scores.shape == (604,) and scores[1] > 0
    if model == "minilm-rt-ft":
        assert scores[-1] == 0.0  # beyond the checkpoint's 512 tokens
    else:
        assert scores[-1] > 0  # an LSTM reads every word


def test_the_random_order_is_the_same_wherever_the_table_lies(tmp_path):
    import json

    from robustcount.orders import position_order
    from robustcount.spaces.build import build_space

    text = "a wonderful and moving film with a truly good cast and a fine score"
    table = {w: [w + "s"] for w in text.split()}
    paths = [tmp_path / "here.json", tmp_path / "there.json"]
    for path in paths:
        path.write_text(json.dumps(table))
    here, there = (build_space(text, [f"table:{path}"]) for path in paths)
    assert here.digest() != there.digest()  # the definitions name different files
    orders = [position_order(None, space, 1, "random") for space in (here, there)]
    assert orders[0] == orders[1] and sorted(orders[0]) == list(range(len(here.positions)))
    assert orders[0] != list(range(len(here.positions)))  # shuffled, not text order
