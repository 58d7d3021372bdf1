"""Perturbed copies outside training: `robustcount.augment`, the `augment` command and `perturb -`."""

import csv
import io
import json
import sys

import pytest

from robustcount.augment import AugmentOptions, augment
from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.spaces.build import build_space


@pytest.fixture
def stdin(monkeypatch):
    def give(text: str):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))

    return give


def test_perturb_dash_perturbs_each_line_of_standard_input(capsys, stdin):
    stdin("a gorgeous film\n\nthe worst movie ever made\n")
    assert main(["perturb", "-", "--attack", "keyboard", "--level", "high"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[1] == "" and lines[0] != "a gorgeous film" and lines[0] != "-"
    assert main(["perturb", "the worst movie ever made", "--attack", "keyboard", "--level", "high", "--seed", "2"]) == 0
    assert capsys.readouterr().out.strip() == lines[2]  # line k is seeded seed + k


def test_the_augment_command_writes_uniform_space_points_of_standard_input(capsys, stdin):
    stdin("a gorgeous film\nthe worst movie ever made\n")
    assert main(["augment", "--radius", "2", "--copies", "3"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["origin"] for r in rows] == ["0"] * 3 + ["1"] * 3 and all(r["label"] == "" for r in rows)
    points = {space.apply(p) for space in [build_space("a gorgeous film", ["synonyms"])] for p in space.points(2)}
    assert {r["text"] for r in rows[:3]} <= points - {"a gorgeous film"}


def test_the_augment_command_keeps_a_files_ids_and_labels(capsys, tmp_path):
    data = tmp_path / "mine.jsonl"
    data.write_text('{"id": "a", "text": "A dull, lifeless film.", "label": "bad"}\n'
                    '{"id": "b", "text": "A warm and witty story.", "label": "good"}\n')
    out = tmp_path / "copies.jsonl"
    argv = ["augment", "--data", str(data), "--id-column", "id", "--method", "zeroe", "--attacker", "truncate",
            "--copies", "2", "--format", "jsonl", "--out", str(out)]
    assert main(argv) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["origin"], r["label"]) for r in rows] == [("a", "bad")] * 2 + [("b", "good")] * 2
    first = out.read_text()
    assert main([*argv, "--overwrite"]) == 0 and out.read_text() == first  # deterministic for the seed


def test_the_python_api_takes_a_space_or_an_attack():
    copies = augment(["a gorgeous film"], space=["synonyms"], radius=1, copies=2, seed=3)
    assert [c.origin for c in copies] == [0, 0] and all(c.example.input != "a gorgeous film" for c in copies)
    assert copies == augment(["a gorgeous film"], space=["synonyms"], radius=1, copies=2, seed=3)
    with pytest.raises(RobustcountError, match="needs a model and each text's label"):
        augment(["a gorgeous film"], method="textfooler")
    with pytest.raises(RobustcountError, match="unknown augmentation"):
        augment(["a gorgeous film"], method="nonsense")
    found = augment(["a gorgeous film", "a dull film"], labels=["positive", "negative"], method="pdp",
                    model="bow-rt")
    assert all(c.example.label == ["positive", "negative"][c.origin] for c in found)


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("text,label\na wonderful film,positive\na dull mess,negative\n")
    return tmp_path


def refused(capsys, argv) -> str:
    capsys.readouterr()
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("robustcount: error: "), err
    return err


def test_augment_refuses_to_write_over_its_own_data_or_a_run_file_without_overwrite(capsys, data):
    original = (data / "d.csv").read_bytes()
    err = refused(capsys, ["augment", "--data", "d.csv", "--out", "d.csv"])
    assert "d.csv exists: pass --overwrite" in err and (data / "d.csv").read_bytes() == original
    assert main(["certify", "--model", "bow-rt", "--data", "d.csv", "--radius", "1", "--output", "run.jsonl"]) == 0
    run = (data / "run.jsonl").read_bytes()
    for fmt in ("csv", "jsonl"):
        refused(capsys, ["augment", "--data", "d.csv", "--format", fmt, "--out", "run.jsonl"])
    assert (data / "run.jsonl").read_bytes() == run and not list(data.glob(".*.new"))
    assert main(["augment", "--data", "d.csv", "--out", "d.csv", "--overwrite"]) == 0  # asked for: replaced
    rows = list(csv.DictReader(io.StringIO((data / "d.csv").read_text())))
    assert [r["origin"] for r in rows] == ["0", "1"] and not list(data.glob(".*.new"))


def test_augment_checks_its_out_path_before_any_work(capsys, data, monkeypatch):
    import robustcount.cli.augment as command

    def no_work(*args, **kwargs):
        raise AssertionError("the copies were made before --out was checked")

    monkeypatch.setattr(command, "augment", no_work)
    (data / "a-file").write_text("a file, not a directory\n")
    assert "cannot write a-file/copies.csv" in refused(capsys, ["augment", "--data", "d.csv", "--out",
                                                                "a-file/copies.csv"])
    assert "d.csv exists" in refused(capsys, ["augment", "--data", "d.csv", "--out", "d.csv"])


def test_a_failed_augment_leaves_an_existing_out_file_whole(capsys, data, monkeypatch):
    import robustcount.cli.augment as command

    (data / "old.csv").write_text("my own copies\n")

    def interrupted(rows, output_format):
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "formatted", interrupted)
    capsys.readouterr()
    assert main(["augment", "--data", "d.csv", "--out", "old.csv", "--overwrite"]) == 130
    assert (data / "old.csv").read_text() == "my own copies\n" and not list(data.glob(".*.new"))


@pytest.mark.parametrize("given, refused", [({"radius": 0}, "radius must be at least 1"),
                                            ({"copies": 0}, "copies must be at least 1"),
                                            ({"attackers": ("nonsense",)}, "unknown attackers 'nonsense'"),
                                            ({"levels": ("extreme",)}, "unknown levels 'extreme'")])
def test_augment_options_refuse_what_the_command_refuses(given, refused):
    """The `augment` command's options are one declared dataclass: built from Python, it refuses
    the values its command line refuses, in one line."""
    with pytest.raises(RobustcountError, match=refused):
        AugmentOptions(**given)
