"""What the hardening experiments share (docs/hardening/): where their runs and pages go, the
seed, the machine line under their tables, resumable runs and hardened models, the TextFooler
hardening that `hardening_textfooler.py` and `hardening_certified.py` both measure, and the
results of earlier runs the pages compare with (`earlier_results`, read from docs/hardening/earlier.json).
Each experiment is a script of its own:

    .venv/bin/python experiments/hardening_zeroe_defence.py   # Eger & Benz 2020: 1-1 heatmap, leave-one-out, ranking
    .venv/bin/python experiments/hardening_textfooler.py      # Jin et al. 2020 Table 12 on lstm-rt
    .venv/bin/python experiments/hardening_certified.py       # unshielded vs hardened: certified share, PR
    .venv/bin/python experiments/hardening_zeroe_encoder.py   # the head alone vs the encoder trained too
    .venv/bin/python experiments/hardening_user_models.py     # harden --model: a checkpoint, tfidf-rt, a pipeline
    .venv/bin/python experiments/hardening_user_costs.py      # the user checkpoint: load, predict, a fine-tuning batch
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import torch
from paper_tables import resumed_run, robustcount_ok

from robustcount.spaces.perturbers import PERTURBERS

RUNS, DOCS = Path("runs/hardening"), Path("docs/hardening")
SEED = 0
ATTACKERS = tuple(PERTURBERS)


def machine() -> str:
    return f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPU cores, torch {torch.__version__}, no GPU"


def run(name: str, *arguments: str):
    """The run file runs/hardening/NAME.jsonl of `robustcount ARGUMENTS`, continued if it exists."""
    return resumed_run(RUNS / f"{name}.jsonl", *arguments)


def hardened(name: str, *arguments: str) -> str:
    """The model directory runs/hardening/NAME written by `robustcount harden ARGUMENTS` (continued
    when interrupted, left as it is when finished)."""
    directory = RUNS / name
    if not (directory / "robustcount-model.json").exists():
        robustcount_ok("harden", *arguments, "--out", str(directory), *(["--resume"] if directory.exists() else []))
    return str(directory)


TEXTFOOLER_TRAINING, TEXTFOOLER_TEST = 2000, 1000
"""TextFooler's adversarial examples are sought on 2,000 demo:train examples and the models attacked
on the papers' 1,000 demo:test examples."""
TEXTFOOLER_HARDENING = ("--family", "word-lstm", "--augment", "textfooler", "--attack-sample", str(TEXTFOOLER_TRAINING),
                        "--threads", "1")


USER_CHECKPOINT = RUNS / "minilm-rt-ft-checkpoint"
"""minilm-rt-ft written by `save-model`: the user's transformers checkpoint of `user-models`."""


EARLIER = DOCS / "earlier.json"
"""Results of earlier runs that the pages compare with, by experiment (see its `note`)."""


def earlier_results(experiment: str) -> dict:
    """The earlier results `experiment`'s page compares with, from docs/hardening/earlier.json."""
    return json.loads(EARLIER.read_text())[experiment]


def write_page(name: str, lines: list[str]) -> None:
    """Write the docs/hardening page `name` from `lines` and print it."""
    (DOCS / name).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
