"""The `robustcount` command group."""

from __future__ import annotations

import click

from robustcount import __version__
from robustcount.cli.dataset import dataset_click_command
from robustcount.commands import dataset_commands


class Group(click.Group):
    """The commands defined in `robustcount.cli`, and one command per registered dataset command
    (`robustcount.runs.command`), built when first asked for."""

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *dataset_commands()})

    def get_command(self, ctx, name):
        found = super().get_command(ctx, name)
        if found is not None:
            return found
        commands = dataset_commands()
        return dataset_click_command(commands[name]) if name in commands else None


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="robustcount")
def cli():
    """Attack, certify and count adversarial perturbations of text classifiers."""
