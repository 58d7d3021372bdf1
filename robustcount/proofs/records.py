"""A `certify` run read back, checked as a whole without any model.

A certify run file is a header and one record per example: its input and gold label, whether the
model keeps gold on it (`correct`), its space's digest and number of positions, the engine's
counters, its proofs (r = 1, 2, ... as `certify_radii` makes them), what the record derives from
them (`outcome_fields`) and the certificates of the proofs that `certificate_proofs` keeps.
`certify` builds records with these two functions and `run_problems` checks them, so what a
record derives is declared once.

`run_problems` is what `verify` checks before any model is loaded and what every reader of a
certify run (`runs.files.read_run`, hence `report` and the summaries) refuses a file for:

- the header: one model (spec, digest, labels, batching, precision), the margin tolerance, a
  space definition whose seed is the run's, options of the types certify writes (radius, max_points, order, time_limit, budget), the
  number of examples, every other field of the type certify writes and none it never writes;
- every number finite, every field of the type certify writes, no field it does not write, no
  example id twice;
- the proofs as the run's schedule makes them: r = 1, 2, ... up to min(radius, the space's
  positions), stopping after the first radius not certified; a certified proof checked every
  point and saw only margins above the header's margin tolerance, an adversarial one has a margin
  at most the tolerance and a witness at distance r (r - 1 was
  certified), a proof over more than max_points points is undecided before any point;
- one proof method per run (`options.method`: `enumerate`, `bound`, or `auto`, all of whose
  proofs must be by one method); a bound proof (`boxes_bounded`, `certified_by_bounds`) counts
  the points its bounds certified with those it checked, and `max_points` caps the points it
  checked; its certificate's split tree is replayed against the proof's counts
  (`certificate.boxes_problem`) and its boxes bounded; a radius certified by bounds alone records
  no smallest margin;
- `certified_radius`, `whole_space_certified` and `undecided` recomputed from the proofs;
- the record's space coverage, where it has one (`spaces.coverage`; runs written before it have
  none), agreeing with its input, its space's positions and the proof at its radius;
- each certificate exactly the one `make_certificate` writes from the record, the proof and the
  header (example id, input, gold, labels, model spec and digest, space definition, radius,
  status, counts, margin and witness), over candidate lists that start with the input's own
  words; the record's space digest and positions, every proof's |Omega_r| and every witness
  text recomputed from those lists.

`data_problems` checks, given the data the header names, that the records are that data's
examples (`verify` does, when the data are at hand). What needs a model or the space's sources (the candidate lists rebuilt, every point evaluated)
is `certificate.verify_certificate`'s and `certificate.proof_margins_problem`'s; a record without
certificates is checked against its space rebuilt (`record_space_problem`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

from robustcount.data import HEADER_KEYS, Example, examples_digest
from robustcount.goal import MARGIN_TOLERANCE
from robustcount.models.accounting import QueryStats
from robustcount.models.batch_probe import is_batching
from robustcount.models.device import DTYPES
from robustcount.models.identity import current_digest
from robustcount.models.spec import CALIBRATIONS
from robustcount.options import MAX_RADIUS
from robustcount.orders import ORDERS
from robustcount.proofs.bounds.boxes import ENUMERATE
from robustcount.proofs.bounds.branch import PROOF_METHODS, BoundProof
from robustcount.proofs.certificate import boxes_problem, is_decimal, is_point, make_certificate
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, UNDECIDED, Proof
from robustcount.spaces.coverage import COVERAGE, coverage_problem, space_coverage
from robustcount.spaces.space import Position, Space
from robustcount.status import LIMITS
from robustcount.text import tokenize

RECORD_FIELDS = frozenset({"record", "index", "id", "input", "gold", "correct", "space_digest", "space_positions",
                           "queries", "proofs"})
"""The fields of every certify record (`commands.certify.certify_example` writes them; `record` and
`index` are the runner's); a property test holds the two together."""
WINDOW_FIELD = "window"
"""The field a record has when words of its input lie beyond the model's window: the window its
space's definition records (`spaces.build`), `{"size", "words", "beyond"}`."""
OPTIONAL_FIELDS = frozenset({COVERAGE, WINDOW_FIELD})
"""The fields a certify record may lack: its space's coverage (runs written before it lack it) and
its window (only inputs reaching beyond the model's window have one)."""
OUTCOME_FIELDS = frozenset({"certified_radius", "whole_space_certified", "undecided", "certificates"})
"""The fields a record has when the model keeps gold on its input (only then are there proofs)."""
PROOF_FIELDS = frozenset(f.name for f in fields(Proof)) - {"seconds", "limit"}
"""A proof's fields as a run file holds them (its seconds are the runner's, logged apart; an
undecided proof also names its `limit`, unless written before that field)."""
BOUND_PROOF_FIELDS = PROOF_FIELDS | {"boxes_bounded", "certified_by_bounds"}
"""A branch-and-bound proof's fields as a run file holds them (its split tree is in its certificate)."""
HEADER_FIELDS = frozenset({"record", "format", "command", "seed", "options", "models", "margin_tolerance", "space",
                           "data", "chunk_size", "robustcount", "python", "dependencies"})
"""The fields of a run header (`runs.provenance.run_header` writes them)."""
MODEL_FIELDS = frozenset({"spec", "precision", "batch_size", "trust_remote_code", "prompt", "verbalizer",
                          "calibration", "digest", "labels", "batching", "window"})
"""The fields of a run header's model (`ModelSpec`'s but the device, and what the engine says: a
`window` only for a model that reads a prefix of long inputs; runs written before language models
lack `prompt`, `verbalizer` and `calibration`)."""
DATA_FIELDS = frozenset({"spec", *HEADER_KEYS, "first", "examples", "digest"})
"""The fields of a run header's data (`DataSpec.header`, the examples' number and digest)."""
OPTION_FIELDS = frozenset({"radius", "method", "order", "max_points", "time_limit", "budget"})
"""The options of a certify run header (`commands.certify.CertifyOptions`' fields; a test holds them together)."""
EARLIER_METHOD = "enumerate"
"""The method of a certify run whose header has none (written before `--method`)."""
COUNTERS = frozenset(f.name for f in fields(QueryStats)) - {"model_seconds"}
"""The engine's counters a record may hold."""


def proof_record(proof: Proof) -> dict:
    """A proof as a run record holds it: a bound proof without its split tree (`boxes`), which
    the certificate of a certified radius holds."""
    record = proof.as_dict()
    record.pop("boxes", None)
    return record


def run_method(header: dict) -> str:
    """The proof method a certify run's header names (`EARLIER_METHOD` when it names none)."""
    return header["options"].get("method", EARLIER_METHOD)


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


@dataclass(frozen=True)
class RunProblem:
    """One thing wrong with a certify run: in the record of `example` (at `index` in the run), or
    in the header (both None)."""

    example: str | None
    what: str
    index: int | None = None

    def __str__(self) -> str:
        return f"{'the run header' if self.example is None else f'example {self.example}'}: {self.what}"


def data_problems(header: dict, records: Sequence[dict], examples: Sequence[Example]) -> list[RunProblem]:
    """Whether a run (already through `run_problems`) is one of `examples`, the data its header
    names loaded again: their digest and number as the header records them, and each record's id,
    input and gold label those of the example at its index (so no record can be left out and the
    rest renumbered, copied under a new id, or given another gold label)."""
    data = header["data"]
    if len(examples) != data["examples"] or examples_digest(examples) != data.get("digest"):
        return [RunProblem(None, f"its data ({len(examples)} examples, digest {examples_digest(examples)[:12]}) "
                                 f"are not those the header records ({data['examples']} examples, digest "
                                 f"{str(data.get('digest'))[:12]})")]
    problems = []
    for record in records:
        example = examples[record["index"]]
        for name, found, expected in (("id", record["id"], example.id), ("gold", record["gold"], example.label),
                                      ("input", record["input"], json.loads(json.dumps(example.input)))):
            if found != expected:
                problems.append(RunProblem(record["id"], f"its {name} is not that of the data's example "
                                                         f"{record['index']} ({json.dumps(expected)[:60]})",
                                           record["index"]))
                break
    return problems


def run_problems(header: dict, records: Sequence[dict]) -> list[RunProblem]:
    """Everything that makes a certify run untrustworthy without a model (see the module
    docstring): the header's problem alone when the header is wrong (nothing can be checked
    against it), else one problem per bad record and per repeated example id."""
    problem = _header_problem(header)
    if problem is not None:
        return [RunProblem(None, problem)]
    problems, seen, methods = [], {}, {}
    for record in records:
        name = record.get("id")
        problem = _record_problem(record, header) or _coverage_problem(record)
        if problem is None and name in seen:
            problem = f"appears twice (at indices {seen[name]} and {record.get('index')})"
        method = _proofs_method(record.get("proofs")) if problem is None else None
        other = next((m for m in methods if m != method), None) if method is not None else None
        if other is not None:
            problem = f"its proofs are by {method}, those of example {methods[other]} by {other}: one run " \
                      "proves with one method"
        elif method is not None:
            methods.setdefault(method, name)
        if problem is not None:
            shown = name if isinstance(name, str) else json.dumps(name)
            problems.append(RunProblem(shown, problem, record.get("index")))
        if isinstance(name, str):
            seen.setdefault(name, record.get("index"))
    return problems


def _header_problem(header: dict) -> str | None:
    models, space, options, data = header.get("models"), header.get("space"), header.get("options"), header.get("data")
    model = models[0] if isinstance(models, list) and len(models) == 1 and isinstance(models[0], dict) else {}
    labels = model.get("labels")
    where = _non_finite(header)
    unknown = next((f"{name}.{key}" if name else key for name, found, known in (
        ("", header, HEADER_FIELDS), ("models[0]", model, MODEL_FIELDS), ("data", data, DATA_FIELDS),
        ("options", options, OPTION_FIELDS)) if isinstance(found, dict) for key in sorted(set(found) - known)), None)
    checks = [
        (where is None, f"{where} is not a finite number"),
        (unknown is None, f"{unknown} is a field certify never writes"),
        (isinstance(model.get("spec"), str), "models must be one model with a spec"),
        ("digest" in model and (model["digest"] is None or isinstance(model["digest"], str)),
         "the model's digest must be a string"),
        (isinstance(labels, list) and labels and all(isinstance(v, str) for v in labels)
         and len(set(labels)) == len(labels), "the model's labels must be distinct strings"),
        (is_batching(model.get("batching")), "the model's batching must say how it was evaluated"),
        (isinstance(model.get("precision"), str) and model["precision"] in DTYPES,
         f"the model's precision must be one of {', '.join(DTYPES)}"),
        (_is_int(model.get("batch_size")) and model["batch_size"] >= 1,
         "the model's batch_size must be an integer >= 1"),
        (type(model.get("trust_remote_code")) is bool, "the model's trust_remote_code must be true or false"),
        (all(model.get(name) is None or isinstance(model[name], str) for name in ("prompt", "verbalizer")),
         "the model's prompt and verbalizer must be texts or null"),
        (model.get("calibration", "auto") in CALIBRATIONS, f"the model's calibration must be one of "
                                                           f"{', '.join(CALIBRATIONS)}"),
        ("window" not in model or isinstance(model["window"], str) and model["window"] != "",
         "the model's window must say its size (\"512-token\")"),
        (type(header.get("margin_tolerance")) is float and header["margin_tolerance"] == MARGIN_TOLERANCE,
         f"margin_tolerance must be {MARGIN_TOLERANCE:g}, the tolerance robustcount decides with"),
        (_is_int(header.get("seed")), "seed must be an integer"),
        (isinstance(space, dict) and _same(space.get("seed"), header.get("seed")),
         "the space must be built with the run's seed"),
        (isinstance(options, dict) and _is_int(options.get("radius")) and 1 <= options["radius"] <= MAX_RADIUS,
         f"options.radius must be an integer from 1 to {MAX_RADIUS}"),
        (isinstance(options, dict) and _is_int(options.get("max_points")) and options["max_points"] >= 1,
         "options.max_points must be an integer >= 1"),
        (isinstance(options, dict) and options.get("order") in ORDERS, f"options.order must be one of {ORDERS}"),
        (isinstance(options, dict) and options.get("method", EARLIER_METHOD) in PROOF_METHODS,
         f"options.method must be one of {PROOF_METHODS}"),
        (isinstance(options, dict) and type(options.get("time_limit")) in (int, float) and options["time_limit"] >= 0,
         "options.time_limit must be a number >= 0"),
        (isinstance(options, dict) and (options.get("budget") is None or _is_int(options["budget"])
                                        and options["budget"] >= 1), "options.budget must be an integer >= 1"),
        (isinstance(data, dict) and _is_int(data.get("examples")) and data["examples"] >= 0,
         "data.examples must be an integer >= 0"),
        (isinstance(data, dict) and isinstance(data.get("spec"), str) and isinstance(data.get("digest"), str),
         "data must name the data (spec) and their digest"),
        (isinstance(data, dict) and _is_data_options(data), "data's options must be those certify writes (column "
                                                            "names and a label map as strings, sample and first as "
                                                            "integers >= 1, or null)"),
        (_is_int(header.get("chunk_size")) and header["chunk_size"] >= 1, "chunk_size must be an integer >= 1"),
        (isinstance(header.get("robustcount"), str), "robustcount must name a version"),
        (isinstance(header.get("python"), str), "python must name a version"),
        (isinstance(header.get("dependencies"), dict)
         and all(isinstance(v, str) for v in header["dependencies"].values()), "dependencies must map packages to "
                                                                                "versions"),
    ]
    return next((problem for ok, problem in checks if not ok), None)


def _record_problem(record: dict, header: dict) -> str | None:
    """What makes one certify `record` disagree with itself, its certificates or the run's
    (already checked) `header`, or None."""
    where = _non_finite(record)
    if where is not None:
        return f"{where} is not a finite number"
    correct = record.get("correct")
    expected_fields = RECORD_FIELDS | (OUTCOME_FIELDS if correct is True else set())
    missing, extra = sorted(expected_fields - set(record)), sorted(set(record) - expected_fields - OPTIONAL_FIELDS)
    if missing:
        return f"the field {missing[0]} is missing"
    if extra:
        return f"holds {extra[0]}, a field certify writes only for correctly classified examples" \
            if extra[0] in OUTCOME_FIELDS else f"holds {extra[0]}, a field certify never writes"
    problem = _fields_problem(record, header["models"][0]["labels"])
    if problem is not None:
        return problem
    if WINDOW_FIELD in record and record[WINDOW_FIELD]["size"] != header["models"][0].get("window"):
        return f"its window is {record[WINDOW_FIELD]['size']!r}, the run header's model has " \
               f"{header['models'][0].get('window', 'none')!r}"
    proofs = record["proofs"]
    if not correct:
        return "a misclassified example has proofs" if proofs else None
    if not all(isinstance(p, dict) for p in proofs):
        return "proofs must be a list of proofs"
    method = run_method(header)
    for k, found in enumerate(proofs, start=1):
        problem = _proof_problem(found, k, header["margin_tolerance"])
        if problem is not None:
            return f"proof {k}: {problem}"
        if method != "auto" and _proofs_method([found]) != method:
            return f"proof {k}: it is by {_proofs_method([found])}, the run proves by {method}"
    if len({_proofs_method([found]) for found in proofs}) > 1:
        return "its proofs are by different methods"
    rebuilt = [_proof(found) for found in proofs]
    problem = _schedule_problem(rebuilt, record["space_positions"], header["options"])
    if problem is None:
        derived = outcome_fields(rebuilt, record["space_positions"])
        problem = next((f"{name} is {json.dumps(record[name])}, its proofs give {json.dumps(value)}"
                        for name, value in derived.items() if not _same(record[name], value)), None)
    return problem if problem is not None else _certificates_problem(record, header, rebuilt)


def _fields_problem(record: dict, labels: list[str]) -> str | None:
    item = record["input"]
    checks = [
        (isinstance(record["id"], str), "id must be a string"),
        (isinstance(item, str) or (isinstance(item, list) and len(item) == 2 and all(isinstance(t, str) for t in item)),
         "input must be a text or a [premise, hypothesis] pair"),
        (record["gold"] in labels, f"gold {record['gold']!r} is not one of the model's labels {labels}"),
        (isinstance(record["correct"], bool), "correct must be true or false"),
        (isinstance(record["space_digest"], str), "space_digest must be a string"),
        (_is_int(record["space_positions"]) and record["space_positions"] >= 0,
         "space_positions must be an integer >= 0"),
        (_is_counters(record["queries"]), "queries must map the engine's counters to integers >= 0"),
        (isinstance(record["proofs"], list), "proofs must be a list of proofs"),
        (WINDOW_FIELD not in record or _is_window(record[WINDOW_FIELD], item),
         "window must hold the window's size, the input's number of words and how many of them lie beyond it"),
    ]
    return next((problem for ok, problem in checks if not ok), None)


def _coverage_problem(record: dict) -> str | None:
    """What makes a record's space coverage (when it has one) disagree with its input and its
    space, or with the |Omega_r| its proof at that radius counted; checked after
    everything else in the record (`_record_problem`), so its fields are well formed."""
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


def _proofs_method(proofs) -> str | None:
    """`bound` or `enumerate`: the method of the first of `proofs` (by its fields), None without one."""
    if not isinstance(proofs, list) or not proofs or not isinstance(proofs[0], dict):
        return None
    return "bound" if "certified_by_bounds" in proofs[0] else "enumerate"


def _proof_problem(proof: dict, k: int, tolerance: float) -> str | None:
    """What makes one proof malformed or self-contradictory (the k-th proves r = k, its points
    decided with the margin `tolerance`), or None. A bound proof's points are those it checked
    and those in boxes its bounds certified."""
    expected = BOUND_PROOF_FIELDS if _proofs_method([proof]) == "bound" else PROOF_FIELDS
    missing, extra = sorted(expected - set(proof)), sorted(set(proof) - expected - {"limit"})
    if missing or extra:
        return f"the field {missing[0]} is missing" if missing else f"holds {extra[0]}, a field a proof never has"
    if expected is BOUND_PROOF_FIELDS and not (
            _is_int(proof["boxes_bounded"]) and proof["boxes_bounded"] >= 0 and is_decimal(proof["certified_by_bounds"])
            and is_decimal(proof["total"]) and int(proof["certified_by_bounds"]) <= int(proof["total"])):
        return "boxes_bounded must be an integer >= 0 and certified_by_bounds a decimal string up to the total"
    by_bounds = int(proof["certified_by_bounds"]) if expected is BOUND_PROOF_FIELDS else 0
    status, total, checked = proof["status"], proof["total"], proof["checked"]
    margin, point = proof["smallest_margin"], proof["smallest_margin_point"]
    types = [
        (status in (CERTIFIED, ADVERSARIAL, UNDECIDED), "status must be certified, adversarial or undecided"),
        (proof["radius"] == k and _is_int(proof["radius"]), f"it is at radius {json.dumps(proof['radius'])}: the "
                                                            f"proofs go r = 1, 2, ..., so this one is r = {k}"),
        (is_decimal(total) and int(total) >= 1, "total must be a decimal string >= 1 (|Omega_r| holds the input "
                                                 "itself)"),
        (_is_int(checked) and is_decimal(total) and 0 <= checked <= int(total) - by_bounds,
         "checked must be an integer from 0 to the total (less the points certified by bounds)"),
        (margin is None or (type(margin) in (int, float)), "smallest_margin must be a number"),
        (is_point(point, allow_none=True),
         "smallest_margin_point must be a list of [position, candidate] pairs"),
        (proof["witness"] is None or isinstance(proof["witness"], (str, list)), "witness must be an input"),
        (proof["reason"] is None or isinstance(proof["reason"], str), "reason must be a text"),
        ("limit" not in proof or status == UNDECIDED and proof["limit"] in LIMITS,
         f"limit must be one of {', '.join(LIMITS)}, on an undecided proof only"),
        (_is_counters(proof["queries"]), "queries must map the engine's counters to integers >= 0"),
    ]
    problem = next((problem for ok, problem in types if not ok), None)
    if problem is not None:
        return problem
    seen, total = (margin is None, point is None, checked == 0), int(total)
    decided = checked + by_bounds
    if len(set(seen)) != 1:
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


def _proof(found: dict) -> Proof:
    point = found["smallest_margin_point"]
    common = (found["status"], found["radius"], int(found["total"]), found["checked"], found["smallest_margin"],
              None if point is None else tuple(tuple(c) for c in point))
    named = {"witness": found["witness"], "reason": found["reason"], "queries": found["queries"]}
    if "certified_by_bounds" in found:
        return BoundProof(*common, **named, boxes_bounded=found["boxes_bounded"],
                          certified_by_bounds=int(found["certified_by_bounds"]))
    return Proof(*common, **named)


def _schedule_problem(proofs: list[Proof], positions: int, options: dict) -> str | None:
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


def _certificates_problem(record: dict, header: dict, proofs: list[Proof]) -> str | None:
    """Whether the record's certificates are exactly those certify writes from its proofs, and
    the space they carry is one of the record's input that agrees with the record and its proofs."""
    certificates, kept = record["certificates"], certificate_proofs(proofs)
    if not isinstance(certificates, list) or not all(isinstance(c, dict) for c in certificates):
        return "certificates must be a list of certificates"
    if len(certificates) != len(kept):
        return f"holds {len(certificates)} certificate(s), its proofs give {len(kept)}"
    model, labels = header["models"][0], header["models"][0]["labels"]
    for k, (certificate, proof) in enumerate(zip(certificates, kept), start=1):
        named = certificate["model"] if isinstance(certificate.get("model"), dict) else {}
        batching, digest = named.get("batching"), named.get("digest")
        if not (isinstance(digest, str) and current_digest(digest) == current_digest(model["digest"])):
            digest = model["digest"]  # a resume of a run under a built-in model's former digest names its current one
        if not is_batching(batching):
            return f"certificate {k}: its model.batching must say how the model was evaluated"
        space = _space(certificate, record["input"], header["space"], record.get(WINDOW_FIELD))
        if isinstance(space, str):
            return f"certificate {k}: {space}"
        if isinstance(proof, BoundProof) and proof.status == CERTIFIED:
            proof.boxes = certificate.get("boxes")  # checked below, against its space and the proof's counts
        expected = make_certificate(record["id"], space, labels.index(record["gold"]), labels, proof, model["spec"],
                                    digest, batching)
        expected["robustcount"], expected["margin_tolerance"] = header["robustcount"], header["margin_tolerance"]
        differs = _difference(certificate, json.loads(json.dumps(expected)))
        if differs is not None:
            return f"certificate {k} ({proof.status}): its {differs}"
        if "boxes" in certificate:
            leaves = boxes_problem(certificate, space, len(labels))
            if isinstance(leaves, str):
                return f"certificate {k}: {leaves}"
            bounded = sum(entry[0] != ENUMERATE for entry in certificate["boxes"])  # each split box was bounded
            if proof.boxes_bounded != bounded:
                return f"certificate {k}: its boxes were bounded {bounded} times, its proof says {proof.boxes_bounded}"
        problem = _space_problem(space, record, proofs)
        if problem is not None:
            return problem
    return None


def _space(certificate: dict, item, definition: dict, window: dict | None) -> Space | str:
    """The space of `item` (the record's input) with the certificate's candidate lists and the
    run's `definition`, with the record's `window` (the words beyond the model's window) when it
    has one, or what makes those lists malformed."""
    space = certificate.get("space")
    definition = definition if window is None else {**definition, "window": window}
    positions = space.get("positions") if isinstance(space, dict) else None
    if not isinstance(positions, list) or not all(
            isinstance(p, list) and len(p) == 3 and p[0] in ("word", "gap") and _is_int(p[1])
            and isinstance(p[2], list) and p[2] and all(isinstance(c, str) for c in p[2]) for p in positions):
        return "space.positions must be [kind, index, [candidates]] lists"
    try:
        return Space(tuple(item) if isinstance(item, list) else item,
                     tuple(Position(kind, index, tuple(candidates)) for kind, index, candidates in positions),
                     definition)
    except ValueError as err:
        return f"space.positions: {err}"


def record_space_problem(record: dict, space: Space) -> str | None:
    """Whether a record (already through `run_problems`) agrees with `space`, its input's space
    rebuilt from the run's definition: what `verify` checks of a record without certificates
    (misclassified, or undecided at r = 1), whose space no certificate carries."""
    return _space_problem(space, record, [_proof(found) for found in record["proofs"]])


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
    for proof in proofs:
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
            if not _same(proof.witness, list(witness) if isinstance(witness, tuple) else witness):
                return f"proof {proof.radius}: its witness text is not the text its smallest_margin_point gives"
    return None


def _difference(found, expected, path: tuple = ()) -> str | None:
    """Where `found` first differs from `expected`, types included (so that 1 is not true and "2"
    is not 2), said of a path such as `space.positions[2]`; None when they are the same."""
    if isinstance(expected, dict):
        if not isinstance(found, dict):
            return f"{_dotted(path)} is not what its record and the run header give"
        for key in expected:
            if key not in found:
                return f"{_dotted((*path, key))} is missing"
            differs = _difference(found[key], expected[key], (*path, key))
            if differs is not None:
                return differs
        extra = sorted(set(found) - set(expected))
        return f"{_dotted((*path, extra[0]))} is a field certify never writes" if extra else None
    if isinstance(expected, list):
        if not isinstance(found, list) or len(found) != len(expected):
            return f"{_dotted(path)} is not what its record and the run header give"
        return next((differs for i, (a, b) in enumerate(zip(found, expected))
                     if (differs := _difference(a, b, (*path, i))) is not None), None)
    if type(found) is type(expected) and found == expected:
        return None
    return f"{_dotted(path)} is not what its record and the run header give"


def _same(found, expected) -> bool:
    return _difference(found, expected) is None


def _non_finite(value, path: tuple = ()) -> str | None:
    """The path of the first NaN or infinity in `value`, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else _dotted(path)
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return next((where for key, child in children if (where := _non_finite(child, (*path, key))) is not None), None)


def _dotted(path: tuple) -> str:
    """`("proofs", 0, "total")` as `proofs[0].total`."""
    text = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path).removeprefix(".")
    return text or "the whole"


def _is_window(value, item) -> bool:
    """Whether `value` is the window record of a space of `item` (`WINDOW_FIELD`)."""
    text = item if isinstance(item, str) else item[1] if isinstance(item, list) and len(item) == 2 else None
    if not isinstance(text, str):
        return False
    words = len(tokenize(text).words)
    return (isinstance(value, dict) and set(value) == {"size", "words", "beyond"} and isinstance(value["size"], str)
            and value["words"] == words and _is_int(value["beyond"]) and 0 < value["beyond"] <= words)


def _is_int(value) -> bool:
    return type(value) is int


def _is_data_options(data: dict) -> bool:
    """Whether a header's `data` options (`DataSpec.header`) are of the types DataSpec takes."""
    counts = [data.get("sample"), data.get("first")]
    texts = [data.get(key) for key in HEADER_KEYS if key != "sample"]
    return all(v is None or isinstance(v, str) for v in texts) and all(v is None or _is_int(v) and v >= 1
                                                                       for v in counts)


def _is_counters(value) -> bool:
    return isinstance(value, dict) and all(k in COUNTERS and _is_int(v) and v >= 0 for k, v in value.items())
