"""What a run file keeps: a command's own fields whatever their names (times go to the timings
file only when the command puts them under `timings`), and every search's limits as undecided
examples with their reason (one status for every search), never an aborted run."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from robustcount.cli import main
from robustcount.counting.pr import EstimateSettings, estimate_pr
from robustcount.data import Example
from robustcount.errors import PointLimitReached, RobustcountError
from robustcount.goal import MAX_POINTS
from robustcount.models.engine import QueryEngine
from robustcount.models.spec import ModelSpec
from robustcount.options import NoOptions
from robustcount.proofs.certify_record import CertifyRecord, RecordProblem
from robustcount.proofs.records import run_problems
from robustcount.runs import RunOutput, execute, read_run
from robustcount.runs.command import TIMINGS, Command, timings_apart
from robustcount.runs.files import timings_path
from robustcount.runs.registry import COMMANDS
from robustcount.runs.report import report_sections
from robustcount.runs.spec import RunSpec
from robustcount.spaces.build import build_space


class Durations(Command, name="durations", options=NoOptions, space=False):
    """Each text's reading time: a result that happens to be named `seconds`."""

    def task(self, worker, spec, examples) -> Iterator[dict]:
        for example in examples:
            yield {"id": example.id, "seconds": 0.25 * len(example.input.split()),
                   "answer": {"seconds": 1.0}, TIMINGS: {"took": 0.001}}

    def summarise(self, run) -> dict:
        return {"reading_seconds": sum(r["seconds"] for r in run.records)}

    def table(self, summary):
        return ["reading seconds"], [[summary["reading_seconds"]]]


@pytest.fixture(autouse=True)
def _forget_the_command():
    yield
    COMMANDS.pop("durations", None)


def test_a_result_named_seconds_stays_in_the_run_file(tmp_path):
    out = tmp_path / "run.jsonl"
    examples = [Example("a", "one two three four", "positive"), Example("b", "five six", "negative")]
    execute(RunSpec("durations", (ModelSpec("bow-rt", device="cpu"),)), examples, {"spec": "inline"}, output=RunOutput(out),
            progress=False)
    records = read_run(out).records
    assert [(r["seconds"], r["answer"]) for r in records] == [(1.0, {"seconds": 1.0}), (0.5, {"seconds": 1.0})]
    assert all(TIMINGS not in r for r in records)
    (chunk,) = [json.loads(line) for line in timings_path(out).read_text().splitlines()
                if json.loads(line)["record"] == "chunk"][:1]
    assert chunk["examples"][0] == {"took": 0.001}


def test_timings_apart_moves_robustcount_times_and_nothing_else():
    record = {"id": "x", "queries": {"model_calls": 3, "model_seconds": 0.5}, "proofs": [{"r": 1, "seconds": 2.0}]}
    assert timings_apart(record) == {"id": "x", "queries": {"model_calls": 3}, "proofs": [{"r": 1}],
                                     TIMINGS: {"queries": {"model_seconds": 0.5}, "proofs": [{"seconds": 2.0}]}}


def test_exact_pr_over_the_limit_is_a_limit_not_a_failure(bow_rt):
    space = build_space("a wonderful and moving film", ["truncate", "disemvowel"])
    with pytest.raises(PointLimitReached, match="above the limit of 3"):
        estimate_pr(QueryEngine(bow_rt), space, 1, 2, EstimateSettings(method="exact", max_points=3))


def test_estimate_exact_over_the_limit_leaves_those_examples_undecided(capsys, tmp_path):
    out = tmp_path / "pr.jsonl"
    args = ["estimate", "--model", "bow-rt", "--sample", "6", "--method", "exact", "--radius", "2",
            "--max-points", "50", "--output", str(out), "--json"]
    assert main(args) == 0  # the run goes on
    summary = json.loads(capsys.readouterr().out)
    records = read_run(out).records
    over = [r for r in records if r.get("reason")]
    assert over and all("above the limit of 50" in r["reason"] and r["estimate"] is None for r in over)
    assert summary["undecided"] == len(over) and summary["examples"] == 6
    assert all(r["estimate"]["method"] == "exact" for r in records if r["correct"] and not r.get("reason"))
    (section,) = [s for s in report_sections(read_run(out)) if s.title == "Undecided"]
    assert section.tables[0][2] == [[r["id"], r["reason"]] for r in over]


