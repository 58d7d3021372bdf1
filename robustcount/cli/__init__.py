"""The `robustcount` command line.

Tables go to standard output for people; `--json` prints JSON instead, and `--output FILE` streams
one JSON line per example. Exit status: 0 ok, 1 failure, 2 usage error, each failure explained in
one line on standard error (set ROBUSTCOUNT_DEBUG=1 to see the traceback as well). A command's
module is imported only when it runs (`robustcount.cli.group`), so `--help` starts at once.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
import warnings

import click

from robustcount.cli.group import cli
from robustcount.errors import RobustcountError, RobustcountInterrupted, RobustcountWarning

__all__ = ["cli", "entry_point", "main"]


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """robustcount's warnings on one line; others as Python shows them."""
    if issubclass(category, RobustcountWarning):
        click.echo(f"robustcount: warning: {message}", err=True)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; turn every failure into a one-line message and an exit status."""
    debug = os.environ.get("ROBUSTCOUNT_DEBUG") == "1"
    warnings.showwarning = _show_warning
    try:
        cli.main(args=argv, prog_name="robustcount", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.UsageError as err:
        click.echo(f"robustcount: usage error: {err.format_message()} (see --help)", err=True)
        return 2
    except RobustcountInterrupted as interrupted:
        click.echo(f"robustcount: {interrupted}", err=True)
        return 130
    except (click.Abort, KeyboardInterrupt):
        click.echo("robustcount: interrupted", err=True)
        return 130
    except (RobustcountError, OSError) as err:
        if debug:
            traceback.print_exc()
        click.echo(f"robustcount: error: {err}", err=True)
        return 1
    except Exception as err:  # anything unforeseen still ends in one line, never a traceback
        if debug:
            traceback.print_exc()
        message = str(err).strip().splitlines()[0] if str(err).strip() else ""
        click.echo(f"robustcount: internal error: {type(err).__name__}: {message} "
                   "(set ROBUSTCOUNT_DEBUG=1 for the traceback)", err=True)
        return 1
    return 0


def entry_point() -> None:
    """The `robustcount` program: `main`, with a termination signal (SIGTERM, as `timeout` and
    job schedulers send) handled as Ctrl-C is, so that a run keeps what it finished and leaves no
    staging file."""
    signal.signal(signal.SIGTERM, _interrupt)
    sys.exit(main())


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt
