"""The Zéroe word-level attack protocol (Eger & Benz 2020, section 3.1).

At level p, the goal is to perturb ceil(p * n) of the n words of a text: word indices are drawn
at random without replacement, and each drawn word is attacked when a coin with probability p
comes up; this goes on until the goal is met or no index is left. A word counts as perturbed
only if the perturber changed it. The character-level probability phi equals p. Segmentation acts
on the gaps between words instead (see `Segment`). Only a pair's hypothesis is attacked.
"""

from __future__ import annotations

import math
import random

from robustcount.errors import RobustcountError
from robustcount.seeding import derive_seed
from robustcount.spaces.perturbers import Perturber, Segment, get_perturber
from robustcount.text import Input, Tokens, perturbed_part, replace_perturbed_part, tokenize

LEVELS = {"low": 0.2, "mid": 0.5, "high": 0.8}
"""The paper's attack levels."""


def parse_level(level: str | float) -> float:
    """`low`, `mid`, `high` or a number in [0, 1]."""
    if isinstance(level, str) and level in LEVELS:
        return LEVELS[level]
    try:
        value = float(level)
    except (TypeError, ValueError):
        raise RobustcountError(f"level must be low, mid, high or a number in [0, 1], got {level!r}") from None
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise RobustcountError(f"level must be in [0, 1], got {value}")
    return value


def perturbed_inputs(examples, attack: str, level: str | float, seed: int) -> list[Input]:
    """Each example's input attacked by the perturber `attack` at `level`, with its own seed derived
    from (seed, attack, level, example id): the inputs of the `zeroe` command's cell."""
    perturber = get_perturber(attack)
    return [zeroe_attack(e.input, perturber, level, derive_seed(seed, attack, level, e.id)) for e in examples]


def zeroe_attack(item: Input, perturber: Perturber, level: str | float, seed: int) -> Input:
    """`item` attacked by `perturber` at `level` under the paper's protocol; `seed` fixes it."""
    p = parse_level(level)
    rng = random.Random(seed)
    tokens = tokenize(perturbed_part(item))
    words, seps = list(tokens.words), list(tokens.separators)
    if isinstance(perturber, Segment):
        seps[1:-1] = perturber.join_gaps(seps[1:-1], p, rng)
        return replace_perturbed_part(item, Tokens(tuple(words), tuple(seps)).join())
    goal = math.ceil(p * len(words))
    order = list(range(len(words)))
    rng.shuffle(order)
    perturbed = 0
    for i in order:
        if perturbed >= goal:
            break
        if rng.random() < p:
            new = perturber.perturb(words[i], p, rng)
            if new != words[i]:
                words[i] = new
                perturbed += 1
    return replace_perturbed_part(item, Tokens(tuple(words), tuple(seps)).join())
