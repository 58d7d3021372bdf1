"""Bound certificates: `certify --method bound` records the split tree of its boxes and how each
was decided; `verify` replays the splits from Omega_r, recomputes every bound and evaluates every
enumerated point, and refuses every forgery (a box missing, a box twice, a wrong bound, a box
claimed certified that its bound does not certify, counts edited); run files of bound proofs are
checked as a whole, and a bound proof resumed from a checkpoint gives the same answer."""

import copy
import csv
import json

import pytest

from robustcount.bounds.boxes import BOUND, ENUMERATE, replay
from robustcount.bounds.convolution import ConvolutionBounds
from robustcount.cli import main
from robustcount.data import label_index, load_demo
from robustcount.errors import RobustcountError
from robustcount.journal import Journal, keeping
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.proofs.branch import COSTS, BoundProof, Cost, chosen_method, prove_with_bounds
from robustcount.proofs.certificate import make_certificate, verify_certificate
from robustcount.proofs.prover import CERTIFIED, Checkpointing, certify_radii, prove
from robustcount.runs.files import read_run
from robustcount.runs.summaries import summarise_run
from robustcount.spaces.build import build_space

CERTIFIED_EXAMPLE = load_demo("test")[7]  # cnn-rt certifies it at r = 3, with boxes of both kinds
BROKEN_EXAMPLE = load_demo("test")[6]  # an adversary at r = 1


@pytest.fixture(scope="module")
def bound_certificate(cnn_rt):
    engine = QueryEngine(cnn_rt)
    space = build_space(CERTIFIED_EXAMPLE.input, ["synonyms"])
    gold = label_index(CERTIFIED_EXAMPLE.label, cnn_rt.labels)
    proof = prove_with_bounds(engine, space, gold, 3)
    assert proof.status == CERTIFIED and 0 < proof.certified_by_bounds < proof.total and proof.checked
    return make_certificate(CERTIFIED_EXAMPLE.id, space, gold, cnn_rt.labels, proof, "cnn-rt", engine.digest(),
                            engine.batching()), engine, space


def test_an_honest_bound_certificate_verifies_and_its_boxes_partition_omega(bound_certificate):
    certificate, engine, space = bound_certificate
    leaves = replay(space, 3, certificate["boxes"])
    points = [p for box, _ in leaves for p in box.points(space)]
    assert sorted(points) == sorted(space.points(3))  # each point of Omega_3 in exactly one box
    assert {entry[0] for _, entry in leaves} == {BOUND, ENUMERATE}
    verdict = verify_certificate(certificate, engine)
    assert verdict.holds and "boxes certified by bounds" in verdict.reason, verdict.reason


def _leaf_indices(tree, kind):
    return [k for k, entry in enumerate(tree) if entry[0] == kind]


def _drop_last_leaf(c):
    c["boxes"].pop()


def _a_box_twice(c):
    c["boxes"].append(copy.deepcopy(c["boxes"][_leaf_indices(c["boxes"], BOUND)[0]]))


def _wrong_bound(c):
    c["boxes"][_leaf_indices(c["boxes"], BOUND)[0]][1] += 0.01


def _omega_claimed_certified(c):
    """Omega_3 itself (whose bound did not certify it: it was split) claimed certified by its bound."""
    c.update(boxes=[[BOUND, 0.9]], certified_by_bounds=c["points"], checked="0", smallest_margin=None,
             smallest_margin_point=None)


def _enumerated_box_claimed_certified(c):
    """Every enumerated box claimed certified by a bound, the counts moved to match."""
    for k in _leaf_indices(c["boxes"], ENUMERATE):
        c["boxes"][k] = [BOUND, 0.9]
    c.update(certified_by_bounds=c["points"], checked="0", smallest_margin=None, smallest_margin_point=None)


def _split_elsewhere(c):
    """The first split moved to another position the box can split (other boxes, the same entries)."""
    first = c["boxes"][0]
    first[1] = next(p for p in range(first[1] + 1, 99) if p != first[1])


def _split_a_fixed_position(c):
    c["boxes"][0][1] = 10_000


