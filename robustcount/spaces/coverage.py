"""How much of a text a space covers, as run records keep it (`COVERAGE`) so that every summary
can name the space its figures are over (`runs/space_note.py`): the text's words, the words and
gaps the space may change, and |Omega_r| at the radius its command used."""

from __future__ import annotations

from robustcount.spaces.space import Space
from robustcount.text import Input, perturbed_part, tokenize

COVERAGE = "space_coverage"
"""The record key of an example's space coverage."""
FIELDS = ("words", "changeable_words", "gap_positions", "radius", "size")
"""A coverage's fields: integers >= 0 (`radius` None for the whole space), `size` a decimal string."""


def space_coverage(space: Space, radius: int | None) -> dict:
    """One example's coverage: its text's words, the words and gaps `space` may change, and
    |Omega_r| at `radius` (at most the space's positions; None: the whole space, as an attack
    searches it) as a decimal string."""
    words = sum(p.kind == "word" for p in space.positions)
    r = space.max_radius() if radius is None else min(radius, space.max_radius())
    return {"words": len(space.tokens.words), "changeable_words": words,
            "gap_positions": len(space.positions) - words, "radius": None if radius is None else r,
            "size": str(space.count(r))}


def coverage_problem(coverage, item: Input, positions: int) -> str | None:
    """What makes a recorded coverage disagree with its text `item` and its space's number of
    `positions`, or None (|Omega_r| needs the candidate lists: checked where a proof counts it)."""
    if not isinstance(coverage, dict) or set(coverage) != set(FIELDS):
        return f"{COVERAGE} must hold {', '.join(FIELDS)}"
    counts = [coverage[k] for k in FIELDS[:-1]]
    size = coverage["size"]
    if not all(type(v) is int and v >= 0 for v in counts) or not isinstance(size, str) or not size.isdecimal():
        return f"{COVERAGE} must hold integers >= 0 and its size as a decimal string"
    words = len(tokenize(perturbed_part(item)).words)
    if coverage["words"] != words:
        return f"{COVERAGE} says {coverage['words']} words, its input has {words}"
    if coverage["changeable_words"] + coverage["gap_positions"] != positions:
        return f"{COVERAGE} says {coverage['changeable_words'] + coverage['gap_positions']} positions, its space has " \
               f"{positions}"
    if coverage["radius"] > positions:
        return f"{COVERAGE} is at r = {coverage['radius']}, beyond its space's {positions} positions"
    return None
