"""Contextual filters (spaces/context.py): names, titles and fixed expressions left alone, each
substitute judged in the original text by the packaged language model, sentence encoder and its
contextual word embeddings; the space stays a product of lists that `verify` rebuilds in a fresh
process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.models.context_models import context_models
from robustcount.models.engine import QueryEngine
from robustcount.models.base import SubstitutionQuery
from robustcount.models.minilm import MiniLMWordEncoder, mark, weights_digest
from robustcount.proofs.certificate import _certificate_space, make_certificate, verify_certificate
from robustcount.proofs.rebuild import rebuilt_space, rebuilt_space_like
from robustcount.proofs.prover import CERTIFIED, certify_radii, prove
from robustcount.spaces.build import Filters, SpaceBuilder
from robustcount.spaces.context import agreement_problem, expressions, names
from robustcount.spaces.space import Position, Space
from robustcount.text import tokenize
from tests.test_prove import has_adversary_within

WIDE = ("synonyms", "counter-fitted", "wordnet")
SENSE = Filters(keep_names=True, keep_expressions=True, context_word_similarity_min=0.7)


class Fixed:
    """A word source with fixed neighbours (the filters' behaviour on chosen pairs)."""

    kind, name = "word", "fixed"

    def __init__(self, table: dict[str, tuple[str, ...]]):
        self.table = table

    def definition(self) -> dict:
        return {"source": self.name}

    def neighbours(self, word: str) -> tuple[str, ...]:
        return self.table.get(word, ())


def substitutes(space) -> dict[str, tuple[str, ...]]:
    return {space.tokens.words[p.index]: p.candidates[1:] for p in space.positions if p.kind == "word"}


def test_names_and_titles_inside_a_sentence_are_left_alone():
    assert names(tokenize("the sequel to Spy Kids is a mixed bag")) == {3, 4}
    assert names(tokenize("Spy Kids is fun. Adam Sandler is not. Fun it is.")) == {0, 1, 4, 5}
    assert names(tokenize("a lower-case review with no names")) == set()


def test_wordnet_multiword_expressions_are_left_alone():
    assert expressions(tokenize("it is a mixed bag, kind of")) == {3, 4, 5, 6}
    assert expressions(tokenize("a mixed, bag")) == set()  # one space apart only


def test_names_and_expressions_remove_the_candidates_they_cover():
    text = "the sequel to Spy Kids is a mixed bag"
    plain = substitutes(SpaceBuilder(WIDE)(text))
    assert "Minors" in plain["Kids"] and "handbag" in plain["bag"]
    built = SpaceBuilder(WIDE, Filters(keep_names=True, keep_expressions=True)).build(text)
    kept = substitutes(built.space)
    assert not {"Spy", "Kids", "mixed", "bag"} & set(kept) and "sequel" in kept
    assert built.removed == {"names": 2, "expressions": 2}


def test_bad_thresholds_are_refused_in_one_line(capsys):
    with pytest.raises(RobustcountError, match="finite"):
        Filters(context_lm_min=float("nan"))
    for bad in (["--context-similarity-min", "2"], ["--context-lm-window", "-1"], ["--context-lm-min", "nan"],
                ["--context-lm-min", "-inf"], ["--context-lm-min", "x"], ["--context-word-similarity-min", "1.5"],
                ["--context-word-similarity-min", "nan"], ["--context-word-similarity-window", "0"]):
        capsys.readouterr()
        code = main(["space", "a good film", *bad])
        err = capsys.readouterr().err
        assert code != 0 and err.count("\n") == 1 and err.startswith("robustcount: "), (bad, err)


def test_scored_filters_need_their_models():
    with pytest.raises(RobustcountError, match="need their models"):
        SpaceBuilder(WIDE, Filters(context_lm_min=-4))


def test_a_definition_without_contextual_filters_is_unchanged():
    assert set(Filters().definition()) == {"stop_words", "min_length", "max_candidates", "skip_positions", "same_pos"}
    recorded = Filters(context_lm_min=-4, keep_names=True).definition()
    assert recorded["context_lm_min"] == -4 and recorded["context_lm_window"] == 4 and recorded["keep_names"]
    assert "context_similarity_window" not in recorded and "keep_expressions" not in recorded
    recorded = Filters(context_word_similarity_min=0.5).definition()
    assert recorded["context_word_similarity_min"] == 0.5 and recorded["context_word_similarity_window"] == 31
    assert "context_lm_min" not in recorded


def test_borderline_candidates_may_go_either_way_and_nothing_else():
    built = [("word", 0, ("good", "fine", "great")), ("word", 2, ("film", "movie"))]
    borderline = {0: (("good", "fine", "nice", "great"), {"nice", "fine"}),
                  1: (("bad", "poor"), {"poor"})}
    assert agreement_problem(built, built, borderline) is None
    toggled = [("word", 0, ("good", "nice", "great")), ("word", 1, ("bad", "poor")), ("word", 2, ("film", "movie"))]
    assert agreement_problem(toggled, built, borderline) is None
    for forged in ([("word", 0, ("good", "fine")), built[1]],  # a sure candidate dropped
                   [("word", 0, ("good", "fine", "great", "super")), built[1]],  # a candidate added
                   [("word", 0, ("good", "great", "fine")), built[1]],  # out of order
                   [built[0]],  # a sure position dropped
                   [built[1], built[0]]):  # positions out of order
        assert agreement_problem(forged, built, borderline) is not None, forged


@pytest.fixture(scope="module")
def models():
    return context_models()


def test_the_language_model_removes_wrong_senses_and_broken_phrases(models):
    text = "A British cast gives the film nothing wrong at all"
    source = Fixed({"cast": ("thrown", "ensemble"), "wrong": ("inaccurate",)})
    plain = substitutes(SpaceBuilder([source])(text))
    assert plain == {"cast": ("thrown", "ensemble"), "wrong": ("inaccurate",)}
    built = SpaceBuilder([source], Filters(context_lm_min=-4), context=models).build(text)
    assert substitutes(built.space) == {"cast": ("ensemble",)} and built.removed["lm"] == 2
    scores = models.log_likelihood_changes(tokenize(text), 2, ["thrown", "ensemble"], 4)
    assert scores[0] < -4 < scores[1]
    tokens = tokenize(text)
    pieces = (*(s + w for s, w in zip(tokens.separators, tokens.words)), tokens.separators[-1])
    again = models.lm.model.score([SubstitutionQuery(pieces, 2, (" ensemble", " thrown"), 4)])[0]
    assert abs(again[0] - scores[1]) < 1e-3 and abs(again[1] - scores[0]) < 1e-3  # another batch, within tolerance


def scored_from_scratch(lm, pieces: tuple[str, ...], index: int, replacement: str, window: int) -> float:
    """The log-likelihood change of one substitution computed the plain way: each whole text run
    alone from BOS, no cache, its scored tokens' log-probabilities summed (float64)."""
    def scored(text_pieces):
        ids = [lm._ids(piece) for piece in text_pieces]
        tokens = [lm.start, *(t for piece in ids for t in piece)]
        start = 1 + sum(map(len, ids[:index]))
        stop = min(len(tokens), start + len(ids[index]) + window)
        with torch.no_grad():
            log_p = torch.log_softmax(lm.lm(input_ids=torch.tensor([tokens])).logits[0].double(), dim=-1)
        return sum(float(log_p[k - 1, tokens[k]]) for k in range(start, stop))
    return scored((*pieces[:index], replacement, *pieces[index + 1:])) - scored(pieces)


@pytest.mark.parametrize(("index", "window"), [(0, 4), (2, 4), (7, 4), (9, 4), (2, 0), (4, 12)])
def test_substitution_scores_are_those_of_the_whole_texts_scored_from_scratch(models, index, window):
    """The scorer reuses the text's pass and packs a position's replacements into one sequence:
    each score is still the plain one (the first word, the last, a window past the end, none)."""
    tokens = tokenize("A British cast gives the film nothing wrong at all.")
    pieces = (*(s + w for s, w in zip(tokens.separators, tokens.words)), tokens.separators[-1])
    replacements = tuple(tokens.separators[index] + word for word in ("ensemble", "extraordinarily", "the", "thrown"))
    scores = models.lm.model.score([SubstitutionQuery(pieces, index, replacements, window)])[0]
    plain = [scored_from_scratch(models.lm.model, pieces, index, r, window) for r in replacements]
    assert scores == pytest.approx(plain, abs=1e-4)  # floating-point noise only, ten times inside TOLERANCES


def test_the_encoder_removes_what_moves_the_meaning(models):
    text = "the worst movie of the year"
    source = Fixed({"worst": ("poorest", "best")})
    built = SpaceBuilder([source], Filters(context_similarity_min=0.9), context=models).build(text)
    similarity = models.similarities(tokenize(text), 1, ["poorest", "best"], 15)
    assert substitutes(built.space).get("worst", ()) == tuple(c for c, s in zip(("poorest", "best"), similarity)
                                                              if s >= 0.9)
    assert built.removed["similarity"] == sum(s < 0.9 for s in similarity)
    assert built.space.definition["context"]["encoder"]["digest"]


def test_the_word_in_context_similarity_removes_wrong_senses(models):
    text = "A British cast gives the film nothing wrong at all"
    scores = models.word_similarities(tokenize(text), 2, ["thrown", "ensemble", "cast"], 31)
    assert scores[0] < 0.4 < scores[1] and abs(scores[2] - 1) < 1e-5
    elsewhere = models.word_similarities(tokenize("he cast the net into the sea"), 1, ["thrown", "ensemble"], 31)
    assert elsewhere[0] > scores[0] and elsewhere[1] < scores[1]  # the sense the context gives
    source = Fixed({"cast": ("thrown", "ensemble")})
    built = SpaceBuilder([source], Filters(context_word_similarity_min=0.4), context=models).build(text)
    assert substitutes(built.space) == {"cast": ("ensemble",)} and built.removed["word_similarity"] == 1
    context = built.space.definition["context"]
    assert context["word_encoder"]["digest"] == weights_digest() and set(context) == {"word_encoder", "tolerances"}


def test_a_word_mark_in_the_text_marks_nothing(models):
    """The encoder's word mark (U+001F) inside a text is read as a space: the scores are those of
    the text with a space there (they were all 0 when the text's own mark was taken for the word's)."""
    plain = models.word_similarities(tokenize("A British cast gives the film nothing"), 2, ["thrown", "ensemble"], 31)
    marked = models.word_similarities(tokenize("A British\x1f cast gives the film nothing"), 2, ["thrown", "ensemble"], 31)
    assert plain[1] > 0.4 and np.allclose(marked, plain, atol=1e-5)


def test_a_word_beyond_the_encoders_positions_gets_no_similarity(models):
    far = MiniLMWordEncoder().embed(["word " * 600 + "the " + mark("end"), "the " + mark("end")])
    assert not far[0].any() and abs(float(far[1] @ far[1]) - 1) < 1e-5


def test_a_space_whose_word_encoder_differs_is_not_rebuilt(models):
    text = "A British cast gives the film nothing wrong at all"
    space = SpaceBuilder(["synonyms"], SENSE, context=models)(text)
    definition = json.loads(json.dumps(space.definition))
    assert rebuilt_space(definition, text) == space
    definition["context"]["word_encoder"]["digest"] = "0" * 64
    assert "scored with" in rebuilt_space(definition, text)


CONTEXTUAL = Filters(keep_names=True, keep_expressions=True, context_lm_min=-6, context_similarity_min=0.8)


@pytest.mark.parametrize("filters", [CONTEXTUAL, SENSE], ids=["lm-similarity", "word-similarity"])
@pytest.mark.parametrize("text", ["a wonderful film", "a dull and tedious mess", "a wonderful and moving film"])
def test_certify_agrees_with_enumeration_in_a_contextual_space(text, filters, bow_rt, models):
    space = SpaceBuilder(WIDE, filters, context=models)(text)
    assert len(space.positions) >= 2
    engine = QueryEngine(bow_rt)
    gold = int(engine.predict([text])[0])
    proofs = certify_radii(engine, space, gold, 2, order="leave-one-out")
    certified = sum(p.status == CERTIFIED for p in proofs)
    truth = 0
    while truth < min(2, space.max_radius()) and not has_adversary_within(engine, space, gold, truth + 1):
        truth += 1
    assert certified == truth


def run_verify(tmp_path, certificate):
    path = tmp_path / "certificate.json"
    path.write_text(json.dumps(certificate))
    command = [str(Path(sys.executable).parent / "robustcount"), "verify", str(path)]
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ}, timeout=600)


