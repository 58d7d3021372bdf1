"""Every command that takes --model, run against one served SmolLM2 (llama.cpp's own server,
`llama_server` in conftest.py) on two short texts, every answer kept in one response cache for the
module: the dataset commands agree with each other on the same model, `compare` and `space` take
a served model's options as the other commands do, `verify` checks a completions run with the API
its header records, and the commands that cannot apply to a served model refuse it in one line."""

import json
import re

import pytest

from robustcount.cli import main
from robustcount.models.llm.classifier import SMOLLM2_PROMPT, SMOLLM2_VERBALIZER

TEXTS = "text,label\na dull and lifeless mess,negative\na gripping film,positive\n"
"""Two short texts, so that each space holds a few points (`truncate`: |Omega_1| = 5 and 3)."""
FEW_SHOT = ("Review: a wonderful, moving film\nSentiment: Positive\n\nReview: a boring, awful mess\nSentiment: "
            "Negative\n\nReview: {text}\nSentiment:")
"""A completions prompt whose answers SmolLM2 lists among its most likely first tokens."""


@pytest.fixture(scope="module")
def served(llama_server, tmp_path_factory):
    """The folder of the module's files (the two texts in texts.csv) and the options of the served
    SmolLM2: its chat prompt, calibrated, its answers in the module's cache."""
    folder = tmp_path_factory.mktemp("served-commands")
    (folder / "texts.csv").write_text(TEXTS)
    return folder, [*named(llama_server), *CHAT, *requests(folder)]


def named(port: int) -> list[str]:
    return ["--model", f"openai:http://127.0.0.1:{port}/v1#smollm2"]


CHAT = ["--prompt", SMOLLM2_PROMPT, "--verbalizer", SMOLLM2_VERBALIZER, "--calibration", "content-free"]


def requests(folder) -> list[str]:
    """A served model's request options: the module's cache, two requests at once, a minute each."""
    return ["--cache", str(folder / "answers.sqlite"), "--concurrency", "2", "--timeout", "60"]


def run(capsys, *args) -> str:
    """The standard output of the command line `args`, which must succeed."""
    code = main([str(arg) for arg in args])
    said = capsys.readouterr()
    assert code == 0, said.err
    return said.out


def records(path) -> tuple[dict, list[dict]]:
    header, *found = [json.loads(line) for line in path.read_text().splitlines()]
    return header, found


@pytest.fixture(scope="module")
def runs(served):
    """The run files of evaluate, certify, attack, estimate (exact) and radius at radius 1 of
    `truncate` on the two texts."""
    folder, model = served
    commands = {"evaluate": [], "certify": ["--radius", 1], "attack": ["--radius", 1],
                "estimate": ["--radius", 1, "--method", "exact"], "radius": ["--radius", 1]}
    for command, options in commands.items():
        source = [] if command == "evaluate" else ["--source", "truncate"]
        code = main([command, *model, "--data", str(folder / "texts.csv"), *source, *map(str, options), "--seed", "0",
                     "--output", str(folder / f"{command}.jsonl")])
        assert code == 0, command
    return {command: records(folder / f"{command}.jsonl") for command in commands}


def test_the_dataset_commands_agree_on_the_served_model(runs):
    assert [r["correct"] for r in runs["evaluate"][1]] == [True, True]
    certified = [r["certified_radius"] for r in runs["certify"][1]]
    robust = [r["estimate"]["pr"] == 1 for r in runs["estimate"][1]]
    attacked = [r["status"] == "success" for r in runs["attack"][1]]
    assert certified == [1, 0]  # one text of each kind, so that the agreement below says something
    assert robust == [c == 1 for c in certified] and attacked == [c == 0 for c in certified]
    assert [(r["lower"], r["upper"]) for r in runs["radius"][1]][1] == (0, 0)
    assert runs["radius"][1][0]["lower"] >= 1
    header = runs["certify"][0]["models"][0]
    assert header["served"]["api"] == "chat" and "cache" not in header and "concurrency" not in header


