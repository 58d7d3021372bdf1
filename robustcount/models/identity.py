"""A model's identity in run headers and certificates (`QueryEngine.digest`), its name in messages,
and the digests built-in models were recorded under before their identity was declared.

When a built-in model's identity is declared anew without its answers changing (vader's, from the
whole source of `models/small.py` to `models/vader.py`'s `VADER_IDENTITY`), its former digest maps
here to its current one, so that what was certified under the former name keeps verifying.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from robustcount.models.base import model_digest

FINGERPRINT_TEXTS = ("a good, gripping and well-made film", "a bad, dull and lifeless mess", "not bad at all",
                     "I would not watch it again", "the plot is thin but the cast is fun", "it was fine")
"""Texts whose answers identify a model known only by its code (see `identity_digest`)."""


def identity_digest(model, classify: Callable[[list], np.ndarray]) -> str | None:
    """The digest of `model`'s weights (torch and scikit-learn models); for a model known only by
    its code (a function), that code's digest combined with its answers on FINGERPRINT_TEXTS
    (`classify`: the model on a batch, checked and counted), so that the same code loading other
    weights differs; that code's digest alone when the model refuses those texts (a model of
    pairs). None when unknown."""
    code = model_digest(model)
    if code is None or getattr(model, "digest_covers_weights", True):
        return code
    try:
        probs = classify(list(FINGERPRINT_TEXTS))
    except Exception:  # a model for pairs only, say: its code alone names it
        return code
    return hashlib.sha256(code.encode() + np.round(probs, 6).tobytes()).hexdigest()


def model_name(model) -> str:
    """How messages name `model`: its `name`, else its class's."""
    return getattr(model, "name", type(model).__name__)


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
