"""What `attack` shows as each example finishes: a table row with both texts marked, JSON lines
with --json, TextAttack's CSV with --log-csv; the report's adversary table with labels and
probabilities; `--recipe` and `--method` as one option."""

import csv
import json

from robustcount.cli import main
from robustcount.commands.attack import CSV_COLUMNS, AttackOptions, adversary_view
from robustcount.data import load_demo
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.spec import ModelSpec
from robustcount.runs.files import read_run
from robustcount.runs.report import report_sections
from robustcount.runs.runner import execute
from robustcount.runs.spec import RunSpec
from robustcount.runs.summaries import summarise_run, summary_table
from robustcount.spaces.build import SpaceSpec

SEEN: list[str] = []
"""Every text `watched_model` was asked about, in order."""


def watched_model():
    """A keyword model (positive with "good") that notes every text it is asked about in SEEN."""
    def classify(batch):
        SEEN.extend(batch)
        return [[0.2, 0.8] if "good" in t else [0.7, 0.3] for t in batch]

    return FunctionClassifier(classify, ["negative", "positive"], name="watched")


ATTACK = ["attack", "--recipe", "pdp", "--model", "bow-rt", "--sample", "8", "--seed", "1"]


def test_each_record_reaches_the_output_before_the_next_example_starts():
    examples = [e for e in load_demo("test") if e.label == "positive" and "good" in e.input.split()][:3]
    SEEN.clear()
    arrived = []  # (id, how many texts the model had been asked about then)
    spec = RunSpec("attack", (ModelSpec("py:tests.test_attack_output:watched_model"),), space=SpaceSpec(),
                   options=AttackOptions(method="pdp"))
    execute(spec, examples, {"spec": "three"}, progress=False,
            on_record=lambda record, resumed: arrived.append((record["id"], len(SEEN))))
    assert [i for i, _ in arrived] == [e.id for e in examples]
    (_, first), (_, second), _ = arrived
    between = SEEN[first:second]  # what the model was asked between the first two records
    assert examples[1].input in between and examples[2].input not in between


def test_a_terminal_gets_a_row_per_example_with_both_texts_marked(capsys, tmp_path):
    out = tmp_path / "run.jsonl"
    assert main([*ATTACK, "--output", str(out)]) == 0
    lines = capsys.readouterr().out.split("\nexamples ")[0].splitlines()  # what comes before the summary table
    records = read_run(out).records
    assert lines[0].split()[:5] == ["#", "id", "result", "gold", "(p)"]
    rows = {line.split()[1]: line for line in lines[1:] if line[:1].isdigit()}
    assert list(rows) == [r["id"] for r in records]
    broken = [r for r in records if r["status"] == "success"]
    assert broken and any(r["status"] == "skipped" for r in records)
    for r in broken:
        row = rows[r["id"]].split()
        assert row[2] == "Successful" and row[3] == r["gold"]
        assert row[4] == f"({r['original_probs'][r['gold']]:.3f})" and row[6] != r["gold"]
        assert int(row[-1]) == r["queries"]["model_calls"] + r["queries"]["gradient_calls"]
        assert int(row[-2]) == r["distance"]
        at = lines.index(rows[r["id"]])
        assert lines[at + 1].startswith("      - ") and lines[at + 2].startswith("      + ")
        assert lines[at + 2].count("[[") == r["distance"]
        assert lines[at + 2].replace("[[", "").replace("]]", "").strip().removeprefix("+ ") == r["adversarial"]


def test_json_lines_and_textattacks_csv_carry_the_same_examples(capsys, tmp_path):
    out, log = tmp_path / "run.jsonl", tmp_path / "log.csv"
    assert main([*ATTACK, "--output", str(out), "--log-csv", str(log), "--json"]) == 0
    *examples, summary = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    records = read_run(out).records
    assert summary["examples"] == len(examples) == len(records) == 8
    with log.open(newline="") as f:
        reader = csv.reader(f)
        assert tuple(next(reader)) == CSV_COLUMNS
    rows = list(csv.DictReader(log.open(newline="")))
    types = {"success": "Successful", "skipped": "Skipped", "failed": "Failed"}
    labels = ["negative", "positive"]
    for view, row, r in zip(examples, rows, records):
        assert view["id"] == r["id"] and view["result"] == row["result_type"] == types[r["status"]]
        assert int(row["num_queries"]) == view["queries"] == r["queries"]["model_calls"] + r["queries"]["gradient_calls"]
        assert int(row["ground_truth_output"]) == labels.index(r["gold"])
        assert float(row["original_score"]) == 1 - r["original_probs"][r["gold"]]
        if r["status"] == "success":
            assert len(view["substitutions"]) == r["distance"] == row["perturbed_text"].count("[[")
            assert int(row["perturbed_output"]) != labels.index(r["gold"]) or \
                r["adversarial_probs"][r["gold"]] <= 0.5
            assert view["now"]["probability"] == r["adversarial_probs"][view["now"]["label"]]
        else:
            assert row["perturbed_text"] == row["original_text"] == r["input"] and view["substitutions"] == []


def test_the_report_shows_labels_and_probabilities_and_method_stays_the_recipe(capsys, tmp_path):
    out = tmp_path / "run.jsonl"
    assert main([*[a if a != "--recipe" else "--method" for a in ATTACK], "--output", str(out)]) == 0
    run = read_run(out)
    assert run.header["options"]["method"] == "pdp"
    (section,) = [s for s in report_sections(run) if s.title.startswith("Attack")]
    title, headers, rows = section.tables[1]
    assert headers[:4] == ["id", "substitutions", "gold (p)", "now (p)"]
    broken = {r["id"]: r for r in run.records if r["status"] == "success"}
    for row in rows:
        r = broken[row[0]]
        assert row[2] == f"{r['gold']} ({r['original_probs'][r['gold']]:.3f})"
        assert row[3].split()[0] != r["gold"]


def test_an_adversary_recorded_without_its_probabilities_shows_its_label_as_not_recorded():
    record = {"index": 0, "id": "0", "status": "success", "gold": "negative", "input": "a dull film",
              "adversarial": "a boring film", "original_probs": {"negative": 0.9, "positive": 0.1},
              "queries": {"model_calls": 3}}
    view = adversary_view(record)
    assert view["now"] == {"label": "not recorded", "probability": None}  # never the gold label
    assert view["gold"] == {"label": "negative", "probability": 0.9}


def test_a_time_limited_attack_reads_time_limit_in_its_record_the_table_and_the_report(capsys, tmp_path):
    # Before, an attack stopped by its time limit was recorded, counted and shown as "budget exhausted".
    out = tmp_path / "run.jsonl"
    assert main(["attack", "--recipe", "pdp", "--model", "bow-rt", "--sample", "3", "--seed", "2", "--time-limit",
                 "0.000001", "--output", str(out)]) == 0
    run = read_run(out)
    stopped = [r for r in run.records if r["status"] == "undecided"]
    assert stopped and all(r["limit"] == "time limit" and r["reason"].startswith("time limit of 1e-06 s")
                           for r in stopped)
    headers, (row,) = summary_table(summarise_run(run))
    assert row[headers.index("undecided")] == len(stopped)
    assert row[headers.index("budget/time limit/refused")] == f"0/{len(stopped)}/0"
    (outcomes,) = [table for section in report_sections(run) for table in section.tables if table[0] == "Outcomes"]
    assert ["time limit", len(stopped)] in [list(r) for r in outcomes[2]]
    assert "budget exhausted" not in json.dumps(outcomes)
