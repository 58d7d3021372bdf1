"""Where the query engine and a space meet: per-word scores of an input (white-box gradient
sensitivity, black-box leave-one-out) and the orders in which searches visit a space's positions
by them. Each score has one name: `sensitivity` is gradient times input (or leave-one-out for a
black box), `leave-one-out` the drop in p(label) when the word is deleted, `margins` the lowest
margin a position's single substitutions reach; TextFooler's importance (its eq. 2, which adds the
label-flip term) is TextFooler's own (`attacks/textfooler.py`)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

import numpy as np

from robustcount.errors import RobustcountError
from robustcount.goal import Evaluated, evaluate_points
from robustcount.models.engine import QueryEngine
from robustcount.spaces.space import Space
from robustcount.text import Input, perturbed_part, replace_perturbed_part, tokenize

SENSITIVITIES = ("auto", "gradient", "leave-one-out")
"""How `word_sensitivities` scores words: gradients when the model has them, else leave-one-out;
gradient times input; leave-one-out."""
MARGINS = "margins"
"""The order by the points of one change (`margin_order`): no gradients, no extra model calls for
a search that evaluates those points anyway (the prover evaluates them first, `proofs.prover`)."""
ORDERS = ("sensitivity", "leave-one-out", "text", "random", MARGINS)
"""Position orders: most sensitive first (gradients when the model has them, else leave-one-out),
largest leave-one-out drop first, text order, a random order (a fixed shuffle seeded by the
space's points, so the same wherever its table lies: the baseline the others are measured
against), or the positions whose single substitutions reach the lowest margin first (MARGINS)."""


def word_sensitivities(engine: QueryEngine, item: Input, label: int, method: str = "auto",
                       words: Sequence[int] | None = None) -> np.ndarray:
    """One score per word of the perturbed part of `item` (see `robustcount.text`), higher meaning
    more influential on the probability of `label`; `method` is one of SENSITIVITIES.

    `gradient`: |d p_label / d e_t . e_t| (gradient times input) summed over the word's sub-token
    embeddings e_t (torch models).
    `leave-one-out`: p_label(X) - p_label(X without the word).
    `auto`: gradients when the model exposes them, else leave-one-out. All calls go through
    `engine` and count against its budget. With `words` (word indices), leave-one-out queries
    only those and the other words score NaN (gradients score every word in one call anyway).
    """
    if method not in SENSITIVITIES:
        raise RobustcountError(f"unknown sensitivity method {method!r} (use {', '.join(SENSITIVITIES)})")
    if not 0 <= label < len(engine.labels):
        raise RobustcountError(f"label index {label} out of range for {len(engine.labels)} labels")
    tokens = tokenize(perturbed_part(item))
    if not tokens.words:
        return np.zeros(0)
    if method == "gradient" or (method == "auto" and engine.supports_gradients):
        return engine.word_saliency(item, tokens.spans(), label)
    scored = sorted(set(range(len(tokens.words)) if words is None else words))
    variants = [replace_perturbed_part(item, tokens.without(i)) for i in scored]
    probs = engine.predict_proba([item, *variants])[:, label]
    scores = np.full(len(tokens.words), np.nan)
    scores[scored] = probs[0] - probs[1:]
    return scores


def position_order(engine: QueryEngine | None, space: Space, gold: int, order: str | Sequence[int]) -> list[int]:
    """The indices of `space.positions` in the visiting `order`: a name from ORDERS, or an explicit
    permutation of the positions (returned as it is). `sensitivity` (gradients when the model has
    them, else leave-one-out) and `leave-one-out` put the most influential first; a gap takes the
    larger score of its two neighbouring words, leave-one-out queries only the words the positions
    need, and ties keep text order. `margins` evaluates every point of one change, in text order
    (`margin_order`). `text` and `random` need no engine."""
    if not isinstance(order, str):
        if sorted(order) != list(range(len(space.positions))):
            raise RobustcountError("an explicit position order must be a permutation of the space's positions")
        return list(order)
    if order not in ORDERS:
        raise RobustcountError(f"unknown position order {order!r} (use {', '.join(ORDERS)})")
    if order == "text" or not space.positions:
        return list(range(len(space.positions)))
    if order == MARGINS:
        return margin_order(space, evaluate_points(engine, space, (p for p in space.points_by_subset(1) if p), gold))
    if order == "random":
        shuffled = list(range(len(space.positions)))
        random.Random(space.points_digest()).shuffle(shuffled)
        return shuffled
    needed = {i for p in space.positions for i in ((p.index,) if p.kind == "word" else (p.index - 1, p.index))}
    method = "auto" if order == "sensitivity" else "leave-one-out"
    words = word_sensitivities(engine, space.item, gold, method=method, words=sorted(needed))
    scores = [words[p.index] if p.kind == "word" else max(words[p.index - 1], words[p.index])
              for p in space.positions]
    return sorted(range(len(space.positions)), key=lambda i: (-scores[i], i))


def order_calls(space: Space, order: str | Sequence[int]) -> int:
    """The most model calls (a gradient pass counted as one) that `position_order` makes for
    `order` on `space`: one per word for the sensitivities, none for `text`, `random` or an
    explicit order, and for `margins` the points of one change."""
    if not isinstance(order, str) or order in ("text", "random") or not space.positions:
        return 0
    if order == MARGINS:
        return sum(space.sizes)
    return len(space.tokens.words)


def margin_order(space: Space, evaluated: Iterable[Evaluated]) -> list[int]:
    """The indices of `space.positions` by the lowest margin that the points of `evaluated` with
    one change reach at each position (the other points are ignored), lowest first: the positions
    whose single substitutions come nearest to an adversary first. Ties, and positions without
    such a point, keep text order (those last)."""
    lowest = [np.inf] * len(space.positions)
    for part in evaluated:
        for point, value in zip(part.points, part.margins.tolist()):
            if len(point) == 1:
                position = point[0][0]
                lowest[position] = min(lowest[position], value)
    return sorted(range(len(space.positions)), key=lambda i: (lowest[i], i))
