"""The checks of the proofs a certify record holds, as JSON, without any model: each proof
well formed and consistent with itself (`proof_problem`), read back as the `Proof` it records
(`read_proof`), their method (`proofs_method`, and the run's, `run_method`), and the proofs of one record those that `prover.certify_radii` makes for the
run's radius and max_points (`schedule_problem`)."""

from __future__ import annotations

import json
from dataclasses import fields

from robustcount.proofs.branch import BoundProof
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, UNDECIDED, Proof
from robustcount.proofs.structure import is_counters, is_decimal, is_int, is_point
from robustcount.status import LIMITS

PROOF_FIELDS = frozenset(f.name for f in fields(Proof)) - {"seconds", "limit"}
"""A proof's fields as a run file holds them (its seconds are the runner's, logged apart; an
undecided proof also names its `limit`, unless written before that field)."""
BOUND_PROOF_FIELDS = PROOF_FIELDS | {"boxes_bounded", "certified_by_bounds"}
"""A branch-and-bound proof's fields as a run file holds them (its split tree is in its certificate)."""
EARLIER_METHOD = "enumerate"
"""The method of a certify run whose header has none (written before `--method`)."""


def run_method(header: dict) -> str:
    """The proof method a certify run's header names (`EARLIER_METHOD` when it names none)."""
    return header["options"].get("method", EARLIER_METHOD)


def proofs_method(proofs) -> str | None:
    """`bound` or `enumerate`: the method of the first of `proofs` (by its fields), None without one."""
    if not isinstance(proofs, list) or not proofs or not isinstance(proofs[0], dict):
        return None
    return "bound" if "certified_by_bounds" in proofs[0] else "enumerate"


def proof_problem(proof: dict, k: int, tolerance: float) -> str | None:
    """What makes one proof malformed or self-contradictory (the k-th proves r = k, its points
    decided with the margin `tolerance`), or None. A bound proof's points are those it checked
    and those in boxes its bounds certified."""
    bound = proofs_method([proof]) == "bound"
    expected = BOUND_PROOF_FIELDS if bound else PROOF_FIELDS
    missing, extra = sorted(expected - set(proof)), sorted(set(proof) - expected - {"limit"})
    if missing or extra:
        return f"the field {missing[0]} is missing" if missing else f"holds {extra[0]}, a field a proof never has"
    if bound and not (
            is_int(proof["boxes_bounded"]) and proof["boxes_bounded"] >= 0 and is_decimal(proof["certified_by_bounds"])
            and is_decimal(proof["total"]) and int(proof["certified_by_bounds"]) <= int(proof["total"])):
        return "boxes_bounded must be an integer >= 0 and certified_by_bounds a decimal string up to the total"
    by_bounds = int(proof["certified_by_bounds"]) if bound else 0
    return _types_problem(proof, k, by_bounds) or _claims_problem(proof, k, tolerance, by_bounds)


def _types_problem(proof: dict, k: int, by_bounds: int) -> str | None:
    """Whether each field of a proof (with all its fields) is of the type certify writes."""
    status, total, checked = proof["status"], proof["total"], proof["checked"]
    margin, point = proof["smallest_margin"], proof["smallest_margin_point"]
    types = [
        (status in (CERTIFIED, ADVERSARIAL, UNDECIDED), "status must be certified, adversarial or undecided"),
        (proof["radius"] == k and is_int(proof["radius"]), f"it is at radius {json.dumps(proof['radius'])}: the "
                                                           f"proofs go r = 1, 2, ..., so this one is r = {k}"),
        (is_decimal(total) and int(total) >= 1, "total must be a decimal string >= 1 (|Omega_r| holds the input "
                                                 "itself)"),
        (is_int(checked) and is_decimal(total) and 0 <= checked <= int(total) - by_bounds,
         "checked must be an integer from 0 to the total (less the points certified by bounds)"),
        (margin is None or (type(margin) in (int, float)), "smallest_margin must be a number"),
        (is_point(point, allow_none=True),
         "smallest_margin_point must be a list of [position, candidate] pairs"),
        (proof["witness"] is None or isinstance(proof["witness"], (str, list)), "witness must be an input"),
        (proof["reason"] is None or isinstance(proof["reason"], str), "reason must be a text"),
        ("limit" not in proof or status == UNDECIDED and proof["limit"] in LIMITS,
         f"limit must be one of {', '.join(LIMITS)}, on an undecided proof only"),
        (is_counters(proof["queries"]), "queries must map the engine's counters to integers >= 0"),
    ]
    return next((problem for ok, problem in types if not ok), None)


