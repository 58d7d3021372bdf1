import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from robustcount import __version__
from robustcount.cli import main
from robustcount.runs import read_run
from robustcount.data import load_demo


def without_run_file_notes(err: str) -> str:
    """Standard error without the line saying where a run without --output goes."""
    return "".join(line for line in err.splitlines(keepends=True) if "the run goes to" not in line)


@pytest.fixture
def labelled_csv(tmp_path):
    path = tmp_path / "reviews.csv"
    path.write_text("text,label\na wonderful and moving film,positive\na dull lifeless mess,negative\n"
                    "great cast,positive\n")
    return path


def test_help_lists_every_command_and_version_exits_zero(capsys):
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out.split("Commands:")[1].split()
    commands = {"attack", "certify", "compare", "estimate", "evaluate", "models", "perturb", "predict", "radius",
                "report", "source-quality", "space", "verify", "zeroe"}
    assert commands <= set(listed)
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"robustcount, version {__version__}\n"


def test_models_lists_the_default(capsys):
    assert main(["models", "--json"]) == 0
    names = [m["name"] for m in json.loads(capsys.readouterr().out)]
    assert names[0] == "minilm-rt" and "tfidf-rt" in names


def test_evaluate_prints_a_table_and_writes_jsonl(capsys, labelled_csv, tmp_path):
    out = tmp_path / "run.jsonl"
    assert main(["evaluate", "--model", "tfidf-rt", "--data", str(labelled_csv), "--output", str(out)]) == 0
    table = capsys.readouterr().out
    assert "accuracy" in table and "1.0000" in table
    run = read_run(out)
    assert [r["correct"] for r in run.records] == [True, True, True]
    assert run.header["seed"] == 0 and run.header["models"][0]["spec"] == "tfidf-rt"
    assert run.header["models"][0]["digest"]  # scikit-learn pipelines have a digest too


