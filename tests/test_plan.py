"""`--dry-run`: each example's |Omega_r|, the model calls its search would make and their time,
checked against the spaces and against what real runs spend, without a run file."""

import json

import pytest

from robustcount.cli import main
from robustcount.counting.pr import hoeffding_n
from robustcount.data import DataSpec
from robustcount.runs import read_run
from robustcount.spaces.build import Filters, SpaceSpec, english_stop_words


def plans(capsys, *arguments) -> list[dict]:
    capsys.readouterr()
    assert main([*arguments, "--dry-run", "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def spaces(sample: int, filters: Filters = Filters()) -> dict:
    build = SpaceSpec(filters=filters).builder(0)
    return {str(e.id): build(e.input) for e in DataSpec(sample=sample).load(0)}


@pytest.fixture
def runs_folder(tmp_path, monkeypatch):
    """Where a run without --output would go: empty, and it must stay so."""
    folder = tmp_path / "runs"
    monkeypatch.setenv("ROBUSTCOUNT_RUNS", str(folder))
    return folder


def test_certify_plan_is_the_space_and_the_calls_a_certified_example_spends(capsys, tmp_path, runs_folder):
    out = tmp_path / "certify.jsonl"
    planned = plans(capsys, "certify", "--model", "bow-rt", "--sample", "8", "--radius", "2", "--output", str(out))
    assert not out.exists() and not runs_folder.exists()  # nothing searched, no run file
    built = spaces(8)
    assert [p["id"] for p in planned] == list(built)
    for p in planned:
        assert int(p["omega_r"]) == built[p["id"]].count(2) and p["positions"] == len(built[p["id"]].positions)
        assert p["probe"]["model_calls"] > 0 and p["seconds"] > 0 and p["suggestions"] == []
    assert main(["certify", "--model", "bow-rt", "--sample", "8", "--radius", "2", "--output", str(out)]) == 0
    calls = {p["id"]: p["model_calls"] for p in planned}
    certified = 0
    for record in read_run(out).records:
        # bow-rt reads word ids: a point whose ids an earlier point of its batch has is a duplicate, not a call
        spent = record["queries"]["model_calls"] + record["queries"]["duplicates"]
        if record["proofs"] and record.get("certified_radius") == min(2, record["space_positions"]):
            # certified at every radius: each point of Omega_r once (the input is the point of no change)
            assert spent == calls[record["id"]] == built[record["id"]].count(2) == record["proofs"][-1]["checked"]
            assert record["queries"]["model_calls"] <= calls[record["id"]]
            certified += 1
        else:  # an adversary, or a misclassified input (its one prediction), ends the search sooner
            assert spent < calls[record["id"]] or spent == calls[record["id"]] == 1
    assert certified  # the equality was checked


def test_the_plan_suggests_what_to_change_above_the_time_limit(capsys):
    planned = plans(capsys, "certify", "--model", "bow-rt", "--sample", "8", "--radius", "2",
                    "--time-limit", "0.000001")
    fewer = spaces(8, Filters(max_candidates=2))
    without_stop_words = spaces(8, Filters(stop_words=english_stop_words()))
    assert all(p["over_time_limit"] for p in planned)
    for p in planned:
        by_change = {s["change"]: s for s in p["suggestions"]}
        assert by_change[f"--time-limit {p['suggestions'][-1]['change'].split()[-1]}"]["fits"]
        for change, built in (("--max-candidates 2", fewer), ("--stop-words", without_stop_words)):
            smaller = built[p["id"]].count(2)
            if smaller < int(p["omega_r"]):  # suggested exactly when the change makes the space smaller
                assert int(by_change[change]["size"]) == smaller == by_change[change]["calls"]
            else:
                assert change not in by_change
    assert any("--max-candidates 2" in [s["change"] for s in p["suggestions"]] for p in planned)
    capsys.readouterr()
    assert main(["certify", "--model", "bow-rt", "--sample", "2", "--radius", "2", "--time-limit", "0.000001",
                 "--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert "is above the time limit of 1e-06 s; try" in shown and "Nothing was searched" in shown


def test_estimate_plan_bounds_the_samples(capsys, tmp_path):
    arguments = ["estimate", "--model", "bow-rt", "--sample", "6", "--radius", "3", "--eps", "0.2"]
    planned = {p["id"]: p for p in plans(capsys, *arguments)}
    cap = 1 + hoeffding_n(0.2, 0.005 / 2)  # the input and the adaptive estimator's most samples
    out = tmp_path / "estimate.jsonl"
    assert main([*arguments, "--output", str(out)]) == 0
    sampled = 0
    for record in read_run(out).records:
        p = planned[record["id"]]
        size = int(p["omega_r"])
        assert p["model_calls"] == (size if size <= cap - 1 else cap)
        spent = record["queries"]["model_calls"] + record["queries"]["duplicates"]  # bow-rt reads word ids
        assert record["queries"]["model_calls"] <= spent <= p["model_calls"]
        if record["estimate"] and record["estimate"]["method"] == "exact":  # every point, once
            assert spent == p["model_calls"] == size
        sampled += size > cap - 1
    assert sampled  # a space larger than the samples was planned


@pytest.mark.parametrize("recipe", [["pdp"], ["pdp", "--no-pruning", "--beam", "3"], ["textfooler", "--no-similarity-check"],
                                    ["exhaustive"], ["pwws"], ["deepwordbug"], ["pso", "--population", "6", "--iterations", "3"],
                                    ["bae", "--no-similarity-check"]], ids=lambda r: " ".join(r))
def test_attack_plans_bound_what_the_recipes_spend(capsys, tmp_path, recipe):
    arguments = ["attack", "--model", "bow-rt", "--sample", "6", "--recipe", *recipe]
    planned = {p["id"]: p["model_calls"] for p in plans(capsys, *arguments)}
    out = tmp_path / "attack.jsonl"
    assert main([*arguments, "--output", str(out)]) == 0
    for record in read_run(out).records:
        queries = record["queries"]
        assert 1 <= queries["model_calls"] + queries["duplicates"] + queries["gradient_calls"] <= planned[record["id"]]


def test_commands_without_spaces_plan_their_predictions(capsys, tmp_path):
    assert [p["model_calls"] for p in plans(capsys, "evaluate", "--model", "bow-rt", "--sample", "3")] == [1] * 3
    out = tmp_path / "zeroe"
    zeroe = plans(capsys, "zeroe", "--model", "bow-rt", "--sample", "2", "--attack", "keyboard", "--out", str(out))
    assert [(p["model_calls"], p["omega_r"]) for p in zeroe] == [(1 + 3, None)] * 2 and not out.exists()
