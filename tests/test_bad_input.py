"""Every command against bad input, as a careless user would give it: one line on standard error,
a non-zero exit status, no traceback, and every file that was there before left byte for byte."""

import os
from pathlib import Path

import pytest

from robustcount.cli import main

MODEL = ["--model", "bow-rt"]
DATASET_COMMANDS = {
    "evaluate": ["evaluate", *MODEL],
    "zeroe": ["zeroe", *MODEL, "--attack", "truncate"],
    "attack": ["attack", *MODEL, "--source", "truncate"],
    "certify": ["certify", *MODEL, "--source", "truncate", "--radius", "1"],
    "radius": ["radius", *MODEL, "--source", "truncate", "--radius", "1"],
    "estimate": ["estimate", *MODEL, "--source", "truncate", "--eps", "0.2", "--delta", "0.2"],
    "compare": ["compare", "--model", "bow-rt", "--model", "tfidf-rt", "--source", "truncate", "--eps", "0.2",
                "--delta", "0.2"],
}


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """Bad fixtures, and a note and an old run that must survive whatever happens."""
    monkeypatch.chdir(tmp_path)
    files = {
        "empty.csv": b"",
        "header-only.csv": b"text,label\n",
        "blank-text.csv": b"text,label\n   ,positive\na fine film,positive\n",
        "bad-utf8.csv": b"text,label\na fine \xff\xfe film,positive\n",
        "no-label-column.csv": b"review,stars\na fine film,5\n",
        "unknown-labels.csv": b"text,label\na fine film,excellent\n",
        "not-jsonl.jsonl": b'{"text": "a fine film", "label": "positive"}\nthis is no JSON\n',
        "table.json": b'{"film": ["flim"]}\n',
        "notes.json": b'{"my": "notes, not a run"}\n',
        "notes.txt": b"my notes, not a run\n",
        "a-file": b"a file, not a directory\n",
        "bad-utf8-run.jsonl": b'{"record": "run"}\n\xff\xfe\n',
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    for name, card in {"model-no-labels": '{"format": "robustcount-model/1", "architecture": "cnn-rt"}',
                       "model-bad-json": "{", "model-no-weights": '{"format": "robustcount-model/1", "architecture": '
                       '"lstm-rt", "labels": ["negative", "positive"], "options": {}}'}.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "robustcount-model.json").write_text(card)
    (tmp_path / "good.csv").write_text("text,label\na wonderful film,positive\na dull mess,negative\n")
    (tmp_path / "pairs.csv").write_text("premise,text,label\nit ran,a wonderful film,positive\nit ran,a dull mess,negative\n")
    assert main(["evaluate", *MODEL, "--data", "good.csv", "--output", "old-run.jsonl"]) == 0
    return tmp_path


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def check_fails_cleanly(capsys, folder, argv, status=None):
    before = snapshot(folder)
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0 if status is None else code == status, (argv, code, err)
    assert err.count("\n") == 1 and err.startswith("robustcount: "), (argv, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    after = snapshot(folder)
    assert {k: v for k, v in after.items() if k in before} == before, f"{argv} changed a file"
    assert not [k for k in after if k not in before and k.endswith(".new")], "a staging file was left"
    return err


BAD_DATA = {
    "empty.csv": "empty",
    "header-only.csv": "no rows",
    "blank-text.csv": "empty text",
    "bad-utf8.csv": "not valid utf-8",
    "no-label-column.csv": "no text column",
    "unknown-labels.csv": "not one of the model's labels",
    "not-jsonl.jsonl": "not valid json",
    "missing.csv": "no such file",
}


@pytest.mark.parametrize("command", list(DATASET_COMMANDS))
@pytest.mark.parametrize("data", list(BAD_DATA))
def test_dataset_commands_refuse_bad_data_and_keep_the_old_run(capsys, folder, command, data):
    argv = [*DATASET_COMMANDS[command], "--data", data, "--output", "old-run.jsonl", "--overwrite"]
    if command == "zeroe":
        argv += ["--out", "zeroe-out"]
    err = check_fails_cleanly(capsys, folder, argv)
    assert BAD_DATA[data] in err.lower()


@pytest.mark.parametrize("command", list(DATASET_COMMANDS))
@pytest.mark.parametrize("output", ["notes.json", "notes.txt"])
def test_resume_never_writes_over_a_file_that_is_no_run(capsys, folder, command, output):
    err = check_fails_cleanly(capsys, folder, [*DATASET_COMMANDS[command], "--data", "good.csv", "--output", output,
                                               "--resume"])
    assert "not a robustcount run file" in err


@pytest.mark.parametrize("command", ["certify", "attack", "estimate"])
def test_wrong_format_tables_and_unwritable_outputs(capsys, folder, command):
    base = [arg for arg in DATASET_COMMANDS[command] if arg != "truncate" and arg != "--source"]
    for source in ("natural:table.json", "table:notes.txt", "table:missing.json", "thesaurus"):
        check_fails_cleanly(capsys, folder, [*base, "--data", "good.csv", "--source", source])
    check_fails_cleanly(capsys, folder, [*DATASET_COMMANDS[command], "--data", "good.csv",
                                         "--output", "a-file/run.jsonl"])


@pytest.mark.parametrize("argv", [
    ["certify", "--time-limit", "-1"], ["attack", "--time-limit", "-5"], ["estimate", "--radius", "1e30"],
    ["estimate", "--eps", "0"], ["estimate", "--delta", "1"], ["attack", "--beam", "0"], ["zeroe", "--attack", "rot13"],
    ["evaluate", "--sample", "0"], ["evaluate", "--resume"], ["compare", "--model", "bow-rt"],
    ["evaluate", "--workers", "0"], ["certify", "--radius", "0"],
])
def test_nonsense_options_are_refused_before_any_work(capsys, folder, argv):
    check_fails_cleanly(capsys, folder, [*argv, "--data", "good.csv"])


@pytest.mark.parametrize("argv", [
    ["predict", *MODEL, ""], ["predict", *MODEL, "   "], ["space", "  "], ["perturb", "", "--attack", "truncate"],
    ["predict", *MODEL, "a \udcff text"], ["verify", "notes.json"], ["verify", "bad-utf8-run.jsonl"],
    ["verify", "empty.csv"], ["report", "notes.txt"], ["report", "bad-utf8-run.jsonl"], ["report", "missing.jsonl"],
    ["source-quality", "--data", "bad-utf8.csv"], ["source-quality", "--source", "natural:table.json"],
    ["save-model", "bow-rt", "out"], ["save-model", "minilm-rt-ft", "a-file"], ["models", "--bogus"],
    ["predict", "--model", "model-no-labels", "a film"], ["predict", "--model", "model-bad-json", "a film"],
    ["predict", "--model", "model-no-weights", "a film"],
])
def test_other_commands_refuse_bad_input(capsys, folder, argv):
    check_fails_cleanly(capsys, folder, argv)


def test_invalid_utf8_on_standard_input_names_the_byte(capsys, folder, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a fine film\n\xff bad\n")))
    err = check_fails_cleanly(capsys, folder, ["predict", *MODEL, "-"])
    assert "standard input" in err and "offset 12" in err


def test_a_very_long_text_runs_or_is_refused_cleanly(capsys, folder):
    (folder / "long.csv").write_text("text,label\n" + " ".join(["good"] * 10_000) + ",positive\n")
    before = snapshot(folder)
    limits = {"evaluate": [], "certify": ["--max-points", "1000"], "estimate": ["--radius", "2"]}
    for command, limit in limits.items():
        code = main([*DATASET_COMMANDS[command], *limit, "--data", "long.csv", "--json"])
        err = capsys.readouterr().err
        assert code == 0 or (code != 0 and err.count("\n") == 1), err
        assert "Traceback" not in err and "internal error" not in err
    assert snapshot(folder) == {**before, **{k: v for k, v in snapshot(folder).items() if k not in before}}


def test_overwrite_keeps_the_old_run_until_the_new_one_has_a_record(capsys, folder):
    old = (folder / "old-run.jsonl").read_bytes()
    check_fails_cleanly(capsys, folder, ["evaluate", *MODEL, "--data", "unknown-labels.csv", "--output",
                                         "old-run.jsonl", "--overwrite"])
    assert (folder / "old-run.jsonl").read_bytes() == old
    assert main(["evaluate", *MODEL, "--data", "good.csv", "--sample", "1", "--output", "old-run.jsonl",
                 "--overwrite"]) == 0
    assert (folder / "old-run.jsonl").read_bytes() != old
    assert not list(folder.glob(".*.new")) and os.path.exists(folder / "old-run.timings.jsonl")


HARDEN = ["harden", "--family", "word-cnn", "--epochs", "1", "--no-evaluate"]


@pytest.mark.parametrize("data", list(BAD_DATA))
def test_harden_refuses_bad_data_before_writing_anything(capsys, folder, data):
    err = check_fails_cleanly(capsys, folder, [*HARDEN, "--data", data, "--out", "hardened"])
    assert BAD_DATA[data] in err.lower() and not (folder / "hardened").exists()


@pytest.mark.parametrize("argv", [
    ["--out", "a-file"], ["--out", "."], ["--out", "nothing-here", "--resume"], ["--out", "x", "--copies", "0"],
    ["--out", "x", "--attacker", "rot13"], ["--out", "x", "--epochs", "0"], ["--out", "x", "--threads", "0"],
    ["--out", "x", "--augment", "everything"], ["--out", "x", "--family", "vader"],
    ["--out", "x", "--family", "word-gru"], ["--out", "x", "--family", "word-cnn", "--model", "cnn-rt"],
    ["--out", "x", "--data", "pairs.csv", "--premise-column", "premise"],
])
def test_harden_refuses_nonsense_and_occupied_directories(capsys, folder, argv):
    check_fails_cleanly(capsys, folder, [*HARDEN, "--data", "good.csv", *argv])
    assert not (folder / "x").exists()


def test_harden_names_the_family_for_the_earlier_model_spelling(capsys, folder):
    err = check_fails_cleanly(capsys, folder, ["harden", "--model", "lstm-rt", "--out", "x"])
    assert "--family word-lstm" in err and not (folder / "x").exists()