def test_evaluate_json_summary_with_a_seeded_sample(capsys):
    assert main(["evaluate", "--model", "vader", "--sample", "50", "--seed", "3", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["evaluate", "--model", "vader", "--sample", "50", "--seed", "3", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert first["examples"] == 50 and first["seed"] == 3
    assert first["accuracy"] == second["accuracy"]


def test_predict_texts_and_pairs(capsys):
    assert main(["predict", "--model", "vader", "--json", "great", "awful"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["label"] for x in lines] == ["positive", "negative"]


def test_usage_errors_exit_2_in_one_line(capsys):
    assert main(["evaluate", "--no-such-option"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage error" in err
    assert main(["predict"]) == 2
    assert main(["evaluate", "--batch-size", "0"]) == 2


def test_failures_exit_1_in_one_line(capsys, tmp_path):
    assert main(["evaluate", "--model", "tfidf-rt", "--data", str(tmp_path / "missing.csv")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("robustcount: error:") and err.count("\n") == 1
    (tmp_path / "e.csv").write_text("")
    assert main(["evaluate", "--model", "vader", "--data", str(tmp_path / "e.csv")]) == 1
    assert "empty" in capsys.readouterr().err
    bad_labels = tmp_path / "labels.csv"
    bad_labels.write_text("text,label\nfine,neutral\n")
    assert main(["evaluate", "--model", "vader", "--data", str(bad_labels)]) == 1
    assert "not one of the model's labels" in capsys.readouterr().err
    assert main(["evaluate", "--model", "nope"]) == 1


def test_results_already_written_survive_a_model_failure(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("text,label\ngood,positive\nbad,negative\nboom,negative\n")
    out = tmp_path / "out.jsonl"
    assert main(["evaluate", "--model", "py:tests.factories:fragile_model", "--data", str(data),
                 "--output", str(out), "--batch-size", "1"]) == 1
    assert "model failed on 'boom'" in capsys.readouterr().err
    assert [r["input"] for r in read_run(out).records] == ["good", "bad"]


def test_the_console_script_is_installed():
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "robustcount"
    assert exe.exists()
    done = subprocess.run([str(exe), "evaluate", "--bogus"], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_labels_read_by_position_are_announced_and_a_label_map_says_what_they_mean(capsys, tmp_path):
    data = tmp_path / "numbers.csv"
    data.write_text("text,label\na wonderful and moving film,1\na dull lifeless mess,0\n")
    assert main(["evaluate", "--model", "bow-rt", "--data", str(data), "--json"]) == 0
    err = without_run_file_notes(capsys.readouterr().err)
    assert err.count("\n") == 1 and "read by position" in err and "--label-map 0=negative,1=positive" in err
    flipped = ["evaluate", "--model", "bow-rt", "--data", str(data), "--label-map", "0=positive,1=negative", "--json"]
    assert main(flipped) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["accuracy"] == 0.0 and without_run_file_notes(captured.err) == ""
    assert main(["evaluate", "--model", "bow-rt", "--data", str(data), "--label-map", "1=positive"]) == 1
    assert "not in the label map" in capsys.readouterr().err


@pytest.mark.parametrize(("label_map", "said"), [
    ("0=negative,1=negative",
     "the data's labels '0' and '1' are both mapped to 'negative'; each needs a model label of its own"),
    ("0=negative,0=positive", "the data's label '0' is mapped twice"),
])
def test_a_label_map_is_one_to_one(capsys, tmp_path, label_map, said):
    data = tmp_path / "numbers.csv"
    data.write_text("text,label\na wonderful and moving film,1\na dull lifeless mess,0\n")
    assert main(["evaluate", "--model", "bow-rt", "--data", str(data), "--label-map", label_map]) == 1
    err = capsys.readouterr().err
    assert err == f"robustcount: error: label map {label_map!r}: {said}\n"


def test_a_model_whose_labels_repeat_a_name_is_refused(capsys):
    assert main(["predict", "--model", "py:tests.factories:twin_labels_model", "a text"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "name 'positive' more than once" in err


def test_your_model_from_the_current_directory_and_clear_errors(capsys, tmp_path, monkeypatch):
    (tmp_path / "my_models.py").write_text(
        "def pipeline():\n"
        "    from sklearn.feature_extraction.text import TfidfVectorizer\n"
        "    from sklearn.linear_model import LogisticRegression\n"
        "    from sklearn.pipeline import make_pipeline\n"
        "    fitted = make_pipeline(TfidfVectorizer(), LogisticRegression())\n"
        "    return fitted.fit(['good film', 'bad film', 'great', 'awful'], ['positive', 'negative'] * 2)\n"
        "def scorer():\n"
        "    return lambda texts: [[0.5, 0.5] for _ in texts]\n")
    monkeypatch.chdir(tmp_path)  # no PYTHONPATH: the current directory is searched
    assert main(["predict", "--model", "py:my_models:pipeline", "--json", "a good film"]) == 0
    assert json.loads(capsys.readouterr().out)["label"] == "positive"
    assert main(["predict", "--model", "py:my_models:scorer", "a good film"]) == 1
    assert "FunctionClassifier(function, labels)" in capsys.readouterr().err
    assert main(["predict", "--model", "./my-checkpont", "a good film"]) == 1  # a typo, not a hub name
    assert "no such model directory" in capsys.readouterr().err


def test_ctrl_c_keeps_every_finished_example_and_a_run_always_has_a_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROBUSTCOUNT_RUNS")  # runs without --output go to ./runs
    args = ["certify", "--model", "py:tests.factories:interrupted_model", "--source", "truncate", "--radius", "1",
            "--sample", "150"]
    assert main(args) == 130
    captured = capsys.readouterr()
    (run_file,) = [p for p in (tmp_path / "runs").glob("certify-*.jsonl") if ".timings." not in p.name]
    kept = read_run(run_file).records  # a run file even without --output
    assert 0 < len(kept) < 150 and "radius" in captured.out  # the partial summary
    last = captured.err.strip().splitlines()[-1]
    assert last == (f"robustcount: interrupted: {len(kept)} of 150 examples done; they are in runs/{run_file.name}: "
                    f"continue with --output runs/{run_file.name} --resume")
    assert main(["certify", "--model", "py:tests.factories:keyword_model", "--source", "truncate",
                 "--radius", "1", "--sample", "150", "--output", f"runs/{run_file.name}", "--resume"]) == 1
    assert "different run" in capsys.readouterr().err  # another model: the old run is not continued with it


def test_a_function_model_that_loads_other_weights_is_another_model(capsys, tmp_path, monkeypatch):
    weights = tmp_path / "weights.txt"
    weights.write_text("0.3")
    monkeypatch.setenv("ROBUSTCOUNT_TEST_WEIGHTS", str(weights))
    args = ["estimate", "--model", "py:tests.factories:weighted_keyword_model", "--source", "truncate",
            "--sample", "3", "--eps", "0.2", "--delta", "0.2", "--output", str(tmp_path / "run.jsonl")]
    assert main(args) == 0
    assert main([*args, "--resume"]) == 0  # the same code and weights: the same model
    weights.write_text("0.4")  # the same code, other weights, loaded by a new process as a user would
    done = subprocess.run([str(Path(sys.executable).parent / "robustcount"), *args, "--resume"], capture_output=True,
                          text=True, cwd=Path(__file__).parents[1], timeout=300)
    assert done.returncode == 1 and "differs in models" in done.stderr


@pytest.mark.parametrize("command", ["attack", "certify", "radius", "estimate"])
def test_an_example_past_its_time_limit_ends_undecided_with_the_reason(capsys, tmp_path, command):
    out = tmp_path / "run.jsonl"
    args = [command, "--model", "bow-rt", "--sample", "3", "--seed", "2", "--time-limit", "0.000001",
            "--output", str(out)]
    assert main([*args, *(["--eps", "0.2", "--delta", "0.2"] if command == "estimate" else [])]) == 0
    records = read_run(out).records
    assert read_run(out).header["options"]["time_limit"] == 0.000001
    reasons = [json.dumps(r) for r in records if "time limit of 1e-06 s per example reached" in json.dumps(r)]
    assert reasons  # an example that needed more than one request stopped there, and says why
    if command == "attack":
        assert all(r["status"] == "skipped" or r["status"] == "undecided" and r["limit"] == "time limit"
                   for r in records)  # a time limit, not "budget exhausted" (as before)
    if command == "certify":
        assert any(r.get("undecided") for r in records)


def test_a_hub_name_without_network_fails_at_once(capsys, monkeypatch):
    import time

    monkeypatch.setattr("robustcount.models.transformers_adapter.hub_reachable", lambda timeout=3.0: False)
    began = time.monotonic()
    assert main(["predict", "--model", "someone/some-model", "a text"]) == 1
    assert time.monotonic() - began < 10
    assert "cannot be reached (no network)" in capsys.readouterr().err


def test_default_run_files_are_never_shared(tmp_path, monkeypatch):
    from robustcount.atomic import staging_path
    from robustcount.runs.launch import default_run_file

    monkeypatch.setenv("ROBUSTCOUNT_RUNS", str(tmp_path))
    first = default_run_file("evaluate")
    assert str(os.getpid()) in first.name  # another process, started the same second, names another file
    staging_path(first).write_text("")  # a run still writing its first record
    second = default_run_file("evaluate")
    assert second != first
    first.write_text("")
    second.write_text("")  # both written now
    assert default_run_file("evaluate") not in (first, second)


def test_first_takes_the_datas_first_examples_in_order(tmp_path, capsys):
    run = tmp_path / "first.jsonl"
    assert main(["evaluate", "--model", "vader", "--first", "5", "--output", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["examples"] == 5
    recorded = read_run(run)
    assert [r["id"] for r in recorded.records] == [e.id for e in load_demo("test")[:5]]
    assert recorded.header["data"]["first"] == 5
    assert main(["evaluate", "--model", "vader", "--first", "5", "--output", str(run), "--resume"]) == 0
    assert main(["evaluate", "--model", "vader", "--first", "5", "--sample", "5"]) == 1
    assert "give one of them" in capsys.readouterr().err
