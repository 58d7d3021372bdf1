"""Resuming with other options: a raised --budget or --time-limit runs again only the examples it
stopped, and gives the file a fresh run with that limit writes; any other difference is refused
in one line naming the option and both values."""

import json

from robustcount.cli import main
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
