"""Hugging Face sequence classifiers, from a local directory or (online) a hub name."""

from __future__ import annotations

import os
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
    offline = local or os.environ.get("HF_HUB_OFFLINE") == "1"
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


def transformers_classifier(model, tokenizer, name: str, *, device: str = "auto", dtype: str = "float32",
                            batch_size: int = DEFAULT_BATCH_SIZE, max_length: int | None = None) -> TorchClassifier:
    """A loaded sequence-classification model and its fast tokenizer as a TorchClassifier, its labels
    from the model's config."""
    id2label = model.config.id2label
    labels = [str(id2label[i]) for i in range(model.config.num_labels)]
    return TorchClassifier(model, hf_encoder(tokenizer, max_length), labels, name=name, device=device, dtype=dtype,
                           batch_size=batch_size)
