"""The structural checks that certificates (`certificate.structure_problem`) and certify run
records (`certify_record`, `records`) share: the shape of an input, a position, a point and a
count as they are written in JSON, the margin tolerance, the engine's counters, and where two
JSON values first differ. Each is a predicate or a path, checked without loading anything."""

from __future__ import annotations

import math
import sys
from dataclasses import fields

from robustcount.goal import MARGIN_TOLERANCE
from robustcount.models.accounting import QueryStats

MAX_DIGITS = sys.get_int_max_str_digits() or 4300
"""The most digits a recorded count may have: Python's limit on converting a string to an integer
(a space's count beyond it could not be written either)."""
COUNTERS = frozenset(f.name for f in fields(QueryStats)) - {"model_seconds"}
"""The engine's counters a record may hold."""
INPUT_PROBLEM = "input must be a text or a [premise, hypothesis] pair"
"""What a record or a certificate whose input is not one (`is_input`) is told."""


def is_int(value) -> bool:
    """An integer, never a boolean."""
    return type(value) is int


def is_input(value) -> bool:
    """Whether `value` is an input as run records and certificates write it: a text or a
    [premise, hypothesis] pair of texts."""
    return isinstance(value, str) or (isinstance(value, list) and len(value) == 2
                                      and all(isinstance(t, str) for t in value))


def is_position(value) -> bool:
    """Whether `value` is a position of a space as certificates write it: [kind, index, [candidates]]."""
    return (isinstance(value, list) and len(value) == 3 and value[0] in ("word", "gap") and is_int(value[1])
            and isinstance(value[2], list) and len(value[2]) >= 1 and all(isinstance(c, str) for c in value[2]))


def is_point(value, allow_none: bool) -> bool:
    """Whether `value` is a point as certificates and proofs record it: [position, candidate] pairs."""
    if value is None:
        return allow_none
    return isinstance(value, list) and all(
        isinstance(c, list) and len(c) == 2 and all(is_int(v) for v in c) for c in value)


def is_decimal(value) -> bool:
    """A count as certificates and proofs record it: ASCII digits, no leading zero, at most
    MAX_DIGITS of them (the most Python converts to an integer)."""
    return (isinstance(value, str) and 0 < len(value) <= MAX_DIGITS and value.isascii() and value.isdigit()
            and (value == "0" or value[0] != "0"))


def is_tolerance(value) -> bool:
    """Whether `value` is the margin tolerance robustcount decides with (`goal.MARGIN_TOLERANCE`), as a float."""
    return type(value) is float and value == MARGIN_TOLERANCE


def is_counters(value) -> bool:
    """Whether `value` maps some of the engine's counters (`COUNTERS`) to integers >= 0."""
    return isinstance(value, dict) and all(k in COUNTERS and is_int(v) and v >= 0 for k, v in value.items())


def difference(found, expected, path: tuple = ()) -> str | None:
    """Where `found` first differs from `expected`, types included (so that 1 is not true and "2"
    is not 2), said of a path such as `space.positions[2]`; None when they are the same."""
    if isinstance(expected, dict):
        if not isinstance(found, dict):
            return f"{dotted(path)} is not what its record and the run header give"
        for key in expected:
            if key not in found:
                return f"{dotted((*path, key))} is missing"
            differs = difference(found[key], expected[key], (*path, key))
            if differs is not None:
                return differs
        extra = sorted(set(found) - set(expected))
        return f"{dotted((*path, extra[0]))} is a field certify never writes" if extra else None
    if isinstance(expected, list):
        if not isinstance(found, list) or len(found) != len(expected):
            return f"{dotted(path)} is not what its record and the run header give"
        return next((differs for i, (a, b) in enumerate(zip(found, expected))
                     if (differs := difference(a, b, (*path, i))) is not None), None)
    if type(found) is type(expected) and found == expected:
        return None
    return f"{dotted(path)} is not what its record and the run header give"


def same(found, expected) -> bool:
    """Whether `found` and `expected` are the same JSON value, types included (`difference`)."""
    return difference(found, expected) is None


def non_finite(value, path: tuple = ()) -> str | None:
    """The path of the first NaN or infinity in `value`, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else dotted(path)
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return next((where for key, child in children if (where := non_finite(child, (*path, key))) is not None), None)


def dotted(path: tuple) -> str:
    """`("proofs", 0, "total")` as `proofs[0].total`."""
    text = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path).removeprefix(".")
    return text or "the whole"
