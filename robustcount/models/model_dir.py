"""Model directories that `robustcount harden` writes and `--model DIR` loads.

A directory holds `robustcount-model.json` (the card: format, the model's family, its labels and
architecture options, how it was trained and on what, and its demo:test accuracy with every
prediction) and `model.safetensors` (only the trained tensors: a head, the networks without their
frozen GloVe rows, LoRA adapters; the frozen parts come from the packages as for the built-in
models). The family rebuilds the classifier from the card and the tensors (`Family.rebuild`).
Cards written before families had names say `architecture`: the built-in model of the family.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from robustcount.errors import RobustcountError
from robustcount.models.cards import save_weights
from robustcount.models.base import Classifier
from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.families import Family, family_named

CARD_FILE = "robustcount-model.json"
WEIGHTS_FILE = "model.safetensors"
FORMAT = "robustcount-model/1"


def is_model_dir(path: str | Path) -> bool:
    """Whether `path` is a directory with a robustcount model card."""
    return (Path(path) / CARD_FILE).is_file()


def read_card(path: str | Path) -> dict:
    """The card of model directory `path`, checked."""
    card_file = Path(path) / CARD_FILE
    try:
        card = json.loads(card_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RobustcountError(f"{card_file}: not a readable robustcount model card ({err})") from None
    if not isinstance(card, dict) or card.get("format") != FORMAT:
        found = card.get("format") if isinstance(card, dict) else None
        raise RobustcountError(f"{card_file}: not a {FORMAT} card (format {found!r})")
    family_of(card, card_file)
    labels, options = card.get("labels"), card.get("options")
    if not isinstance(labels, list) or len(labels) < 2 or not all(isinstance(x, str) for x in labels) \
            or not isinstance(options, dict):
        raise RobustcountError(f"{card_file}: the card needs its labels (a list of names) and options (an object)")
    return card


OLDER_CARDS = {"minilm-rt": "minilm-head", "minilm-rt-ft": "minilm-lora", "cnn-rt": "word-cnn", "lstm-rt": "word-lstm"}
"""Cards written before families had names give, as `architecture`, the built-in model whose
architecture they hold (the four `harden` trained then); this is each one's family."""


def family_of(card: dict, where) -> Family:
    """The family a card names (`family`, or in an older card the built-in model `architecture`),
    one that rebuilds from a model directory; refused in one line otherwise."""
    name = card.get("family") or OLDER_CARDS.get(str(card.get("architecture")))
    if not isinstance(name, str):
        raise RobustcountError(f"{where}: the card names no family")
    try:
        return family_named(name, can="rebuild")
    except RobustcountError as err:
        raise RobustcountError(f"{where}: {err}") from None


def load_model_dir(path: str | Path, *, device: str = "auto", dtype: str = "float32",
                   batch_size: int = DEFAULT_BATCH_SIZE) -> Classifier:
    """The classifier stored in model directory `path`, named by the path as given."""
    card = read_card(path)
    try:
        tensors = load_file(Path(path) / WEIGHTS_FILE)
    except (OSError, SafetensorError) as err:
        raise RobustcountError(f"{Path(path) / WEIGHTS_FILE}: cannot read the weights ({err})") from None
    family = family_of(card, path)
    try:
        family.check_options(card["options"])
    except RobustcountError as err:
        raise RobustcountError(f"{Path(path) / CARD_FILE}: its options are not a {family.name} model's: {err}"
                               ) from None
    try:
        return family.rebuild(tensors, card["options"], card["labels"], str(path), device=device, dtype=dtype,
                              batch_size=batch_size)
    except (TypeError, KeyError, ValueError) as err:  # the card's options or tensors are not the family's
        said = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise RobustcountError(f"{Path(path) / CARD_FILE}: its options {json.dumps(card['options'])} and weights do "
                               f"not build a {family.name} model ({type(err).__name__}: {said})") from None


def write_model_dir(path: str | Path, card: dict, tensors: dict[str, torch.Tensor]) -> None:
    """Write `tensors` and `card` (with the format added) into directory `path` (which exists)."""
    save_weights({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, Path(path) / WEIGHTS_FILE)
    (Path(path) / CARD_FILE).write_text(json.dumps({"format": FORMAT, **card}, indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
