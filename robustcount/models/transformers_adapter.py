"""Hugging Face sequence classifiers, from a local directory or (online) a hub name."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.torch_adapter import TorchClassifier, hf_encoder


def quiet_transformers() -> None:
    """Silence transformers' loading progress bars and advisory logs (our CLI has its own output)."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def load_transformers(
    name_or_path: str,
    *,
    device: str = "auto",
    dtype: str = "float32",
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_length: int | None = None,
    revision: str | None = None,
    trust_remote_code: bool = False,
) -> TorchClassifier:
    """An `AutoModelForSequenceClassification` with its fast tokenizer as a TorchClassifier.

    Weights load from safetensors when the checkpoint has them; otherwise transformers loads
    PyTorch files with `weights_only=True`. Code shipped with a checkpoint runs only with
    `trust_remote_code=True`. A local directory never touches the network.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    quiet_transformers()
    local = Path(name_or_path).is_dir()
    offline = local or os.environ.get("HF_HUB_OFFLINE") == "1" or not _cached(name_or_path) and not hub_reachable()
    if offline and not local and not _cached(name_or_path):
        raise RobustcountError(f"cannot load transformers model {name_or_path!r}: it is not in the local cache and "
                               f"{HUB_HOST} cannot be reached (no network); use a local directory")
    kwargs = dict(revision=revision, trust_remote_code=trust_remote_code, local_files_only=offline)
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, **kwargs)
        model = AutoModelForSequenceClassification.from_pretrained(name_or_path, **kwargs)
    except (OSError, ValueError) as err:
        where = "directory" if local else "model (hub name, needs network access)"
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise RobustcountError(f"cannot load transformers {where} {name_or_path!r}: {first_line}") from err
    return transformers_classifier(model, tokenizer, name_or_path, device=device, dtype=dtype, batch_size=batch_size,
                                   max_length=max_length)


HUB_HOST = "huggingface.co"


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers at all (one connection, `timeout` seconds), so that an
    offline machine fails at once instead of retrying each file for most of a minute."""
    try:
        socket.create_connection((HUB_HOST, 443), timeout=timeout).close()
    except OSError:
        return False
    return True


def _cached(name: str) -> bool:
    """Whether the hub model `name` has a configuration in the local Hugging Face cache."""
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except ValueError:  # not a valid hub name
        return False


def transformers_classifier(model, tokenizer, name: str, *, device: str = "auto", dtype: str = "float32",
                            batch_size: int = DEFAULT_BATCH_SIZE, max_length: int | None = None) -> TorchClassifier:
    """A loaded sequence-classification model and its fast tokenizer as a TorchClassifier, its labels
    from the model's config."""
    id2label = model.config.id2label
    labels = [str(id2label[i]) for i in range(model.config.num_labels)]
    return TorchClassifier(model, hf_encoder(tokenizer, max_length), labels, name=name, device=device, dtype=dtype,
                           batch_size=batch_size)
