"""Every summary and report says how many examples were decided and how many not, never shows a
figure over a silently smaller set, and never prints NaN: a mean or share of nothing reads n/a
with its reason, counts are integers, and count histograms are ticked at whole numbers."""

import json
import sys

import pytest

from robustcount.cli import main
from robustcount.runs.figures import histogram_figure

SLOW_ON_LONG_TEXTS = '''
import time
from robustcount.models import FunctionClassifier

def _score(batch):
    if any(len(str(text).split()) > 20 for text in batch):
        time.sleep(0.3)  # past any time limit below: the long text ends undecided
    return [[0.2, 0.8] for _ in batch]

def make():
    return FunctionClassifier(_score, ["negative", "positive"])
'''
LONG = " ".join(["good"] * 30)


def strict_json(text: str):
    """`text` as JSON, refusing NaN and infinities (which Python's json reads, but JSON has not)."""
    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "slow", raising=False)
    (tmp_path / "slow.py").write_text(SLOW_ON_LONG_TEXTS)
    (tmp_path / "mixed.csv").write_text(f"text,label\n{LONG},positive\na wonderful film,positive\na fine film,positive\n")
    (tmp_path / "long.csv").write_text(f"text,label\n{LONG},positive\n")
    return tmp_path


ESTIMATE = ["estimate", "--model", "py:slow:make", "--source", "truncate", "--time-limit", "0.1"]


def test_an_undecided_estimate_is_counted_in_the_summary_the_json_and_the_report(capsys, folder):
    assert main([*ESTIMATE, "--data", "mixed.csv", "--output", "run.jsonl"]) == 0
    out = capsys.readouterr().out
    header, rule, row = out.splitlines()[:3]
    assert header.split()[:3] == ["examples", "misclassified", "undecided"] and header.endswith("estimated")
    cells = row.split()
    assert (cells[0], cells[2], cells[-1]) == ("3", "1", "2")  # examples, undecided, estimated
    assert "2 examples decided, 1 undecided" in out and "covers the 2 decided only" in out
    assert main(["report", "run.jsonl", "--out", "report"]) == 0
    capsys.readouterr()
    markdown = (folder / "report" / "report.md").read_text()
    assert "3 examples (complete), seed 0: 2 examples decided, 1 undecided" in markdown
    assert main([*ESTIMATE, "--data", "mixed.csv", "--output", "run.jsonl", "--resume", "--json"]) == 0
    summary = strict_json(capsys.readouterr().out)
    assert (summary["decided"], summary["undecided"], summary["estimated"]) == (2, 1, 2)
    assert isinstance(summary["median_samples"], int)


