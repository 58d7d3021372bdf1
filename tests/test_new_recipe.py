"""An attack recipe added in one module (here, this test) works everywhere: `attack --method NAME`
offers it with its options under a heading of its own, runs, resumes and reports it, and refuses
its options for another recipe. The recipe below is the worked example of docs/architecture.md."""

import inspect
import json
import random
from dataclasses import field
from pathlib import Path

import pytest

from robustcount.attacks.recipe import RECIPES, Recipe
from robustcount.attacks.result import FAILED, AttackResult, success
from robustcount.cli import main
from robustcount.goal import check_adversary, evaluate_points
from robustcount.models.engine import QueryEngine
from robustcount.models.zoo import load_model
from robustcount.options import option, options_dataclass
from robustcount.runs import read_run
from robustcount.spaces.build import SpaceSpec


@options_dataclass
class RandomOptions:
    tries: int = field(default=100, metadata=option("Points to draw.", minimum=1))


class RandomSearch(Recipe, name="random", options=RandomOptions):
    """Random search: uniform points of the whole space, the first adversary drawn."""

    def attack(self, engine, space, gold, options, sentence_encoder, masked_lm):
        points = space.sample(space.max_radius(), options.tries, random.Random(space.points_digest()))
        for evaluated in evaluate_points(engine, space, points, gold):
            if (found := evaluated.lowest_adversary()) is not None:
                return success(self.name, engine, space, found[0], gold)
        return AttackResult(self.name, FAILED, space.item, gold, reason=f"no adversary in {options.tries} points")


@pytest.fixture(autouse=True)
def only_here():
    RECIPES["random"] = RandomSearch()  # as the class statement registered it, for each test
    yield
    RECIPES.pop("random", None)


def test_a_recipe_declared_in_one_module_runs_resumes_and_reports(capsys, tmp_path):
    out = tmp_path / "random.jsonl"
    args = ["attack", "--method", "random", "--tries", "30", "--model", "bow-rt", "--sample", "8",
            "--output", str(out)]
    assert main([*args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])  # after a JSON line per example
    run = read_run(out)
    assert run.header["options"] == {"method": "random", "settings": {"tries": 30}, "budget": None,
                                     "time_limit": 600.0}
    assert summary["method"] == "random" and summary["examples"] == 8
    assert 0 < summary["successes"] < summary["attacked"]  # bow-rt falls to some random points, not all
    engine = QueryEngine(load_model("bow-rt"))
    builder = SpaceSpec().builder()
    for r in run.records:
        assert r["method"] == "random"
        if r["status"] == "success":  # each adversary is a point of the space the model leaves
            space = builder(r["input"])
            assert r["adversarial"] == space.apply(tuple(map(tuple, r["point"])))
            check_adversary(engine, space, tuple(map(tuple, r["point"])), engine.labels.index(r["gold"]))
        elif r["status"] == "failed":
            assert r["reason"] == "no adversary in 30 points" and r["queries"]["candidates"] >= 30
    assert main([*args, "--resume"]) == 0  # nothing left to do
    assert len(read_run(out).records) == 8
    assert main(["report", str(out)]) == 0
    assert "Attack (random)" in (tmp_path / "random-report" / "report.html").read_text()


def test_the_help_groups_each_recipes_options_and_another_recipes_option_is_refused(capsys):
    assert main(["attack", "--help"]) == 0
    help = capsys.readouterr().out
    sections = {part.split(":\n", 1)[0]: part for part in help.split("\n\n") if part.startswith("With --recipe")}
    assert set(sections) >= {"With --recipe pdp", "With --recipe textfooler", "With --recipe exhaustive",
                             "With --recipe random", "With --recipe bae", "With --recipe bert-attack"}
    assert "Random search: uniform points" in sections["With --recipe random"]
    assert "--tries" in sections["With --recipe random"] and "[default: 100]" in sections["With --recipe random"]
    assert "--beam" in sections["With --recipe pdp"] and "--tries" not in sections["With --recipe pdp"]
    assert "--radius" in sections["With --recipe pdp"] and "--radius" in sections["With --recipe exhaustive"]
    assert "--setting" in sections["With --recipe textfooler"] and "--beam" not in sections["With --recipe textfooler"]
    assert main(["attack", "--method", "pdp", "--tries", "5", "--sample", "1"]) == 2
    assert capsys.readouterr().err == "robustcount: usage error: --tries applies to --recipe random, not pdp (see --help)\n"
    assert main(["attack", "--tries", "0", "--method", "random", "--sample", "1"]) == 2  # its bounds are checked
    assert "--tries" in capsys.readouterr().err



def test_the_architecture_page_shows_this_recipe():
    page = (Path(__file__).parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    for declared in (RandomOptions, RandomSearch):
        assert inspect.getsource(declared) in page


def test_attack_options_hold_the_chosen_recipes_own_options():
    from dataclasses import asdict

    from robustcount.attacks.pdp import PDPOptions
    from robustcount.attacks.textfooler import TextFoolerOptions
    from robustcount.commands.attack import AttackOptions
    from robustcount.errors import RobustcountError
    from robustcount.models.spec import ModelSpec
    from robustcount.runs.spec import RunSpec

    assert AttackOptions().settings == PDPOptions()
    chosen = AttackOptions(method="textfooler", settings={"word_order": "random"})
    assert chosen.settings == TextFoolerOptions(word_order="random")
    spec = RunSpec("attack", (ModelSpec("bow-rt"),), space=SpaceSpec(), options=asdict(chosen))  # as a header holds it
    assert spec.options == chosen and spec.space.filters.stop_words  # TextFooler's space preset
    with pytest.raises(RobustcountError, match="bad settings for the textfooler recipe"):
        AttackOptions(method="textfooler", settings={"beam": 3})
    with pytest.raises(RobustcountError, match="the textfooler recipe's settings are a TextFoolerOptions"):
        AttackOptions(method="textfooler", settings=PDPOptions())
    with pytest.raises(RobustcountError, match="unknown attack recipe 'nope'"):
        AttackOptions(method="nope")
