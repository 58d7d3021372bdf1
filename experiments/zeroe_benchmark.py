"""Regenerate the Zéroe table and plot in the README (docs/zeroe/): the default model on the whole
demo test split, all ten attacks at low, mid and high, seed 0. About 10 minutes on 2 CPU cores.

Run: `.venv/bin/python experiments/zeroe_benchmark.py`
"""

import sys

from robustcount.cli import main

if __name__ == "__main__":
    sys.exit(main(["zeroe", "--model", "minilm-rt", "--data", "demo:test", "--seed", "0", "--out", "docs/zeroe"]))
