"""A disk cache for the weights of models trained at load time, so that every process (joblib and
Dask workers, each command) trains a model once per machine, not once per process.

Entries are safetensors files (tensors only, never pickles) named by the SHA-256 of a recipe: a
JSON-able description of everything the weights depend on (model name, recipe version, seed,
training-data digest, torch version). The folder is `$ROBUSTCOUNT_CACHE`, else
`~/.cache/robustcount`; an entry is written to a temporary file and renamed, so that processes
training at once never read a partial file. When the folder cannot be written, training simply
happens again next time.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save

from robustcount.atomic import replaced_whole


def cache_folder() -> Path:
    """Where trained weights are kept (see the module docstring)."""
    return Path(os.environ.get("ROBUSTCOUNT_CACHE") or Path.home() / ".cache" / "robustcount")


def cached_tensors(recipe: dict, train: Callable[[], dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The tensors `train()` returns for `recipe`, from the cache when an earlier process stored
    them, else trained now and stored."""
    key = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()
    path = cache_folder() / f"{recipe.get('model', 'model')}-{key[:20]}.safetensors"
    if path.is_file():
        try:
            return load_file(path)
        except (OSError, SafetensorError):  # a damaged entry: train again and replace it
            pass
    tensors = {name: tensor.detach().cpu().contiguous() for name, tensor in train().items()}
    try:
        with replaced_whole(path) as staged:
            staged.write(save(tensors, metadata={"recipe": json.dumps(recipe, sort_keys=True)}))
    except OSError:
        pass
    return tensors
