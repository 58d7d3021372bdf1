import json

from robustcount.cli import main
from robustcount.runs import read_run
from robustcount.seeding import derive_seed


def test_estimate_reports_estimates_with_their_guarantee(capsys, tmp_path):
    out = tmp_path / "pr.jsonl"
    assert main(["estimate", "--model", "bow-rt", "--sample", "6", "--eps", "0.1", "--delta", "0.1",
                 "--distance-samples", "40", "--output", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    run = read_run(out)
    records = run.records
    assert summary["examples"] == len(records) == 6 and run.header["seed"] == 0
    for r in records:
        if r["correct"]:
            e = r["estimate"]
            assert e["low"] <= e["pr"] <= e["high"] and (e["high"] - e["low"]) / 2 <= 0.1 + 1e-12
            if e["method"] == "adaptive":
                assert e["eps"] == 0.1 and e["delta"] == 0.1 and abs(e["pr"] - e["robust"] / e["samples"]) < 1e-12
            else:  # a space no larger than the samples is counted
                assert e["method"] == "exact" and str(e["samples"]) == e["size"]
            assert r["example_seed"] == derive_seed(0, r["id"])
            distances = [s["distance"] for s in r["by_distance"]]
            assert distances[:1] in ([], [1]) and distances == sorted(set(distances))
            assert all(s["low"] <= s["pr"] <= s["high"] for s in r["by_distance"])
            assert sum(s["samples"] for s in r["by_distance"]) <= 40  # the budget in all
    assert set(summary["by_distance"]) and all(0 <= v["mean_pr"] <= 1 for v in summary["by_distance"].values())


def test_estimate_exact_method(capsys):
    assert main(["estimate", "--model", "bow-rt", "--sample", "3", "--radius", "1", "--method", "exact",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "exact"


def test_estimate_measures_pr_by_distance_only_when_asked(capsys):
    assert main(["estimate", "--model", "bow-rt", "--sample", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_distance"] == {}


def test_compare_pairs_two_models_and_draws_a_violin_plot(capsys, tmp_path):
    plot, out = tmp_path / "violin.png", tmp_path / "compare.jsonl"
    assert main(["compare", "--model", "bow-rt", "--model", "tfidf-rt", "--sample", "8", "--eps", "0.1",
                 "--delta", "0.1", "--plot", str(plot), "--output", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary["models_summary"]) == {"bow-rt", "tfidf-rt"}
    assert summary["paired_examples"] >= 1
    assert plot.stat().st_size > 1000
    for record in read_run(out).records:  # compare runs only what it reports: no PR by distance
        for model in record["models"]:
            assert "by_distance" not in model
            if model["estimate"]:
                assert model["queries"]["candidates"] == model["estimate"]["samples"] + 1  # and the clean input
    assert main(["compare", "--model", "bow-rt", "--model", "tfidf-rt", "--distance-samples", "10"]) == 2
    assert "--distance-samples" in capsys.readouterr().err


def test_compare_needs_two_models(capsys):
    assert main(["compare", "--model", "bow-rt"]) == 2
    assert "exactly 2 --model" in capsys.readouterr().err


def test_compare_warns_when_too_few_pairs_for_its_test(capsys, tmp_path):
    args = ["compare", "--model", "bow-rt", "--model", "tfidf-rt", "--eps", "0.1", "--delta", "0.1",
            "--plot", str(tmp_path / "violin.png"), "--json"]
    assert main([*args, "--sample", "3"]) == 0
    captured = capsys.readouterr()
    paired = json.loads(captured.out)["paired_examples"]
    warnings = [line for line in captured.err.splitlines() if "warning" in line]
    assert paired < 6 and warnings == [f"robustcount: warning: only {paired} paired examples: the Wilcoxon signed-rank "
                                       "test needs at least 6 to reach p < 0.05 at all, so its p-value says little; "
                                       "compare more examples"]