def test_a_certify_run_of_the_served_model_verifies_and_reports(llama_server, served, runs, capsys):
    folder, _ = served
    said = run(capsys, "verify", folder / "certify.jsonl", *named(llama_server), *requests(folder))
    assert "all 2 certificates hold" in said and "DOES NOT HOLD" not in said
    run(capsys, "report", *(folder / f"{command}.jsonl" for command in runs), "--out", folder / "report")
    assert "smollm2" in (folder / "report" / "report.md").read_text()


def test_compare_takes_the_served_models_options_and_pairs_the_estimates(served, runs, capsys):
    folder, model = served
    out = folder / "compare.jsonl"
    run(capsys, "compare", "--model", "bow-rt", *model, "--max-requests", "500", "--data", folder / "texts.csv",
        "--source", "truncate", "--radius", "1", "--method", "exact", "--seed", "0", "--output", out)
    header, compared = records(out)
    assert [m.get("max_requests", "absent") for m in header["models"]] == ["absent", 500]
    assert header["models"][0]["prompt"] is None and header["models"][1]["calibration"] == "content-free"
    assert [r["models"][1]["estimate"]["pr"] for r in compared] == [r["estimate"]["pr"] for r in runs["estimate"][1]]


def test_verify_checks_a_completions_run_with_the_api_its_header_records(llama_server, served, capsys):
    folder, _ = served
    plain = [*named(llama_server), "--prompt", FEW_SHOT, "--verbalizer", "negative= Negative,positive= Positive",
             "--calibration", "none", *requests(folder)]
    out = folder / "completions.jsonl"
    run(capsys, "certify", *plain, "--api", "completions", "--data", folder / "texts.csv", "--source", "truncate",
        "--radius", "1", "--output", out)
    header, found = records(out)
    assert header["models"][0]["api"] == "completions" and any(r["certificates"] for r in found)
    said = run(capsys, "verify", out, *named(llama_server), *requests(folder))  # --api from the header
    assert f"all {sum(len(r['certificates']) for r in found)} certificates hold" in said


def test_predict_space_zeroe_and_a_dry_run_take_the_served_model(served, capsys):
    folder, model = served
    assert run(capsys, "predict", "a gripping film", *model).split()[-3] == "positive"
    assert "|Omega_1| = 3" in run(capsys, "space", "a gripping film", *model, "--source", "truncate")
    plan = ["certify", *model, "--data", folder / "texts.csv", "--source", "truncate", "--radius", "1", "--dry-run"]
    run(capsys, *plan)
    said = run(capsys, *plan)  # the same points again: the cache answers them, and the plan says so
    assert "plan of 2 examples: 8 model calls" in said
    probed = re.search(r"the timing probe made (\d+) model calls \((\d+) of them answered by a served model's "
                       r"response cache", said)
    assert probed and probed[1] == probed[2] != "0", said
    run(capsys, "zeroe", *model, "--data", folder / "texts.csv", "--attack", "truncate", "--out", folder / "zeroe")
    levels = json.loads((folder / "zeroe" / "zeroe.json").read_text())
    assert levels and "truncate" in json.dumps(levels)


SERVED = "openai:http://127.0.0.1:9/v1#smollm2"
"""A served model at an address where nothing answers: each refusal comes before any request."""


@pytest.mark.parametrize("args, refusal", [
    (["compare", "--model", "bow-rt", "--model", "cnn-rt", "--cache", "answers.sqlite"],
     "--cache applies to a served model (openai:BASE_URL#MODEL), not to 'bow-rt'"),
    (["compare", "--model", "bow-rt", "--model", "cnn-rt", "--prompt", "{text}"],
     "--prompt, --verbalizer and --calibration apply to language models"),
    (["space", "a gripping film", "--cache", "answers.sqlite"],
     "--cache applies to the model of --model, and none is given"),
    (["harden", "--model", SERVED, "--out", "hardened"], "is a prompted language model: harden does not train"),
    (["augment", "--method", "pdp", "--model", SERVED, "--data", "demo:test"],
     f"augment cannot attack the served model {SERVED}"),
])
def test_what_cannot_apply_is_refused_in_one_line(args, refusal, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 1
    said = capsys.readouterr().err
    assert refusal in said and said.count("\n") == 1, said
    assert not (tmp_path / "hardened").exists()