def _claims_problem(proof: dict, k: int, tolerance: float, by_bounds: int) -> str | None:
    """Whether a well-typed proof's status agrees with its counts, its smallest margin (decided
    with `tolerance`), its witness and its reason."""
    status, total, checked = proof["status"], int(proof["total"]), proof["checked"]
    margin, point = proof["smallest_margin"], proof["smallest_margin_point"]
    decided = checked + by_bounds
    if len({margin is None, point is None, checked == 0}) != 1:
        return "the smallest margin, the point it was seen at and the points checked disagree on whether any " \
               "point was checked"
    if status == CERTIFIED:
        if decided != total:
            return f"certified after checking {checked} of {total} points" + \
                (f" ({by_bounds} certified by bounds)" if by_bounds else "")
        if margin is not None and margin <= tolerance:  # None: bounds certified every point, none enumerated
            return f"certified with a smallest margin of {margin}, within the tolerance {tolerance:g} (a point " \
                   "that leaves the gold label)"
    if status == ADVERSARIAL:
        if margin is None or margin > tolerance:
            return f"adversarial with a smallest margin of {margin}, above the tolerance {tolerance:g} (its " \
                   "witness keeps the gold label)"
        if len(point) != k:
            after = f", after r = {k - 1} was certified," if k > 1 else ""
            return (f"its witness is at distance {len(point)}{' (the clean input)' if not point else ''}: an "
                    f"adversary found at r = {k}{after} lies at distance {k}")
    elif proof["witness"] is not None:
        return f"a witness on a proof that is {status}"
    if (status == UNDECIDED) != (proof["reason"] is not None):
        return "a reason on a decided proof" if status != UNDECIDED else "undecided without a reason"
    if status == UNDECIDED and margin is not None and margin <= tolerance:
        return f"undecided although it saw a margin of {margin}, within the tolerance {tolerance:g} (an adversary " \
               "ends a proof)"
    if status == UNDECIDED and decided == total:
        return f"undecided after checking every one of its {total} points"
    return None


def read_proof(found: dict) -> Proof:
    """The `Proof` (a `BoundProof` for a bound one) a well-formed proof record (`proof_problem`) holds."""
    point = found["smallest_margin_point"]
    common = (found["status"], found["radius"], int(found["total"]), found["checked"], found["smallest_margin"],
              None if point is None else tuple(tuple(c) for c in point))
    named = {"witness": found["witness"], "reason": found["reason"], "limit": found.get("limit"),
             "queries": found["queries"]}
    if "certified_by_bounds" in found:
        return BoundProof(*common, **named, boxes_bounded=found["boxes_bounded"],
                          certified_by_bounds=int(found["certified_by_bounds"]))
    return Proof(*common, **named)


def schedule_problem(proofs: list[Proof], positions: int, options: dict) -> str | None:
    """Whether `proofs` are those certify_radii makes up to the run's radius and max_points."""
    last = min(options["radius"], positions)
    if len(proofs) > last:
        return f"{len(proofs)} proofs, but certify proves r = 1 .. min(radius {options['radius']}, space " \
               f"positions {positions}) = {last}"
    for k, proof in enumerate(proofs[:-1], start=1):
        if proof.status != CERTIFIED:
            return f"proof {k + 1} follows an {proof.status} proof at r = {k}: the search stops at the first " \
                   "radius not certified"
    if len(proofs) < last and (not proofs or proofs[-1].status == CERTIFIED):
        return f"the proofs stop at r = {len(proofs)} with nothing undecided or adversarial, below " \
               f"min(radius {options['radius']}, space positions {positions}) = {last}"
    for proof in proofs:
        if isinstance(proof, BoundProof):
            if proof.checked > options["max_points"]:
                return f"proof {proof.radius}: {proof.checked} points checked, above the run's max_points " \
                       f"{options['max_points']}"
        elif proof.total > options["max_points"] and (proof.status != UNDECIDED or proof.checked):
            return f"proof {proof.radius}: |Omega_{proof.radius}| = {proof.total} points, above the run's " \
                   f"max_points {options['max_points']}, yet {proof.checked} were checked"
    return None
