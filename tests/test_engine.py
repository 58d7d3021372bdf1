import numpy as np
import pytest

from robustcount.errors import BudgetExhausted, RobustcountError
from robustcount.models.engine import BATCH_INVARIANT, PROBE_TEXTS, QueryEngine
from robustcount.models.function_adapter import FunctionClassifier

PROBE_CALLS = 3 * len(PROBE_TEXTS)
"""The batch probe's model calls at an engine's first request: each probe text alone, then in
batches in both orders."""


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
    """An engine over `model` whose batch probe has run, with the model's record of batches
    cleared, so that a test sees what its requests send."""
    engine = QueryEngine(model, **settings)
    assert engine.batching() == BATCH_INVARIANT
    model.batches.clear()
    return engine


def test_counts_are_exact_with_duplicates_and_cache_hits():
    model = LengthParity()
    engine = probed(model, batch_size=2)
    assert (engine.total.model_calls, engine.total.model_batches) == (PROBE_CALLS, len(PROBE_TEXTS) + 2 * 2)
    first = engine.predict_proba(["a", "bb", "a", "ccc", "bb"])
    assert first.argmax(axis=1).tolist() == [0, 1, 0, 0, 1]
    assert engine.total.candidates == 5
    assert engine.total.duplicates == 2
    assert engine.total.cache_hits == 0
    assert engine.total.model_calls == PROBE_CALLS + 3
    assert engine.total.model_batches == len(PROBE_TEXTS) + 4 + 2
    engine.predict_proba(["ccc", "dddd", "a"])
    assert engine.total.candidates == 8
    assert engine.total.cache_hits == 2
    assert engine.total.model_calls == PROBE_CALLS + 4
    reached = [t for batch in model.batches for t in batch]
    assert sorted(reached) == ["a", "bb", "ccc", "dddd"]  # each text ran through the model once
    s = engine.total
    assert s.candidates == s.duplicates + s.cache_hits + s.model_calls - PROBE_CALLS


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
    assert engine.total.model_calls == PROBE_CALLS + 4
    assert engine.total.cache_hits == 2


def test_cache_can_be_disabled():
    engine = QueryEngine(LengthParity(), cache_size=0)
    engine.predict_proba(["a"])
    engine.predict_proba(["a"])
    assert engine.total.model_calls == PROBE_CALLS + 2


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
    assert sum(len(b) for b in model.batches) == PROBE_CALLS + 3


def test_example_counters_are_separate_from_totals():
    engine = QueryEngine(LengthParity())
    engine.predict_proba(["a"])
    with engine.example() as stats:
        engine.predict_proba(["a", "bb"])
    assert (stats.candidates, stats.cache_hits, stats.model_calls) == (2, 1, 1)
    assert engine.total.model_calls == PROBE_CALLS + 2


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
    assert engine.total.model_calls == PROBE_CALLS + 3


def test_engine_rejects_bad_settings():
    with pytest.raises(RobustcountError):
        QueryEngine(LengthParity(), batch_size=0)
    with pytest.raises(RobustcountError):
        QueryEngine(LengthParity(), cache_size=-1)
