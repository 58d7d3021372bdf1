"""A candidate source added as one module works everywhere: the worked example of
docs/architecture.md ("A candidate source"), saved as a module of `robustcount.spaces`, is found
by the registry, offered by `space` and `certify`, and rebuilt by `verify` from the definition its
certificates record."""

import json
import re
import sys
from pathlib import Path

import pytest

import robustcount.spaces
from robustcount.cli import main
from robustcount.runs import read_run
from robustcount.spaces import sources
from robustcount.spaces.build import DEFAULT_SOURCE

ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"


def worked_example() -> str:
    """The Python block of docs/architecture.md's "A candidate source" section."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split("### A candidate source", 1)[1].split("\n### ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    return block


@pytest.fixture
def lower_case_module(tmp_path, monkeypatch):
    """The worked example saved as robustcount/spaces/lower_case.py (in a folder of the package's
    path, so the package itself is left untouched), and the registry to discover it."""
    folder = tmp_path / "spaces"
    folder.mkdir()
    (folder / "lower_case.py").write_text(worked_example(), encoding="utf-8")
    monkeypatch.setattr(robustcount.spaces, "__path__", [*robustcount.spaces.__path__, str(folder)])
    monkeypatch.setattr(sources, "_discovered", False)
    yield
    sources.SOURCES.pop("lower-case", None)
    sys.modules.pop("robustcount.spaces.lower_case", None)


def test_a_source_added_as_one_module_builds_spaces_certifies_and_verifies(capsys, tmp_path, lower_case_module):
    assert "lower-case" in sources.registered()
    assert "lower-case (each word in lower case)" in sources.source_help(DEFAULT_SOURCE)

    assert main(["space", "The Film was GOOD", "--source", "lower-case", "--json"]) == 0
    space = json.loads(capsys.readouterr().out)
    assert [p["candidates"] for p in space["positions"]] == [["The", "the"], ["Film", "film"], ["GOOD", "good"]]
    assert space["definition"]["sources"] == [{"source": "lower-case"}] and space["size"] == "4"

    data = tmp_path / "texts.csv"
    data.write_text("text,label\nA Wonderful Film,positive\nA Dull And Tiresome Film,negative\nno capitals,positive\n")
    out = tmp_path / "certify.jsonl"
    assert main(["certify", "--model", "bow-rt", "--data", str(data), "--source", "lower-case", "--source", "truncate",
                 "--radius", "2", "--output", str(out)]) == 0
    run = read_run(out)
    assert run.header["space"]["sources"] == [{"source": "lower-case"}, {"source": "truncate"}]
    certificates = [c for r in run.records for c in r.get("certificates", [])]
    assert len(certificates) == 3
    assert all(c["space"]["definition"]["sources"][0] == {"source": "lower-case"} for c in certificates)
    assert ["word", 0, ["A", "a"]] in certificates[0]["space"]["positions"]
    capsys.readouterr()
    assert main(["verify", str(out), "--model", "bow-rt"]) == 0  # rebuilt from its definition, no file needed

    sources.SOURCES.pop("lower-case")  # an installation without the module cannot check its candidate lists
    assert main(["verify", str(out), "--model", "bow-rt"]) == 1
    assert "{'source': 'lower-case'} cannot be rebuilt here" in capsys.readouterr().out
