"""The Python API (`robustcount.attack`, `.certify`, `.estimate`) runs the dataset commands with the
command line's option objects and run machinery: on a real model its run files are the CLI's byte
for byte, its typed records are the records those files hold, and bad options are refused when built."""

import json
import subprocess
import sys

import pytest

import robustcount
from robustcount.api import AttackRecord, CertifyRecord, EstimateRecord
from robustcount.attacks.pdp import PDPOptions
from robustcount.cli import main
from robustcount.cli.common import without_nan
from robustcount.commands import read_run
from robustcount.data import DataSpec
from robustcount.errors import RobustcountError
from robustcount.proofs.options import CertifyOptions
from robustcount.runs.launch import RunOptions

DATA = DataSpec("demo:test", first=4)
CLI_DATA = ["--model", "bow-rt", "--first", "4"]


@pytest.mark.parametrize("run, cli, record_type", [
    (lambda out: robustcount.certify("bow-rt", "demo:test", first=4, radius=2, max_points=200, output=out),
     ["certify", *CLI_DATA, "--radius", "2", "--max-points", "200"], CertifyRecord),
    (lambda out: robustcount.estimate("bow-rt", DATA, radius=2, eps=0.1, delta=0.1, seed=3, output=out),
     ["estimate", *CLI_DATA, "--radius", "2", "--eps", "0.1", "--delta", "0.1", "--seed", "3"], EstimateRecord),
    (lambda out: robustcount.attack("bow-rt", DATA, recipe="pdp", beam=3, radius=2, output=out),
     ["attack", *CLI_DATA, "--recipe", "pdp", "--beam", "3", "--radius", "2"], AttackRecord),
])
def test_each_function_writes_the_clis_run_file_and_returns_its_records(tmp_path, capsys, run, cli, record_type):
    results = run(tmp_path / "api.jsonl")
    assert main([*cli, "--output", str(tmp_path / "cli.jsonl"), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (tmp_path / "api.jsonl").read_bytes() == (tmp_path / "cli.jsonl").read_bytes()
    written = read_run(tmp_path / "cli.jsonl")
    assert results.run_file == tmp_path / "api.jsonl" and results.options == written.options
    assert [r.record for r in results.records] == written.records and len(results.records) == 4
    assert all(type(r) is record_type and r.id == w["id"] and r.gold == w["gold"]
               for r, w in zip(results.records, written.records))
    shown = {k: v for k, v in results.summary.items() if k != "run"}
    assert _untimed(json.loads(json.dumps(without_nan(shown)))) == _untimed(printed)  # the summary --json prints


def _untimed(value):
    """`value` without the wall times (keys naming seconds), which differ from run to run."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if "seconds" not in k}
    return [_untimed(v) for v in value] if isinstance(value, list) else value


def test_typed_fields_are_the_records_own(tmp_path):
    results = robustcount.certify("bow-rt", DATA, radius=1, output=tmp_path / "run.jsonl")
    for record in results.records:
        assert record.certified_radius == record.record.get("certified_radius")
        assert record.correct is record.record["correct"] and record.proofs == record.record["proofs"]
    assert results.summary["examples"] == 4 and results.options == CertifyOptions(radius=1)


def test_option_objects_are_taken_whole_and_a_run_resumes(tmp_path):
    out = tmp_path / "run.jsonl"
    first = robustcount.attack("bow-rt", DataSpec("demo:test", first=2), options=None, recipe="exhaustive",
                               run=RunOptions(output=out), radius=1)
    assert first.options.settings.radius == 1 and len(first.records) == 2
    again = robustcount.attack("bow-rt", DataSpec("demo:test", first=3), recipe="exhaustive", radius=1,
                               run=RunOptions(output=out, resume=False, overwrite=True))
    resumed = robustcount.attack("bow-rt", DataSpec("demo:test", first=3), recipe="exhaustive", radius=1,
                                 output=out, resume=True)
    assert [r.record for r in resumed.records] == [r.record for r in again.records]


@pytest.mark.parametrize("call, message", [
    (lambda: robustcount.certify("bow-rt", DATA, radius=0), "radius must be at least 1, got 0"),
    (lambda: robustcount.attack("bow-rt", DATA, beam=0), "beam must be at least 1, got 0"),
    (lambda: robustcount.estimate("bow-rt", DATA, eps=2.0), "eps must be"),
    (lambda: robustcount.certify("bow-rt", DATA, radios=2), "certify takes no option 'radios'"),
    (lambda: robustcount.certify("bow-rt", DATA, first=0), "first must be at least 1, got 0"),
    (lambda: robustcount.certify("bow-rt", DATA, resume=True), "--resume needs --output"),
    (lambda: robustcount.certify("bow-rt", DATA, workers=0), "workers must be at least 1, got 0"),
    (lambda: robustcount.certify("bow-rt", DATA, seed="1"), "seed must be an integer"),
])
def test_bad_options_are_refused_in_one_line_before_any_run(tmp_path, monkeypatch, call, message):
    monkeypatch.setenv("ROBUSTCOUNT_RUNS", str(tmp_path))
    with pytest.raises(RobustcountError) as raised:
        call()
    assert message in str(raised.value) and "\n" not in str(raised.value)
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_import_robustcount_loads_the_api_only_when_a_function_is_asked_for():
    script = ("import sys, robustcount; loaded = 'robustcount.api' in sys.modules; robustcount.certify; "
              "print(loaded, 'robustcount.api' in sys.modules)")
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert shown.split() == ["False", "True"]


def test_pdp_options_are_checked_when_built():
    with pytest.raises(RobustcountError, match="beam must be at least 1, got 0"):
        PDPOptions(beam=0)
