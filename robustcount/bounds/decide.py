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

from robustcount.bounds.intervals import UNIT_ROUNDOFF, Interval


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


def margin_upper_bound(differences: Interval, gold: int) -> float:
    """An upper bound of p(gold) - max p(other) over the box whose z_gold - z_j lie in
    `differences`: for a label j with z_gold - z_j <= h_j < 0, p(gold) - p(j) = p(j) (exp(d_j) - 1)
    <= p_low(j) (exp(h_j) - 1) < 0, where p_low(j) = 1 / (1 + exp(h_j) + sum_k exp(h_j - l_k)) (k
    the labels but gold and j) bounds p(j) below; the smallest such bound over j, or 1 when no
    label's difference is bounded below zero."""
    low, high = differences.lo.tolist(), differences.hi.tolist()
    best = 1.0
    for j, h in enumerate(high):
        if j == gold or not h < 0:
            continue
        rest = math.fsum(math.exp(min(h - low[k], 700)) for k in range(len(low)) if k not in (gold, j))
        best = min(best, (math.exp(h) - 1) / (1 + math.exp(h) + rest))
    return best


def refutes(differences: Interval, gold: int, tolerance: float) -> bool:
    """Whether every point of the box leaves `gold` under the goal's rule (margin at most `tolerance`)."""
    return margin_upper_bound(differences, gold) + softmax_allowance(len(differences.lo)) <= tolerance
