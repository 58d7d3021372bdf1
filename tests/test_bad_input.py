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
    ["evaluate", "--workers", "0"], ["certify", "--radius", "0"], ["certify", "--time-limit", "nan"],
    ["attack", "--time-limit", "inf"], ["estimate", "--eps", "nan"], ["estimate", "--radius-share", "-inf"],
])
def test_nonsense_options_are_refused_before_any_work(capsys, folder, argv):
    check_fails_cleanly(capsys, folder, [*argv, "--data", "good.csv"])


@pytest.mark.parametrize("argv", [
    ["predict", *MODEL, ""], ["predict", *MODEL, "   "], ["space", "  "], ["perturb", "", "--attack", "truncate"],
    ["predict", *MODEL, "a \udcff text"], ["verify", "notes.json"], ["verify", "bad-utf8-run.jsonl"],
    ["verify", "empty.csv"], ["report", "notes.txt"], ["report", "bad-utf8-run.jsonl"], ["report", "missing.jsonl"],
    ["source-quality", "--data", "bad-utf8.csv"], ["source-quality", "--source", "natural:table.json"],
    ["source-quality", "--source", "truncate", "--data", "good.csv", "--judged-adversaries", "notes.txt"],
    ["source-quality", "--source", "truncate", "--data", "good.csv", "--judged-adversaries", "missing.jsonl"],
    ["space", "--data", "bad-utf8.csv"], ["space", "--data", "missing.csv"], ["space", "--data", "empty.csv"],
    ["space", "--data", "good.csv", "--id-column", "nope"], ["space", "a text", "--data", "good.csv"],
    ["save-model", "bow-rt", "out"], ["save-model", "minilm-rt-ft", "a-file"], ["models", "--bogus"],
    ["predict", "--model", "model-no-labels", "a film"], ["predict", "--model", "model-bad-json", "a film"],
    ["predict", "--model", "model-no-weights", "a film"], ["predict", "--model", "py:os.path:join", "a film"],
    ["augment", "--data", "good.csv", "--out", "notes.txt"], ["augment", "--data", "good.csv", "--out", "old-run.jsonl"],
    ["augment", "--data", "good.csv", "--out", "good.csv"], ["augment", "--data", "good.csv", "--out", "a-file/c.csv"],
    ["augment", "--data", "bad-utf8.csv", "--out", "c.csv"], ["augment", "--data", "empty.csv", "--out", "notes.txt",
                                                             "--overwrite"],
    ["augment", "--data", "good.csv", "--method", "pdp", "--model", "nonsense", "--out", "notes.txt", "--overwrite"],
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


USER_CODE = '''
import os
from pathlib import Path
from robustcount.models import FunctionClassifier

def factory_raises():
    raise ValueError("no weights here")

def exits():
    raise SystemExit(7)

def _bad(batch):
    raise ValueError("cannot score")

def predict_raises():
    return FunctionClassifier(_bad, ["negative", "positive"])

def _interrupted_at_the_first_example(batch):
    runs = [Path("."), Path(os.environ.get("ROBUSTCOUNT_RUNS", "runs"))]
    if any(list(folder.glob(f".*.{os.getpid()}.new")) for folder in runs):  # staged: the run is at its first example
        raise KeyboardInterrupt
    return [[0.5, 0.5] for _ in batch]

def interrupted():
    return FunctionClassifier(_interrupted_at_the_first_example, ["negative", "positive"])

def _words(batch):
    return [["high", "low"] for _ in batch]

def answers_words():
    return FunctionClassifier(_words, ["negative", "positive"])

class Wordy:
    labels = ["negative", "positive"]

    def predict_proba(self, batch):
        return [["high", "low"] for _ in batch]

def wordy():
    return Wordy()

class Ragged(Wordy):
    def predict_proba(self, batch):
        return [[0.5, 0.5], [1.0]] * len(batch)

def ragged():
    return Ragged()
'''


@pytest.fixture
def usercode(folder, monkeypatch):
    """USER_CODE saved as this test's module `usercode` (imported afresh, from this test's folder)."""
    import sys

    (folder / "usercode.py").write_text(USER_CODE)
    monkeypatch.delitem(sys.modules, "usercode", raising=False)
    return folder


def last_line_of_a_clean_failure(capsys, folder, argv, status=1) -> str:
    """Like `check_fails_cleanly`, but allowing warnings before the one error line."""
    before = snapshot(folder)
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == status, (argv, code, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    lines = err.splitlines()
    assert lines and all(line.startswith("robustcount: ") for line in lines), err
    after = snapshot(folder)
    assert {k: v for k, v in after.items() if k in before} == before, f"{argv} changed a file"
    assert not [k for k in after if k not in before and k.endswith(".new")], "a staging file was left"
    return lines[-1]


@pytest.mark.parametrize("factory, said", [
    ("factory_raises", "your model raised ValueError: no weights here (in py:usercode:factory_raises, at usercode.py:7)"),
    ("exits", "your model raised SystemExit(7) (in py:usercode:exits, at usercode.py:10)"),
    ("predict_raises", "your model raised ValueError: cannot score (in predict_proba of the model of "
                       "py:usercode:predict_raises, at usercode.py:13)"),
])
def test_what_the_users_own_code_raises_is_told_in_the_users_words(capsys, folder, usercode, factory, said):
    for argv in (["predict", "--model", f"py:usercode:{factory}", "a film"],
                 ["evaluate", "--model", f"py:usercode:{factory}", "--data", "good.csv"]):
        line = last_line_of_a_clean_failure(capsys, folder, argv)
        assert line == f"robustcount: error: {said}", line


def test_a_model_that_raises_shows_its_error_alone_without_a_batch_probe_warning(capsys, folder, usercode):
    # Before, "refuses the batch probe's texts ... evaluating one input at a time" came first.
    said = "robustcount: error: your model raised ValueError: cannot score (in predict_proba of the model of " \
           "py:usercode:predict_raises, at usercode.py:13)"
    for argv in (["predict", "--model", "py:usercode:predict_raises", "a film"],
                 ["evaluate", "--model", "py:usercode:predict_raises", "--data", "good.csv"]):
        capsys.readouterr()
        assert main(argv) == 1
        assert capsys.readouterr().err.splitlines() == [said]


@pytest.mark.parametrize("factory, said", [
    ("answers_words", "_words returned probabilities that are not numbers but strings (the first: 'high')"),
    ("wordy", "predict_proba of the model of py:usercode:wordy returned probabilities that are not numbers but "
              "strings (the first: 'high')"),
    ("ragged", "predict_proba of the model of py:usercode:ragged returned probabilities that are no array of "
               "numbers (setting an array element with a sequence."),
])
def test_a_model_that_answers_no_numbers_is_told_naming_its_function(capsys, folder, usercode, factory, said):
    for argv in (["predict", "--model", f"py:usercode:{factory}", "a film"],
                 ["evaluate", "--model", f"py:usercode:{factory}", "--data", "good.csv"]):
        line = last_line_of_a_clean_failure(capsys, folder, argv)
        assert line.startswith(f"robustcount: error: {said}"), line


def test_a_module_that_raises_at_import_is_the_users_error(capsys, folder, monkeypatch):
    monkeypatch.delitem(__import__("sys").modules, "broken", raising=False)
    (folder / "broken.py").write_text("import os\nraise RuntimeError('broken at import')\n")
    line = last_line_of_a_clean_failure(capsys, folder, ["predict", "--model", "py:broken:make", "a film"])
    assert line == "robustcount: error: your model raised RuntimeError: broken at import (in the import of broken, " \
                   "at broken.py:2)"
    line = last_line_of_a_clean_failure(capsys, folder, ["predict", "--model", "py:missing_module:make", "a film"])
    assert "no module named 'missing_module'" in line and "your model" not in line


def test_a_run_that_fails_on_the_models_output_announces_no_run_file(capsys, folder, usercode):
    capsys.readouterr()
    assert main(["evaluate", "--model", "py:usercode:predict_raises", "--data", "good.csv"]) == 1
    err = capsys.readouterr().err
    assert "the run goes to" not in err and "your model raised ValueError" in err
    assert main(["evaluate", *MODEL, "--data", "good.csv"]) == 0
    err = capsys.readouterr().err
    announced = err.split("the run goes to ")[1].split(" ")[0]
    assert (folder / announced).is_file()


@pytest.mark.parametrize("output", [[], ["--output", "new-run.jsonl"]])
def test_ctrl_c_before_the_first_example_names_no_run_file(capsys, folder, usercode, output):
    line = last_line_of_a_clean_failure(capsys, folder, ["evaluate", "--model", "py:usercode:interrupted",
                                                         "--data", "good.csv", *output], status=130)
    assert line == "robustcount: interrupted: 0 of 2 examples done", line
    assert not (folder / "new-run.jsonl").exists()


def test_a_damaged_harden_work_folder_is_refused_naming_the_file(capsys, folder, monkeypatch):
    from robustcount.models.families import FAMILIES
    from robustcount.training.harden import WORK

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(type(FAMILIES["word-cnn"]), "train", interrupted)
        assert main([*HARDEN, "--data", "good.csv", "--out", "cut"]) == 130
    work = folder / "cut" / WORK
    spec = (work / "spec.json").read_bytes()
    for damaged in (b"", b'{"spec": ', b"[1, 2]"):
        (work / "spec.json").write_bytes(damaged)
        err = check_fails_cleanly(capsys, folder, [*HARDEN, "--data", "good.csv", "--out", "cut", "--resume"])
        assert "cut/.harden/spec.json: not the record of a training" in err
    (work / "spec.json").write_bytes(spec)
    import torch

    torch.save({"weights": torch.zeros(1000)}, work / "network.pt")
    (work / "network.pt").write_bytes((work / "network.pt").read_bytes()[:300])  # truncated, as by a full disk
    err = check_fails_cleanly(capsys, folder, [*HARDEN, "--data", "good.csv", "--out", "cut", "--resume"])
    assert "cut/.harden/network.pt: a damaged checkpoint" in err


def test_a_model_card_with_an_unknown_option_is_refused_naming_the_card(capsys, folder):
    import json
    import shutil

    from robustcount.models.families import ASSETS

    (folder / "cnn").mkdir()
    shutil.copy(ASSETS / "cnn_rt.safetensors", folder / "cnn" / "model.safetensors")
    card = {"format": "robustcount-model/1", "family": "word-cnn", "labels": ["negative", "positive"],
            "options": {"filters": 100, "dropout": 0.5, "colour": "blue"}}
    (folder / "cnn" / "robustcount-model.json").write_text(json.dumps(card))
    err = check_fails_cleanly(capsys, folder, ["predict", "--model", "cnn", "a film"])
    assert "cnn/robustcount-model.json: its options" in err and "colour" in err


@pytest.mark.parametrize("family, weights, options, said", [
    ("word-cnn", "cnn_rt", {"filters": -5, "dropout": 0.5}, "filters must be at least 1, got -5"),
    ("word-cnn", "cnn_rt", {"filters": 100, "dropout": float("nan")}, "dropout must be a finite number, got nan"),
    ("word-cnn", "cnn_rt", {"filters": 100.5, "dropout": 0.5}, "filters must be an integer, got 100.5"),
    ("word-cnn", "cnn_rt", {"filters": 100, "dropout": 1}, "dropout must be less than 1, got 1"),
    ("word-cnn", "cnn_rt", {"filters": 100, "dropout": 0.5, "train_embeddings": "no"},
     "train_embeddings must be True or False, got 'no'"),
    ("word-lstm", "lstm_rt", {"hidden": "150", "dropout": 0.3}, "hidden must be an integer, got '150'"),
    ("word-lstm", "lstm_rt", {"hidden": 150, "dropout": -0.1}, "dropout must be at least 0, got -0.1"),
    ("py-torch", "cnn_rt", {"factory": 5}, "factory must be a string, got 5"),
    ("sklearn", "cnn_rt", {"refitted_from": ["x"]}, "refitted_from must be a string, got ['x']"),
    ("minilm-head", "cnn_rt", {"c": 1.0}, "'c' is not an option of a minilm-head model (it has none)"),
    ("minilm-lora", "cnn_rt", {"r": -5}, "r must be at least 1, got -5"),
    ("minilm-lora", "cnn_rt", {"r": 8, "lora_dropout": float("nan")}, "lora_dropout must be a finite number"),
    ("minilm-lora", "cnn_rt", {"r": 8, "modules_to_save": 7}, "modules_to_save must be a list of module names"),
])
def test_a_model_card_with_options_out_of_bounds_is_refused_naming_the_option(capsys, folder, family, weights,
                                                                              options, said):
    import json
    import shutil

    from robustcount.models.families import ASSETS

    (folder / "odd").mkdir()
    shutil.copy(ASSETS / f"{weights}.safetensors", folder / "odd" / "model.safetensors")
    card = {"format": "robustcount-model/1", "family": family, "labels": ["negative", "positive"], "options": options}
    (folder / "odd" / "robustcount-model.json").write_text(json.dumps(card))
    err = check_fails_cleanly(capsys, folder, ["predict", "--model", "odd", "a film"])
    assert f"odd/robustcount-model.json: its options are not a {family} model's: {said}" in err, err


def test_damaged_transformers_directories_are_refused_naming_what_is_wrong(capsys, folder, tiny_bert_dir):
    import json
    import pickle
    import shutil

    for name in ("truncated", "pickled", "remote-code"):
        shutil.copytree(tiny_bert_dir, folder / name)
    weights = folder / "truncated" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:5000])
    (folder / "pickled" / "model.safetensors").write_bytes(pickle.dumps({"weights": [1, 2, 3]}))
    for name in ("truncated", "pickled"):
        err = check_fails_cleanly(capsys, folder, ["predict", "--model", name, "a film"])
        assert f"{name}/model.safetensors is not a whole safetensors file" in err
    config = json.loads((folder / "remote-code" / "config.json").read_text())
    config["auto_map"] = {"AutoConfig": "shipped.ShippedConfig",
                          "AutoModelForSequenceClassification": "shipped.ShippedModel"}
    (folder / "remote-code" / "config.json").write_text(json.dumps(config))
    for code in ("import a_package_nobody_has\n", "class ShippedConfig:\n    pass\n", "raise ValueError('no')\n"):
        (folder / "remote-code" / "shipped.py").write_text(code)
        err = check_fails_cleanly(capsys, folder, ["predict", "--model", "remote-code", "--trust-remote-code",
                                                   "a film"])
        assert "cannot load transformers directory 'remote-code'" in err


def test_tables_and_lexicons_with_what_is_no_word_or_no_number_are_refused(capsys, folder):
    (folder / "odd-table.json").write_text('{"movie": [1, null, "movie"]}')
    (folder / "list-table.json").write_text('[1, null, "movie"]')
    for table in ("odd-table.json", "list-table.json"):
        err = check_fails_cleanly(capsys, folder, ["space", "a fine movie", "--source", f"table:{table}"])
        assert table in err
    for score in ("nan", "inf", "-Infinity"):
        (folder / "lexicon.tsv").write_text(f"good\t2.0\nbad\t{score}\n")
        err = check_fails_cleanly(capsys, folder, ["source-quality", "--source", "truncate", "--lexicon",
                                                   "lexicon.tsv"])
        assert "lexicon.tsv:2: the score of 'bad'" in err and "not a finite number" in err
