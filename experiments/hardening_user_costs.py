"""What hardening the user's checkpoint costs: load, predict, a fine-tuning batch (docs/hardening/user-costs.json).

`user-costs` measures what each stage of hardening the user's checkpoint costs on this machine:
loading it, predicting, and a fine-tuning batch in full and through LoRA.

Run: `.venv/bin/python experiments/hardening_user_costs.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import torch
from hardening_common import (
    DOCS,
    SEED,
    USER_CHECKPOINT,
    machine,
)

from robustcount.data import load_demo
from robustcount.models.checkpoint import Checkpoint
from robustcount.training.trainees import trainee_for


def user_costs(batches: int = 10) -> None:
    """docs/hardening/user-costs.json: what each stage of hardening the user's checkpoint costs on
    this machine, measured on a small run: loading it, predicting, and one fine-tuning batch in full
    and through LoRA (`batches` batches of 32 demo:train texts each, one torch thread)."""
    torch.set_num_threads(1)
    texts_of = load_demo("train")[: 32 * batches]
    measured = {"batches": batches, "batch_size": 32, "machine": machine(), "load_average": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as scratch:
        for lora in (False, True):
            began = time.time()
            trainee = trainee_for(str(USER_CHECKPOINT), lora=lora, batch_size=32, learning_rate=None, seed=SEED)
            kind = "lora" if lora else "full"
            measured[f"load_seconds_{kind}"] = time.time() - began
            texts, goals = [e.input for e in texts_of], [trainee.labels.index(e.label) for e in texts_of]
            if not lora:
                began = time.time()
                trainee.current().predict_proba(texts)
                measured["predict_seconds_per_text"] = (time.time() - began) / len(texts)
            began = time.time()
            trainee.train_epoch(0, texts, goals, Checkpoint(Path(scratch) / f"{kind}.pt"))
            measured[f"train_seconds_per_batch_{kind}"] = (time.time() - began) / batches
    DOCS.mkdir(parents=True, exist_ok=True)
    (DOCS / "user-costs.json").write_text(json.dumps(measured, indent=1) + "\n")
    print(json.dumps(measured, indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=10, help="fine-tuning batches timed")
    user_costs(parser.parse_args().batches)
