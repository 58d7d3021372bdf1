"""`harden --evaluate`'s comparison of the input and the hardened model: every figure but clean
accuracy over the examples decided for both models, the undecided counted by side."""

import json
import sys

import pytest

from robustcount.data import DataSpec
from robustcount.spaces.build import SpaceSpec
from robustcount.training.evaluation import EvaluationSettings, comparison_table, evaluate_hardening

MODELS = '''
import time
from robustcount.models import FunctionClassifier

def _slow_on_long_texts(batch):
    if any(len(str(text).split()) > 20 for text in batch):
        time.sleep(0.3)  # past the time limit: the long text ends undecided
    return [[0.2, 0.8] for _ in batch]

def slow():
    return FunctionClassifier(_slow_on_long_texts, ["negative", "positive"])

def steady():
    return FunctionClassifier(lambda batch: [[0.2, 0.8] for _ in batch], ["negative", "positive"])
'''
LONG = " ".join(["good"] * 30)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "models_under_test", raising=False)
    (tmp_path / "models_under_test.py").write_text(MODELS)
    (tmp_path / "mixed.csv").write_text(f"text,label\n{LONG},positive\na wonderful film,positive\n"
                                        "a fine film,positive\n")
    return tmp_path


def test_a_time_limit_on_one_side_is_no_gain(folder):
    """The user's shape: the input model ran out of the time limit on an example the hardened one
    decided. The old comparison read that as a gain (certified share 2/3 -> 3/3, after-attack
    accuracy 2/3 -> 3/3); both models answer the same on every example they both decided."""
    data = DataSpec("mixed.csv")
    summary = evaluate_hardening(["py:models_under_test:slow", "py:models_under_test:steady"], data.load(0),
                                 data.header(), folder / "evaluation",
                                 EvaluationSettings(attack="pdp", space=SpaceSpec(sources=("truncate",)),
                                                    time_limit=0.1), progress=False)
    before, after = summary["models"]["input"], summary["models"]["hardened"]
    assert before["clean_accuracy"] == after["clean_accuracy"] == 1.0  # over every example
    for key in ("attack_success", "after_attack_accuracy", "certified_r1", "certified_r2", "pr_above_0.9"):
        assert summary["compared"][key] == {"examples": 2, "undecided_input": 1, "undecided_hardened": 0,
                                            "undecided_either": 1}, key
        assert before[key] == after[key], key
    assert before["certified_r2"] == after["after_attack_accuracy"] == 1.0
    assert json.loads((folder / "evaluation" / "summary.json").read_text())["compared"] == summary["compared"]
    headers, rows = comparison_table(summary)
    assert headers[-2:] == ["compared on", "undecided: input / hardened / either"]
    shown = {row[0]: row for row in rows}
    assert shown["certified at r = 2"][3:] == [0.0, 2, "1 / 0 / 1"]
    assert shown["clean accuracy"][4:] == [3, "-"]
    markdown = (folder / "evaluation" / "report.md").read_text()
    assert "| certified at r = 2 " in markdown and "1 / 0 / 1" in markdown
