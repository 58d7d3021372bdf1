"""From bounds on logit differences to the goal's rule: a box keeps the gold label at every point
only when the lower bound of p(gold) - max p(other) exceeds the tolerance.

With d_j = z_gold - z_j >= l_j for every other label j, p(gold) = 1 / (1 + sum_j exp(-d_j)) is at
least 1 / (1 + sum_j exp(-l_j)), and p(j) <= 1 / (1 + exp(d_j)) <= 1 / (1 + exp(l_j)) (drop every
term of its softmax's denominator but gold's); the margin is at least the smallest difference of
the two (for two labels this is tanh(l / 2), exact). `TorchClassifier` computes its softmax in
float32: each probability then lies within (k + 8) float32 ulps of the exact softmax of the
logits it computed (one subtraction, one exp, a sum of k terms each at most 1 after subtracting
the max, one division), so the computed margin lies within twice that of the exact one;
`SOFTMAX_ALLOWANCE` doubles it again, and adds 1e-12 for this module's own float64 arithmetic.
"""

from __future__ import annotations

import math

import torch

from robustcount.proofs.bounds.intervals import UNIT_ROUNDOFF, Interval


def softmax_allowance(labels: int) -> float:
    """How far the model's computed margin may lie below the exact margin of its logits."""
    return 4 * (labels + 8) * UNIT_ROUNDOFF[torch.float32] + 1e-12


def margin_lower_bound(differences: Interval, gold: int) -> float:
    """A lower bound of p(gold) - max p(other) over the box whose z_gold - z_j lie in `differences`."""
    low = [float(x) for j, x in enumerate(differences.lo.tolist()) if j != gold]
    gold_low = 1 / (1 + math.fsum(math.exp(-x) if x > -700 else math.inf for x in low))
    other_high = max(1 / (1 + math.exp(x)) if x < 700 else 0.0 for x in low)
    return gold_low - other_high


def certifies(differences: Interval, gold: int, tolerance: float) -> bool:
    """Whether every point of the box keeps `gold` under the goal's rule (margin above `tolerance`)."""
    return margin_lower_bound(differences, gold) - softmax_allowance(len(differences.lo)) > tolerance
