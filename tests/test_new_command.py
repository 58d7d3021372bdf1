"""A dataset command added in one module (here, this test) works everywhere: the CLI offers it
with its options, runs write and resume it, summaries and reports show it. The command below is
the worked example of docs/architecture.md."""

import json
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path

import pytest

from robustcount.cli import main
from robustcount.options import option, options_dataclass
from robustcount.runs import read_run
from robustcount.runs.command import Command
from robustcount.runs.registry import COMMANDS
from robustcount.runs.report import Section
from robustcount.text import tokenize


@options_dataclass
class LengthOptions:
    long: int = field(default=8, metadata=option("A text with at least this many words is long.", minimum=1))


class Length(Command, name="length", options=LengthOptions, space=False):
    """Accuracy on short and on long texts."""

    def task(self, worker, spec, examples) -> Iterator[dict]:
        engine = worker.engine
        for example, predicted in zip(examples, engine.predict([e.input for e in examples])):
            words = len(tokenize(example.input).words)
            yield {"id": example.id, "words": words, "long": words >= spec.options.long,
                   "correct": engine.labels[int(predicted)] == example.label}

    def summarise(self, run) -> dict:
        groups = {kind: [r["correct"] for r in run.records if (r["words"] >= run.options.long) == (kind == "long")]
                  for kind in ("short", "long")}
        return {"accuracy": {kind: sum(v) / len(v) if v else None for kind, v in groups.items()},
                "texts": {kind: len(v) for kind, v in groups.items()}}

    def table(self, summary):
        return ["texts", "examples", "accuracy"], [[k, summary["texts"][k], summary["accuracy"][k]]
                                                    for k in ("short", "long")]

    def sections(self, run, summary):
        return [Section("Lengths", tables=[("Words", ["id", "words"], [[r["id"], r["words"]] for r in run.records])])]


@pytest.fixture(autouse=True)
def only_here():
    yield
    COMMANDS.pop("length", None)


def test_a_command_declared_in_one_module_runs_resumes_and_reports(capsys, tmp_path):
    out = tmp_path / "length.jsonl"
    args = ["length", "--model", "bow-rt", "--sample", "12", "--long", "10", "--output", str(out)]
    assert main([*args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    records = read_run(out).records
    assert read_run(out).header["options"] == {"long": 10}
    assert summary["texts"] == {"short": sum(r["words"] < 10 for r in records),
                                "long": sum(r["words"] >= 10 for r in records)}
    assert main([*args, "--resume"]) == 0  # nothing left to do
    assert len(read_run(out).records) == 12
    assert main(["report", str(out)]) == 0
    assert "<caption>Words</caption>" in (tmp_path / "length-report" / "report.html").read_text()
    assert main(["length", "--long", "0"]) == 2  # its options are checked like any other
    assert "--long" in capsys.readouterr().err


def test_the_architecture_page_shows_exactly_this_command():
    page = (Path(__file__).parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    shown = page.split("### A dataset command", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert shown in Path(__file__).read_text(encoding="utf-8")
