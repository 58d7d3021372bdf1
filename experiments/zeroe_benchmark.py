"""Regenerate the Zéroe table, plot and example report in the README (docs/zeroe/): the default
model on the whole demo test split, all ten attacks at low, mid and high, seed 0. About 10 minutes
on 2 CPU cores. The run file (9 MB) stays in runs/.

Run: `.venv/bin/python experiments/zeroe_benchmark.py`
"""

import sys

from robustcount.cli import main

RUN_FILE = "runs/zeroe-demo.jsonl"

if __name__ == "__main__":
    status = main(["zeroe", "--model", "minilm-rt", "--data", "demo:test", "--seed", "0", "--out", "docs/zeroe",
                   "--output", RUN_FILE, "--overwrite"])
    sys.exit(status or main(["report", RUN_FILE, "--out", "docs/zeroe/report"]))
