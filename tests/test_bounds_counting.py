"""Exact counting with bounds: boxes that bounds prove all-robust or all-adversarial count whole,
the rest is enumerated; the count equals brute force (cnn-rt, synonym space of demo:test
sentences, either label as gold so that whole boxes leave it too), and `estimate --method exact`
reaches spaces beyond its enumeration limit."""

import csv
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robustcount.cli import main
from robustcount.counting.bound_count import count_with_bounds
from robustcount.data import load_demo
from robustcount.goal import evaluate_all
from robustcount.models.engine import QueryEngine
from robustcount.spaces.build import build_space

EXAMPLES = load_demo("test")[:12]
CONFIDENT = EXAMPLES[7]  # cnn-rt keeps its label on all 1,033 points of Omega_4, most of them in whole boxes


def _brute_force(engine, space, gold, radius) -> int:
    return int(evaluate_all(engine, space, list(space.points(radius)), gold).kept.sum())


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=st.sampled_from([1, 5, 6, 7, 8, 10, 11]), gold=st.sampled_from([0, 1]), radius=st.integers(1, 3),
       enumerate_below=st.sampled_from([1, 4, 16]))
def test_counts_equal_brute_force(cnn_rt, example, gold, radius, enumerate_below):
    space = build_space(EXAMPLES[example].input, ["synonyms"])
    engine = QueryEngine(cnn_rt)
    counted = count_with_bounds(engine, space, gold, radius, enumerate_below=enumerate_below)
    assert counted.robust == _brute_force(engine, space, gold, radius)
    assert counted.enumerated + counted.by_bounds == counted.size == space.count(radius)


def test_whole_boxes_are_counted_robust_and_adversarial(cnn_rt):
    """The same space with its gold label and with the other: bounds count boxes whole both ways."""
    space = build_space(CONFIDENT.input, ["synonyms"])
    engine = QueryEngine(cnn_rt)
    gold = cnn_rt.labels.index(CONFIDENT.label)
    kept = count_with_bounds(engine, space, gold, 3)
    left = count_with_bounds(engine, space, 1 - gold, 3)
    assert kept.robust_by_bounds > kept.size / 2 and kept.adversarial_by_bounds == 0
    assert left.adversarial_by_bounds > left.size / 2 and left.robust_by_bounds == 0  # all-adversarial boxes
    assert kept.robust == _brute_force(engine, space, gold, 3) == kept.size
    assert left.robust == _brute_force(engine, space, 1 - gold, 3) == 0


def test_estimate_exact_counts_beyond_the_enumeration_limit(capsys, tmp_path):
    data = tmp_path / "one.csv"
    with data.open("w", newline="") as f:
        csv.writer(f).writerows([["text", "label"], [CONFIDENT.input, CONFIDENT.label]])
    common = ["estimate", "--data", str(data), "--method", "exact", "--radius", "4", "--max-points", "200"]
    assert main([*common, "--model", "cnn-rt", "--output", str(tmp_path / "cnn.jsonl")]) == 0
    assert "bounds decided" in capsys.readouterr().out
    (record,) = [json.loads(line) for line in (tmp_path / "cnn.jsonl").read_text().splitlines()[1:]]
    estimate = record["estimate"]
    assert estimate["method"] == "exact" and estimate["size"] == "1033" and estimate["pr"] == 1.0
    assert 1033 - int(estimate["by_bounds"]) <= 200 and record["queries"]["model_calls"] < 300
    assert main([*common, "--model", "bow-rt", "--output", str(tmp_path / "bow.jsonl")]) == 0
    (record,) = [json.loads(line) for line in (tmp_path / "bow.jsonl").read_text().splitlines()[1:]]
    assert record["estimate"] is None and "above the limit of 200" in record["reason"]