@pytest.mark.parametrize("filters", [CONTEXTUAL, SENSE], ids=["lm-similarity", "word-similarity"])
def test_a_contextual_certificate_verifies_in_a_fresh_process(tmp_path, filters, bow_rt, models):
    text = "a wonderful and moving film"
    space = SpaceBuilder(WIDE, filters, context=models)(text)
    scored = {name: model for name, model in space.definition["context"].items() if name != "tolerances"}
    assert space.positions and scored and all(model["digest"] for model in scored.values())
    engine = QueryEngine(bow_rt)
    proof = prove(engine, space, 1, 1)
    certificate = make_certificate("ex", space, 1, bow_rt.labels, proof, "bow-rt", bow_rt.digest(), engine.batching())
    assert verify_certificate(certificate, QueryEngine(bow_rt)).holds
    done = run_verify(tmp_path, certificate)
    assert done.returncode == 0, done.stdout + done.stderr
    forged = json.loads(json.dumps(certificate))
    position = forged["space"]["positions"][0]
    position[2] = [*position[2], "splendiferous"]  # a candidate no filter decision allows
    forged["space"]["digest"] = _certificate_space(forged).digest()
    verdict = verify_certificate(forged, QueryEngine(bow_rt))
    assert not verdict.holds and "differ" in verdict.reason


