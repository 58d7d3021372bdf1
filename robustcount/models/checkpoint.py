"""What a training in progress keeps on disk so that it continues after a crash as if it never
stopped: its state (weights, optimiser, the random generators, where it was) after each saved
step, in a work folder inside the output directory.

Checkpoints are written with `torch.save` to a temporary file and renamed, and read back with
`torch.load(weights_only=True)`, which restores tensors and plain values only (never arbitrary
objects). They are the training's own scratch files; the finished model is safetensors.
"""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import torch

from robustcount.atomic import replaced_whole
from robustcount.errors import RobustcountError


class Checkpoint:
    """The latest saved state of one training stage, at `path`."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def load(self) -> dict | None:
        """The state last saved, or None when there is none; a file that is no whole checkpoint is
        refused in one line."""
        if not self.path.is_file():
            return None
        try:
            return torch.load(self.path, weights_only=True)
        except (RuntimeError, EOFError, OSError, pickle.UnpicklingError) as err:
            said = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise RobustcountError(f"{self.path}: a damaged checkpoint ({said}): delete it to start this stage "
                                   "again, or start a new training in an empty directory") from None

    def save(self, state: dict) -> None:
        with replaced_whole(self.path) as staged:
            torch.save(state, staged)


def generator_states(rng: random.Random) -> dict:
    """The states of `rng` and of torch's global generator (dropout), to save."""
    version, internal, gauss = rng.getstate()
    return {"python": [version, list(internal), gauss], "torch": torch.get_rng_state()}


def restore_generators(rng: random.Random, states: dict) -> None:
    version, internal, gauss = states["python"]
    rng.setstate((version, tuple(internal), gauss))
    torch.set_rng_state(states["torch"])
