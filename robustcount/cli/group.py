"""The `robustcount` command group, whose commands are imported only when one runs.

A command's module imports torch and the rest of the stack, several seconds here, so the group
knows its commands from their source instead: `command_index` reads, without importing anything,
each command's name, module and docstring from the modules of `robustcount.cli` (functions
decorated with `@cli.command`) and `robustcount.commands` (classes declared `Command, name=...`).
`robustcount --help` lists them from that index; `robustcount NAME ...` imports NAME's module and
runs it. Dataset commands registered by a module elsewhere (a `Command` subclass of yours) are
offered too once that module is imported.
"""

from __future__ import annotations

import ast
import importlib
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import click

from robustcount import __version__

PACKAGE = Path(__file__).parents[1]
CLI_PACKAGE, DATASET_PACKAGE = "robustcount.cli", "robustcount.commands"
REGISTRY = "robustcount.runs.registry"  # where dataset commands register themselves


@dataclass(frozen=True)
class Listed:
    """A command as its module declares it: its name, the module, and its help (the docstring)."""

    name: str
    module: str
    help: str
    dataset: bool  # a `Command` subclass (the CLI builds its click command) or a click command


def _decorator_name(decorator: ast.expr) -> str | None:
    """The command name `@cli.command(...)` gives, "" for click's default, None for another decorator."""
    if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "cli.command":
        named = [*decorator.args[:1], *(k.value for k in decorator.keywords if k.arg == "name")]
        return named[0].value if named and isinstance(named[0], ast.Constant) else ""
    return "" if ast.unparse(decorator) == "cli.command" else None


def _click_default_name(function: str) -> str:
    """The name click gives a command from its function's name (`save_model_command` -> `save-model`)."""
    name = function.lower().replace("_", "-")
    left, dash, suffix = name.rpartition("-")
    return left if dash and suffix in {"command", "cmd", "group", "grp"} else name


def _declared(path: Path, module: str, dataset: bool) -> list[Listed]:
    """The commands declared at the top level of the module at `path`: `Command` subclasses when
    `dataset`, else functions decorated with `@cli.command`."""
    source, listed = path.read_text(encoding="utf-8"), []
    if ("Command" if dataset else "cli.command") not in source:
        return listed  # parsing costs time, and such a module declares no command
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and not dataset:
            for decorator in node.decorator_list:
                if (name := _decorator_name(decorator)) is not None:
                    listed.append(Listed(name or _click_default_name(node.name), module,
                                         ast.get_docstring(node) or "", dataset))
        elif isinstance(node, ast.ClassDef) and dataset and any(ast.unparse(b) == "Command" for b in node.bases):
            name = next((k.value.value for k in node.keywords if k.arg == "name"), None)
            if name is not None:
                listed.append(Listed(name, module, ast.get_docstring(node) or "", dataset))
    return listed


@cache
def command_index() -> dict[str, Listed]:
    """robustcount's own commands by name, read from the source of `robustcount.cli` and
    `robustcount.commands` without importing them."""
    index = {}
    for package, dataset in ((CLI_PACKAGE, False), (DATASET_PACKAGE, True)):
        for path in sorted((PACKAGE / package.split(".")[1]).glob("*.py")):
            for listed in _declared(path, f"{package}.{path.stem}", dataset):
                index[listed.name] = listed
    return index


def registered_elsewhere() -> dict:
    """Dataset commands registered in this process beyond robustcount's own (by a module that
    subclassed `Command`, which imported the registry: without it there are none)."""
    registry = sys.modules.get(REGISTRY)
    return {} if registry is None else {name: command for name, command in registry.COMMANDS.items()
                                        if name not in command_index()}


def _load(name: str) -> click.Command | None:
    """The click command `name`, its module imported now (None for no such command)."""
    listed = command_index().get(name)
    if listed is not None and not listed.dataset:
        importlib.import_module(listed.module)  # its `@cli.command` adds it to the group
        return cli.commands.get(name)
    if listed is None and name not in registered_elsewhere():
        return None
    # Imported here, not at the top: they load torch and the whole stack.
    from robustcount.cli.dataset import dataset_click_command
    from robustcount.commands import dataset_commands

    return dataset_click_command(dataset_commands()[name])


def _helps() -> dict[str, str]:
    """Every command's help by name, none imported for it."""
    return {**{name: listed.help for name, listed in command_index().items()},
            **{name: command.help for name, command in registered_elsewhere().items()}}


class Group(click.Group):
    """The commands of `command_index` and `registered_elsewhere`, each imported when asked for;
    bare `robustcount` prints the help (exit status 0)."""

    def list_commands(self, ctx):
        return sorted(_helps())

    def get_command(self, ctx, name):
        return self.commands.get(name) or _load(name)

    def parse_args(self, ctx, args):
        if not args and not ctx.resilient_parsing:
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def format_commands(self, ctx, formatter):
        """The command list with each command's first sentence, as click words it, from `_helps`."""
        helps = _helps()
        limit = formatter.width - 6 - max(map(len, helps))
        with formatter.section("Commands"):
            formatter.write_dl([(name, click.Command(name, help=helps[name]).get_short_help_str(limit))
                                for name in sorted(helps)])


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="robustcount")
def cli():
    """Attack, certify and count adversarial perturbations of text classifiers."""
