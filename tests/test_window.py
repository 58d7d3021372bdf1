"""A model's window is part of the space: a tiny BERT that reads 16 tokens (its position
embeddings), a function that reads five words; spaces leave out the words beyond the window and
say how many, proofs and counts cover the visible words only, certificates verify in a fresh
process, and `estimate`'s default radius never exceeds the positions with candidates."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from robustcount.cli import main
from robustcount.goal import MARGIN_TOLERANCE, margin
from robustcount.models.base import words_window
from robustcount.models.engine import QueryEngine
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.models.minilm import encoder_path
from robustcount.models.transformers_adapter import load_whole, transformers_classifier
from robustcount.models.zoo import load_model
from robustcount.proofs.certificate import make_certificate, verify_certificate
from robustcount.proofs.prover import CERTIFIED, certify_radii
from robustcount.proofs.records import run_problems
from robustcount.runs.files import read_run
from robustcount.spaces.build import Filters, SpaceSpec
from robustcount.text import tokenize

ROOT = Path(__file__).parents[1]
LONG = ("The film is good and the plot is fine, but the ending drags on for far too long and nobody in the "
        "audience cares about it at all")
"""28 words: the tiny model's 16 tokens ([CLS] and [SEP] among them) end inside "drags", its 13th."""
VISIBLE = 12
TRUNCATE = SpaceSpec(("truncate",))