@pytest.mark.parametrize("score", ["lm", "word_similarity"])
def test_a_borderline_candidate_may_go_either_way_and_verify_accepts_both(score, bow_rt, models):
    text = "a wonderful and moving film"
    position = SpaceBuilder(["synonyms"])(text).positions[0]
    scorer = models.log_likelihood_changes if score == "lm" else models.word_similarities
    window = Filters().context_lm_window if score == "lm" else Filters().context_word_similarity_window
    on_threshold = float(scorer(tokenize(text), position.index, position.candidates[1:2], window)[0])
    built = SpaceBuilder(["synonyms"], Filters(**{f"context_{score}_min": on_threshold}), context=models).build(text)
    candidate = position.candidates[1]
    assert candidate in built.borderline[position.index][1]
    widest = built.borderline[position.index][0]  # scored in a batch, it may fall on either side here

    def with_list(candidates):
        others = [p for p in built.space.positions if p.index != position.index]
        return Space(text, tuple(sorted([*others, Position("word", position.index, candidates)],
                                        key=lambda p: p.index)), built.space.definition)

    kept, dropped = with_list(widest), with_list(tuple(c for c in widest if c != candidate))
    assert built.space.digest() in (kept.digest(), dropped.digest())
    engine = QueryEngine(bow_rt)
    for space in (kept, dropped):
        proof = prove(engine, space, 1, 1)
        certificate = make_certificate("ex", space, 1, bow_rt.labels, proof, "bow-rt", bow_rt.digest(),
                                       engine.batching())
        assert verify_certificate(certificate, QueryEngine(bow_rt)).holds
        assert rebuilt_space_like(space.definition, text, space.digest()).digest() == space.digest()
    assert rebuilt_space_like(built.space.definition, text, "0" * 64).digest() == built.space.digest()