# Each edit forges the bound certificate as a careful forger would (counts moved to match where
# that is possible); verify must refuse every one, saying why.
BOUND_TAMPERS = {
    "a box missing": (_drop_last_leaf, "no entry (boxes missing)"),
    "a box twice (overlapping)": (_a_box_twice, "belong to no box"),
    "a wrong bound": (_wrong_bound, "the certificate says"),
    "a box claimed certified whose bound does not certify it": (_omega_claimed_certified, "does not certify"),
    "enumerated boxes claimed certified by bounds": (_enumerated_box_claimed_certified, "box"),
    "a split on another position": (_split_elsewhere, "box"),
    "a split on a position outside the space": (_split_a_fixed_position, "cannot split"),
    "a recorded bound within the tolerance": (lambda c: c["boxes"][_leaf_indices(c["boxes"], BOUND)[0]]
                                              .__setitem__(1, 0.0), "does not clear the tolerance"),
    "a malformed entry": (lambda c: c["boxes"].__setitem__(0, ["split"]), "is not"),
    "more points certified by bounds": (lambda c: c.update(certified_by_bounds=str(int(c["certified_by_bounds"]) + 1)),
                                        "certified by bounds; it says"),
    "fewer points enumerated": (lambda c: c.update(checked=str(int(c["checked"]) - 1)), "it says"),
    "the method dropped (a partial check claimed complete)": (
        lambda c: c.pop("method"), "belong to a certificate whose method is bound"),
    "the method and boxes dropped": (
        lambda c: [c.pop(k) for k in ("method", "boxes", "certified_by_bounds")], "does not claim a complete check"),
    "an unknown method": (lambda c: c.update(method="trust"), "method must be"),
    "boxes as a dict": (lambda c: c.update(boxes={}), "its boxes a list"),
    "a bound certificate claiming an adversary": (lambda c: c.update(status="adversarial"), "is certified"),
}


@pytest.mark.parametrize("tamper", list(BOUND_TAMPERS))
def test_no_forged_bound_certificate_verifies(bound_certificate, tamper):
    certificate, engine, _ = bound_certificate
    forged = copy.deepcopy(certificate)
    edit, said = BOUND_TAMPERS[tamper]
    edit(forged)
    verdict = verify_certificate(forged, engine)
    assert not verdict.holds and said in verdict.reason, (tamper, verdict.reason)


def test_a_tree_of_enumerated_boxes_alone_is_checked_point_by_point(bound_certificate):
    """verify never trusts how a box was decided: the same Omega_3 recorded as one enumerated box
    holds, because every point is then evaluated."""
    certificate, engine, space = bound_certificate
    whole = copy.deepcopy(certificate)
    simple = prove(engine, space, whole["labels"].index(whole["gold"]), 3)  # the smallest margin may lie in a box the bounds decided
    whole.update(boxes=[[ENUMERATE]], certified_by_bounds="0", checked=whole["points"],
                 smallest_margin=simple.smallest_margin,
                 smallest_margin_point=[list(c) for c in simple.smallest_margin_point])
    verdict = verify_certificate(whole, engine)
    assert verdict.holds, verdict.reason


def test_the_method_is_chosen_per_model_by_its_measured_cost(cnn_rt, bow_rt, monkeypatch):
    """auto bounds only where bounds were measured to pay (on neither network today)."""
    lstm_rt = load_model("lstm-rt", device="cpu")
    assert chosen_method("auto", cnn_rt) == chosen_method("auto", lstm_rt) == "enumerate"
    assert chosen_method("auto", bow_rt) == "enumerate" and chosen_method("bound", lstm_rt) == "bound"
    with pytest.raises(RobustcountError, match="bounds support"):
        chosen_method("bound", bow_rt)
    monkeypatch.setitem(COSTS, ConvolutionBounds, Cost(pass_cost=27, pays=True))
    assert chosen_method("auto", cnn_rt) == "bound" and chosen_method("auto", lstm_rt) == "enumerate"


def _untimed(proof) -> dict:
    return {k: v for k, v in proof.as_dict().items() if k != "seconds"}


def test_a_bound_proof_resumed_from_any_checkpoint_gives_the_same_proofs(cnn_rt):
    """Checkpoints come before each radius (a bound proof restarts its radius on resume); every
    one resumes to the proofs of a run never stopped, split trees included."""
    space = build_space(CERTIFIED_EXAMPLE.input, ["synonyms"])
    gold = label_index(CERTIFIED_EXAMPLE.label, cnn_rt.labels)
    saved = []
    with keeping(Journal(save_to=saved.append, interval=0.0)):
        whole = certify_radii(QueryEngine(cnn_rt), space, gold, 3, checkpointing=Checkpointing(checkpoint=saved.append),
                              prover=prove_with_bounds, proof_type=BoundProof)
    assert [p.status for p in whole] == [CERTIFIED] * 3 and len(saved) == 3
    for state in saved:
        state = json.loads(json.dumps(state))
        resumed = certify_radii(QueryEngine(cnn_rt), space, gold, 3, checkpointing=Checkpointing(resume=state),
                                prover=prove_with_bounds, proof_type=BoundProof)
        assert [_untimed(p) for p in resumed] == [_untimed(p) for p in whole]


# -- A certify run by branch and bound, read back and forged as a whole.


