"""Time limits that hold: a long text's leave-one-out request is cut into forward batches and the
limit is checked between them, so an example never runs more than 10% past its limit, the batch
probe included.

The engine reads every time from its clock; here the clock is one the model advances by a fixed
number of seconds per character it reads, so that what these tests check is the engine's own
accounting (which batches it refuses, and when), never the speed or the load of the machine."""

import pytest

from robustcount.commands.certify import CertifyOptions, certify_example
from robustcount.data import Example
from robustcount.models.batch_probe import PROBE_TEXTS
from robustcount.models.engine import MAX_BATCH_CHARACTERS, QueryEngine, _forward_batches
from robustcount.spaces.build import SpaceSpec
from robustcount.status import TIME_LIMIT
from tests.factories import keyword_model

LONG_TEXT = " ".join(["the film was good but the plot was dull and slow"] * 55)  # 605 words, 2,749 characters
SECONDS_PER_CHARACTER = 1e-5
"""What the model costs on the test's clock: the whole leave-one-out of LONG_TEXT (606 texts) is
about 16.7 s, four times the limit."""


class Clocked:
    """`model` on a clock of its own (`now`, in seconds), which each batch it answers advances by
    SECONDS_PER_CHARACTER for every character of the batch; `read` logs the texts it was given."""

    def __init__(self, model):
        self.model, self.labels, self.now, self.read = model, model.labels, 0.0, []

    def __call__(self) -> float:
        return self.now

    def predict_proba(self, batch):
        self.read.extend(batch)
        self.now += SECONDS_PER_CHARACTER * sum(map(len, batch))
        return self.model.predict_proba(batch)


@pytest.mark.parametrize("model", ["vader", "keyword"])
def test_a_long_texts_leave_one_out_stops_within_a_tenth_past_the_limit(model, vader):
    # Before, the leave-one-out of 606 texts was one request, checked only before it ran: 18 s (vader).
    clocked = Clocked(vader if model == "vader" else keyword_model())
    engine = QueryEngine(clocked, clock=clocked)
    limit = 4.0
    space = SpaceSpec().builder()(LONG_TEXT)
    record = certify_example(engine, space, Example("long", LONG_TEXT, "positive"),
                             CertifyOptions(radius=1, time_limit=limit), "model", None)
    proof = record["proofs"][-1]
    assert record["undecided"] and "time limit of 4 s" in proof["reason"] and proof["limit"] == TIME_LIMIT
    # The whole example, its first request's batch probe included, ends within a tenth past the
    # limit on the clock the engine reads (the probe's time is the example's, as any other).
    assert engine.probe.model_seconds > 0
    assert clocked.now <= 1.1 * limit, f"{clocked.now:.2f} s for a limit of {limit} s"
    # The probe ran the probe texts, each alone and in two batches, never the long input.
    assert engine.probe.model_calls == 3 * len(PROBE_TEXTS)
    assert clocked.read.count(LONG_TEXT) == 1  # the request's own run of it


def test_forward_batches_hold_at_most_the_batch_size_and_the_character_cap():
    texts = ["x" * n for n in (10, 10, 9000, 9000, 20000, 5)]
    batches = list(_forward_batches(texts, 2))
    assert batches == [["x" * 10] * 2, ["x" * 9000], ["x" * 9000], ["x" * 20000], ["x" * 5]]
    assert all(len(b) == 1 or sum(map(len, b)) <= MAX_BATCH_CHARACTERS for b in batches)