def test_a_proof_over_the_limit_is_undecided_in_the_same_words(capsys, tmp_path):
    out = tmp_path / "certify.jsonl"
    args = ["certify", "--model", "bow-rt", "--sample", "4", "--source", "truncate", "--radius", "1",
            "--max-points", "1", "--output", str(out), "--json"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    run = read_run(out)
    undecided = [r for r in run.records if r.get("undecided")]
    assert undecided and summary["undecided"] == len(undecided)
    (section,) = [s for s in report_sections(run) if s.title == "Undecided"]
    assert [row[0] for row in section.tables[0][2]] == [r["id"] for r in undecided]
    assert all("above the limit of 1" in row[1] for row in section.tables[0][2])


DATA = Path(__file__).parent / "data" / "runs"


def test_run_files_written_before_the_typed_options_still_read_report_and_verify(capsys, tmp_path):
    """tests/data/runs holds a certify and an estimate run file written by the robustcount before
    options were checked when built (its estimate header has no max_points)."""
    for name in ("certify", "estimate"):
        run = read_run(DATA / f"{name}.jsonl")
        assert type(run.options).__name__ == {"certify": "CertifyOptions", "estimate": "EstimateOptions"}[name]
        assert any(s.title == "Results" for s in report_sections(run))
    assert read_run(DATA / "estimate.jsonl").options.max_points == MAX_POINTS  # the default it ran with
    assert main(["verify", str(DATA / "certify.jsonl"), "--data", "demo:test"]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("name", ["certify", "estimate"])
def test_a_stored_run_reports_byte_identically(capsys, tmp_path, name):
    """Reports of run files written before a report gained lines (the space, by its records'
    coverage) read as they did: tests/data/runs/NAME.report.md is the report robustcount wrote
    for each before then."""
    assert main(["report", str(DATA / f"{name}.jsonl"), "--out", str(tmp_path)]) == 0, capsys.readouterr().err
    assert (tmp_path / "report.md").read_bytes() == (DATA / f"{name}.report.md").read_bytes()


def test_an_estimate_run_with_the_earlier_shell_samples_reads_back(tmp_path):
    """Headers written before --distance-samples hold shell_samples (points at every distance)."""
    lines = (DATA / "estimate.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    assert json.loads(lines[0])["options"]["shell_samples"] == 0
    assert read_run(DATA / "estimate.jsonl").options.distance_samples == 0
    header = json.loads(lines[0])
    header["options"]["shell_samples"] = 100
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    assert read_run(earlier).options.distance_samples == 100


def test_a_header_whose_options_are_not_its_commands_is_refused_in_one_line(tmp_path):
    lines = (DATA / "certify.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["options"]["order"] = "nonsense"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    with pytest.raises(RobustcountError) as raised:
        read_run(bad)
    assert "\n" not in str(raised.value) and "order" in str(raised.value)


def test_a_certify_record_reads_back_as_the_record_certify_writes():
    """`CertifyRecord.read` gives back, through `as_dict` (what `certify` writes), every record of
    a stored certify run, times aside; a record it refuses is refused by the run checks in the
    same words."""
    header, *records = [json.loads(line) for line in (DATA / "certify.jsonl").read_text().splitlines()]
    for record in records:
        read = CertifyRecord.read(record, header)
        written = {k: v for k, v in timings_apart(read.as_dict()).items() if k != TIMINGS}
        assert json.loads(json.dumps(written)) == {k: v for k, v in record.items() if k not in ("record", "index")}
    forged = {**records[0], "space_positions": records[0]["space_positions"] + 1}
    with pytest.raises(RecordProblem) as refused:
        CertifyRecord.read(forged, header)
    assert [str(p) for p in run_problems(header, [forged])] == [f"example {forged['id']}: {refused.value}"]
