"""Attacks: PDP, TextFooler, the exhaustive oracle and the Zéroe random protocol, with their results."""

from robustcount.attacks.exhaustive import exhaustive_attack
from robustcount.attacks.pdp import pdp_attack
from robustcount.attacks.result import AttackResult, attack_example
from robustcount.attacks.textfooler import textfooler_attack
from robustcount.attacks.zeroe_protocol import zeroe_attack

__all__ = ["AttackResult", "attack_example", "exhaustive_attack", "pdp_attack", "textfooler_attack", "zeroe_attack"]
