"""The untargeted goal every robustness question shares: does a point keep the gold label?

One tie rule everywhere (prover, attacks, PR, `verify`, the testing API): a point keeps the gold
label only when p(gold) is strictly above every other label's probability. At an exact tie
(0.5 / 0.5) the model does not prefer the gold label, so the point is adversarial, and a clean
input at a tie counts as not correctly classified, whatever the order of the labels. (Accuracy
in `evaluate` and `zeroe` reports the label the model outputs, its argmax.)
"""

from __future__ import annotations

import numpy as np


def margin(probs: np.ndarray, gold: int) -> np.ndarray:
    """p(gold) - max p(other label), row-wise: zero or below where the point is adversarial."""
    probs = np.atleast_2d(probs)
    others = np.delete(probs, gold, axis=1)
    return probs[:, gold] - others.max(axis=1)


def keeps_label(probs: np.ndarray, gold: int) -> np.ndarray:
    """Row-wise: whether the model strictly prefers `gold` (margin > 0)."""
    return margin(probs, gold) > 0


def is_adversarial(probs: np.ndarray, gold: int) -> np.ndarray:
    """Row-wise: whether the point leaves `gold` (margin <= 0, ties included)."""
    return ~keeps_label(probs, gold)