@pytest.fixture(scope="module")
def bound_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bound")
    data = folder / "two.csv"
    with data.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "text", "label"])
        for example in (CERTIFIED_EXAMPLE, BROKEN_EXAMPLE):
            writer.writerow([example.id, example.input, example.label])
    out = folder / "run.jsonl"
    assert main(["certify", "--model", "cnn-rt", "--data", str(data), "--id-column", "id", "--radius", "3",
                 "--method", "bound", "--output", str(out)]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def _certified_record(lines):
    return next(r for r in lines[1:] if r.get("certified_radius") == 3)


def test_a_bound_run_on_cnn_rt_verifies_and_reads_back(capsys, tmp_path, bound_run):
    assert bound_run[0]["options"]["method"] == "bound"
    record = _certified_record(bound_run)
    assert all("certified_by_bounds" in p and "boxes" not in p for p in record["proofs"])
    assert record["certificates"][0]["method"] == "bound"
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in bound_run))
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out
    assert read_run(path).records


def _raise_by_bounds(lines):
    proof = _certified_record(lines)["proofs"][-1]
    proof["certified_by_bounds"] = str(int(proof["certified_by_bounds"]) + 1)


def _tree_leaf_dropped(lines):
    _certified_record(lines)["certificates"][0]["boxes"].pop()


def _proofs_as_enumerated(lines):
    """The certified record written as an enumerating prover's (every point checked), its
    certificate too, while the other record's proofs are by bounds, in a run whose method is auto."""
    lines[0]["options"]["method"] = "auto"
    record = _certified_record(lines)
    for proof in record["proofs"]:
        del proof["boxes_bounded"], proof["certified_by_bounds"]
        proof["checked"] = int(proof["total"])
    certificate = record["certificates"][0]
    for key in ("method", "boxes", "certified_by_bounds"):
        del certificate[key]
    certificate["checked"] = certificate["points"]


RUN_TAMPERS = {
    "more points certified by bounds in a proof": (_raise_by_bounds, "less the points certified by bounds"),
    "a box missing from the certificate": (_tree_leaf_dropped, "boxes missing"),
    "a header that says enumerate": (lambda ls: ls[0]["options"].update(method="enumerate"),
                                     "the run proves by enumerate"),
    "an unknown method in the header": (lambda ls: ls[0]["options"].update(method="guess"),
                                        "options: unknown method 'guess'"),
    "one record's proofs by another method": (_proofs_as_enumerated, "one run proves with one method"),
}


@pytest.mark.parametrize("tamper", list(RUN_TAMPERS))
def test_no_forged_bound_run_verifies_or_reports(capsys, tmp_path, bound_run, tamper):
    edit, said = RUN_TAMPERS[tamper]
    lines = json.loads(json.dumps(bound_run))
    edit(lines)
    path = tmp_path / "forged.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    assert main(["verify", str(path)]) == 1
    captured = capsys.readouterr()
    assert said in captured.out + captured.err and "Traceback" not in captured.err
    assert main(["report", str(path), "--out", str(tmp_path / "report")]) == 1
    assert said in capsys.readouterr().err


def test_bound_on_a_model_bounds_do_not_support_is_one_line(capsys, tmp_path):
    assert main(["certify", "--model", "bow-rt", "--method", "bound", "--first", "1", "--output",
                 str(tmp_path / "run.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "bounds support the word-cnn and word-lstm families" in err and err.count("\n") == 1



def test_the_bound_summary_counts_only_the_points_of_certified_radii_that_bounds_decided(capsys, tmp_path):
    """The user's summary read "23072 of the 22940 points of certified radii decided by bounds": the
    first figure counted the boxes bounds certified in proofs that ended undecided too. On cnn-rt
    with --max-points 150, rt-1343 is certified at r = 2 and undecided at r = 3 after bounds decided
    some of its boxes."""
    path = tmp_path / "run.jsonl"
    assert main(["certify", "--model", "cnn-rt", "--data", "demo:test", "--first", "2", "--radius", "3",
                 "--method", "bound", "--max-points", "150", "--output", str(path)]) == 0
    printed = capsys.readouterr().out
    run = read_run(path)
    proofs = [p for record in run.records for p in record["proofs"]]
    certified = [p for p in proofs if p["status"] == CERTIFIED]
    assert any(p["status"] != CERTIFIED and int(p["certified_by_bounds"]) for p in proofs)  # the case at hand
    summary = summarise_run(run)
    assert summary["points"] == sum(int(p["total"]) for p in certified)
    assert summary["certified_by_bounds"] == sum(int(p["certified_by_bounds"]) for p in certified)
    assert 0 < summary["certified_by_bounds"] <= summary["points"]
    assert f"{summary['certified_by_bounds']} of the {summary['points']} points of certified radii" in printed
