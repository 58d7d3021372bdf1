"""The TextAttack-named recipes (pwws, deepwordbug, textbugger, alzantot, pso, a2t): each runs from
the command line and from Python on small real models and on pairs, records its settings,
resumes byte-identically, and every adversary it reports re-checks in the space its header
records; and the sources they bring (DeepWordBug's edits, TextBugger's bugs) do what they say."""

import dataclasses
import json

import pytest

from robustcount.attacks.recipe import recipe_named
from robustcount.attacks.result import SUCCESS, run_attack
from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.goal import check_adversary
from robustcount.models.engine import QueryEngine
from robustcount.models.masked_lm import masked_lm_engine
from robustcount.models.sentence_encoder import sentence_engine
from robustcount.models.zoo import load_model
from robustcount.runs import read_run
from robustcount.spaces.build import Filters, SpaceBuilder, SpaceSpec
from robustcount.spaces.char_edits import CharacterEdit
from robustcount.spaces.sources import make_source, source_from_definition
from robustcount.spaces.text_bugs import CharacterBug, Homoglyphs

RECIPES = {  # recipe: (model, settings given on the command line, examples)
    "pwws": ("bow-rt", ["--follow", "textattack"], 2),
    "deepwordbug": ("lstm-rt", [], 2),
    "textbugger": ("bow-rt", [], 2),
    "alzantot": ("bow-rt", ["--population", "8", "--iterations", "3"], 2),
    "pso": ("lstm-rt", ["--population", "8", "--iterations", "3"], 2),
    "a2t": ("bow-rt", [], 2),
}


@pytest.fixture(scope="module")
def lstm_rt():
    return load_model("lstm-rt", device="cpu")


@pytest.fixture(scope="module")
def encoder():
    return sentence_engine()


def recorded_space(header: dict) -> SpaceBuilder:
    """The space builder a run header records (its sources rebuilt from their definitions)."""
    space = header["space"]
    sources = [source_from_definition(d, space["seed"]) for d in space["sources"]]
    assert None not in sources
    filters = Filters(**{k: tuple(v) if isinstance(v, list) else v for k, v in space["filters"].items()})
    return SpaceBuilder(sources, filters, space["seed"])


@pytest.mark.parametrize("method", RECIPES)
def test_each_recipe_runs_records_its_settings_resumes_and_its_adversaries_recheck(method, tmp_path, capsys):
    model, given, examples = RECIPES[method]
    out = tmp_path / "run.jsonl"
    args = ["attack", "--method", method, *given, "--model", model, "--sample", str(examples), "--output", str(out)]
    assert main([*args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])  # after one JSON line per example
    run = read_run(out)
    settings = run.header["options"]["settings"]
    assert run.header["options"]["method"] == method == summary["method"]
    given_settings = {"pwws": {"follow": "textattack"}, "alzantot": {"population": 8, "generations": 3},
                      "pso": {"population": 8, "generations": 3}}.get(method, {})
    assert settings == dataclasses.asdict(recipe_named(method).Options(**given_settings))
    assert summary["successes"] >= 1 and len(run.records) == examples
    builder = recorded_space(run.header)
    engine = QueryEngine(load_model(model))
    for record in run.records:
        space = builder(record["input"])
        assert space.digest() == record["space_digest"]
        if record["status"] == SUCCESS:
            point = tuple(map(tuple, record["point"]))
            assert space.apply(point) == record["adversarial"]
            assert check_adversary(engine, space, point, engine.labels.index(record["gold"])) == pytest.approx(
                record["margin"], abs=1e-6)
    whole = out.read_bytes()
    lines = whole.splitlines(keepends=True)
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(b"".join(lines[:2]))  # the header and the first record, as a stopped run leaves it
    assert main([*args[:-1], str(partial), "--resume"]) == 0
    assert partial.read_bytes() == whole


@pytest.mark.parametrize("method", RECIPES)
def test_each_recipe_attacks_only_the_hypothesis_of_a_pair_from_python(method, lstm_rt, encoder):
    """The Python API on a (premise, hypothesis) pair: the premise is never changed."""
    recipe = recipe_named(method)
    options = recipe.Options(**({"population": 8, "generations": 3} if method in ("alzantot", "pso") else {}))
    spec = recipe.space(SpaceSpec(), options)
    premise = "The film was shown twice in a small theatre."
    pair = (premise, "a wonderful , moving and beautiful film")
    space = spec.builder()(pair)
    engine = QueryEngine(lstm_rt)
    named = recipe.uses_masked_lm(options)
    result = run_attack(method, recipe.attack, engine, space, 1, options=options,
                        sentence_encoder=encoder if recipe.uses_sentence_encoder(options) else None,
                        masked_lm=masked_lm_engine(named) if named is not None else None)
    assert result.status in ("success", "failed") and result.queries["model_calls"] > 0
    if result.success:
        assert result.adversarial[0] == premise and result.adversarial[1] != pair[1]
        check_adversary(engine, space, result.point, 1)


def test_a_space_transformation_attacks_the_space_asked_for_and_options_are_checked():
    pwws = recipe_named("pwws")
    asked = SpaceSpec(sources=("synonyms",))
    assert pwws.space(asked, pwws.Options()).sources == ("wordnet",)
    kept = pwws.space(asked, pwws.Options(transformation="space"))
    assert kept.sources == ("synonyms",) and kept.filters.stop_words  # stop words left alone in both
    assert recipe_named("textbugger").space(asked, recipe_named("textbugger").Options(follow="textattack")).sources \
        == ("bug-insert", "bug-delete", "bug-swap", "bug-homoglyph", "counter-fitted-top5")
    with pytest.raises(RobustcountError):
        recipe_named("pso").Options(population=1)
    with pytest.raises(RobustcountError):
        recipe_named("deepwordbug").Options(follow="nope")


def test_deepwordbug_edits_are_one_seeded_edit_each():
    for edit in ("swap", "substitute", "delete", "insert"):
        (variant,) = CharacterEdit(edit, seed=3).neighbours("wonderful")
        assert CharacterEdit(edit, seed=3).neighbours("wonderful") == (variant,)
        assert variant != "wonderful" and abs(len(variant) - len("wonderful")) <= 1
        if edit in ("swap", "substitute"):
            assert sorted(variant) == sorted("wonderful") or edit == "substitute"
    assert [s.name for s in make_source("deepwordbug")] == ["char-swap", "char-substitute", "char-delete",
                                                             "char-insert"]
    assert CharacterEdit("delete").neighbours("--") == ()
    assert {CharacterEdit("insert", seed).neighbours("film") for seed in range(8)} != {CharacterEdit("insert").neighbours("film")}


def test_textbugger_bugs_keep_the_first_and_last_characters():
    for bug in ("insert", "delete", "swap", "sub-c"):
        for seed in range(5):
            (variant,) = CharacterBug(bug, seed).neighbours("terrible")
            assert variant != "terrible"
            if bug != "sub-c":
                assert variant[0] == "t" and variant[-1] == "e"
    assert " " in CharacterBug("insert").neighbours("terrible")[0]
    assert CharacterBug("delete").neighbours("ok") == ()
    glyphs = Homoglyphs().neighbours("bad")
    assert 1 <= len(glyphs) <= 3 and all(len(g) == 3 for g in glyphs)
    (top5,) = make_source("counter-fitted-top5")
    assert 0 < len(top5.neighbours("good")) <= 5
    assert source_from_definition(top5.definition(), 0).definition() == top5.definition()
