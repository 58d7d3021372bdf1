"""`python -m robustcount`: the command line."""

from robustcount.cli import entry_point

entry_point()
