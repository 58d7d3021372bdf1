"""Options are declared once and checked when built: every declared bound and choice of every
options dataclass is refused in one line in Python, not only by the command line."""

import dataclasses

import pytest

from robustcount.attacks.pdp import PDPOptions
from robustcount.attacks.recipe import Recipe, recipes
from robustcount.commands.certify import CertifyOptions
from robustcount.errors import RobustcountError
from robustcount.models.spec import ModelSpec
from robustcount.options import check_fields, one_of, option, options_dataclass
from robustcount.commands import dataset_commands
from robustcount.runs.launch import RunOptions
from robustcount.spaces.build import Filters, SpaceSpec


@pytest.mark.parametrize("build, message", [
    (lambda: CertifyOptions(radius=-4), "radius must be at least 1, got -4"),
    (lambda: CertifyOptions(order="nonsense"), "unknown order 'nonsense' (use sensitivity,"),
    (lambda: CertifyOptions(max_points=0), "max_points must be at least 1, got 0"),
    (lambda: CertifyOptions(time_limit=-1.0), "time_limit must be at least 0"),
    (lambda: CertifyOptions(radius="3"), "radius must be an integer, got '3'"),
    (lambda: CertifyOptions(time_limit=float("nan")), "time_limit must be a finite number"),
    (lambda: Filters(min_length=-3), "min_length must be at least 0, got -3"),
    (lambda: Filters(max_candidates=0), "max_candidates must be at least 1, got 0"),
    (lambda: SpaceSpec(sources="synonyms"), "sources must be a list of values"),
    (lambda: ModelSpec(precision="float8"), "unknown precision 'float8'"),
    (lambda: ModelSpec(batch_size=0), "batch_size must be at least 1"),
    (lambda: ModelSpec(trust_remote_code="yes"), "trust_remote_code must be True or False"),
    (lambda: PDPOptions(beam=0), "beam must be at least 1, got 0"),
])
def test_a_value_against_its_declaration_is_refused_in_one_line(build, message):
    with pytest.raises(RobustcountError) as raised:
        build()
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_none_passes_only_where_it_is_the_default():
    assert CertifyOptions(budget=None).budget is None
    with pytest.raises(RobustcountError, match="radius must be an integer, got None"):
        CertifyOptions(radius=None)


def _bad_values(f: dataclasses.Field) -> list:
    declared = f.metadata["option"]
    if declared["choices"] is not None:
        return ["no such choice"]
    bad = []
    if declared["minimum"] is not None:
        bad.append(declared["minimum"] - (0 if declared["open_minimum"] else 1))
    if declared["maximum"] is not None:
        bad.append(declared["maximum"] + (0 if declared["open_maximum"] else 1))
    return bad


def _declared_classes():
    for command in dataset_commands().values():
        yield command.Options
        yield command.Outputs
    yield from (recipe.Options for recipe in recipes().values())
    yield RunOptions
    yield from (ModelSpec, Filters, SpaceSpec)


def test_every_declared_bound_and_choice_of_every_options_class_is_checked():
    """Every options dataclass (each command's, each recipe's, RunOptions, ModelSpec, Filters, SpaceSpec) refuses a value
    outside each of its fields' declared bounds and choices."""
    tried = 0
    for cls in _declared_classes():
        for f in dataclasses.fields(cls):
            if "option" not in f.metadata:
                continue
            for value in _bad_values(f):
                value = (value,) if f.metadata["option"]["multiple"] else value
                with pytest.raises(RobustcountError, match=f.name.replace("_", ".")):
                    cls(**{f.name: value})
                tried += 1
    assert tried >= 61


def test_a_recipe_whose_options_are_a_plain_dataclass_is_refused_when_declared():
    @dataclasses.dataclass(frozen=True)
    class Unchecked:
        tries: int = dataclasses.field(default=1, metadata=option("Points to draw.", minimum=1))

    with pytest.raises(RobustcountError, match="'unchecked', Unchecked, must be declared with "
                                               "@robustcount.options.options_dataclass"):
        class UncheckedRecipe(Recipe, name="unchecked", options=Unchecked):
            pass
    assert "unchecked" not in recipes()


def test_a_new_options_class_checks_itself_and_keeps_its_own_normalisation():
    @options_dataclass
    class Sizes:
        size: int = dataclasses.field(default=2, metadata=option("A size.", minimum=1, maximum=10))
        unit: str = dataclasses.field(default="cm", metadata=option("A unit.", choices=("cm", "in")))
        names: tuple[str, ...] = dataclasses.field(default=(), metadata=option("Names.", multiple=True, kind=str))

        def __post_init__(self):
            object.__setattr__(self, "names", tuple(sorted(self.names)))

    assert Sizes(names=["b", "a"]).names == ("a", "b")
    with pytest.raises(RobustcountError, match="size must be at most 10, got 11"):
        Sizes(size=11)
    with pytest.raises(RobustcountError, match="unknown unit 'mm' \\(use cm, in\\)"):
        Sizes(unit="mm")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Sizes().size = 3
    check_fields(Sizes())


def test_one_of_names_what_it_refuses():
    assert one_of("a", ("a", "b"), "letter") == "a"
    with pytest.raises(RobustcountError, match="unknown letter 'c' \\(use a, b\\)"):
        one_of("c", ("a", "b"), "letter")
