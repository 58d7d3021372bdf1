"""Resuming with other options: a raised --budget or --time-limit runs again only the examples it
stopped, and gives the file a fresh run with that limit writes; any other difference is refused
in one line naming the option and both values."""

import json

import pytest

from robustcount.cli import main
from robustcount.commands.certify import Certify
from robustcount.errors import RobustcountError
from robustcount.runs.files import _check_same_run

CERTIFY = ["certify", "--model", "bow-rt", "--sample", "5", "--radius", "3"]


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_a_raised_budget_reruns_only_the_examples_it_stopped(capsys, tmp_path):
    fresh, resumed = tmp_path / "fresh.jsonl", tmp_path / "resumed.jsonl"
    assert main([*CERTIFY, "--output", str(fresh)]) == 0
    assert main([*CERTIFY, "--budget", "10", "--output", str(resumed)]) == 0
    stopped = [r["index"] for r in records(resumed) if r.get("undecided")]
    assert stopped, "the small budget must leave examples undecided"
    kept = {r["index"]: r for r in records(resumed) if r["index"] not in stopped}
    capsys.readouterr()
    assert main([*CERTIFY, "--output", str(resumed), "--resume"]) == 0  # no budget: the largest raise
    assert resumed.read_bytes() == fresh.read_bytes()
    assert all(records(resumed)[i] == r for i, r in kept.items())


def test_a_resume_that_lowers_a_limit_or_changes_an_option_names_it_with_both_values(capsys, tmp_path):
    out = tmp_path / "run.jsonl"
    assert main([*CERTIFY, "--sample", "2", "--time-limit", "60", "--output", str(out)]) == 0
    before = out.read_bytes()
    capsys.readouterr()
    assert main([*CERTIFY, "--sample", "2", "--time-limit", "30", "--output", str(out), "--resume"]) == 1
    err = capsys.readouterr().err
    assert "options.time_limit: 60.0 in the file, 30.0 now" in err and "never lower them" in err
    assert err.count("\n") == 1
    assert main([*CERTIFY, "--sample", "2", "--radius", "2", "--output", str(out), "--resume"]) == 1
    assert "options.radius: 3 in the file, 2 now" in capsys.readouterr().err
    assert out.read_bytes() == before


def test_which_changes_a_resume_accepts():
    header = {"record": "run", "command": "certify", "seed": 0,
              "options": {"radius": 3, "time_limit": 10.0, "budget": 50}}

    def with_options(**changed):
        return {**header, "options": {**header["options"], **changed}}

    assert _check_same_run("f", header, header) == []
    assert _check_same_run("f", header, with_options(time_limit=0.0)) == ["time_limit"]  # 0: no limit
    assert _check_same_run("f", header, with_options(time_limit=20.0, budget=None)) == ["budget", "time_limit"]
    for refused in (with_options(budget=40), with_options(time_limit=5.0), {**header, "seed": 1}):
        try:
            _check_same_run("f", header, refused)
        except RobustcountError as err:
            assert " in the file, " in str(err)
        else:
            raise AssertionError(f"{refused} must be refused")
    unlimited = with_options(time_limit=0.0)
    try:
        _check_same_run("f", unlimited, header)  # from no limit to one: lowered
    except RobustcountError as err:
        assert "options.time_limit: 0.0 in the file, 10.0 now" in str(err)
    else:
        raise AssertionError("a limit set on an unlimited run must be refused")


def stopped_by(path) -> dict[int, str]:
    """The limit of each undecided example of a certify run file, as `Certify.undecided` reads it."""
    return {r["index"]: found.limits[0] for r in records(path) if (found := Certify().undecided(r)) is not None}


def as_time_limited(path, index: int, old_format: bool) -> None:
    """Rewrite the run file so that the example at `index` reads as stopped by its 60 s time limit
    (the budget stopped it): its last proof's limit and reason; with `old_format`, every record as
    robustcount wrote it before the `limit` field (the reason alone names the limit)."""
    lines = path.read_text().splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        record = json.loads(line)
        last = record["proofs"][-1] if record.get("undecided") else None
        if record["index"] == index:
            last["limit"], last["reason"] = "time limit", "time limit of 60 s per example reached " \
                                                          f"(after {last['checked']} of {last['total']} points)"
        if old_format and last is not None:
            del last["limit"]
        out.append(json.dumps(record, sort_keys=True, ensure_ascii=False))
    path.write_text("\n".join(out) + "\n")


@pytest.mark.parametrize("old_format", [False, True])
def test_a_raised_limit_reruns_exactly_the_examples_that_limit_stopped(capsys, tmp_path, old_format):
    limited = [*CERTIFY, "--budget", "10"]
    first, out = tmp_path / "first.jsonl", tmp_path / "run.jsonl"
    assert main([*limited, "--time-limit", "60", "--output", str(first)]) == 0
    budgeted = sorted(stopped_by(first))
    assert len(budgeted) >= 2 and set(stopped_by(first).values()) == {"budget"}
    timed = budgeted[0]
    as_time_limited(first, timed, old_format)
    assert stopped_by(first) == {i: "time limit" if i == timed else "budget" for i in budgeted}
    before = {r["index"]: r for r in records(first)}
    # A raised time limit runs again the time-limited example only: under the same budget it ends
    # as a fresh run ends it, stopped by the budget; every other record is kept as it was.
    out.write_bytes(first.read_bytes())
    assert main([*limited, "--time-limit", "120", "--output", str(out), "--resume"]) == 0
    after = {r["index"]: r for r in records(out)}
    assert {i: r for i, r in after.items() if i != timed} == {i: r for i, r in before.items() if i != timed}
    assert stopped_by(out)[timed] == "budget" and after[timed]["proofs"][-1]["limit"] == "budget"
    # A raised budget runs again the budget-limited examples only: the time-limited one is kept.
    out.write_bytes(first.read_bytes())
    assert main([*CERTIFY, "--time-limit", "60", "--output", str(out), "--resume"]) == 0
    after = {r["index"]: r for r in records(out)}
    assert after[timed] == before[timed] and stopped_by(out) == {timed: "time limit"}
    assert all(after[i] != before[i] for i in budgeted if i != timed)
