"""A model's identity in run headers and certificates (`QueryEngine.digest`), and its name in messages."""

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
