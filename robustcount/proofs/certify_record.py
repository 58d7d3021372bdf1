"""One certify record: what `certify` writes for an example, and the same record read back and
checked without any model (`CertifyRecord.read`).

A record holds its example's input and gold label, whether the model keeps gold on it
(`correct`; null, with the `limit` and `reason` that stopped it, when a limit refused the input's
own model call: a served model's --max-requests or --max-cost, its request failing, its answer
unscored), its space's digest and number of positions, the engine's counters, its proofs
(r = 1, 2, ... as `prover.certify_radii` makes them), what it derives from them (`outcome_fields`)
and the certificates of the proofs that `certificate_proofs` keeps; where it has them, its space's
coverage (`spaces.coverage`) and the model's window (`WINDOW_FIELD`). Reading one checks that
every number is finite and every field of the type certify writes (no field it never writes),
its proofs (`proof_checks`) as the run's schedule makes them and by the run's method, what it
derives recomputed from them, each certificate exactly the one `make_certificate` writes from the
record, the proof and the run header, over candidate lists that start with the input's own words
(the record's space digest and positions, every proof's |Omega_r| and every witness text
recomputed from them; a bound certificate's split tree replayed against its proof,
`certificate.boxes_problem`), and its coverage against its input, its space and its proofs.
`records.run_problems` reads every record of a run so, against its (already checked) header.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, fields

from robustcount.bounds.boxes import ENUMERATE
from robustcount.models.batch_probe import is_batching
from robustcount.models.identity import current_digest
from robustcount.proofs.branch import BoundProof
from robustcount.proofs.certificate import boxes_problem, make_certificate
from robustcount.proofs.proof_checks import proof_problem, proofs_method, read_proof, run_method, schedule_problem
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, UNDECIDED, Proof
from robustcount.proofs.structure import (
    INPUT_PROBLEM,
    difference,
    is_counters,
    is_input,
    is_int,
    is_position,
    non_finite,
    same,
)
from robustcount.spaces.coverage import COVERAGE, coverage_problem, space_coverage
from robustcount.spaces.space import Position, Space
from robustcount.text import tokenize

WINDOW_FIELD = "window"
"""The field a record has when words of its input lie beyond the model's window: the window its
space's definition records (`spaces.build`), `{"size", "words", "beyond"}`."""


class RecordProblem(ValueError):
    """What makes one certify record untrustworthy, in one line (`CertifyRecord.read`)."""


@dataclass(frozen=True)
class CertifyRecord:
    """A certify record (the runner adds its `record` and `index` fields). The fields with a
    default are those a record may lack: `certificates` with the outcome fields, written only for
    an example the model keeps gold on; its space's coverage (runs written before it lack it); its
    window (only inputs reaching beyond the model's window have one)."""

    id: str
    input: str | tuple[str, str]
    gold: str
    correct: bool | None
    space_digest: str
    space_positions: int
    queries: dict
    proofs: tuple[Proof, ...]
    certificates: tuple[dict, ...] = ()
    coverage: dict | None = None
    window: dict | None = None
    stopped: tuple[str | None, str] | None = None
    """(limit, reason) when `correct` is None: what refused the input's own model call."""

    def as_dict(self) -> dict:
        """The record as the run file holds it (`proof_record`'s proofs)."""
        record = {"id": self.id, "input": self.input, "gold": self.gold, "correct": self.correct,
                  "space_digest": self.space_digest, "space_positions": self.space_positions,
                  "queries": self.queries, "proofs": [proof_record(p) for p in self.proofs]}
        record.update({name: value for name, value in ((COVERAGE, self.coverage), (WINDOW_FIELD, self.window))
                       if value is not None})
        if self.correct:
            record.update(outcome_fields(self.proofs, self.space_positions), certificates=list(self.certificates))
        if self.correct is None:
            record.update(limit=self.stopped[0], reason=self.stopped[1])
        return record

    @classmethod
    def read(cls, record: dict, header: dict) -> CertifyRecord:
        """The record `record` holds, checked against the run's `header` (already checked,
        `records.run_problems`): the module docstring's checks, the first that fails raised as a
        `RecordProblem`."""
        proofs = _checked_proofs(record, header)
        problem = proofs if isinstance(proofs, str) else _coverage_problem(record)
        if problem is not None:
            raise RecordProblem(problem)
        item = record["input"]
        return cls(record["id"], tuple(item) if isinstance(item, list) else item, record["gold"], record["correct"],
                   record["space_digest"], record["space_positions"], record["queries"], tuple(proofs),
                   tuple(record.get("certificates", ())), record.get(COVERAGE), record.get(WINDOW_FIELD),
                   (record["limit"], record["reason"]) if record["correct"] is None else None)

    @property
    def method(self) -> str | None:
        """`bound` or `enumerate`: the method of its proofs, None without any."""
        return None if not self.proofs else "bound" if isinstance(self.proofs[0], BoundProof) else "enumerate"


