"""`certify --method bound` runs end to end: on a certified-trained word CNN, whose bounds certify
whole radii with no point enumerated, the run verifies and reports; on spaces bounds cannot take
(candidates that change the number of tokens: `segment`, `intrude`), every example is decided by
enumeration, with the simple prover's answers, and the run goes on."""

import csv
import json

import pytest

from robustcount.bounds.slots import Unboundable, token_slots
from robustcount.cli import main
from robustcount.counting.bound_count import count_with_bounds
from robustcount.data import label_index, load_demo
from robustcount.goal import evaluate_points
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.proofs.records import run_problems
from robustcount.runs.files import read_run
from robustcount.spaces.build import build_space
from robustcount.training import CertifiedTraining, HardenSpec, Sitting, TrainingCopies, harden

BOUND_CERTIFIED = (55, 157, 234)
"""demo:test examples whose Omega_2 the certified-trained CNN below certifies by bounds alone."""


def _write_data(path, examples):
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "text", "label"])
        for example in examples:
            writer.writerow([example.id, example.input, example.label])


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def certified_cnn(tmp_path_factory):
    """A word CNN certified-trained from cnn-rt's weights on 300 demo:train texts (seconds)."""
    folder = tmp_path_factory.mktemp("ibp")
    spec = HardenSpec(CertifiedTraining("word-cnn", ramp=2.0, init_from="cnn-rt", train_embeddings=True),
                      copies=TrainingCopies("none"), epochs=3)
    harden(spec, load_demo("train")[:300], {"spec": "demo:train", "sample": "first 300"}, folder / "model",
           Sitting(progress=False, log=lambda line: None), evaluate=False)
    return str(folder / "model")


def test_a_radius_bounds_certify_with_no_point_enumerated_verifies_and_reports(certified_cnn, tmp_path, capsys):
    test = load_demo("test")
    _write_data(tmp_path / "data.csv", [test[i] for i in BOUND_CERTIFIED])
    out = tmp_path / "run.jsonl"
    assert main(["certify", "--model", certified_cnn, "--data", str(tmp_path / "data.csv"), "--id-column", "id",
                 "--radius", "3", "--method", "bound", "--output", str(out)]) == 0
    lines = _lines(out)
    whole = [p for r in lines[1:] for p in r["proofs"]
             if p["status"] == "certified" and p["checked"] == 0 and p["certified_by_bounds"] == p["total"]]
    assert whole and all(p["smallest_margin"] is None and p["smallest_margin_point"] is None for p in whole)
    assert run_problems(lines[0], lines[1:]) == []
    capsys.readouterr()
    assert main(["verify", str(out), "--model", certified_cnn]) == 0, capsys.readouterr().out
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    assert "Traceback" not in capsys.readouterr().err and read_run(out).records


# -- Spaces bounds cannot take: decided by enumeration, the run goes on.


@pytest.mark.parametrize("source", ["segment", "intrude"])
def test_a_space_bounds_cannot_take_is_enumerated_and_the_run_goes_on(source, tmp_path, capsys):
    runs = {}
    for method in ("bound", "enumerate"):
        runs[method] = tmp_path / f"{method}.jsonl"
        assert main(["certify", "--model", "cnn-rt", "--source", source, "--first", "4", "--radius", "1",
                     "--method", method, "--output", str(runs[method])]) == 0, capsys.readouterr().err
    bound, simple = _lines(runs["bound"]), _lines(runs["enumerate"])
    assert len(bound) == 5  # the header and every example
    cnn_rt = load_model("cnn-rt", device="cpu")
    refused = 0
    for record, expected in zip(bound[1:], simple[1:]):
        assert [p["status"] for p in record["proofs"]] == [p["status"] for p in expected["proofs"]]
        space = build_space(record["input"], [source])
        try:
            token_slots(cnn_rt.tokenizer, space)
        except Unboundable:
            refused += 1
            assert all(p["boxes_bounded"] == 0 and p["certified_by_bounds"] == "0" for p in record["proofs"])
    assert refused  # the sources propose candidates that change the number of tokens
    capsys.readouterr()
    assert main(["verify", str(runs["bound"])]) == 0, capsys.readouterr().out


def test_past_max_points_a_space_bounds_cannot_take_is_undecided_saying_why(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    assert main(["certify", "--model", "cnn-rt", "--source", "intrude", "--first", "2", "--radius", "2",
                 "--max-points", "5", "--method", "bound", "--output", str(out)]) == 0
    reasons = [r["proofs"][-1]["reason"] for r in _lines(out)[1:] if r.get("undecided")]
    assert reasons and all("bounds cannot take this space" in reason and "changes the number of tokens" in reason
                           for reason in reasons)


def test_counting_with_bounds_a_space_they_cannot_take_enumerates_it():
    cnn_rt = load_model("cnn-rt", device="cpu")
    example = load_demo("test")[0]
    space = build_space(example.input, ["segment"])
    gold = label_index(example.label, cnn_rt.labels)
    with pytest.raises(Unboundable):
        token_slots(cnn_rt.tokenizer, space)
    counted = count_with_bounds(QueryEngine(cnn_rt), space, gold, 1)
    kept = sum(int(e.kept.sum()) for e in evaluate_points(QueryEngine(cnn_rt), space, space.points(1), gold))
    assert (counted.robust, counted.size, counted.by_bounds) == (kept, space.count(1), 0)
