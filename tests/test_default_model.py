"""End-to-end: the default model reproduces the accuracy written in its card (and the README)."""

import json

import pytest

from robustcount.cli import main
from robustcount.models.families.minilm_head import HEAD_CARD


@pytest.mark.slow
def test_evaluate_reproduces_the_documented_accuracy(capsys):
    assert main(["evaluate", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    card = json.loads(HEAD_CARD.read_text())
    assert summary["examples"] == card["test_examples"] == 1975
    assert round(summary["accuracy"], 4) == card["test_accuracy"]
