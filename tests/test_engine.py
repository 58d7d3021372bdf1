import numpy as np
import pytest

from robustcount.errors import BudgetExhausted, RobustcountError, RobustcountWarning
from robustcount.goal import keeps_label
from robustcount.models.batch_probe import BATCH_INVARIANT, ONE_AT_A_TIME, PROBE_TEXTS
from robustcount.models.engine import QueryEngine
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.proofs.prover import ADVERSARIAL, prove
from robustcount.spaces.space import Position, Space
from tests.factories import padded_mean_model


class LengthParity:
    """A real (if simple) classifier: label 1 when the text has an even number of characters.
    It records every batch it receives, so tests can check what reached the model."""

    labels = ("odd", "even")

    def __init__(self):
        self.batches = []

    def predict_proba(self, batch):
        self.batches.append(list(batch))
        even = np.array([len(t) % 2 == 0 for t in batch], dtype=float)
        return np.stack([1 - even, even], axis=1)


def probed(model: LengthParity, **settings) -> QueryEngine:
    """An engine over `model` whose batch probe has run (on PROBE_TEXTS: each alone, then in
    batches in both orders), with the model's record of batches cleared, so that a test sees what
    its requests send."""
    engine = QueryEngine(model, **settings)
    assert engine.batching() == BATCH_INVARIANT
    assert engine.probe.model_calls == engine.total.model_calls == 3 * len(PROBE_TEXTS)
    model.batches.clear()
    return engine


def test_counts_are_exact_with_duplicates_and_cache_hits():
    model = LengthParity()
    engine = probed(model, batch_size=2)
    assert engine.total.model_batches == len(PROBE_TEXTS) + 2 * 2
    first = engine.predict_proba(["a", "bb", "a", "ccc", "bb"])
    assert first.argmax(axis=1).tolist() == [0, 1, 0, 0, 1]
    assert engine.total.candidates == 5
    assert engine.total.duplicates == 2
    assert engine.total.cache_hits == 0
    assert engine.total.model_calls == engine.probe.model_calls + 3
    assert engine.total.model_batches == len(PROBE_TEXTS) + 4 + 2
    engine.predict_proba(["ccc", "dddd", "a"])
    assert engine.total.candidates == 8
    assert engine.total.cache_hits == 2
    assert engine.total.model_calls == engine.probe.model_calls + 4
    reached = [t for batch in model.batches for t in batch]
    assert sorted(reached) == ["a", "bb", "ccc", "dddd"]  # each text ran through the model once
    s = engine.total
    assert s.candidates == s.duplicates + s.cache_hits + s.model_calls - engine.probe.model_calls


def test_results_keep_input_order_despite_length_sorting():
    model = LengthParity()
    engine = probed(model, batch_size=3)
    texts = ["xxxxx", "x", "xxxx", "xx", "xxx", "xxxxxx"]
    assert engine.predict(texts).tolist() == [0, 0, 1, 1, 0, 1]
    assert model.batches[0] == ["x", "xx", "xxx"]


def test_cache_is_bounded_and_evicts_least_recently_used():
    model = LengthParity()
    engine = QueryEngine(model, cache_size=2)
    engine.predict_proba(["a", "bb"])
    engine.predict_proba(["a"])  # refreshes "a"
    engine.predict_proba(["ccc"])  # evicts "bb"
    engine.predict_proba(["a", "bb"])
    assert engine.total.model_calls - engine.probe.model_calls == 4
    assert engine.total.cache_hits == 2


def test_cache_can_be_disabled():
    engine = QueryEngine(LengthParity(), cache_size=0)
    engine.predict_proba(["a"])
    engine.predict_proba(["a"])
    assert engine.total.model_calls - engine.probe.model_calls == 2


def test_budget_refuses_before_running_anything():
    model = LengthParity()
    engine = QueryEngine(model)
    with engine.example(budget=3) as stats:  # the batch probe at the first request is not the example's
        engine.predict_proba(["a", "bb"])
        engine.predict_proba(["a", "bb"])  # cache hits are free
        with pytest.raises(BudgetExhausted) as refused:
            engine.predict_proba(["ccc", "dddd"])
        assert refused.value.used == 2 and refused.value.requested == 2
        assert stats.model_calls == 2
        engine.predict_proba(["ccc"])
        assert stats.model_calls == 3
    assert sum(len(b) for b in model.batches) == engine.probe.model_calls + 3


