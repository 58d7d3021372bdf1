"""First contact: `robustcount --help`, `--version` and bare `robustcount` answer without importing
torch or the rest of the stack, and the help they list is the commands' own."""

import inspect
import subprocess
import sys

import click

from robustcount.cli import cli, main
from robustcount.cli.group import command_index
from robustcount.commands import dataset_commands

HEAVY = ("torch", "transformers", "sklearn", "scipy", "numpy", "matplotlib", "pandas")

IMPORTED_BY = """
import sys
from robustcount.cli import main
code = main(sys.argv[1:])
print("heavy:", " ".join(m for m in {heavy!r} if m in sys.modules))
sys.exit(code)
"""


def heavy_imports(*args: str) -> tuple[str, list[str]]:
    """What `robustcount ARGS` printed in a fresh process, and the heavy modules it had imported."""
    done = subprocess.run([sys.executable, "-c", IMPORTED_BY.format(heavy=HEAVY), *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out, _, imported = done.stdout.rpartition("heavy:")
    return out, imported.split()


def test_help_version_and_bare_import_nothing_heavy():
    for args in (["--help"], ["-h"], ["--version"], []):
        out, imported = heavy_imports(*args)
        assert imported == [], f"robustcount {' '.join(args)} imported {imported}"
        assert ("robustcount, version" in out) if args == ["--version"] else ("Commands:" in out and "certify" in out)


def test_python_m_robustcount_runs_the_command_line():
    done = subprocess.run([sys.executable, "-m", "robustcount", "--version"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("robustcount, version"), done.stderr


def test_bare_robustcount_prints_the_help_with_exit_status_0(capsys):
    assert main([]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Usage: robustcount") and "Commands:" in captured.out and captured.err == ""


def test_the_index_lists_exactly_the_commands_with_their_own_help():
    index = command_index()
    for module in {listed.module for listed in index.values() if not listed.dataset}:
        __import__(module)
    own = {name: c for name, c in dataset_commands().items() if c.__module__.startswith("robustcount.commands.")}
    declared = {name: inspect.cleandoc(c.help) for name, c in {**cli.commands, **own}.items()}
    assert {name: listed.help for name, listed in index.items()} == declared
    assert len(index) >= 16
    for name in index:
        assert cli.get_command(None, name).name == name


def test_the_listing_is_what_click_lists_from_the_loaded_commands():
    ctx = click.Context(cli, info_name="robustcount", terminal_width=100)
    lazily = cli.get_help(ctx)
    for name in cli.list_commands(ctx):
        cli.get_command(ctx, name)
    formatter = ctx.make_formatter()
    click.Group.format_commands(cli, ctx, formatter)
    assert formatter.getvalue().rstrip() in lazily


def test_an_unknown_command_is_a_usage_error(capsys):
    assert main(["nonsense"]) == 2
    assert "No such command 'nonsense'" in capsys.readouterr().err
