"""Attacks: the Zéroe random protocol, PDP, the exhaustive oracle and TextFooler, with their results."""