def test_example_counters_are_separate_from_totals():
    engine = QueryEngine(LengthParity())
    engine.predict_proba(["a"])
    with engine.example() as stats:
        engine.predict_proba(["a", "bb"])
    assert (stats.candidates, stats.cache_hits, stats.model_calls) == (2, 1, 1)
    assert engine.total.model_calls - engine.probe.model_calls == 2


def test_bad_model_outputs_get_clear_errors():
    wrong_shape = FunctionClassifier(lambda batch: np.ones((len(batch), 3)) / 3, ["a", "b"])
    with pytest.raises(RobustcountError, match="shape"):
        QueryEngine(wrong_shape).predict_proba(["x"])
    not_probs = FunctionClassifier(lambda batch: np.full((len(batch), 2), 0.9), ["a", "b"])
    with pytest.raises(RobustcountError, match="probability"):
        QueryEngine(not_probs).predict_proba(["x"])


def test_pairs_are_cached_apart_from_their_hypothesis():
    engine = QueryEngine(FunctionClassifier(lambda b: [int(isinstance(x, tuple)) for x in b],
                                            ["single", "pair"], output="label"))
    assert engine.predict([("p", "h"), "h", ("q", "h")]).tolist() == [1, 0, 1]
    assert engine.total.model_calls - engine.probe.model_calls == 3


def test_engine_rejects_bad_settings():
    with pytest.raises(RobustcountError):
        QueryEngine(LengthParity(), batch_size=0)
    with pytest.raises(RobustcountError):
        QueryEngine(LengthParity(), cache_size=-1)


def test_a_batch_dependent_model_is_found_out_and_answered_one_text_at_a_time():
    """padded-mean averages over its batch's padding too: beside the long point, the short one
    looks negative, so a batched prover would certify radius 1. The engine's probe finds it out
    (one warning line), and the proof is the one a batch size of 1 gives."""
    model = padded_mean_model()
    space = Space("bad film", (Position("word", 1, ("film", "good good good",
                                                    "film we saw in a cinema near the old harbour last year")),))
    short, long = space.apply(((0, 1),)), space.apply(((0, 2),))
    assert keeps_label(model.predict_proba([short, long]), 0).all()  # the bug: both negative in one batch
    assert not keeps_label(model.predict_proba([short]), 0)[0]  # alone, the short one is positive
    engine = QueryEngine(model)
    with pytest.warns(RobustcountWarning) as caught:
        proof = prove(engine, space, 0, 1)
    (message,) = [str(w.message) for w in caught]
    assert message.startswith("padded-mean: answers depend on the other inputs of their batch (they moved by up to ")
    assert "\n" not in message and engine.batching() == f"{ONE_AT_A_TIME} (answers depend on their batch)"
    alone = prove(QueryEngine(model, batch_size=1), space, 0, 1)
    assert proof.status == alone.status == ADVERSARIAL
    assert proof.smallest_margin_point == alone.smallest_margin_point == ((0, 1),)
    requests = engine.total - engine.probe
    assert requests.model_batches == requests.model_calls  # one input per forward batch


def test_the_probe_is_counted_in_the_totals_never_in_an_example_or_its_budget():
    model = LengthParity()
    engine = QueryEngine(model)
    with engine.example(budget=1) as stats:
        engine.predict_proba(["one input"])
    assert stats.model_calls == 1 and stats.model_batches == 1
    assert engine.probe.model_calls == 3 * (len(PROBE_TEXTS) + 1)  # the probe texts and the request's input
    assert engine.total.model_calls == engine.probe.model_calls + 1
    assert sum(len(batch) for batch in model.batches) == engine.total.model_calls


def test_the_probe_never_runs_a_long_input_of_the_request_more_than_the_request_does():
    """A request's own inputs join the probe up to PROBE_CHARACTERS only: a 10,000-word text, which
    the first-use probe used to run three times besides the request's run, reaches the model once."""
    model = LengthParity()
    huge = " ".join(["word"] * 10_000)
    engine = QueryEngine(model)
    engine.predict_proba([huge, "short", "a little longer"])
    assert sum(batch.count(huge) for batch in model.batches) == 1
    assert engine.batching() == BATCH_INVARIANT
    assert engine.probe.model_calls == 3 * (len(PROBE_TEXTS) + 2)  # the short inputs, each alone and in two batches