@pytest.fixture(scope="module")
def window_16_dir(tmp_path_factory):
    """A small, randomly initialised BERT of three labels with 16 position embeddings, MiniLM's tokenizer."""
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(encoder_path(), local_files_only=True)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, num_labels=3, max_position_embeddings=16,
                        id2label={0: "a", 1: "b", 2: "c"}, label2id={"a": 0, "b": 1, "c": 2})
    path = tmp_path_factory.mktemp("window-16")
    BertForSequenceClassification(config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def engine(window_16_dir):
    return QueryEngine(load_model(str(window_16_dir), device="cpu"))


def test_the_transformers_window_is_the_models_max_positions_and_what_lies_beyond_changes_nothing(engine):
    assert engine.window.size == "16-token"
    tokens = tokenize(LONG)
    end = engine.window.end(LONG)
    assert tokens.spans()[VISIBLE - 1][1] <= end < tokens.spans()[VISIBLE][1]  # it ends inside word 12
    assert engine.window.end("a short text") is None
    replaced = tokens.join([*tokens.words[:VISIBLE + 1], *["football"] * (len(tokens.words) - VISIBLE - 1)])
    assert (engine.predict_proba([LONG]) == engine.predict_proba([replaced])).all()


def test_a_space_leaves_out_the_words_beyond_the_window_and_records_how_many(engine):
    space = TRUNCATE.builder(0, engine.window)(LONG)
    assert space.positions and max(p.index for p in space.positions) == VISIBLE - 1
    assert space.window == {"size": "16-token", "words": 28, "beyond": 28 - VISIBLE}
    assert "keep_beyond_window" not in space.definition["filters"]  # as before windows: a definition without it
    assert "16 of 28 words beyond the model's 16-token window: left out of the space" in space.describe(1)
    kept = SpaceSpec(("truncate",), Filters(keep_beyond_window=True)).builder(0, engine.window)(LONG)
    assert kept.positions[:len(space.positions)] == space.positions and kept.positions[-1].index == 27
    assert kept.window == space.window and kept.definition["filters"]["keep_beyond_window"] is True
    assert "kept in the space (--keep-beyond-window" in kept.describe(1)
    short = TRUNCATE.builder(0, engine.window)("a good film")
    assert short.window is None and short.definition == TRUNCATE.builder(0).definition


def test_a_pair_cuts_its_hypothesis_only_and_a_longer_premise_cuts_it_sooner(engine):
    hypothesis = "the film is good and the plot is fine"
    premises = ("one two three four five six seven eight",
                "one two three four five six seven eight nine ten eleven twelve thirteen")
    spaces = [TRUNCATE.builder(0, engine.window)((premise, hypothesis)) for premise in premises]
    assert [space.window["beyond"] for space in spaces] == [2, 3]  # tokenizers cut the longer part first
    assert [max(p.index for p in space.positions) for space in spaces] == [6, 5]
    assert TRUNCATE.builder(0, engine.window)(("a premise", "a good film")).window is None


def test_no_point_changes_a_word_beyond_the_window_and_the_proofs_agree_with_brute_force(engine):
    gold = int(engine.predict_proba([LONG])[0].argmax())
    space = TRUNCATE.builder(0, engine.window)(LONG)
    points = list(space.points(2))
    assert len(points) == space.count(2) == 1 + 10 + 10 * 9 // 2  # ten visible words truncate ("is" does not)
    texts = [space.apply(point) for point in points]
    assert all(tokenize(text).words[VISIBLE:] == tokenize(LONG).words[VISIBLE:] for text in texts)
    margins = margin(engine.predict_proba(texts), gold)
    proofs = certify_radii(engine, space, gold, 2)
    for proof in proofs:
        within = [m for p, m in zip(points, margins) if len(p) <= proof.radius]
        assert (proof.status == CERTIFIED) == (min(within) > MARGIN_TOLERANCE)
        assert proof.total == len(within)
    certificate = make_certificate("long", space, gold, engine.labels, proofs[-1], "tiny", engine.digest(),
                                   engine.batching())
    assert verify_certificate(certificate, engine).holds


def test_a_certificate_is_refused_by_a_model_whose_window_differs(window_16_dir, engine):
    gold = int(engine.predict_proba([LONG])[0].argmax())
    space = TRUNCATE.builder(0, engine.window)(LONG)
    proof = certify_radii(engine, space, gold, 1)[-1]
    certificate = make_certificate("long", space, gold, engine.labels, proof, "tiny", engine.digest(),
                                   engine.batching())
    model, tokenizer = load_whole(str(window_16_dir), BertForSequenceClassification, local_files_only=True)
    narrower = QueryEngine(transformers_classifier(model, tokenizer, "tiny-12", device="cpu", max_length=12))
    verdict = verify_certificate(certificate, narrower)
    assert not verdict.holds
    assert "records 16 words beyond a 16-token window, the model has a 12-token window with 19 words" in verdict.reason


@pytest.mark.slow
def test_certify_estimate_and_a_fresh_verify_cover_the_visible_words_only(window_16_dir, engine, tmp_path, capsys):
    texts = {"long": LONG, "short": "a good film"}
    golds = dict(zip(texts, (engine.labels[i] for i in engine.predict_proba(list(texts.values())).argmax(axis=1))))
    data = tmp_path / "long.jsonl"
    data.write_text("".join(json.dumps({"id": k, "text": t, "label": golds[k]}) + "\n" for k, t in texts.items()))
    common = ["--model", str(window_16_dir), "--data", str(data), "--source", "truncate", "--overwrite"]
    assert main(["certify", *common, "--radius", "2", "--output", str(tmp_path / "certify.jsonl")]) == 0
    said = capsys.readouterr().out

    assert "16 of 28 words (in 1 of the 2 texts) beyond the model's 16-token window: left out of their spaces" in said
    run = read_run(tmp_path / "certify.jsonl")
    assert run.header["models"][0]["window"] == "16-token"
    record = run.records[0]
    assert record["window"] == {"beyond": 16, "size": "16-token", "words": 28} and "window" not in run.records[1]
    assert record["space_positions"] == 10
    assert record["proofs"][0]["total"] == "11"  # the original and its ten visible words truncated
    tampered = {**record, "window": {**record["window"], "beyond": 15}}
    assert run_problems(run.header, [tampered, run.records[1]])
    verified = subprocess.run([str(Path(sys.executable).parent / "robustcount"), "verify",
                               str(tmp_path / "certify.jsonl"), "--model", str(window_16_dir)],
                              capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert verified.returncode == 0, verified.stderr
    assert "all 2 certificates hold" in verified.stdout
    assert "within radius 2 keep the label" in verified.stdout and \
        "; 16 of 28 words beyond the model's 16-token window: left out of the space" in verified.stdout
    assert main(["evaluate", *common[:4], "--output", str(tmp_path / "evaluate.jsonl")]) == 0
    assert "16 of 28 words (in 1 of the 2 texts) beyond the model's 16-token window: the model does not read " \
           "them" in capsys.readouterr().out
    assert main(["estimate", *common, "--method", "exact", "--radius", "2",
                 "--output", str(tmp_path / "estimate.jsonl")]) == 0
    estimated = read_run(tmp_path / "estimate.jsonl").records[0]
    assert estimated["window"] == record["window"] and estimated["estimate"]["size"] == "56"
    assert main(["report", str(tmp_path / "estimate.jsonl"), "--out", str(tmp_path / "report")]) == 0
    assert "16 of 28 words (in 1 of the 2 texts) beyond the model's 16-token window" in \
        (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


def five_words_model():
    """A keyword model that reads the first five words, as a service that truncates would."""
    return FunctionClassifier(lambda batch: [int("good" in " ".join(t.split()[:5])) for t in batch],
                              ["negative", "positive"], output="label", name="five-words", window=words_window(5))


def test_a_function_declares_its_window_and_space_says_what_it_leaves_out(capsys):
    engine = QueryEngine(five_words_model())
    assert engine.window.size == "5-word"
    space = TRUNCATE.builder(0, engine.window)("a good film with a dull and slow ending")
    assert [p.index for p in space.positions] == [1, 2, 3] and space.window["beyond"] == 4  # "a" does not truncate
    assert main(["space", "a good film with a dull and slow ending", "--source", "truncate",
                 "--model", "py:tests.test_window:five_words_model"]) == 0
    assert "4 of 9 words beyond the model's 5-word window: left out of the space" in capsys.readouterr().out


def test_the_default_radius_of_estimate_stops_at_the_positions_with_candidates(tmp_path, capsys):
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"id": "one", "text": "a warm and funny film with a great cast", "label": "positive"}))
    assert main(["estimate", "--model", "bow-rt", "--data", str(data), "--source", "truncate", "--stop-words",
                 "--radius-share", "1", "--method", "exact", "--output", str(tmp_path / "run.jsonl")]) == 0
    assert "On 1 of the 1 estimates the default radius (a share of the words) exceeded the positions with " \
           "candidates" in capsys.readouterr().out
    estimate = read_run(tmp_path / "run.jsonl").records[0]["estimate"]
    assert estimate["radius"] == 5 and estimate["size"] == str(2 ** 5)  # warm, funny, film, great, cast


