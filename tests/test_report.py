"""`robustcount report`: a self-contained HTML page and Markdown for every dataset command, rendered
in a headless browser."""

import html
import os
import re
import shutil
import subprocess
from collections import Counter

import numpy as np
import pytest

from robustcount.cli import main
from robustcount.runs import read_run
from tests.factories import SENTIMENT_TABLE

SMALL = ["--model", "bow-rt", "--sample", "8", "--seed", "1"]
TABLE = ["--source", SENTIMENT_TABLE, "--source", "truncate"]
RUNS = {
    "evaluate": ["evaluate", *SMALL],
    "zeroe": ["zeroe", *SMALL, "--attack", "truncate", "--attack", "visual"],
    "attack": ["attack", *SMALL, *TABLE],
    "certify": ["certify", *SMALL, "--radius", "2"],
    "radius": ["radius", *SMALL, "--radius", "2"],
    "estimate": ["estimate", *SMALL, "--eps", "0.1", "--delta", "0.1"],
    "compare": ["compare", "--model", "bow-rt", "--model", "tfidf-rt", "--sample", "8", "--eps", "0.1",
                "--delta", "0.1"],
}


def f4(value: float) -> str:
    return f"{value:.4f}"


def expected_tables(command: str, records: list[dict]) -> dict[str, list[list[str]]]:
    """Tables each report must show, computed here from the run's raw records (by caption)."""
    if command == "evaluate":
        pairs = Counter((r["gold"], r["predicted"]) for r in records)
        return {"Confusion matrix": [[g, str(pairs[(g, "negative")]), str(pairs[(g, "positive")])]
                                     for g in ("negative", "positive")],
                "Summary": [["bow-rt", "demo:test", "8", f4(sum(r["correct"] for r in records) / 8)]]}
    if command == "zeroe":
        cells = [(c["attack"], c["level"]) for c in records[0]["attacked"]]
        rows = [[a, lvl, f4(sum(r["attacked"][j]["correct"] for r in records) / 8)] for j, (a, lvl) in enumerate(cells)]
        return {"Summary": [["none", "-", f4(sum(r["correct"] for r in records) / 8)], *rows]}
    if command == "attack":
        return {"Outcomes": [[s, str(n)] for s, n in sorted(Counter(r["status"] for r in records).items())]}
    if command == "certify":
        reached = Counter(r["certified_radius"] for r in records if r["correct"])
        certified = [sum(r.get("certified_radius", 0) >= k for r in records) for k in (1, 2)]
        return {"Largest certified radius": [[str(k), str(n)] for k, n in sorted(reached.items())],
                "Summary": [[str(k), str(c), f4(c / 8)] for k, c in zip((1, 2), certified)]}
    if command == "radius":
        pairs = Counter((r["lower"], r["upper"]) for r in records if r["kind"] != "misclassified")
        return {"Brackets": [["-" if lo is None else str(lo), "-" if up is None else str(up), str(n)]
                             for (lo, up), n in sorted(pairs.items(), key=str)]}
    if command == "estimate":
        values = [r["estimate"]["pr"] for r in records if r["estimate"]]
        return {"Summary": [["8", str(sum(not r["correct"] for r in records)), str(sum("reason" in r for r in records)),
                             f4(float(np.median(values))),
                             f4(float(np.mean(np.array(values) > 0.9)))]]}
    values = {m: [x["estimate"]["pr"] for r in records for x in r["models"] if x["model"] == m and x["estimate"]]
              for m in ("bow-rt", "tfidf-rt")}
    return {"Summary": [[m, str(len(v)), f4(float(np.median(v)))] for m, v in values.items()]}


