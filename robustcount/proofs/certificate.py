"""Certificates: everything needed to re-check a proof, and the independent check.

A certificate records the input, the gold label, the radius, the space in full (its definition and
every candidate list, with their SHA-256 digest), the model's identity, weight digest and batching
(`QueryEngine.batching`), the margin tolerance its points were decided with (`goal`), the number
of points checked, and the smallest margin seen and where. `verify_certificate` rebuilds the space
from the recorded lists, checks the digests and the count, and re-evaluates every point of Omega_r
in canonical order (not the prover's order) with the model it is given, deciding each with the
tolerance, which must be `goal.MARGIN_TOLERANCE`, and the recorded smallest margin must be the
least found and the margin at its recorded point; an adversarial certificate's witness must leave
the gold label that the model gives the clean input, with the recorded margin, and is never the
clean input itself. (`proofs.records` checks a certify
run's records around them.)

A certificate of branch and bound (`method` "bound") records instead the split tree of Omega_r
(`boxes`, see `bounds.boxes.SplitTree`): each box decided by its bound (with the margin
lower bound) or enumerated. `verify_certificate` replays the splits from Omega_r (so the boxes
partition it), recomputes every bound box's bound, which must certify it and equal the recorded
one, and evaluates every point of every enumerated box (docs/certificates.md).

The candidate lists are also rebuilt from the recorded definition (sources and filters) and must
be the same, list by list: a certificate cannot drop, add or change a candidate or a position
and recompute the digest. Spaces built from files of their maker's (`table:`, `vectors:`, a
`natural:` table) are refused, unless the checker allows reading the `table:` and `natural:`
files the definition names (`allow_files`). A space that leaves out the words beyond the model's
window rebuilds from the number its definition records (`spaces.build.RecordedWindow`), and that
number must be the one the checker's model's window gives.

A certificate is data, never code: its structure is checked (`structure_problem`) before anything
is loaded, and the model it names is only a name (the `verify` command loads a model by that name
only when it is a built-in one; any other model is the checker's own, passed as `--model`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robustcount import __version__
from robustcount.bounds.boxes import BOUND, BOUND_BATCH, ENUMERATE, Box, replay
from robustcount.bounds.decide import certifies, margin_lower_bound, softmax_allowance
from robustcount.bounds.networks import bounds_for
from robustcount.bounds.slots import token_slots
from robustcount.errors import RobustcountError
from robustcount.goal import MARGIN_TOLERANCE, InvalidAdversary, check_adversary, evaluate_points, keeps_label
from robustcount.models.batch_probe import BATCH_INVARIANT, BATCH_TOLERANCE, ONE_AT_A_TIME, is_batching
from robustcount.models.engine import QueryEngine
from robustcount.models.identity import current_digest
from robustcount.proofs.branch import BoundProof
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, Proof
from robustcount.proofs.rebuild import rebuilt_space_problem
from robustcount.proofs.structure import INPUT_PROBLEM, is_decimal, is_input, is_point, is_position, is_tolerance
from robustcount.spaces.build import words_beyond
from robustcount.spaces.space import Position, Space

FORMAT = "robustcount-certificate/1"
BOUND_METHOD = "bound"
"""The `method` of a certificate whose boxes branch and bound decided (an enumerating prover's
certificate has no `method`)."""
BOUND_SLACK = 1e-9
"""How far a margin lower bound `verify` recomputes may lie from the recorded one (float64
arithmetic in batches of other boxes); what decides a box is always the recomputed bound."""
SMALLEST_MARGIN_SLACK = 2 * BATCH_TOLERANCE
"""How far the smallest margin `verify` finds may lie from the recorded one: the most batch
composition moves a margin in a model the query engine batches."""


def make_certificate(example_id: str, space: Space, gold: int, labels, proof: Proof, model_spec: str,
                     digest: str | None, batching: str) -> dict:
    """The certificate of `proof` (certified or adversarial) for `space`, decided with the goal's
    MARGIN_TOLERANCE by a model evaluated as `batching` says."""
    if proof.status not in (CERTIFIED, ADVERSARIAL):
        raise RobustcountError(f"no certificate for an {proof.status} proof")
    return {
        "format": FORMAT,
        "robustcount": __version__,
        "example_id": example_id,
        "input": list(space.item) if isinstance(space.item, tuple) else space.item,
        "labels": list(labels),
        "gold": labels[gold],
        "radius": proof.radius,
        "status": proof.status,
        "space": {
            "definition": space.definition,
            "positions": [[p.kind, p.index, list(p.candidates)] for p in space.positions],
            "digest": space.digest(),
        },
        "model": {"spec": model_spec, "digest": digest, "batching": batching},
        "margin_tolerance": MARGIN_TOLERANCE,
        "points": str(proof.total),
        "checked": str(proof.checked),
        "smallest_margin": proof.smallest_margin,
        "smallest_margin_point": None if proof.smallest_margin_point is None
        else [list(c) for c in proof.smallest_margin_point],
        **(_bound_fields(proof) if isinstance(proof, BoundProof) and proof.status == CERTIFIED else {}),
    }


def _bound_fields(proof: BoundProof) -> dict:
    """What a certificate of a branch-and-bound proof adds: the points its bounds certified and
    the split tree of its boxes, each leaf with how it was decided (`boxes.SplitTree`)."""
    return {"method": BOUND_METHOD, "certified_by_bounds": str(proof.certified_by_bounds), "boxes": proof.boxes}


@dataclass
class Verdict:
    holds: bool
    reason: str


def structure_problem(certificate) -> str | None:
    """What makes `certificate` malformed, or None: every field a certificate must have, with its
    type, checked without loading or running anything. A certificate without a model digest is
    malformed: nothing could tie it to the model that checks it."""
    if not isinstance(certificate, dict):
        return "a certificate is a JSON object"
    if certificate.get("format") != FORMAT:
        return f"unknown certificate format {certificate.get('format')!r}"
    item, labels, space = certificate.get("input"), certificate.get("labels"), certificate.get("space")
    model = certificate.get("model")
    checks = [
        (isinstance(certificate.get("example_id"), str), "example_id must be a string"),
        (is_input(item), INPUT_PROBLEM),
        (isinstance(labels, list) and labels and all(isinstance(v, str) for v in labels), "labels must be strings"),
        (isinstance(labels, list) and certificate.get("gold") in labels, "gold must be one of the labels"),
        (type(certificate.get("radius")) is int and certificate["radius"] >= 0, "radius must be an integer >= 0"),
        (certificate.get("status") in (CERTIFIED, ADVERSARIAL), "status must be certified or adversarial"),
        (isinstance(space, dict) and isinstance(space.get("definition"), dict) and isinstance(space.get("digest"), str)
         and isinstance(space.get("positions"), list) and all(is_position(p) for p in space["positions"]),
         "space must hold a definition, a digest and [kind, index, [candidates]] positions"),
        (isinstance(model, dict) and isinstance(model.get("spec"), str), "model.spec must be a string"),
        (isinstance(model, dict) and isinstance(model.get("digest"), str),
         "model.digest is missing: the certificate cannot be tied to a model"),
        (is_tolerance(certificate.get("margin_tolerance")),
         f"margin_tolerance must be {MARGIN_TOLERANCE:g}, the tolerance robustcount decides with (another one would "
         "move what counts as adversarial)"),
        (isinstance(model, dict) and is_batching(model.get("batching")),
         f"model.batching must say how the model was evaluated ({BATCH_INVARIANT!r} or {ONE_AT_A_TIME!r} ...)"),
        (all(is_decimal(certificate.get(k)) for k in ("points", "checked")),
         "points and checked must be decimal strings"),
        (certificate.get("smallest_margin") is None or (type(certificate["smallest_margin"]) in (int, float)
                                                         and math.isfinite(certificate["smallest_margin"])),
         "smallest_margin must be a finite number"),
        (is_point(certificate.get("smallest_margin_point"), allow_none=certificate.get("status") != ADVERSARIAL),
         "smallest_margin_point must be a list of [position, candidate] pairs (the witness, when adversarial)"),
        ((certificate.get("smallest_margin") is None) == (certificate.get("smallest_margin_point") is None),
         "smallest_margin and smallest_margin_point are recorded together or not at all"),
        (isinstance(certificate.get("robustcount"), str), "robustcount must name a version"),
        (certificate.get("method", BOUND_METHOD) == BOUND_METHOD, f"method must be {BOUND_METHOD!r} or absent"),
        ("method" not in certificate or (certificate.get("status") == CERTIFIED
                                         and is_decimal(certificate.get("certified_by_bounds"))
                                         and isinstance(certificate.get("boxes"), list)),
         "a bound certificate is certified, with certified_by_bounds a decimal string and its boxes a list"),
        ("method" in certificate or not {"certified_by_bounds", "boxes"} & set(certificate),
         "boxes and certified_by_bounds belong to a certificate whose method is bound"),
    ]
    return next((problem for ok, problem in checks if not ok), None)




def window_problem(space: Space, engine: QueryEngine) -> str | None:
    """Whether the words the space's definition says lie beyond the model's window (none, when it
    records no window) are those the window of the model behind `engine` leaves out, or None. A
    definition written before windows records none and is not checked."""
    if space.window is None:
        return None
    window = engine.window
    beyond = 0 if window is None else words_beyond(window, space.item, space.tokens)
    if window is None or (window.size, beyond) != (space.window["size"], space.window["beyond"]):
        found = "no window" if window is None else f"a {window.size} window with {beyond} words beyond it"
        return (f"the space records {space.window['beyond']} words beyond a {space.window['size']} window, the "
                f"model has {found}")
    return None


def verify_certificate(certificate: dict, engine: QueryEngine, allow_files: bool = False) -> Verdict:
    """Re-check `certificate` with the model behind `engine` (see the module docstring);
    `allow_files` lets file-based sources be rebuilt from the paths the certificate records."""
    problem = structure_problem(certificate)
    if problem is not None:
        return Verdict(False, f"malformed certificate: {problem}")
    try:
        space = _certificate_space(certificate)
        radius, status = int(certificate["radius"]), certificate["status"]
        labels = list(engine.labels)
        if certificate["labels"] != labels:
            return Verdict(False, f"the model's labels {labels} differ from the certificate's")
        gold = labels.index(certificate["gold"])
        tolerance = certificate["margin_tolerance"]
    except (KeyError, TypeError, ValueError) as err:
        return Verdict(False, f"malformed certificate: {err}")
    if space.digest() != certificate["space"]["digest"]:
        return Verdict(False, "the candidate lists do not match the space digest")
    problem = rebuilt_space_problem(space, allow_files) or window_problem(space, engine)
    if problem is not None:
        return Verdict(False, problem)
    if engine.digest() != current_digest(certificate["model"]["digest"]):
        return Verdict(False, "the model's weights differ from the certified model's")
    total = space.count(radius)
    if str(total) != certificate["points"]:
        return Verdict(False, f"|Omega_{radius}| is {total}, the certificate says {certificate['points']}")
    if status == ADVERSARIAL:
        return _adversary_check(certificate, engine, space, gold)
    if certificate.get("method") == BOUND_METHOD:
        checked = _bound_check(certificate, engine, space, gold)
        if isinstance(checked, str):
            return Verdict(False, checked)
        smallest, how = checked
    else:
        if status != CERTIFIED or certificate["checked"] != certificate["points"]:
            return Verdict(False, "the certificate does not claim a complete check")
        smallest, how = np.inf, ""
        for evaluated in evaluate_points(engine, space, space.points(radius), gold, tolerance):
            if evaluated.adversarial.any():
                return Verdict(False, "an adversarial point lies within the radius")
            smallest = min(smallest, float(evaluated.margins.min()))
    problem = _smallest_margin_problem(certificate, engine, space, gold, smallest)
    if problem is not None:
        return Verdict(False, problem)
    return Verdict(True, f"all {total} points within radius {radius} keep the label {labels[gold]!r} (margins "
                         f"above the tolerance {tolerance:g}{how})")


def _adversary_check(certificate: dict, engine: QueryEngine, space: Space, gold: int) -> Verdict:
    """An adversarial certificate re-checked: the clean input keeps gold, the witness is a point
    of the space within the radius that leaves it, and its margin is the recorded one."""
    point, tolerance = tuple(tuple(c) for c in certificate["smallest_margin_point"]), certificate["margin_tolerance"]
    if not keeps_label(engine.predict_proba([space.item]), gold, tolerance)[0]:
        return Verdict(False, f"the model does not give the clean input the gold label {engine.labels[gold]!r}, so "
                              "it has no adversary to witness")
    try:
        witnessed = check_adversary(engine, space, point, gold, tolerance, certificate["radius"], name="the witness")
    except InvalidAdversary as invalid:
        return Verdict(False, str(invalid))
    if not 0 < int(certificate["checked"]) <= int(certificate["points"]):
        return Verdict(False, f"it says {certificate['checked']} of its {certificate['points']} points were "
                              "checked: a witness is one of them")
    if abs(witnessed - certificate["smallest_margin"]) > SMALLEST_MARGIN_SLACK:
        return Verdict(False, f"the witness's margin is {witnessed:.6f}, the certificate says "
                              f"{certificate['smallest_margin']:.6f}")
    return Verdict(True, f"the witness at distance {len(point)} is adversarial (margin "
                         f"{witnessed:.6f}, at most the tolerance {tolerance:g})")


def _smallest_margin_problem(certificate: dict, engine: QueryEngine, space: Space, gold: int,
                             smallest: float) -> str | None:
    """Whether a certified certificate's smallest margin is `smallest`, the least margin of the
    points verify evaluated (infinite when it evaluated none: then none is recorded), and its
    point a point of the space within the radius, whose margin is the recorded one."""
    claimed, point = certificate["smallest_margin"], certificate["smallest_margin_point"]
    if claimed is None:
        return None if smallest == np.inf else "it records no smallest margin, yet points were evaluated"
    if abs(smallest - claimed) > SMALLEST_MARGIN_SLACK:
        return f"the smallest margin is {smallest:.6f}, the certificate says {claimed:.6f}"
    point = tuple(tuple(c) for c in point)
    try:
        space.check_point(point)
    except ValueError as err:
        return f"its smallest_margin_point is not a point of the space: {err}"
    if len(point) > certificate["radius"]:
        return "its smallest_margin_point lies beyond the radius"
    (evaluated,) = evaluate_points(engine, space, [point], gold, certificate["margin_tolerance"])
    if abs(float(evaluated.margins[0]) - claimed) > SMALLEST_MARGIN_SLACK:
        return f"the margin at its smallest_margin_point is {float(evaluated.margins[0]):.6f}, the certificate " \
               f"says {claimed:.6f}"
    return None


def proof_margins_problem(proofs: list[dict], certificate: dict, engine: QueryEngine) -> str | None:
    """Whether each of a run record's `proofs` (already through `records.run_problems`, so each
    recorded point lies in the space within its radius) records as its smallest margin the
    model's margin at its recorded point, over the space of `certificate` (one of the record's,
    which `verify_certificate` has held): so a radius without a certificate of its own cannot have
    its margin edited. Whether the point is the least of its radius only a certificate shows."""
    space = _certificate_space(certificate)
    gold = list(engine.labels).index(certificate["gold"])
    seen = [p for p in proofs if p["smallest_margin_point"] is not None]
    points = [tuple(tuple(c) for c in p["smallest_margin_point"]) for p in seen]
    margins = [float(m) for evaluated in evaluate_points(engine, space, points, gold) for m in evaluated.margins]
    for proof, margin in zip(seen, margins):
        if abs(margin - proof["smallest_margin"]) > SMALLEST_MARGIN_SLACK:
            return f"proof {proof['radius']}: the margin at its smallest_margin_point is {margin:.6f}, it says " \
                   f"{proof['smallest_margin']:.6f}"
    return None


def _certificate_space(certificate: dict) -> Space:
    """The space a (well-formed) certificate records."""
    item = certificate["input"]
    positions = tuple(Position(kind, index, tuple(candidates))
                      for kind, index, candidates in certificate["space"]["positions"])
    return Space(tuple(item) if isinstance(item, list) else item, positions, certificate["space"]["definition"])


def boxes_problem(certificate: dict, space: Space, labels: int) -> str | list[tuple[Box, list]]:
    """The leaves of a bound certificate's split tree (`boxes.replay`), or why they are not those
    of a proof of it, without any model: a tree that does not partition Omega_r, enumerated
    leaves that do not hold `checked` points, bound leaves that do not hold `certified_by_bounds`,
    or a recorded bound that does not certify its box under the goal's rule (`decide`)."""
    radius = certificate["radius"]
    try:
        leaves = replay(space, radius, certificate["boxes"])
    except ValueError as err:
        return f"its boxes do not partition Omega_{radius}: {err}"
    enumerated = sum(box.count(space) for box, entry in leaves if entry[0] == ENUMERATE)
    bounded = sum(box.count(space) for box, entry in leaves if entry[0] == BOUND)
    if str(enumerated) != certificate["checked"] or str(bounded) != certificate["certified_by_bounds"]:
        return (f"its boxes hold {enumerated} enumerated points and {bounded} certified by bounds; it says "
                f"{certificate['checked']} and {certificate['certified_by_bounds']}")
    tolerance = certificate["margin_tolerance"] + softmax_allowance(labels)
    low = next((k for k, (_, entry) in enumerate(leaves) if entry[0] == BOUND and not entry[1] > tolerance), None)
    if low is not None:
        return f"box {low} is recorded as certified by a margin lower bound of {leaves[low][1][1]}, which does " \
               "not clear the tolerance"
    return leaves


