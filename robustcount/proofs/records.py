"""A `certify` run read back, checked as a whole without any model.

A certify run file is a header and one record per example (`certify_record.CertifyRecord`, which
`certify` writes and whose reading checks one record). `run_problems` is what `verify` checks
before any model is loaded and what every reader of a certify run (`runs.files.read_run`, hence
`report` and the summaries) refuses a file for:

- the header: one model (spec, digest, labels, batching, precision), the margin tolerance, a
  space definition whose seed is the run's, options of the types certify writes (radius, max_points, order, time_limit, budget), the
  number of examples, every other field of the type certify writes and none it never writes;
- every record as `CertifyRecord.read` checks it against the header (its fields, its proofs as
  the run's schedule makes them, what it derives from them, its certificates and its coverage);
- no example id twice, and one proof method per run (`options.method`: `enumerate`, `bound`, or
  `auto`, all of whose proofs must be by one method).

`data_problems` checks, given the data the header names, that the records are that data's
examples (`verify` does, when the data are at hand). What needs a model or the space's sources (the candidate lists rebuilt, every point evaluated)
is `certificate.verify_certificate`'s and `certificate.proof_margins_problem`'s; a record without
certificates is checked against its space rebuilt (`certify_record.record_space_problem`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields

from robustcount.data import HEADER_KEYS, Example, examples_digest
from robustcount.errors import RobustcountError
from robustcount.goal import MARGIN_TOLERANCE
from robustcount.models.batch_probe import is_batching
from robustcount.models.device import DTYPES
from robustcount.models.spec import CALIBRATIONS
from robustcount.proofs.certify_record import CertifyRecord, RecordProblem
from robustcount.proofs.options import CertifyOptions
from robustcount.proofs.proof_checks import EARLIER_METHOD
from robustcount.proofs.structure import is_int as _is_int  # the names _header_problem has always used
from robustcount.proofs.structure import is_tolerance
from robustcount.proofs.structure import non_finite as _non_finite
from robustcount.proofs.structure import same as _same

HEADER_FIELDS = frozenset({"record", "format", "command", "seed", "options", "models", "margin_tolerance", "space",
                           "data", "chunk_size", "robustcount", "python", "dependencies"})
"""The fields of a run header (`runs.provenance.run_header` writes them)."""
SERVED_FIELDS = frozenset({"api", "max_requests", "max_cost", "top_logprobs", "served"})
"""The fields only a served model's header holds (its API, its limits, the top_logprobs asked for,
how it is asked and scored)."""
MODEL_FIELDS = frozenset({"spec", "precision", "batch_size", "trust_remote_code", "prompt", "verbalizer",
                          "calibration", "digest", "labels", "batching", "window"}) | SERVED_FIELDS
"""The fields of a run header's model (`ModelSpec`'s but the device, and what the engine says: a
`window` only for a model that reads a prefix of long inputs; runs written before language models
lack `prompt`, `verbalizer` and `calibration`; a served model's: `SERVED_FIELDS`)."""
DATA_FIELDS = frozenset({"spec", *HEADER_KEYS, "first", "examples", "digest"})
"""The fields of a run header's data (`DataSpec.header`, the examples' number and digest)."""
OPTION_FIELDS = frozenset(f.name for f in fields(CertifyOptions))
"""The options of a certify run header: `CertifyOptions`' fields."""
REQUIRED_OPTIONS = OPTION_FIELDS - {"method", "budget"}
"""The options every certify run header holds (`method` came later; `budget` may be absent)."""


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
        problem, method = _read(record, header)
        if problem is None and name in seen:
            problem, method = f"appears twice (at indices {seen[name]} and {record.get('index')})", None
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


def _read(record: dict, header: dict) -> tuple[str | None, str | None]:
    """What makes `record` untrustworthy (`CertifyRecord.read`), or None with its proofs' method."""
    try:
        return None, CertifyRecord.read(record, header).method
    except RecordProblem as problem:
        return str(problem), None


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
        (is_tolerance(header.get("margin_tolerance")),
         f"margin_tolerance must be {MARGIN_TOLERANCE:g}, the tolerance robustcount decides with"),
        (_is_int(header.get("seed")), "seed must be an integer"),
        (isinstance(space, dict) and _same(space.get("seed"), header.get("seed")),
         "the space must be built with the run's seed"),
        ((options_problem := _options_problem(options)) is None, f"options: {options_problem}"),
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


def _options_problem(options) -> str | None:
    """What keeps a header's `options` from being those of a certify run, or None: each option
    certify always writes present (`method` may be missing, as before `--method`), and all of
    them within `CertifyOptions`' declared bounds and choices, checked as they are when built (a
    field certify never writes is the unknown-field check's)."""
    if not isinstance(options, dict):
        return "must be the options certify writes"
    missing = sorted(REQUIRED_OPTIONS - set(options))
    if missing:
        return f"{missing[0]} is missing"
    try:
        CertifyOptions(**{"method": EARLIER_METHOD, **{k: v for k, v in options.items() if k in OPTION_FIELDS}})
    except RobustcountError as err:
        return str(err)
    return None


def _is_data_options(data: dict) -> bool:
    """Whether a header's `data` options (`DataSpec.header`) are of the types DataSpec takes."""
    counts = [data.get("sample"), data.get("first")]
    texts = [data.get(key) for key in HEADER_KEYS if key != "sample"]
    return all(v is None or isinstance(v, str) for v in texts) and all(v is None or _is_int(v) and v >= 1
                                                                       for v in counts)
