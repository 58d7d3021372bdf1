"""Attack recipes: what the `attack` command runs on an example, each declared in one module.

A recipe puts together a search (how it walks the space and in which order), the constraints its
candidates must meet besides being in the space (TextFooler's part-of-speech and sentence
similarity checks; none for PDP and the oracle), the goal (the untargeted goal of
`robustcount.goal`, which every recipe shares: a success is re-checked by `result.success`), and
its space preset (the space asked for, or that space as the recipe needs it: TextFooler leaves
stop words alone). Its options are declared with `robustcount.options.options_dataclass`, their
fields with `robustcount.options.option`, so that they check their bounds when built
(`PDPOptions(beam=0)` is refused in one line, in Python as on the command line); the `attack`
command offers every recipe's options, grouped by recipe in `--help`, and refuses one given for a
recipe it does not apply to. Subclassing `Recipe`
registers it, so that a new recipe is one new module in this package:

    class PDP(Recipe, name="pdp", options=PDPOptions):
        \"""The fewest substitutions PDP finds.\"""

        def attack(self, engine, space, gold, options, sentence_encoder, masked_lm):
            return pdp_attack(engine, space, gold, **dataclasses.asdict(options))
"""

from __future__ import annotations

import inspect
from typing import ClassVar

from robustcount.attacks.result import AttackResult
from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.options import is_options_dataclass
from robustcount.registry import import_package, named, register
from robustcount.spaces.build import SpaceSpec
from robustcount.spaces.space import Space


class Recipe:
    """One attack recipe (see the module docstring). Subclasses implement `attack`; `space` and
    `uses_sentence_encoder` have defaults. The class keywords: `name` (what `--method` takes) and
    `options` (its options, an `@options_dataclass`; a plain dataclass is refused). The first line of the class docstring is the
    recipe's help."""

    name: ClassVar[str]
    help: ClassVar[str]
    Options: ClassVar[type]

    def __init_subclass__(cls, *, name: str, options: type, **kwargs):
        super().__init_subclass__(**kwargs)
        if not is_options_dataclass(options):
            raise RobustcountError(f"the options of attack recipe {name!r}, {options.__name__}, must be declared "
                                   "with @robustcount.options.options_dataclass (so they check themselves)")
        cls.name, cls.Options = name, options
        cls.help = inspect.cleandoc(cls.__doc__ or "").split("\n")[0]
        register(RECIPES, name, cls(), "attack recipe")

    def attack(self, engine: QueryEngine, space: Space, gold: int, options, sentence_encoder: QueryEngine | None,
               masked_lm: QueryEngine | None) -> AttackResult:
        """The recipe on one correctly classified input (budgets, skipping and timing are
        `result.run_attack`'s). `sentence_encoder` is the query engine of the sentence encoder
        when `uses_sentence_encoder(options)`, else None; `masked_lm` the query engine of the
        masked LM `uses_masked_lm(options)` names, else None. The run's worker injects both."""
        raise NotImplementedError

    def space(self, space: SpaceSpec, options) -> SpaceSpec:
        """The recipe's space preset: the space a run with `options` attacks, from the one asked for
        (the same, unless the recipe says otherwise); the run header records it."""
        return space

    needs_sentence_encoder = False
    """Whether `attack` needs a sentence encoder whatever its options."""

    def uses_sentence_encoder(self, options) -> bool:
        """Whether `attack` needs a sentence encoder with `options` (`needs_sentence_encoder`,
        unless the recipe's options decide it)."""
        return self.needs_sentence_encoder

    def uses_masked_lm(self, options) -> str | None:
        """The masked LM `attack` needs with `options` (its name, as `--masked-lm` takes it), None
        for a recipe that needs none."""
        return None

    def planned_calls(self, space: Space, options) -> int | None:
        """The most model calls of the attacked model (a gradient pass counted as one) that
        `attack` makes on `space` with `options`, the input's prediction included, computed
        without any model call (`attack --dry-run`); None when the recipe declares no bound.
        A helper model's calls (a sentence encoder's, a masked LM's) are not counted."""
        return None


RECIPES: dict[str, Recipe] = {}


def recipes() -> dict[str, Recipe]:
    """Every attack recipe, by name: those of the modules of `robustcount.attacks` (imported here,
    once) and any registered elsewhere."""
    import_package("robustcount.attacks")
    return RECIPES


def recipe_named(name: str) -> Recipe:
    """The attack recipe called `name`."""
    return named(RECIPES, name, "attack recipe", recipes)


def recipe_options() -> dict[str, type]:
    """Each recipe's options dataclass, by the recipe's name."""
    return {name: recipe.Options for name, recipe in recipes().items()}


def recipe_summaries() -> dict[str, str]:
    """Each recipe's help line, by the recipe's name."""
    return {name: recipe.help for name, recipe in recipes().items()}