def _bound_check(certificate: dict, engine: QueryEngine, space: Space, gold: int) -> str | tuple[float, str]:
    """Re-check a bound certificate's boxes with the model: each bound leaf's bound recomputed
    (it must certify its box, and match the recorded one), each enumerated leaf's points
    evaluated (none may leave the label). The smallest margin enumerated and a note for the
    verdict, or why the certificate does not hold."""
    leaves = boxes_problem(certificate, space, len(engine.labels))
    if isinstance(leaves, str):
        return leaves
    bounded = [(k, box, entry[1]) for k, (box, entry) in enumerate(leaves) if entry[0] == BOUND]
    try:  # a tree of enumerated boxes alone needs no bounds (a space bounds cannot take, say)
        bounds = bounds_for(engine.model)
        slots = token_slots(engine.model.tokenizer, space) if bounded else None
    except RobustcountError as err:
        return f"its boxes cannot be bounded with this model: {err}"
    for start in range(0, len(bounded), BOUND_BATCH):
        batch = bounded[start: start + BOUND_BATCH]
        differences = bounds.differences([box.slots(slots) for _, box, _ in batch], gold)
        for row, (k, _, recorded) in enumerate(batch):
            recomputed = margin_lower_bound(differences[row], gold)
            if not certifies(differences[row], gold, certificate["margin_tolerance"]):
                return f"box {k}: its bound does not certify it (margin lower bound {recomputed:.6g} recomputed)"
            if abs(recomputed - recorded) > BOUND_SLACK:
                return f"box {k}: its margin lower bound is {recomputed:.9g}, the certificate says {recorded:.9g}"
    points = (point for box, entry in leaves if entry[0] == ENUMERATE for point in box.points(space))
    smallest = np.inf
    for evaluated in evaluate_points(engine, space, points, gold, certificate["margin_tolerance"]):
        if evaluated.adversarial.any():
            return "an adversarial point lies within the radius"
        smallest = min(smallest, float(evaluated.margins.min()))
    return smallest, f"; {len(bounded)} boxes certified by bounds, {len(leaves) - len(bounded)} enumerated"