OPTIONAL_FIELDS = frozenset({COVERAGE, WINDOW_FIELD})
"""The fields a certify record may lack whatever its example (`CertifyRecord`)."""
OUTCOME_FIELDS = frozenset({"certified_radius", "whole_space_certified", "undecided", "certificates"})
"""The fields a record has when the model keeps gold on its input (only then are there proofs)."""
STOPPED_FIELDS = frozenset({"limit", "reason"})
"""The fields a record has when a limit refused its input's own model call (`correct` null)."""
RECORD_FIELDS = frozenset({"record", "index"} | {f.name for f in fields(CertifyRecord) if f.default is MISSING})
"""The fields of every certify record (`record` and `index` are the runner's)."""


def proof_record(proof: Proof) -> dict:
    """A proof as a run record holds it: a bound proof without its split tree (`boxes`), which
    the certificate of a certified radius holds."""
    record = proof.as_dict()
    record.pop("boxes", None)
    return record


def outcome_fields(proofs: Sequence[Proof], positions: int) -> dict:
    """What a record derives from its proofs, for a space with `positions` positions: the largest
    certified radius, whether the whole (non-empty) space was certified, and whether the search
    stopped undecided."""
    reached = sum(p.status == CERTIFIED for p in proofs)
    return {"certified_radius": reached, "whole_space_certified": 0 < reached == positions,
            "undecided": bool(proofs) and proofs[-1].status == UNDECIDED}


def certificate_proofs(proofs: Sequence[Proof]) -> list[Proof]:
    """The proofs a record keeps certificates of: the largest certified radius's, and the
    adversary that ended the search."""
    reached = sum(p.status == CERTIFIED for p in proofs)
    return ([proofs[reached - 1]] if reached else []) + [p for p in proofs if p.status == ADVERSARIAL]


def _checked_proofs(record: dict, header: dict) -> list[Proof] | str:
    """The proofs of one certify `record`, or what makes it disagree with itself, its
    certificates or the run's (already checked) `header` (its coverage aside)."""
    problem = _shape_problem(record, header)
    if problem is not None:
        return problem
    if not record["correct"]:
        return "a misclassified example has proofs" if record["proofs"] else []
    proofs = record["proofs"]
    if not all(isinstance(p, dict) for p in proofs):
        return "proofs must be a list of proofs"
    method = run_method(header)
    for k, found in enumerate(proofs, start=1):
        problem = proof_problem(found, k, header["margin_tolerance"])
        if problem is not None:
            return f"proof {k}: {problem}"
        if method != "auto" and proofs_method([found]) != method:
            return f"proof {k}: it is by {proofs_method([found])}, the run proves by {method}"
    if len({proofs_method([found]) for found in proofs}) > 1:
        return "its proofs are by different methods"
    rebuilt = [read_proof(found) for found in proofs]
    problem = schedule_problem(rebuilt, record["space_positions"], header["options"])
    if problem is None:
        derived = outcome_fields(rebuilt, record["space_positions"])
        problem = next((f"{name} is {json.dumps(record[name])}, its proofs give {json.dumps(value)}"
                        for name, value in derived.items() if not same(record[name], value)), None)
    problem = problem if problem is not None else _certificates_problem(record, header, rebuilt)
    return rebuilt if problem is None else problem


def _shape_problem(record: dict, header: dict) -> str | None:
    """Whether every number of `record` is finite, it has the fields certify writes for it and
    no other, each of the type certify writes, and its window is that of the header's model."""
    where = non_finite(record)
    if where is not None:
        return f"{where} is not a finite number"
    expected_fields = RECORD_FIELDS | (OUTCOME_FIELDS if record.get("correct") is True else set()) \
        | (STOPPED_FIELDS if "correct" in record and record["correct"] is None else set())
    missing, extra = sorted(expected_fields - set(record)), sorted(set(record) - expected_fields - OPTIONAL_FIELDS)
    if missing:
        return f"the field {missing[0]} is missing"
    if extra:
        return f"holds {extra[0]}, a field certify writes only for correctly classified examples" \
            if extra[0] in OUTCOME_FIELDS else f"holds {extra[0]}, a field certify never writes"
    model = header["models"][0]
    problem = _fields_problem(record, model["labels"])
    if problem is None and WINDOW_FIELD in record and record[WINDOW_FIELD]["size"] != model.get("window"):
        return f"its window is {record[WINDOW_FIELD]['size']!r}, the run header's model has " \
               f"{model.get('window', 'none')!r}"
    return problem