def test_a_contextual_certify_run_verifies(tmp_path, capsys, models):
    data = tmp_path / "data.csv"
    data.write_text("text,label\na wonderful and moving film,positive\nthe sequel to Spy Kids is dull,negative\n")
    out = tmp_path / "run.jsonl"
    assert main(["certify", "--model", "bow-rt", "--data", str(data), "--source", "synonyms", "--keep-names",
                 "--context-lm-min", "-6", "--radius", "1", "--output", str(out)]) == 0
    header = json.loads(out.read_text().splitlines()[0])
    assert header["space"]["context"]["lm"]["digest"] and header["space"]["filters"]["keep_names"]
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0, capsys.readouterr()


def test_space_reports_what_each_contextual_filter_removed(capsys):
    text = "the sequel to Spy Kids is a mixed bag"
    assert main(["space", text, "--keep-names", "--keep-expressions"]) == 0
    assert "contextual filters: names removed 2; expressions removed 2; 0 candidates borderline" in \
        capsys.readouterr().out
    assert main(["space", text, "--keep-names", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["contextual_filters"] == {"names": 2, "borderline": 0}
    assert printed["definition"]["filters"]["keep_names"] and "context" not in printed["definition"]
    assert main(["space", text]) == 0 and "contextual" not in capsys.readouterr().out
    assert main(["space", "A British cast gives the film nothing wrong", "--context-word-similarity-min", "0.7"]) == 0
    assert "contextual filters: word_similarity removed 9; 0 candidates borderline" in capsys.readouterr().out


def test_a_candidate_one_score_surely_removes_is_never_borderline(models):
    text = "a wonderful film"
    tokens = tokenize(text)
    on_lm_threshold = float(models.log_likelihood_changes(tokens, 2, ["cinema"], 4)[0])
    similarity = float(models.similarities(tokens, 2, ["cinema"], 15)[0])
    assert similarity < 0.98
    filters = Filters(context_lm_min=on_lm_threshold, context_similarity_min=similarity + 0.01)
    built = SpaceBuilder([Fixed({"film": ("cinema",)})], filters, context=models).build(text)
    assert built.borderline == {} and built.space.positions == ()  # a list holding it would not verify
