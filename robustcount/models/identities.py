"""The digests built-in models were recorded under before their identity was declared, and the one
comparison of a recorded model digest with a model's.

A model's digest is its identity in run headers and certificates (`QueryEngine.digest`). When a
built-in model's identity is declared anew without its answers changing (vader's, from the whole
source of `models/small.py` to `models/vader.py`'s `VADER_IDENTITY`), its former digest maps here
to its current one, so that what was certified under the former name keeps verifying.
"""

from __future__ import annotations

FORMER_DIGESTS = {
    # vader while its digest hashed the source of models/small.py (up to commit 9d1a311), now vader/1
    # with vaderSentiment 3.3.2: the same lexicons, rules and answers.
    "9285ac0cf006bb9499e95fb152fbda99d4ce707676734c70348901d4834302ea":
        "59dbc7c103c810908a49a9ef570fb937541a87ba5a699d2560251b5499967240",
}
"""A built-in model's former digest -> its current digest."""


def current_digest(recorded: str | None) -> str | None:
    """The current digest of the model a run header or certificate records as `recorded`."""
    return FORMER_DIGESTS.get(recorded, recorded) if recorded is not None else None