def _fields_problem(record: dict, labels: list[str]) -> str | None:
    checks = [
        (isinstance(record["id"], str), "id must be a string"),
        (is_input(record["input"]), INPUT_PROBLEM),
        (record["gold"] in labels, f"gold {record['gold']!r} is not one of the model's labels {labels}"),
        (isinstance(record["correct"], bool) or record["correct"] is None and isinstance(record["reason"], str)
         and (record["limit"] is None or isinstance(record["limit"], str)),
         "correct must be true, false or null (with the reason, a text, and the limit that stopped it)"),
        (isinstance(record["space_digest"], str), "space_digest must be a string"),
        (is_int(record["space_positions"]) and record["space_positions"] >= 0,
         "space_positions must be an integer >= 0"),
        (is_counters(record["queries"]), "queries must map the engine's counters to integers >= 0"),
        (isinstance(record["proofs"], list), "proofs must be a list of proofs"),
        (WINDOW_FIELD not in record or _is_window(record[WINDOW_FIELD], record["input"]),
         "window must hold the window's size, the input's number of words and how many of them lie beyond it"),
    ]
    return next((problem for ok, problem in checks if not ok), None)


def _is_window(value, item) -> bool:
    """Whether `value` is the window record of a space of `item` (`WINDOW_FIELD`)."""
    text = item if isinstance(item, str) else item[1] if isinstance(item, list) and len(item) == 2 else None
    if not isinstance(text, str):
        return False
    words = len(tokenize(text).words)
    return (isinstance(value, dict) and set(value) == {"size", "words", "beyond"} and isinstance(value["size"], str)
            and value["words"] == words and is_int(value["beyond"]) and 0 < value["beyond"] <= words)


def _coverage_problem(record: dict) -> str | None:
    """What makes a record's space coverage (when it has one) disagree with its input and its
    space, or with the |Omega_r| its proof at that radius counted; checked after
    everything else in the record (`_checked_proofs`), so its fields are well formed."""
    if COVERAGE not in record:
        return None
    coverage = record[COVERAGE]
    problem = coverage_problem(coverage, record["input"], record["space_positions"])
    if problem is not None:
        return problem
    counted = [p["total"] for p in record["proofs"] if p["radius"] == coverage["radius"]]
    if counted and counted[0] != coverage["size"]:
        return f"{COVERAGE} says |Omega_{coverage['radius']}| = {coverage['size']}, its proof counts {counted[0]}"
    return None


def _certificates_problem(record: dict, header: dict, proofs: list[Proof]) -> str | None:
    """Whether the record's certificates are exactly those certify writes from its proofs, and
    the space they carry is one of the record's input that agrees with the record and its proofs."""
    certificates, kept = record["certificates"], certificate_proofs(proofs)
    if not isinstance(certificates, list) or not all(isinstance(c, dict) for c in certificates):
        return "certificates must be a list of certificates"
    if len(certificates) != len(kept):
        return f"holds {len(certificates)} certificate(s), its proofs give {len(kept)}"
    for k, (certificate, proof) in enumerate(zip(certificates, kept), start=1):
        space = _certificate_problem(certificate, proof, record, header)
        if isinstance(space, str):
            return f"certificate {k}{space}"
        problem = _space_problem(space, record, proofs)
        if problem is not None:
            return problem
    return None


