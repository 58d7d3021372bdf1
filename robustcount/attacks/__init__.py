"""Attacks: the recipes of the `attack` command (PDP, TextFooler, the exhaustive oracle; see
`attacks.recipe`), the Zéroe random protocol, and what an attack returns."""

from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.textfooler import textfooler_attack
from robustcount.attacks.exhaustive import exhaustive_attack
from robustcount.attacks.recipe import RECIPES, Recipe, recipe_named
from robustcount.attacks.result import AttackResult, run_attack
from robustcount.attacks.zeroe_protocol import zeroe_attack

__all__ = ["RECIPES", "AttackResult", "Recipe", "exhaustive_attack", "pdp_attack", "recipe_named", "run_attack",
           "textfooler_attack", "zeroe_attack"]
