"""The README's and the docs pages' examples cannot drift: their Python snippets run (or, on a page
that quotes a file, are that file's text), every `robustcount` command they show parses (each
option exists and each value is valid), the quick ones print what the pages show, every link
leads somewhere, and the command-line reference is the commands' own help."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from robustcount.cli import cli, main

ROOT = Path(__file__).parents[1]
PAGES = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
         for path in [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]}
README = PAGES["README.md"]
QUOTED = {"docs/testing.md": ROOT / "examples" / "test_my_classifier.py"}
"""Pages whose snippets quote a file: each paragraph of a snippet is in that file, which its own tests run."""
WORKED_EXAMPLES = {"docs/architecture.md"}
"""Its snippets are the worked examples of the extension points, each run by the test the section names."""


def python_snippets(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGES[page], re.S)


def shell_commands(page: str) -> list[list[str]]:
    """The page's `robustcount` lines (indented code), continuations joined, comments dropped;
    synopsis lines (alternatives with |, elisions with ..., redirections) left out."""
    commands, pending = [], ""
    for line in PAGES[page].splitlines():
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


ALL_COMMANDS = [(page, args) for page in PAGES for args in shell_commands(page)]


def test_the_pages_show_commands_and_snippets():
    assert len(shell_commands("README.md")) >= 8 and len(python_snippets("README.md")) >= 2
    assert len(ALL_COMMANDS) >= 35 and sum(len(python_snippets(page)) for page in PAGES) >= 6
    for page in ("docs/spaces.md", "docs/models.md", "docs/algorithms.md", "docs/runs.md", "docs/api.md",
                 "docs/results.md", "docs/cli.md", "docs/testing.md", "docs/certificates.md"):
        assert page in PAGES


def test_the_readme_is_short():
    assert len(README.splitlines()) <= 250


@pytest.mark.parametrize("page, args", ALL_COMMANDS, ids=lambda value: value if isinstance(value, str)
                         else " ".join(value)[:60])
def test_every_command_shown_parses(page, args):
    group = cli.make_context("robustcount", list(args), resilient_parsing=True)
    command = cli.get_command(group, args[0])
    assert command is not None, f"{page}: no command {args[0]!r}"
    try:
        command.make_context(args[0], list(args[1:]), parent=group)
    except click.BadParameter as err:
        assert "does not exist" in err.format_message(), f"{page}: {err.format_message()}"  # a file of the reader's


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A folder holding the run files the snippets read, made on a small real model."""
    folder = tmp_path_factory.mktemp("snippets")
    runs = folder / "runs"
    assert main(["certify", "--model", "bow-rt", "--sample", "2", "--radius", "1", "--source", "truncate",
                 "--output", str(runs / "certify.jsonl")]) == 0
    assert main(["attack", "--model", "bow-rt", "--sample", "4", "--source", "truncate", "--source", "disemvowel",
                 "--output", str(runs / "attack.jsonl")]) == 0
    return folder


@pytest.mark.parametrize("page", [page for page in PAGES if page not in QUOTED and page not in WORKED_EXAMPLES
                                  and python_snippets(page)])
def test_the_python_snippets_run(page, run_folder, monkeypatch):
    monkeypatch.chdir(run_folder)
    for snippet in python_snippets(page):
        exec(compile(snippet.replace('load_model("minilm-rt")', 'load_model("bow-rt")'), page, "exec"), {})


@pytest.mark.parametrize("page", sorted(QUOTED))
def test_the_quoted_snippets_are_the_files_text(page):
    quoted = QUOTED[page].read_text(encoding="utf-8")
    paragraphs = [p.strip() for snippet in python_snippets(page) for p in snippet.split("\n\n") if p.strip()]
    assert paragraphs
    for paragraph in paragraphs:
        assert paragraph in quoted, f"{page}: not in {QUOTED[page].name}: {paragraph[:80]!r}"


def test_the_quick_commands_print_what_the_pages_show(capsys):
    spaces = PAGES["docs/spaces.md"]
    assert main(["space", "A gripping, well-made film.", "--radius", "2", "--stop-words", "--max-candidates", "6"]) == 0
    assert indented(capsys.readouterr().out) in spaces
    assert main(["space", "a little labored but important title", "--radius", "1"]) == 0  # the default source
    shown = indented(capsys.readouterr().out)
    assert shown in README and shown in spaces
    assert main(["perturb", "Adversarial attacks are harmless.", "--attack", "visual", "--level", "high", "--seed", "1"]) == 0
    assert indented(capsys.readouterr().out) in spaces


def indented(out: str) -> str:
    return "\n".join("    " + line for line in out.strip().splitlines())


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_link_leads_somewhere(page):
    folder = (ROOT / page).parent
    for target in re.findall(r"\]\(([^)\s]+)\)", PAGES[page]):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (folder / path).resolve() if path else ROOT / page
        assert linked.exists(), f"{page}: {target} does not exist"
        if anchor:
            headings = re.findall(r"^#+ (.*)$", linked.read_text(encoding="utf-8"), re.M)
            assert anchor in {slug(h) for h in headings}, f"{page}: no heading for #{anchor} in {path or page}"


def test_the_command_line_reference_is_the_commands_help(tmp_path):
    # In a fresh process, as the page is written: click keeps the help option of a command's first context.
    written = tmp_path / "cli.md"
    done = subprocess.run([sys.executable, "-m", "robustcount.cli.reference", str(written)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == written.read_text(encoding="utf-8"), \
        "docs/cli.md is stale: python -m robustcount.cli.reference docs/cli.md"