def test_a_batch_size_of_one_needs_no_probe():
    engine = QueryEngine(LengthParity(), batch_size=1)
    engine.predict_proba(["a", "bb"])
    assert engine.batching() == f"{ONE_AT_A_TIME} (batch size 1)" and engine.probe.model_calls == 0


def pairs_only(answer):
    """A model of (premise, hypothesis) pairs that refuses plain texts; `answer(hypotheses)` gives
    p(second label) for a batch's hypotheses. Every pair it is given is logged in `.seen`."""
    seen = []

    def classify(batch):
        if not all(isinstance(item, tuple) for item in batch):
            raise RobustcountError("pairs only")
        seen.extend(batch)
        return [[1 - p, p] for p in answer([h for _, h in batch])]

    model = FunctionClassifier(classify, ["entailment", "contradiction"], name="pairs-only")
    model.seen = seen
    return model


def test_a_pair_model_is_probed_with_pairs_after_the_requests_premise():
    model = pairs_only(lambda hypotheses: [min(0.9, len(h) / 100) for h in hypotheses])
    engine = QueryEngine(model)
    assert engine.predict([("A man sleeps.", "A person rests.")]).tolist() == [0]
    assert engine.batching() == BATCH_INVARIANT
    assert {("A man sleeps.", text) for text in PROBE_TEXTS} <= set(model.seen)
    dependent = pairs_only(lambda hypotheses: [len(h) / max(map(len, hypotheses)) * 0.9 for h in hypotheses])
    engine = QueryEngine(dependent)
    with pytest.warns(RobustcountWarning, match="pairs-only: answers depend"):
        engine.predict([("A man sleeps.", "A person rests.")])
    assert engine.batching().startswith(ONE_AT_A_TIME)


def known_words_only(answer):
    """A model that refuses any text with a word other than w0, w1, ...; `answer(texts)` gives
    p(second label) for a batch."""

    def classify(batch):
        if any(not word.startswith("w") for text in batch for word in text.split()):
            raise RobustcountError("unknown word")
        return [[1 - p, p] for p in answer(batch)]

    return FunctionClassifier(classify, ["negative", "positive"], name="known-words")


def test_a_model_refusing_the_probe_texts_is_probed_with_the_requests_inputs():
    texts = ["w0", "w0 w1 w2", "w0 w1 w2 w3 w4 w5"]
    invariant = QueryEngine(known_words_only(lambda batch: [0.1 * len(t.split()) for t in batch]))
    invariant.predict_proba(texts)
    assert invariant.batching() == BATCH_INVARIANT
    # the refused first probe text, then each probe text refused alone, and the inputs alone and in two batches
    assert invariant.probe.model_calls == 1 + len(PROBE_TEXTS) + 3 * len(texts)
    dependent = QueryEngine(known_words_only(lambda batch: [0.9 * len(t) / max(map(len, batch)) for t in batch]))
    with pytest.warns(RobustcountWarning, match="known-words: answers depend"):
        dependent.predict_proba(texts)
    one_length = QueryEngine(known_words_only(lambda batch: [0.5] * len(batch)))
    with pytest.warns(RobustcountWarning, match="known-words refuses the batch probe's texts"):
        one_length.predict_proba(["w0 w1"])
    assert one_length.batching() == f"{ONE_AT_A_TIME} (the model refuses the probe texts)"


class Returns:
    """A classifier that answers every batch with `row` (whatever it holds), one row an input."""

    labels = ("neg", "pos")

    def __init__(self, row):
        self.row = row

    def predict_proba(self, batch):
        return np.array([self.row] * len(batch), dtype=float)


@pytest.mark.parametrize("row, message", [
    ([float("nan"), 1.0], "non-finite probabilities"), ([float("inf"), 0.0], "non-finite probabilities"),
    ([float("-inf"), float("inf")], "non-finite probabilities"), ([0.6, 0.6], "rows that are not probability distributions"),
    ([-0.1, 1.1], "rows that are not probability distributions"), ([1.0], "shape (1, 1), expected (1, 2)")])
def test_answers_that_are_not_probabilities_are_refused_in_one_line(row, message):
    engine = QueryEngine(Returns(row), batch_size=1)
    with pytest.raises(RobustcountError) as err:
        engine.predict_proba(["a film", "a good film"])
    assert str(err.value) == f"Returns returned {message}"
    assert np.allclose(QueryEngine(Returns([0.25, 0.75])).predict_proba(["a film"]), [[0.25, 0.75]])
