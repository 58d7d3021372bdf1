import json

import numpy as np

from robustcount.cli import main
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.runs import read_run
from robustcount.text import tokenize
from tests.test_cli_certify import summary_and_records

FAR = {"w0": "n0", "w1": "n1", "w2": "n2", "w3": "n3"}


def far_adversary_model():
    """Positive on "w0 w1 w2 w3"; each of n0..n3 lowers the score a little, and together they
    lower it far more (1 - 0.05 j - 0.1 j (j - 1) with j of them): robust at distances 1, 2 and 3,
    one adversary at distance 4, which PDP's additivity bound from the level-1 drops gives up on."""

    def classify(batch):
        out = []
        for text in batch:
            j = sum(word in FAR.values() for word in tokenize(text).words)
            p = 1 / (1 + np.exp(-4 * (1 - 0.05 * j - 0.1 * j * (j - 1))))
            out.append([1 - p, p])
        return np.array(out)

    return FunctionClassifier(classify, ["negative", "positive"], name="far-adversary")


def test_one_far_adversary_behind_three_robust_levels_is_bracketed_exactly(capsys, tmp_path):
    data, table, out = tmp_path / "d.csv", tmp_path / "table.json", tmp_path / "radius.jsonl"
    data.write_text("text,label\nw0 w1 w2 w3,positive\n")
    table.write_text(json.dumps({word: [substitute] for word, substitute in FAR.items()}))
    assert main(["radius", "--model", "py:tests.test_radius:far_adversary_model", "--data", str(data),
                 "--source", f"table:{table}", "--radius", "3", "--output", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["exact"] == 1 and summary["exact_share"] == 1.0
    (record,) = read_run(out).records
    assert (record["lower"], record["upper"], record["kind"]) == (3, 3, "exact")


def test_the_provers_witness_closes_the_bracket(capsys, tmp_path):
    out = tmp_path / "radius.jsonl"
    summary, records = summary_and_records(capsys, out, "radius", "--model", "bow-rt", "--sample", "12", "--radius", "2")
    assert summary["exact"] == sum(r["kind"] == "exact" for r in records) > 0
    for r in records:
        if r["kind"] == "misclassified":
            continue
        if r["upper"] is not None:
            assert r["lower"] <= r["upper"]
        if r["upper_from"] == "prover":  # the proof at lower + 1 found an adversary there
            assert r["upper"] == r["lower"] and r["kind"] == "exact"
        assert (r["kind"] == "exact") == (r["whole_space"] or r["lower"] == r["upper"])
    assert summary["model_calls_per_exact"] == summary["queries"]["model_calls"] / summary["exact"]
