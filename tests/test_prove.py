import copy
import dataclasses
import json

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robustcount import __version__
from robustcount.commands.certify import CertifyOptions, certify_example
from robustcount.data import Example

from robustcount.goal import MARGIN_TOLERANCE, is_adversarial, point_ids
from robustcount.models.engine import QueryEngine
from robustcount.models.families.word_networks import GloveWords
from robustcount.models.small import BagOfWords
from robustcount.models.torch_adapter import TorchClassifier
from robustcount.proofs.certificate import make_certificate, verify_certificate
from robustcount.proofs.prover import ADVERSARIAL, CERTIFIED, UNDECIDED, certify_radii, prove
from robustcount.proofs.records import run_problems
from robustcount.runs.command import TIMINGS, timings_apart
from robustcount.runs.files import dumps
from robustcount.spaces.space import Position, Space
from tests.test_attacks import toy_problems, weighted_model
from tests.test_word_ids import TextsOnly


def has_adversary_within(engine, space, gold, radius):
    points = list(space.points(radius))
    return bool(is_adversarial(engine.predict_proba([space.apply(p) for p in points]), gold).any())


@settings(max_examples=4000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(toy_problems(), st.integers(0, 5), st.sampled_from(["text", "leave-one-out", "margins"]), st.integers(1, 7))
def test_never_certified_when_an_adversary_exists(problem, radius, order, batch_size):
    space, model = problem
    engine = QueryEngine(model, batch_size=batch_size)
    proof = prove(engine, space, 1, radius, order=order)
    truth = has_adversary_within(engine, space, 1, radius)
    assert proof.status == (ADVERSARIAL if truth else CERTIFIED)
    if proof.status == ADVERSARIAL:
        witness = proof.smallest_margin_point
        space.check_point(witness)
        assert len(witness) <= radius
        assert is_adversarial(engine.predict_proba([space.apply(witness)]), 1)[0]
    else:
        assert proof.checked == proof.total == space.count(radius)


VOCABULARY = ["good", "bad", "dull", "fun", "film", "plot"]


@st.composite
def word_problems(draw):
    """A text of vocabulary words, candidates from the vocabulary, an unknown word and a candidate
    of two words (then a point's ids are no longer one a word) at one word at least, and a small
    word-level network with drawn weights."""
    words = draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5))
    others = [*VOCABULARY, "zzz", "fun film"]
    changed = draw(st.integers(0, len(words) - 1))
    positions = []
    for index, word in enumerate(words):
        extra = draw(st.lists(st.sampled_from([c for c in others if c != word]), min_size=int(index == changed),
                              max_size=3, unique=True))
        if extra:
            positions.append(Position("word", index, (word, *extra)))
    torch.manual_seed(draw(st.integers(0, 2**16)))
    model = TorchClassifier(BagOfWords(len(VOCABULARY) + 2, 4, 2), GloveWords(VOCABULARY), ["neg", "pos"],
                            device="cpu")
    return Space(" ".join(words), tuple(positions)), model


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(word_problems(), st.integers(1, 3), st.sampled_from(["margins", "text"]), st.integers(1, 7))
def test_the_prover_on_word_ids_answers_and_counts_as_on_texts(problem, radius, order, batch_size):
    """A batch's ids made at once (`PointIds.rows`: one array when every word is one id) are each
    point's ids, and the prover on them gives the text path's proofs, counters and cache."""
    space, model = problem
    gold = int(model.predict_proba([space.item])[0].argmax())
    ids = point_ids(QueryEngine(model), space)
    points = list(space.points(radius))
    rows = ids.rows(points)
    assert isinstance(rows, np.ndarray) == ids.one_id_a_word
    assert [list(row) for row in rows] == [ids(p) for p in points]
    results = []
    for engine in (QueryEngine(model, batch_size=batch_size), QueryEngine(TextsOnly(model), batch_size=batch_size)):
        with engine.example() as stats:
            proofs = certify_radii(engine, space, gold, radius, order=order)
            cache = engine.state().cache
        results.append(([{**p.as_dict(), "seconds": 0} for p in proofs], {**stats.as_dict(), "model_seconds": 0}, cache))
    assert results[0] == results[1]


