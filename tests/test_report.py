"""`robustcount report`: a self-contained HTML page and Markdown for every dataset command, rendered
in a headless browser."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from robustcount.cli import main

SMALL = ["--model", "bow-rt", "--sample", "8", "--seed", "1"]
TABLE = ["--source", "table:tests/data/sentiment_neighbours.json", "--source", "truncate"]
RUNS = {
    "evaluate": (["evaluate", *SMALL], ["Confusion matrix"]),
    "zeroe": (["zeroe", *SMALL, "--attack", "truncate", "--attack", "visual"], ["Robustness curves"]),
    "attack": (["attack", *SMALL, *TABLE], ["Outcomes", "Adversaries"]),
    "certify": (["certify", *SMALL, "--radius", "2"], ["Largest certified radius"]),
    "radius": (["radius", *SMALL, "--radius", "2"], ["Brackets"]),
    "estimate": (["estimate", *SMALL, "--eps", "0.1", "--delta", "0.1"], ["PR distribution"]),
    "compare": (["compare", "--model", "bow-rt", "--model", "tfidf-rt", "--sample", "8", "--eps", "0.1",
                 "--delta", "0.1"], ["PR per model", "Wilcoxon"]),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Each command's run file and report directory."""
    root = tmp_path_factory.mktemp("reports")
    made = {}
    for command, (args, _) in RUNS.items():
        run_file = root / f"{command}.jsonl"
        extra = ["--out", str(root / "zeroe-out")] if command == "zeroe" else []
        extra += ["--plot", str(root / "violin.png")] if command == "compare" else []
        assert main([*args, *extra, "--output", str(run_file)]) == 0
        assert main(["report", str(run_file)]) == 0
        made[command] = root / f"{command}-report"
    return made


@pytest.mark.parametrize("command", list(RUNS))
def test_every_command_gets_a_self_contained_report(reports, command):
    page = (reports[command] / "report.html").read_text()
    markdown = (reports[command] / "report.md").read_text()
    for expected in ["Results", "Provenance", "Timings", *RUNS[command][1]]:
        assert expected in page and expected in markdown
    assert not re.search(r"<(script|img|link|iframe)\b|\bsrc=|href=\"(https?:|//)", page), "no outside resource"
    for figure in re.findall(r"!\[[^]]*\]\(([^)]+)\)", markdown):
        assert (reports[command] / figure).stat().st_size > 1000
    assert page.count("<svg") == len(re.findall(r"!\[", markdown))


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