def _certificate_problem(certificate: dict, proof: Proof, record: dict, header: dict) -> Space | str:
    """The space of one of the record's certificates, or what makes the certificate other than the
    one certify writes from `proof`, the record and the header (said after ": " or " (status): ")."""
    model, labels = header["models"][0], header["models"][0]["labels"]
    named = certificate["model"] if isinstance(certificate.get("model"), dict) else {}
    batching, digest = named.get("batching"), named.get("digest")
    if not (isinstance(digest, str) and current_digest(digest) == current_digest(model["digest"])):
        digest = model["digest"]  # a resume of a run under a built-in model's former digest names its current one
    if not is_batching(batching):
        return ": its model.batching must say how the model was evaluated"
    space = _space(certificate, record["input"], header["space"], record.get(WINDOW_FIELD))
    if isinstance(space, str):
        return f": {space}"
    if isinstance(proof, BoundProof) and proof.status == CERTIFIED:
        proof.boxes = certificate.get("boxes")  # checked below, against its space and the proof's counts
    expected = make_certificate(record["id"], space, labels.index(record["gold"]), labels, proof, model["spec"],
                                digest, batching)
    expected["robustcount"], expected["margin_tolerance"] = header["robustcount"], header["margin_tolerance"]
    differs = difference(certificate, json.loads(json.dumps(expected)))
    if differs is not None:
        return f" ({proof.status}): its {differs}"
    if "boxes" in certificate:
        leaves = boxes_problem(certificate, space, len(labels))
        if isinstance(leaves, str):
            return f": {leaves}"
        bounded = sum(entry[0] != ENUMERATE for entry in certificate["boxes"])  # each split box was bounded
        if proof.boxes_bounded != bounded:
            return f": its boxes were bounded {bounded} times, its proof says {proof.boxes_bounded}"
    return space


def _space(certificate: dict, item, definition: dict, window: dict | None) -> Space | str:
    """The space of `item` (the record's input) with the certificate's candidate lists and the
    run's `definition`, with the record's `window` (the words beyond the model's window) when it
    has one, or what makes those lists malformed."""
    space = certificate.get("space")
    definition = definition if window is None else {**definition, "window": window}
    positions = space.get("positions") if isinstance(space, dict) else None
    if not isinstance(positions, list) or not all(is_position(p) for p in positions):
        return "space.positions must be [kind, index, [candidates]] lists"
    try:
        return Space(tuple(item) if isinstance(item, list) else item,
                     tuple(Position(kind, index, tuple(candidates)) for kind, index, candidates in positions),
                     definition)
    except ValueError as err:
        return f"space.positions: {err}"


def record_space_problem(record: dict, space: Space) -> str | None:
    """Whether a record (already through `records.run_problems`) agrees with `space`, its input's
    space rebuilt from the run's definition: what `verify` checks of a record without
    certificates (misclassified, or undecided at r = 1), whose space no certificate carries."""
    return _space_problem(space, record, [read_proof(found) for found in record["proofs"]])


def _space_problem(space: Space, record: dict, proofs: list[Proof]) -> str | None:
    """Whether `space`'s candidate lists start with the input's own words, and the record's
    space digest, positions and coverage, and each proof's count, point and witness text, are
    `space`'s."""
    for p in space.positions:
        originals = space.tokens.words if p.kind == "word" else space.tokens.separators
        if not 0 <= p.index < len(originals) or originals[p.index] != p.original:
            return f"its certificates' {p.kind} position at {p.index} does not start with the input's {p.kind}"
    if record["space_digest"] != space.digest():
        return "space_digest is not its certificates' space's digest"
    if record["space_positions"] != space.max_radius():
        return f"space_positions is {record['space_positions']}, its certificates' space has {space.max_radius()}"
    if COVERAGE in record and _coverage_problem(record) is None \
            and record[COVERAGE] != space_coverage(space, record[COVERAGE]["radius"]):  # a malformed one: said apart
        return f"{COVERAGE} is not its certificates' space's"
    return next((problem for proof in proofs if (problem := _proof_space_problem(space, proof)) is not None), None)


def _proof_space_problem(space: Space, proof: Proof) -> str | None:
    """Whether `proof`'s count is |Omega_r| of `space`, its point one of the space within its
    radius, and an adversarial proof's witness the text that point gives."""
    size = space.count(proof.radius)
    if proof.total != size:
        return f"proof {proof.radius}: total is {proof.total}, |Omega_{proof.radius}| is {size}"
    if proof.smallest_margin_point is not None:
        try:
            space.check_point(proof.smallest_margin_point)
        except ValueError as err:
            return f"proof {proof.radius}: its smallest_margin_point is not a point of the space: {err}"
        if len(proof.smallest_margin_point) > proof.radius:
            return f"proof {proof.radius}: its smallest_margin_point lies beyond the radius"
    if proof.status == ADVERSARIAL:
        witness = space.apply(proof.smallest_margin_point)
        if not same(proof.witness, list(witness) if isinstance(witness, tuple) else witness):
            return f"proof {proof.radius}: its witness text is not the text its smallest_margin_point gives"
    return None
