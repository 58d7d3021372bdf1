"""Forge every field of certify run files and count what `verify` and `report` say.

For the header and one record of each kind the run holds (certified, adversarial, undecided,
misclassified; for bound runs a radius certified by bounds alone and one of both leaf kinds), every
field (a list's first entry standing for the rest) is edited to wrong but well-typed values (a
number moved, a string or a count changed, a flag flipped, a list shortened, a field added to an
object), to ill-typed ones (null, a string, an integer of 5,000 digits, a nested object, NaN, a
string of 5,000 digits) and deleted; each forged file holds the header and the forged record
(the header's: two records). Printed: how many forgeries, how many made an internal error, how
many `verify` and `report` accepted; `--out` writes every outcome as JSON to review what was
accepted (tests/test_forgeries.py holds the fields whose edits provably change no claim). Run:

    .venv/bin/python experiments/forgery_sweep.py --run enum=RUN.jsonl --run bound=RUN.jsonl:MODEL_DIR --out sweep.json
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import tempfile
from pathlib import Path

from robustcount.cli import main

HUGE = "1" * 5000
ILL_TYPED = [None, "x", "@HUGE@", {"a": {"b": []}}, "@NAN@", HUGE]
DELETED = object()
KINDS = {
    "certified": lambda r: r.get("certified_radius", 0) > 1,
    "adversarial": lambda r: bool(r.get("certificates")) and r["certificates"][-1]["status"] == "adversarial",
    "undecided": lambda r: bool(r.get("undecided")),
    "misclassified": lambda r: not r["correct"],
    "bounds-only": lambda r: any(p.get("certified_by_bounds") == p["total"] for p in r["proofs"]),
    "mixed": lambda r: any(0 < int(p.get("certified_by_bounds", "0")) < int(p["total"]) for p in r["proofs"]),
}


def fields_of(value, path=()):
    """Every field under `value` as (path, value), a list's first entry standing for the rest."""
    yield path, value
    if isinstance(value, dict):
        children = value.items()
    elif isinstance(value, list):
        children = list(enumerate(value))[:1]
    else:
        children = ()
    for key, child in children:
        if not (path and path[0] == "dependencies") and "definition" not in path:
            yield from fields_of(child, (*path, key))


def well_typed(value) -> list:
    """Wrong values of `value`'s type."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1, -value - 1]
    if isinstance(value, float):
        return [value + 0.01, -value, 0.9]
    if isinstance(value, str):
        return [str(int(value) + 1), str(max(int(value) - 1, 0))] if value.isdigit() else [value + "x"]
    if isinstance(value, list):
        return [value[:-1], value + value[:1]] if value else []
    return [{**value, "extra": 1}] if isinstance(value, dict) else []


def written(lines: list[dict]) -> str:
    text = "".join(json.dumps(line) + "\n" for line in lines)
    return text.replace('"@HUGE@"', HUGE).replace('"@NAN@"', "NaN")


def run(args: list[str]) -> tuple[int, str]:
    """The exit status of `robustcount ARGS` in this process, and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = main(args)
    return status, out.getvalue()


def forged_files(lines: list[dict]):
    """(where, path, kind, value, the forged file's lines) for every forgery of `lines`."""
    picks = {kind: next((i for i, r in enumerate(lines[1:], 1) if chosen(r)), None) for kind, chosen in KINDS.items()}
    header_records = [i for i in picks.values() if i is not None][:2]
    for where, index in [("header", 0)] + [(kind, i) for kind, i in picks.items() if i is not None]:
        for path, value in list(fields_of(lines[index])):
            if not path:
                continue
            edits = [("well-typed", v) for v in well_typed(value) if v != value]
            edits += [("ill-typed", v) for v in ILL_TYPED if v != value] + [("deleted", DELETED)]
            for kind, new in edits:
                forged = copy.deepcopy(lines)
                target = forged[index]
                for key in path[:-1]:
                    target = target[key]
                if new is DELETED:
                    del target[path[-1]]
                else:
                    target[path[-1]] = new
                kept = [forged[0]] + ([forged[index]] if index else [forged[i] for i in header_records])
                yield where, path, kind, new, kept


def sweep(name: str, source: Path, model: str | None, folder: Path) -> list[dict]:
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    outcomes = []
    for where, path, kind, new, kept in forged_files(lines):
        forged = folder / f"{name}.jsonl"
        forged.write_text(written(kept))
        verified, said = run(["verify", str(forged), *(["--model", model] if model else [])])
        reported, told = run(["report", str(forged), "--out", str(folder / "report")])
        outcomes.append({"run": name, "where": where, "path": list(path), "kind": kind,
                         "value": "<deleted>" if new is DELETED else repr(new)[:60], "verify": verified,
                         "report": reported, "internal": "internal error" in said + told or "Traceback" in said + told,
                         "said": said.strip().splitlines()[0][:200] if said.strip() else ""})
    return outcomes


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, help="NAME=RUN.jsonl[:MODEL] (repeatable)")
    parser.add_argument("--out", type=Path, help="write every outcome here (JSON)")
    args = parser.parse_args()
    outcomes = []
    with tempfile.TemporaryDirectory() as folder:
        for given in args.run:
            name, _, rest = given.partition("=")
            source, _, model = rest.partition(":")
            outcomes += sweep(name, Path(source), model or None, Path(folder))
    if args.out:
        args.out.write_text(json.dumps(outcomes, indent=0))
    print(f"{len(outcomes)} forgeries: {sum(o['internal'] for o in outcomes)} internal errors, "
          f"{sum(o['verify'] == 0 for o in outcomes)} accepted by verify, {sum(o['report'] == 0 for o in outcomes)} "
          "by report")


if __name__ == "__main__":
    main_()
