"""The command-line reference (docs/cli.md), written from the click commands themselves, so that
it says what `robustcount COMMAND --help` says: `python -m robustcount.cli.reference docs/cli.md`
rewrites it, and `tests/test_readme.py` fails when the file is stale."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from robustcount.cli.group import cli

WIDTH = 100  # the help's line width, fixed so that the page does not depend on the terminal

INTRODUCTION = """\
# Command-line reference

Every command's `--help`, as `robustcount COMMAND --help` prints it. This page is generated from the
commands (`python -m robustcount.cli.reference docs/cli.md`); a test fails when it is out of date.
Exit status: 0 ok, 1 failure, 2 usage error, each failure explained in one line on standard error
(`ROBUSTCOUNT_DEBUG=1` adds the traceback).
"""


def _context(command: click.Command, parent: click.Context | None, name: str) -> click.Context:
    """The context `robustcount ... NAME --help` runs in (the command's settings, -h included)."""
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    return click.Context(command, info_name=name, parent=parent, **settings)


def _help(command: click.Command, parent: click.Context | None, name: str) -> str:
    return command.get_help(_context(command, parent, name))


def reference() -> str:
    """The Markdown page: the group's help, then each command's, in the order `--help` lists them."""
    root = _context(cli, None, "robustcount")
    names = cli.list_commands(root)
    parts = [INTRODUCTION, "Commands: " + ", ".join(f"[`{name}`](#robustcount-{name})" for name in names) + ".\n",
             f"```text\n{_help(cli, None, 'robustcount')}\n```\n"]
    for name in names:
        parts.append(f"## robustcount {name}\n\n```text\n{_help(cli.get_command(root, name), root, name)}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m robustcount.cli.reference FILE.md")
    Path(sys.argv[1]).write_text(reference(), encoding="utf-8")
