"""The README's examples cannot drift: its Python snippets run, every `robustcount` command it shows
parses (each option exists and each value is valid), and the quick ones print what it shows."""

import re
import shlex
from pathlib import Path

import click
import pytest

from robustcount.cli import cli, main

README = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")


def python_snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, re.S)


def shell_commands() -> list[list[str]]:
    """The README's `robustcount` lines (indented code), continuations joined, comments dropped;
    synopsis lines (alternatives with |, elisions with ..., redirections) left out."""
    lines, commands, pending = README.splitlines(), [], ""
    for line in lines:
        if not line.startswith("    ") or (not pending and not re.match(r"    (\.venv/bin/)?robustcount ", line)):
            continue
        text = pending + line.strip()
        if text.endswith("\\"):
            pending = text[:-1] + " "
            continue
        pending = ""
        if "|" in text.split("#")[0] or "..." in text or "<" in text:
            continue
        commands.append(shlex.split(text, comments=True)[1:])
    return commands


def test_the_readme_shows_commands_and_snippets():
    assert len(shell_commands()) >= 25 and len(python_snippets()) >= 3


@pytest.mark.parametrize("args", shell_commands(), ids=lambda args: " ".join(args)[:60])
def test_every_command_in_the_readme_parses(args):
    group = cli.make_context("robustcount", list(args), resilient_parsing=True)
    command = cli.get_command(group, args[0])
    assert command is not None, f"no command {args[0]!r}"
    try:
        command.make_context(args[0], list(args[1:]))
    except click.BadParameter as err:
        assert "does not exist" in err.format_message(), err.format_message()  # a file of the reader's


def test_the_python_snippets_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["certify", "--model", "bow-rt", "--sample", "2", "--radius", "1", "--source", "truncate",
                 "--output", "runs/certify.jsonl"]) == 0  # what the run-file snippet reads
    for snippet in python_snippets():
        exec(compile(snippet.replace('load_model("minilm-rt")', 'load_model("bow-rt")'), "README.md", "exec"), {})


def test_the_quick_commands_print_what_the_readme_shows(capsys):
    assert main(["space", "A gripping, well-made film.", "--radius", "2", "--stop-words", "--max-candidates", "6"]) == 0
    assert "|Omega_2| = 8" in capsys.readouterr().out and "|Omega_2| = 8" in README
    assert main(["space", "a little labored but important title", "--radius", "1"]) == 0  # the default source
    assert "\n".join("    " + line for line in capsys.readouterr().out.strip().splitlines()) in README
    args = ["perturb", "Adversarial attacks are harmless.", "--attack", "visual", "--level", "high", "--seed", "1"]
    assert main(args) == 0
    assert "    " + capsys.readouterr().out.strip() in README
