"""What the training scripts of the built-in models share: a reproducible torch set-up, safetensors
files every user can read, and the demo:test part of a model card (its accuracy, with its exact 95%
interval, and the label predicted for each example, which the tests check the shipped weights
against)."""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from pathlib import Path

import torch
from safetensors.torch import save_file
from scipy.stats import binomtest

from robustcount.data import load_demo


def reproducible_torch(description: str) -> argparse.Namespace:
    """Parse a training script's `--threads` and make torch deterministic on that many CPU threads."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (fixed, for a reproducible run)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    return args


@contextmanager
def deterministic_torch(threads: int):
    """Within the block, torch runs deterministic algorithms on `threads` CPU threads (a training
    is reproducible only for a fixed number of threads); both settings are restored after."""
    before = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(before[0])
        torch.use_deterministic_algorithms(before[1])


def save_weights(tensors: dict[str, torch.Tensor], path: Path, source: str | None = None) -> None:
    """`tensors` as safetensors at `path`, readable by every user (safetensors writes owner-only
    files); one metadata key, so that the bytes are stable."""
    save_file(tensors, path, metadata={"format": "pt"} if source is None else {"source": source})
    path.chmod(0o644)


def demo_test_card(classifier) -> dict:
    """The demo:test fields of a model card for `classifier`."""
    test = load_demo("test")
    predicted = classifier.predict_proba([e.input for e in test]).argmax(axis=1)
    correct = int(sum(classifier.labels[p] == e.label for p, e in zip(predicted, test)))
    interval = binomtest(correct, len(test)).proportion_ci(0.95, method="exact")
    return {"test_examples": len(test), "test_accuracy": round(correct / len(test), 4),
            "test_accuracy_ci95": [round(interval.low, 4), round(interval.high, 4)],
            "test_predictions": "".join(str(int(p)) for p in predicted)}