def test_a_record_without_certificates_verifies_within_its_window_and_a_forged_window_is_refused(tmp_path, capsys):
    """A misclassified long text has no certificate to carry its space: verify rebuilds it within
    the window its record names, and that window must be the model's."""
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "a", "text": "a dull film with a good cast and slow ending", "label": "positive"})
                    + "\n" + json.dumps({"id": "b", "text": "a good film", "label": "positive"}) + "\n")
    model = ["--model", "py:tests.test_window:five_words_model"]
    run = tmp_path / "c.jsonl"
    assert main(["certify", *model, "--data", str(data), "--source", "truncate", "--radius", "1",
                 "--output", str(run)]) == 0
    misclassified = read_run(run).records[0]
    assert misclassified["id"] == "0" and misclassified["correct"] is False and misclassified["window"]["beyond"] == 5
    capsys.readouterr()
    assert main(["verify", str(run), *model]) == 0
    lines = run.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["window"]["size"] = "6-word"
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["verify", str(forged), *model]) == 1
    assert "0: DOES NOT HOLD: its window is '6-word', the run header's model has '5-word'" in capsys.readouterr().out
    del record["window"]  # a record that hides its window: its space is not the one rebuilt over every word
    forged.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n", encoding="utf-8")
    assert main(["verify", str(forged), *model]) == 1
    assert "0: DOES NOT HOLD: space_digest is not its certificates' space's digest" in capsys.readouterr().out