def test_no_estimate_reads_n_a_with_its_reason_and_json_holds_null(capsys, folder):
    assert main([*ESTIMATE, "--data", "long.csv", "--output", "run.jsonl"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower() and out.count("n/a (no estimate)") == 3, out
    assert main([*ESTIMATE, "--data", "long.csv", "--output", "run.jsonl", "--resume", "--json"]) == 0
    summary = strict_json(capsys.readouterr().out)
    assert summary["median"] is None and summary["median_samples"] is None and summary["decided"] == 0


def test_an_attack_that_breaks_nothing_says_so_instead_of_nan(capsys, folder):
    (folder / "good.csv").write_text("text,label\na wonderful film,positive\na dull mess,negative\n")
    assert main(["attack", "--model", "bow-rt", "--source", "truncate", "--data", "good.csv"]) == 0
    out = capsys.readouterr().out
    assert "n/a (no example broken)" in out and "nan" not in out.lower(), out
    assert main(["attack", "--model", "bow-rt", "--source", "truncate", "--data", "good.csv", "--json"]) == 0
    *examples, summary = [strict_json(line) for line in capsys.readouterr().out.splitlines()]  # JSON lines
    assert len(examples) == 2
    assert summary["successes"] == 0 and summary["mean_substitutions"] is None


def test_count_histograms_are_ticked_at_whole_numbers():
    figure = histogram_figure({"adversaries": [1, 1, 2]}, "substitutions", bins=range(1, 4), align="left")
    axes = figure.axes[0]
    assert all(float(tick).is_integer() for tick in axes.get_xticks())
    assert all(float(tick).is_integer() for tick in axes.get_yticks())


def test_robustcount_seed_seeds_hypothesis(pytester):
    pytester.makepyfile('''
        from pathlib import Path
        from hypothesis import given, settings, strategies as st

        @settings(max_examples=3, database=None)
        @given(st.integers(0, 10 ** 9))
        def test_draw(n):
            with Path("draws.txt").open("a") as f:
                f.write(f"{n}\\n")
    ''')

    def draws(seed: int) -> str:
        (pytester.path / "draws.txt").unlink(missing_ok=True)
        pytester.runpytest("--robustcount-seed", str(seed)).assert_outcomes(passed=1)
        return (pytester.path / "draws.txt").read_text()

    assert draws(5) == draws(5) != draws(6)


def test_compare_writes_no_plot_unless_asked(capsys, folder):
    (folder / "compare.png").write_bytes(b"my own picture")
    (folder / "good.csv").write_text("text,label\na wonderful film,positive\na dull mess,negative\n")
    assert main(["compare", "--model", "bow-rt", "--model", "tfidf-rt", "--source", "truncate", "--eps", "0.2",
                 "--delta", "0.2", "--data", "good.csv"]) == 0
    assert "plot: none (give --plot FILE)" in capsys.readouterr().out
    assert (folder / "compare.png").read_bytes() == b"my own picture"


def test_certify_counts_each_radius_over_the_examples_decided_at_it_and_says_so(capsys, tmp_path):
    """An example certified at r = 1 whose r = 2 proof is over --max-points is decided at r = 1 and
    undecided at r = 2: the table and the note count it so (a user's summary printed examples
    certified at r = 1 and r = 2, then "0 examples decided ... every figure covers the 0 decided only")."""
    out = tmp_path / "run.jsonl"
    assert main(["certify", "--model", "bow-rt", "--data", "demo:test", "--first", "12", "--source", "truncate",
                 "--radius", "2", "--max-points", "60", "--output", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    records = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    certified = {r: sum(rec.get("certified_radius", 0) >= r for rec in records) for r in (1, 2)}
    undecided = {r: sum(bool(rec.get("undecided")) and rec["proofs"][-1]["radius"] <= r for rec in records)
                 for r in (1, 2)}
    assert certified[1] and undecided == {1: 0, 2: sum(bool(rec.get("undecided")) for rec in records)} and undecided[2]
    assert printed[0].split() == ["radius", "certified", "not", "certified", "undecided", "share", "of", "the", "decided"]
    for r, row in zip((1, 2), printed[2:4]):
        decided = len(records) - undecided[r]
        assert row.split() == [str(r), str(certified[r]), str(decided - certified[r]), str(undecided[r]),
                               f"{certified[r] / decided:.4f}"]
    assert printed[4].startswith("space: truncate; ") and printed[5] == (f"{len(records) - undecided[2]} examples decided at every radius, {undecided[2]} undecided "
                          "from some radius on (a limit, never a result; listed in the report): the figures at each "
                          f"radius cover the examples decided at it ({len(records)} at r = 1, "
                          f"{len(records) - undecided[2]} at r = 2)")


def test_compare_pairs_the_examples_both_models_estimated_and_shows_the_rest(capsys, folder):
    """The long text is undecided for the slow model only: the paired figures leave it out and
    say so, and each model's row counts its own undecided examples."""
    args = ["compare", "--model", "bow-rt", "--model", "py:slow:make", "--source", "truncate", "--time-limit", "0.1",
            "--eps", "0.2", "--delta", "0.2", "--data", "mixed.csv", "--output", "run.jsonl"]
    assert main(args) == 0
    out = capsys.readouterr().out
    records = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()[1:]]
    undecided = [sum("reason" in r["models"][k] for r in records) for k in (0, 1)]
    pairs = [r for r in records if all(m["estimate"] for m in r["models"])]
    misclassified = len(records) - len(pairs) - sum(any("reason" in m for m in r["models"]) for r in records)
    assert undecided == [0, 1] and pairs
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:4]}
    assert rows["bow-rt"][-1] == "0" and rows["py:slow:make"][-1] == "1"
    assert (f"paired on {len(pairs)} examples: " in out and f"; left out: 1 undecided by either model (0 by bow-rt, "
            f"1 by py:slow:make) and {misclassified} misclassified by either; plot: none" in out)
    assert main([*args, "--resume", "--json"]) == 0
    summary = strict_json(capsys.readouterr().out)
    assert (summary["paired_examples"], summary["undecided_either"], summary["misclassified_either"]) == \
        (len(pairs), 1, misclassified)
    assert summary["undecided_by_model"] == {"bow-rt": 0, "py:slow:make": 1}
