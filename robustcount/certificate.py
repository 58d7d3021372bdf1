"""Certificates: everything needed to re-check a proof, and the independent check.

A certificate records the input, the gold label, the radius, the space in full (its definition and
every candidate list, with their SHA-256 digest), the model's identity and weight digest, the
number of points checked, and the smallest margin seen and where. `verify_certificate` rebuilds
the space from the recorded lists, checks the digests and the count, and re-evaluates every point
of Omega_r in canonical order (not the prover's order) with the model it is given.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from robustcount import __version__
from robustcount.attacks.result import margin
from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.prove import ADVERSARIAL, CERTIFIED, Proof
from robustcount.spaces.space import Position, Space

FORMAT = "robustcount-certificate/1"
MARGIN_TOLERANCE = 1e-5


def model_digest(model) -> str | None:
    """The model's weight digest when it has one (torch models), else None."""
    digest = getattr(model, "digest", None)
    return digest() if callable(digest) else None


def make_certificate(example_id: str, space: Space, gold: int, labels, proof: Proof, model_spec: str,
                     digest: str | None) -> dict:
    """The certificate of `proof` (certified or adversarial) for `space`."""
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
        "model": {"spec": model_spec, "digest": digest},
        "points": str(proof.total),
        "checked": str(proof.checked),
        "smallest_margin": proof.smallest_margin,
        "smallest_margin_point": None if proof.smallest_margin_point is None
        else [list(c) for c in proof.smallest_margin_point],
    }


@dataclass
class Verdict:
    holds: bool
    reason: str


def verify_certificate(certificate: dict, engine: QueryEngine, chunk: int = 256) -> Verdict:
    """Re-check `certificate` with the model behind `engine` (see the module docstring)."""
    try:
        if certificate.get("format") != FORMAT:
            return Verdict(False, f"unknown certificate format {certificate.get('format')!r}")
        item = certificate["input"]
        item = tuple(item) if isinstance(item, list) else item
        positions = tuple(Position(kind, index, tuple(candidates))
                          for kind, index, candidates in certificate["space"]["positions"])
        space = Space(item, positions, certificate["space"]["definition"])
        radius, status = int(certificate["radius"]), certificate["status"]
        labels = list(engine.labels)
        if certificate["labels"] != labels:
            return Verdict(False, f"the model's labels {labels} differ from the certificate's")
        gold = labels.index(certificate["gold"])
        claimed_margin = certificate["smallest_margin"]
    except (KeyError, TypeError, ValueError) as err:
        return Verdict(False, f"malformed certificate: {err}")
    if space.digest() != certificate["space"]["digest"]:
        return Verdict(False, "the candidate lists do not match the space digest")
    digest = model_digest(engine.model)
    if certificate["model"]["digest"] is not None and digest != certificate["model"]["digest"]:
        return Verdict(False, "the model's weights differ from the certified model's")
    total = space.count(radius)
    if str(total) != certificate["points"]:
        return Verdict(False, f"|Omega_{radius}| is {total}, the certificate says {certificate['points']}")
    if status == ADVERSARIAL:
        point = tuple(tuple(c) for c in certificate["smallest_margin_point"])
        try:
            space.check_point(point)
        except ValueError as err:
            return Verdict(False, f"the witness is not a point of the space: {err}")
        probs = engine.predict_proba([space.apply(point)])[0]
        if int(probs.argmax()) == gold:
            return Verdict(False, "the witness is not adversarial")
        return Verdict(True, f"the witness at distance {len(point)} is adversarial")
    if status != CERTIFIED or certificate["checked"] != certificate["points"]:
        return Verdict(False, "the certificate does not claim a complete check")
    smallest = np.inf
    points = space.points(radius)
    while batch := list(itertools.islice(points, chunk)):
        probs = engine.predict_proba([space.apply(p) for p in batch])
        if (probs.argmax(axis=1) != gold).any():
            return Verdict(False, "an adversarial point lies within the radius")
        smallest = min(smallest, float(margin(probs, gold).min()))
    if claimed_margin is not None and abs(smallest - claimed_margin) > MARGIN_TOLERANCE:
        return Verdict(False, f"the smallest margin is {smallest:.6f}, the certificate says {claimed_margin:.6f}")
    return Verdict(True, f"all {total} points within radius {radius} keep the label {labels[gold]!r}")