def html_tables(page: str) -> dict[str, list[list[str]]]:
    return {html.unescape(caption): [[html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
                                     for row in re.findall(r"<tr>(.*?)</tr>", body)]
            for caption, body in re.findall(r"<caption>(.*?)</caption>.*?<tbody>(.*?)</tbody>", page, re.S)}


def markdown_tables(text: str) -> dict[str, list[list[str]]]:
    tables = {}
    for caption, body in re.findall(r"\*\*(.+?)\*\*\n\n((?:\|.*\n)+)", text):
        lines = body.splitlines()[2:]  # after the header and the rule
        tables[caption] = [[c.strip() for c in line.strip("|").split(" | ")] for line in lines]
    return tables


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Each command's run file and report directory."""
    root = tmp_path_factory.mktemp("reports")
    made = {}
    for command, args in RUNS.items():
        run_file = root / f"{command}.jsonl"
        extra = ["--out", str(root / "zeroe-out")] if command == "zeroe" else []
        extra += ["--plot", str(root / "violin.png")] if command == "compare" else []
        assert main([*args, *extra, "--output", str(run_file)]) == 0
        assert main(["report", str(run_file)]) == 0
        made[command] = root / f"{command}-report"
    return made


@pytest.mark.parametrize("command", list(RUNS))
def test_every_command_gets_a_self_contained_report_of_its_numbers(reports, command):
    page = (reports[command] / "report.html").read_text()
    markdown = (reports[command] / "report.md").read_text()
    records = read_run(reports[command].parent / f"{command}.jsonl").records
    shown_html, shown_markdown = html_tables(page), markdown_tables(markdown)
    for caption, rows in expected_tables(command, records).items():
        for shown in (shown_html, shown_markdown):
            width = len(rows[0])  # the leading columns the test computes
            assert [row[:width] for row in shown[caption]] == rows, (caption, shown[caption])
    for shown in (shown_html, shown_markdown):
        assert shown["Run"][0] == ["command", command]  # provenance
    assert not re.search(r"<(script|img|link|iframe)\b|\bsrc=|href=\"(https?:|//)", page), "no outside resource"
    for figure in re.findall(r"!\[[^]]*\]\(([^)]+)\)", markdown):
        assert (reports[command] / figure).stat().st_size > 1000
    assert page.count("<svg") == len(re.findall(r"!\[", markdown)) >= 1


def test_several_runs_share_one_page_each_section_named_by_its_run(reports, tmp_path):
    files = [str(reports[c].parent / f"{c}.jsonl") for c in ("certify", "compare")]
    assert main(["report", *files, "--out", str(tmp_path / "both")]) == 0
    page = (tmp_path / "both" / "report.html").read_text()
    markdown = (tmp_path / "both" / "report.md").read_text()
    alone = {c: (reports[c] / "report.md").read_text() for c in ("certify", "compare")}
    for command in ("certify", "compare"):
        sections = re.findall(r"^## (.+)$", alone[command], flags=re.M)
        for title in sections:  # every section of each run's own report, under its run's name
            assert f"## {command}: {title}" in markdown and f"{command}: {title}" in page
    figures = re.findall(r"!\[[^]]*\]\(([^)]+)\)", markdown)
    assert len(figures) == len(set(figures)) == page.count("<svg") >= 2  # no figure overwrites another


def test_an_unfinished_run_is_reported_as_such(reports, tmp_path):
    lines = (reports["certify"].parent / "certify.jsonl").read_text().splitlines(keepends=True)
    partial = tmp_path / "partial.jsonl"
    partial.write_text("".join(lines[:3]) + lines[3][:10])  # header, two examples, a torn line
    assert main(["report", str(partial), "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "report.html").read_text()
    assert "incomplete: 2 of 8 examples" in page
    assert '<p class="warning" role="alert">Unfinished run: 2 of 8 examples' in page  # shown first, not in grey
    assert "> **Warning:** Unfinished run" in (tmp_path / "out" / "report.md").read_text()


def test_report_refuses_a_file_that_is_no_run(capsys, tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": 1}\n')
    assert main(["report", str(path)]) == 1
    assert "not a robustcount run file" in capsys.readouterr().err


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


@pytest.mark.slow
def test_the_report_renders_in_a_headless_browser(reports, tmp_path):
    browser = _browser()
    if browser is None:
        if os.environ.get("ROBUSTCOUNT_REQUIRE_BROWSER") == "1":
            pytest.fail("no chromium: `make setup` installs Debian's chromium")
        pytest.skip("no chromium on this machine")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--disable-background-networking", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]
    page = (reports["zeroe"] / "report.html").resolve().as_uri()
    dom = subprocess.run([browser, *flags, "--dump-dom", page], capture_output=True, text=True, timeout=120).stdout
    assert "Robustness curves" in dom and dom.count("<svg") == 1 and dom.count("<table") >= 3
    shot = tmp_path / "shot.png"
    subprocess.run([browser, *flags, f"--screenshot={shot}", "--window-size=1000,1600", page],
                   capture_output=True, timeout=120, check=True)
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (1600, 1000)
    assert np.std(pixels[:, :, :3]) > 0.05, "the screenshot shows the page, not a blank window"


def test_an_adversary_shows_its_changed_words(reports):
    records = read_run(reports["attack"].parent / "attack.jsonl").records
    broken = [r for r in records if r["status"] == "success"]
    assert broken, "the attack must break some example for this test to mean anything"
    page = (reports["attack"] / "report.html").read_text()
    markdown = (reports["attack"] / "report.md").read_text()
    for r in broken:
        changed = [b for a, b in zip(r["input"].split(), r["adversarial"].split()) if a != b]
        for word in changed:
            word = word.strip(".,;:!?")
            assert f"<mark>{html.escape(word)}</mark>" in page and f"**{word}**" in markdown
