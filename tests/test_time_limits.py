"""Time limits that hold: a long text's leave-one-out request is cut into forward batches and the
limit is checked between them, so an example never runs more than 10% past its limit."""

import time

import pytest

from robustcount.commands.certify import CertifyOptions, certify_example
from robustcount.data import Example
from robustcount.models.engine import MAX_BATCH_CHARACTERS, QueryEngine, _forward_batches
from robustcount.spaces.build import SpaceSpec
from tests.factories import slow_model

LONG_TEXT = " ".join(["the film was good but the plot was dull and slow"] * 55)  # 605 words, 2,749 characters


def certify_seconds(model, limit: float) -> tuple[float, dict]:
    engine = QueryEngine(model)
    engine.predict_proba([LONG_TEXT, "short"])  # the batch probe, whose time extends the limit, runs first
    space = SpaceSpec().builder()(LONG_TEXT)
    began = time.monotonic()
    record = certify_example(engine, space, Example("long", LONG_TEXT, "positive"),
                             CertifyOptions(radius=1, time_limit=limit), "model", None)
    return time.monotonic() - began, record


@pytest.mark.parametrize("model", ["vader", "slow"])
def test_a_long_texts_leave_one_out_stops_within_a_tenth_past_the_limit(model, vader):
    # Before, the leave-one-out of 606 texts was one request, checked only before it ran: 18 s (vader).
    limit = 4.0
    seconds, record = certify_seconds(vader if model == "vader" else slow_model(), limit)
    assert record["undecided"] and "time limit of 4 s" in record["proofs"][-1]["reason"]
    assert seconds <= 1.1 * limit, f"{seconds:.2f} s for a limit of {limit} s"


def test_forward_batches_hold_at_most_the_batch_size_and_the_character_cap():
    texts = ["x" * n for n in (10, 10, 9000, 9000, 20000, 5)]
    batches = list(_forward_batches(texts, 2))
    assert batches == [["x" * 10] * 2, ["x" * 9000], ["x" * 9000], ["x" * 20000], ["x" * 5]]
    assert all(len(b) == 1 or sum(map(len, b)) <= MAX_BATCH_CHARACTERS for b in batches)
