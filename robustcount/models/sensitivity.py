"""Per-word sensitivities, white-box (embedding gradients) or black-box (leave-one-out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.text import Input, perturbed_part, replace_perturbed_part, tokenize

METHODS = ("auto", "gradient", "leave-one-out")


def word_sensitivities(engine: QueryEngine, item: Input, label: int, method: str = "auto",
                       words: Sequence[int] | None = None) -> np.ndarray:
    """One score per word of the perturbed part of `item` (see `robustcount.text`), higher meaning
    more influential on the probability of `label`.

    `gradient`: ||d p_label / d e_p||_1 summed over the word's sub-token embeddings (torch models).
    `leave-one-out`: p_label(X) - p_label(X without the word), as in TextFooler's importance.
    `auto`: gradients when the model exposes them, else leave-one-out. All calls go through
    `engine` and count against its budget. With `words` (word indices), leave-one-out queries
    only those and the other words score NaN (gradients score every word in one call anyway).
    """
    if method not in METHODS:
        raise RobustcountError(f"unknown sensitivity method {method!r} (use {', '.join(METHODS)})")
    if not 0 <= label < len(engine.labels):
        raise RobustcountError(f"label index {label} out of range for {len(engine.labels)} labels")
    tokens = tokenize(perturbed_part(item))
    if not tokens.words:
        return np.zeros(0)
    if method == "gradient" or (method == "auto" and engine.supports_gradients):
        return engine.word_gradient_norms(item, tokens.spans(), label)
    scored = sorted(set(range(len(tokens.words)) if words is None else words))
    variants = [replace_perturbed_part(item, tokens.without(i)) for i in scored]
    probs = engine.predict_proba([item, *variants])[:, label]
    scores = np.full(len(tokens.words), np.nan)
    scores[scored] = probs[0] - probs[1:]
    return scores
