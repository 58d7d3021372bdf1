"""The ledgers of a run worker's served models (`models.llm.ledger`): which there are, and what
they counted since the run last reported them, so that every request a server receives is in the
run's ledger."""

from __future__ import annotations

from robustcount.models.llm.ledger import ledger_change, ledger_sum


def served_ledgers(worker) -> list:
    """The ledgers of the worker's served models (`models/llm/ledger.py`)."""
    return [ledger for e in worker.engines if (ledger := getattr(e.model, "ledger", None)) is not None]


def unreported_ledger(worker) -> dict | None:
    """What the ledgers of the worker's served models counted since this was last asked (the first
    time: since they were loaded, so the requests that probe them at load and the header's batch
    probe are reported too: every request the server receives is in the run's ledger); None
    without a served model."""
    ledgers = served_ledgers(worker)
    if not ledgers:
        return None
    now = [ledger.record() for ledger in ledgers]
    before = worker.ledgers_reported or [{} for _ in now]
    worker.ledgers_reported = now
    return ledger_sum([ledger_change(after, old) for after, old in zip(now, before)])