@settings(max_examples=4000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(toy_problems(), st.integers(1, 4), st.integers(1, 30))
def test_partial_checks_are_never_certified(problem, radius, budget):
    space, model = problem
    engine = QueryEngine(model, batch_size=3)
    with engine.example(budget=budget):
        proof = prove(engine, space, 1, radius, order="text")
    truth = has_adversary_within(QueryEngine(model), space, 1, radius)
    if proof.status == CERTIFIED:
        assert not truth and proof.checked == space.count(radius)
    elif proof.status == ADVERSARIAL:
        assert truth
    else:
        assert "budget exhausted" in proof.reason


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(toy_problems(), st.integers(1, 5))
def test_certified_radii_match_brute_force(problem, radius):
    space, model = problem
    engine = QueryEngine(model)
    proofs = certify_radii(engine, space, 1, radius, order="leave-one-out")
    certified = sum(p.status == CERTIFIED for p in proofs)
    truth = 0  # radii beyond the space's positions add nothing: Omega_r is the whole space there
    while truth < min(radius, space.max_radius()) and not has_adversary_within(engine, space, 1, truth + 1):
        truth += 1
    assert certified == truth and len(proofs) <= space.max_radius()


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(toy_problems(), st.integers(1, 5), st.integers(1, 60), st.none() | st.integers(1, 40), st.integers(1, 7),
       st.sampled_from(["positive", "negative"]))
def test_every_record_certify_writes_passes_the_run_checks(problem, radius, max_points, budget, batch_size, gold):
    """The run checks never refuse what certify writes: proofs certified, adversarial, refused as
    too large or stopped by the budget, and misclassified examples, as a run file holds them."""
    space, model = problem
    space = dataclasses.replace(space, definition={"seed": 0})
    engine = QueryEngine(model, batch_size=batch_size)
    options = CertifyOptions(radius=radius, max_points=max_points, budget=budget)
    record = certify_example(engine, space, Example("x", space.item, gold), options, "weighted", engine.digest())
    results = {k: v for k, v in timings_apart(record).items() if k != TIMINGS}  # as the run file holds it
    record = json.loads(dumps({"record": "example", "index": 0, **results}))
    header = {"models": [{"spec": "weighted", "digest": engine.digest(), "labels": list(engine.labels),
                          "batching": engine.batching(), "precision": "float32", "batch_size": batch_size,
                          "trust_remote_code": False}], "margin_tolerance": MARGIN_TOLERANCE,
              "seed": 0, "space": {"seed": 0}, "options": dataclasses.asdict(options),
              "data": {"spec": "x.csv", "digest": "0" * 64, "examples": 1}, "chunk_size": 1,
              "robustcount": __version__, "python": "3", "dependencies": {}}
    assert run_problems(header, [record]) == []


def test_sensitivity_order_finds_the_counterexample_no_later_than_text_order():
    # Only the last word matters: text order reaches it last, sensitivity order first.
    n = 8
    weights = {f"w{i}": 0.01 for i in range(n)}
    weights.update({f"w{i}s0": 0.01 for i in range(n - 1)})
    weights[f"w{n - 1}"] = 0.5
    weights[f"w{n - 1}s0"] = -0.5
    space = Space(" ".join(f"w{i}" for i in range(n)),
                  tuple(Position("word", i, (f"w{i}", f"w{i}s0")) for i in range(n)))
    model = weighted_model(weights)
    by_text = prove(QueryEngine(model, batch_size=1), space, 1, 1, order="text")
    by_sensitivity = prove(QueryEngine(model, batch_size=1), space, 1, 1, order="leave-one-out")
    assert by_text.status == by_sensitivity.status == ADVERSARIAL
    assert by_sensitivity.checked <= by_text.checked
    assert by_sensitivity.checked == 1


def test_size_guard_refuses_before_any_model_call():
    space = Space(" ".join(f"w{i}" for i in range(12)),
                  tuple(Position("word", i, (f"w{i}", *(f"w{i}s{j}" for j in range(9)))) for i in range(12)))
    engine = QueryEngine(weighted_model({}))
    proof = prove(engine, space, 0, 3, max_points=1000)
    assert proof.status == UNDECIDED and str(space.count(3)) in proof.reason and "PR estimate" in proof.reason
    assert engine.total.model_calls == 0


def test_time_limit_gives_undecided():
    space = Space(" ".join(f"w{i}" for i in range(6)),
                  tuple(Position("word", i, (f"w{i}", *(f"w{i}s{j}" for j in range(4)))) for i in range(6)))
    engine = QueryEngine(weighted_model({f"w{i}": 1.0 for i in range(6)}), batch_size=1)
    with engine.example(time_limit=1e-9):  # the engine's limit is the one time limit
        proof = prove(engine, space, 1, 3, order="text")
    assert proof.status == UNDECIDED and "time limit" in proof.reason and proof.checked < proof.total
    assert f"after {proof.checked} of {proof.total} points" in proof.reason
    with pytest.raises(TypeError):
        prove(engine, space, 1, 3, time_limit=1.0)  # no second time limit


@pytest.fixture
def certified(bow_rt):
    from robustcount.spaces.build import build_space

    engine = QueryEngine(bow_rt)
    space = build_space("a wonderful film", ["truncate", "disemvowel"])
    proof = prove(engine, space, 1, 2)
    assert proof.status == CERTIFIED
    return make_certificate("ex", space, 1, bow_rt.labels, proof, "bow-rt", bow_rt.digest(), engine.batching()), engine


def test_verify_accepts_an_honest_certificate(certified):
    certificate, engine = certified
    verdict = verify_certificate(certificate, engine)
    assert verdict.holds, verdict.reason


def test_verify_rejects_a_changed_candidate(certified):
    certificate, engine = certified
    tampered = copy.deepcopy(certificate)
    tampered["space"]["positions"][0][2][1] = "wonderfully"
    assert not verify_certificate(tampered, engine).holds


def test_verify_rejects_a_changed_count(certified):
    certificate, engine = certified
    tampered = copy.deepcopy(certificate)
    tampered["points"] = str(int(tampered["points"]) - 1)
    assert "certificate says" in verify_certificate(tampered, engine).reason


def test_verify_rejects_a_changed_model(certified, tfidf_rt):
    certificate, engine = certified
    tampered = copy.deepcopy(certificate)
    tampered["model"]["digest"] = "0" * 64
    assert "weights differ" in verify_certificate(tampered, engine).reason
    # A model without a weight digest is still caught by the margins it gives.
    undigested = copy.deepcopy(certificate)
    undigested["model"]["digest"] = None
    assert not verify_certificate(undigested, QueryEngine(tfidf_rt)).holds


def test_verify_rejects_a_certificate_hiding_an_adversary():
    weights = {"w0": 0.3, "w0s0": -1.0, "w1": 0.3, "w1s0": 0.3}
    space = Space("w0 w1", (Position("word", 0, ("w0", "w0s0")), Position("word", 1, ("w1", "w1s0"))))
    engine = QueryEngine(weighted_model(weights))
    proof = prove(engine, space, 1, 1)
    assert proof.status == ADVERSARIAL
    forged = make_certificate("x", space, 1, ["negative", "positive"], proof, "weighted", None, engine.batching())
    forged.update(status=CERTIFIED, checked=forged["points"])
    assert not verify_certificate(forged, engine).holds


def _recount(certificate: dict) -> dict:
    """Recompute the digest and the point count after an edit, as a forger would."""
    positions = tuple(Position(k, i, tuple(c)) for k, i, c in certificate["space"]["positions"])
    space = Space(certificate["input"], positions, certificate["space"]["definition"])
    certificate["space"]["digest"] = space.digest()
    certificate["points"] = certificate["checked"] = str(space.count(certificate["radius"]))
    return certificate


def _set(*path_and_value):
    """An edit that sets certificate[path...] = value."""
    *path, value = path_and_value

    def edit(certificate):
        target = certificate
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _adversarial_claim(certificate):
    certificate.update(status="adversarial", smallest_margin_point=[[0, 1]])


# Each edit forges the certificate; those marked True also recompute the space digest and the
# point counts, as a careful forger would.
TAMPERS = {
    "drop a candidate": (lambda c: c["space"]["positions"][0][2].pop(), True),
    "add a candidate": (lambda c: c["space"]["positions"][0][2].append("marvellous"), True),
    "replace a candidate": (lambda c: c["space"]["positions"][0][2].__setitem__(1, "wonderfull"), True),
    "reorder candidates": (lambda c: c["space"]["positions"][0][2].insert(1, c["space"]["positions"][0][2].pop()),
                           True),
    "replace the original word": (lambda c: c["space"]["positions"][0][2].__setitem__(0, "awful"), True),
    "duplicate a candidate": (lambda c: c["space"]["positions"][0][2].append(c["space"]["positions"][0][2][1]), True),
    "empty a candidate list": (lambda c: c["space"]["positions"][0].__setitem__(2, []), False),
    "drop a position": (lambda c: c["space"]["positions"].pop(0), True),
    "duplicate a position": (lambda c: c["space"]["positions"].append(list(c["space"]["positions"][0])), True),
    "move a position": (lambda c: c["space"]["positions"][0].__setitem__(1, 0), True),
    "move a position out of the text": (lambda c: c["space"]["positions"][0].__setitem__(1, 99), True),
    "turn a word into a gap": (lambda c: c["space"]["positions"][0].__setitem__(0, "gap"), True),
    "change max_candidates": (_set("space", "definition", "filters", "max_candidates", 1), True),
    "raise min_length": (_set("space", "definition", "filters", "min_length", 5), True),
    "add a stop word": (_set("space", "definition", "filters", "stop_words", ["wonderful"]), True),
    "skip a position": (_set("space", "definition", "filters", "skip_positions", [1]), True),
    "drop a filter": (lambda c: c["space"]["definition"]["filters"].pop("min_length"), True),
    "change a source": (lambda c: c["space"]["definition"]["sources"].__setitem__(0, {"source": "keyboard"}), True),
    "add a source": (lambda c: c["space"]["definition"]["sources"].append({"source": "table", "path": "/dev/zero"}),
                     True),
    "drop every source": (_set("space", "definition", "sources", []), True),
    "invent a source": (lambda c: c["space"]["definition"]["sources"].append({"source": "py:os:abort"}), True),
    "change the space digest": (_set("space", "digest", "0" * 64), False),
    "change the input": (_set("input", "an awful film"), True),
    "make the input a pair": (_set("input", ["a wonderful film", "an awful film"]), True),
    "change the gold label": (_set("gold", "negative"), False),
    "swap the labels": (_set("labels", ["positive", "negative"]), False),
    "rename a label": (_set("labels", ["neg", "positive"]), False),
    "empty the labels": (_set("labels", []), False),
    "change the model digest": (_set("model", "digest", "0" * 64), False),
    "drop the model digest": (_set("model", "digest", None), False),
    "drop the model": (lambda c: c.pop("model"), False),
    "miscount the points": (lambda c: c.__setitem__("points", str(int(c["points"]) + 1)), False),
    "claim a partial check": (_set("checked", "1"), False),
    "write a count as a number": (lambda c: c.__setitem__("points", int(c["points"])), False),
    "change the smallest margin": (lambda c: c.__setitem__("smallest_margin", c["smallest_margin"] - 0.01), False),
    "write the margin as text": (_set("smallest_margin", "0.5"), False),
    "a NaN margin": (_set("smallest_margin", float("nan")), False),
    "an infinite margin": (_set("smallest_margin", float("inf")), False),
    "claim the clean input as the adversary of another gold": (
        lambda c: c.update(status="adversarial", smallest_margin_point=[], gold="negative"), False),
    "claim an adversary for a gold the clean input does not have": (
        lambda c: c.update(status="adversarial", smallest_margin_point=[[0, 1]], gold="negative"), False),
    "claim an adversary that is none": (_adversarial_claim, False),
    "claim an adversary without a witness": (_set("status", "adversarial"), False),
    "a witness outside the space": (lambda c: c.update(status="adversarial", smallest_margin_point=[[9, 1]]), False),
    "a malformed witness": (lambda c: c.update(status="adversarial", smallest_margin_point=[["0", "1"]]), False),
    "a negative radius": (_set("radius", -1), False),
    "a radius as text": (_set("radius", "2"), False),
    "an unknown status": (_set("status", "proven"), False),
    "an unknown format": (_set("format", "robustcount-certificate/0"), False),
    "drop the margin tolerance": (lambda c: c.pop("margin_tolerance"), False),
    "a negative margin tolerance": (_set("margin_tolerance", -1e-4), False),
    "a NaN margin tolerance": (_set("margin_tolerance", float("nan")), False),
    "an infinite margin tolerance": (_set("margin_tolerance", float("inf")), False),
    "a margin tolerance that makes every point adversarial": (_set("margin_tolerance", 1), False),
    "a margin tolerance as text": (_set("margin_tolerance", "0.0001"), False),
    "a margin tolerance as a flag": (_set("margin_tolerance", True), False),
    "a margin tolerance the points do not clear": (_set("margin_tolerance", 0.99), False),
    "a zero margin tolerance, which float noise clears": (_set("margin_tolerance", 0.0), False),
    "a margin tolerance a hair larger than robustcount's": (_set("margin_tolerance", 2e-4), False),
    "drop the model's batching": (lambda c: c["model"].pop("batching"), False),
    "an invented batching": (lambda c: c["model"].__setitem__("batching", "trust me"), False),
}


def test_the_tamper_suite_has_forty_kinds():
    assert len(TAMPERS) >= 40


@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_no_forged_certificate_is_accepted(certified, tamper):
    certificate, engine = certified
    assert verify_certificate(certificate, engine, allow_files=True).holds
    forged = copy.deepcopy(certificate)
    edit, recount = TAMPERS[tamper]
    edit(forged)
    if recount:
        try:
            _recount(forged)
        except (ValueError, KeyError, TypeError):
            pass  # a forgery the space itself refuses to hold
    verdict = verify_certificate(forged, engine, allow_files=True)
    assert not verdict.holds, tamper
