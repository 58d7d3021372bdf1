"""Attacks: the Zéroe random protocol (and, later, PDP and TextFooler)."""
